"""Over DDS: a helper stopped by Ctrl-C (sampler, discriminator) keeps serving while the trainer is listed and a
client of its save_checkpoint service is on the graph, and stops once that client has left with the trainer's
process; a node merely named adr_trainer does not hold it (it did, for up to 300 s), nor does another node's client.
The predicates the helpers use: tests/ros/test_linger.py."""
from __future__ import annotations

from rclpy_probe import probe_node, wait_until

from adr_interfaces.srv import SaveCheckpoint
from adr_ros import qos, topics
from adr_ros.lifecycle import trainer_may_call

SERVICE = topics.SAMPLER_SAVE_CHECKPOINT


def test_a_helper_lingers_for_the_trainers_client_of_its_save_service_only(ros_domain_id: int) -> None:
    linger = trainer_may_call(SERVICE)
    with probe_node("adr_sampler", ros_domain_id) as helper:
        with probe_node("test_probe", ros_domain_id) as probe:  # a client that is not the trainer's
            probe.create_client(SaveCheckpoint, SERVICE, qos_profile=qos.CRITICAL_SERVICE)
            wait_until(lambda: helper.count_clients(SERVICE) == 1, 30.0, "the probe's client on the helper's graph")
            assert not linger(helper)
        wait_until(lambda: helper.count_clients(SERVICE) == 0, 30.0, "the probe's client leaving")
        with probe_node("adr_trainer", ros_domain_id):  # a node of the trainer's name without a client
            wait_until(lambda: "adr_trainer" in helper.get_node_names(), 30.0, "adr_trainer on the helper's graph")
            assert not linger(helper)
        with probe_node("adr_trainer", ros_domain_id) as trainer:  # the trainer, which asks for checkpoints
            trainer.create_client(SaveCheckpoint, SERVICE, qos_profile=qos.CRITICAL_SERVICE)
            wait_until(lambda: linger(helper), 30.0, "the trainer's save_checkpoint client on the helper's graph")
        wait_until(lambda: not linger(helper), 30.0, "the client leaving with the trainer's participant")
