"""The simulated Poppy Ergo Jr shared by the Ergo envs: one PyBullet DIRECT client, the URDF, servo commands.

Servos are PyBullet's POSITION_CONTROL motors: each physics step the motor drives the joint velocity
towards ``gain * (target - angle) / dt`` with at most ``max_torque`` N*m. ``gain`` (PyBullet's positionGain)
is the fraction of the position error the servo tries to remove per physics step: lower gain -> slower,
softer servo. ``max_torque`` caps the torque: lower -> the joint can lift less against gravity.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .asset_paths import ERGO_JR_URDF
from .quiet_pybullet import import_pybullet
from .registry import env_record
from .sim_to_real import SimToReal

pb = import_pybullet()

JOINT_NAMES: tuple[str, ...] = ("m1", "m2", "m3", "m4", "m5", "m6")
END_EFFECTOR_LINK = "end_effector"
PHYSICS_DT = 1.0 / 240.0
VELOCITY_GAIN = 1.0
_ZEROS = (0.0,) * len(JOINT_NAMES)
_VELOCITY_GAINS = (VELOCITY_GAIN,) * len(JOINT_NAMES)


class ErgoJrSim:
    """A fresh DIRECT physics world holding one fixed-base Ergo Jr (plus whatever the env adds)."""

    def __init__(self, base_position: Sequence[float]) -> None:
        self.client = -1
        self.client = pb.connect(pb.DIRECT)
        cid = self.client
        pb.setGravity(0.0, 0.0, -9.81, physicsClientId=cid)
        pb.setPhysicsEngineParameter(fixedTimeStep=PHYSICS_DT, deterministicOverlappingPairs=1, physicsClientId=cid)
        self.robot = pb.loadURDF(
            str(ERGO_JR_URDF), basePosition=list(base_position), useFixedBase=True,
            flags=pb.URDF_USE_INERTIA_FROM_FILE, physicsClientId=cid,
        )
        names = {pb.getJointInfo(self.robot, j, physicsClientId=cid)[1].decode(): j
                 for j in range(pb.getNumJoints(self.robot, physicsClientId=cid))}
        link_names = {pb.getJointInfo(self.robot, j, physicsClientId=cid)[12].decode(): j
                      for j in range(pb.getNumJoints(self.robot, physicsClientId=cid))}
        self.joint_indices: list[int] = [names[n] for n in JOINT_NAMES]
        self.end_effector = link_names[END_EFFECTOR_LINK]
        # joints start limp: no default velocity motor acting as hidden friction
        pb.setJointMotorControlArray(self.robot, self.joint_indices, pb.VELOCITY_CONTROL,
                                     forces=[0.0] * len(JOINT_NAMES), physicsClientId=cid)

    def joint(self, name: str) -> int:
        return self.joint_indices[JOINT_NAMES.index(name)]

    def set_joint_angles(self, joints: Sequence[int], angles: Sequence[float] | np.ndarray) -> None:
        for j, q in zip(joints, angles):
            pb.resetJointState(self.robot, j, float(q), 0.0, physicsClientId=self.client)

    def command(
        self, joints: list[int], targets: Sequence[float], gains: list[float], max_torques: list[float],
        max_velocity: float | None = None,
    ) -> None:
        """Servo targets (rad). ``max_torques`` is passed on every call: PyBullet resets an omitted cap to a huge
        one. ``max_velocity`` (rad/s) caps each motor's speed (PyBullet's per-joint ``maxVelocity``)."""
        n = len(joints)
        if max_velocity is not None:
            for j, q, gain, torque in zip(joints, targets, gains, max_torques):
                pb.setJointMotorControl2(self.robot, j, pb.POSITION_CONTROL, targetPosition=q, targetVelocity=0.0,
                                         positionGain=gain, velocityGain=VELOCITY_GAIN, force=torque,
                                         maxVelocity=max_velocity, physicsClientId=self.client)
            return
        pb.setJointMotorControlArray(
            self.robot, joints, pb.POSITION_CONTROL, targetPositions=targets, targetVelocities=_ZEROS[:n],
            positionGains=gains, velocityGains=_VELOCITY_GAINS[:n], forces=max_torques, physicsClientId=self.client,
        )

    def scaled_targets(self, action: np.ndarray, scale: float) -> list[float]:
        """``clip(action, -1, 1) * scale`` as a list, in plain Python (faster than numpy for 4 values)."""
        return [(-scale if x < -1.0 else scale if x > 1.0 else x * scale) for x in action.tolist()]

    def step(self, substeps: int) -> None:
        for _ in range(substeps):
            pb.stepSimulation(physicsClientId=self.client)

    def joint_states(self, joints: list[int]) -> tuple[list[float], list[float]]:
        states = pb.getJointStates(self.robot, joints, physicsClientId=self.client)
        return [s[0] for s in states], [s[1] for s in states]

    def joint_positions(self) -> np.ndarray:
        """All six joint angles (rad) in ``JOINT_NAMES`` order, e.g. for sensor_msgs/JointState."""
        return np.array(self.joint_states(self.joint_indices)[0])

    def joint_velocities(self) -> np.ndarray:
        return np.array(self.joint_states(self.joint_indices)[1])

    def end_effector_position(self) -> tuple[float, float, float]:
        """Tip position (m) of the current joint angles. Forward kinematics is recomputed (+0.3 us): PyBullet's
        cached link transforms lag one physics step behind, and after ``resetJointState`` they (and the collision
        and render transforms, which this call also updates) still show the old pose."""
        position: tuple[float, float, float] = pb.getLinkState(self.robot, self.end_effector,
                                                               computeForwardKinematics=True,
                                                               physicsClientId=self.client)[4]
        return position

    def add_marker(self, radius: float, rgba: Sequence[float]) -> int:
        """A visual-only sphere (no collision, no mass) used to show goals."""
        shape = pb.createVisualShape(pb.GEOM_SPHERE, radius=radius, rgbaColor=list(rgba), physicsClientId=self.client)
        return int(pb.createMultiBody(baseMass=0.0, baseVisualShapeIndex=shape, physicsClientId=self.client))

    def add_floor(self, half_size: float = 0.4, rgba: Sequence[float] = (0.78, 0.8, 0.84, 1.0)) -> int:
        """A visual-only floor tile at z = 0 (only for pictures; nothing collides with it)."""
        shape = pb.createVisualShape(pb.GEOM_BOX, halfExtents=[half_size, half_size, 0.002], rgbaColor=list(rgba),
                                     physicsClientId=self.client)
        return int(pb.createMultiBody(baseMass=0.0, baseVisualShapeIndex=shape, basePosition=[0.0, 0.0, -0.002],
                                      physicsClientId=self.client))

    def move_marker(self, marker: int, position: Sequence[float] | np.ndarray) -> None:
        pb.resetBasePositionAndOrientation(marker, list(position), [0.0, 0.0, 0.0, 1.0], physicsClientId=self.client)

    def save(self) -> int:
        return int(pb.saveState(physicsClientId=self.client))

    def restore(self, state_id: int) -> None:
        pb.restoreState(stateId=state_id, physicsClientId=self.client)

    def render(
        self, width: int, height: int, target: Sequence[float], distance: float, yaw: float, pitch: float
    ) -> np.ndarray:
        view = pb.computeViewMatrixFromYawPitchRoll(
            list(target), distance, yaw, pitch, 0.0, 2, physicsClientId=self.client
        )
        proj = pb.computeProjectionMatrixFOV(45.0, width / height, 0.01, 5.0, physicsClientId=self.client)
        _, _, rgba, _, _ = pb.getCameraImage(width, height, view, proj, renderer=pb.ER_TINY_RENDERER,
                                             lightDirection=[1.0, 0.5, 2.0], physicsClientId=self.client)
        return np.asarray(rgba, dtype=np.uint8).reshape(height, width, 4)[:, :, :3].copy()

    def close(self) -> None:
        if self.client >= 0:
            pb.disconnect(physicsClientId=self.client)
            self.client = -1

    def __del__(self) -> None:  # envs that are never closed must not leak physics servers
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown: pybullet may already be gone
            pass


SOLVED_DISTANCE = env_record("adr/ErgoReacher-v0").solved.threshold  # 0.025 m, tip (or puck) to goal: both Ergo tasks


class ErgoArmEnv:
    """What both Ergo envs share: all six joints for sensor_msgs/JointState (rviz draws the arm from the same URDF),
    the tip position, the solved test and closing the simulation. Mixed into envs that own ``self.sim``."""

    joint_names: tuple[str, ...] = JOINT_NAMES
    sim: ErgoJrSim
    _gains: list[float]
    _max_torques: list[float]
    np_random: np.random.Generator  # gymnasium.Env's

    def _init_arm(self, render_mode: str | None, size: tuple[int, int], base_position: Sequence[float],
                  actuated: Sequence[str], held: Sequence[str], frame_skip: int) -> ErgoJrSim:
        """The render settings, a fresh simulated arm, and the indices of its actuated and held joints."""
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.render_mode = render_mode
        self._render_size = size
        self.sim = ErgoJrSim(base_position)
        self._actuated = [self.sim.joint(m) for m in actuated]
        self._held = [self.sim.joint(m) for m in held]
        self._frame_skip = int(frame_skip)
        self._sim_to_real = SimToReal(actuated, frame_skip)  # attached to the space once the env has one
        return self.sim

    def _start_servos(self, start: list[float], held_gain: float, held_max_torque: float) -> None:
        """Episode start: held joints at 0, actuated ones holding ``start`` (also the latency queue's content)."""
        n_held = len(self._held)
        self.sim.command(self._held, [0.0] * n_held, [held_gain] * n_held, [held_max_torque] * n_held)
        self._sim_to_real.reset(start)
        self.sim.command(self._actuated, start, self._gains, self._max_torques, self._sim_to_real.max_speed)

    def _actuate(self, targets: list[float]) -> None:
        """One control step: the policy's servo targets (through the sim-to-real effects when the space has any),
        then ``frame_skip`` physics steps."""
        effects = self._sim_to_real
        if not effects.present:
            self.sim.command(self._actuated, targets, self._gains, self._max_torques)
            self._physics(self._frame_skip)
            return
        for effective, steps in effects.segments(targets):
            self.sim.command(self._actuated, effective, self._gains, self._max_torques, effects.max_speed)
            self._physics(steps)

    def _physics(self, steps: int) -> None:
        """``steps`` physics steps (an env that senses something between them overrides this)."""
        self.sim.step(steps)

    def _read_actuated(self) -> tuple[list[float], list[float]]:
        """Actuated joint angles (with the sensor noise of the space, if any) and velocities."""
        angles, velocities = self.sim.joint_states(self._actuated)
        if self._sim_to_real.present:
            angles = self._sim_to_real.read_angles(angles, self.np_random)
        return angles, velocities

    def joint_positions(self) -> np.ndarray:
        return self.sim.joint_positions()

    def joint_velocities(self) -> np.ndarray:
        return self.sim.joint_velocities()

    @property
    def tip_position(self) -> np.ndarray:
        return np.array(self.sim.end_effector_position())

    def is_solved(self, episode_return: float, info: dict[str, Any]) -> bool:
        return float(info["final_distance"]) < SOLVED_DISTANCE

    def close(self) -> None:
        self.sim.close()
