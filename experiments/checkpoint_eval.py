"""Evaluate named checkpoints of finished runs on the fresh episodes of ``experiments.time_to_land``'s final evaluation.

    python -m experiments.checkpoint_eval RUN [RUN ...] --checkpoints best.pt latest.pt --episodes 100 --out F.jsonl

For each run directory and each named file in its ``checkpoints/``, the deterministic policy plays ``--episodes``
reference episodes of the evaluation stream ``FINAL_SEED`` (``experiments/landing.py``), the same start states as
time_to_land's ``final_solved``: ``latest.pt`` reproduces that figure, so a second checkpoint (``best.pt``, the best
periodic evaluation's policy) is compared on equal terms. One JSON row per (run, checkpoint) is appended to
``--out`` and printed. A run without a named checkpoint is reported in one line and skipped; nothing is written for
it.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from adr_core.base.checkpoint import CheckpointError
from adr_core.cli_types import ArgumentParser
from adr_core.envs import make_env
from adr_core.evaluation.policies import load_policy
from experiments.landing import FINAL_SEED, evaluate_callable


def evaluate(run: Path, name: str, episodes: int) -> dict:
    policy = load_policy(run / "checkpoints" / name)
    final = evaluate_callable(policy.policy(), episodes, FINAL_SEED, make_env(policy.env_id))
    return {"run": f"{run.parent.name}/{run.name}", "checkpoint": name, "env_id": policy.env_id,
            "agent_steps": policy.agent_steps, "episodes": episodes, "final_solved": final["solved_fraction"],
            "final_return_mean": final["return_mean"]}


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="python -m experiments.checkpoint_eval", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run directories (with checkpoints/)")
    parser.add_argument("--checkpoints", nargs="+", default=["best.pt", "latest.pt"],
                        help="file names in each run's checkpoints/ [best.pt latest.pt]")
    parser.add_argument("--episodes", type=int, default=100, help="fresh reference episodes per checkpoint [100]")
    parser.add_argument("--out", type=Path, required=True, help="JSON-lines file the rows are appended to")
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error(f"--episodes must be at least 1, got {args.episodes}")
    skipped = 0
    for run in args.runs:
        for name in args.checkpoints:
            try:
                row = evaluate(run, name, args.episodes)
            except (CheckpointError, FileNotFoundError) as error:
                print(f"[checkpoint_eval] {run}: {name} skipped: {error}", file=sys.stderr, flush=True)
                skipped += 1
                continue
            print(json.dumps(row), flush=True)
            with open(args.out, "a") as handle:
                handle.write(json.dumps(row) + "\n")
    return 1 if skipped else 0


if __name__ == "__main__":
    raise SystemExit(main())
