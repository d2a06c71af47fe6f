"""The ErgoPusher planner's bound is only a bound if every candidate starts from the same episode state: its snapshot
must restore physics, the servo effects' latency queue and the puck tracker, so a replayed target sequence ends where
it ended the first time (and not where a run that only restored PyBullet's state would)."""
from __future__ import annotations

import numpy as np

from adr_core.envs import make_env
from experiments.pusher_diagnosis import _ergo_snapshot


def _final_puck(u, actions: np.ndarray) -> np.ndarray:
    for action in actions:
        u.step(action)
    return u.puck_position.copy()


def test_snapshot_replays_an_identified_arm_episode_exactly() -> None:
    env = make_env("adr/ErgoPusher-v0", space="ErgoPusher-v0-standin")  # latency, gear play, tracker: all stateful
    try:
        env.reset(seed=10000)
        u = env.unwrapped
        assert u._sim_to_real.present and u._tracker.present
        actions = np.random.default_rng(0).uniform(-1, 1, (40, 4))
        restore = _ergo_snapshot(u)
        first = _final_puck(u, actions)
        tip_first = u.tip_position.copy()
        restore()
        np.testing.assert_array_equal(_final_puck(u, actions), first)
        np.testing.assert_array_equal(u.tip_position, tip_first)
    finally:
        env.close()
