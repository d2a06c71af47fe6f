"""The probe's files, written the same way by the in-process ``Probe`` and by the node graph's ``mode:=probe``.

    recorder = ProbeRecorder(out_dir, space, config, options)
    recorder.write_failure_map(failure_map, region)
    recorder.record(result)               # one IterationResult per iteration (agent fields unused)
    focus = recorder.finish(seconds)      # focus.json, top_proposals.json, probe.png

Files: ``probe_config.yaml``, ``failure_map.csv``, ``proposals.csv`` (every proposal: iteration, slot, normalized
and physical values, discriminator reward, the episode's return, outcome and length, whether it lies in the failure
region), ``iterations.csv`` (share in the failure region, reward, discriminator and particle statistics, seconds),
``focus.json``, ``top_proposals.json`` and ``probe.png`` (figure.py).
"""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..iteration import IterationResult
from ..randomization import RandomizationSpace
from ..training.config import TrainConfig
from .failure import LEARNABLE, FailureMap, FailureRegion, learnable_region
from .focus import focus_statistics

ITERATION_COLUMNS = ("iteration", "share_in_failure_region", "reward_mean", "reward_std", "d_randomized",
                     "d_reference", "discriminator_loss", "svpg_bandwidth", "svpg_kernel_mean", "svpg_log_std",
                     "return_mean", "solved_fraction", "time_iteration_s", "share_in_learnable_region")


def _num(value: Any) -> str:
    return repr(float(value))


class ProbeRecorder:
    def __init__(self, out_dir: str | Path, space: RandomizationSpace, config: TrainConfig,
                 options: dict[str, Any]) -> None:
        self.out_dir, self.space, self.config = Path(out_dir), space, config
        self.out_dir.mkdir(parents=True, exist_ok=True)
        (self.out_dir / "probe_config.yaml").write_text(
            yaml.safe_dump({"config": config.to_dict(), "probe": options}, sort_keys=False))
        self.region: FailureRegion | None = None
        self.learnable: FailureRegion | None = None
        self.shares: list[float] = []
        self.learnable_shares: list[float] = []
        self._files: dict[str, tuple[Any, Any]] = {}

    def write_failure_map(self, failure_map: FailureMap, region: FailureRegion) -> None:
        self.region = region
        self.learnable = learnable_region(failure_map)
        with (self.out_dir / "failure_map.csv").open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["dimension", "u", "value", "solved_fraction", "return_mean", "final_distance_mean"])
            solved, returns, distances = (failure_map.solved_fraction(), failure_map.mean_return(),
                                          failure_map.mean_final_distance())
            for i, (u, x) in enumerate(zip(failure_map.normalized, failure_map.physical)):
                d = int(failure_map.swept[i])
                writer.writerow([self.space.names[d], _num(u[d]), _num(x[d]), _num(solved[i]), _num(returns[i]),
                                 _num(distances[i])])

    def record(self, step: IterationResult) -> float:
        """Append one iteration; returns its share of proposals in the failure region."""
        if self.region is None:
            raise RuntimeError("write_failure_map first: the share needs the failure region")
        if not self._files:
            self._open()
        inside = self.region.contains(step.proposals)
        share = float(inside.mean())
        self.shares.append(share)
        assert self.learnable is not None
        learnable = self.learnable.contains(step.proposals)
        self.learnable_shares.append(float(learnable.mean()))
        rewards = step.rewards if step.rewards is not None else np.full(len(step.proposals), np.nan)
        _, proposals = self._files["proposals"]
        for trajectory in sorted(step.randomized, key=lambda t: t.slot):
            slot = trajectory.slot
            proposals.writerow([step.iteration, slot, *(_num(v) for v in step.proposals[slot]),
                                *(_num(v) for v in step.parameters[slot]), _num(rewards[slot]),
                                _num(trajectory.episode_return), int(trajectory.solved), trajectory.length,
                                int(inside[slot]), int(learnable[slot])])
        m = step.metrics()
        _, iterations = self._files["iterations"]
        iterations.writerow([step.iteration, share, *(_num(m.get(k, float("nan"))) for k in ITERATION_COLUMNS[2:-1]),
                             _num(self.learnable_shares[-1])])
        for handle, _ in self._files.values():
            handle.flush()
        return share

    def finish(self, seconds: float, seed: int) -> dict[str, Any]:
        """focus.json, top_proposals.json and probe.png; returns the focus statistics."""
        from .figure import probe_figure, top_proposals

        for handle, _ in self._files.values():
            handle.close()
        self._files = {}
        assert self.region is not None
        assert self.learnable is not None
        focus = {**focus_statistics(self.shares, self.region.uniform_share), "region": self.region.to_dict(),
                 "region_described": self.region.describe(self.space), "probe_seconds": seconds, "seed": seed,
                 "sampler": self.config.sampler,
                 # the same statistics for the region the policy solves 20-80 % of (where it can learn)
                 "learnable": {**focus_statistics(self.learnable_shares, self.learnable.uniform_share),
                               "band": list(LEARNABLE), "region": self.learnable.to_dict(),
                               "region_described": self.learnable.describe(self.space)}}
        (self.out_dir / "focus.json").write_text(json.dumps(focus, indent=1))
        if self.shares:
            (self.out_dir / "top_proposals.json").write_text(
                json.dumps(top_proposals(self.out_dir, list(self.space.names)), indent=1))
            probe_figure(self.out_dir)
        return focus

    def _open(self) -> None:
        names = self.space.names
        columns = {"proposals": ["iteration", "slot", *(f"u_{n}" for n in names), *names, "reward",
                                 "episode_return", "solved", "length", "in_failure_region", "in_learnable_region"],
                   "iterations": list(ITERATION_COLUMNS)}
        for name, header in columns.items():
            handle = (self.out_dir / f"{name}.csv").open("w", newline="")
            writer = csv.writer(handle)
            writer.writerow(header)
            self._files[name] = (handle, writer)
