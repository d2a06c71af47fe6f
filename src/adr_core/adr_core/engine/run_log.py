"""Run outputs: metrics.csv (one row per iteration), sampled_parameters.csv, TensorBoard scalars.

On resume, rows of iterations at or after the resumed iteration are dropped first, so a run that
crashed after its last checkpoint leaves no duplicate rows. A file written by an older version with fewer columns
gets the new ones (empty in its old rows); one with columns this version does not write is refused.
"""
from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

if TYPE_CHECKING:
    import _csv

METRICS_FILE = "metrics.csv"
SAMPLES_FILE = "sampled_parameters.csv"


def _truncate_csv(path: Path, first_dropped_iteration: int) -> None:
    if not path.is_file():
        return
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        return
    header, body = rows[0], rows[1:]
    column = header.index("iteration")
    kept = [r for r in body if r and int(r[column]) < first_dropped_iteration]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(kept)


def _add_columns(path: Path, columns: list[str]) -> None:
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, columns, restval="")
        writer.writeheader()
        writer.writerows(rows)


def _format(value: Any) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    return str(value)


class RunLog:
    def __init__(self, out_dir: Path, metric_columns: Sequence[str], parameter_names: Sequence[str], *,
                 tensorboard: bool, start_iteration: int = 0) -> None:
        self.out_dir = Path(out_dir)
        self.metric_columns = list(metric_columns)
        self.sample_columns = (["iteration", "slot"] + [f"u_{n}" for n in parameter_names] + list(parameter_names))
        self.metrics_path, self.samples_path = self.out_dir / METRICS_FILE, self.out_dir / SAMPLES_FILE
        for path in (self.metrics_path, self.samples_path):
            _truncate_csv(path, start_iteration)
        self._metrics = self._open(self.metrics_path, self.metric_columns)
        self._samples = self._open(self.samples_path, self.sample_columns)
        self._writer = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter  # imported lazily: slow import
            self._writer = SummaryWriter(str(self.out_dir / "tb"), purge_step=start_iteration)

    @staticmethod
    def _open(path: Path, columns: list[str]) -> tuple[TextIO, _csv.Writer]:
        fresh = not path.is_file() or path.stat().st_size == 0
        if not fresh:
            with path.open(newline="") as handle:
                existing = next(csv.reader(handle), [])
            if existing != columns:
                if not set(existing) <= set(columns):
                    raise ValueError(f"{path} has columns {existing}, this run writes {columns}")
                _add_columns(path, columns)  # a run from an older version: its rows kept, new columns empty
        handle = path.open("a", newline="")
        writer = csv.writer(handle)
        if fresh:
            writer.writerow(columns)
        return handle, writer

    def log_iteration(self, metrics: Mapping[str, Any]) -> None:
        handle, writer = self._metrics
        writer.writerow([_format(metrics.get(c, float("nan"))) for c in self.metric_columns])
        handle.flush()
        if self._writer is not None:
            step = int(metrics["iteration"])
            for key, value in metrics.items():
                if key != "iteration" and isinstance(value, (int, float)) and not math.isnan(value):
                    self._writer.add_scalar(key, value, step)

    def log_samples(self, iteration: int, normalized: np.ndarray, physical: np.ndarray) -> None:
        handle, writer = self._samples
        for slot, (u, x) in enumerate(zip(normalized, physical)):
            writer.writerow([iteration, slot, *map(repr, map(float, u)), *map(repr, map(float, x))])
        handle.flush()
        if self._writer is not None:
            for d, name in enumerate(self.sample_columns[2 + len(normalized[0]):]):
                self._writer.add_histogram(f"sampled/{name}", physical[:, d], iteration)

    def close(self) -> None:
        for handle, _ in (self._metrics, self._samples):
            handle.close()
        if self._writer is not None:
            self._writer.close()
