"""Export a run's policy for deployment without the training stack: ONNX (onnxruntime) or TorchScript.

    adr-export runs/x --format onnx                 # runs/x/export/policy.onnx + policy_spec.json
    adr-export runs/x --format torchscript --out d  # d/policy.pt + d/policy_spec.json

The exported program is the deterministic actor (tanh of the mean for SAC): one float32 observation batch in,
actions in [-1, 1] out. Before anything is written the export is run on 10 000 random observations and compared with
the actor it came from; a difference above 1e-5 refuses the export. ``policy_spec.json`` says what the program
expects and what produced it: the env, the observation and action sizes, the action bounds, the randomization space,
the source checkpoint and the program file's SHA-256, so a deployment can refuse a policy that does not fit its
robot before it sends a command (adr_deploy checks it).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .base.checkpoint import CheckpointError
from .cli_types import ArgumentParser, env_modules_option, existing_path, output_dir, writable_dir
from .envs import allow_env_modules
from .evaluation.policies import TrainedPolicy, load_policy
from .run_dir import resolve_checkpoint

SPEC_FILE = "policy_spec.json"
SPEC_FORMAT = 1
FILES = {"onnx": "policy.onnx", "torchscript": "policy.pt"}
TOLERANCE = 1e-5
CHECK_OBSERVATIONS = 10_000


class ExportError(ValueError):
    """An export that cannot be made or does not reproduce its actor; the message says why."""


def policy_spec(trained: TrainedPolicy, fmt: str, program: Path) -> dict[str, Any]:
    return {"format": SPEC_FORMAT, "program": program.name, "program_format": fmt,
            "sha256": hashlib.sha256(program.read_bytes()).hexdigest(), "env_id": trained.env_id,
            "obs_dim": trained.obs_dim, "act_dim": trained.act_dim, "action_low": -1.0, "action_high": 1.0,
            "input": "observation", "output": "action", "dtype": "float32", "space": trained.space.to_dict(),
            "source": str(trained.path), "iteration": trained.iteration, "agent_steps": trained.agent_steps,
            "max_episode_steps": trained.max_episode_steps}


def check_observations(obs_dim: int, count: int = CHECK_OBSERVATIONS, seed: int = 0) -> np.ndarray:
    """Random observations for the equivalence check: wide normal values (beyond every env's scaled range)."""
    return (np.random.default_rng(seed).normal(size=(count, obs_dim)) * 2.0).astype(np.float32)


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
    example = torch.zeros(1, trained.obs_dim)
    program = out / FILES[fmt]
    if fmt == "onnx":
        with warnings.catch_warnings():  # the TorchScript-based exporter is enough for an MLP and needs no onnxscript
            warnings.simplefilter("ignore")
            torch.onnx.export(actor, (example,), str(program), input_names=["observation"], output_names=["action"],
                              dynamic_axes={"observation": {0: "batch"}, "action": {0: "batch"}}, opset_version=17,
                              dynamo=False)
    else:
        torch.jit.trace(actor, example).save(str(program))  # type: ignore[no-untyped-call]
    observations = check_observations(trained.obs_dim)
    with torch.no_grad():
        expected = actor(torch.from_numpy(observations)).numpy()
    worst = float(np.abs(run_exported(program, fmt, observations) - expected).max())
    if not worst <= TOLERANCE:
        program.unlink()
        raise ExportError(f"the exported {fmt} program differs from the actor by {worst:.3g} (> {TOLERANCE}) on "
                          f"{len(observations)} observations; nothing written")
    spec_path = out / SPEC_FILE
    spec_path.write_text(json.dumps({**policy_spec(trained, fmt, program), "max_abs_difference": worst}, indent=1))
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
    print(f"{spec['env_id']}: {spec_path.parent / spec['program']} ({args.format}, {spec['obs_dim']} -> "
          f"{spec['act_dim']}; max difference to the actor {spec['max_abs_difference']:.2g} on "
          f"{CHECK_OBSERVATIONS} observations) and {spec_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
