"""docs/cluster.md's Slurm script, run as written on a two-node cluster on this machine (issue 61, item 5).

The script is taken from the docs (only its ``out=`` and ``grid=`` lines are replaced, by a tiny grid) and run with
bash. Slurm is emulated: two "nodes" are network namespaces joined by a bridge (each its own address), ``srun``
runs its command once per node it is given, inside that node's network namespace and a process namespace of its own
(so ``ray stop``, which ``ray symmetric-run`` calls at its end, stops that node's Ray only) with a /tmp/ray of its
own (a node-local /tmp), ``scontrol show hostnames`` lists the nodes and ``hostname --ip-address`` gives a node's
address. The user's own token (``~/.ray/auth_token``) is out of reach (HOME is empty): the script's token is what
authenticates every node and the driver. Root only (network namespaces), as tests/integration/test_multi_host.py.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from experiments.runner import ROOT, root_env

pytest.importorskip("ray", reason="Ray is not installed here (pip install 'src/adr_core[cluster]'); CI has it")
pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("unshare") is None,
                                 reason="network and process namespaces need root, ip and unshare")]

NODES = 2  # a head and a worker: Ray's start-up has 30 s it cannot be given more of, on a loaded machine
TINY = ["agent.hidden_sizes=[16,16]", "agent.batch_size=16", "agent.learning_starts=50", "agent.buffer_capacity=4000",
        "svpg.num_particles=2", "discriminator.hidden_size=16", "max_episode_steps=40", "evaluate_every=0",
        "checkpoint_every=1", "keep_checkpoint_every=0", "tensorboard=false"]

SRUN = r'''#!__PYTHON__
"""srun of this test: the command once per node (-w NODE: that one; else the first --nodes), in the node's network
namespace, a process namespace and a /tmp/ray of its own; waits for all; exits with the worst code."""
import os, subprocess, sys
nodes = [entry.split("=") for entry in os.environ["ADR_FAKE_NODES"].split(",")]
args, chosen, count = sys.argv[1:], None, len(nodes)
while args and args[0].startswith("-"):
    flag = args.pop(0)
    name, _, value = flag.partition("=")
    if not value and name in ("--nodes", "--ntasks", "-w", "-N", "-n"):
        value = args.pop(0)
    if name == "-w":
        chosen = value
    elif name in ("--nodes", "-N"):
        count = int(value)
picked = [n for n in nodes if n[0] == chosen] if chosen else nodes[:count]
tasks = []
for node, namespace, address in picked:
    env = {**os.environ, "ADR_FAKE_NODE": node, "ADR_FAKE_IP": address,
           "ADR_NODE_TMP": os.path.join(os.environ["ADR_FAKE_TMP"], node)}
    os.makedirs(env["ADR_NODE_TMP"], exist_ok=True)
    # the node's own /tmp/ray (a node-local /tmp: Ray's sockets and session files), in its own mount namespace; bash,
    # the namespace's first process, reaps what the task leaves behind as a node's init does (else `ray stop` waits
    # for zombies)
    tasks.append(subprocess.Popen(["ip", "netns", "exec", namespace, "unshare", "--pid", "--fork", "--mount-proc",
                                   "bash", "-c", 'mount --bind "$ADR_NODE_TMP" /tmp/ray && { "$@" & wait $!; }',
                                   "bash", *args], env=env))
codes = [task.wait() for task in tasks]
for (node, _, _), code in zip(picked, codes):
    print(f"[srun] {node}: exit {code}", file=sys.stderr)
sys.exit(max(codes))
'''
SCONTROL = '''#!/bin/bash
# scontrol show hostnames NODELIST (this test's nodes, whatever the list)
[ "$1 $2" = "show hostnames" ] && echo "$ADR_FAKE_NODE_NAMES" | tr ' ' '\\n'
'''
HOSTNAME = '''#!/bin/bash
# hostname on an emulated node: its name, or its address with --ip-address / -i / -I
case "$1" in
  --ip-address|-i|-I) echo "$ADR_FAKE_IP";;
  *) echo "${ADR_FAKE_NODE:-$(cat /proc/sys/kernel/hostname)}";;
esac
'''


@contextmanager
def lan(count: int) -> Iterator[list[tuple[str, str]]]:
    """``count`` network namespaces on one bridge (in a namespace of its own): [(namespace, address)]."""
    tag = os.getpid() % 100_000
    switch, subnet = f"adrsw{tag}", f"10.252.{os.getpid() % 250 + 1}"
    names = [f"adrn{tag}x{i}" for i in range(count)]
    run = lambda *args: subprocess.run(["ip", *args], check=True, capture_output=True)  # noqa: E731
    made = []
    try:
        for name in (switch, *names):
            run("netns", "add", name)
            made.append(name)
        run("-n", switch, "link", "add", "br0", "type", "bridge")
        run("-n", switch, "link", "set", "br0", "up")
        nodes = []
        for i, name in enumerate(names):
            run("link", "add", f"a{tag}x{i}", "type", "veth", "peer", "name", f"b{tag}x{i}")
            run("link", "set", f"a{tag}x{i}", "netns", name)
            run("link", "set", f"b{tag}x{i}", "netns", switch)
            run("-n", switch, "link", "set", f"b{tag}x{i}", "master", "br0")
            run("-n", switch, "link", "set", f"b{tag}x{i}", "up")
            run("-n", name, "addr", "add", f"{subnet}.{i + 1}/24", "dev", f"a{tag}x{i}")
            run("-n", name, "link", "set", f"a{tag}x{i}", "up")
            run("-n", name, "link", "set", "lo", "up")
            # a default route, as a real node has: Ray finds a node's own address by the route to a public one
            # (nothing leaves this namespace's bridge)
            run("-n", name, "route", "add", "default", "dev", f"a{tag}x{i}")
            nodes.append((name, f"{subnet}.{i + 1}"))
        yield nodes
    finally:
        for name in made:
            subprocess.run(["ip", "netns", "del", name], capture_output=True)


def slurm_script(out: Path) -> str:
    """The fenced bash block of docs/cluster.md's "On Slurm" section, with this test's output folder and grid."""
    text = (ROOT / "docs" / "cluster.md").read_text()
    section = text[text.index("## On Slurm"):]
    script = re.search(r"```bash\n(#!/bin/bash\n.*?)```", section, re.S)
    assert script is not None, "docs/cluster.md: no Slurm script in 'On Slurm'"
    body = script.group(1)
    grid = ["--methods", "udr", "--seeds", "0", "1", "--budget", "800", "--no-report", "--threads", "1",
            *(f"--set={item}" for item in TINY)]
    body, n_out = re.subn(r'^out=.*$', f'out="{out}"', body, flags=re.M)
    body, n_grid = re.subn(r'^grid=\(.*?\)$', "grid=(" + " ".join(f"'{g}'" for g in grid) + ")", body,
                          flags=re.M | re.S)
    assert n_out == 1 and n_grid == 1, body
    return body


def test_the_slurm_script_of_the_docs_runs_a_grid_on_two_nodes_with_token_authentication(tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    for name, text in (("srun", SRUN.replace("__PYTHON__", sys.executable)), ("scontrol", SCONTROL),
                       ("hostname", HOSTNAME)):
        (fake / name).write_text(text)
        (fake / name).chmod(0o755)
    (tmp_path / "home").mkdir()
    ray_tmp = tmp_path / "node_tmp"  # each node's /tmp/ray (bound over /tmp/ray in the node's mount namespace)
    Path("/tmp/ray").mkdir(exist_ok=True)
    out = tmp_path / "out"
    (tmp_path / "job.sh").write_text(slurm_script(out))
    with lan(NODES) as nodes:
        names = [f"node{i}" for i in range(NODES)]
        env = {**root_env(), "PATH": f"{fake}:{os.environ['PATH']}", "HOME": str(tmp_path / "home"),
               "SLURM_JOB_NODELIST": f"node[0-{NODES - 1}]", "SLURM_JOB_NUM_NODES": str(NODES),
               "SLURM_CPUS_PER_TASK": "1", "SCRATCH": str(tmp_path), "ADR_FAKE_NODE_NAMES": " ".join(names),
               "ADR_FAKE_NODES": ",".join(f"{n}={ns}={ip}" for n, (ns, ip) in zip(names, nodes)),
               "ADR_FAKE_TMP": str(ray_tmp),
               # the workers' raylets end soon after the head stopped (Ray's default waits 60 s for the GCS), and the
               # head waits for the other nodes longer than its default 30 s (a loaded machine: the test suite)
               "RAY_gcs_rpc_server_reconnect_timeout_s": "10", "RAY_SYMMETRIC_RUN_CLUSTER_WAIT_TIMEOUT": "300"}
        for variable in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS"):
            env.pop(variable, None)
        try:
            job = subprocess.run(["bash", str(tmp_path / "job.sh")], cwd=ROOT, env=env, capture_output=True,
                                 text=True, timeout=900)
        finally:
            shutil.rmtree(ray_tmp, ignore_errors=True)
    output = job.stdout + job.stderr
    assert job.returncode == 0, output[-6000:]
    assert re.search(rf"\[cluster\] Ray at {re.escape(nodes[0][1])}:6379: {NODES} node\(s\), {NODES} CPUs", output), \
        output[-6000:]
    done = sorted(out.glob("runs/*/DONE.json"))
    assert len(done) == 2 and all(json.loads(d.read_text())["agent_steps"] == 800 for d in done), output[-6000:]
    assert not (tmp_path / "home" / ".ray" / "auth_token").exists()  # the script's token, not the user's
