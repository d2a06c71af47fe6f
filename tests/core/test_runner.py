"""The experiment drivers' runner: finished jobs are skipped, failed ones retried, results appended as they arrive,
the same results from worker processes, threads and a Ray cluster; a job that raises costs only itself."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments import cluster, runner


def square(job: dict) -> dict:
    if job.get("fail"):
        return {"x": job["x"], "error": "failed on purpose"}
    if job.get("raise"):
        raise RuntimeError(f"job {job['x']} crashed")
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
    assert first == [] and runner.exit_code([{"x": 2}], key, results) == 1  # only finished results come back
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


@pytest.mark.parametrize("threads", [True, False])
def test_a_job_that_raises_is_one_error_line_and_the_others_finish(tmp_path: Path, threads: bool, capsys) -> None:
    results, seen = tmp_path / "runs.jsonl", []
    jobs = [{"x": 0}, {"x": 1, "raise": True}, {"x": 2}]
    out = runner.run(jobs, square, key=key, results=results, parallel=2, threads=threads, on_result=seen.append)
    assert sorted((r["x"], r["y"]) for r in out) == [(0, 0), (2, 4)] and sorted(r["x"] for r in seen) == [0, 2]
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert {"x": 1, "raise": True, "error": "RuntimeError: job 1 crashed"} in lines
    assert "job 1 did not finish: RuntimeError: job 1 crashed" in capsys.readouterr().err
    assert runner.exit_code(jobs, key, results) == 1
    runner.run([{"x": 1}], square, key=key, results=results)  # the next command retries it
    assert runner.exit_code([{"x": x} for x in range(3)], key, results) == 0


def test_a_ray_instance_gives_the_results_the_local_pool_gives(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed here (pip install 'src/adr_core[cluster]'); CI has it")
    jobs = [{"x": x} for x in range(4)] + [{"x": 9, "raise": True}]
    local = runner.run(jobs, square, key=key, results=tmp_path / "a.jsonl", parallel=2)
    on_ray = runner.run(jobs, square, key=key, results=tmp_path / "b.jsonl",
                        cluster=cluster.Options(backend="ray", cpus_per_job=1.0))
    assert sorted(on_ray, key=key) == sorted(local, key=key) and len(on_ray) == 4
    errors = [json.loads(line) for line in (tmp_path / "b.jsonl").read_text().splitlines() if "error" in line]
    assert [e["x"] for e in errors] == [9] and "job 9 crashed" in errors[0]["error"]


def test_a_cluster_too_small_for_one_job_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    pytest.importorskip("ray", reason="Ray is not installed here (pip install 'src/adr_core[cluster]'); CI has it")
    with pytest.raises(SystemExit) as stopped:
        runner.run([{"x": 1}], square, key=key, results=tmp_path / "runs.jsonl",
                   cluster=cluster.Options(backend="ray", cpus_per_job=512.0))
    assert stopped.value.code == 2
    assert "one job needs 512 (--cpus-per-job)" in capsys.readouterr().err
    assert not (tmp_path / "runs.jsonl").exists()
