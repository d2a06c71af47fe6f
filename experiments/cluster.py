"""Where an experiment driver's jobs run: this machine's pool (``--backend local``, the default; Ray not needed) or a
Ray cluster (``--backend ray``), each job a Ray task that reserves the CPUs (and GPUs) it uses.

    pool = cluster.pool(cluster.options(args), parallel=args.parallel, threads=True)
    for job, result, error in pool.map_unordered(worker, jobs): ...   # as each job ends, in any order

A Ray task runs ``worker(job)`` in the driver's working directory on whatever node Ray picks, with the repository
root on PYTHONPATH: every node must see the checkout, the virtual environment and the output folder at the same
paths (one machine, or shared storage such as a cluster's home or scratch file system; docs/cluster.md). A job whose
node dies is run again on another node (``--retries`` times, Ray's ``max_retries``); drivers whose jobs write run
directories resume them from their last checkpoint then, as a repeated command does. What still fails comes back
as an error, not an exception: the runner writes it as a result line to retry, and the command exits nonzero.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ("local", "ray")
INSTALL_HINT = "pip install 'src/adr_core[cluster]' (or pip install ray)"

Outcome = tuple[Any, Any, str | None]  # (job, result, error): result None when error says why


class ClusterError(RuntimeError):
    """The cluster cannot run the jobs (unreachable, too small, Ray missing): one line that says so."""


@dataclass(frozen=True)
class Options:
    backend: str = "local"
    address: str | None = None  # ray: None starts a Ray instance on this machine for this command
    cpus_per_job: float = 1.0
    gpus_per_job: float = 0.0
    retries: int = 3


def add_arguments(parser: argparse.ArgumentParser, *, default_cpus: float = 1.0) -> None:
    from adr_core.cli_types import at_least, non_negative_number, positive_number

    group = parser.add_argument_group("where the jobs run")
    group.add_argument("--backend", choices=BACKENDS, default="local",
                       help="local: a pool on this machine (--parallel at a time); ray: a Ray task per job on the "
                            "cluster at --address, as many at a time as its CPUs allow (--parallel is not used)")
    group.add_argument("--address", default=None, metavar="auto|HOST:PORT",
                       help="ray: the cluster to join: auto (the one `ray start` runs on this machine) or its head's "
                            "HOST:PORT (its GCS port, 6379 by default); default: a Ray instance on this machine for "
                            "this command only. Checked before anything is written: a wrong address of any kind is "
                            f"one line within {2 * PROBE_TIMEOUT_S:g} s. A cluster with token authentication needs "
                            "its token here: RAY_AUTH_MODE=token and RAY_AUTH_TOKEN (docs/cluster.md)")
    group.add_argument("--cpus-per-job", type=positive_number("CPUs"), default=None,
                       help=f"ray: CPUs each job reserves (default {default_cpus:g}: the threads one job uses)")
    group.add_argument("--gpus-per-job", type=non_negative_number("GPUs"), default=0.0,
                       help="ray: GPUs each job reserves [0]")
    group.add_argument("--retries", type=at_least(0), default=3,
                       help="ray: times a job is run again when its node or worker process dies [3]")
    parser.set_defaults(_default_cpus=default_cpus)


def options(args: argparse.Namespace, parser: argparse.ArgumentParser | None = None) -> Options:
    """The parsed options. With ``parser`` (drivers call it right after parsing, before they write anything) they
    are checked at once: with ``--backend ray``, Ray must be installed and ``--address`` must be a Ray head that takes
    this machine (``probe``); a refusal is the parser's one-line error (exit 2). Without it the check comes when the
    pool is made (``RayPool``: a ``ClusterError``, which the runner reports in one line)."""
    cpus = args.cpus_per_job if args.cpus_per_job is not None else getattr(args, "_default_cpus", 1.0)
    opts = Options(args.backend, args.address, float(cpus), float(args.gpus_per_job), int(args.retries))
    if parser is not None and opts.backend == "ray" and not getattr(args, "report_only", False):
        try:
            check(opts)
        except ClusterError as error:
            parser.error(str(error))
    return opts


def check(opts: Options) -> None:
    """What can be known before joining: Ray importable, and a head at ``--address`` (``probe``)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise ClusterError(f"--backend ray needs Ray, which is not installed here: {INSTALL_HINT}") from None
    if opts.address in (None, "local"):
        return
    probe(_auto_address() if opts.address == "auto" else opts.address)


