"""A MultiThreadedExecutor whose shutdown waits for the callbacks already handed to its threads."""
from __future__ import annotations

from rclpy.executors import MultiThreadedExecutor


class JoiningMultiThreadedExecutor(MultiThreadedExecutor):
    """rclpy 7.1's MultiThreadedExecutor.shutdown neither waits for callbacks already submitted to its thread pool nor
    stops the pool; such a callback then runs against a destroyed guard condition or node and prints "exception was
    never retrieved" at exit. Join the pool first (newer rclpy does this in shutdown, after the guard is gone)."""

    def shutdown(self, timeout_sec: float | None = None) -> bool:
        pool = getattr(self, "_executor", None)
        if pool is not None:
            pool.shutdown(wait=True)
        return super().shutdown(timeout_sec)
