"""discriminator_node as a real process over Fast DDS: per iteration it publishes the rewards an in-process
DiscriminatorRewarder computes from the same trajectories (score before training), refuses bad trajectories without
crashing, writes loadable checkpoints, resumes from the run's manifest, and refuses to start when it cannot serve."""
from __future__ import annotations

import random
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
from rclpy.node import Node
from rclpy_probe import DiagnosticCounters, probe_node, result_of, wait_until

from adr_core.agents import Actor, ActorPolicy
from adr_core.base.checkpoint import load_checkpoint, save_checkpoint
from adr_core.base.seeding import component_seed
from adr_core.discriminator import DiscriminatorRewarder
from adr_core.envs import make_env
from adr_core.rollout import KIND_CODES, Trajectory, rollout, trajectory_digest
from adr_discriminator_node.checkpoint_payload import make_payload
from adr_interfaces.msg import AcceptedTrajectories, ParticleRewards
from adr_interfaces.msg import Trajectory as TrajectoryMsg
from adr_interfaces.srv import SaveCheckpoint
from adr_ros import qos, topics, trajectories
from adr_ros.arrays import from_field, to_field
from adr_ros.checkpoints import checkpoint_dir, write_manifest
from adr_ros.run_config import build_config
from adr_ros.signing import RunSigning
from graph_harness.ros_processes import executable, isolated_ros_env, running
from graph_harness.signing import DISCRIMINATOR, key_parameter, run_key, signer

pytestmark = pytest.mark.integration

OVERRIDES = ("{env_id: adr/LunarLander-v0, seed: 5, max_episode_steps: 40, svpg.num_particles: 2, "
             "svpg.rollout_length: 1, discriminator.batch_size: 16, discriminator.steps_per_transition: 0.25}")
CONFIG = build_config("", OVERRIDES)
SLOTS = 2  # num_particles * rollout_length
ITERATIONS = 3
NODE = "adr_discriminator"


@dataclass
class Expected:
    """Trajectories of each iteration (slot order) and what the in-process rewarder makes of them."""

    randomized: list[list[Trajectory]]
    reference: list[list[Trajectory]]
    rewards: list[np.ndarray]
    states: list[dict]  # rewarder state after each iteration


@pytest.fixture(scope="module")
def expected() -> Expected:
    env = make_env(CONFIG.env_id, max_episode_steps=CONFIG.max_episode_steps)
    space = env.unwrapped.randomization_space
    torch.manual_seed(0)
    policy = ActorPolicy(Actor(8, 2, (32, 32)))
    rng = np.random.default_rng(0)
    randomized, reference = [], []
    for k in range(ITERATIONS):
        units = rng.random((SLOTS, space.ndim))
        randomized.append([rollout(env, policy, params=space.from_normalized(units[s]), params_normalized=units[s],
                                   kind="randomized", iteration=k, slot=s, run_seed=CONFIG.seed, exploration_noise=0.3)
                           for s in range(SLOTS)])
        reference.append([rollout(env, policy, params=space.reference(), params_normalized=space.reference_normalized(),
                                  kind="reference", iteration=k, slot=s, run_seed=CONFIG.seed, exploration_noise=0.3)
                          for s in range(SLOTS)])
    rewarder = DiscriminatorRewarder(8, 2, CONFIG.discriminator, component_seed(CONFIG.seed, "discriminator"), "cpu")
    rewards, states = [], []
    for k in range(ITERATIONS):  # Trainer.run_iteration's discriminator calls, in its order
        rewards.append(rewarder.score(randomized[k]))
        rewarder.train(randomized[k], reference[k], rewarder.steps_for(randomized[k]))
        states.append(rewarder.state_dict())
    return Expected(randomized, reference, rewards, states)


def _msg(trajectory: Trajectory) -> TrajectoryMsg:
    return trajectories.to_msg(trajectory, env_id=CONFIG.env_id, names=["main_engine_power"], instance_id="test")


