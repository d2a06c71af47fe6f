"""Episodes on an arm model in simulated time: timing, start pose, measured final distance, aborts, goal sources.

``ServoArm`` stands for driver + motors: joint_states every 1/120 s, each joint moving toward its last command at a
fixed speed (like the XL-320's moving-speed register). The clock advances only when the runner sleeps, so these
tests are exact and fast; the real processes are in tests/integration/test_deploy_real.py.
"""
from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from test_policy_runner_checkpoints import write_checkpoint

from adr_core.envs.ergo_jr import JOINT_NAMES
from adr_core.evaluation import evaluate, load_policy
from adr_deploy.policy_runner.episodes import PolicyRunner, RunnerSettings
from adr_deploy.policy_runner.errors import ArmNotReady, DeployError
from adr_deploy.policy_runner.goals import ClickedGoals, Goal, RandomGoals
from adr_deploy.policy_runner.loading import DeployablePolicy, load_deployable
from adr_deploy.policy_runner.readings import JointReading, PuckReading
from adr_deploy.policy_runner.results_file import ResultsFile

FEEDBACK_PERIOD = 1 / 120
POSE = {"m2": 0.3, "m3": -0.4, "m5": 0.5, "m6": 0.2}  # a reacher pose: the scripted policy commands it


class ServoArm:
    def __init__(self, start: dict[str, float] | None = None, speed: float = 5.0) -> None:
        self.positions = {name: 0.0 for name in JOINT_NAMES} | (start or {})
        self.targets = dict(self.positions)
        self.speed, self.frozen, self.silent_after, self.limp_after = speed, False, math.inf, math.inf
        self.reading: JointReading | None = None
        self.sent: list[tuple[float, list[float]]] = []
        self.stiffened = 0
        self.refusals = 0  # stiffen() calls to refuse first (the driver's bus is down)
        self.is_compliant: bool | None = None
        self.clock: SimulatedTime | None = None

    # ArmLink
    def latest_joints(self) -> JointReading | None:
        return self.reading

    def latest_puck(self) -> PuckReading | None:
        return None

    def puck_tracker_present(self) -> bool:
        return False

    def request_puck_start(self, position: tuple[float, float]) -> None:
        raise AssertionError("a reacher episode asked for a puck")

    def send(self, positions: Sequence[float]) -> None:
        self.sent.append((self.clock.now(), list(positions)))
        self.targets = dict(zip(JOINT_NAMES, positions))

    def compliant(self) -> bool | None:
        return self.is_compliant

    def stiffen(self) -> None:
        if self.refusals > 0:
            self.refusals -= 1
            raise ArmNotReady("bus not connected")
        self.stiffened += 1
        self.is_compliant = False

    # the model
    def advance_to(self, t: float, dt: float) -> None:
        if not self.frozen:
            for name, target in self.targets.items():
                error = target - self.positions[name]
                self.positions[name] += max(-self.speed * dt, min(self.speed * dt, error))
        if t >= self.limp_after:
            self.is_compliant = True
        if t < self.silent_after:
            self.reading = JointReading(dict(self.positions), {n: 0.0 for n in JOINT_NAMES}, received_at=t)


class SimulatedTime:
    """The runner's clock: sleeping advances the arm model, publishing joint_states every FEEDBACK_PERIOD."""

    def __init__(self, arm: ServoArm) -> None:
        self.arm, self.t, self.next_feedback = arm, 0.0, FEEDBACK_PERIOD
        self.hooks: list[tuple[float, Callable[[], None]]] = []
        arm.clock = self
        arm.advance_to(0.0, 0.0)

    def now(self) -> float:
        return self.t

    def sleep_until(self, deadline: float) -> None:
        while self.next_feedback <= deadline:
            self._at(self.next_feedback)
            self.next_feedback += FEEDBACK_PERIOD
        self.t = max(self.t, deadline)

    def _at(self, t: float) -> None:
        self.t = max(self.t, t)
        self.arm.advance_to(self.t, FEEDBACK_PERIOD)
        for when, hook in [h for h in self.hooks if h[0] <= self.t]:
            self.hooks.remove((when, hook))
            hook()


@pytest.fixture(scope="module")
def deployable(tmp_path_factory: pytest.TempPathFactory) -> DeployablePolicy:
    path = write_checkpoint(tmp_path_factory.mktemp("run") / "checkpoints" / "latest.pt")
    return load_deployable(path.parents[1])


class ScriptedPolicy:
    """Always commands ``pose`` (what a perfect policy for a goal at that pose would do); keeps its observations."""

    def __init__(self, deployable: DeployablePolicy, pose: dict[str, float]) -> None:
        task = deployable.task
        self.action = np.array([pose[m] / task.action_scale for m in task.actuated], np.float32)
        self.observations: list[np.ndarray] = []

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        self.observations.append(obs)
        return self.action


