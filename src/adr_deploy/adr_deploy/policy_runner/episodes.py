"""Evaluation episodes on the arm: start pose, goal, then the policy at the simulator's control rate.

Everything the runner decides from is measured: observations come from the newest joint_states message (and the
puck tracker for ErgoPusher); the final distance comes from the first joint_states message received one full
control period after the last command, through the simulator's forward kinematics. An episode without fresh
feedback is aborted and has no distance and no success.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

import numpy as np

from .errors import ArmNotReady, DeployError
from .goals import Goal
from .kinematics import TipKinematics
from .loading import DeployablePolicy
from .observation import build_observation, clipped_action, joint_targets
from .pacing import Clock, Pacer, TickTiming
from .readings import JointReading, PuckReading
from .step_log import EpisodeSteps, StepLog
from .summary import EpisodeSummary
from .task import START_TOLERANCE_RAD

FEEDBACK_POLL_S = 0.001
RETRY_PERIOD_S = 0.5


class ArmLink(Protocol):
    """The driver as the runner sees it (the node implements it over ROS; tests over an emulated arm)."""

    def latest_joints(self) -> JointReading | None: ...

    def latest_puck(self) -> PuckReading | None: ...

    def puck_tracker_present(self) -> bool:
        """Whether anything publishes puck positions (an ErgoPusher rig's tracker)."""

    def request_puck_start(self, position: tuple[float, float]) -> None:
        """Ask for the puck at rest at ``position`` (world frame, m): the rig's operator, or the stand-in."""

    def send(self, positions: Sequence[float]) -> None:
        """Target positions [rad] of every joint, in the order of the joint_states names."""

    def compliant(self) -> bool | None:
        """What the driver last reported (None: not known yet)."""

    def stiffen(self) -> None:
        """Torque on, holding the present position; raises ArmNotReady when the driver cannot."""


class GoalSource(Protocol):
    prompt: str

    def next_goal(self, episode: int) -> Goal | None:
        """The goal of ``episode`` (0-based) if one is available now."""


@dataclass(frozen=True)
class RunnerSettings:
    start_tolerance_rad: float = START_TOLERANCE_RAD
    start_timeout_s: float = 10.0
    feedback_timeout_s: float = 0.25  # joint_states (or puck) older than this -> no episode
    pause_after_episode_s: float = 1.0  # hold the final pose this long (to look at it)
    puck_timeout_s: float = 5.0  # ErgoPusher: no puck position this long after the first joint_states -> refuse
    puck_start_tolerance_m: float = 0.01  # ErgoPusher: the puck counts as at its start this close (tracker noise)
    puck_rest_speed_m_s: float = 0.2  # ... and at rest this slow (the env starts it at rest; the tracker's velocity
    # is the difference of its last two readings, ~0.04 m/s of noise at 1 mm and 30 Hz: the reading that first shows
    # the puck at its start still carries the jump from where it was)
    tracker_discovery_s: float = 2.0  # ErgoReacher: a puck tracker discovered this long after joint_states -> refuse


class PolicyRunner:
    def __init__(self, deployable: DeployablePolicy, arm: ArmLink, clock: Clock, settings: RunnerSettings,
                 log: Callable[[str], None] = print, step_log: StepLog | None = None) -> None:
        self.deployable, self.task = deployable, deployable.task
        self.arm, self.clock, self.settings, self._log = arm, clock, settings, log
        self.step_log = step_log
        self.kinematics = TipKinematics(self.task)
        self.state = "starting"
        self.summaries: list[EpisodeSummary] = []

    # the whole session ---------------------------------------------------------------------------------------
    def run_episodes(self, goals: GoalSource, episodes: int,
                     on_goal: Callable[[int, Goal], None] = lambda *_: None,
                     on_summary: Callable[[EpisodeSummary], None] = lambda _: None) -> list[EpisodeSummary]:
        """``episodes`` episodes (0: until stopped). Raises ``Stopped`` when asked to stop."""
        index = 0
        self.wait_for_feedback()
        self.check_rig()  # before anything is sent to the arm
        while episodes <= 0 or index < episodes:
            self.wait_for_feedback()  # after a bus fault: until the driver publishes again
            self.ensure_stiff()
            start_error = self.move_to_start()
            goal = goals.next_goal(index)
            if goal is None:
                self.state = goals.prompt
                self._log(self.state)
                goal = self.hold(self._start_targets(), functools.partial(goals.next_goal, index))
            on_goal(index, goal)
            summary = self.run_episode(index, goal, start_error)
            self.summaries.append(summary)
            self._log(summary.log_line(episodes))
            on_summary(summary)
            index += 1
            if summary.aborted is None and (episodes <= 0 or index < episodes):
                self.show_final_pose()
        self.state = "done"
        return self.summaries

    def show_final_pose(self) -> None:
        """Hold where the episode ended for ``pause_after_episode_s`` (to look at it) before the next start pose."""
        final = self.arm.latest_joints()
        if final is None or self.settings.pause_after_episode_s <= 0:
            return
        self.state = "showing the final pose"
        deadline = self.clock.now() + self.settings.pause_after_episode_s
        self.hold(self._targets_at(final), lambda: self.clock.now() >= deadline)

    def wait_for_feedback(self) -> None:
        """Until the driver publishes joint_states with every joint of the arm (at start, after a bus fault)."""
        logged = False
        while (joints := self._fresh_joints()) is None:
            if not logged:
                self.state = "waiting for joint_states from the driver"
                self._log(self.state)
                logged = True
            self.clock.sleep_until(self.clock.now() + 0.05)
        if missing := joints.missing(self.task.joint_names):
            raise DeployError(f"joint_states lacks the joints {missing}; is the driver configured for an Ergo Jr?")

    def check_rig(self) -> None:
        """The rig must match the task: an ErgoPusher policy needs puck positions (within ``puck_timeout_s``), an
        ErgoReacher policy must not run where a puck tracker publishes (a pushing rig: the arm stands at the table).
        Discovery takes its time on a busy machine: the tracker gets ``tracker_discovery_s`` to show up."""
        topic = getattr(self.arm, "puck_topic", "puck")  # signed/puck with the deployment's key
        if not self.task.needs_puck:
            self.state = "looking for a puck tracker"
            deadline = self.clock.now() + self.settings.tracker_discovery_s
            while True:
                if self.arm.puck_tracker_present():
                    raise DeployError(f"a puck tracker publishes on '{topic}': this rig is set up for pushing "
                                      f"(adr/ErgoPusher-v0), the policy is {self.task.env_id}'s; nothing was sent to "
                                      f"the arm")
                if self.clock.now() >= deadline:
                    return
                self.clock.sleep_until(self.clock.now() + 0.05)
        deadline = self.clock.now() + self.settings.puck_timeout_s
        self.state = "waiting for the puck tracker"
        while (puck := self.arm.latest_puck()) is None or self.clock.now() - puck.received_at > \
                self.settings.feedback_timeout_s:
            if self.clock.now() >= deadline:
                raise DeployError(f"no puck position on '{topic}' within {self.settings.puck_timeout_s:g} s: an "
                                  f"{self.task.env_id} policy needs the rig's puck tracker (the stand-in: "
                                  f"adr-standin-arm --task pusher); nothing was sent to the arm")
            self.clock.sleep_until(self.clock.now() + 0.05)

    def place_puck(self, start: tuple[float, float]) -> str | None:
        """Ask for the puck at ``start`` and hold the start pose until the tracker sees it there; an abort reason
        when it does not come within ``start_timeout_s``."""
        self.state = "waiting for the puck at its start"
        self.arm.request_puck_start(start)
        deadline = self.clock.now() + self.settings.start_timeout_s
        requested = self.clock.now()

        def placed() -> bool:
            puck = self.arm.latest_puck()
            return (puck is not None and puck.received_at > requested and
                    math.dist(puck.position, start) <= self.settings.puck_start_tolerance_m and
                    math.hypot(*puck.velocity) <= self.settings.puck_rest_speed_m_s)

        if self.hold(self._start_targets(), lambda: placed() or self.clock.now() >= deadline) and placed():
            return None
        puck = self.arm.latest_puck()
        where = "no puck position" if puck is None else (
            f"the puck at ({puck.position[0]:.3f}, {puck.position[1]:.3f}), "
            f"moving at {math.hypot(*puck.velocity):.2f} m/s")
        return (f"the puck was not at its start ({start[0]:.3f}, {start[1]:.3f}) within "
                f"{self.settings.start_timeout_s:g} s ({where})")

    def ensure_stiff(self) -> None:
        """Stiffen the arm unless the driver says it is stiff; while the driver cannot (bus down), keep asking."""
        last_reason = None
        while self.arm.compliant() is not False:
            self.state = "stiffening the arm"
            try:
                self.arm.stiffen()
                return
            except ArmNotReady as reason:
                if str(reason) != last_reason:
                    self._log(f"cannot stiffen the arm yet ({reason}); retrying every {RETRY_PERIOD_S:g} s")
                    last_reason = str(reason)
                self.clock.sleep_until(self.clock.now() + RETRY_PERIOD_S)

    def move_to_start(self) -> float:
        """Stream the env's start pose until every joint is within tolerance (or the timeout); the largest error."""
        self.state = "moving to the start pose"
        start = self.task.start_pose
        deadline = self.clock.now() + self.settings.start_timeout_s

        def error() -> float:
            joints = self.arm.latest_joints()
            return math.inf if joints is None else max(abs(joints.positions[n] - start[n]) for n in start)

        self.hold(self._start_targets(), lambda: error() <= self.settings.start_tolerance_rad
                  or self.clock.now() >= deadline)
        worst = error()
        if worst > self.settings.start_tolerance_rad:
            self._log(f"start pose not reached within {self.settings.start_timeout_s:g} s: largest joint error "
                      f"{worst:.3f} rad; starting anyway")
        return worst

    def hold(self, targets: list[float], until: Callable[[], object]):
        """Stream ``targets`` at the control rate (keeps the driver's watchdog fed) until ``until()`` is truthy."""
        pacer = Pacer(self.clock, self.task.control_period_s)
        while not (result := until()):
            self.arm.send(targets)
            pacer.wait()
        return result

    # one episode ---------------------------------------------------------------------------------------------
    def run_episode(self, index: int, goal: Goal, start_error: float) -> EpisodeSummary:
        task, policy = self.task, self.deployable.policy
        steps = self.deployable.episode_steps
        self.state = f"episode {index + 1}"
        goal_observed = goal.observed(task)
        send_times: list[float] = []
        log = EpisodeSteps(index + 1, goal.world)
        max_age, aborted = 0.0, None
        if task.needs_puck and goal.puck_start is not None:
            aborted = self.place_puck(goal.puck_start)
            self.state = f"episode {index + 1}"
        pacer = Pacer(self.clock, task.control_period_s)  # after the placement: its first tick is the first step
        begin_episode = getattr(policy, "begin_episode", None)  # a policy with memory keeps the episode's history
        remember = getattr(policy, "remember", None)
        for step in range(0 if aborted else steps):
            now = self.clock.now()
            joints, puck, aborted = self._feedback(now)
            if aborted:
                break
            assert joints is not None  # _feedback returns the joints unless it aborts
            age = now - joints.received_at
            max_age = max(max_age, age)
            tip = self.kinematics.tip(joints.positions)
            obs = build_observation(task, joints, goal_observed, tip if task.needs_puck else None, puck)
            if step == 0 and begin_episode is not None:
                begin_episode(obs)
            action = clipped_action(policy(obs), task.act_dim)
            if remember is not None:
                remember(obs, action)
            self.arm.send(joint_targets(task, action, self._joint_order(joints)))
            send_times.append(self.clock.now())
            log.add(send_times[-1] - send_times[0], age, self._distance(goal, tip, puck), obs, action,
                    [joints.positions[name] for name in task.joint_names])
            pacer.wait()
        final_joints, final_puck = None, None
        if aborted is None:
            final_joints, final_puck, aborted = self._final_feedback(pacer.next_tick)
        summary = self._summary(index, goal, send_times, max_age, start_error, aborted, final_joints, final_puck)
        self._write_steps(log, summary, goal)
        return summary

    def _write_steps(self, log: EpisodeSteps, summary: EpisodeSummary, goal: Goal) -> None:
        if self.step_log is None:
            return
        try:
            self.step_log.append(log, summary.final_distance, goal.simulated)
        except OSError as error:  # the episodes go on; the summary still has the outcome
            self._log(f"episode {summary.episode}: steps not written to {self.step_log.path}: {error}")

    def _distance(self, goal: Goal, tip: np.ndarray, puck: PuckReading | None) -> float:
        """The task's distance [m]: puck-goal on the table (ErgoPusher) or tip-goal (ErgoReacher)."""
        if self.task.needs_puck:
            assert puck is not None  # a pusher episode aborts without puck readings (_feedback)
            return math.hypot(puck.position[0] - goal.world[0], puck.position[1] - goal.world[1])
        return float(np.linalg.norm(tip - np.asarray(goal.world)))

    def _feedback(self, now: float) -> tuple[JointReading | None, PuckReading | None, str | None]:
        limit = self.settings.feedback_timeout_s
        joints = self.arm.latest_joints()
        if joints is None or now - joints.received_at > limit:
            return None, None, f"no joint_states for more than {limit:g} s"
        if self.arm.compliant():
            return None, None, "the arm went compliant (driver watchdog, bus fault or a service call)"
        puck = None
        if self.task.needs_puck:
            puck = self.arm.latest_puck()
            if puck is None or now - puck.received_at > limit:
                return None, None, f"no puck position for more than {limit:g} s"
        return joints, puck, None

    def _final_feedback(self, end: float) -> tuple[JointReading | None, PuckReading | None, str | None]:
        """The first feedback received at or after ``end`` (one control period after the last command)."""
        deadline = end + self.settings.feedback_timeout_s
        while True:
            joints = self.arm.latest_joints()
            puck = self.arm.latest_puck() if self.task.needs_puck else None
            joints_ready = joints is not None and joints.received_at >= end
            puck_ready = not self.task.needs_puck or (puck is not None and puck.received_at >= end)
            if joints_ready and puck_ready:
                return joints, puck, None
            if self.clock.now() >= deadline:
                return None, None, (f"no joint_states{' or puck' if self.task.needs_puck else ''} after the last "
                                    f"step within {self.settings.feedback_timeout_s:g} s")
            self.clock.sleep_until(self.clock.now() + FEEDBACK_POLL_S)

    def _summary(self, index: int, goal: Goal, send_times: list[float], max_age: float, start_error: float,
                 aborted: str | None, joints: JointReading | None, puck: PuckReading | None) -> EpisodeSummary:
        task = self.task
        timing = TickTiming.of(send_times, task.control_period_s)
        distance = tip = None
        if joints is not None:
            tip_array = self.kinematics.tip(joints.positions)
            tip = cast("tuple[float, float, float]", tuple(float(v) for v in tip_array))
            distance = self._distance(goal, tip_array, puck)
        return EpisodeSummary(
            episode=index + 1, env_id=task.env_id, checkpoint=str(self.deployable.path),
            goal_source=goal.source, goal=goal.world, steps=len(send_times), final_distance=distance,
            success=distance is not None and distance < task.solved_distance,
            success_threshold=task.solved_distance, aborted=aborted,
            duration_s=(send_times[-1] - send_times[0] + task.control_period_s) if send_times else 0.0,
            control_rate_hz=timing.rate_hz, nominal_rate_hz=task.control_rate_hz,
            max_command_period_s=timing.max_period_s, late_commands=timing.late_ticks, max_feedback_age_s=max_age,
            start_error_rad=start_error, final_joint_positions=dict(joints.positions) if joints else {},
            final_tip=tip, final_puck=puck.position if puck else None, puck_start=goal.puck_start,
            simulated_final_distance=goal.simulated_final_distance, off_plane_m=goal.off_plane_m)

    # helpers ---------------------------------------------------------------------------------------------------
    def _joint_order(self, joints: JointReading) -> list[str]:
        return list(joints.positions)  # the driver's joint_states order = its command order

    def _start_targets(self) -> list[float]:
        joints = self.arm.latest_joints()
        order = self._joint_order(joints) if joints else list(self.task.joint_names)
        return [self.task.start_pose[name] for name in order]

    def _targets_at(self, joints: JointReading) -> list[float]:
        return [joints.positions[name] for name in self._joint_order(joints)]

    def _fresh_joints(self) -> JointReading | None:
        joints = self.arm.latest_joints()
        if joints is None or self.clock.now() - joints.received_at > self.settings.feedback_timeout_s:
            return None
        return joints

    def close(self) -> None:
        self.kinematics.close()
