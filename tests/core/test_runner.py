"""The experiment drivers' runner: finished jobs are skipped, failed ones retried, results appended as they arrive,
the same results from worker processes and threads."""
from __future__ import annotations

import json
from pathlib import Path

from experiments import runner


def square(job: dict) -> dict:
    if job.get("fail"):
        return {"x": job["x"], "error": "failed on purpose"}
    return {"x": job["x"], "y": job["x"] ** 2}


def key(result: dict) -> int:
    return result["x"]


def test_a_repeated_command_runs_only_the_jobs_not_finished(tmp_path: Path) -> None:
    results = tmp_path / "runs.jsonl"
    runner.append(results, {"x": 1, "y": 1})
    seen: list[dict] = []
    out = runner.run([{"x": x} for x in range(4)], square, key=key, results=results, parallel=2, threads=True,
                     on_result=seen.append)
    assert sorted(r["x"] for r in seen) == [0, 2, 3]  # x=1 was in the file already
    assert sorted((r["x"], r["y"]) for r in out) == [(0, 0), (1, 1), (2, 4), (3, 9)]
    assert len(results.read_text().splitlines()) == 4
    assert runner.run([{"x": x} for x in range(4)], square, key=key, results=results) == out  # nothing left to do


def test_a_failed_job_is_retried_and_counts_once(tmp_path: Path) -> None:
    results = tmp_path / "runs.jsonl"
    first = runner.run([{"x": 2, "fail": True}], square, key=key, results=results, threads=True)
    assert first == [{"x": 2, "error": "failed on purpose"}]
    assert runner.pending([{"x": 2}], key, results) == [{"x": 2}]
    second = runner.run([{"x": 2}], square, key=key, results=results, threads=True)
    assert second == [{"x": 2, "y": 4}]
    assert [json.loads(line).get("error") for line in results.read_text().splitlines()] == ["failed on purpose", None]


def test_worker_processes_give_the_results_threads_give(tmp_path: Path) -> None:
    jobs = [{"x": x} for x in range(3)]
    spawned = runner.run(jobs, square, key=key, results=tmp_path / "a.jsonl", parallel=2)
    threaded = runner.run(jobs, square, key=key, results=tmp_path / "b.jsonl", parallel=2, threads=True)
    assert sorted(spawned, key=key) == sorted(threaded, key=key)


def test_root_env_puts_the_repository_first_on_the_python_path() -> None:
    env = runner.root_env({"PYTHONPATH": "/elsewhere"})
    assert env["PYTHONPATH"].split(":") == [str(runner.ROOT), "/elsewhere"]
    assert runner.module_command("experiments.parity", "--help")[1:] == ["-m", "experiments.parity", "--help"]
