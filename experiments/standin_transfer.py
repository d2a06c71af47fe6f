"""The paper's zero-shot experiments against the stand-in arm: trained ErgoReacher or ErgoPusher policies, deployed
through the real graph (``adr_launch adr deploy_real.launch.py``: driver, pypot, the pty, the policy runner over Fast
DDS) onto ``adr-standin-arm`` (PyBullet physics with a servo model the training never saw), at each setting.

    python -m experiments.standin_transfer --runs runs/er/adr_s200 runs/er/udr_s200 ... \\
        --settings reference weak_torque --goals 25 --out runs/transfer
    python -m experiments.standin_transfer --task pusher --runs runs/ep/adr_s230 ... \\
        --settings reference slippery rough weak_torque+reference --goals 25 --out runs/transfer_pusher
                                                   # pusher settings: the puck's, or the arm's + the puck's

Every policy plays the same ``--goals`` random goals (``--goal-seed``, a seed no training evaluation uses) in every
setting; a fresh stand-in arm is started for each (policy, setting), the driver at its default moving speed (1.5
rad/s) unless ``--max-speed`` says otherwise. Results: ``<out>/<setting>/<method>_seed<k>.jsonl``
(the runner's episode summaries; method and seed from each run's config.yaml), then ``adr-deploy-report --transfer``
writes ``<out>/report/transfer.md`` with the figure. A repeated command skips the (policy, setting) pairs whose file
already holds all goals. Output of each launch: ``<out>/logs/``. ``--parallel N`` deploys N pairs at a time (each
its own stand-in, pty and ROS domain: ``--domain`` + its index), ``--backend ray`` each pair as a task on a Ray
cluster (docs/cluster.md); the stand-in runs in real time, so leave a core per pair.
"""
from __future__ import annotations

import argparse
import functools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from adr_core.cli_types import ArgumentParser
from experiments import cluster

READY = "adr-standin-arm: XL-320 motors"


def method_and_seed(run: Path) -> tuple[str, int]:
    config = yaml.safe_load((run / "config.yaml").read_text())
    method = {"fixed": "oracle"}.get(config["sampler"], config["sampler"])
    return method, int(config["seed"])


def standin_command(task: str, setting: str, link: Path) -> list[str]:
    """ErgoReacher: ``setting`` is the arm's servo setting; ErgoPusher: the puck's (the arm at its reference), or
    ``ARM+PUCK`` (e.g. ``weak_torque+reference``: the arm's servo setting and the puck's)."""
    if task == "pusher":
        arm, _, puck = setting.rpartition("+")
        return ["adr-standin-arm", "--task", "pusher", "--puck", puck, "--setting", arm or "reference", "--link",
                str(link)]
    return ["adr-standin-arm", "--setting", setting, "--link", str(link)]


