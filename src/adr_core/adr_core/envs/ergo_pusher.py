"""adr/ErgoPusher-v0: the Poppy Ergo Jr pushes a puck across a table to a goal (PyBullet).

The robot stands on the table (z = 0) at the origin, facing -y. Actuated: m1 (base yaw), m2, m3, m5 (pitch);
m4 and m6 are held at 0. The puck (radius 2 cm, 10 g) rides on two prismatic joints (x, y) just above the
table, so its sliding is governed only by the two randomized joint properties: friction loss (a zero-velocity
motor whose force cap is the dry friction, PyBullet's usual joint-friction model) and viscous damping
(PyBullet jointDamping). The arm collides with the puck and with the table; the puck does not touch the table.
Start: puck at radius [0.08, 0.12] m, bearing within +-40 deg of -y; goal at radius [0.07, 0.14] m, bearing within
+-60 deg, at least 0.05 m from the puck. Arm at 0 (+- 0.05 rad on the actuated joints).

Observation (17, float32): actuated joint angles / (pi/2) (4), velocities / 11.9 rad/s (4), tip xyz, puck xy,
puck velocity xy, goal xy (m). (Until 2026-11-27 the tip's height was missing: 16 values; a policy could not tell a tip
over the puck from one at the puck except through the joint angles.)
Action (4, [-1, 1]): servo targets of m1, m2, m3, m5, scaled to +-pi/2. 4 physics steps of 1/240 s, 100 steps.
Reward: -||puck - goal|| (m, in the table plane). Info (every step): ``distance`` (puck-goal), ``final_distance``
(the same value). Solved: final distance < 0.025 m (1/8 of the ~0.2 m puck workspace, like Pusher-3DOF's 0.25 m
in its 2 m arena). Servos use the default gains/torques of config/spaces/ErgoReacher-v0.yaml unless the space has
per-joint ``<joint>_gain`` / ``<joint>_max_torque`` dimensions (an identified arm's); with ``puck_latency`` /
``puck_noise`` / ``puck_period`` the observed puck comes from a camera tracker's model (sim_to_real.py).
"""
from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..randomization import RandomizationSpace, load_space
from .ergo_jr import JOINT_NAMES, PHYSICS_DT, ErgoArmEnv
from .ergo_jr import SOLVED_DISTANCE as SOLVED_DISTANCE  # each env module names its solved threshold
from .quiet_pybullet import import_pybullet
from .randomized import RandomizedEnvMixin
from .sim_to_real import GAIN_SUFFIX, MAX_TORQUE_SUFFIX, PuckTracker, sim_to_real_dimensions

pb = import_pybullet()

ENV_ID = "adr/ErgoPusher-v0"
FRICTIONLOSS, DAMPING = "puck_frictionloss", "puck_damping"
ACTUATED = ("m1", "m2", "m3", "m5")
HELD = ("m4", "m6")
SERVO_SPACE = "adr/ErgoReacher-v0"  # servo defaults of the arm (same robot)
HELD_GAIN, HELD_MAX_TORQUE = 0.1, 0.39
BASE_POSITION = (0.0, 0.0, 0.07)
FRAME_SKIP = 4
ACTION_SCALE = math.pi / 2
VELOCITY_SCALE = 11.9
START_NOISE = 0.05
PUCK_RADIUS, PUCK_HEIGHT, PUCK_MASS = 0.02, 0.02, 0.01
PUCK_Z = 0.001 + PUCK_HEIGHT / 2
PUCK_TRAVEL = 0.25  # prismatic joint limits (m) on x and y
PUCK_RING, PUCK_BEARING = (0.08, 0.12), math.radians(40)
GOAL_RING, GOAL_BEARING = (0.07, 0.14), math.radians(60)
MIN_START_DISTANCE = 0.05
OBS_SIZE = 17
PUSH_HEIGHT = PUCK_Z  # m: a tip at the puck's centre height pushes it (the potential shaping's target height)


def _servo_defaults(joints: tuple[str, ...]) -> tuple[list[float], list[float]]:
    """Gains and torques of the arm's servos from the ErgoReacher space (m1 borrows m2's values)."""
    reference = dict(zip((space := load_space(SERVO_SPACE)).names, space.reference()))
    source = {"m1": "m2"}
    gains = [float(reference[f"{source.get(j, j)}_gain"]) for j in joints]
    torques = [float(reference[f"{source.get(j, j)}_max_torque"]) for j in joints]
    return gains, torques