@dataclass
class Probe:
    node: Node
    trajectories_pub: object
    rewards: dict[int, ParticleRewards]
    diagnostics: DiagnosticCounters
    save_client: object
    accepted_pub: object
    key: Path  # the run's key: the probe plays the trainer and the simulators, so it signs what it sends
    signing: RunSigning

    def publish(self, msg: TrajectoryMsg) -> None:
        self.trajectories_pub.publish(self.signing.sign(msg))

    def accept(self, iteration: int, accepted: list[Trajectory]) -> None:
        """What the trainer says once it accepted an iteration's trajectories: the discriminator scores these."""
        self.accepted_pub.publish(self.signing.sign(AcceptedTrajectories(
            iteration=iteration, kinds=[KIND_CODES[t.kind] for t in accepted], slots=[t.slot for t in accepted],
            digests=[trajectory_digest(t) for t in accepted])))

    def wait_for_discriminator(self) -> None:
        wait_until(lambda: self.trajectories_pub.get_subscription_count() >= 1
                   and self.node.count_publishers(topics.PARTICLE_REWARDS) >= 1, 20.0, "the discriminator node")
        assert self.save_client.wait_for_service(timeout_sec=10.0)

    def rewards_of(self, iteration: int) -> np.ndarray:
        wait_until(lambda: iteration in self.rewards, 15.0, f"the rewards of iteration {iteration}")
        msg = self.rewards[iteration]
        assert from_field(msg.slots, np.uint32).tolist() == list(range(SLOTS))
        return from_field(msg.rewards, np.float64)

    def save(self, iteration: int, directory: Path) -> SaveCheckpoint.Response:
        request = self.signing.sign(SaveCheckpoint.Request(iteration=iteration, directory=str(directory)),
                                    to=DISCRIMINATOR)
        return result_of(self.save_client.call_async(request), 10.0, "save_checkpoint")


@pytest.fixture(scope="module")
def probe(ros_domain_id: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Probe]:
    key = run_key(tmp_path_factory.mktemp("key"))
    with probe_node("discriminator_test_probe", ros_domain_id) as node:
        rewards: dict[int, ParticleRewards] = {}
        node.create_subscription(ParticleRewards, topics.PARTICLE_REWARDS,
                                 lambda msg: rewards.setdefault(msg.iteration, msg), qos.RELIABLE_STREAM)
        yield Probe(node, node.create_publisher(TrajectoryMsg, topics.TRAJECTORIES, qos.RELIABLE_STREAM), rewards,
                    DiagnosticCounters(node), node.create_client(SaveCheckpoint, topics.DISCRIMINATOR_SAVE_CHECKPOINT),
                    node.create_publisher(AcceptedTrajectories, topics.ACCEPTED_TRAJECTORIES, qos.RELIABLE_HISTORY),
                    key, signer(key, sender="/trainer_stand_in"))


def _command(run_dir: Path, key: Path, *extra: str) -> list:
    return [executable("adr_discriminator_node", "discriminator_node"), "--ros-args",
            "-p", f"overrides:='{OVERRIDES}'", "-p", f"run_dir:={run_dir}", *key_parameter(key), *extra]


def _refused(good: Trajectory) -> list[tuple[str, TrajectoryMsg]]:
    """Variants of ``good``, each refused for the reason named with it (the diagnostics counter)."""
    nan_obs = _msg(good)
    obs = good.obs.copy()
    obs[3, 1] = np.nan
    nan_obs.observations = to_field(obs)
    wrong_dim, short_terminated, unknown_kind, other_env, bad_slot, far_ahead, empty = (_msg(good) for _ in range(7))
    wrong_dim.obs_dim = 7
    short_terminated.terminated = short_terminated.terminated[:-1]
    unknown_kind.kind = 7
    other_env.parameters.env_id = "adr/Pusher3DOF-v0"
    bad_slot.parameters.slot = SLOTS
    far_ahead.parameters.iteration = 50
    empty.length = 0
    empty.observations, empty.actions, empty.next_observations = to_field([]), to_field([]), to_field([])
    empty.rewards, empty.terminated = to_field([]), []
    forged = _msg(good)  # issue 30: well formed, for an awaited slot, with a reward no LunarLander step gives
    forged.rewards = to_field(np.full(good.length, 1e6, np.float32))
    return [("implausible", forged), ("malformed", nan_obs), ("malformed", wrong_dim), ("malformed", short_terminated),
            ("malformed", unknown_kind), ("env_id", other_env), ("slot", bad_slot), ("too_far_ahead", far_ahead),
            ("empty", empty)]


