"""The stand-in arm's motion: each XL-320 horn moved by PyBullet physics of the Ergo Jr, not at a constant speed.

Every physics step (1/240 s, as the training envs) each servo acts on the command it received ``latency_s`` earlier:
- torque on: PyBullet's position servo toward the goal (``position_gain``), with its torque capped at
  ``stall_torque_nm * torque_scale * torque-limit register`` and its speed at the moving-speed register (or the
  no-load speed); gravity and the links' inertias (the URDF's) decide how fast and how far the joint gets;
- gear play: the goal reaches the joint through a play of ``backlash_deg`` (after a reversal the goal moves that far
  before the joint's target does), so a joint settles up to half the play from its goal;
- torque off (compliant, or after an alarm shutdown): only ``compliant_friction_nm`` of gear friction holds it.
The sensors report the joint angle in whole position units (0.29 degrees), the speed and the applied torque as load.

Time: ``advance(motors, dt)`` simulates ``dt`` seconds of wall time (the emulator's serving thread calls it every
tick). A backlog longer than ``MAX_CATCH_UP_S`` (the machine stalled the thread) is dropped and counted in
``dropped_s`` rather than simulated in a burst.
"""
from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping

from adr_core.envs import ergo_pusher, ergo_reacher
from adr_core.envs.ergo_jr import PHYSICS_DT, ErgoJrSim, pb

from .puck import PuckSetting, PuckWorld, wall_clock
from .settings import StandIn, Wire
from .xl320 import Xl320Motor

MAX_CATCH_UP_S = 0.1
Command = tuple[float, float, float]  # (goal joint angle rad, speed cap rad/s, torque cap N*m; 0 = compliant)


class PhysicsArm:
    """Six servos of ``standin`` on one simulated Ergo Jr; ``start_deg``: initial motor-frame angles by motor id;
    ``puck``: an ErgoPusher rig (table and puck in the same world) with that puck setting."""

    def __init__(self, standin: StandIn, start_deg: Mapping[int, float] | None = None,
                 puck: PuckSetting | None = None) -> None:
        self.standin = standin
        self.servo = standin.servo
        self.sim = ErgoJrSim(ergo_pusher.BASE_POSITION if puck is not None else ergo_reacher.BASE_POSITION)
        self.puck = PuckWorld(self.sim, puck) if puck is not None else None
        self.wires: dict[int, Wire] = {w.motor_id: w for w in standin.wiring}
        self.joints: dict[int, int] = {w.motor_id: self.sim.joint(w.joint) for w in standin.wiring}
        start_deg = start_deg or {}
        start = {i: w.joint_rad(start_deg.get(i, 0.0)) for i, w in self.wires.items()}
        self.sim.set_joint_angles([self.joints[i] for i in start], list(start.values()))
        self.play = dict(start)  # the goal as it reaches the joint through the gear play
        self.latency_steps = round(self.servo.latency_s / PHYSICS_DT)
        compliant = {i: (start[i], 0.0, 0.0) for i in self.wires}
        self.pending: deque[dict[int, Command]] = deque([compliant] * self.latency_steps)
        self.steps = 0
        self.dropped_s = 0.0
        self._backlog = 0.0
        self._half_play = math.radians(self.servo.backlash_deg) / 2.0

    # ------------------------------------------------------------------------------------------------ emulator side
    def advance(self, motors: Mapping[int, Xl320Motor], dt: float) -> None:
        self._backlog += max(0.0, dt)
        if self._backlog > MAX_CATCH_UP_S:
            self.dropped_s += self._backlog - MAX_CATCH_UP_S
            self._backlog = MAX_CATCH_UP_S
        while self._backlog >= PHYSICS_DT:
            self._backlog -= PHYSICS_DT
            self.step(self.commands(motors))
        self.publish(motors)
        if self.puck is not None:
            self.puck.record(wall_clock())

    def commands(self, motors: Mapping[int, Xl320Motor]) -> dict[int, Command]:
        """What each motor's control table asks for now, in joint terms."""
        out = {}
        for motor_id, wire in self.wires.items():
            motor = motors.get(motor_id)
            if motor is None:
                continue
            speed = motor.moving_speed_deg_s
            cap = self.servo.no_load_speed_rad_s if speed is None else min(math.radians(speed),
                                                                           self.servo.no_load_speed_rad_s)
            out[motor_id] = (wire.joint_rad(motor.goal_degrees), cap, self.servo.max_torque_nm * motor.torque_fraction)
        return out

    def publish(self, motors: Mapping[int, Xl320Motor]) -> None:
        """The sensors: joint angle, speed and applied torque of every wired motor into its control table."""
        for motor_id, wire in self.wires.items():
            motor = motors.get(motor_id)
            if motor is None:
                continue
            angle, velocity, _, torque = pb.getJointState(self.sim.robot, self.joints[motor_id],
                                                          physicsClientId=self.sim.client)
            motor.publish(wire.motor_deg(angle), wire.direction * math.degrees(velocity),
                          wire.direction * torque / self.servo.stall_torque_nm)

    # ------------------------------------------------------------------------------------------------ physics side
    def step(self, commands: Mapping[int, Command]) -> None:
        """One physics step: ``commands`` join the latency line; the ones issued ``latency_s`` ago act now."""
        self.pending.append(dict(commands))
        acting = self.pending.popleft()
        client, robot = self.sim.client, self.sim.robot
        for motor_id, (goal, speed_cap, torque_cap) in acting.items():
            joint = self.joints[motor_id]
            play = self.play[motor_id]
            if goal - play > self._half_play:  # the play operator: the joint's target follows the goal
                play = goal - self._half_play  # once the goal has crossed the gap
            elif play - goal > self._half_play:
                play = goal + self._half_play
            self.play[motor_id] = play
            if torque_cap <= 0.0:
                pb.setJointMotorControl2(robot, joint, pb.VELOCITY_CONTROL, targetVelocity=0.0,
                                         force=self.servo.compliant_friction_nm, physicsClientId=client)
            else:
                pb.setJointMotorControl2(robot, joint, pb.POSITION_CONTROL, targetPosition=play, targetVelocity=0.0,
                                         positionGain=self.servo.position_gain, velocityGain=1.0, force=torque_cap,
                                         maxVelocity=speed_cap, physicsClientId=client)
        pb.stepSimulation(physicsClientId=client)
        self.steps += 1
        if self.puck is not None:
            self.puck.after_step()

    def joint_angles(self) -> dict[int, float]:
        """Joint angles (rad) by motor id, exact (not quantized as the sensors report them)."""
        return {i: pb.getJointState(self.sim.robot, j, physicsClientId=self.sim.client)[0]
                for i, j in self.joints.items()}

    def close(self) -> None:
        self.sim.close()
