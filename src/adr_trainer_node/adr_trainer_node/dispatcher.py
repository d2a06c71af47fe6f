"""Hands the settings of an iteration to simulator instances as RollOut goals and watches them finish.

An instance executes one goal at a time and holds up to ``goals_per_instance`` (2): the next goal waits in its queue
(SerialGoals) while the result of the one before travels back, so the instance never idles for a round trip of the
action protocol (~10-20 ms a goal, 15-30 goals an iteration). Goals go to the least loaded instance first, in slot
order, and an instance gets its next goal only once it has answered the one before: it executes its goals in the
order they were sent (SerialGoals keeps the order of the answered requests). With one instance it rolls out the slots
in the in-process trainer's order, which matters where an episode depends on the one before in the same env
(ErgoPusher). A goal that is rejected, fails, or outlives ``rollout_timeout`` (the instance died or hangs) goes back to
the queue for another instance; the instance is skipped for one timeout period (or until it restarted). Rollouts are
seeded by (run seed, iteration, slot, kind), so re-assignment is safe; the instances' signed accounts (below) are
checked with a reorder window (``Verifier.accept``): an instance's goal threads may sign them in another order than
they are published.

A goal whose answer (accepted or rejected) has not come within ``answer_timeout`` (10 s) goes back to the queue at
once: Fast DDS drops a service response to a client whose response reader the server has not matched yet
("Failed to send goal response ... client will not receive response"), which happens to a run's first goals on a
loaded machine, and rclpy's action server then never executes that goal. The instance is healthy, so it is not
skipped; only a second unanswered goal in a row (an instance that hangs) skips it for a timeout period. Before,
such a goal held its slot and its instance for ``rollout_timeout``: two instances losing their first answers
stalled a run for twice that (both set aside at once). A result that has not come ``answer_timeout`` after its
slot's trajectory arrived (the result service loses replies the same way) no longer holds the iteration either.

All goal traffic happens in executor callbacks of one mutually exclusive group (a timer drives ``_tick``):
rclpy's ActionClient registers a goal only after sending it, so sending from another thread races with the
response (observed as "Ignoring unexpected goal response" and a lost goal).

With the run's key (always, in a graph), a goal is signed for its instance, sent on the action's goal service
(``GoalSender``), and the trainer believes only the instance's signed feedback, on the action's feedback topic:
STAGE_ACCEPTED (queued there: the goal is answered) and STAGE_FINISHED (success and message: the goal's outcome).
The action's goal response and result service carry no signature, and a server that is not part of the run, started
under an instance's name, answers them too (before: its "rejected" answers and unsigned results were taken
and the run took 2.8x as long); they are not read. Without a key (unit tests) an rclpy ActionClient is used, and the
goal response and the result as they come.
"""
from __future__ import annotations

import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from rclpy.action import ActionClient
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.task import Future
from unique_identifier_msgs.msg import UUID

from adr_interfaces.action import RollOut
from adr_interfaces.msg import ParameterSet
from adr_ros import qos, topics
from adr_ros.signing import RunSigning, node_path

TRAJECTORY_GRACE_S = 2.0
ANSWER_TIMEOUT_S = 10.0  # a goal unanswered this long was lost on the wire (or its instance hangs): send it again


def feedback_topic(instance: str) -> str:
    """The rollout action's feedback topic of ``instance`` (the name every ROS action's feedback goes on)."""
    return f"{topics.roll_out_action(instance)}/_action/feedback"


class GoalSender:
    """An instance's rollout action, signed mode: only its goal service, called as a plain service. The goal response
    and result are not read (the instance's signed feedback is; module docstring), so no rclpy ActionClient is
    needed, and none then handles the status, goal and result traffic a stranger's server under the instance's name
    adds (with one that accepted goals, the trainer's executor crashed in rclpy's C++ code)."""

    def __init__(self, node: Node, instance: str, group: Any) -> None:
        self._client = node.create_client(RollOut.Impl.SendGoalService,
                                          f"{topics.roll_out_action(instance)}/_action/send_goal",
                                          qos_profile=qos.CRITICAL_SERVICE, callback_group=group)

    def server_is_ready(self) -> bool:
        return self._client.service_is_ready()

    def send_goal_async(self, goal: RollOut.Goal, goal_uuid: UUID) -> Future:
        return self._client.call_async(RollOut.Impl.SendGoalService.Request(goal_id=goal_uuid, goal=goal))