class LocalPool:
    """This machine: ``parallel`` spawned processes (one per job: no state leaks between jobs) or threads (workers
    that start their own process trees)."""

    def __init__(self, parallel: int, threads: bool) -> None:
        self.parallel, self.threads = max(1, parallel), threads

    def map_unordered(self, worker: Callable[[Any], Any], jobs: Iterable[Any]) -> Iterator[Outcome]:
        work = [(worker, job) for job in jobs]
        if self.threads:
            with ThreadPoolExecutor(self.parallel) as pool:
                yield from pool.map(_outcome, work)
        else:
            import multiprocessing

            with multiprocessing.get_context("spawn").Pool(self.parallel, maxtasksperchild=1) as pool:
                yield from pool.imap_unordered(_outcome, work)


def _outcome(work: tuple[Callable[[Any], Any], Any]) -> Outcome:
    """``worker(job)`` as an outcome: a job that raises is one error line, and the other jobs go on."""
    worker, job = work
    try:
        return job, worker(job), None
    except Exception as error:  # noqa: BLE001 - reported as the job's result, retried by the next command
        return job, None, _one_line(error)


def die_with_parent() -> None:
    """``preexec_fn`` of a job's child process: the kernel kills it when the thread that started it dies, so a job
    whose Ray worker or node died leaves no trainer behind to write into the run directory its retry takes over."""
    import ctypes
    import signal

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _in_directory(worker: Callable[[Any], Any], job: Any, directory: str) -> Any:
    """A Ray task: ``worker(job)`` from the driver's working directory (relative paths mean what they meant there)."""
    os.chdir(directory)
    return worker(job)


class RayPool:
    """A Ray cluster (module docstring). Connects at construction; a ``ClusterError`` when it cannot."""

    def __init__(self, opts: Options) -> None:
        try:
            import ray
        except ImportError:
            raise ClusterError(f"--backend ray needs Ray, which is not installed here: {INSTALL_HINT}") from None
        self.ray, self.opts = ray, opts
        python_path = os.pathsep.join(_import_paths())
        where = opts.address or "this machine (a Ray instance for this command)"
        check(opts)  # a wrong address of any kind: one line within 2 x PROBE_TIMEOUT_S (Ray retries for minutes)
        try:
            ray.init(address=opts.address, runtime_env={"env_vars": {"PYTHONPATH": python_path}},
                     include_dashboard=False, logging_level=logging.WARNING, log_to_driver=True)
        except (ConnectionError, RuntimeError, ValueError) as error:
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise ClusterError(f"cannot join the Ray cluster at {where}: {first}") from None
        have = ray.cluster_resources()
        for name, need, flag in (("CPU", opts.cpus_per_job, "--cpus-per-job"),
                                 ("GPU", opts.gpus_per_job, "--gpus-per-job")):
            if need > 0 and have.get(name, 0.0) < need:
                self.close()
                raise ClusterError(f"the Ray cluster at {where} has {have.get(name, 0.0):g} {name}s, one job needs "
                                   f"{need:g} ({flag}): add nodes or ask for less")
        print(f"[cluster] Ray at {where}: {len(ray.nodes())} node(s), {have.get('CPU', 0):g} CPUs, "
              f"{have.get('GPU', 0):g} GPUs; each job reserves {opts.cpus_per_job:g} CPU(s)", flush=True)

    def map_unordered(self, worker: Callable[[Any], Any], jobs: Iterable[Any]) -> Iterator[Outcome]:
        ray = self.ray
        task = ray.remote(num_cpus=self.opts.cpus_per_job, num_gpus=self.opts.gpus_per_job,
                          max_retries=self.opts.retries, retry_exceptions=False)(_in_directory)
        worker_ref = ray.put(worker)
        pending = {task.remote(worker_ref, job, os.getcwd()): job for job in jobs}
        try:
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                job = pending.pop(done[0])
                try:
                    yield job, ray.get(done[0]), None
                except ray.exceptions.RayError as error:
                    yield job, None, _one_line(error)
        finally:
            for ref in pending:  # a stopped command (Ctrl-C): the tasks still queued or running are cancelled
                ray.cancel(ref)

    def close(self) -> None:
        self.ray.shutdown()


def _import_paths() -> list[str]:
    """Where the jobs' code is imported from, for the Ray workers: the repository root, PYTHONPATH, and what else
    this process added to sys.path (e.g. pytest's test folders), less the interpreter's own folders (as
    multiprocessing's spawn hands sys.path to its children)."""
    own = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix})
    paths = [str(ROOT), *os.environ.get("PYTHONPATH", "").split(os.pathsep),
             *(p for p in sys.path if p and os.path.isdir(p) and not p.startswith(own))]
    return list(dict.fromkeys(p for p in paths if p))


PROBE_TIMEOUT_S = 4.0  # for the TCP connection and for the GCS's answer: a wrong address is one line within 8 s


