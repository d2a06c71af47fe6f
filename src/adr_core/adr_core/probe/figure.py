"""The probe's figure: where the sampler proposed, over iterations, beside where the policy fails.

One row per randomized dimension (LunarLander: one). Left: the share of proposals per bin of that dimension in each
window of iterations (the marginal density over time; dotted outline: the failure region). Right, on the same
vertical axis: the frozen policy's solved fraction along that dimension (others at default) from the failure map,
failing cells shaded. A title line gives the focus ratios. ``top_proposals`` lists the settings with the highest
discriminator reward in the second half with the episode each one produced.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np


def read_csv(path: Path) -> dict[str, np.ndarray]:
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return {key: np.array([r[key] for r in rows]) for key in (rows[0] if rows else {})}


def top_proposals(out_dir: Path, names: list[str], k: int = 10) -> list[dict[str, Any]]:
    data = read_csv(out_dir / "proposals.csv")
    iterations = data["iteration"].astype(int)
    late = iterations >= (iterations.max() + 1) // 2
    reward = data["reward"].astype(float)
    order = [i for i in np.argsort(-np.where(late, reward, -np.inf)) if late[i]][:k]
    return [{"iteration": int(iterations[i]), **{n: float(data[n][i]) for n in names}, "reward": float(reward[i]),
             "episode_return": float(data["episode_return"][i]), "solved": bool(int(data["solved"][i])),
             "in_failure_region": bool(int(data["in_failure_region"][i]))} for i in order]


def probe_figure(out_dir: str | Path, windows: int = 20, bins: int = 24) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import yaml

    from ..randomization import space_of

    out_dir = Path(out_dir)
    focus = json.loads((out_dir / "focus.json").read_text())
    config = yaml.safe_load((out_dir / "probe_config.yaml").read_text())["config"]
    space = space_of(config["env_id"], config.get("space"))
    proposals, failure = read_csv(out_dir / "proposals.csv"), read_csv(out_dir / "failure_map.csv")
    names = focus["region"]["names"]
    intervals = focus["region"]["intervals"]
    iterations = proposals["iteration"].astype(int)
    n_iter = int(iterations.max()) + 1
    edges_t = np.linspace(0, n_iter, min(windows, n_iter) + 1)
    rows = len(names)
    fig, axes = plt.subplots(rows, 2, figsize=(11, 2.6 + 1.9 * rows), squeeze=False,
                             gridspec_kw={"width_ratios": [3, 1.2]})
    for d, name in enumerate(names):
        u = proposals[f"u_{name}"].astype(float)
        hist, _, _ = np.histogram2d(iterations, u, bins=[edges_t, np.linspace(0, 1, bins + 1)])
        share = hist / np.maximum(hist.sum(axis=1, keepdims=True), 1)
        ax = axes[d][0]
        image = ax.imshow(share.T * bins, origin="lower", aspect="auto", extent=(0, n_iter, 0, 1), cmap="viridis",
                          vmin=0, vmax=max(3.0, float(np.nanmax(share * bins))))
        for low, high in intervals[d]:
            ax.axhspan(low, high, fill=False, ls=":", lw=1.5, ec="w")
        ticks = np.linspace(0, 1, 5)
        points = np.tile(space.reference_normalized(), (len(ticks), 1))
        points[:, d] = ticks
        ax.set_yticks(ticks)
        ax.set_yticklabels([f"{v:.3g}" for v in space.from_normalized(points)[:, d]])
        ax.set_ylabel(name)
        ax.set_xlabel("iteration")
        fig.colorbar(image, ax=ax, label="proposal density / uniform", pad=0.01)
        fm = failure["dimension"] == name
        ux, solved = failure["u"][fm].astype(float), failure["solved_fraction"][fm].astype(float)
        right = axes[d][1]
        right.plot(solved, ux, "o-", color="tab:red")
        for low, high in intervals[d]:
            right.axhspan(low, high, color="tab:red", alpha=0.15)
        right.set_ylim(0, 1)
        right.set_xlim(-0.05, 1.05)
        right.set_xlabel("solved fraction (frozen policy)")
        right.set_yticks(ticks)
        right.set_yticklabels([])
    fig.suptitle(f"ADR probe ({focus['sampler']}, seed {focus['seed']}): failure region {focus['region_described']}"
                 f"\nshare in it / uniform: first half {focus['ratio_first_half']:.2f}, second half "
                 f"{focus['ratio_second_half']:.2f}, last quarter {focus['ratio_last_quarter']:.2f} "
                 f"(uniform share {focus['uniform_share']:.2f})", fontsize=9)
    fig.tight_layout()
    path = out_dir / "probe.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
