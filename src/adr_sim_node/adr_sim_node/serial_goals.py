"""Accepted action goals executed one after another (rclpy's "queue goals" pattern): one rollout at a time."""
from __future__ import annotations

import threading
from collections import deque

from rclpy.action.server import ServerGoalHandle


class SerialGoals:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._waiting: deque[ServerGoalHandle] = deque()
        self._current: ServerGoalHandle | None = None
        self._closed = False

    @property
    def queued(self) -> int:
        return len(self._waiting)

    def accepted(self, goal_handle: ServerGoalHandle) -> None:
        """ActionServer's ``handle_accepted_callback``: execute now, or after the goals before it."""
        with self._changed:
            if self._current is None and not self._closed:
                self._current = goal_handle
                goal_handle.execute()
            else:
                self._waiting.append(goal_handle)

    def finished(self) -> None:
        """Call at the end of every execute callback: starts the next waiting goal."""
        with self._changed:
            self._current = self._waiting.popleft() if self._waiting and not self._closed else None
            if self._current is not None:
                self._current.execute()
            self._changed.notify_all()

    def close(self, timeout: float) -> bool:
        """Start no more goals; wait up to ``timeout`` s for the running one. True when none runs."""
        with self._changed:
            self._closed = True
            return self._changed.wait_for(lambda: self._current is None, timeout)
