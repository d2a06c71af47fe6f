"""The verdict of the "ADR for any learner" benchmark (experiments/sb3_adr_vs_udr.py) on synthetic records whose
answer is known."""
from __future__ import annotations

from experiments.sb3_adr_vs_udr import verdict

ENGINES = [8.0 + i for i in range(13)]


def record(sampler: str, seed: int, hard: float, landed_s: float | None) -> dict:
    sweep = [{"dimension": "main_engine_power", "value": e, "solved": hard if e <= 11 else 0.9} for e in ENGINES]
    return {"sampler": sampler, "seed": seed, "sweep": sweep, "agent_steps": 1, "train_s": 720.0,
            "landed": None if landed_s is None else {"train_s": landed_s}, "final_return_mean": 0.0,
            "final_solved": 0.5}


def runs(adr: list[tuple[float, float | None]], udr: list[tuple[float, float | None]]) -> dict:
    return {"adr": {400 + i: record("adr", 400 + i, h, t) for i, (h, t) in enumerate(adr)},
            "udr": {400 + i: record("udr", 400 + i, h, t) for i, (h, t) in enumerate(udr)}}


def test_adr_helps_only_when_faster_and_clearly_better_on_the_hard_engines() -> None:
    text, lines = verdict(runs([(0.6, 300), (0.7, 350), (0.65, 400)], [(0.3, 500), (0.35, None), (0.3, 600)]))
    assert text.startswith("ADR helps") and len(lines) == 2 + 6
    text, _ = verdict(runs([(0.6, 700), (0.7, 700), (0.65, 700)], [(0.3, 500), (0.35, 500), (0.3, 500)]))
    assert text.startswith("no difference measured")  # better on hard but slower: not both


def test_noisy_differences_and_runs_that_never_land_give_no_difference() -> None:
    text, _ = verdict(runs([(0.9, None), (0.1, None), (0.5, None)], [(0.5, None), (0.5, None), (0.5, None)]))
    assert text.startswith("no difference measured") and "inf" in text  # nobody landed within the cap
    text, _ = verdict(runs([(0.2, 600), (0.25, 650), (0.2, 700)], [(0.6, 300), (0.7, 300), (0.6, 350)]))
    assert text.startswith("ADR hurts")
