"""A trained ErgoReacher / ErgoPusher policy for the arm: a run's checkpoint, or a policy exported by adr-export.

- A run directory or checkpoint file: ``adr_core.evaluation.load_policy`` (in-process runs: ``checkpoints/latest.pt``;
  node-graph runs: ``checkpoints/latest.json`` naming ``agent-<k>.pt``; every file read with
  ``torch.load(weights_only=True)``). Needs torch.
- An export (a folder holding ``policy_spec.json``, that file, or the ``policy.onnx`` beside it): the ONNX program
  runs on onnxruntime and **torch is never imported** (the arm's small computer need not have it); a TorchScript
  export needs torch. The spec is checked before the first command: the program's SHA-256, the env (an Ergo task),
  the observation and action sizes, the action bounds.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from adr_core.base.history import History, HistoryError, HistorySpec
from adr_core.randomization import RandomizationError, RandomizationSpace

from .errors import DeployError
from .task import DeployTask, task_for

SPEC_FILE = "policy_spec.json"  # adr_core.export.SPEC_FILE (not imported: that module needs torch)
SPEC_FORMAT = 1

Policy = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class DeployablePolicy:
    path: Path  # the checkpoint file, or the exported program
    kind: str  # "checkpoint", "onnx" or "torchscript"
    env_id: str
    space: RandomizationSpace
    task: DeployTask
    policy: Policy
    episode_steps: int  # the training episodes' length (the env's 100 unless the run set max_episode_steps)
    description: str  # where it came from, for the log


class OnnxPolicy:
    """One observation (or a batch) in, actions out, through onnxruntime."""

    def __init__(self, program: Path) -> None:
        try:
            import onnxruntime
        except ImportError:
            raise DeployError("an ONNX policy needs onnxruntime (pip install onnxruntime; requirements/deploy.txt)") \
                from None
        self.session = onnxruntime.InferenceSession(str(program), providers=["CPUExecutionProvider"])
        width = self.session.get_inputs()[0].shape[-1]
        self.input_width = width if isinstance(width, int) else None  # None: a symbolic size

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs, dtype=np.float32)
        single = x.ndim == 1
        out = self.session.run(None, {"observation": x[None] if single else x})[0]
        return np.asarray(out[0] if single else out)


class WithHistory:
    """An exported program of a policy with memory (its input: the observation and the last steps', as
    ``adr_core.base.history`` lays it out) and the episode's history, which the runner keeps: ``begin_episode`` at
    the episode's first observation, ``remember`` after each command (what ``ActorPolicy`` does for a checkpoint)."""

    def __init__(self, program: Policy, spec: HistorySpec) -> None:
        self.program, self.spec = program, spec
        self.history = History(spec)

    def begin_episode(self, obs: np.ndarray) -> None:
        self.history.reset(obs)

    def remember(self, obs: np.ndarray, action: np.ndarray) -> None:
        self.history.push(obs, action)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs, dtype=np.float32)
        if x.ndim == 1 and x.shape[0] == self.spec.obs_dim:
            x = self.history.input(x)
        return self.program(x)


def load_deployable(path: str | Path) -> DeployablePolicy:
    if not str(path):
        raise DeployError("no checkpoint given: set the 'checkpoint' parameter to a run directory, a .pt file or an "
                          "export of adr-export")
    spec_path = _spec_of(Path(path))
    return _load_export(spec_path) if spec_path is not None else _load_checkpoint(Path(path))


def _spec_of(path: Path) -> Path | None:
    if path.is_dir() and (path / SPEC_FILE).is_file():
        return path / SPEC_FILE
    if path.is_dir() and any((path / name).is_file() for name in ("policy.onnx", "policy.pt")):
        raise DeployError(f"{path} holds an exported program but no {SPEC_FILE} (adr-export writes both; the spec "
                          f"says which robot task the program was trained for)")
    if path.is_file() and path.name == SPEC_FILE:
        return path
    if path.is_file() and path.suffix == ".onnx":
        if not (path.parent / SPEC_FILE).is_file():
            raise DeployError(f"{path}: no {SPEC_FILE} beside it (adr-export writes both; the spec says which robot "
                              f"task the program was trained for)")
        return path.parent / SPEC_FILE
    return None


