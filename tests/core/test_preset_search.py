"""experiments/preset_search.py --run-dirs: a search run keeps its final policy, and keeping it changes nothing."""
from __future__ import annotations

import json
from pathlib import Path

import yaml
from tiny_configs import tiny_config

from adr_core.evaluation.policies import load_policy
from experiments import preset_search


def test_a_kept_run_holds_the_final_policy_and_learns_the_same(tmp_path: Path) -> None:
    base = tmp_path / "tiny.yaml"
    tiny_config().to_yaml(base)
    variants = tmp_path / "variants.yaml"
    variants.write_text(yaml.safe_dump({"variants": {"tiny": {"description": "tiny", "base": str(base),
                                                               "set": {"total_agent_steps": 800}}}}))
    common = ["--variants-file", str(variants), "--variants", "tiny", "--seeds", "3", "--eval-every", "400",
              "--eval-episodes", "1", "--final-episodes", "2", "--parallel", "1"]
    assert preset_search.main([*common, "--out", str(tmp_path / "plain.jsonl")]) == 0
    (tmp_path / "kept" / "tiny_s3").mkdir(parents=True)  # an unfinished attempt's folder: started over
    (tmp_path / "kept" / "tiny_s3" / "stale.txt").write_text("x")
    assert preset_search.main([*common, "--out", str(tmp_path / "kept.jsonl"), "--run-dirs",
                               str(tmp_path / "kept")]) == 0
    plain, kept = (json.loads((tmp_path / f"{name}.jsonl").read_text()) for name in ("plain", "kept"))
    for key in ("agent_steps", "final_return_mean", "final_solved", "updates"):
        assert plain[key] == kept[key], key
    assert [p["return_mean"] for p in plain["curve"]] == [p["return_mean"] for p in kept["curve"]]
    run = tmp_path / "kept" / "tiny_s3"
    assert not (run / "stale.txt").exists()
    policy = load_policy(run)
    assert policy.env_id == "adr/LunarLander-v0" and policy.agent_steps == kept["agent_steps"]
