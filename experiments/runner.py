"""The one runner of the experiment drivers (preset search, probe focus, time to land, parity): a pool of workers over
jobs, one JSON line per finished job appended to a results file as it arrives (an interrupted command keeps every
finished job), jobs whose key is already in the file skipped (run the same command again to continue), and
``--report-only`` to rebuild a driver's tables from the file alone.

    results = runner.run(jobs, worker, key=lambda j: (j["variant"], j["seed"]), results=out / "runs.jsonl",
                         parallel=args.parallel)

A worker is a module-level function (picklable: each job runs in a fresh spawned process, so no state leaks from one
job to the next) or, with ``threads=True``, any callable that starts its own process tree (the drivers that launch
``adr-train`` or the node graph). Drivers and benchmarks start each other as ``python -m <package>.<module>`` from
the repository root (``module_command``, ``root_env``): nothing edits ``sys.path``.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
from collections.abc import Callable, Hashable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

Job = dict[str, Any]
Result = dict[str, Any]


def add_arguments(parser: argparse.ArgumentParser, *, parallel_help: str = "jobs at a time") -> None:
    """``--parallel`` and ``--report-only``, the options every driver shares."""
    parser.add_argument("--parallel", type=int, default=1, help=parallel_help)
    parser.add_argument("--report-only", action="store_true", help="only summarize the jobs already finished")


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


def pending(jobs: Iterable[Job], key: Callable[[Job], Hashable], results: Path) -> list[Job]:
    """The jobs with no result line yet, or whose last one is a failure (an ``error`` key), in their given order:
    a repeated command retries failed jobs and skips finished ones."""
    done = {key(r) for r in latest(load(results), key) if "error" not in r}
    return [job for job in jobs if key(job) not in done]


def _pool_results(todo: list[Job], worker: Callable[[Job], Result], parallel: int, threads: bool) -> Iterator[Result]:
    if threads:
        with ThreadPoolExecutor(max(1, parallel)) as pool:
            yield from pool.map(worker, todo)
    else:
        with multiprocessing.get_context("spawn").Pool(max(1, parallel), maxtasksperchild=1) as pool:
            yield from pool.imap_unordered(worker, todo)


def run(jobs: Iterable[Job], worker: Callable[[Job], Result], *, key: Callable[[Job], Hashable], results: Path,
        parallel: int = 1, threads: bool = False, on_result: Callable[[Result], None] | None = None) -> list[Result]:
    """Run the jobs not yet in ``results`` (``parallel`` at a time), append each result as it arrives, return the
    file's latest result per key (earlier commands' included). A job's key must be computable from its result too;
    a worker reports a failure it caught as a result with an ``error`` message (retried by the next command)."""
    todo = pending(jobs, key, results)
    if todo:
        for result in _pool_results(todo, worker, parallel, threads):
            append(results, result)
            if on_result is not None:
                on_result(result)
    return latest(load(results), key)


def module_command(module: str, *arguments: str) -> list[str]:
    """``python -m <module> ...`` with this interpreter (run it with ``root_env()``)."""
    return [sys.executable, "-m", module, *arguments]


def root_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment (default: this process's) with the repository root first on PYTHONPATH, so that
    ``python -m experiments.x`` / ``benchmarks.x`` work from any working directory."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env
