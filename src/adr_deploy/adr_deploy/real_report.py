"""adr-deploy-report: a policy's episodes on the arm (or the emulated bus) beside the simulator's at the same goals.

    adr-deploy-report runs/ergo/real_arm_steps.csv --out runs/ergo/real_report
    adr-deploy-report --transfer runs/transfer --out runs/transfer/report    # many policies x arm settings

Reads the policy runner's per-step log (``steps_file``; see ``policy_runner.step_log``) and writes
``real_vs_sim.md``/``.html``, ``real_vs_sim.csv`` (one row per episode) and figures: the task distance over each
episode (arm vs simulator), final distances (arm against simulator, goal by goal) and the mean action gap per step.
Only episodes with a simulated twin (random goals) are compared; clicked-goal episodes are listed on their own.
Runs where matplotlib is installed (the workstation); the arm's computer only writes the CSV.
``--transfer``: the paper's real-robot figure instead, final distance per method and setting over many deployed
policies (``adr_deploy.transfer_report``).
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from adr_core.cli_types import ArgumentParser, existing_dir, existing_file, output_dir, positive_number

SOLVED_DISTANCE = 0.025  # m: both Ergo tasks (adr_core.envs.ergo_jr.SOLVED_DISTANCE; checked by the tests)
MAX_PANELS = 12


class ReportError(ValueError):
    """The steps file cannot be read as a policy runner's step log; the message says why."""


@dataclass(frozen=True)
class EpisodeTrace:
    t_s: np.ndarray  # (T,)
    distance_m: np.ndarray  # (T,) after each step (NaN where not measured)
    actions: np.ndarray  # (T, act_dim)

    @property
    def final_distance(self) -> float:
        return float(self.distance_m[-1]) if len(self.distance_m) else math.nan


@dataclass(frozen=True)
class EpisodePair:
    episode: int
    goal: tuple[float, float, float]
    real: EpisodeTrace
    sim: EpisodeTrace | None

    def action_gap(self) -> np.ndarray:
        """Mean |a_arm - a_sim| over action dims at each step both ran (NaN-free; empty without a sim twin)."""
        if self.sim is None:
            return np.zeros(0)
        n = min(len(self.real.actions), len(self.sim.actions))
        return np.abs(self.real.actions[:n] - self.sim.actions[:n]).mean(axis=1)


