"""Export a run's policy for deployment without the training stack: ONNX (onnxruntime) or TorchScript.

    adr-export runs/x --format onnx                 # runs/x/export/policy.onnx + policy_spec.json
    adr-export runs/x --format torchscript --out d  # d/policy.pt + d/policy_spec.json

The exported program is the deterministic actor (tanh of the mean for SAC): one float32 input batch in, actions in
[-1, 1] out. The input is the observation, or for a policy with memory (``agent.history_steps``) the observation
and the last steps' as ``adr_core.base.history`` lays them out; the spec's ``history`` tells the deployment how to
keep them (the arm's policy runner does).

Before anything is written the program is checked on the inputs the policy meets: ``CHECK_EPISODES`` episodes of the
actor in its own env (its run's space: the reference and points drawn over the training range), plus as many inputs
drawn uniformly over the box those span. Its actions must agree with the actor's to float32 precision: against the
actor run in float64, the program's error may be at most 4 times torch's own float32 error on the same inputs plus
16 float32 rounding units of the output layer's sum (``agreement``); otherwise nothing is written.

``policy_spec.json`` says what the program expects and what produced it: the env, the observation, input and action
sizes, the history, the action bounds, the randomization space, the source checkpoint and the program file's SHA-256,
so a deployment can refuse a policy that does not fit its robot before it sends a command (adr_deploy checks it).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

from .agents.networks import Actor
from .base.checkpoint import CheckpointError
from .cli_types import ArgumentParser, env_modules_option, existing_path, output_dir, writable_dir
from .envs import allow_env_modules
from .evaluation.policies import TrainedPolicy, load_policy
from .run_dir import resolve_checkpoint

SPEC_FILE = "policy_spec.json"
SPEC_FORMAT = 1
FILES = {"onnx": "policy.onnx", "torchscript": "policy.pt"}
CHECK_EPISODES = 10  # half at the reference, half at points drawn over the training range
ERROR_FACTOR, ULP_MARGIN = 4.0, 16
FLOAT32_EPS = float(np.finfo(np.float32).eps)


class ExportError(ValueError):
    """An export that cannot be made or does not reproduce its actor; the message says why."""


def policy_spec(trained: TrainedPolicy, fmt: str, program: Path) -> dict[str, Any]:
    actor = trained.policy().actor
    history = actor.history
    return {"format": SPEC_FORMAT, "program": program.name, "program_format": fmt,
            "sha256": hashlib.sha256(program.read_bytes()).hexdigest(), "env_id": trained.env_id,
            "obs_dim": trained.obs_dim, "act_dim": trained.act_dim, "action_low": -1.0, "action_high": 1.0,
            "input": "observation", "input_dim": actor.input_dim,
            "history": history.to_json() if history is not None else None, "output": "action", "dtype": "float32",
            "space": trained.space.to_dict(), "source": str(trained.path), "iteration": trained.iteration,
            "agent_steps": trained.agent_steps, "max_episode_steps": trained.max_episode_steps}


def check_inputs(trained: TrainedPolicy, episodes: int = CHECK_EPISODES, seed: int = 0) -> np.ndarray:
    """The inputs the equivalence check runs on: every step of ``episodes`` episodes of the actor in its env (half
    at the reference of its run's space, half at points drawn uniformly over the training range; the inputs as the
    actor read them, history included), then as many again drawn uniformly over the per-component range of those."""
    from .base.history import stack_episode
    from .envs import make_env
    from .rollout import rollout

    policy = trained.policy()
    history = policy.actor.history
    kwargs: dict[str, Any] = {"space": trained.space}
    if trained.max_episode_steps is not None:
        kwargs["max_episode_steps"] = trained.max_episode_steps
    env = make_env(trained.env_id, **kwargs)
    space, rng = trained.space, np.random.default_rng(seed)
    seen: list[np.ndarray] = []
    try:
        for episode in range(episodes):
            normalized = space.reference_normalized() if episode % 2 == 0 else space.sample_uniform(rng, 1)[0]
            episode_played = rollout(env, policy, params=space.from_normalized(normalized),
                                     params_normalized=normalized, kind="reference", iteration=0, slot=episode,
                                     run_seed=seed)
            seen.append(episode_played.obs if history is None else stack_episode(
                history, episode_played.obs, episode_played.actions, episode_played.next_obs)[0])
    finally:
        env.close()
    played = np.concatenate(seen).astype(np.float32)
    low, high = played.min(axis=0), played.max(axis=0)
    spread = rng.uniform(low, high, size=played.shape).astype(np.float32)
    return np.concatenate([played, spread])


def agreement(actor: Actor, program_actions: np.ndarray, inputs: np.ndarray) -> tuple[float, float]:
    """(the program's largest error, the largest it may have there): errors against the actor run in float64; the
    allowance is 4 x torch's own float32 error on the same input plus 16 float32 rounding units of the output layer's
    sum, ``eps * sum |w_i h_i| + |b|`` (a dot product's rounding error scales with its terms, not with its result:
    an action near 0 from large terms that cancel is as inexact as any other)."""
    import copy

    with torch.no_grad():
        exact_actor: Actor = copy.deepcopy(actor).double()
        x = torch.from_numpy(inputs).double()
        features = exact_actor.features(x)
        last = cast(torch.nn.Linear, exact_actor.layers[-1])
        exact = torch.tanh(last(features)).numpy()
        magnitude = (features.abs() @ last.weight.abs().T + last.bias.abs()).numpy()
        torch32 = actor(torch.from_numpy(inputs)).numpy().astype(np.float64)
    program_error = np.abs(program_actions.astype(np.float64) - exact)
    allowed = ERROR_FACTOR * np.abs(torch32 - exact) + ULP_MARGIN * FLOAT32_EPS * magnitude
    worst = int(np.argmax(program_error - allowed))
    return float(program_error.flat[worst]), float(allowed.flat[worst])


def export_policy(source: str | Path, fmt: str, out_dir: str | Path | None = None) -> Path:
    """Write the program and its spec; returns the spec's path."""
    if fmt not in FILES:
        raise ExportError(f"--format must be one of {sorted(FILES)}, got {fmt!r}")
    try:
        trained = load_policy(source)
    except CheckpointError as error:
        raise ExportError(str(error)) from None
    run_dir = resolve_checkpoint(source).parent
    run_dir = run_dir.parent if run_dir.name == "checkpoints" else run_dir
    out = Path(out_dir) if out_dir is not None else run_dir / "export"
    out.mkdir(parents=True, exist_ok=True)
    actor = trained.policy().actor.eval()
    example = torch.zeros(1, actor.input_dim)
    program = out / FILES[fmt]
    if fmt == "onnx":
        with warnings.catch_warnings():  # the TorchScript-based exporter is enough for an MLP and needs no onnxscript
            warnings.simplefilter("ignore")
            torch.onnx.export(actor, (example,), str(program), input_names=["observation"], output_names=["action"],
                              dynamic_axes={"observation": {0: "batch"}, "action": {0: "batch"}}, opset_version=17,
                              dynamo=False)
    else:
        torch.jit.trace(actor, example).save(str(program))  # type: ignore[no-untyped-call]
    inputs = check_inputs(trained)
    worst, allowed = agreement(actor, run_exported(program, fmt, inputs), inputs)
    if not worst <= allowed:
        program.unlink()
        raise ExportError(f"the exported {fmt} program's action differs from the actor's (float64) by {worst:.3g}, "
                          f"more than float32 precision allows there ({allowed:.3g}), on {len(inputs)} inputs of its "
                          f"own episodes; nothing written")
    spec_path = out / SPEC_FILE
    spec_path.write_text(json.dumps({**policy_spec(trained, fmt, program), "check_inputs": len(inputs),
                                     "max_error": worst}, indent=1))
    return spec_path


def run_exported(program: Path, fmt: str, observations: np.ndarray) -> np.ndarray:
    """The exported program's actions for a batch of observations."""
    if fmt == "onnx":
        import onnxruntime

        session = onnxruntime.InferenceSession(str(program), providers=["CPUExecutionProvider"])
        return np.asarray(session.run(None, {"observation": observations})[0])
    module = torch.jit.load(str(program))  # type: ignore[no-untyped-call]
    with torch.no_grad():
        return np.asarray(module(torch.from_numpy(observations)).numpy())


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="adr-export", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", metavar="RUN", type=existing_path("run"),
                        help="run directory, checkpoints/ folder, latest.json or .pt file")
    parser.add_argument("--format", required=True, choices=sorted(FILES), help="onnx (onnxruntime) or torchscript")
    parser.add_argument("--out", type=output_dir(), default=None, help="output folder [<run>/export]")
    env_modules_option(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    allow_env_modules(args.env_modules)
    try:
        if args.out is not None:
            writable_dir(args.out)
        spec_path = export_policy(args.run, args.format, args.out)
    except (ExportError, CheckpointError, ValueError) as error:
        print(f"adr-export: error: {error}", file=sys.stderr)
        return 2
    spec = json.loads(spec_path.read_text())
    memory = f" with {spec['history']['steps']} steps of history" if spec["history"] else ""
    print(f"{spec['env_id']}: {spec_path.parent / spec['program']} ({args.format}, {spec['obs_dim']} -> "
          f"{spec['act_dim']}{memory}; largest error against the actor in float64 {spec['max_error']:.2g} on "
          f"{spec['check_inputs']} inputs of its own episodes) and {spec_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