def scripted(deployable: DeployablePolicy, pose: dict[str, float]) -> DeployablePolicy:
    return dataclasses.replace(deployable, policy=ScriptedPolicy(deployable, pose))


def runner_for(deployable: DeployablePolicy, arm: ServoArm, **settings) -> tuple[PolicyRunner, SimulatedTime]:
    clock = SimulatedTime(arm)
    settings = {"pause_after_episode_s": 0.0, "tracker_discovery_s": 0.0} | settings
    return PolicyRunner(deployable, arm, clock, RunnerSettings(**settings), log=lambda _: None), clock


def goal_at(runner: PolicyRunner, pose: dict[str, float]) -> Goal:
    tip = runner.kinematics.tip({name: 0.0 for name in JOINT_NAMES} | pose)
    return Goal(world=tuple(tip), source="clicked")


def test_an_episode_runs_at_the_control_rate_and_scores_the_measured_final_pose(deployable) -> None:
    policy, arm = scripted(deployable, POSE), ServoArm()
    runner, clock = runner_for(policy, arm)
    goal = goal_at(runner, POSE)
    summary = runner.run_episode(0, goal, start_error=0.0)

    assert summary.steps == len(arm.sent) == 100 and summary.aborted is None
    times = [t for t, _ in arm.sent]
    assert np.allclose(np.diff(times), 1 / 60) and summary.control_rate_hz == pytest.approx(60.0)
    assert summary.late_commands == 0 and summary.max_feedback_age_s <= FEEDBACK_PERIOD + 1e-9
    for _, command in arm.sent:  # actuated joints at the policy's targets, the others held at 0
        assert dict(zip(JOINT_NAMES, command)) == pytest.approx({"m1": 0.0, "m4": 0.0} | POSE)
    # the distance is that of the joint_states received one control period after the last command
    assert clock.t >= times[-1] + 1 / 60
    assert summary.final_joint_positions == arm.reading.positions
    tip = runner.kinematics.tip(summary.final_joint_positions)
    assert summary.final_distance == pytest.approx(float(np.linalg.norm(tip - np.asarray(goal.world))), abs=1e-12)
    assert summary.final_distance < 1e-6 and summary.success
    # observations were built from the measured angles (scaled by 1/(pi/2)), and the goal's y, z
    first, last = policy.policy.observations[0], policy.policy.observations[-1]
    assert first[:4] == pytest.approx(np.zeros(4)) and last[:4] == pytest.approx(
        [POSE[m] / (math.pi / 2) for m in ("m2", "m3", "m5", "m6")], abs=1e-6)
    assert last[8:] == pytest.approx(np.array(goal.world)[[1, 2]])
    assert json.loads(summary.to_json())["final_distance"] == summary.final_distance


class MemoryPolicy(ScriptedPolicy):
    """A scripted policy that also wants the episode's history, as a policy with memory does."""

    def __init__(self, deployable: DeployablePolicy, pose: dict[str, float]) -> None:
        super().__init__(deployable, pose)
        self.calls: list[tuple[str, np.ndarray, np.ndarray | None]] = []

    def begin_episode(self, obs: np.ndarray) -> None:
        self.calls.append(("begin", np.array(obs), None))

    def remember(self, obs: np.ndarray, action: np.ndarray) -> None:
        self.calls.append(("remember", np.array(obs), np.array(action)))


def test_a_policy_with_memory_is_told_each_episode_start_and_every_action_sent(deployable) -> None:
    memory = MemoryPolicy(deployable, POSE)
    runner, _ = runner_for(dataclasses.replace(deployable, policy=memory), ServoArm())
    for episode in range(2):
        runner.run_episode(episode, goal_at(runner, POSE), start_error=0.0)
    kinds = [kind for kind, _, _ in memory.calls]
    assert kinds == (["begin"] + ["remember"] * 100) * 2
    assert np.array_equal(memory.calls[0][1], memory.observations[0])  # the episode's first observation
    for (_, obs, action), seen in zip([c for c in memory.calls if c[0] == "remember"], memory.observations):
        assert np.array_equal(obs, seen) and np.array_equal(action, memory.action)  # what was acted on and sent


def test_an_arm_that_does_not_follow_is_never_a_success(deployable) -> None:
    arm = ServoArm()
    arm.frozen = True  # joint_states keep coming, the joints never move
    runner, _ = runner_for(scripted(deployable, POSE), arm)
    goal = goal_at(runner, POSE)
    summary = runner.run_episode(0, goal, start_error=0.0)
    expected = float(np.linalg.norm(runner.kinematics.tip(arm.positions) - np.asarray(goal.world)))
    assert summary.final_distance == pytest.approx(expected) and expected > deployable.task.solved_distance
    assert not summary.success


