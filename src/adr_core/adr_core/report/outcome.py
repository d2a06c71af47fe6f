"""One line per evaluated run: how its final policy does at the reference and across the sweep.

    reference (main_engine_power 13): return 243 ± 41, solved 93% (95% CI 86-97%, 102 episodes); solved by ...

The reference figure comes from at least 100 episodes (``EvaluationOptions.reference_episodes``) on the evaluation
seeds, which no early-stop check plays, with the Wilson 95 % interval of the solved share. Envs scored by a final
distance add its quartiles at the reference and the share within a fifth of the solved threshold (Pusher3DOF:
0.05 m beside the paper's 0.25 m). 1-D spaces list the solved share at every sweep point, then the mean over the
sweep points inside the training range and inside the space's named range ``hard`` (the hard end: what a
randomized policy is for); larger spaces give, per dimension, the point where the policy solves least. The same line
ends the report's console output and heads its summary page.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from .evaluations import RunEvaluation


def _value(x: float) -> str:
    return f"{x:.4g}"


def wilson_interval(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a binomial share (95 % by default); (0, 1) without trials."""
    if n == 0:
        return 0.0, 1.0
    share = successes / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def outcome_line(evaluation: RunEvaluation) -> str:
    run, policy = evaluation.run, evaluation.policy
    label = f"{run.path.name} ({run.method}, seed {run.seed})"
    if policy is None:
        return f"{label}: not evaluated: {evaluation.problem}"
    parts = []
    space = policy.space
    reference = evaluation.scores.get("reference")
    if reference is not None:
        s = reference.summary()
        where = ", ".join(f"{n} {_value(v)}" for n, v in zip(space.names, space.reference()))
        metric = (f"return {s['return_mean']:.0f} ± {s['return_std']:.0f}" if math.isnan(s["final_distance_mean"])
                  else f"final distance {s['final_distance_mean']:.3g}")
        n = int(reference.outcomes.solved.size)
        low, high = wilson_interval(int(reference.outcomes.solved.sum()), n)
        parts.append(f"reference ({where}): {metric}, solved {100 * s['solved_fraction']:.0f}% "
                     f"(95% CI {100 * low:.0f}-{100 * high:.0f}%, {n} episodes)")
        distances = reference.outcomes.final_distance.reshape(-1)
        from ..envs import env_record

        solved_rule = env_record(policy.env_id).solved
        if not math.isnan(s["final_distance_mean"]) and solved_rule.metric == "final_distance":
            threshold = solved_rule.threshold
            q1, median, q3 = np.percentile(distances, [25, 50, 75])
            tight = threshold / 5
            parts.append(f"final distance quartiles {q1:.3g} / {median:.3g} / {q3:.3g}, within {tight:.3g}: "
                         f"{100 * float(np.mean(distances < tight)):.0f}%")
    sweep = evaluation.sweep
    if sweep is not None:
        solved = sweep.solved_fraction()
        points = sweep.grid.points
        if space.ndim == 1:
            cells = ", ".join(f"{_value(p[0])}: {100 * v:.0f}%" for p, v in zip(points, solved))
            parts.append(f"solved by {space.names[0]}: {cells}")
            boxes = [("training range", (space.dims[0].low, space.dims[0].high))]
            if "hard" in space.range_names:
                low_h, high_h = space.range_box("hard")
                boxes.append(("hard end", (float(low_h[0]), float(high_h[0]))))
            shares = []
            for what, (low_b, high_b) in boxes:
                inside = (points[:, 0] >= low_b - 1e-9) & (points[:, 0] <= high_b + 1e-9)
                if inside.any():
                    shares.append(f"{what} {_value(low_b)}-{_value(high_b)} {100 * solved[inside].mean():.0f}%")
            if shares:
                parts.append("mean over the " + ", ".join(shares))
        elif sweep.grid.kind == "per_dimension":
            worst = []
            for d, name in enumerate(space.names):
                idx = sweep.indices_of(d)
                if idx.size:
                    i = idx[int(solved[idx].argmin())]
                    worst.append(f"{name} {_value(points[i][d])}: {100 * solved[i]:.0f}%")
            parts.append(f"solved over the sweep {100 * solved.mean():.0f}%; least per dimension: {', '.join(worst)}")
        else:
            i = int(solved.argmin())
            at = ", ".join(f"{n} {_value(v)}" for n, v in zip(space.names, points[i]))
            parts.append(f"solved over the grid {100 * solved.mean():.0f}%, least at ({at}): {100 * solved[i]:.0f}%")
    return f"{label}: " + "; ".join(parts)
