"""The doors of a run that need no key, closed (issue 61, item 1), one by one without processes: the trainer believes
only an instance's signed account of a goal, a goal is signed for one instance and one start of the run, a key file
of another user is refused, a running node's parameters (use_sim_time included) are read-only, cancel requests are
refused, and a receipt counts only for the probe and instance it was signed for (the wait on DDS:
tests/integration/test_trajectory_receipts.py). The attacks from outside, against a whole graph, are in
tests/integration/test_fuzz_storm.py."""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import rclpy
from rclpy.context import Context
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.task import Future

from adr_interfaces.action import RollOut
from adr_interfaces.msg import ParameterSet
from adr_ros.signing import KeyError_, RunSigning, create_key_file, read_key
from adr_trainer_node.dispatcher import RolloutDispatcher

KEY = bytes(range(32))


@pytest.fixture
def context() -> Iterator[Context]:
    context = Context()
    rclpy.init(context=context)
    try:
        yield context
    finally:
        rclpy.shutdown(context=context)


def signing(name: str, start: str = "start-1") -> RunSigning:
    return RunSigning(KEY, "run-a", name, lambda _line: None, start=start)


class SignedModeClient:
    """An ActionClient whose goal responses the test gives by hand (a rogue server's, say)."""

    def __init__(self) -> None:
        self.sent: list[tuple[RollOut.Goal, bytes, Future]] = []

    def server_is_ready(self) -> bool:
        return True

    def send_goal_async(self, goal: RollOut.Goal, goal_uuid: Any = None) -> Future:
        future = Future()
        self.sent.append((goal, bytes(goal_uuid.uuid), future))
        return future


def account(goal_id: bytes, sender: RunSigning, stage: int, success: bool = False, message: str = "",
            to: str = "/adr_trainer") -> Any:
    feedback = sender.sign(RollOut.Feedback(stage=stage, success=success, message=message), to=to)
    return RollOut.Impl.FeedbackMessage(goal_id=SimpleNamespace(uuid=list(goal_id)), feedback=feedback)


def test_the_trainer_believes_only_an_instances_signed_account_of_a_goal(context: Context) -> None:
    """A server of another node under adr_sim_0's name answered 'rejected' and sent unsigned results first; they
    were taken (issue 61: the run took 2.8x as long). Now only the instance's own signed feedback counts."""
    node = Node("adr_trainer", context=context)
    try:
        dispatcher = RolloutDispatcher(node, ["adr_sim_0"], rollout_timeout=600.0, signing=signing("/adr_trainer"))
        client = SignedModeClient()
        dispatcher._clients = {"adr_sim_0": client}  # type: ignore[assignment]
        dispatcher.start([ParameterSet(slot=0)], with_reference=False, min_policy_version=0,
                         newest_policy_version=lambda: 0, slots_done=set)
        dispatcher.poll(set())
        (goal, goal_id, response), = client.sent
        sim0, sim1 = signing("/adr_sim_0"), signing("/adr_sim_1")
        assert sim0.accept(goal, "adr_sim_0/roll_out", to_me=True)  # signed for adr_sim_0 ...
        assert not sim1.accept(goal, "adr_sim_1/roll_out", to_me=True)  # ... and for no other instance
        assert not signing("/adr_sim_0", start="start-0").accept(goal, "x", to_me=True)  # nor another start
        response.set_result(SimpleNamespace(accepted=False))  # the stranger's "rejected": not read
        dispatcher.poll(set())
        assert dispatcher.busy() and dispatcher.report.failures == []
        unsigned = account(goal_id, sim0, RollOut.Feedback.STAGE_FINISHED, success=False, message="forged")
        unsigned.feedback.signature.mac = [0] * 32
        dispatcher.on_feedback("adr_sim_0", unsigned)
        by_another = account(goal_id, sim1, RollOut.Feedback.STAGE_FINISHED, success=False)  # the run's key, not it
        dispatcher.on_feedback("adr_sim_0", by_another)
        elsewhere = account(goal_id, sim0, RollOut.Feedback.STAGE_FINISHED, success=False, to="/another_trainer")
        dispatcher.on_feedback("adr_sim_0", elsewhere)
        dispatcher.poll(set())
        assert dispatcher.busy() and dispatcher.report.failures == [] and dispatcher.rollouts_done["adr_sim_0"] == 0
        dispatcher.on_feedback("adr_sim_0", account(goal_id, sim0, RollOut.Feedback.STAGE_ACCEPTED))
        dispatcher.on_feedback("adr_sim_0", account(goal_id, sim0, RollOut.Feedback.STAGE_FINISHED, success=True))
        dispatcher.poll(set())
        assert not dispatcher.busy() and dispatcher.rollouts_done["adr_sim_0"] == 1
        assert dispatcher.report.failures == []
    finally:
        node.destroy_node()


