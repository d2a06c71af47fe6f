"""After Ctrl-C the sampler and the discriminator keep serving while the trainer may still ask for its final
checkpoint: while adr_trainer is listed and a client of their save_checkpoint service is on the graph. The name alone
held them: a process's graph cache can keep a name after its process has exited, and a sampler that waited for the
name to go was still serving minutes after its trainer had exited (the launcher waited for it; the graph test gave
up). The predicates each helper's main() hands to run_node, on a graph view without DDS; the same over DDS:
tests/integration/test_helper_linger.py."""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import pytest

from adr_ros import topics

HELPERS = [("adr_sampler_node.node", topics.SAMPLER_SAVE_CHECKPOINT),
           ("adr_discriminator_node.node", topics.DISCRIMINATOR_SAVE_CHECKPOINT)]


class GraphView:
    """What a helper's rclpy node (namespace "/") reports about the graph: the nodes listed, and the clients of each
    service."""

    def __init__(self, nodes: list[tuple[str, str]], clients: dict[str, int]) -> None:
        self.nodes, self.clients = nodes, clients

    def get_namespace(self) -> str:
        return "/"

    def get_node_names(self) -> list[str]:
        return [name for name, _ in self.nodes]

    def get_node_names_and_namespaces(self) -> list[tuple[str, str]]:
        return list(self.nodes)

    def count_clients(self, service: str) -> int:
        return self.clients.get(service.lstrip("/"), 0)


def linger_of(module_name: str, monkeypatch: pytest.MonkeyPatch) -> Callable[[Any], bool]:
    """The ``linger`` the helper's main() passes to run_node (nothing is started)."""
    module = importlib.import_module(module_name)
    passed: dict[str, Any] = {}
    monkeypatch.setattr(module, "run_node", lambda make_node, **kwargs: passed.update(kwargs) or 0)
    assert module.main() == 0
    return passed["linger"]


@pytest.mark.parametrize(("module_name", "service"), HELPERS)
def test_a_helper_does_not_linger_for_the_trainers_name_alone(module_name: str, service: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    linger = linger_of(module_name, monkeypatch)
    # the trainer's name kept in the graph cache after its process exited, or another node of that name: no client
    assert not linger(GraphView([("adr_trainer", "/"), ("adr_sim_0", "/")], clients={}))
    # a client of another service (the propose service) is nothing this helper has to serve at the end either
    assert not linger(GraphView([("adr_trainer", "/")], clients={topics.PROPOSE_SERVICE: 1}))
    # the trainer of a graph in another namespace
    assert not linger(GraphView([("adr_trainer", "/other_run")], clients={service: 1}))


@pytest.mark.parametrize(("module_name", "service"), HELPERS)
def test_a_helper_does_not_linger_for_a_client_that_is_not_the_trainers(module_name: str, service: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    linger = linger_of(module_name, monkeypatch)
    assert not linger(GraphView([("test_probe", "/")], clients={service: 1}))  # e.g. a test calling the service


@pytest.mark.parametrize(("module_name", "service"), HELPERS)
def test_a_helper_lingers_while_the_trainer_and_a_client_of_its_save_service_are_on_the_graph(
        module_name: str, service: str, monkeypatch: pytest.MonkeyPatch) -> None:
    linger = linger_of(module_name, monkeypatch)
    assert linger(GraphView([("adr_trainer", "/")], clients={service: 1}))  # it may still ask for its checkpoint
