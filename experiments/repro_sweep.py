"""Per-setting numbers of a claims grid: solved share and metric of every method at every sweep point (mean ± std
across seeds, every seed listed), and, per ADR run, where its final policy fails beside where its sampler looked.

Both read an adr-report directory (``sweeps/<run>/sweep_points.csv``, ``<env>_scores.csv``) and the run
directories (``sampled_parameters.csv``); nothing is evaluated again.

    python -m experiments.repro_sweep runs/claims_ll/report --env adr/LunarLander-v0 --runs runs/claims_ll/runs
    python -m experiments.repro_sweep ... --probes runs/claims_ll/probes   # adr-probe around each final ADR policy
"""
from __future__ import annotations

import argparse
import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from adr_core.cli_types import ArgumentParser
from adr_core.evaluation.solved import solved_criterion


@dataclass
class PointScores:
    """One method at one sweep point: per seed, the solved share and the mean metric over the point's episodes."""

    solved: dict[int, float] = field(default_factory=dict)
    metric: dict[int, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Sweep:
    dimension: str
    values: tuple[float, ...]  # the swept dimension's value at each point, in point order
    methods: dict[str, list[PointScores]]  # method -> one PointScores per point
    episodes: int  # per point and run


def runs_of(report_dir: Path, env_id: str) -> dict[str, tuple[str, int]]:
    """run name -> (method, seed), from the report's scores table."""
    short = env_id.split("/")[-1].split("-")[0].lower()
    with (report_dir / f"{short}_scores.csv").open(newline="") as handle:
        return {row["run"]: (row["method"], int(row["seed"])) for row in csv.DictReader(handle)}


def load_sweep(report_dir: Path, env_id: str, dimension: str | None = None) -> Sweep:
    """The sweep of ``dimension`` (default: the first swept one) for every run of the report."""
    column = "return_mean" if solved_criterion(env_id).metric == "return" else "final_distance_mean"
    methods: dict[str, list[PointScores]] = {}
    values: tuple[float, ...] = ()
    episodes = 0
    for run, (method, seed) in sorted(runs_of(report_dir, env_id).items()):
        path = report_dir / "sweeps" / run / "sweep_points.csv"
        if not path.is_file():
            continue
        with path.open(newline="") as handle:
            rows = list(csv.DictReader(handle))
        dimension = dimension or rows[0]["swept"]
        if not dimension:
            raise ValueError(f"{path}: a grid over several dimensions at once (no single swept dimension); the "
                             f"per-setting tables read one-dimensional sweeps (the report's summary has the grid)")
        rows = [r for r in rows if r["swept"] == dimension]
        run_values = tuple(float(r[dimension]) for r in rows)
        if values and run_values != values:
            raise ValueError(f"{path}: its sweep points {run_values} differ from the other runs' {values}")
        values, episodes = run_values, int(rows[0]["episodes"])
        points = methods.setdefault(method, [PointScores() for _ in rows])
        for point, row in zip(points, rows):
            point.solved[seed] = float(row["solved_fraction"])
            point.metric[seed] = float(row[column]) if row[column] not in ("", "nan") else math.nan
    if not methods:
        raise ValueError(f"{report_dir} holds no sweep of {env_id}")
    return Sweep(str(dimension), values, methods, episodes)


def _mean_std(values: Sequence[float], scale: float = 1.0, digits: int = 0) -> str:
    array = scale * np.asarray(values, float)
    if array.size == 0:
        return "-"
    std = f" ± {array.std(ddof=1):.{digits}f}" if array.size > 1 else ""
    return f"{array.mean():.{digits}f}{std}"


def sweep_markdown(sweep: Sweep, env_id: str) -> str:
    """Two tables (solved %, then the metric), a row per sweep point, a column per method; and every seed's row."""
    criterion = solved_criterion(env_id)
    metric = "return" if criterion.metric == "return" else "final distance (m)"
    digits = 0 if criterion.metric == "return" else 3
    names = list(sweep.methods)
    seeds = {m: sorted(sweep.methods[m][0].solved) for m in names}
    lines = [f"Each run's final policy, {sweep.episodes} episodes per point; mean ± std across seeds "
             f"(seeds: {'; '.join(f'{m} {seeds[m]}' for m in names)}).", "",
             f"| {sweep.dimension} | " + " | ".join(f"{m} solved %" for m in names) + " | "
             + " | ".join(f"{m} {metric}" for m in names) + " |",
             "|---" * (1 + 2 * len(names)) + "|"]
    for i, value in enumerate(sweep.values):
        solved = [_mean_std(list(sweep.methods[m][i].solved.values()), 100) for m in names]
        metrics = [_mean_std(list(sweep.methods[m][i].metric.values()), digits=digits) for m in names]
        lines.append(f"| {value:g} | " + " | ".join(solved) + " | " + " | ".join(metrics) + " |")
    lines += ["", f"Solved % per seed ({sweep.dimension} = " + ", ".join(f"{v:g}" for v in sweep.values) + "):", "",
              "| method | seed | " + " | ".join(f"{v:g}" for v in sweep.values) + " |",
              "|---|---" + "|---" * len(sweep.values) + "|"]
    for m in names:
        for seed in seeds[m]:
            row = [f"{100 * p.solved[seed]:.0f}" if seed in p.solved else "-" for p in sweep.methods[m]]
            lines.append(f"| {m} | {seed} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def proposals_of(run_dir: Path, dimension: str) -> tuple[np.ndarray, np.ndarray]:
    """(iteration, value of ``dimension``) of every proposal of a training run (``sampled_parameters.csv``) or of an
    adr-probe around its final policy (``proposals.csv``)."""
    name = "proposals.csv" if (run_dir / "proposals.csv").is_file() else "sampled_parameters.csv"
    with (run_dir / name).open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return (np.array([int(r["iteration"]) for r in rows]), np.array([float(r[dimension]) for r in rows]))


def focus_figure(sweep: Sweep, runs: dict[int, Path], out: Path, env_id: str, method: str = "ADR",
                 source: str = "its sampler") -> Path:
    """Per seed of ``method``: its final policy's solved share along the sweep (line, left axis) beside the share of
    the proposals in ``runs`` (its training run's, or a probe's around the final policy) per bin of the same
    dimension, over the whole run and its last quarter (bars)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seeds = sorted(runs)
    figure, axes = plt.subplots(1, len(seeds), figsize=(3.2 * len(seeds), 3.0), squeeze=False, sharey=True)
    values = np.array(sweep.values)
    step = float(np.median(np.diff(values))) if len(values) > 1 else 1.0
    edges = np.append(values - step / 2, values[-1] + step / 2)
    for ax, seed in zip(axes[0], seeds):
        iteration, proposed = proposals_of(runs[seed], sweep.dimension)
        last = iteration >= np.quantile(iteration, 0.75) if iteration.size else iteration.astype(bool)
        for subset, label, alpha in ((proposed, "proposals, whole run", 0.35),
                                     (proposed[last], "proposals, last quarter", 0.7)):
            counts, _ = np.histogram(subset, bins=edges)
            share = counts / max(1, counts.sum())
            ax.bar(values, 100 * share, width=0.8 * step, alpha=alpha, color="tab:blue", label=label)
        solved = [100 * p.solved.get(seed, math.nan) for p in sweep.methods[method]]
        ax.plot(values, solved, color="tab:red", marker="o", markersize=3, label="final policy: solved %")
        ax.set_title(f"{method} seed {seed}", fontsize=9)
        ax.set_xlabel(sweep.dimension)
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("%")
    axes[0][0].legend(fontsize=6, loc="lower right")
    figure.suptitle(f"{env_id}: where each {method} policy fails (red) vs where {source} proposed (blue)",
                    fontsize=9)
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=120)
    plt.close(figure)
    return out


def focus_table(sweep: Sweep, runs: dict[int, Path], method: str = "ADR") -> str:
    """Per seed: share of the last quarter's proposals at points the final policy solves in < 50 % of episodes,
    against that failure region's share of the range (uniform sampling would match it)."""
    values = np.array(sweep.values)
    step = float(np.median(np.diff(values))) if len(values) > 1 else 1.0
    lines = ["| seed | failure points (< 50 % solved) | their share of the range | share of last-quarter proposals |",
             "|---|---|---|---|"]
    for seed in sorted(runs):
        failing = [v for v, p in zip(values, sweep.methods[method]) if p.solved.get(seed, 1.0) < 0.5]
        iteration, proposed = proposals_of(runs[seed], sweep.dimension)
        last = proposed[iteration >= np.quantile(iteration, 0.75)] if iteration.size else proposed
        near = np.zeros(last.shape, bool)
        for v in failing:
            near |= np.abs(last - v) <= step / 2
        region = len(failing) / len(values)
        lines.append(f"| {seed} | {', '.join(f'{v:g}' for v in failing) or 'none'} | {100 * region:.0f} % | "
                     f"{100 * near.mean() if last.size else math.nan:.0f} % |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report", type=Path, help="adr-report output directory")
    parser.add_argument("--env", default="adr/LunarLander-v0")
    parser.add_argument("--runs", type=Path, help="folder of the run directories (for the ADR focus figure)")
    parser.add_argument("--probes", type=Path,
                        help="folder of adr-probe outputs around the final ADR policies, one per run, named as the "
                             "run: a second focus figure and table with the probes' proposals")
    parser.add_argument("--dimension", default=None, help="swept dimension [the first]")
    parser.add_argument("--out", type=Path, default=None, help="markdown file [<report>/per_setting.md]")
    args = parser.parse_args(argv)
    sweep = load_sweep(args.report, args.env, args.dimension)
    text = sweep_markdown(sweep, args.env)
    adr_runs = {seed: run for run, (method, seed) in runs_of(args.report, args.env).items() if method == "ADR"}
    short = args.env.split("/")[-1].split("-")[0].lower()
    for folder, suffix, source in ((args.runs, "proposals", "its sampler"),
                                   (args.probes, "probe_proposals", "a probe around it")):
        runs = {seed: folder / run for seed, run in adr_runs.items() if folder is not None and (folder / run).is_dir()}
        if runs:
            figure = focus_figure(sweep, runs, args.report / "figures" / f"{short}_adr_failures_vs_{suffix}.png",
                                  args.env, source=source)
            text += f"\n![ADR failures vs {source}]({figure.name})\n\n" + focus_table(sweep, runs)
    out = args.out or args.report / "per_setting.md"
    out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