def test_feedback_that_stops_aborts_the_episode_without_a_distance(deployable) -> None:
    arm = ServoArm()
    arm.silent_after = 0.5  # the driver lost its bus: no more joint_states
    runner, _ = runner_for(scripted(deployable, POSE), arm, feedback_timeout_s=0.1)
    summary = runner.run_episode(0, goal_at(runner, POSE), start_error=0.0)
    assert summary.aborted == "no joint_states for more than 0.1 s"
    assert summary.final_distance is None and not summary.success and summary.final_joint_positions == {}
    assert 0.5 * 60 <= summary.steps <= 0.6 * 60 + 1  # it stopped commanding within the timeout


def test_an_arm_gone_compliant_aborts_the_episode(deployable) -> None:
    arm = ServoArm()
    arm.is_compliant, arm.limp_after = False, 0.3
    runner, _ = runner_for(scripted(deployable, POSE), arm)
    summary = runner.run_episode(0, goal_at(runner, POSE), start_error=0.0)
    assert summary.aborted.startswith("the arm went compliant") and not summary.success


def test_episodes_start_stiff_at_the_start_pose_and_wait_for_a_clicked_goal(deployable) -> None:
    arm = ServoArm(start={"m1": 0.4, "m2": -0.6, "m5": 0.3})  # the arm rests somewhere else
    runner, clock = runner_for(scripted(deployable, POSE), arm)
    goals = ClickedGoals("/clicked_point")
    goal = goal_at(runner, POSE)
    clock.hooks.append((2.0, lambda: goals.offer(goal)))  # someone clicks in rviz after 2 s
    summaries = []
    runner.run_episodes(goals, 1, on_summary=summaries.append)

    assert arm.stiffened == 1  # compliance unknown at first: stiffened before any motion
    before = [command for t, command in arm.sent if t < 2.0]
    assert before and all(command == [0.0] * 6 for command in before)  # the env's start pose, streamed
    assert [t for t, _ in arm.sent if t < 2.0][-1] > 1.9  # ... at the control rate, all the while
    (summary,) = summaries
    assert summary.goal == goal.world and summary.goal_source == "clicked" and summary.success
    assert summary.start_error_rad <= 0.05


class FixedGoal:
    prompt = "a fixed goal"

    def __init__(self, goal: Goal) -> None:
        self.goal = goal

    def next_goal(self, episode: int) -> Goal:
        return self.goal


def test_a_bus_fault_aborts_the_episode_and_the_next_one_runs_once_the_driver_is_back(deployable) -> None:
    arm = ServoArm()
    runner, clock = runner_for(scripted(deployable, POSE), arm)
    log: list[str] = []
    runner._log = log.append

    def bus_lost() -> None:
        arm.silent_after = 1.0

    def bus_back() -> None:  # the driver reconnects holding; its compliance is unknown until it reports
        arm.silent_after, arm.is_compliant, arm.refusals = math.inf, None, 2

    clock.hooks += [(1.0, bus_lost), (3.0, bus_back)]
    summaries = runner.run_episodes(FixedGoal(goal_at(runner, POSE)), 2)
    assert summaries[0].aborted == "no joint_states for more than 0.25 s" and not summaries[0].success
    assert summaries[1].aborted is None and summaries[1].success
    assert arm.stiffened == 2 and arm.refusals == 0  # stiffened again once the driver accepted
    assert sum("cannot stiffen the arm yet (bus not connected)" in line for line in log) == 1


def test_random_goals_are_the_evaluation_episodes_of_the_reference_simulator(tmp_path: Path) -> None:
    deployable = load_deployable(write_checkpoint(tmp_path / "latest.pt", seed=4))
    goals = RandomGoals(deployable.task, deployable.policy, deployable.space, seed=7,
                        episode_steps=deployable.episode_steps)
    simulated = [goals.next_goal(k).simulated_final_distance for k in range(3)]
    scores = evaluate(load_policy(deployable.path), deployable.task.env_id, ["reference"], episodes=3, seeds=(7,))
    assert simulated == pytest.approx(scores["reference"].outcomes.final_distance.reshape(-1).tolist(), abs=1e-12)
    first = goals.next_goal(0)
    assert first.world[0] == pytest.approx(0.0, abs=1e-9) and first.world[2] >= 0.12  # the env's goal distribution
    goals.close()


def test_summaries_are_appended_to_the_results_file_as_json_lines(deployable, tmp_path: Path) -> None:
    arm = ServoArm()
    runner, _ = runner_for(scripted(deployable, POSE), arm)
    results = ResultsFile(tmp_path / "deploy" / "results.jsonl")
    summaries = runner.run_episodes(FixedGoal(goal_at(runner, POSE)), 2, on_summary=results.append)
    lines = (tmp_path / "deploy" / "results.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [json.loads(s.to_json()) for s in summaries]
    (tmp_path / "a_file").write_text("")
    with pytest.raises(DeployError, match="cannot write the results file"):
        ResultsFile(tmp_path / "a_file" / "results.jsonl")
