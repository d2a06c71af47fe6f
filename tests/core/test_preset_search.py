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


def test_a_run_in_a_space_of_its_own_is_scored_in_that_space(tmp_path: Path) -> None:
    """A variant that names a space (an identified arm, say) and an episode length is scored at that space's
    reference and that length, as the product evaluates the kept policy; not at the env's packaged reference."""
    import torch

    from adr_core.evaluation.settings import evaluate

    space = yaml.safe_load((Path(__file__).parents[2] / "src/adr_core/adr_core/config/spaces/LunarLander-v0.yaml")
                           .read_text())
    space["dimensions"][0].update(default=6.0, train={"absolute": [5.0, 7.0]})  # a weak engine as the reference
    (tmp_path / "weak.yaml").write_text(yaml.safe_dump(space))
    base = tmp_path / "tiny.yaml"
    tiny_config().to_yaml(base)
    variants = tmp_path / "variants.yaml"
    variants.write_text(yaml.safe_dump({"variants": {"weak": {"description": "weak engine", "base": str(base), "set": {
        "total_agent_steps": 400, "space": str(tmp_path / "weak.yaml"), "max_episode_steps": 60}}}}))
    assert preset_search.main(["--variants-file", str(variants), "--variants", "weak", "--seeds", "3",
                               "--eval-every", "400", "--eval-episodes", "1", "--final-episodes", "3", "--parallel",
                               "1", "--out", str(tmp_path / "weak.jsonl"), "--run-dirs", str(tmp_path / "kept")]) == 0
    row = json.loads((tmp_path / "weak.jsonl").read_text())
    policy = load_policy(tmp_path / "kept" / "weak_s3")
    own = evaluate(policy, policy.env_id, ["reference"], 3, (1,))["reference"].summary()  # its space, its length
    weights = {name: torch.from_numpy(value) for name, value in policy.numpy_weights().items()}
    packaged = evaluate(weights, policy.env_id, ["reference"], 3, (1,))["reference"].summary()  # the old scoring
    assert row["final_return_mean"] == round(own["return_mean"], 2)
    assert row["final_return_mean"] != round(packaged["return_mean"], 2)
