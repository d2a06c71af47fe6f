"""record:=true: a real graph run recorded into a rosbag2 bag (MCAP), read back with another library (mcap_ros2):
the proposals in the bag are the run's sampled_parameters.csv, message for message."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

from graph_harness.graph_runs import finish, start_graph

pytestmark = pytest.mark.integration


def bag_messages(bag: Path) -> list[tuple[str, str, object]]:
    (mcap_file,) = sorted(bag.glob("*.mcap"))
    with mcap_file.open("rb") as handle:
        reader = make_reader(handle, decoder_factories=[DecoderFactory()])
        return [(channel.topic, schema.name, message) for schema, channel, _, message in
                reader.iter_decoded_messages()]


def test_a_recorded_run_holds_its_proposals_metrics_and_diagnostics(ros_env: dict[str, str], tmp_path: Path) -> None:
    # with the viewer: it subscribes to the metrics before their publishers exist, and the recorder must still match
    # each publisher's QoS (it recorded 4 of 23 metric topics before)
    graph = start_graph(tmp_path, ros_env, 600, "instances:=1", "record:=true", "record_trajectories:=1000",
                        "viewer:=true", "viewer_port:=0")
    output = finish(graph, [])
    assert graph.returncode == 0, output
    assert "Traceback" not in output and "[adr_recorder] " in output
    messages = bag_messages(tmp_path / "bag")
    topics = {topic for topic, _, _ in messages}
    assert {"/adr/proposals", "/adr/particle_rewards", "/adr/sampler_state", "/diagnostics",
            "/adr/trajectories"} <= topics
    metrics = {t.removeprefix("/adr/metrics/") for t in topics if t.startswith("/adr/metrics/")}
    # every iteration's metrics, the first one's too: the trainer waits for the recorder's metric subscriptions
    with open(tmp_path / "metrics.csv", newline="") as handle:
        iterations = len(list(csv.DictReader(handle)))
    assert sum(1 for t, _, _ in messages if t == "/adr/metrics/iteration_s") == iterations >= 2
    # every metric the trainer publishes in a run this short (no gradient step yet: no losses), the docs' example too
    assert {"return_mean", "reference_return_mean", "solved_fraction", "agent_steps", "iteration_s"} <= metrics
    proposals = sorted(((m.iteration, m.slot, tuple(m.values)) for t, s, m in messages if t == "/adr/proposals"))
    with open(tmp_path / "sampled_parameters.csv", newline="") as handle:
        rows = sorted((int(r["iteration"]), int(r["slot"]), (float(r["main_engine_power"]),))
                      for r in csv.DictReader(handle))
    assert proposals == rows  # every proposal of the run, the same values
    types = {t: s for t, s, _ in messages}
    assert types["/adr/proposals"] == "adr_interfaces/msg/ParameterSet"
    assert types["/diagnostics"] == "diagnostic_msgs/msg/DiagnosticArray"
    trajectories = [m for t, _, m in messages if t == "/adr/trajectories"]
    assert trajectories and all(m.length == len(m.rewards) for m in trajectories)
    info = yaml.safe_load((tmp_path / "bag" / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert info["storage_identifier"] == "mcap" and info["message_count"] == len(messages)



def test_an_existing_bag_folder_is_refused_in_one_line_before_anything_starts(ros_env: dict[str, str],
                                                                             tmp_path: Path) -> None:
    """Issue 61: an existing bag folder used to be refused by the recorder once the graph had started (the run went
    on without a bag, its key and run directory written); it is a bad launch argument, refused before anything."""
    (tmp_path / "bag").mkdir()
    (tmp_path / "bag" / "keep.txt").write_text("an earlier bag")
    graph = start_graph(tmp_path, ros_env, 300, "instances:=1", "record:=true")
    output = finish(graph, [])
    assert graph.returncode == 2, output
    assert output.strip().splitlines() == [
        f"adr_launch: record:=true: the bag folder {tmp_path / 'bag'} exists already: choose another (run_dir:=) or "
        f"record_overwrite:=true"]
    assert (tmp_path / "bag" / "keep.txt").read_text() == "an earlier bag"  # nothing lost
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bag"]  # no key, no run files
