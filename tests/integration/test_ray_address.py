"""A wrong Ray ``--address`` of any kind is one line, exit 2, before anything is written (issue 61, item 5).

Before: a port where something else listens (the dashboard's 8265) cost minutes of Ray's retries and 46 lines,
``10.255.255.1:6379`` 34 s and 21 lines, a cluster with token authentication refused a driver without its token the
same way, and parity, probe_focus and time_to_land created an empty ``--out`` first. Now every driver checks the
address while it starts (``experiments.cluster.probe``: a TCP connection, then one call of the head's GCS, each
bounded by ``PROBE_TIMEOUT_S``); the bound is the implementation's, the tests check the outcome, not the time.
"""
from __future__ import annotations

import http.server
import importlib
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from experiments.runner import ROOT, root_env

ray = pytest.importorskip("ray", reason="Ray is not installed here (pip install 'src/adr_core[cluster]'); CI has it")

DRIVERS = {  # each driver's own arguments besides --backend ray --address ... --out
    "reproduce": ["--methods", "udr", "--seeds", "0", "--budget", "100", "--no-report"],
    "parity": ["--envs", "Pendulum-v1", "--seeds", "0"],
    "probe_focus": ["--seeds", "0"],
    "time_to_land": ["--seeds", "0"],
    "standin_transfer": ["--runs", "SCRATCH/a_run", "--task", "reacher"],
}


@pytest.fixture(scope="module")
def http_port() -> Iterator[int]:
    """A port where an HTTP server listens (as Ray's dashboard does on 8265)."""
    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, *_: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_driver(name: str, address: str, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    main = importlib.import_module(f"experiments.{name}").main
    argv = [a.replace("SCRATCH", str(out.parent)) for a in DRIVERS[name]]
    try:
        code = main([*argv, "--backend", "ray", "--address", address, "--out", str(out)])
    except SystemExit as stopped:
        code = stopped.code
    return code, capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize("name", sorted(DRIVERS))
def test_a_wrong_address_of_any_kind_is_one_line_exit_2_and_no_out(name: str, http_port: int, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    kinds = {f"127.0.0.1:{http_port}": "something answers there, but not a Ray head's GCS",
             f"127.0.0.1:{closed_port()}": "nothing answers there",
             "nohost": "--address must be auto or HOST:PORT"}
    for address, says in kinds.items():
        out = tmp_path / "out"
        code, lines = run_driver(name, address, out, capsys)
        assert code == 2 and len(lines) == 1 and says in lines[0], (name, address, lines)
        assert not out.exists(), f"{name} created --out before refusing {address}"


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None, reason="network namespaces need root and ip")
def test_an_address_that_leads_nowhere_is_one_line(tmp_path: Path) -> None:
    """10.255.255.1:6379 from a host whose network cannot reach it (a network namespace of this test's own)."""
    namespace = f"adrray{os.getpid()}"
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    try:
        subprocess.run(["ip", "-n", namespace, "link", "set", "lo", "up"], check=True)
        done = subprocess.run(["ip", "netns", "exec", namespace, sys.executable, "-m", "experiments.parity", "--seeds",
                               "0", "--backend", "ray", "--address", "10.255.255.1:6379", "--out",
                               str(tmp_path / "out")], cwd=ROOT, env=root_env(), capture_output=True, text=True,
                              timeout=120)
    finally:
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "cannot join the Ray cluster at 10.255.255.1:6379: nothing answers there" in lines[0]
    assert not (tmp_path / "out").exists()


HEAD = """
import json, sys
from ray.cluster_utils import Cluster
head = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
print(json.dumps(head.address), flush=True)
sys.stdin.read()  # until the test closes it
head.shutdown()
"""


def test_a_cluster_with_token_authentication_names_a_missing_or_other_token(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A head started with a token of its own (RAY_AUTH_MODE=token, in a process of its own: Ray reads the mode
    once per process): a driver without a token, or with another one, is told so in one line; with the cluster's
    token it joins."""
    import json

    from experiments import cluster as clusters

    token = "0123456789abcdef" * 4
    head = subprocess.Popen([sys.executable, "-c", HEAD], env={**root_env(), "RAY_AUTH_MODE": "token",
                                                               "RAY_AUTH_TOKEN": token},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert head.stdout is not None
        address = json.loads(head.stdout.readline())
        monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.ray/auth_token either
        monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
        monkeypatch.delenv("RAY_AUTH_TOKEN_PATH", raising=False)
        monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
        with pytest.raises(clusters.ClusterError, match=r"uses token authentication and this machine has no token: "
                                                        r"export RAY_AUTH_MODE=token RAY_AUTH_TOKEN="):
            clusters.probe(address)
        monkeypatch.setenv("RAY_AUTH_TOKEN", "f" * 64)
        with pytest.raises(clusters.ClusterError, match=r"refused this machine's token \(from \$RAY_AUTH_TOKEN\)"):
            clusters.probe(address)
        monkeypatch.setenv("RAY_AUTH_TOKEN", token)
        clusters.probe(address)
        assert os.environ["RAY_AUTH_MODE"] == "token"  # set for ray.init, which sends the token only in that mode
    finally:
        head.communicate(timeout=120)
