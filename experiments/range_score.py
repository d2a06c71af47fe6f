"""Score trained runs on what a randomized policy is for: the reference and the randomized range it trained on.

    python -m experiments.range_score runs/round10/sr10_plain_s0 runs/round10/sr10_hist3_s0 --episodes 50 \\
        --out results/x/range_scores.jsonl

Per run (its final checkpoint, in its own space): the solved share of ``--episodes`` deterministic reference
episodes, of as many episodes each at its own point drawn uniformly over the training range, and (when the space has
a named range ``hard``) within it, the points and initial states from ``--seed`` alone (so every run meets the same
ones; ``adr_core.evaluation.early_stop.range_episodes``); where the env is scored by a final distance, its mean at
the reference and each part's share within a fifth of the solved threshold (``*_tight``: Pusher3DOF 0.05 m). One JSON
line per run (appended), and a Markdown table on stdout. The preset searches of issues 59 and 60 choose with it.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

SEED = 4242


def score_run(run: Path, episodes: int, seed: int, workers: int) -> dict[str, object]:
    from adr_core.envs import env_record
    from adr_core.evaluation import evaluate, load_policy
    from adr_core.evaluation.early_stop import range_episodes

    policy = load_policy(run)
    space = policy.run_space
    reference = evaluate(policy, policy.env_id, ["reference"], episodes, (seed,), workers=workers)["reference"]
    row: dict[str, object] = {"run": str(run), "env_id": policy.env_id, "agent_steps": policy.agent_steps,
                              "episodes": episodes, "seed": seed,
                              "reference_solved": float(reference.outcomes.solved.mean())}
    distances = reference.outcomes.final_distance.reshape(-1)
    rule = env_record(policy.env_id).solved
    tight = rule.threshold / 5 if rule.metric == "final_distance" else None
    if tight is not None:
        row["reference_final_distance"] = float(np.nanmean(distances))
        row["tight_threshold"] = tight
        row["reference_tight"] = float(np.mean(distances < tight))
    parts = ["range"] + (["hard"] if "hard" in policy.space.range_names else [])
    for part in parts:
        _, solved, final = range_episodes(policy.actor_weights, policy.env_id, part, episodes,
                                          seed + 1 + parts.index(part), space=space,
                                          max_episode_steps=policy.max_episode_steps, workers=workers,
                                          with_distance=True)
        row[f"{part}_solved"] = float(solved.mean())
        if tight is not None:
            row[f"{part}_tight"] = float(np.mean(final < tight))
    return row


def main(argv: list[str] | None = None) -> int:
    from adr_core.cli_types import ArgumentParser

    parser = ArgumentParser(prog="range_score", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path, help="run directories (or checkpoints)")
    parser.add_argument("--episodes", type=int, default=50, help="episodes per part [50]")
    parser.add_argument("--seed", type=int, default=SEED, help=f"points and initial states [{SEED}]")
    parser.add_argument("--workers", type=int, default=1, help="evaluation processes [1]")
    parser.add_argument("--out", type=Path, default=None, help="append one JSON line per run to this file")
    args = parser.parse_args(argv)
    missing = [str(r) for r in args.runs if not r.exists()]
    if missing:
        parser.error(f"no such run: {', '.join(missing)}")
    if args.episodes < 1 or args.workers < 1:
        parser.error("--episodes and --workers must be >= 1")
    rows = [score_run(run, args.episodes, args.seed, args.workers) for run in args.runs]
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a") as handle:
            handle.writelines(json.dumps(row) + "\n" for row in rows)
    print("| run | agent steps | reference | training range | hard range | within a fifth: reference / hard |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        hard = f"{100 * row['hard_solved']:.0f} %" if "hard_solved" in row else "-"
        tight = (f"{100 * row['reference_tight']:.0f} % / {100 * row.get('hard_tight', float('nan')):.0f} %"
                 if "reference_tight" in row else "-")
        print(f"| {row['run']} | {row['agent_steps']} | {100 * row['reference_solved']:.0f} % | "
              f"{100 * row['range_solved']:.0f} % | {hard} | {tight} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