def test_rewards_equal_the_in_process_rewarder(expected: Expected, probe: Probe, ros_domain_id: int,
                                                tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    env = isolated_ros_env(ros_domain_id)
    with running(_command(run_dir, probe.key), env, tmp_path / "discriminator.log") as process:
        probe.wait_for_discriminator()
        refused = _refused(expected.randomized[0][0])
        for _, bad in refused:
            probe.publish(bad)
        # issue 30: well-formed copies the trainer refuses (a policy version it never published, a setting it never
        # dispatched), arriving before the real rollouts: the discriminator scores what the trainer accepted
        real = expected.randomized[0][0]
        forged_version = _msg(real)
        forged_version.policy_version = 2**62
        forged_setting = _msg(real)
        forged_setting.parameters.values = to_field(np.array([19.5]), np.float64)
        for forged in (forged_version, forged_setting):
            probe.publish(forged)
        wrong_reference = _msg(expected.reference[0][0])  # a "reference" rollout under another setting
        wrong_reference.parameters.values = to_field(np.array([9.0]), np.float64)
        probe.publish(wrong_reference)
        probe.accept(1, expected.randomized[1] + expected.reference[1])  # the trainer's word may come first
        late_forgery = _msg(expected.randomized[1][1])
        late_forgery.policy_version = 2**62
        probe.publish(late_forgery)  # after the acceptance of its iteration: refused at once
        # iteration 1 complete before iteration 0: scored only after 0; a duplicate of the first copy is dropped
        arrivals = [t for k in (1, 0) for t in expected.randomized[k] + expected.reference[k]]
        random.Random(1).shuffle(arrivals)
        arrivals.insert(2, arrivals[1])
        for trajectory in arrivals:
            probe.publish(_msg(trajectory))
        wait_until(lambda: probe.diagnostics.count(NODE, "trajectories") >= 10, 10.0, "the trajectories in")
        assert 0 not in probe.rewards  # no iteration is scored before the trainer said which copies count
        probe.accept(0, expected.randomized[0] + expected.reference[0])
        for k in (0, 1):
            np.testing.assert_array_equal(probe.rewards_of(k), expected.rewards[k])  # bit for bit
        probe.publish(_msg(expected.reference[0][1]))  # iteration 0 is done: stale

        counters = Counter(f"rejected_{reason}" for reason, _ in refused)
        counters.update(rejected_duplicate=1, rejected_stale=1, rejected_mismatch=1, rejected_not_accepted=1,
                        trajectories=10, iterations=2)
        wait_until(lambda: all(probe.diagnostics.count(NODE, key) == n for key, n in counters.items()), 5.0,
                   f"diagnostics {counters}, have {probe.diagnostics.latest.get(NODE)}")
        assert process.poll() is None

        outside = probe.save(1, tmp_path / "saved")  # a service writes only inside its run directory
        assert not outside.success and "outside the run directory" in outside.message
        assert not (tmp_path / "saved").exists()
        saved = probe.save(1, checkpoint_dir(run_dir))
        assert saved.success, saved.message
        payload = load_checkpoint(saved.path)
        assert payload["iteration"] == 1 and Path(saved.path).name == "discriminator-000001.pt"
        for name, tensor in expected.states[1]["network"].items():
            assert torch.equal(payload["state"]["network"][name], tensor), name
        too_early = probe.save(7, checkpoint_dir(run_dir))
        assert not too_early.success and "last completed: 1" in too_early.message
    assert process.returncode == 0, (tmp_path / "discriminator.log").read_text()
    # Ctrl-C wrote the snapshots it kept: the last two completed iterations
    assert sorted(p.name for p in checkpoint_dir(run_dir).glob("*.pt")) == ["discriminator-000000.pt",
                                                                          "discriminator-000001.pt"]


def test_resume_continues_after_the_manifests_iteration(expected: Expected, probe: Probe, ros_domain_id: int,
                                                        tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    rewarder = DiscriminatorRewarder(8, 2, CONFIG.discriminator, 0, "cpu")
    rewarder.load_state_dict(expected.states[1])
    save_checkpoint(checkpoint_dir(run_dir) / "discriminator-000001.pt", make_payload(1, rewarder, CONFIG))
    write_manifest(run_dir, 1, {"discriminator": "discriminator-000001.pt"})
    probe.rewards.pop(2, None)
    with running(_command(run_dir, probe.key, "-p", "resume:=true"), isolated_ros_env(ros_domain_id),
                 tmp_path / "discriminator.log"):
        probe.wait_for_discriminator()
        for trajectory in expected.reference[2] + expected.randomized[2]:
            probe.publish(_msg(trajectory))
        probe.accept(2, expected.randomized[2] + expected.reference[2])
        np.testing.assert_array_equal(probe.rewards_of(2), expected.rewards[2])


def test_refuses_to_start_when_it_cannot_serve(ros_domain_id: int, tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt"
    checkpoint_dir(corrupt).mkdir(parents=True)
    (checkpoint_dir(corrupt) / "latest.json").write_text("{not json")
    env = isolated_ros_env(ros_domain_id)
    key = run_key(tmp_path)
    starts = {
        "does not learn from rewards": [executable("adr_discriminator_node", "discriminator_node"), "--ros-args",
                                        "-p", "overrides:='{sampler: udr}'", *key_parameter(key)],
        "latest.json is not a checkpoint manifest": _command(corrupt, key, "-p", "resume:=true"),
        "nothing to resume": _command(tmp_path / "empty", key, "-p", "resume:=true"),
        "key_file is empty": [executable("adr_discriminator_node", "discriminator_node"), "--ros-args",
                              "-p", f"overrides:='{OVERRIDES}'"],
    }
    processes = {reason: subprocess.Popen([str(c) for c in command], env=env, stderr=subprocess.PIPE, text=True)
                 for reason, command in starts.items()}
    for reason, process in processes.items():
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 1 and "[fatal]" in stderr and reason in stderr, stderr


def test_forged_copies_without_the_key_never_crowd_out_the_real_rollouts(expected: Expected, probe: Probe,
                                                                         ros_domain_id: int, tmp_path: Path) -> None:
    """Issue 47: 4 copies of every trajectory of iteration 0, arriving first without the run's key (or with a key
    of their own), are dropped before they can count toward a slot's copy cap; the real ones are scored."""
    probe.rewards.pop(0, None)
    with running(_command(tmp_path / "run", probe.key), isolated_ros_env(ros_domain_id),
                 tmp_path / "discriminator.log"):
        probe.wait_for_discriminator()
        outsider = signer(run_key(tmp_path / "outsider"), sender="/forger")
        real = expected.randomized[0] + expected.reference[0]
        for trajectory in real:
            for copy in range(4):
                forged = _msg(trajectory)
                probe.trajectories_pub.publish(forged if copy % 2 else outsider.sign(forged))
        for trajectory in real:
            probe.publish(_msg(trajectory))
        probe.accept(0, real)
        np.testing.assert_array_equal(probe.rewards_of(0), expected.rewards[0])
        wait_until(lambda: probe.diagnostics.count(NODE, "dropped_unsigned") == 2 * len(real)
                   and probe.diagnostics.count(NODE, "dropped_bad_signature") == 2 * len(real), 5.0,
                   f"the dropped copies counted, have {probe.diagnostics.latest.get(NODE)}")
        assert probe.diagnostics.count(NODE, "rejected_too_many_copies") == 0
