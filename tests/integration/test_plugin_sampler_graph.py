"""A sampler registered by its own module (tests/toy_sampler) runs as the node graph, every node importing the module
named in the config's ``sampler_modules``, and the graph reproduces the in-process trainer with it (issue 44); the
learnability and ALP-GMM samplers (task scores from the trainer node) too, and ``method:=`` takes a plug-in's name."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import yaml

from adr_core.training.config import TrainConfig
from adr_core.training.trainer import Trainer
from graph_harness.graph_runs import TINY, finish, metric_rows, sample_rows, start_graph

TOY_DIR = Path(__file__).resolve().parents[1] / "toy_sampler"
BUDGET = 900

pytestmark = pytest.mark.integration


def rows_without_times(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    return [{k: v for k, v in row.items() if not k.startswith("time_") and k != "wall_time_s"} for row in rows]


@pytest.mark.parametrize("sampler, options", [
    ("toy_corner", {"corner": 0.8}),
    ("learnability", {"warmup": 2}),
    ("alp_gmm", {"fit_rate": 4, "window": 20}),
])
def test_a_plugin_sampler_runs_as_the_graph_like_in_process(ros_env: dict[str, str], tmp_path: Path, sampler: str,
                                                            options: dict) -> None:
    sys.path.insert(0, str(TOY_DIR))
    try:
        config_file = tmp_path / "sampler.yaml"
        config_file.write_text(yaml.safe_dump({"env_id": "adr/LunarLander-v0", "sampler_modules": ["adr_toy_sampler"],
                                               "seed": 4, "sampler": sampler, "sampler_options": options}))
        in_process = tmp_path / "in_process"
        config = TrainConfig.from_yaml(config_file).with_overrides({**TINY, "total_agent_steps": BUDGET})
        Trainer(config, in_process).run()
    finally:
        sys.path.remove(str(TOY_DIR))
    env = {**ros_env, "PYTHONPATH": os.pathsep.join([str(TOY_DIR), ros_env.get("PYTHONPATH", "")])}
    graph_dir = tmp_path / "graph"
    graph = start_graph(graph_dir, env, BUDGET, f"config:={config_file}", "instances:=1",
                        *(["method:=toy_corner"] if sampler == "toy_corner" else []))
    output = finish(graph, [])
    assert graph.returncode == 0, output
    rows = metric_rows(graph_dir)
    assert rows_without_times(rows) == rows_without_times(metric_rows(in_process)) and len(rows) >= 3
    assert sample_rows(graph_dir) == sample_rows(in_process)
