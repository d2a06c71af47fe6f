"""An env registered by its own module (tests/toy_env) runs as the node graph, every node importing the module named
in the config's ``env_modules``, and the graph reproduces the in-process trainer on it (issue 31: adding an env)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import yaml

from adr_core.training.config import TrainConfig
from adr_core.training.trainer import Trainer
from graph_harness.graph_runs import TINY, finish, metric_rows, sample_rows, start_graph

TOY_DIR = Path(__file__).resolve().parents[1] / "toy_env"
BUDGET = 600  # 3 iterations of 2 slots x 100 steps


def test_a_toy_env_of_its_own_module_runs_as_the_graph_like_in_process(ros_env: dict[str, str],
                                                                      tmp_path: Path) -> None:
    sys.path.insert(0, str(TOY_DIR))
    try:
        config_file = tmp_path / "toy.yaml"
        config_file.write_text(yaml.safe_dump({"env_id": "toy/PointMass-v0", "env_modules": ["adr_toy_env"],
                                               "seed": 4}))
        in_process = tmp_path / "in_process"
        config = TrainConfig.from_yaml(config_file).with_overrides({**TINY, "total_agent_steps": BUDGET})
        Trainer(config, in_process).run()
    finally:
        sys.path.remove(str(TOY_DIR))
    env = {**ros_env, "PYTHONPATH": os.pathsep.join([str(TOY_DIR), ros_env.get("PYTHONPATH", "")])}
    graph_dir = tmp_path / "graph"
    graph = start_graph(graph_dir, env, BUDGET, f"config:={config_file}", "instances:=1")
    output = finish(graph, [])
    assert graph.returncode == 0, output
    rows = metric_rows(graph_dir)
    assert rows == metric_rows(in_process) and len(rows) >= 3
    assert sample_rows(graph_dir) == sample_rows(in_process)
    assert {"mass", "u_mass"} <= set(sample_rows(graph_dir)[0])