def add_table_and_puck(cid: int) -> tuple[int, int]:
    """The table (top at z = 0) and the puck on its two slide joints, in the physics world ``cid`` (the env's and the
    stand-in arm's). The arm collides with both; the puck does not touch the table (its sliding is the joints')."""
    half = [0.3, 0.3, 0.01]
    collision = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=half, physicsClientId=cid)
    visual = pb.createVisualShape(pb.GEOM_BOX, halfExtents=half, rgbaColor=[0.76, 0.64, 0.5, 1.0], physicsClientId=cid)
    table = int(pb.createMultiBody(0.0, collision, visual, basePosition=[0.0, 0.0, -0.01], physicsClientId=cid))
    # a fixed anchor, a massless-ish x carriage, and the puck on a y slide: joint positions = world (x, y)
    shape = pb.createCollisionShape(pb.GEOM_CYLINDER, radius=PUCK_RADIUS, height=PUCK_HEIGHT, physicsClientId=cid)
    look = pb.createVisualShape(pb.GEOM_CYLINDER, radius=PUCK_RADIUS, length=PUCK_HEIGHT,
                                rgbaColor=[0.85, 0.25, 0.2, 1.0], physicsClientId=cid)
    puck = pb.createMultiBody(
        baseMass=0.0, basePosition=[0.0, 0.0, PUCK_Z],
        linkMasses=[1e-4, PUCK_MASS], linkCollisionShapeIndices=[-1, shape], linkVisualShapeIndices=[-1, look],
        linkPositions=[[0, 0, 0], [0, 0, 0]], linkOrientations=[[0, 0, 0, 1]] * 2,
        linkInertialFramePositions=[[0, 0, 0]] * 2, linkInertialFrameOrientations=[[0, 0, 0, 1]] * 2,
        linkParentIndices=[0, 1], linkJointTypes=[pb.JOINT_PRISMATIC] * 2, linkJointAxis=[[1, 0, 0], [0, 1, 0]],
        physicsClientId=cid,
    )
    for j in (0, 1):
        pb.changeDynamics(puck, j, jointLowerLimit=-PUCK_TRAVEL, jointUpperLimit=PUCK_TRAVEL,
                          linearDamping=0.0, angularDamping=0.0, physicsClientId=cid)
    pb.setCollisionFilterPair(puck, table, 1, -1, 0, physicsClientId=cid)
    return table, int(puck)


def set_puck_damping(cid: int, puck: int, damping: float) -> None:
    """Viscous damping (N*s/m) of both slide joints."""
    for j in (0, 1):
        pb.changeDynamics(puck, j, jointDamping=float(damping), physicsClientId=cid)


def command_puck_friction(cid: int, puck: int, friction: float) -> None:
    """Dry friction (N) of both slide joints: a zero-velocity motor capped at that force (after every reset)."""
    pb.setJointMotorControlArray(puck, [0, 1], pb.VELOCITY_CONTROL, targetVelocities=[0.0, 0.0],
                                 forces=[float(friction)] * 2, physicsClientId=cid)


def place_puck(cid: int, puck: int, position: tuple[float, float],
               velocity: tuple[float, float] = (0.0, 0.0)) -> None:
    for j in (0, 1):
        pb.resetJointState(puck, j, float(position[j]), float(velocity[j]), physicsClientId=cid)


