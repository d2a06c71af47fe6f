"""The sampler node's propose service: a repeated question gets the same answer, so a lost answer or a second client
never advances an iteration twice (issue 18); other iterations are refused with the reason."""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from rclpy_probe import probe_node, result_of, wait_until

from adr_interfaces.msg import ParticleRewards
from adr_interfaces.srv import ProposeParameters
from adr_ros import qos, topics
from adr_ros.arrays import to_field
from graph_harness.ros_processes import executable, isolated_ros_env, running
from graph_harness.signing import SAMPLER, key_parameter, run_key, signer

OVERRIDES = "{svpg.num_particles: 2, torch_threads: 1}"


def sampler_command(run_dir: Path, *parameters: str) -> list[str]:
    return [executable("adr_sampler_node", "sampler_node"), "--ros-args", "-p", f"overrides:='{OVERRIDES}'",
            "-p", f"run_dir:={run_dir}", *key_parameter(run_key(run_dir)),
            *(arg for p in parameters for arg in ("-p", p))]


def propose_caller(node, run_dir: Path) -> Callable[[int], ProposeParameters.Response]:  # noqa: ANN001
    """``ask(iteration)``: one signed propose call of this run (empty run id), once the sampler serves."""
    client = node.create_client(ProposeParameters, topics.PROPOSE_SERVICE)
    signing = signer(run_key(run_dir))
    wait_until(lambda: client.service_is_ready(), 20.0, "the sampler's propose service")

    def ask(iteration: int) -> ProposeParameters.Response:
        request = signing.sign(ProposeParameters.Request(count=0, iteration=iteration), to=SAMPLER)
        return result_of(client.call_async(request), 10.0, f"propose iteration {iteration}")
    return ask


def test_asking_again_returns_the_same_settings(ros_domain_id: int, tmp_path: Path) -> None:
    command = sampler_command(tmp_path / "run")
    with probe_node("sampler_test_probe", ros_domain_id) as node, \
            running(command, isolated_ros_env(ros_domain_id), tmp_path / "sampler.log"):
        ask = propose_caller(node, tmp_path / "run")

        first = ask(0)
        assert first.success and [p.iteration for p in first.proposals] == [0, 0], first.message
        again = ask(0)  # the trainer's answer was lost, or a second client asks
        assert again.success and "asked again" in again.message
        assert [list(p.values) for p in again.proposals] == [list(p.values) for p in first.proposals]
        waiting = ask(1)  # the rewards of iteration 0 have not come
        assert not waiting.success and "waiting for the rewards of iteration 0" in waiting.message
        other = ask(7)
        assert not other.success and "iteration 7 asked; the next iteration is 0" in other.message
        current = ask(-1)  # "whichever is current": a read of the answered iteration, nothing advanced
        assert current.success and "iteration 0" in current.message and "asked again" in current.message
        assert [list(p.values) for p in current.proposals] == [list(p.values) for p in first.proposals]
        assert ask(0).proposals[0].iteration == 0


def test_a_sampler_that_awaits_no_rewards_advances_only_in_turn(ros_domain_id: int, tmp_path: Path) -> None:
    """Issue 30: a second client's ``iteration = -1`` calls advanced a UDR sampler (it awaits no rewards) until its
    trainer's next call was refused and the run ended. Now -1 reads the answered iteration; only the next one
    advances."""
    command = [executable("adr_sampler_node", "sampler_node"), "--ros-args",
               "-p", "overrides:='{sampler: udr, torch_threads: 1}'", "-p", f"run_dir:={tmp_path / 'run'}",
               *key_parameter(run_key(tmp_path / "run"))]
    with probe_node("sampler_turn_probe", ros_domain_id) as node, \
            running(command, isolated_ros_env(ros_domain_id), tmp_path / "sampler.log"):
        ask = propose_caller(node, tmp_path / "run")

        def values(response: ProposeParameters.Response) -> list[list[float]]:
            return [list(p.values) for p in response.proposals]

        first = ask(0)  # the trainer
        assert first.success and {p.iteration for p in first.proposals} == {0}, first.message
        for _ in range(5):  # a second client
            other = ask(-1)
            assert other.success and values(other) == values(first) and "asked again" in other.message
        refused = ask(3)
        assert not refused.success and "iteration 3 asked; the next iteration is 1" in refused.message
        second = ask(1)  # the trainer's next call, in turn
        assert second.success and {p.iteration for p in second.proposals} == {1}, second.message
        assert values(ask(-1)) == values(second) and values(ask(1)) == values(second)


def test_rewards_published_before_the_match_still_reach_the_sampler(ros_domain_id: int, tmp_path: Path) -> None:
    """The discriminator may publish an iteration's rewards before its publisher has matched the sampler's
    subscription (a fast iteration right after start-up): the rewards are kept for late matches, so the sampler
    completes the iteration instead of waiting for rewards that never come (a fresh-clone CI run failed so)."""
    with probe_node("sampler_rewards_probe", ros_domain_id) as node, \
            running(sampler_command(tmp_path / "run"), isolated_ros_env(ros_domain_id), tmp_path / "sampler.log"):
        ask = propose_caller(node, tmp_path / "run")
        signing = signer(run_key(tmp_path / "run"), sender="/discriminator_stand_in")

        assert ask(0).success
        with probe_node("discriminator_stand_in", ros_domain_id) as late:  # a new participant: discovery to come
            publisher = late.create_publisher(ParticleRewards, topics.PARTICLE_REWARDS, qos.RELIABLE_HISTORY)
            assert publisher.get_subscription_count() == 0  # the case under test: published before the match
            publisher.publish(signing.sign(ParticleRewards(iteration=0, slots=to_field(np.arange(2), np.uint32),
                                                           rewards=to_field(np.array([0.1, -0.2]), np.float64))))
            answers: list[ProposeParameters.Response] = []
            wait_until(lambda: answers.append(ask(1)) or answers[-1].success, 20.0,
                       "the sampler's proposals of iteration 1 (it got the rewards of iteration 0)")
            assert [p.iteration for p in answers[-1].proposals] == [1, 1]


