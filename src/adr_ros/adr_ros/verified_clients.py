"""Service clients that take only an answer signed by the run: a server that is not part of the run cannot answer in
its place.

Two servers under one service name both answer a request (DDS delivers every matched server's reply), and rclpy's
client resolves the call with whichever reply comes first and drops the other as unexpected. So a stranger's
server under the sampler's name, answering at once, used to win every call: its unsigned answer was dropped by the
trainer, which asked again and again got the stranger's first. ``take_only_verified`` makes a client
resolve a call only with an answer ``accept`` takes; the others are dropped without ending the call, and the run's
own answer, which comes too, resolves it.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rclpy.client import Client


class _VerifyingFuture:
    """What the executor gets for a pending request: passes ``set_result`` on only for an accepted answer."""

    def __init__(self, future: Any, accept: Callable[[Any], bool]) -> None:
        self._future, self._accept = future, accept

    def _set_executor(self, executor: Any) -> None:
        self._future._set_executor(executor)

    def set_result(self, response: Any) -> None:
        if self._accept(response):
            self._future.set_result(response)


def take_only_verified(client: Client, accept: Callable[[Any], bool]) -> Client:
    """Make ``client`` resolve its calls only with answers ``accept`` takes (e.g. ``RunSigning.accept``); returns it.
    (The executors, Python and C++ alike, look a reply's call up with ``client.get_pending_request``.)"""
    lookup = client.get_pending_request

    def pending(sequence_number: int) -> Any:
        return _VerifyingFuture(lookup(sequence_number), accept)

    client.get_pending_request = pending  # type: ignore[method-assign]
    return client
