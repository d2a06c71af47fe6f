"""``adr-report``: evaluate the runs' policies and regenerate the paper's figures, a table and a one-page summary.

Output directory::

    summary.md, summary.html        the page: outcome lines, runs, numbers, figures, sampler flags, how it was made
    outcome.txt                     one line per run: the final policy at the reference and across the sweep
    figures/<env>_<figure>.png|svg  generalization / heat maps, learning curves, training curves, sampling, sampler
    sweeps/<run>/                   each run's sweep (sweep.npz, sweep_points.csv, sweep_episodes.csv)
    <env>_scores.csv                final policy on the named settings, per run
    <env>_learning_curves.csv       every curve point drawn (run, method, setting, source, agent_steps, value)
"""
from __future__ import annotations

import csv
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..evaluation.grids import default_settings, sweep_grid
from ..evaluation.solved import SolvedCriterion, solved_criterion
from ..randomization import RandomizationSpace
from .curves import Curve, checkpoint_curve, evaluation_curve, metric_column, training_curves
from .degenerate import DegenerateRegion, applicable, degenerate_regions
from .evaluations import RunEvaluation, evaluate_runs, methods_of
from .model import EnvReport, ReportOptions
from .outcome import outcome_line
from .page import CAPTIONS, page_blocks
from .plots import (
    generalization_figure,
    heatmap_figure,
    learning_curves_figure,
    sampler_dynamics_figure,
    sampler_state_figure,
    sampling_histograms_figure,
    save_figure,
)
from .run_data import RunData, find_runs, load_run, method_sort_key
from .sampling_stats import late_samples, stage_histograms
from .summary import write_documents

FIGURES = "figures"
__all__ = ["EnvReport", "Report", "ReportOptions", "build_report"]

OUTCOME_FILE = "outcome.txt"  # one line per run: reference and solved share across the sweep


@dataclass
class Report:
    out_dir: Path
    envs: list[EnvReport]
    markdown: Path
    html: Path
    seconds: float


def build_report(paths: Sequence[str | Path], out_dir: str | Path, options: ReportOptions = ReportOptions(),
                 log: Callable[[str], None] = print) -> Report:
    started = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = [load_run(p) for p in find_runs(list(paths))]
    by_env: dict[tuple[str, str | None], list[RunData]] = {}  # one section per env and randomization space
    for run in sorted(runs, key=lambda r: (method_sort_key(r.method), r.seed, str(r.path))):
        by_env.setdefault((run.env_id, run.space_name), []).append(run)
    envs = []
    for (env_id, space_name), env_runs in by_env.items():
        log(f"{env_id}{'' if space_name is None else f' (space {space_name})'}: {len(env_runs)} run(s): "
            f"{', '.join(r.label for r in env_runs)}")
        envs.append(_env_report(env_id, env_runs, out_dir, options, log))
    blocks = page_blocks(envs, out_dir, options)
    markdown, html = write_documents(blocks, out_dir, "ADR evaluation report")
    report = Report(out_dir, envs, markdown, html, time.perf_counter() - started)
    log(f"report: {markdown} and {html} ({report.seconds:.1f} s)")
    lines = [outcome_line(e) for env in envs for e in env.evaluations]
    (out_dir / OUTCOME_FILE).write_text("\n".join(lines) + "\n")
    for line in lines:  # the last lines of the console output: how each final policy does
        log(f"outcome: {line}")
    return report


def _env_report(env_id: str, runs: list[RunData], out_dir: Path, options: ReportOptions,
                log: Callable[[str], None]) -> EnvReport:
    space, criterion = runs[0].space, solved_criterion(env_id)
    grid = sweep_grid(space, options.grid_kind, options.points)
    evaluations = evaluate_runs(runs, grid, options.evaluation, _progress(log))
    names = _unique_names(runs)
    for evaluation in evaluations:
        if evaluation.sweep is not None:
            evaluation.sweep.save(out_dir / "sweeps" / names[id(evaluation.run)])
        if evaluation.problem:
            log(f"  {evaluation.run.path}: not evaluated: {evaluation.problem}")
    report = EnvReport(env_id, space, criterion, evaluations, _learning_curves(evaluations, space, criterion),
                       _training_curves(runs, criterion), _flags(evaluations, space, options),
                       space_name=runs[0].space_name)
    _write_scores(report, out_dir / f"{report.short_name}_scores.csv", names)
    _write_curves(report, out_dir / f"{report.short_name}_learning_curves.csv")
    report.figures, report.captions = _figures(report, options)
    for name, figure in report.figures.items():
        report.files[name] = save_figure(figure, out_dir / FIGURES, f"{report.short_name}_{name}", options.formats)
    return report


def _progress(log: Callable[[str], None]) -> Callable[[int, int], None]:
    last = [0.0]

    def report(done: int, total: int) -> None:
        now = time.perf_counter()
        if done == total or now - last[0] > 5.0:
            last[0] = now
            log(f"  evaluated {done}/{total} episode batches")

    return report


# ---------------------------------------------------------------------------------------------- data for figures
def _learning_curves(evaluations: Sequence[RunEvaluation], space: RandomizationSpace,
                     criterion: SolvedCriterion) -> dict[str, list[Curve]]:
    """Per named setting, one curve per run: the periodic evaluation if recorded, else the evaluated checkpoints."""
    column = metric_column(criterion)
    curves: dict[str, list[Curve]] = {name: [] for name in default_settings(space)}
    for evaluation in evaluations:
        for setting in curves:
            curve = evaluation_curve(evaluation.run, setting, criterion)
            if curve is None and evaluation.checkpoint_scores:
                steps = [s for s, scores in evaluation.checkpoint_scores if setting in scores]
                values = [scores[setting].summary()[column] for _, scores in evaluation.checkpoint_scores
                          if setting in scores]
                curve = checkpoint_curve(evaluation.run, setting, steps, values)
            if curve is not None and len(curve.steps):
                curves[setting].append(curve)
    return curves


