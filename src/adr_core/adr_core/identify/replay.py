"""Replay a log's commands in the env's simulated arm: what the simulator's servos would have done with them.

The replay steps the same PyBullet model the Ergo envs step (``ErgoJrSim``: the URDF, the env's base position, the
table for the pusher, physics steps of 1/240 s) under an ``ArmModel``: each joint's position gain, torque cap and
gear play, one speed cap and one latency. At each physics step every joint acts on the newest command sent at least
``latency_s`` before (the start angle before the first), through its play operator (the env's ``<joint>_backlash``:
the target only moves once the command leaves a band of that width), as a position motor with that gain, torque cap
and speed cap: the env's sim-to-real dimensions, at physics-step resolution. The replay of a segment starts at rest
at the segment's first measured angles; the angles it predicts are read at the measurements' times.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from ..envs import ergo_pusher, ergo_reacher
from ..envs.ergo_jr import JOINT_NAMES, PHYSICS_DT, VELOCITY_GAIN, ErgoJrSim, pb
from .excitation import Segment
from .log import ArmLog

ENV_MODULES = {ergo_reacher.ENV_ID: ergo_reacher, ergo_pusher.ENV_ID: ergo_pusher}
UNLIMITED_SPEED = 100.0  # rad/s: no speed cap (the env's own servos without ``max_joint_speed``)


@dataclass(frozen=True)
class ServoParams:
    gain: float  # PyBullet positionGain
    max_torque: float  # N*m
    backlash: float  # rad, the play band's full width


@dataclass(frozen=True)
class ArmModel:
    servos: Mapping[str, ServoParams]  # every joint of JOINT_NAMES
    max_speed: float  # rad/s
    latency_s: float

    def with_joint(self, joint: str, servo: ServoParams, max_speed: float, latency_s: float) -> ArmModel:
        return replace(self, servos={**self.servos, joint: servo}, max_speed=max_speed, latency_s=latency_s)


def env_model(env_id: str) -> ArmModel:
    """The env's own servos (no latency, no play, no speed cap): what an untuned simulator assumes."""
    from ..randomization import load_space

    module = ENV_MODULES[env_id]
    reference = dict(zip((space := load_space(ergo_reacher.ENV_ID)).names, space.reference()))
    servos = {}
    for joint in JOINT_NAMES:
        source = "m2" if joint == "m1" else joint
        if joint in module.ACTUATED:
            servos[joint] = ServoParams(float(reference[f"{source}_gain"]), float(reference[f"{source}_max_torque"]),
                                        0.0)
        else:
            servos[joint] = ServoParams(module.HELD_GAIN, module.HELD_MAX_TORQUE, 0.0)
    return ArmModel(servos, UNLIMITED_SPEED, 0.0)


class Replay:
    """One simulated arm, reused for every replay of one log."""

    def __init__(self, env_id: str, log: ArmLog) -> None:
        module = ENV_MODULES[env_id]
        self.log = log
        self.sim = ErgoJrSim(module.BASE_POSITION)
        if env_id == ergo_pusher.ENV_ID:  # the arm may touch the table; the puck is put out of its reach
            _, puck = ergo_pusher.add_table_and_puck(self.sim.client)
            ergo_pusher.place_puck(self.sim.client, puck, (ergo_pusher.PUCK_TRAVEL, ergo_pusher.PUCK_TRAVEL))
        self.joints = list(self.sim.joint_indices)
        self._segments: dict[Segment, tuple[np.ndarray, np.ndarray]] = {}

    def measured(self, segment: Segment) -> tuple[np.ndarray, np.ndarray]:
        if segment not in self._segments:
            self._segments[segment] = self.log.states_in(segment)
        return self._segments[segment]

    def predict(self, segment: Segment, model: ArmModel) -> np.ndarray:
        """The six joint angles the model predicts at the segment's measurement times, (M, 6)."""
        times, angles = self.measured(segment)
        start, q0 = times[0], angles[0]
        steps = int(math.ceil((times[-1] - start) / PHYSICS_DT)) + 2
        step_times = start + np.arange(steps) * PHYSICS_DT
        arrivals = self.log.command_t + model.latency_s
        # the command acting at each step's start and end; a command arriving within a step acts for the part of the
        # step after its arrival (the step's target blends the two by that fraction): the loss is continuous in the
        # latency, where switching at whole physics steps would make it a staircase
        acting = np.searchsorted(arrivals, step_times, side="right") - 1
        ending = np.searchsorted(arrivals, step_times + PHYSICS_DT, side="right") - 1
        client, robot = self.sim.client, self.robot_id
        for joint, q in zip(self.joints, q0):
            pb.resetJointState(robot, joint, float(q), 0.0, physicsClientId=client)
        servos = [model.servos[name] for name in JOINT_NAMES]
        halves = [s.backlash / 2.0 for s in servos]
        play = [float(q) for q in q0]
        trace = np.empty((steps, len(JOINT_NAMES)))
        last: tuple[int, int] = (-2, -2)
        commands = self.log.commands
        for i in range(steps):
            k, k_end = int(acting[i]), int(ending[i])
            if (k, k_end) != last:
                goal = commands[k] if k >= 0 else q0
                if k_end != k:
                    fraction = (step_times[i] + PHYSICS_DT - arrivals[k_end]) / PHYSICS_DT
                    goal = goal + fraction * (commands[k_end] - goal)
                for j, (joint, servo) in enumerate(zip(self.joints, servos)):
                    target = float(goal[j])
                    play[j] = min(max(play[j], target - halves[j]), target + halves[j])
                    pb.setJointMotorControl2(robot, joint, pb.POSITION_CONTROL, targetPosition=play[j],
                                             targetVelocity=0.0, positionGain=servo.gain,
                                             velocityGain=VELOCITY_GAIN, force=servo.max_torque,
                                             maxVelocity=model.max_speed, physicsClientId=client)
                last = (k, k_end)
            trace[i] = [s[0] for s in pb.getJointStates(robot, self.joints, physicsClientId=client)]
            pb.stepSimulation(physicsClientId=client)
        return np.stack([np.interp(times, step_times, trace[:, j]) for j in range(len(JOINT_NAMES))], axis=1)

    @property
    def robot_id(self) -> int:
        return int(self.sim.robot)

    def close(self) -> None:
        self.sim.close()
