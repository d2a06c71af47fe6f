"""Accepted action goals executed one after another (rclpy's "queue goals" pattern), in the order their requests
were accepted.

rclpy answers a goal request before it calls ``handle_accepted_callback``, and the node's executor threads may run
those callbacks of two goals in either order. The order matters for envs whose episodes depend on the episode before
in the same env (ErgoPusher: PyBullet keeps contact state across restoreState), so the goal callback reserves a place
(``reserve``) and a goal executes only after every goal reserved before it. The trainer sends an instance its next goal
only after the answer to the one before (dispatcher.py), so the reservations follow the trainer's order. A reserved
goal whose handle never comes (the answer to the trainer failed) stops blocking the ones behind it after
``late_after`` seconds.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from rclpy.action.server import ServerGoalHandle

LATE_AFTER_S = 2.0


@dataclass
class _Place:
    request: Any  # the goal request object rclpy hands to both callbacks
    reserved: float
    handle: ServerGoalHandle | None = None


class SerialGoals:
    def __init__(self, late_after: float = LATE_AFTER_S) -> None:
        self._changed = threading.Condition()
        self._order: deque[_Place] = deque()  # accepted goals not yet started, in acceptance order
        self._current: ServerGoalHandle | None = None
        self._closed = False
        self._late_after = late_after
        self._timer: threading.Timer | None = None

    @property
    def queued(self) -> int:
        """Accepted goals waiting for their turn."""
        with self._changed:
            return sum(place.handle is not None for place in self._order)

    def reserve(self, request: Any) -> None:
        """Call from the goal callback when it accepts ``request``: its goal executes after the ones reserved before."""
        with self._changed:
            self._order.append(_Place(request, time.monotonic()))

    def accepted(self, goal_handle: ServerGoalHandle) -> None:
        """ActionServer's ``handle_accepted_callback``: execute now, or after the goals before it."""
        with self._changed:
            place = next((p for p in self._order if p.request is goal_handle.request), None)
            if place is None:  # not reserved: its place is its acceptance
                self._order.append(_Place(goal_handle.request, time.monotonic(), goal_handle))
            else:
                place.handle = goal_handle
            self._start_next()

    def finished(self) -> None:
        """Call at the end of every execute callback: starts the next goal in order."""
        with self._changed:
            self._current = None
            self._start_next()
            self._changed.notify_all()

    def close(self, timeout: float) -> bool:
        """Start no more goals; wait up to ``timeout`` s for the running one. True when none runs."""
        with self._changed:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            return self._changed.wait_for(lambda: self._current is None, timeout)

    def _start_next(self) -> None:  # with the lock held
        if self._current is not None or self._closed:
            return
        while self._order:
            head = self._order[0]
            if head.handle is not None:
                self._order.popleft()
                self._current = head.handle
                head.handle.execute()
                return
            wait = head.reserved + self._late_after - time.monotonic()
            if wait > 0:
                if any(p.handle is not None for p in self._order) and self._timer is None:
                    self._timer = threading.Timer(wait, self._late)
                    self._timer.daemon = True
                    self._timer.start()
                return
            self._order.popleft()  # reserved, never handed over: it no longer blocks the goals behind it

    def _late(self) -> None:
        with self._changed:
            self._timer = None
            self._start_next()
