"""rosbag2 bags (MCAP) written by adr_ros.bag, read back with another library (mcap_ros2), and what happens when the
disk fills up or the folder exists."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from rclpy.serialization import serialize_message
from std_msgs.msg import String

from adr_interfaces.msg import ParameterSet
from adr_ros.bag import BagError, BagWriter


def proposal(i: int) -> ParameterSet:
    msg = ParameterSet(env_id="adr/LunarLander-v0", iteration=i, slot=i % 3, names=["main_engine_power"])
    msg.values = [8.0 + i]
    msg.normalized = [i / 12.0]
    return msg


def read_back(bag: Path) -> list[tuple[str, str, object]]:
    (mcap_file,) = sorted(bag.glob("*.mcap"))
    with mcap_file.open("rb") as handle:
        reader = make_reader(handle, decoder_factories=[DecoderFactory()])
        return [(channel.topic, schema.name, message) for schema, channel, _, message in
                reader.iter_decoded_messages()]


def test_a_bag_reads_back_with_another_library_and_has_rosbag2_metadata(tmp_path: Path) -> None:
    bag = BagWriter(tmp_path / "bag")
    bag.add_topic("/adr/proposals", "adr_interfaces/msg/ParameterSet")
    bag.add_topic("/note", "std_msgs/msg/String")
    for i in range(5):
        bag.write("/adr/proposals", 1_000 + i, serialize_message(proposal(i)))
    bag.write("/note", 2_000, serialize_message(String(data="hello")))
    bag.close()
    messages = read_back(tmp_path / "bag")
    assert [(t, s) for t, s, _ in messages] == [("/adr/proposals", "adr_interfaces/msg/ParameterSet")] * 5 + [
        ("/note", "std_msgs/msg/String")]
    decoded = [m for _, _, m in messages]
    assert [m.iteration for m in decoded[:5]] == list(range(5)) and decoded[5].data == "hello"
    assert list(decoded[3].values) == [11.0] and decoded[3].env_id == "adr/LunarLander-v0"
    info = yaml.safe_load((tmp_path / "bag" / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert info["storage_identifier"] == "mcap" and info["version"] == 9 and info["message_count"] == 6
    counts = {t["topic_metadata"]["name"]: t["message_count"] for t in info["topics_with_message_count"]}
    assert counts == {"/adr/proposals": 5, "/note": 1}
    assert info["relative_file_paths"] == ["bag.mcap"]


def test_an_existing_bag_is_refused_unless_overwriting(tmp_path: Path) -> None:
    BagWriter(tmp_path / "bag").close()
    with pytest.raises(BagError, match="already exists"):
        BagWriter(tmp_path / "bag")
    BagWriter(tmp_path / "bag", overwrite=True).close()


def test_when_the_disk_fills_up_the_bag_stops_growing_and_stays_readable(tmp_path: Path) -> None:
    """A file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) makes writes fail as a full disk would."""
    script = f"""
import resource, signal
from rclpy.serialization import serialize_message
from std_msgs.msg import String
from adr_ros.bag import BagWriter
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
errors = []
bag = BagWriter({str(tmp_path / 'bag')!r}, log=errors.append)
bag.add_topic("/big", "std_msgs/msg/String")
resource.setrlimit(resource.RLIMIT_FSIZE, (3_500_000, 3_500_000))
for i in range(8000):  # ~8 MB of messages: two or three 1 MiB chunks fit, then the writes fail
    bag.write("/big", i, serialize_message(String(data=str(i).ljust(1000, "x"))))
bag.close()
print("written", bag.counts["/big"], "dropped", bag.dropped)
print("errors", len(errors), errors[0] if errors else "")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "recording stopped, the bag holds what was written before" in result.stdout
    written = int(result.stdout.split("written ")[1].split()[0])
    assert 0 < written < 8000
    (mcap_file,) = (tmp_path / "bag").glob("*.mcap")
    from mcap.records import Message
    from mcap.stream_reader import StreamReader

    with mcap_file.open("rb") as handle:  # no footer, no summary: read the complete records in order
        messages = []
        try:
            for record in StreamReader(handle, skip_magic=False).records:
                if isinstance(record, Message):
                    messages.append(record)
        except Exception:  # noqa: BLE001 - the truncated tail: every complete chunk before it was read
            pass
    assert len(messages) >= 1000 and all(m.log_time == i for i, m in enumerate(messages))
