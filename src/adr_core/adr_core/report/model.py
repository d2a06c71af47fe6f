"""What a report is made of, shared by the report's builder (report.py) and its page (report_page.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from matplotlib.figure import Figure

from ..evaluation.grids import GridKind
from ..evaluation.solved import SolvedCriterion
from ..randomization import RandomizationSpace
from .curves import Curve
from .degenerate import DegenerateRegion
from .evaluations import EvaluationOptions, RunEvaluation
from .run_data import RunData


@dataclass(frozen=True)
class ReportOptions:
    evaluation: EvaluationOptions = EvaluationOptions()
    grid_kind: GridKind | None = None  # None: 2-D grid for 2-D spaces, per-dimension sweeps otherwise
    points: int | None = None  # per dimension; None: 13 (per-dimension) or 9 (2-D grid)
    stages: int = 4  # training stages of the sampling histograms
    bins: int = 20  # bins of the sampling histograms
    flag_bins: int = 10  # bins per dimension of the degenerate-range check
    concentration: float = 1.5  # sampling share / uniform share that counts as "concentrated"
    formats: tuple[str, ...] = ("png", "svg")


@dataclass
class EnvReport:
    env_id: str
    space: RandomizationSpace
    criterion: SolvedCriterion
    evaluations: list[RunEvaluation]
    curves: dict[str, list[Curve]]
    training: dict[str, list[Curve]]
    flags: dict[str, list[DegenerateRegion] | None]  # None: the check does not apply (nothing solved)
    figures: dict[str, Figure] = field(default_factory=dict)
    captions: dict[str, str] = field(default_factory=dict)
    files: dict[str, list[Path]] = field(default_factory=dict)
    space_name: str | None = None  # the runs' ``space:`` when not the env's packaged one

    @property
    def title(self) -> str:
        return self.env_id if self.space_name is None else f"{self.env_id} (space {self.space_name})"

    @property
    def runs(self) -> list[RunData]:
        return [e.run for e in self.evaluations]

    @property
    def short_name(self) -> str:
        short = self.env_id.split("/")[-1].split("-")[0].lower()
        if self.space_name is None:
            return short
        variant = Path(self.space_name).stem.split("-")[-1]
        return f"{short}_{''.join(c if c.isalnum() else '_' for c in variant.lower())}"
