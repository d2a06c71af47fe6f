"""Where a training run's time goes: a preset trained in this process under cProfile, its time split into parts.

    python -m benchmarks.profile_run --config lunar_lander_adr_fast --steps 20000
    python -m benchmarks.profile_run --config ergo_reacher_adr_fast --steps 20000 --json runs/bench/profile_er.json

The run warms up past the agent's ``learning_starts`` (unprofiled), then trains ``--steps`` more agent steps under
cProfile with the preset's settings, less the early-stop checks (their evaluation episodes would mix with the
training rollouts in the profile; each check's seconds are in a run's early_stop.csv). Each part is the cumulative
time of the functions that do it (``PARTS``: simulator steps and resets, the policy's actions in rollouts,
trajectory bookkeeping, replay storing and sampling, the gradient steps' forward passes, backward passes, Adam steps
and target updates, the discriminator, the sampler), the rest is "other". Shares
are of the profiled wall time; profiling adds ~10-20 % of Python overhead to every part alike, so the shares (not the
absolute times) are the result. ``--pstats FILE`` keeps the raw profile (``python -m pstats FILE``).
"""
from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time
from pathlib import Path
from typing import Any

import torch

from adr_core.training.config import TrainConfig
from adr_core.training.experiments import resolve_experiment
from adr_core.training.trainer import Trainer

# part -> (the functions whose cumulative time it is, the part it is nested in, the functions whose direct calls
# count: None = all calls). A nested part is subtracted from its outer part, so the parts add up to the profiled
# time. Direct callers keep a part to its place: the discriminator takes backward passes and Adam steps of its own.
Functions = tuple[tuple[str, str], ...]
ROLLOUT: Functions = (("adr_core/rollout.py", "rollout"),)
AGENT_STEPS: Functions = (("agents/base.py", "_step"), ("agents/base.py", "_step_actor"), ("agents/sac.py",
                                                                                          "_gradient_step"),
                          ("agents/ddpg.py", "_gradient_step"), ("agents/td3.py", "_gradient_step"))
PARTS: dict[str, tuple[Functions, str | None, Functions | None]] = {
    "rollouts: bookkeeping": (ROLLOUT, None, None),
    "simulator step/reset": ((("gymnasium/core.py", "step"), ("gymnasium/core.py", "reset"),
                              ("gymnasium/wrappers/common.py", "step"), ("gymnasium/wrappers/common.py", "reset")),
                             "rollouts: bookkeeping", ROLLOUT),
    "policy in rollouts": ((("agents/networks.py", "explore"), ("agents/networks.py", "__call__")),
                           "rollouts: bookkeeping", ROLLOUT),
    "replay store": ((("agents/base.py", "store"),), None, None),
    "gradient steps: forward passes and the rest": ((("agents/base.py", "update"),), None, None),
    "replay sample": ((("agents/replay_buffer.py", "sample"),), "gradient steps: forward passes and the rest",
                      (("agents/base.py", "update"),)),
    "backward": ((("torch/autograd/__init__.py", "grad"),), "gradient steps: forward passes and the rest",
                 AGENT_STEPS),
    "Adam": ((("agents/optim.py", "step"),), "gradient steps: forward passes and the rest", AGENT_STEPS),
    "target update": ((("agents/base.py", "_soft_update"),), "gradient steps: forward passes and the rest", None),
    "discriminator": ((("adr_core/iteration.py", "score_then_train"),), None, None),
    "sampler": ((("adr_core/iteration.py", "update_sampler"), ("adr_core/iteration.py", "propose")), None, None),
}


def cumulative(stats: pstats.Stats, functions: Functions, callers_of: Functions | None = None) -> float:
    """Sum of the cumulative seconds of every profiled function matching one of ``functions``; a function called
    from another of the same list (a wrapper's ``step`` calling the env's) counts once, at the outermost. With
    ``callers_of``: only the calls made directly by functions matching those."""
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]

    def matches(key: Any, patterns: Functions) -> bool:
        return any(key[0].endswith(path) and key[2] == name for path, name in patterns)

    matching = {key for key in table if matches(key, functions)}
    total = 0.0
    for key in matching:
        callers = table[key][4]
        if callers_of is not None:
            total += sum(c[3] for caller, c in callers.items() if matches(caller, callers_of))
        else:
            total += table[key][3] - sum(c[3] for caller, c in callers.items() if caller in matching)
    return total


def split(stats: pstats.Stats, wall: float) -> dict[str, float]:
    """Seconds per part (inner parts subtracted from their outer part) and "other" (the rest of ``wall``)."""
    seconds = {part: cumulative(stats, functions, callers) for part, (functions, _, callers) in PARTS.items()}
    exclusive = dict(seconds)
    for part, (_functions, inside, _callers) in PARTS.items():
        if inside is not None:
            exclusive[inside] -= seconds[part]
    exclusive["other"] = wall - sum(exclusive.values())
    return exclusive


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="lunar_lander_adr_fast", help="packaged experiment name or YAML path")
    parser.add_argument("--steps", type=int, default=20000, help="profiled agent steps after the warm-up")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="write the parts (seconds and shares) to this file")
    parser.add_argument("--pstats", help="write the raw profile to this file")
    args = parser.parse_args()

    config = TrainConfig.from_yaml(resolve_experiment(args.config))
    config = config.with_overrides({"progress": False, "seed": args.seed, "total_agent_steps": 10**9,
                                     "early_stop_every_steps": 0})
    trainer = Trainer(config, None)
    while trainer.agent_steps <= config.agent.learning_starts:
        trainer.run_iteration()
    start_steps, profile = trainer.agent_steps, cProfile.Profile()
    hooks = trainer.run_hooks()
    started = time.perf_counter()
    profile.enable()
    while trainer.agent_steps < start_steps + args.steps:
        trainer.run(max_iterations=1, hooks=hooks)
    profile.disable()
    wall = time.perf_counter() - started
    steps = trainer.agent_steps - start_steps
    stats = pstats.Stats(profile)
    parts = split(stats, wall)
    print(f"{config.env_id}, {args.config}: {steps} agent steps in {wall:.1f} s profiled ({steps / wall:.0f} steps/s "
          f"under the profiler), {trainer.agent.updates_done} gradient steps so far, torch threads "
          f"{torch.get_num_threads()}")
    print("| part | s | share |\n|---|---|---|")
    for part, value in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"| {part} | {value:.2f} | {100 * value / wall:.1f} % |")
    if args.pstats:
        profile.dump_stats(args.pstats)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"config": args.config, "seed": args.seed, "steps": steps,
                                               "wall_s": wall, "parts_s": parts}, indent=2) + "\n")


if __name__ == "__main__":
    main()