def _auto_address() -> str:
    """``--address auto``: the cluster ``ray start`` runs on this machine (as ray.init finds it), or one line."""
    from ray._private import services

    try:
        address = services.canonicalize_bootstrap_address("auto")
    except (ConnectionError, ValueError, RuntimeError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ClusterError(f"--address auto: {first}") from None
    if address is None:
        raise ClusterError("--address auto: no Ray cluster runs on this machine (start one with `ray start --head`, or "
                           "leave --address out for a Ray instance of this command)")
    return str(address)


def local_token() -> tuple[str, str] | None:
    """This machine's Ray token and where it comes from, where Ray itself looks: $RAY_AUTH_TOKEN,
    $RAY_AUTH_TOKEN_PATH, ~/.ray/auth_token."""
    if os.environ.get("RAY_AUTH_TOKEN", "").strip():
        return os.environ["RAY_AUTH_TOKEN"].strip(), "$RAY_AUTH_TOKEN"
    for path in (os.environ.get("RAY_AUTH_TOKEN_PATH"), str(Path.home() / ".ray" / "auth_token")):
        if path and os.path.isfile(path):
            try:
                return Path(path).read_text().strip(), path
            except OSError:
                continue
    return None


def probe(address: str, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """A Ray head at ``address`` (HOST:PORT of its GCS) that takes this machine, or one ``ClusterError`` line, within
    two ``timeout_s``: a TCP connection (nothing answers there: refused, unreachable, silent), then one call of the
    GCS's own gRPC service (something else answers there: the dashboard's HTTP port 8265, another server, a proxy),
    made without and, where the cluster asks for one, with this machine's token (token authentication, Ray >= 2.52:
    a missing or other token is named). Ray's own ray.init retries each of these for minutes. When the cluster
    takes our token, ``RAY_AUTH_MODE=token`` is set for ray.init."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ClusterError(f"--address must be auto or HOST:PORT (the head's GCS port, 6379 by default), got "
                           f"{address!r}")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as error:
        reason = error.strerror or str(error) or type(error).__name__
        raise ClusterError(f"cannot join the Ray cluster at {address}: nothing answers there ({reason}); is its "
                           f"head started (ray start --head)?") from None
    code, detail = _gcs_call(address, None, timeout_s)
    if code == "UNAUTHENTICATED":
        token = local_token()
        if token is None:
            raise ClusterError(f"the Ray cluster at {address} uses token authentication and this machine has no "
                               f"token: export RAY_AUTH_MODE=token RAY_AUTH_TOKEN=<the cluster's token> "
                               f"(docs/cluster.md, 'Token')")
        code, detail = _gcs_call(address, token[0], timeout_s)
        if code == "UNAUTHENTICATED":
            raise ClusterError(f"the Ray cluster at {address} refused this machine's token (from {token[1]}): export "
                               f"RAY_AUTH_MODE=token RAY_AUTH_TOKEN=<the cluster's token> (docs/cluster.md, 'Token')")
        if code == "OK":
            os.environ.setdefault("RAY_AUTH_MODE", "token")
    if code != "OK":
        raise ClusterError(f"cannot join the Ray cluster at {address}: something answers there, but not a Ray "
                           f"head's GCS ({code}: {detail}); give the head's GCS port (6379 by default; 8265 is its "
                           f"dashboard)")


def _gcs_call(address: str, token: str | None, timeout_s: float) -> tuple[str, str]:
    """One GetClusterId call to the GCS at ``address``: ("OK", "") or (the gRPC status name, its first line)."""
    import grpc
    from ray.core.generated import gcs_service_pb2, gcs_service_pb2_grpc

    channel = grpc.insecure_channel(address.removeprefix("ray://"), options=[("grpc.enable_http_proxy", 0)])
    try:
        stub = gcs_service_pb2_grpc.NodeInfoGcsServiceStub(channel)
        metadata = [("authorization", f"Bearer {token}")] if token else None
        stub.GetClusterId(gcs_service_pb2.GetClusterIdRequest(), timeout=timeout_s, metadata=metadata)
        return "OK", ""
    except grpc.RpcError as error:
        details = (error.details() or "").strip().splitlines()
        return error.code().name, details[0][:160] if details else ""
    finally:
        channel.close()


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    cause = next((line for line in reversed(text) if line.strip()), type(error).__name__)
    return f"{type(error).__name__}: {cause.strip()}"


def pool(opts: Options | None, parallel: int = 1, threads: bool = False) -> LocalPool | RayPool:
    if opts is None or opts.backend == "local":
        return LocalPool(parallel, threads)
    return RayPool(opts)
