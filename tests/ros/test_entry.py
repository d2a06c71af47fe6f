"""adr_ros.entry: a stop signal that lands inside a C extension's initialization reaches Python as an ImportError;
once a stop was asked for, the node still ends quietly with 0 (seen in a loaded `make test`: rclpy's pybind11
module turned the handler's SystemExit into "ImportError: initialization failed")."""
from __future__ import annotations

import importlib

import pytest

from adr_ros import entry


def test_an_import_error_after_a_stop_signal_ends_with_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted_import(name: str):
        with pytest.raises(SystemExit):
            entry._stop(2, None)  # the handler ran while the C extension initialized ...
        raise ImportError("initialization failed")  # ... which reports it as this

    monkeypatch.setattr(entry, "_stopping", False)
    monkeypatch.setattr(entry.signal, "signal", lambda *args: None)  # this test process keeps its own handlers
    monkeypatch.setattr(importlib, "import_module", interrupted_import)
    assert entry._run("adr_sim_node.node") == 0


def test_an_import_error_without_a_stop_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_import(name: str):
        raise ImportError("no module named simulators")

    monkeypatch.setattr(entry, "_stopping", False)
    monkeypatch.setattr(entry.signal, "signal", lambda *args: None)
    monkeypatch.setattr(importlib, "import_module", broken_import)
    with pytest.raises(ImportError, match="no module named simulators"):
        entry._run("adr_sim_node.node")