def test_calls_and_rewards_of_another_run_are_refused(ros_domain_id: int, tmp_path: Path) -> None:
    """Issue 18: a second run on the same DDS domain (or an earlier launch) asks with its own run id and publishes
    rewards for exactly the iteration this sampler awaits; none of it gets in, this run's own still does. Signed for
    another run (even with the same key), a message's signature does not verify here (issue 47)."""
    command = sampler_command(tmp_path / "run", "run_id:=run-a")
    key = run_key(tmp_path / "run")
    with probe_node("sampler_run_id_probe", ros_domain_id) as node, \
            running(command, isolated_ros_env(ros_domain_id), tmp_path / "sampler.log"):
        client = node.create_client(ProposeParameters, topics.PROPOSE_SERVICE)
        publisher = node.create_publisher(ParticleRewards, topics.PARTICLE_REWARDS, qos.RELIABLE_HISTORY)
        wait_until(lambda: client.service_is_ready(), 20.0, "the sampler's propose service")

        def ask(iteration: int, run_id: str = "run-a") -> ProposeParameters.Response:
            request = signer(key, run_id).sign(ProposeParameters.Request(run_id=run_id, count=0, iteration=iteration),
                                               to=SAMPLER)
            return result_of(client.call_async(request), 10.0, f"propose iteration {iteration}")

        def rewards(run_id: str) -> ParticleRewards:
            return signer(key, run_id, "/other").sign(ParticleRewards(
                run_id=run_id, iteration=0, slots=to_field(np.arange(2), np.uint32),
                rewards=to_field(np.array([0.1, -0.2]), np.float64)))

        foreign = ask(0, run_id="run-b")
        assert not foreign.success and foreign.message == "refused: the call is not signed with the run's key"
        first = ask(0)
        assert first.success and {p.run_id for p in first.proposals} == {"run-a"}
        wait_until(lambda: publisher.get_subscription_count() > 0, 20.0, "the sampler's rewards subscription")
        publisher.publish(rewards("run-b"))  # the awaited iteration, well formed: only the run id is wrong
        time.sleep(1.0)
        waiting = ask(1)
        assert not waiting.success and "waiting for the rewards of iteration 0" in waiting.message
        publisher.publish(rewards("run-a"))
        answers: list[ProposeParameters.Response] = []
        wait_until(lambda: answers.append(ask(1)) or answers[-1].success, 20.0, "proposals of iteration 1")


def test_unsigned_calls_and_rewards_do_not_steer_the_sampler(ros_domain_id: int, tmp_path: Path) -> None:
    """Issue 47: anyone on the domain can read the run id and publish; without the run's key they neither advance a
    UDR sampler's iterations nor get their rewards applied to the iteration it awaits (the real ones are, after)."""
    key = run_key(tmp_path / "run")
    with probe_node("sampler_forger_probe", ros_domain_id) as node, \
            running(sampler_command(tmp_path / "run", "run_id:=run-a"), isolated_ros_env(ros_domain_id),
                    tmp_path / "sampler.log"):
        client = node.create_client(ProposeParameters, topics.PROPOSE_SERVICE)
        publisher = node.create_publisher(ParticleRewards, topics.PARTICLE_REWARDS, qos.RELIABLE_HISTORY)
        wait_until(lambda: client.service_is_ready(), 20.0, "the sampler's propose service")
        real = signer(key, "run-a")

        def ask(iteration: int, signed: bool) -> ProposeParameters.Response:
            request = ProposeParameters.Request(run_id="run-a", count=0, iteration=iteration)
            return result_of(client.call_async(real.sign(request, to=SAMPLER) if signed else request), 10.0,
                             "propose")

        for _ in range(3):  # the forger's "next iteration" calls
            refused = ask(0, signed=False)
            assert not refused.success and "not signed with the run's key" in refused.message
        assert ask(0, signed=True).success
        forged = ParticleRewards(run_id="run-a", iteration=0, slots=to_field(np.arange(2), np.uint32),
                                 rewards=to_field(np.array([-0.7, -0.7]), np.float64))
        wait_until(lambda: publisher.get_subscription_count() > 0, 20.0, "the sampler's rewards subscription")
        publisher.publish(forged)  # plausible rewards for the awaited iteration, unsigned
        replayed = real.sign(ParticleRewards(run_id="run-a", iteration=0, slots=to_field(np.arange(2), np.uint32),
                                             rewards=to_field(np.array([0.1, -0.2]), np.float64)))
        time.sleep(1.0)
        waiting = ask(1, signed=True)
        assert not waiting.success and "waiting for the rewards of iteration 0" in waiting.message
        publisher.publish(replayed)  # the real ones (signed) ...
        answers: list[ProposeParameters.Response] = []
        wait_until(lambda: answers.append(ask(1, signed=True)) or answers[-1].success, 20.0, "iteration 1")
        publisher.publish(replayed)  # ... and a copy of them later: a replay, dropped
        time.sleep(0.5)
        log = (tmp_path / "sampler.log").read_text()
        assert "adr/particle_rewards: unsigned" in log and "adr/propose_parameters: unsigned" in log