@dataclass
class _InFlight:
    name: str  # the instance
    slot: int
    started: float
    goal_future: Future
    result_future: Future | None = None
    done_at: float | None = None  # when its slot's trajectory was first seen (its result may still be on the way)
    answered: bool = False  # signed mode: the instance's signed STAGE_ACCEPTED came
    outcome: tuple[bool, str] | None = None  # signed mode: its signed STAGE_FINISHED (success, message)


@dataclass
class DispatchReport:
    reassigned: int = 0
    failures: list[str] = field(default_factory=list)


class RolloutDispatcher:
    def __init__(self, node: Node, instances: list[str], rollout_timeout: float, max_attempts: int = 5,
                 period: float = 0.01, signing: RunSigning | None = None, goals_per_instance: int = 2,
                 answer_timeout: float = ANSWER_TIMEOUT_S) -> None:
        if goals_per_instance < 1:
            raise ValueError(f"goals_per_instance must be >= 1, got {goals_per_instance}")
        self._depth = goals_per_instance
        self._node = node
        self._signing = signing  # goals signed, results checked (adr_ros.signing); None only in unit tests
        group = MutuallyExclusiveCallbackGroup()
        self._clients: dict[str, Any] = {
            name: GoalSender(node, name, group) if signing is not None else
            ActionClient(node, RollOut, topics.roll_out_action(name), callback_group=group,
                         goal_service_qos_profile=qos.CRITICAL_SERVICE, result_service_qos_profile=qos.CRITICAL_SERVICE)
            for name in instances}
        self._timeout = rollout_timeout
        self._answer_timeout = min(answer_timeout, rollout_timeout)
        self._unanswered_in_a_row: Counter[str] = Counter()  # instance -> unanswered goals since its last answer
        self._max_attempts = max_attempts
        self._queue: deque[int] = deque()
        self._in_flight: dict[int, _InFlight] = {}  # slot -> its goal out at an instance
        self._benched: dict[str, float] = {}  # failed instance -> since when; skipped for one timeout period
        self._attempts: dict[int, int] = {}
        self._ended: dict[int, float] = {}  # slot -> when its last goal ended
        self._goals: dict[int, RollOut.Goal] = {}
        self._newest_version: Callable[[], int] = lambda: 0  # the newest policy version published (start())
        self.report = DispatchReport()
        self.rollouts_done: dict[str, int] = dict.fromkeys(instances, 0)  # whole run: goals each instance finished
        self._lock = threading.Lock()
        self._slots_done: Callable[[], set[int]] | None = None  # set while an iteration is dispatched
        self.finished = threading.Event()
        self.error: str | None = None
        # ticks only while an iteration is dispatched: an idle timer would compete with the learner for the GIL
        self._timer = node.create_timer(period, self._tick, callback_group=group, autostart=False)
        self._paths = {name: node_path(node.get_namespace(), name) for name in instances}  # what goals are signed for
        self._by_goal: dict[bytes, _InFlight] = {}  # signed mode: goal id -> its flight (this iteration's)
        if signing is not None:
            for name in instances:  # KEEP_ALL: a flood on the topic cannot displace an instance's account
                node.create_subscription(RollOut.Impl.FeedbackMessage, feedback_topic(name),
                                         partial(self.on_feedback, name), qos.CRITICAL_STREAM, callback_group=group)

    @property
    def instances(self) -> list[str]:
        return list(self._clients)

    def ready_instances(self) -> list[str]:
        return [name for name, client in self._clients.items() if client.server_is_ready()]

    def start(self, proposals: list[ParameterSet], *, with_reference: bool, min_policy_version: int,
              newest_policy_version: Callable[[], int], slots_done: Callable[[], set[int]]) -> None:
        """Dispatch an iteration; ``finished`` is set once ``slots_done()`` covers every slot and no goal is out.
        A goal may run with policy versions in [min_policy_version, newest_policy_version()], the latter read when
        the goal is sent (async mode: a version published meanwhile may be used)."""
        with self._lock:
            self._newest_version = newest_policy_version
            self._goals = {msg.slot: RollOut.Goal(parameters=msg, with_reference=with_reference,
                                                  min_policy_version=min_policy_version)
                           for msg in proposals}
            self._queue = deque(sorted(self._goals))
            self._attempts = {slot: 0 for slot in self._goals}
            self._ended = {}
            self._by_goal = {}
            self.report = DispatchReport()
            self.error = None
            self.finished.clear()
            self._slots_done = slots_done
            self._timer.reset()

    def _tick(self) -> None:
        with self._lock:
            if self._slots_done is None:
                return
            done = self._slots_done()
            try:
                self.poll(done)
            except RuntimeError as error:
                self.error = str(error)
            if self.error is None and not self.busy() and len(done) < len(self._goals):
                self.requeue_unfinished(done)  # a goal succeeded but its trajectory never arrived
            if self.error is not None or (len(done) == len(self._goals) and not self.busy()):
                self._slots_done = None
                self._timer.cancel()
                self.finished.set()

    def requeue_unfinished(self, done: set[int]) -> None:
        """Slots whose trajectories never arrived although their goal ended (a while ago: the result may overtake the
        trajectory on the wire) go back to the queue."""
        busy = {flight.slot for flight in self._in_flight.values()}
        now = time.monotonic()
        for slot in sorted(set(self._goals) - done - busy - set(self._queue)):
            if now - self._ended.get(slot, now) > TRAJECTORY_GRACE_S:
                self._queue.append(slot)
                self._ended.pop(slot)

    def poll(self, done: set[int]) -> None:
        """Advance: collect finished goals, time out stuck ones, hand queued slots to idle instances."""
        now = time.monotonic()
        for flight in list(self._in_flight.values()):
            self._check(flight, now, done)
        for name, since in list(self._benched.items()):
            if not self._clients[name].server_is_ready() or now - since > self._timeout:
                del self._benched[name]  # gone (when it is back it is a fresh instance) or rested
        while self._queue:
            load = Counter(flight.name for flight in self._in_flight.values())
            # an instance whose last goal is still unanswered gets no other: it queues goals in answer order
            unanswered = {flight.name for flight in self._in_flight.values() if not self._answered(flight)}
            idle = [n for n, c in self._clients.items()
                    if load[n] < self._depth and n not in self._benched and n not in unanswered
                    and c.server_is_ready()]
            if not idle:
                break
            slot = self._queue.popleft()
            if slot in done:
                continue
            self._attempts[slot] += 1
            if self._attempts[slot] > self._max_attempts:
                raise RuntimeError(f"slot {slot} failed {self._max_attempts} times: {self.report.failures[-3:]}")
            name = min(idle, key=lambda n: load[n])  # the least loaded (the first of those: instance order)
            goal = self._goals[slot]
            goal.newest_policy_version = max(goal.min_policy_version, self._newest_version())
            if self._signing is None:
                self._in_flight[slot] = _InFlight(name, slot, now, self._clients[name].send_goal_async(goal))
                continue
            self._signing.sign(goal, to=self._paths[name])  # for this instance only (a replay to another fails)
            goal_id = uuid.uuid4().bytes
            sent = self._clients[name].send_goal_async(goal, goal_uuid=UUID(uuid=list(goal_id)))
            self._in_flight[slot] = self._by_goal[goal_id] = _InFlight(name, slot, now, sent)

    def on_feedback(self, name: str, message: Any) -> None:
        """An instance's account of a goal (signed mode): taken only when signed by that instance for this node in
        this start of the run, for a goal now out at it."""
        with self._lock:
            flight = self._by_goal.get(bytes(message.goal_id.uuid))
            if flight is None or flight.name != name or self._in_flight.get(flight.slot) is not flight:
                return  # no goal of this node out now (an earlier one's late account, or another client's goal)
            feedback = message.feedback
            assert self._signing is not None
            if not self._signing.accept(feedback, f"{topics.roll_out_action(name)}/feedback",
                                        reorder_window_ns=int(self._timeout * 1e9), to_me=True):
                return
            if feedback.signature.sender != self._paths[name]:  # signed by another node of the run
                return
            flight.answered = True
            if feedback.stage == RollOut.Feedback.STAGE_FINISHED:
                flight.outcome = (bool(feedback.success), str(feedback.message))

    def _answered(self, flight: _InFlight) -> bool:
        if self._signing is not None:
            return flight.answered
        return flight.result_future is not None or flight.goal_future.done()

    def _check(self, flight: _InFlight, now: float, done: set[int]) -> None:
        name = flight.name
        if not self._answered(flight):
            if now - flight.started <= self._answer_timeout:
                return
            if flight.slot in done:
                del self._in_flight[flight.slot]  # the answer is late, not lost: the instance ran the goal
            else:
                self._unanswered_in_a_row[name] += 1
                self._fail(name, flight, f"{name} did not answer the goal for slot {flight.slot} within "
                           f"{self._answer_timeout:.0f} s (its answer was lost, or it hangs)",
                           bench=self._unanswered_in_a_row[name] > 1, first=True)
            return
        if self._signing is not None:
            self._check_signed(flight, now, done)
            return
        if flight.result_future is None:
            self._unanswered_in_a_row[name] = 0
            handle = flight.goal_future.result()
            if handle is None or not handle.accepted:
                self._fail(name, flight, f"{name} rejected the goal for slot {flight.slot}")
                return
            flight.result_future = handle.get_result_async()
        if flight.result_future is not None and flight.result_future.done():
            del self._in_flight[flight.slot]
            self._ended[flight.slot] = now
            result = flight.result_future.result().result
            if not result.success:
                self._fail(name, flight, f"{name} failed slot {flight.slot}: {result.message}", bench=False)
            else:
                self.rollouts_done[name] += 1
            return
        if flight.slot in done:  # its trajectory arrived (perhaps from an earlier attempt): the result is a formality
            flight.done_at = flight.done_at or now
            if now - flight.done_at > self._answer_timeout:  # lost like an answer, or the instance hangs
                del self._in_flight[flight.slot]
            return
        if now - flight.started > self._timeout:
            self._fail(name, flight, f"{name} did not finish slot {flight.slot} within {self._timeout:.0f} s")

    def _check_signed(self, flight: _InFlight, now: float, done: set[int]) -> None:
        """An answered goal (signed mode): its signed outcome, or a timeout."""
        name = flight.name
        self._unanswered_in_a_row[name] = 0
        if flight.outcome is not None:
            del self._in_flight[flight.slot]
            self._ended[flight.slot] = now
            success, message = flight.outcome
            if not success:
                self._fail(name, flight, f"{name} failed slot {flight.slot}: {message}", bench=False)
            else:
                self.rollouts_done[name] += 1
            return
        if flight.slot in done:  # its trajectory arrived: the outcome is a formality
            flight.done_at = flight.done_at or now
            if now - flight.done_at > self._answer_timeout:  # lost on the wire, or the instance hangs
                del self._in_flight[flight.slot]
            return
        if now - flight.started > self._timeout:
            self._fail(name, flight, f"{name} did not finish slot {flight.slot} within {self._timeout:.0f} s")

    def _fail(self, name: str, flight: _InFlight, reason: str, bench: bool = True, first: bool = False) -> None:
        """Re-queue the flight's slot: last, or ``first`` (a goal never executed goes before the higher slots
        waiting at the front, keeping slot order)."""
        self._in_flight.pop(flight.slot, None)
        if bench:
            self._benched[name] = time.monotonic()
        position = len(self._queue)
        if first:
            position = 0
            while position < len(self._queue) and self._queue[position] < flight.slot:
                position += 1
        self._queue.insert(position, flight.slot)
        self.report.reassigned += 1
        self.report.failures.append(reason)
        self._node.get_logger().warning(f"{reason}; slot {flight.slot} re-queued")

    def busy(self) -> bool:
        return bool(self._queue or self._in_flight)
