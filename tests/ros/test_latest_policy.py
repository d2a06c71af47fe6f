"""A sim instance's policy store: a goal gets the newest version in its range; a forged version cannot pin it."""
from __future__ import annotations

import pytest

from adr_sim_node.latest_policy import HELD_MAX, LatestPolicy, StaleWeights, VersionedPolicy


def versioned(version: int) -> VersionedPolicy:
    return VersionedPolicy(policy=None, version=version)  # type: ignore[arg-type]  # the store never runs it


def served(store: LatestPolicy, low: int, high: int | None) -> int | None:
    held = store.wait_for(low, timeout=0.0, give_up=lambda: True, newest_version=high)
    return None if held is None else held.version


def test_a_forged_version_is_held_but_never_served() -> None:
    store = LatestPolicy()
    store.offer(versioned(2))
    store.offer(versioned(2**62))  # never published by the trainer
    assert served(store, 2, 2) == 2
    store.offer(versioned(3))  # the real next version still gets in
    assert served(store, 3, 3) == 3
    assert served(store, 4, 4) is None  # not the forged one either
    with pytest.raises(StaleWeights):
        store.offer(versioned(1))  # older than a version already served


def test_a_goal_reassigned_after_a_newer_one_ran_gets_the_newer_version() -> None:
    store = LatestPolicy()
    store.offer(versioned(5))
    store.offer(versioned(6))
    assert served(store, 6, 6) == 6
    assert served(store, 0, 5) == 6  # version 5 was dropped once 6 ran; 6 is a version the trainer published


def test_the_store_is_bounded_and_drops_the_highest_versions_first() -> None:
    store = LatestPolicy()
    store.offer(versioned(1))
    for forged in range(10**9, 10**9 + 3 * HELD_MAX):
        store.offer(versioned(forged))
    assert served(store, 1, 1) == 1  # the real one survived the storm
    assert len(store._held) <= HELD_MAX


def test_a_node_that_cannot_write_its_snapshots_says_so_in_one_line(tmp_path):
    import pytest

    from adr_core.base.checkpoint import CheckpointError
    from adr_ros.checkpoints import SnapshotKeeper

    keeper = SnapshotKeeper("sampler")
    keeper.keep(3, {"x": 1})
    keeper.keep(4, {"x": 2})
    blocked = tmp_path / "run"
    blocked.write_text("a file where the run directory should be")
    with pytest.raises(CheckpointError) as refused:
        keeper.save_all(blocked)
    assert str(refused.value).startswith(f"cannot write checkpoint {blocked}/checkpoints/sampler-")
    assert "\n" not in str(refused.value)
