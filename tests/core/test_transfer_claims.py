"""The transfer claim's paired rule (experiments/transfer_claims.py) on deployed-episode files written by hand."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments import transfer_claims as tc


def write(root: Path, setting: str, method: str, seed: int, distances: list[float | None]) -> None:
    folder = root / setting
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"episode": i + 1, "final_distance": d, "success": d is not None and d < 0.025,
                         "aborted": "lost the arm's feedback" if d is None else None})
             for i, d in enumerate(distances)]
    (folder / f"{method}_seed{seed}.jsonl").write_text("\n".join(lines) + "\n")


def fill(root: Path, setting: str, adr: list[float], udr: list[float]) -> None:
    for seed, (a, u) in enumerate(zip(adr, udr), start=230):
        write(root, setting, "adr", seed, [a - 0.002, a + 0.002])
        write(root, setting, "udr", seed, [u - 0.002, u + 0.002])


def test_adr_clearly_closer_on_both_puck_settings_reproduces_the_claim(tmp_path: Path) -> None:
    fill(tmp_path, "reference", [0.02, 0.021, 0.019, 0.02, 0.022], [0.021, 0.019, 0.02, 0.022, 0.02])
    fill(tmp_path, "slippery", [0.02, 0.022, 0.019, 0.021, 0.02], [0.04, 0.05, 0.045, 0.038, 0.052])
    fill(tmp_path, "rough", [0.03, 0.028, 0.031, 0.027, 0.03], [0.05, 0.047, 0.06, 0.044, 0.049])
    assert tc.main([str(tmp_path), "--out", str(tmp_path / "report")]) == 0
    result = json.loads((tmp_path / "report" / "transfer_claims.json").read_text())
    decisions = {d["setting"]: d for d in result["settings"]}
    assert decisions["slippery"]["decision"] == tc.ADR_BETTER and decisions["rough"]["decision"] == tc.ADR_BETTER
    assert decisions["reference"]["decision"] == tc.NO_DIFFERENCE
    assert decisions["slippery"]["seeds"] == [230, 231, 232, 233, 234]
    assert decisions["slippery"]["mean_difference"] == pytest.approx(0.0246, abs=1e-6)
    assert result["verdict"] == "reproduced"
    assert "**reproduced**" in (tmp_path / "report" / "transfer_claims.md").read_text()


def test_udr_closer_is_said_and_the_claim_is_not_reproduced(tmp_path: Path) -> None:
    fill(tmp_path, "slippery", [0.04, 0.05, 0.045, 0.038, 0.052], [0.02, 0.022, 0.019, 0.021, 0.02])
    fill(tmp_path, "rough", [0.02, 0.03, 0.025, 0.02, 0.03], [0.03, 0.02, 0.025, 0.03, 0.02])
    episodes = tc.load(tmp_path)
    assert tc.decide_setting("slippery", episodes).decision == tc.UDR_BETTER
    assert tc.decide_setting("rough", episodes).decision == tc.NO_DIFFERENCE
    decisions = [tc.decide_setting(s, episodes) for s in ("slippery", "rough")]
    assert tc.claim_verdict(decisions, ["slippery", "rough"]) == "not reproduced"


def test_only_seeds_deployed_with_both_methods_pair_and_one_pair_is_inconclusive(tmp_path: Path) -> None:
    write(tmp_path, "slippery", "adr", 230, [0.02, 0.02])
    write(tmp_path, "slippery", "adr", 231, [0.02, 0.03])
    write(tmp_path, "slippery", "udr", 231, [0.05, 0.05])
    write(tmp_path, "slippery", "udr", 232, [0.05, 0.05])
    decision = tc.decide_setting("slippery", tc.load(tmp_path))
    assert decision.seeds == [231] and decision.decision == tc.INCONCLUSIVE
    assert tc.claim_verdict([decision], ["slippery", "rough"]).startswith("inconclusive (no episodes at rough")


def test_aborted_episodes_are_left_out_of_the_mean_counted_unsolved_and_reported(tmp_path: Path) -> None:
    for seed in (230, 231, 232):
        write(tmp_path, "rough", "adr", seed, [0.01, None, 0.01, 0.01])
        write(tmp_path, "rough", "udr", seed, [0.03 + 0.001 * (seed - 230)] * 4)
    decision = tc.decide_setting("rough", tc.load(tmp_path))
    assert decision.aborted == 3
    assert decision.adr_mean_distance == pytest.approx([0.01, 0.01, 0.01])
    assert decision.adr_solved == pytest.approx([0.75, 0.75, 0.75])
    assert decision.decision == tc.ADR_BETTER


def test_a_folder_without_episodes_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert tc.main([str(tmp_path)]) == 2
    assert "holds no <setting>/<method>_seed<k>.jsonl" in capsys.readouterr().err