def test_a_key_file_of_another_user_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 61: a run.key planted by another user (mode 0600, owned by nobody) was trusted by the launcher."""
    key = create_key_file(tmp_path / "run.key")
    assert read_key(key)
    if os.geteuid() == 0:
        os.chown(key, 65534, 65534)  # nobody
    else:
        monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)
    with pytest.raises(KeyError_, match=r"key file .*run.key belongs to another user"):
        read_key(key)
    with pytest.raises(KeyError_, match="belongs to another user"):
        create_key_file(key)  # a launcher finding it in a run dir: refused, not used
    from adr.graph import GRAPHS

    with pytest.raises(ValueError, match=r"^train_sim: key file .* belongs to another user"):
        GRAPHS["train_sim"].nodes({"key_file": str(key), "run_dir": str(tmp_path / "run")})


def test_a_running_nodes_parameters_are_read_only_use_sim_time_included(context: Context) -> None:
    """Issue 61: use_sim_time=true set from outside stalled the trainer silently for 127 s."""
    from adr_ros.parameters import freeze_parameters

    node = Node("adr_trainer", context=context)
    lines: list[str] = []
    node.diagnostics = SimpleNamespace(reject=lambda reason, detail: lines.append(f"{reason}: {detail}"))  # type: ignore[attr-defined]
    try:
        freeze_parameters(node)
        result = node.set_parameters([Parameter("use_sim_time", value=True)])
        assert not result[0].successful and "read-only" in result[0].reason
        assert node.get_parameter("use_sim_time").value is False
        assert lines == ["set_parameters: a request to set use_sim_time=True: a running node's parameters are "
                         "read-only"]
    finally:
        node.destroy_node()


def test_cancel_requests_are_refused_and_counted() -> None:
    from rclpy.action import CancelResponse

    from adr_sim_node.node import SimNode

    refused: list[str] = []
    sim = SimpleNamespace(diagnostics=SimpleNamespace(reject=lambda reason, detail: refused.append(reason)))
    assert SimNode.on_cancel(sim, object()) == CancelResponse.REJECT  # type: ignore[arg-type]
    assert refused == ["cancel"]


def test_a_receipt_for_another_instance_or_an_unsent_probe_confirms_nothing(context: Context) -> None:
    from adr_interfaces.msg import TrajectoryReceipt
    from adr_ros.receipts import ReceiptWaiter

    sim = Node("adr_sim_0", context=context)
    try:
        waiter = ReceiptWaiter(sim, signing("/adr_sim_0"), {"adr_trainer"}, SimpleNamespace(publish=lambda m: None),
                               "run-a")
        waiter.probe()
        (probe,) = waiter._probes
        trainer = signing("/adr_trainer")
        for receipt, to in ((TrajectoryReceipt(run_id="run-a", instance_id="adr_sim_0", probe_sequence=probe + 1),
                             "/adr_sim_0"),  # a probe never sent
                            (TrajectoryReceipt(run_id="run-a", instance_id="adr_sim_0", probe_sequence=probe),
                             "/adr_sim_1")):  # signed for another instance
            waiter._on_receipt(trainer.sign(receipt, to=to))
        assert not waiter.confirmed()
        waiter._on_receipt(trainer.sign(TrajectoryReceipt(run_id="run-a", instance_id="adr_sim_0",
                                                          probe_sequence=probe), to="/adr_sim_0"))
        assert waiter.confirmed()
    finally:
        sim.destroy_node()
