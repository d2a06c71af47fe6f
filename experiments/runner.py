"""The one runner of the experiment drivers (preset search, probe focus, time to land, parity): a pool of workers over
jobs, on this machine or a Ray cluster (``cluster.py``: ``--backend local|ray``), one JSON line per finished job
appended to a results file as it arrives (an interrupted command keeps every finished job), jobs whose key is
already in the file skipped (run the same command again to continue), and ``--report-only`` to rebuild a driver's
tables from the file alone.

    results = runner.run(jobs, worker, key=lambda j: (j["variant"], j["seed"]), results=out / "runs.jsonl",
                         parallel=args.parallel, cluster=cluster.options(args))
    return runner.exit_code(jobs, key, out / "runs.jsonl")      # 1 while a job is unfinished

A worker is a module-level function (picklable: each job runs in a fresh spawned process, so no state leaks from one
job to the next) or, with ``threads=True``, any callable that starts its own process tree (the drivers that launch
``adr-train`` or the node graph). Drivers and benchmarks start each other as ``python -m <package>.<module>`` from
the repository root (``module_command``, ``root_env``): nothing edits ``sys.path``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import Any

from experiments import cluster as clusters

ROOT = Path(__file__).resolve().parents[1]

Job = dict[str, Any]
Result = dict[str, Any]


def add_arguments(parser: argparse.ArgumentParser, *, parallel_help: str = "jobs at a time") -> None:
    """``--parallel``, ``--report-only`` and where the jobs run (``cluster.add_arguments``), the options every
    driver shares."""
    parser.add_argument("--parallel", type=int, default=1, help=parallel_help)
    parser.add_argument("--report-only", action="store_true", help="only summarize the jobs already finished")
    clusters.add_arguments(parser)


def load(path: Path) -> list[Result]:
    """Every result line of ``path`` (none when it does not exist)."""
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def append(path: Path, result: Result) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        handle.write(json.dumps(result) + "\n")


def latest(results: Iterable[Result], key: Callable[[Result], Hashable]) -> list[Result]:
    """One result per key, the last one written (a job that failed and then succeeded counts once)."""
    return list({key(r): r for r in results}.values())


def finished(path: Path, key: Callable[[Result], Hashable]) -> list[Result]:
    """The latest result per key of ``path``, less those that are failures (an ``error`` key)."""
    return [r for r in latest(load(path), key) if "error" not in r]


def pending(jobs: Iterable[Job], key: Callable[[Job], Hashable], results: Path) -> list[Job]:
    """The jobs with no result line yet, or whose last one is a failure (an ``error`` key), in their given order:
    a repeated command retries failed jobs and skips finished ones."""
    done = {key(r) for r in latest(load(results), key) if "error" not in r}
    return [job for job in jobs if key(job) not in done]


def run(jobs: Iterable[Job], worker: Callable[[Job], Result], *, key: Callable[[Job], Hashable], results: Path,
        parallel: int = 1, threads: bool = False, on_result: Callable[[Result], None] | None = None,
        cluster: clusters.Options | None = None) -> list[Result]:
    """Run the jobs not yet in ``results`` (``parallel`` at a time, or on the Ray cluster ``cluster`` names), append
    each result as it arrives, return the file's latest finished result per key (earlier commands' included). A
    job's key must be computable from its result too. A job that raised, or that the cluster could not finish (its
    node died more than ``retries`` times), is written as its job's fields with an ``error`` message: the next
    command retries it. A cluster that cannot run anything: ``cluster.ClusterError``."""
    todo = pending(jobs, key, results)
    if todo:
        try:
            pool = clusters.pool(cluster, parallel, threads)
        except clusters.ClusterError as error:
            print(f"[runner] {error}; nothing was run ({len(todo)} jobs left)", file=sys.stderr)
            raise SystemExit(2) from None
        try:
            for job, result, error in pool.map_unordered(worker, todo):
                if error is not None:
                    print(f"[runner] job {key(job)} did not finish: {error}", file=sys.stderr, flush=True)
                    result = {**job, "error": error}
                append(results, result)
                if on_result is not None and "error" not in result:
                    on_result(result)
        finally:
            if isinstance(pool, clusters.RayPool):
                pool.close()
    return finished(results, key)


def exit_code(jobs: Iterable[Job], key: Callable[[Job], Hashable], results: Path) -> int:
    """0 when every job has a result without an error, else 1 (with one line saying how many are left)."""
    jobs = list(jobs)
    left = pending(jobs, key, results)
    if left:
        print(f"[runner] {len(left)} of {len(jobs)} jobs unfinished (their errors are in {results}); run the same "
              f"command again to retry them", file=sys.stderr)
    return 1 if left else 0


def module_command(module: str, *arguments: str) -> list[str]:
    """``python -m <module> ...`` with this interpreter (run it with ``root_env()``)."""
    return [sys.executable, "-m", module, *arguments]


def root_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment (default: this process's) with the repository root first on PYTHONPATH, so that
    ``python -m experiments.x`` / ``benchmarks.x`` work from any working directory."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env
