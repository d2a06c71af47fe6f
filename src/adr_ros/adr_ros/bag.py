"""rosbag2 bags in MCAP format, written with the ``rosbags`` library (no hand-written container).

    bag = BagWriter(run_dir / "bag")                 # refuses an existing bag unless overwrite=True
    bag.add_topic("adr/proposals", "adr_interfaces/msg/ParameterSet")
    bag.write("adr/proposals", stamp_ns, cdr_bytes)   # the message as rclpy serializes it (a raw subscription)
    bag.close()                                      # metadata.yaml (what `ros2 bag info` reads) + the .mcap file

Message definitions come from rosbags' Jazzy type store, and for this project's interfaces from their ``.msg`` files
in the installed ``adr_interfaces`` share folder, so Foxglove and ``ros2 bag`` can decode every topic. If a write
fails (the disk filled up, a size limit), the bag stops growing: ``error`` says why once, later messages are
counted as dropped, and what was written stays readable up to the last complete chunk; the run goes on.
"""
from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

BAG_DIR = "bag"
STORAGE = "mcap"
BAG_VERSION: Literal[8, 9] = 9  # rosbag2 metadata version of Jazzy


class BagError(ValueError):
    """A bag that cannot be written where asked; the message says why."""


def _project_types(package: str) -> dict[str, Any]:
    from ament_index_python.packages import get_package_share_directory
    from rosbags.typesys import get_types_from_msg

    types: dict[str, Any] = {}
    for path in sorted((Path(get_package_share_directory(package)) / "msg").glob("*.msg")):
        types.update(get_types_from_msg(path.read_text(), f"{package}/msg/{path.stem}"))
    return types


def type_store() -> Any:
    """Jazzy's standard messages plus this project's (``adr_interfaces``)."""
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    store.register(_project_types("adr_interfaces"))
    return store


class BagWriter:
    def __init__(self, path: str | Path, overwrite: bool = False, log: Callable[[str], None] = print) -> None:
        from rosbags.rosbag2 import StoragePlugin, Writer

        self.path, self.log = Path(path), log
        if self.path.exists():
            if not overwrite:
                raise BagError(f"{self.path} already exists: choose another bag folder, or allow overwriting it "
                               f"(record_overwrite:=true)")
            shutil.rmtree(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.store = type_store()
        self._writer = Writer(self.path, version=BAG_VERSION, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self._connections: dict[str, Any] = {}
        self.counts: dict[str, int] = {}
        self.dropped = 0
        self.error: str | None = None

    def add_topic(self, topic: str, msgtype: str) -> None:
        if topic in self._connections or self.error is not None:
            return
        if msgtype not in self.store.fielddefs:
            raise BagError(f"{topic}: no message definition for {msgtype} (neither Jazzy's nor this project's)")
        self._connections[topic] = self._writer.add_connection(topic, msgtype, typestore=self.store)
        self.counts[topic] = 0

    def write(self, topic: str, stamp_ns: int, data: bytes) -> None:
        if self.error is not None:
            self.dropped += 1
            return
        try:
            self._writer.write(self._connections[topic], int(stamp_ns), data)
        except OSError as error:
            self.error = f"writing {self.path} failed ({error.strerror or error}); recording stopped, the bag holds " \
                         f"what was written before"
            self.log(self.error)
            self.dropped += 1
            return
        self.counts[topic] += 1

    def close(self) -> None:
        try:
            self._writer.close()
        except OSError as error:
            message = f"closing {self.path} failed ({error.strerror or error}): the .mcap file is readable up to its " \
                      f"last complete chunk, metadata.yaml may be missing"
            self.error = self.error or message
            self.log(message)
