"""The paper's real-robot figure from deployed episodes: final distance per method and arm setting.

    adr-deploy-report --transfer runs/transfer --out runs/transfer/report

Layout read (what ``experiments/standin_transfer.py`` writes; any deployment can be filed the same way): one policy
runner ``results_file`` per policy and setting, ``<root>/<setting>/<method>_seed<k>.jsonl`` (one episode summary per
line, ``docs/deploy_real.md``). Writes ``transfer.md``/``.html``, ``transfer.csv`` (one row per episode) and
``transfer.png``: box plots of the final distance per setting and method, as the paper's Figure 9 (5 policies x 25
goals per method and setting there). An aborted episode has no final distance; it counts as a failure in the solved
share and is listed, not averaged.
"""
from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

NAME = re.compile(r"^(?P<method>[A-Za-z0-9-]+)_seed(?P<seed>\d+)\.jsonl$")


class TransferError(ValueError):
    """The folder does not hold deployed episodes in the layout above; the message says why."""


@dataclass(frozen=True)
class Episode:
    setting: str
    method: str
    seed: int
    episode: int
    final_distance: float  # NaN when aborted
    success: bool
    simulated_final_distance: float
    aborted: str


def load(root: str | Path) -> list[Episode]:
    root = Path(root)
    files = sorted(root.glob("*/*.jsonl"))
    if not files:
        raise TransferError(f"{root} holds no <setting>/<method>_seed<k>.jsonl results file")
    episodes = []
    for path in files:
        match = NAME.match(path.name)
        if match is None:
            raise TransferError(f"{path}: expected a name <method>_seed<k>.jsonl (e.g. adr_seed200.jsonl)")
        for line_number, line in enumerate(path.read_text().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                summary = json.loads(line)
                final = summary.get("final_distance")
                simulated = summary.get("simulated_final_distance")
                episodes.append(Episode(path.parent.name, match["method"].upper(), int(match["seed"]),
                                        int(summary["episode"]), math.nan if final is None else float(final),
                                        bool(summary.get("success")),
                                        math.nan if simulated is None else float(simulated),
                                        str(summary.get("aborted") or "")))
            except (ValueError, KeyError, TypeError) as error:
                raise TransferError(f"{path}:{line_number}: not an episode summary ({error})") from None
    return episodes


def groups(episodes: Sequence[Episode]) -> dict[tuple[str, str], list[Episode]]:
    out: dict[tuple[str, str], list[Episode]] = {}
    for e in episodes:
        out.setdefault((e.setting, e.method), []).append(e)
    return out


def row(key: tuple[str, str], group: Sequence[Episode]) -> list[str]:
    distances = np.array([e.final_distance for e in group if not math.isnan(e.final_distance)])
    seeds = sorted({e.seed for e in group})
    per_policy = [np.nanmean([e.final_distance for e in group if e.seed == s]) for s in seeds]
    simulated = np.array([e.simulated_final_distance for e in group if not math.isnan(e.simulated_final_distance)])
    return [key[0], key[1], str(len(seeds)), f"{len(group)} ({sum(bool(e.aborted) for e in group)} aborted)",
            f"{distances.mean():.4f} ± {distances.std():.4f}" if distances.size else "–",
            f"{np.median(distances):.4f}" if distances.size else "–",
            f"{100 * np.mean([e.success for e in group]):.0f} %",
            ", ".join(f"s{s}: {m:.3f}" for s, m in zip(seeds, per_policy)),
            f"{simulated.mean():.4f}" if simulated.size else "–"]


def figure(episodes: Sequence[Episode], threshold: float, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    settings = list(dict.fromkeys(e.setting for e in episodes))
    methods = sorted({e.method for e in episodes})
    colors = {"ADR": "tab:red", "UDR": "tab:blue"}
    width = 0.8 / len(methods)
    fig, ax = plt.subplots(figsize=(2.2 + 1.6 * len(settings) * len(methods) / 2, 3.6))
    for j, method in enumerate(methods):
        data = [[e.final_distance for e in episodes if e.setting == s and e.method == method
                 and not math.isnan(e.final_distance)] for s in settings]
        positions = [i + (j - (len(methods) - 1) / 2) * width for i in range(len(settings))]
        parts = ax.boxplot([d or [math.nan] for d in data], positions=positions, widths=width * 0.9,
                           patch_artist=True, showfliers=True)
        for box in parts["boxes"]:
            box.set_facecolor(colors.get(method, f"C{j + 2}"))
            box.set_alpha(0.6)
        ax.plot([], [], color=colors.get(method, f"C{j + 2}"), linewidth=6, alpha=0.6, label=method)
    ax.axhline(threshold, color="0.4", linestyle=":", linewidth=0.9, label=f"solved < {threshold:g} m")
    ax.set_xticks(range(len(settings)), settings)
    ax.set_ylabel("final distance [m]")
    ax.set_title("zero-shot transfer: final distance per setting", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def build(root: str | Path, out_dir: str | Path, threshold: float) -> dict[str, Path]:
    from adr_core.report.summary import Block, Heading, Image, Paragraph, Table, write_documents

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    episodes = load(root)
    with (out / "transfer.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["setting", "method", "seed", "episode", "final_distance", "success",
                         "simulated_final_distance", "aborted"])
        for e in episodes:
            writer.writerow([e.setting, e.method, e.seed, e.episode, e.final_distance, e.success,
                             e.simulated_final_distance, e.aborted])
    table = Table(["setting", "method", "policies", "episodes", "final distance [m], mean ± std", "median",
                   f"solved (< {threshold:g} m)", "mean per policy", "simulator, same goals"],
                  [row(key, group) for key, group in groups(episodes).items()])
    png = figure(episodes, threshold, out / "transfer.png")
    blocks: list[Block] = [Heading(1, "Zero-shot transfer: final distance per method and setting"),
              Paragraph(f"Episodes from {Path(root)}: every policy runs the same goals in every setting. "
                        "'simulator, same goals': the reference simulator's episode at each goal."),
              table, Image(png.name, "Final distance per setting and method (box: quartiles; whiskers: 1.5 IQR; "
                                     "dotted: the solved threshold).", "transfer")]
    markdown, page = write_documents(blocks, out, "Zero-shot transfer", stem="transfer")
    return {"markdown": markdown, "html": page, "csv": out / "transfer.csv", "figure": png}
