"""Boundary ADR (sampler boundary_adr, issue 32) as the node graph: the trainer node sends each iteration's task
scores to the sampler node, no discriminator runs, and the graph's rows, proposals and ranges equal the in-process
trainer's."""
from __future__ import annotations

import csv
from pathlib import Path

from graph_harness.graph_runs import finish, metric_rows, run_in_process, sample_rows, start_graph

BUDGET = 1000
# an untrained lander solves nothing: from the whole training range the edges move inward, so the ranges change
BOUNDARY = {"boundary.initial_range": "train", "boundary.buffer_size": 1, "boundary.step": 0.1,
            "boundary.threshold_low": 0.5}


def _ranges(run_dir: Path) -> list[tuple[str, str, str]]:
    with open(run_dir / "metrics.csv", newline="") as handle:
        return [(r["boundary_low_mean"], r["boundary_high_mean"], r["boundary_edges_moved"])
                for r in csv.DictReader(handle)]


def test_the_boundary_adr_graph_reproduces_the_in_process_trainer(ros_env: dict[str, str], tmp_path: Path) -> None:
    in_process = tmp_path / "in_process"
    run_in_process(in_process, BUDGET, sampler="boundary_adr", **BOUNDARY)
    graph_dir = tmp_path / "graph"
    graph = start_graph(graph_dir, ros_env, BUDGET, "method:=boundary_adr", "instances:=1", overrides=BOUNDARY)
    output = finish(graph, [])
    assert graph.returncode == 0, output
    assert "adr_discriminator" not in output  # boundary ADR needs no discriminator node
    assert metric_rows(graph_dir) == metric_rows(in_process)
    assert sample_rows(graph_dir) == sample_rows(in_process)
    ranges = _ranges(graph_dir)
    assert ranges == _ranges(in_process) and len(ranges) >= 3
    assert ranges[-1][:2] != ("0.0", "1.0") and any(float(moved) > 0 for _, _, moved in ranges)