def load_steps(path: str | Path) -> list[EpisodePair]:
    path = Path(path)
    try:
        with path.open(newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise ReportError(f"cannot read {path}: {error.strerror or error}") from None
    needed = {"episode", "source", "step", "t_s", "distance_m", "goal_x", "goal_y", "goal_z", "action_0"}
    if not rows or not needed <= set(rows[0]):
        raise ReportError(f"{path} is not a policy runner step log (needs the columns {sorted(needed)})")
    action_columns = sorted((c for c in rows[0] if c.startswith("action_")), key=lambda c: int(c.split("_")[1]))
    grouped: dict[tuple[int, str], list[dict[str, str]]] = {}
    for line, row in enumerate(rows, start=2):
        if row["source"] not in ("real", "sim"):
            raise ReportError(f"{path}:{line}: source {row['source']!r} is neither 'real' nor 'sim'")
        try:
            grouped.setdefault((int(row["episode"]), row["source"]), []).append(row)
        except ValueError:
            raise ReportError(f"{path}:{line}: episode {row['episode']!r} is not an integer") from None
    pairs = []
    for episode in sorted({e for e, _ in grouped}):
        real_rows = grouped.get((episode, "real"), [])
        if not real_rows:
            continue  # an episode aborted before its first command has nothing to compare
        first = real_rows[0]
        goal = (_float(first["goal_x"]), _float(first["goal_y"]), _float(first["goal_z"]))
        sim_rows = grouped.get((episode, "sim"))
        pairs.append(EpisodePair(episode, goal, _trace(real_rows, action_columns),
                                 _trace(sim_rows, action_columns) if sim_rows else None))
    return pairs


def _float(text: str) -> float:
    return float(text) if text != "" else math.nan


def _trace(rows: list[dict[str, str]], action_columns: list[str]) -> EpisodeTrace:
    rows = sorted(rows, key=lambda r: int(r["step"]))
    return EpisodeTrace(t_s=np.array([_float(r["t_s"]) for r in rows]),
                        distance_m=np.array([_float(r["distance_m"]) for r in rows]),
                        actions=np.array([[_float(r[c]) for c in action_columns] for r in rows]))


# ------------------------------------------------------------------------------------------------------ numbers
def episode_rows(pairs: Sequence[EpisodePair], threshold: float) -> list[dict[str, object]]:
    rows = []
    for pair in pairs:
        real, sim = pair.real.final_distance, pair.sim.final_distance if pair.sim else math.nan
        gap = pair.action_gap()
        rows.append({"episode": pair.episode, "goal": pair.goal, "real_steps": len(pair.real.t_s),
                     "real_final_distance_m": real, "sim_final_distance_m": sim,
                     "real_success": bool(real < threshold), "sim_success": bool(sim < threshold),
                     "mean_action_gap": float(gap.mean()) if gap.size else math.nan})
    return rows


def totals(rows: Sequence[dict[str, object]]) -> dict[str, float]:
    paired = [r for r in rows if not math.isnan(float(r["sim_final_distance_m"]))]  # type: ignore[arg-type]
    complete = [r for r in paired if not math.isnan(float(r["real_final_distance_m"]))]  # type: ignore[arg-type]
    real = np.array([r["real_final_distance_m"] for r in complete], dtype=float)
    sim = np.array([r["sim_final_distance_m"] for r in complete], dtype=float)
    return {"episodes": len(rows), "paired": len(paired), "complete": len(complete),
            "real_success": float(np.mean([r["real_success"] for r in complete])) if complete else math.nan,
            "sim_success": float(np.mean([r["sim_success"] for r in complete])) if complete else math.nan,
            "real_mean_m": float(real.mean()) if real.size else math.nan,
            "sim_mean_m": float(sim.mean()) if sim.size else math.nan,
            "median_gap_m": float(np.median(real - sim)) if real.size else math.nan}


# ------------------------------------------------------------------------------------------------------ figures
def _figures(pairs: Sequence[EpisodePair], threshold: float, out: Path) -> dict[str, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files: dict[str, Path] = {}
    shown = list(pairs[:MAX_PANELS])
    cols = min(4, max(1, len(shown)))
    rows = math.ceil(len(shown) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.4 * rows), squeeze=False, sharey=True)
    for ax, pair in zip(axes.flat, shown):
        ax.plot(pair.real.t_s, pair.real.distance_m, color="tab:red", label="arm")
        if pair.sim is not None:
            ax.plot(pair.sim.t_s, pair.sim.distance_m, color="tab:blue", linestyle="--", label="simulator")
        ax.axhline(threshold, color="0.5", linewidth=0.8, linestyle=":")
        ax.set_title(f"episode {pair.episode}", fontsize=9)
        ax.set_xlabel("time [s]", fontsize=8)
    for ax in list(axes.flat)[len(shown):]:
        ax.set_visible(False)
    axes[0][0].set_ylabel("distance [m]")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    files["distance_curves"] = _save(fig, out / "distance_curves.png")

    paired = [p for p in pairs if p.sim is not None]
    if paired:
        sim = np.array([p.sim.final_distance for p in paired])  # type: ignore[union-attr]
        real = np.array([p.real.final_distance for p in paired])
        fig, ax = plt.subplots(figsize=(4.0, 4.0))
        top = float(np.nanmax(np.concatenate([sim, real, [threshold * 2]]))) * 1.05
        ax.plot([0, top], [0, top], color="0.6", linewidth=0.8)
        ax.axvline(threshold, color="0.5", linestyle=":", linewidth=0.8)
        ax.axhline(threshold, color="0.5", linestyle=":", linewidth=0.8)
        ax.scatter(sim, real, color="tab:red", s=18)
        for p, x, y in zip(paired, sim, real):
            ax.annotate(str(p.episode), (x, y), fontsize=6, xytext=(2, 2), textcoords="offset points")
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_xlabel("simulator final distance [m]")
        ax.set_ylabel("arm final distance [m]")
        ax.set_title("same goals: arm vs simulator", fontsize=10)
        fig.tight_layout()
        files["final_distances"] = _save(fig, out / "final_distances.png")

        gaps = [p.action_gap() for p in paired]
        length = max(len(g) for g in gaps)
        padded = np.full((len(gaps), length), np.nan)
        for i, g in enumerate(gaps):
            padded[i, :len(g)] = g
        fig, ax = plt.subplots(figsize=(5.0, 2.8))
        ax.plot(np.arange(length), np.nanmean(padded, axis=0), color="tab:purple")
        ax.set_xlabel("step")
        ax.set_ylabel("mean |action arm - action sim|")
        ax.set_title("where the arm's episode leaves the simulator's", fontsize=10)
        fig.tight_layout()
        files["action_gap"] = _save(fig, out / "action_gap.png")
    return files


def _save(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ------------------------------------------------------------------------------------------------------ document
def build(steps_file: str | Path, out_dir: str | Path, threshold: float = SOLVED_DISTANCE) -> dict[str, Path]:
    from adr_core.report.summary import Block, Bullets, Heading, Image, Paragraph, Table, write_documents

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pairs = load_steps(steps_file)
    if not pairs:
        raise ReportError(f"{steps_file} holds no episode with at least one step on the arm")
    rows = episode_rows(pairs, threshold)
    total = totals(rows)
    with (out / "real_vs_sim.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, "goal": " ".join(f"{v:.4f}" for v in row["goal"])})  # type: ignore[attr-defined]
    figures = _figures(pairs, threshold, out)

    def m(value: object) -> str:
        return "–" if isinstance(value, float) and math.isnan(value) else f"{value:.4f}"  # type: ignore[str-format]

    blocks: list[Block] = [
        Heading(1, "Arm vs simulator, same goals"),
        Paragraph(f"Steps file: {Path(steps_file).resolve()}. Success: final distance < {threshold:g} m. The "
                  f"simulator's episode is the reference simulator's evaluation episode at the same goal and start "
                  f"(random goals); clicked-goal episodes have no twin."),
        Bullets([f"{total['episodes']} episode(s) on the arm, {total['paired']} with a simulated twin, "
                 f"{total['complete']} of those complete (a final distance on the arm)",
                 f"success: arm {_share(total['real_success'])}, simulator {_share(total['sim_success'])}",
                 f"mean final distance: arm {m(total['real_mean_m'])} m, simulator {m(total['sim_mean_m'])} m; "
                 f"median (arm − simulator) {m(total['median_gap_m'])} m"]),
        Table(["episode", "goal [m]", "steps on the arm", "arm final [m]", "sim final [m]", "arm", "sim",
               "mean action gap"],
              [[str(r["episode"]), " ".join(f"{v:.3f}" for v in r["goal"]),  # type: ignore[attr-defined]
                str(r["real_steps"]), m(r["real_final_distance_m"]), m(r["sim_final_distance_m"]),
                "✓" if r["real_success"] else "✗", "✓" if r["sim_success"] else "✗",
                m(r["mean_action_gap"])] for r in rows]),
    ]
    captions = {"distance_curves": "Task distance after each step: arm (solid) vs simulator (dashed); dotted: the "
                                   "success threshold.",
                "final_distances": "Final distance goal by goal; points above the diagonal did worse on the arm.",
                "action_gap": "Mean absolute difference of the actions at each step (the states drift apart, so "
                              "the gap grows where the arm's dynamics differ)."}
    for name, path in figures.items():
        blocks.append(Image(path.name, captions[name], name))
    markdown, page = write_documents(blocks, out, "Arm vs simulator", stem="real_vs_sim")
    return {"markdown": markdown, "html": page, "csv": out / "real_vs_sim.csv", **figures}


def _share(value: float) -> str:
    return "–" if math.isnan(value) else f"{100 * value:.0f} %"


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="adr-deploy-report", description=__doc__.split("\n\n")[0],
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("steps_file", nargs="?", type=existing_file("steps CSV"),
                        help="the policy runner's steps CSV (steps_file:=, or <results>_steps.csv)")
    parser.add_argument("--transfer", metavar="DIR", type=existing_dir("transfer results folder"),
                        help="instead: <DIR>/<setting>/<method>_seed<k>.jsonl results files -> final distance per "
                             "method and setting")
    parser.add_argument("--out", required=True, type=output_dir(), help="folder for the documents, CSV and figures")
    parser.add_argument("--threshold", type=positive_number("metres"), default=SOLVED_DISTANCE,
                        help=f"success threshold [m] (default {SOLVED_DISTANCE:g}, both Ergo tasks)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if (args.steps_file is None) == (args.transfer is None):
        parser.error("give either a steps file or --transfer DIR")
    from .transfer_report import TransferError
    from .transfer_report import build as build_transfer

    try:
        files = (build(args.steps_file, args.out, args.threshold) if args.transfer is None
                 else build_transfer(args.transfer, args.out, args.threshold))
    except (ReportError, TransferError) as error:
        print(f"adr-deploy-report: {error}", file=sys.stderr)
        return 2
    print(f"adr-deploy-report: {files['markdown']} and {files['html']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