def _training_curves(runs: Sequence[RunData], criterion: SolvedCriterion) -> dict[str, list[Curve]]:
    panels: dict[str, list[Curve]] = {}
    for run in runs:
        for curve in training_curves(run, criterion):
            panels.setdefault(curve.setting, []).append(curve)
    return panels


def _flags(evaluations: Sequence[RunEvaluation], space: RandomizationSpace,
           options: ReportOptions) -> dict[str, list[DegenerateRegion] | None]:
    """Learning samplers only: a fixed or uniform sampler concentrates by construction or not at all."""
    flags: dict[str, list[DegenerateRegion] | None] = {}
    for method, group in methods_of(evaluations).items():
        if not any(e.run.sampler == "adr" for e in group):
            continue
        sweeps = [e.sweep for e in group if e.sweep is not None]
        if not applicable(sweeps):
            flags[method] = None
            continue
        flags[method] = degenerate_regions(space, late_samples([e.run for e in group]), sweeps, options.flag_bins,
                                           options.concentration)
    return flags


def _figures(report: EnvReport, options: ReportOptions) -> tuple[dict[str, Figure], dict[str, str]]:
    """Figures by file stem, and their captions."""
    figures: dict[str, Figure] = {}
    captions: dict[str, str] = {}
    space, env = report.space, report.env_id
    groups = {m: [e.sweep for e in g if e.sweep is not None] for m, g in methods_of(report.evaluations).items()}
    groups = {m: sweeps for m, sweeps in groups.items() if sweeps}
    if groups and next(iter(groups.values()))[0].grid.kind == "per_dimension":
        figures["generalization"] = generalization_figure(groups, space)
        captions["generalization"] = CAPTIONS["generalization"]
        figures["generalization_solved"] = generalization_figure(groups, space, solved=True)
        captions["generalization_solved"] = CAPTIONS["generalization_solved"]
    elif groups:
        for method, sweeps in groups.items():
            samples = np.concatenate([e.run.samples.physical for e in methods_of(report.evaluations)[method]])
            figures[f"heatmap_{_slug(method)}"] = heatmap_figure(
                sweeps, samples, space, f"{env}, {method}: final policy ({len(sweeps)} run(s))")
            captions[f"heatmap_{_slug(method)}"] = f"{method}: {CAPTIONS['heatmap']}"
    if any(report.curves.values()):
        figures["learning_curves"] = learning_curves_figure(
            report.curves, report.criterion, f"{env}: deterministic policy on the named settings during training")
        captions["learning_curves"] = CAPTIONS["learning_curves"]
    if report.training:
        figures["training_curves"] = learning_curves_figure(
            report.training, report.criterion, f"{env}: training rollouts (per-iteration means, from metrics.csv)")
        captions["training_curves"] = CAPTIONS["training_curves"]
    for method, group in methods_of(report.evaluations).items():
        runs = [e.run for e in group if len(e.run.samples.iteration)]
        if method != "baseline" and runs:
            histograms = stage_histograms(runs, options.stages, options.bins)
            figures[f"sampling_{_slug(method)}"] = sampling_histograms_figure(
                histograms, space, f"{env}, {method}: where the sampler proposed settings, by training stage "
                                   f"({len(runs)} run(s) pooled)")
            captions[f"sampling_{_slug(method)}"] = f"{method}: {CAPTIONS['sampling']}"
    figures["sampler_dynamics"] = sampler_dynamics_figure(report.runs, f"{env}: the sampler over training")
    captions["sampler_dynamics"] = CAPTIONS["sampler_dynamics"]
    state = sampler_state_figure(report.runs, f"{env}: each sampler's own statistics over training")
    if state is not None:
        figures["sampler_state"] = state
        captions["sampler_state"] = CAPTIONS["sampler_state"]
    return figures, captions


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text.lower()).strip("_")


def _unique_names(runs: Sequence[RunData]) -> dict[int, str]:
    names: dict[int, str] = {}
    used: set[str] = set()
    for run in runs:
        name, k = run.path.name or _slug(run.label), 1
        while name in used:
            k += 1
            name = f"{run.path.name}_{k}"
        used.add(name)
        names[id(run)] = name
    return names


# ---------------------------------------------------------------------------------------------- data files
def _write_scores(report: EnvReport, path: Path, names: dict[int, str]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["run", "method", "seed", "checkpoint", "agent_steps", "setting", "points", "episodes",
                         "return_mean", "return_std", "solved_fraction", "final_distance_mean"])
        for evaluation in report.evaluations:
            for name, score in evaluation.scores.items():
                summary = score.summary()
                writer.writerow([names[id(evaluation.run)], evaluation.run.method, evaluation.run.seed,
                                 evaluation.policy.path if evaluation.policy else "", evaluation.policy.agent_steps
                                 if evaluation.policy else "", name, len(score.points), score.outcomes.returns.size,
                                 *(_cell(summary[k]) for k in ("return_mean", "return_std", "solved_fraction",
                                                               "final_distance_mean"))])


def _cell(value: float) -> str:
    return "" if np.isnan(value) else repr(float(value))


def _write_curves(report: EnvReport, path: Path) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["run", "method", "setting", "source", "agent_steps", "value"])
        for panel in (report.curves, report.training):
            for curves in panel.values():
                for curve in curves:
                    for step, value in zip(curve.steps, curve.values):
                        writer.writerow([curve.run, curve.method, curve.setting, curve.source, int(step), repr(value)])
