"""Episode summaries appended to a JSON-lines file (one object per line), so an evaluation on the arm is kept."""
from __future__ import annotations

from pathlib import Path

from .errors import DeployError
from .summary import EpisodeSummary


def steps_file_beside(results: Path) -> Path:
    """``results.jsonl`` -> ``results_steps.csv`` (the per-step log's default place)."""
    return results.with_name(f"{results.stem}_steps.csv")


class ResultsFile:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser().resolve()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.open("a").close()
        except OSError as error:
            raise DeployError(f"cannot write the results file {self.path}: {error.strerror or error}") from None

    def append(self, summary: EpisodeSummary) -> None:
        with self.path.open("a") as handle:
            handle.write(summary.to_json() + "\n")