def _load_export(spec_path: Path) -> DeployablePolicy:
    try:
        spec = json.loads(spec_path.read_text())
    except (OSError, ValueError) as error:
        raise DeployError(f"{spec_path} is not a policy spec: {error}") from None
    if not isinstance(spec, dict) or spec.get("format") != SPEC_FORMAT:
        raise DeployError(f"{spec_path}: a policy spec of format {SPEC_FORMAT} was expected")
    program = spec_path.parent / str(spec.get("program", ""))
    if not program.is_file() or Path(str(spec["program"])).name != spec["program"]:
        raise DeployError(f"{spec_path} names the program {spec.get('program')!r}, not a file beside it")
    if hashlib.sha256(program.read_bytes()).hexdigest() != spec.get("sha256"):
        raise DeployError(f"{program} does not match the SHA-256 in {spec_path}: it changed after the export")
    task = task_for(str(spec.get("env_id")))
    found = (spec.get("obs_dim"), spec.get("act_dim"), spec.get("action_low"), spec.get("action_high"))
    if found != (task.obs_dim, task.act_dim, -1.0, 1.0):
        raise DeployError(f"{spec_path}: the policy maps {found[0]} observations to {found[1]} actions in "
                          f"[{found[2]}, {found[3]}]; {task.env_id} on the arm needs {task.obs_dim} -> {task.act_dim} "
                          f"in [-1, 1]")
    try:
        space = RandomizationSpace.from_dict(spec["space"])
    except (KeyError, RandomizationError) as error:
        raise DeployError(f"{spec_path}: no usable randomization space ({error})") from None
    history = _history_of(spec, spec_path, task)
    input_dim = history.input_dim if history is not None else task.obs_dim
    kind = str(spec.get("program_format"))
    if kind == "onnx":
        onnx = OnnxPolicy(program)
        if onnx.input_width is not None and onnx.input_width != input_dim:
            memory = f" and {history.steps} steps of history)" if history is not None else ", no history)"
            raise DeployError(f"{program} reads {onnx.input_width} values per step but {spec_path} describes "
                              f"{input_dim} ({task.obs_dim} observations{memory}")
        policy: Policy = onnx
    elif kind == "torchscript":
        policy = _torchscript_policy(program)
    else:
        raise DeployError(f"{spec_path}: program_format {kind!r}; this runner reads onnx and torchscript")
    if history is not None:
        policy = WithHistory(policy, history)
    steps = int(spec.get("max_episode_steps") or _env_episode_steps(task.env_id))
    return DeployablePolicy(program.resolve(), kind, task.env_id, space, task, policy, steps,
                            f"{kind} export of {spec.get('source')} ({spec.get('agent_steps')} agent steps)")


def _history_of(spec: dict, spec_path: Path, task: DeployTask) -> HistorySpec | None:
    """The spec's observation history (None: a memoryless policy), checked against the task and the spec's input."""
    described = spec.get("history")
    input_dim = spec.get("input_dim", task.obs_dim)
    if described is None:
        if input_dim != task.obs_dim:
            raise DeployError(f"{spec_path}: the program reads {input_dim} values per step but the spec names no "
                              f"history; {task.env_id} observations have {task.obs_dim}")
        return None
    try:
        history = HistorySpec.from_json(described)
    except HistoryError as error:
        raise DeployError(f"{spec_path}: {error}") from None
    if (history.obs_dim, history.act_dim) != (task.obs_dim, task.act_dim) or input_dim != history.input_dim:
        raise DeployError(f"{spec_path}: its history ({history.steps} steps of {history.obs_dim} observations and "
                          f"{history.act_dim} actions: {history.input_dim} inputs) does not match the spec's "
                          f"{input_dim} inputs or {task.env_id}'s {task.obs_dim} -> {task.act_dim}")
    return history


def _torchscript_policy(program: Path) -> Policy:
    import torch

    module = torch.jit.load(str(program)).eval()

    def policy(obs: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return np.asarray(module(torch.as_tensor(np.asarray(obs, dtype=np.float32))).numpy())

    return policy


def _load_checkpoint(path: Path) -> DeployablePolicy:
    from adr_core.base.checkpoint import CheckpointError
    from adr_core.evaluation.policies import load_policy

    try:
        trained = load_policy(path)
    except CheckpointError as error:
        raise DeployError(str(error)) from None
    task = task_for(trained.env_id)
    if (trained.obs_dim, trained.act_dim) != (task.obs_dim, task.act_dim):
        raise DeployError(f"{trained.path}: the actor maps {trained.obs_dim} -> {trained.act_dim} values but "
                          f"{task.env_id} has {task.obs_dim} observations and {task.act_dim} actions")
    return DeployablePolicy(trained.path, "checkpoint", trained.env_id, trained.space, task, trained.policy(),
                            trained.max_episode_steps or _env_episode_steps(task.env_id),
                            f"{trained.path} (iteration {trained.iteration}, {trained.agent_steps} agent steps)")


def _env_episode_steps(env_id: str) -> int:
    from adr_core.envs import env_record

    return env_record(env_id).max_episode_steps