def start_standin(command: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    handle = log.open("w")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=handle, text=True, start_new_session=True,
                               env=env, preexec_fn=cluster.die_with_parent)
    line = process.stdout.readline() if process.stdout else ""
    if READY not in line:
        process.kill()
        raise RuntimeError(f"the stand-in arm did not start: {line.strip() or 'no output'} (see {log})")
    handle.write(line)
    handle.flush()
    return process


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def deploy(run: Path, setting: str, args: argparse.Namespace, results: Path, env: dict[str, str]) -> int:
    link = Path(tempfile.mkdtemp(prefix="standin_")) / "ttyPOPPY"
    logs = args.out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    stem = f"{setting}_{results.stem}"
    standin = start_standin(standin_command(args.task, setting, link), logs / f"{stem}_standin.log", env)
    try:
        command = ["adr_launch", "adr", "deploy_real.launch.py", f"checkpoint:={run}", f"port:={link}",
                   f"episodes:={args.goals}", f"seed:={args.goal_seed}", f"results_file:={results}",
                   f"steps_file:={results.with_suffix('.steps.csv')}"]
        if args.max_speed is not None:
            command.append(f"max_speed:={args.max_speed:g}")
        with (logs / f"{stem}_deploy.log").open("w") as out:
            done = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=args.timeout,
                                  preexec_fn=cluster.die_with_parent)  # no orphan if this job's worker dies
        return done.returncode
    finally:
        stop(standin)


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, nargs="+", required=True,
                        help="run directories of ErgoReacher (or, --task pusher, ErgoPusher) policies")
    parser.add_argument("--task", choices=("reacher", "pusher"), default="reacher",
                        help="reacher: --settings are the arm's servo settings; pusher: the puck's (the stand-in "
                             "at the table with a puck and its tracker)")
    parser.add_argument("--settings", nargs="+", default=None,
                        help="stand-in settings (poppy_standin/config/standin.yaml; default: reference weak_torque, "
                             "or for --task pusher reference slippery rough)")
    parser.add_argument("--goals", type=int, default=25)
    parser.add_argument("--goal-seed", type=int, default=7000, help="seed of the deploy graph's random goals")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per (policy, setting) deployment")
    parser.add_argument("--domain", type=int, default=77, help="ROS_DOMAIN_ID of the first deploy graph")
    parser.add_argument("--parallel", type=int, default=1, help="pairs deployed at a time on this machine")
    parser.add_argument("--max-speed", type=float, default=None,
                        help="the driver's servo moving speed [rad/s] (deploy_real's max_speed:=, bounds 0.05-7; "
                             "default: the driver's 1.5). The simulators' servos reach 4-13 rad/s in an episode")
    cluster.add_arguments(parser)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.max_speed is not None and not 0.05 <= args.max_speed <= 7.0:
        parser.error(f"--max-speed {args.max_speed:g}: the driver takes 0.05-7 rad/s")
    where = cluster.options(args, parser)  # checked before anything is written (--out included)
    if args.settings is None:
        args.settings = ["reference", "slippery", "rough"] if args.task == "pusher" else ["reference", "weak_torque"]
    wanted = {"reacher": "adr/ErgoReacher-v0", "pusher": "adr/ErgoPusher-v0"}[args.task]
    for run in args.runs:
        try:
            env_id = yaml.safe_load((run / "config.yaml").read_text()).get("env_id")
        except (OSError, yaml.YAMLError, AttributeError) as error:
            parser.error(f"{run}: no readable config.yaml ({error})")
        if env_id != wanted:
            parser.error(f"{run} trained {env_id}; --task {args.task} deploys {wanted} policies")
    keys: dict[tuple[str, int], Path] = {}
    for run in args.runs:  # results files are named by method and seed: two runs must not share one
        key = method_and_seed(run)
        if key in keys:
            parser.error(f"{keys[key]} and {run} are both {key[0]} seed {key[1]}: their episodes would go to one "
                         f"results file; deploy them with separate --out folders")
        keys[key] = run
    jobs = []
    for setting in args.settings:
        for run in args.runs:
            method, seed = method_and_seed(run)
            results = args.out / setting / f"{method}_seed{seed}.jsonl"
            done = len(results.read_text().splitlines()) if results.is_file() else 0
            if done < args.goals:
                jobs.append({"setting": setting, "run": str(run.resolve()), "results": str(results.resolve()),
                             "domain": args.domain + len(jobs) % 100, "label": f"{setting} {method} seed {seed}"})
    failures = 0
    if jobs:
        try:
            pool = cluster.pool(where, args.parallel, threads=True)
        except cluster.ClusterError as error:
            print(f"standin_transfer: {error}; nothing was deployed", file=sys.stderr)
            return 2
        try:
            for job, code, error in pool.map_unordered(functools.partial(deploy_pair, args), jobs):
                failed = error is not None or code != 0
                failures += failed
                print(f"{job['label']}: {error or f'exit {code}'}", flush=True)
        finally:
            if isinstance(pool, cluster.RayPool):
                pool.close()
    report = subprocess.run(["adr-deploy-report", "--transfer", str(args.out), "--out", str(args.out / "report")])
    return 1 if failures or report.returncode else 0


def deploy_pair(args: argparse.Namespace, job: dict) -> int:
    """One (policy, setting) pair in its own ROS domain; a partial file from an interrupted launch starts again."""
    results = Path(job["results"])
    results.parent.mkdir(parents=True, exist_ok=True)
    if results.is_file():
        results.unlink()
        results.with_suffix(".steps.csv").unlink(missing_ok=True)
    env = {**os.environ, "ROS_DOMAIN_ID": str(job["domain"]), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
           "PYTHONUNBUFFERED": "1"}
    start = time.perf_counter()
    code = deploy(Path(job["run"]), job["setting"], args, results, env)
    print(f"{job['label']}: exit {code}, {time.perf_counter() - start:.0f} s", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