def puck_state(cid: int, puck: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """The puck's table-plane position (m, world frame) and velocity (m/s)."""
    (px, vx), (py, vy) = ((s[0], s[1]) for s in pb.getJointStates(puck, [0, 1], physicsClientId=cid))
    return (px, py), (vx, vy)


class ErgoPusherEnv(RandomizedEnvMixin, ErgoArmEnv, gym.Env):
    metadata = {"render_modes": ["rgb_array"], "render_fps": round(1.0 / (FRAME_SKIP * PHYSICS_DT))}

    def __init__(self, render_mode: str | None = None, space: RandomizationSpace | str | None = None,
                 width: int = 320, height: int = 320) -> None:
        sim = self._init_arm(render_mode, (width, height), BASE_POSITION, ACTUATED, HELD, FRAME_SKIP)
        cid = sim.client
        self._servo_defaults = _servo_defaults(ACTUATED)
        self._gains, self._max_torques = (list(v) for v in self._servo_defaults)
        self._tracker = PuckTracker(PHYSICS_DT)
        self._table, self._puck = add_table_and_puck(cid)
        self._goal_marker = sim.add_marker(0.012, (0.15, 0.75, 0.25, 1.0))
        self._initial_state = sim.save()
        self._goal = np.zeros(3)
        self._goal[2] = 0.002
        self._goal_xy = (0.0, 0.0)
        n = len(ACTUATED)
        self._obs_scale = np.array([1 / ACTION_SCALE] * n + [1 / VELOCITY_SCALE] * n + [1.0] * 9, dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (len(ACTUATED),), dtype=np.float32)
        self.observation_space = spaces.Box(-np.inf, np.inf, (OBS_SIZE,), dtype=np.float32)
        self._init_randomization(space, ENV_ID, (FRICTIONLOSS, DAMPING),
                                 sim_to_real_dimensions(ACTUATED, servo=True, puck=True))
        self._sim_to_real.attach(self.randomization_space)
        self._tracker.attach(self.randomization_space)

    def _apply_parameters(self, values: np.ndarray) -> None:
        set_puck_damping(self.sim.client, self._puck, self._param(values, DAMPING))
        self._puck_friction = self._param(values, FRICTIONLOSS)

        def param(name: str, absent: float) -> float:
            return self._param(values, name, absent)

        self._sim_to_real.set(param)
        self._tracker.set(param)
        gains, torques = self._servo_defaults  # an identified arm's servos when the space has them
        self._gains = [param(f"{j}{GAIN_SUFFIX}", g) for j, g in zip(ACTUATED, gains)]
        self._max_torques = [param(f"{j}{MAX_TORQUE_SUFFIX}", t) for j, t in zip(ACTUATED, torques)]

    def _command_puck_friction(self) -> None:
        command_puck_friction(self.sim.client, self._puck, self._puck_friction)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        parameters = self._begin_episode_parameters()
        super().reset(seed=seed)
        sim, rng = self.sim, self.np_random
        sim.restore(self._initial_state)
        puck = self._on_ring(rng, PUCK_RING, PUCK_BEARING)
        goal = self._on_ring(rng, GOAL_RING, GOAL_BEARING)
        while math.dist(puck, goal) < MIN_START_DISTANCE:
            goal = self._on_ring(rng, GOAL_RING, GOAL_BEARING)
        self._goal[:2] = goal
        self._goal_xy = (float(goal[0]), float(goal[1]))
        place_puck(sim.client, self._puck, (float(puck[0]), float(puck[1])))
        self._command_puck_friction()
        start = rng.uniform(-START_NOISE, START_NOISE, len(ACTUATED))
        sim.set_joint_angles(sim.joint_indices, np.zeros(len(JOINT_NAMES)))
        sim.set_joint_angles(self._actuated, start)
        self._start_servos(start.tolist(), HELD_GAIN, HELD_MAX_TORQUE)
        if self._tracker.present:
            self._tracker.reset((float(puck[0]), float(puck[1])), rng)
        sim.move_marker(self._goal_marker, self._goal)
        sim.end_effector_position()  # bring link, collision and render transforms to the new pose
        obs = self._observation()
        distance = self._distance
        return obs, {"parameters": parameters, "distance": distance, "final_distance": distance}

    @staticmethod
    def _on_ring(rng: np.random.Generator, ring: tuple[float, float], bearing: float) -> np.ndarray:
        radius, angle = rng.uniform(*ring), rng.uniform(-bearing, bearing)
        return np.array([radius * math.sin(angle), -radius * math.cos(angle)])

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self._actuate(self.sim.scaled_targets(action, ACTION_SCALE))
        obs = self._observation()
        distance = self._distance
        return obs, -distance, False, False, {"distance": distance, "final_distance": distance}

    def _physics(self, steps: int) -> None:
        if not self._tracker.present:
            self.sim.step(steps)
            return
        client, puck, tracker, rng = self.sim.client, self._puck, self._tracker, self.np_random
        for _ in range(steps):
            pb.stepSimulation(physicsClientId=client)
            tracker.after_physics_step(puck_state(client, puck)[0], rng)

    def _observation(self) -> np.ndarray:
        sim = self.sim
        angles, velocities = self._read_actuated()
        (px, py), (vx, vy) = puck_state(sim.client, self._puck)
        gx, gy = self._goal_xy
        self._distance = math.hypot(px - gx, py - gy)  # the task's distance: the true puck, never the tracker's
        if self._tracker.present:
            (px, py), (vx, vy) = self._tracker.reading()
        tip = sim.end_effector_position()
        obs = np.array(angles + velocities + [tip[0], tip[1], tip[2], px, py, vx, vy, gx, gy], dtype=np.float32)
        obs *= self._obs_scale
        return obs

    @property
    def puck_position(self) -> np.ndarray:
        return np.array(puck_state(self.sim.client, self._puck)[0])

    def set_puck_velocity(self, velocity: tuple[float, float]) -> None:
        """Kick the puck (tests and demos): sets its slide-joint velocities, keeping its position."""
        position = puck_state(self.sim.client, self._puck)[0]
        place_puck(self.sim.client, self._puck, position, velocity)

    @property
    def goal_position(self) -> np.ndarray:
        return self._goal[:2].copy()

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array":
            return None
        return self.sim.render(*self._render_size, target=(0.0, -0.06, 0.03), distance=0.42, yaw=60.0, pitch=-35.0)
