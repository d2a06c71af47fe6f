"""Fixtures for the driver's tests without ROS: an emulated XL-320 bus on a pty and the arm on top of it."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from poppy_standin.xl320 import Xl320Emulator

from poppy_driver.arm import PoppyArm
from poppy_driver.config import ArmConfig, load_config
from poppy_driver.pypot_bus import Xl320Bus

# Distinct, non-zero start angles (motor frame, degrees) so that a wrong id, direction or unit shows.
START_DEG = {1: 10.0, 2: -20.0, 3: 30.0, 4: -40.0, 5: 15.0, 6: -5.0}


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[Xl320Emulator]:
    with Xl320Emulator(positions_deg=START_DEG, link=tmp_path / "ttyPOPPY") as emu:
        yield emu


@pytest.fixture
def start_deg() -> dict[int, float]:
    """The emulator's start angles (motor frame, degrees, by motor id)."""
    return dict(START_DEG)


@pytest.fixture
def config(emulator: Xl320Emulator) -> ArmConfig:
    return load_config().with_bus(port=emulator.port)


@pytest.fixture
def arm(config: ArmConfig) -> Iterator[PoppyArm]:
    arm = PoppyArm(config, Xl320Bus(config.bus, config.motor_ids), reconnect_period=0.05)
    yield arm
    arm.close()
