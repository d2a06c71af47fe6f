"""ErgoPusher episodes on an arm model: the rig check before anything is sent, the puck placed at its start, and
aborts when the tracker's readings stop (simulated time, as test_policy_runner_episodes)."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from test_policy_runner_checkpoints import PUSHER, write_checkpoint
from test_policy_runner_episodes import ServoArm, runner_for

from adr_deploy.policy_runner.errors import DeployError
from adr_deploy.policy_runner.goals import RandomGoals
from adr_deploy.policy_runner.loading import DeployablePolicy, load_deployable
from adr_deploy.policy_runner.readings import PuckReading, PuckTrack

TRACKER_PERIOD = 1 / 30


class PuckRig(ServoArm):
    """The arm model plus a puck that a tracker reports every 1/30 s, its velocity the difference of the last two
    readings (``PuckTrack``, as the driver link); ``request_puck_start`` moves it there after ``place_delay`` (an
    operator; the stand-in: at once)."""

    def __init__(self, puck: tuple[float, float] | None = (0.0, -0.1), **kwargs) -> None:
        super().__init__(**kwargs)
        self.puck = puck
        self.puck_reading: PuckReading | None = None
        self.puck_silent_after = math.inf
        self.requests: list[tuple[float, tuple[float, float]]] = []
        self.place_delay = 0.2
        self.moves_puck = True
        self._next_frame = 0.0
        self._track = PuckTrack()

    def latest_puck(self) -> PuckReading | None:
        return self.puck_reading

    def puck_tracker_present(self) -> bool:
        return self.puck is not None

    def request_puck_start(self, position: tuple[float, float]) -> None:
        self.requests.append((self.clock.now(), position))
        if self.moves_puck:
            self.clock.hooks.append((self.clock.now() + self.place_delay, lambda: setattr(self, "puck", position)))

    def advance_to(self, t: float, dt: float) -> None:
        super().advance_to(t, dt)
        if self.puck is not None and t >= self._next_frame and t < self.puck_silent_after:
            self.puck_reading = self._track.update(*self.puck, stamp=t, received_at=t)
            self._next_frame = t + TRACKER_PERIOD


@pytest.fixture(scope="module")
def pusher(tmp_path_factory: pytest.TempPathFactory) -> DeployablePolicy:
    path = write_checkpoint(tmp_path_factory.mktemp("run") / "checkpoints" / "latest.pt", PUSHER, obs_dim=17)
    return load_deployable(path.parents[1])


def goals_for(deployable: DeployablePolicy) -> RandomGoals:
    return RandomGoals(deployable.task, deployable.policy, deployable.space, seed=7, episode_steps=100)


def test_a_pusher_policy_without_a_puck_tracker_is_refused_before_anything_is_sent(pusher) -> None:
    arm = PuckRig(puck=None)  # a reaching rig: no camera
    runner, _ = runner_for(pusher, arm, puck_timeout_s=2.0)
    with pytest.raises(DeployError, match=r"no puck position on 'puck' within 2 s: .*nothing was sent to the arm"):
        runner.run_episodes(goals_for(pusher), 1)
    assert arm.sent == [] and arm.stiffened == 0 and arm.requests == []


def test_a_reacher_policy_on_a_pushing_rig_is_refused_before_anything_is_sent(tmp_path) -> None:
    reacher = load_deployable(write_checkpoint(tmp_path / "run" / "checkpoints" / "latest.pt").parents[1])
    arm = PuckRig()
    runner, _ = runner_for(reacher, arm)
    with pytest.raises(DeployError, match="set up for pushing .* nothing was sent to the arm"):
        runner.run_episodes(goals_for(reacher), 1)
    assert arm.sent == [] and arm.stiffened == 0


class LateTracker(PuckRig):
    """A pushing rig whose tracker is discovered ``discovered_after`` seconds into the run (a busy machine)."""

    def __init__(self, discovered_after: float) -> None:
        super().__init__()
        self.discovered_after = discovered_after

    def puck_tracker_present(self) -> bool:
        return self.clock.now() >= self.discovered_after


def test_a_puck_tracker_discovered_late_still_refuses_a_reacher_policy(tmp_path) -> None:
    reacher = load_deployable(write_checkpoint(tmp_path / "run" / "checkpoints" / "latest.pt").parents[1])
    arm = LateTracker(discovered_after=1.0)
    runner, _ = runner_for(reacher, arm, tracker_discovery_s=2.0)
    with pytest.raises(DeployError, match="set up for pushing"):
        runner.run_episodes(goals_for(reacher), 1)
    assert arm.sent == [] and arm.stiffened == 0


def test_each_episode_starts_with_the_puck_where_the_simulator_starts_it(pusher) -> None:
    arm = PuckRig()
    runner, _ = runner_for(pusher, arm)
    goals = goals_for(pusher)
    summaries = runner.run_episodes(goals, 2)
    assert [s.aborted for s in summaries] == [None, None]
    expected = [goals.next_goal(k).puck_start for k in range(2)]
    assert [position for _, position in arm.requests] == expected
    # the episode's commands start only once the tracker has seen the puck there
    first_request = arm.requests[0][0]
    episode_commands = [t for t, _ in arm.sent if t > first_request]
    assert episode_commands and episode_commands[0] >= first_request
    assert summaries[0].final_puck == expected[0]  # the model's puck stays where it was put (nothing pushes it)
    assert summaries[0].final_distance == pytest.approx(math.dist(expected[0], summaries[0].goal[:2]))


def test_a_puck_that_never_reaches_its_start_aborts_the_episode_with_one_line(pusher) -> None:
    arm = PuckRig()
    arm.moves_puck = False  # nobody puts the puck there
    runner, _ = runner_for(pusher, arm, start_timeout_s=1.0)
    summary = runner.run_episodes(goals_for(pusher), 1)[0]
    assert summary.aborted.startswith("the puck was not at its start (") and "within 1 s (the puck at (0.000, "\
        "-0.100), moving at 0.00 m/s)" in summary.aborted
    assert summary.steps == 0 and summary.final_distance is None and not summary.success


def test_a_stale_puck_reading_aborts_the_episode_with_one_line(pusher) -> None:
    arm = PuckRig()
    runner, clock = runner_for(pusher, arm, feedback_timeout_s=0.1)
    goal = goals_for(pusher).next_goal(0)
    arm.puck = goal.puck_start
    arm.puck_silent_after = clock.now() + 0.6  # the camera stops (or the tracker lost the puck)
    summary = runner.run_episode(0, goal, start_error=0.0)
    assert summary.aborted == "no puck position for more than 0.1 s"
    assert summary.final_distance is None and not summary.success
    assert 0 < summary.steps < 100


def test_the_first_step_sees_the_puck_at_rest_and_the_steps_keep_the_control_period(pusher) -> None:
    """The tracker's reading that first shows the puck at its start carries the jump from where it was (~3 m/s here);
    the env starts every episode with the puck at rest, so the runner waits for a reading at rest, and the episode's
    1/60 s grid starts after the placement (no second step at once)."""
    observed: list[np.ndarray] = []

    def policy(obs: np.ndarray) -> np.ndarray:
        observed.append(np.array(obs))
        return pusher.policy(obs)

    arm = PuckRig(puck=(0.05, -0.2))  # ends the last episode far from the next start
    runner, _ = runner_for(dataclasses.replace(pusher, policy=policy), arm)
    goals = goals_for(pusher)
    summary = runner.run_episodes(goals, 1)[0]
    assert summary.aborted is None
    start_of_episode = [t for t, _ in arm.sent][-100:]
    assert np.allclose(np.diff(start_of_episode), 1 / 60)
    puck_velocity = observed[0][13:15]  # [..., tip xyz, puck xy, puck velocity xy, goal xy]
    assert np.allclose(puck_velocity, 0.0), puck_velocity
    assert np.allclose(observed[0][11:13], goals.next_goal(0).puck_start, atol=1e-6)


def test_without_waiting_for_rest_the_first_reading_would_carry_the_jump() -> None:
    track = PuckTrack()
    track.update(0.05, -0.2, stamp=0.0, received_at=0.0)
    jumped = track.update(-0.05, -0.1, stamp=1 / 30, received_at=1 / 30)
    assert math.hypot(*jumped.velocity) > 3.0  # what the first step saw before the runner waited for rest
    assert track.update(-0.05, -0.1, stamp=2 / 30, received_at=2 / 30).velocity == (0.0, 0.0)
