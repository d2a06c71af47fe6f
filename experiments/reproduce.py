"""Reproduction harness: an (env x method x seed) grid of training runs at a stated budget, in parallel, resumable;
then the comparison report (adr-report) and a table of the paper's claims decided by stated rules.

    python -m experiments.reproduce --budget 50000 --out runs/repro          # LunarLander, 4 methods x seeds 0 1 2
    python -m experiments.reproduce --envs adr/LunarLander-v0 --methods adr udr baseline oracle --seeds 0 1 2 \\
        --budget 50000 --parallel 2 --out runs/repro
    python -m experiments.reproduce ... --dry-run                            # the plan and the command of every run
    python -m experiments.reproduce ... --run-as graph --instances 1         # each run as the ROS 2 node graph
    python -m experiments.reproduce ... --backend ray --address auto         # each run a task on a Ray cluster

Run the same command again to continue: finished runs (``DONE.json``, written once a trainer exits 0 at the budget)
are skipped, unfinished ones resume from their last checkpoint (``adr-train --resume`` / ``resume:=true``), runs
killed before their first checkpoint start over; the report is rebuilt only when a run changed. Ctrl-C stops every
run at its next iteration boundary with a checkpoint. A larger ``--budget`` continues finished runs to it.

Each run gets ``torch_threads = CPUs / --parallel`` (at least 1). The protocol (docs/reproduction.md): train on
the space's training range (LunarLander main engine [8, 20]); methods ADR, UDR, baseline (reference, 13), oracle
(the 'hard' range [8, 11]); evaluation over the full range and on the hard range; >= 3 seeds. Outputs in --out:
runs/<env>_<method>_s<seed>/ (run directories, train.log, attempts.jsonl, DONE.json), report/ (adr-report),
claims.md and claims.json (per claim: reproduced / not reproduced / inconclusive, with the numbers).
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from adr_core.cli_types import ArgumentParser
from adr_core.samplers import PAPER_METHODS
from experiments import cluster
from experiments import repro_grid as rg

DEFAULT_METHODS = list(PAPER_METHODS)  # adr, udr, baseline, oracle (the paper's comparison)
GRID_STAMP = "grid.json"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    cpus = os.cpu_count() or 1
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    grid = parser.add_argument_group("grid")
    grid.add_argument("--envs", nargs="+", default=["adr/LunarLander-v0"])
    grid.add_argument("--methods", nargs="+", default=DEFAULT_METHODS, choices=list(rg.method_samplers()))
    grid.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    grid.add_argument("--budget", type=int, required=True, help="agent steps per run (paper: 1000000)")
    grid.add_argument("--out", type=Path, default=Path("runs/repro"))
    grid.add_argument("--config", default=None, metavar="NAME|YAML",
                      help="config every run starts from (packaged name or YAML path), e.g. lunar_lander_adr_fast; "
                           "--methods then sets each run's sampler")
    grid.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                      help="config override for every run (adr-train --set syntax), e.g. agent.batch_size=256")
    running = parser.add_argument_group("running")
    running.add_argument("--parallel", type=int, default=cpus, help=f"runs at a time (default: CPUs = {cpus})")
    running.add_argument("--threads", type=int, default=None, help="torch threads per run (default CPUs/parallel)")
    running.add_argument("--run-as", choices=("adr-train", "graph"), default="adr-train",
                         help="each run as adr-train (in one process) or as the ROS 2 node graph (adr_launch)")
    running.add_argument("--instances", type=int, default=1, help="graph: simulator instances per run")
    running.add_argument("--mode", choices=("sync", "async"), default="sync", help="graph: sync or async")
    running.add_argument("--max-iterations", type=int, default=None,
                         help="adr-train: stop each run after N iterations of this invocation (time slicing)")
    running.add_argument("--domain-base", type=int, default=60, help="graph: ROS domain id of the first slot")
    running.add_argument("--dry-run", action="store_true", help="print the plan and the commands, run nothing")
    cluster.add_arguments(parser, default_cpus=1.0)
    report = parser.add_argument_group("report (adr-report options)")
    report.add_argument("--no-report", action="store_true", help="train only")
    report.add_argument("--eval-episodes", type=int, default=5, help="episodes per point and seed [5]")
    report.add_argument("--eval-seeds", type=int, nargs="+", default=[0, 1, 2], help="evaluation seeds [0 1 2]")
    report.add_argument("--points", type=int, default=None, help="sweep points per dimension [adr-report's]")
    report.add_argument("--report-arg", action="append", default=[], metavar="ARG",
                        help="extra adr-report argument, e.g. --report-arg=--no-checkpoint-curves")
    args = parser.parse_args(_old_backend_spelling(sys.argv[1:] if argv is None else argv))
    if args.run_as == "graph" and args.max_iterations is not None:
        parser.error("--max-iterations applies to --run-as adr-train only")
    if not args.dry_run:
        args.cluster = cluster.options(args, parser)  # checked before anything is written (--out included)
    if args.threads is None:
        args.threads = 1 if args.backend == "ray" else max(1, cpus // max(1, args.parallel))
    if args.backend == "ray" and args.cpus_per_job is None:
        args.cpus_per_job = float(args.threads)  # each run reserves the threads it uses
    return args


def _old_backend_spelling(argv: list[str]) -> list[str]:
    """``--backend adr-train|graph`` (before --backend said where the runs go) means ``--run-as``."""
    out = list(argv)
    for i, item in enumerate(out):
        value = item.split("=", 1)[1] if item.startswith("--backend=") else (
            out[i + 1] if item == "--backend" and i + 1 < len(out) else None)
        if value in ("adr-train", "graph"):
            print(f"reproduce: --backend {value} is now --run-as {value} (--backend: local or ray)", file=sys.stderr)
            if item == "--backend":
                out[i] = "--run-as"
            else:
                out[i] = f"--run-as={value}"
    return out


def grid_options(args: argparse.Namespace) -> rg.GridOptions:
    overrides = []
    for item in args.set:
        if "=" not in item:
            raise SystemExit(f"reproduce: --set needs KEY=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        overrides.append((key.strip(), value))
    return rg.GridOptions(budget=args.budget, backend=args.run_as, torch_threads=args.threads,
                          overrides=tuple(overrides), max_iterations=args.max_iterations, instances=args.instances,
                          mode=args.mode, config=args.config)


class GridRunner:
    """Runs the pending runs, ``parallel`` at a time on this machine (or as Ray tasks on a cluster: ``cluster``);
    Ctrl-C (SIGINT) is passed on to every running trainer, which checkpoints at its next iteration boundary."""

    def __init__(self, out: Path, options: rg.GridOptions, parallel: int, domain_base: int,
                 cluster_options: cluster.Options | None = None) -> None:
        self.out, self.options, self.parallel = out, options, parallel
        self.cluster = cluster_options
        self.free_domains = list(range(domain_base, domain_base + parallel))
        self.domain_base = domain_base
        self.lock = threading.Lock()
        self.running: set[subprocess.Popen] = set()
        self.stopping = False

    def run_all(self, pending: list[tuple[rg.RunSpec, rg.State]]) -> dict[str, str]:
        if self.cluster is not None and self.cluster.backend == "ray":
            return self._run_on_ray([spec for spec, _ in pending])
        outcomes: dict[str, str] = {}
        with ThreadPoolExecutor(max_workers=self.parallel) as pool:
            futures = {spec.name: pool.submit(self.run_one, spec) for spec, _ in pending}
            try:
                while not all(f.done() for f in futures.values()):
                    time.sleep(0.2)
            except KeyboardInterrupt:
                self.stop()
            for name, future in futures.items():
                outcomes[name] = future.result() if not future.cancelled() else "not started"
        return outcomes

    def _run_on_ray(self, specs: list[rg.RunSpec]) -> dict[str, str]:
        """Each run a Ray task (``train_run`` on the node Ray picks; a task whose node dies runs again and resumes
        from the run's last checkpoint); Ctrl-C cancels them (each trainer checkpoints)."""
        assert self.cluster is not None
        pool = cluster.RayPool(self.cluster)
        jobs = [(spec, self.domain_base + i % 100) for i, spec in enumerate(specs)]
        outcomes: dict[str, str] = {}
        try:
            for job, outcome, error in pool.map_unordered(functools.partial(_train_job, self.out, self.options), jobs):
                outcomes[job[0].name] = outcome if error is None else f"FAILED ({error})"
                if error is not None:
                    print(f"[{job[0].name}] FAILED on the cluster: {error}", flush=True)
        except KeyboardInterrupt:
            print("\nreproduce: stopping: every run checkpoints at its next iteration boundary", file=sys.stderr)
        finally:
            pool.close()
        return outcomes

    def stop(self) -> None:
        print("\nreproduce: stopping: every run checkpoints at its next iteration boundary", file=sys.stderr)
        with self.lock:
            self.stopping = True
            for process in self.running:
                process.send_signal(signal.SIGINT)

    def run_one(self, spec: rg.RunSpec) -> str:
        with self.lock:
            if self.stopping:
                return "not started"
            domain = self.free_domains.pop()
        try:
            return train_run(self.out, self.options, spec, domain, self._track)
        finally:
            with self.lock:
                self.free_domains.append(domain)

    def _track(self, process: subprocess.Popen, running: bool) -> None:
        with self.lock:
            (self.running.add if running else self.running.discard)(process)


def _train_job(out: Path, options: rg.GridOptions, job: tuple[rg.RunSpec, int]) -> str:
    """A Ray task: one run of the grid on this node (its trainer dies with the task's worker)."""
    spec, domain = job
    return train_run(out, options, spec, domain, die_with_task=True)


def train_run(out: Path, options: rg.GridOptions, spec: rg.RunSpec, domain: int,
              track: Callable[[subprocess.Popen, bool], None] | None = None, die_with_task: bool = False) -> str:
    """One run of the grid to its budget: started over when it has no checkpoint yet, else resumed from it (the
    state is read here, when the run starts: a retried Ray task resumes what its first attempt left); the outcome."""
    directory = rg.run_dir(out, spec)
    state = rg.state_of(directory, options)
    if state == "done":
        return "done"
    if state == "new":
        rg.clear_partial(directory)
    directory.mkdir(parents=True, exist_ok=True)
    command = rg.command(spec, directory, options, state)
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               PYTHONUNBUFFERED="1")
    print(f"[{spec.name}] {'resuming' if state == 'resume' else 'starting'}: {' '.join(command)}", flush=True)
    started = time.perf_counter()
    with open(directory / rg.LOG_FILE, "ab") as log:
        log.write(f"\n=== reproduce.py {time.strftime('%Y-%m-%d %H:%M:%S')}: {' '.join(command)}\n".encode())
        log.flush()
        # own session: a Ctrl-C in the terminal reaches the trainers only through stop(), exactly once
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                   preexec_fn=cluster.die_with_parent if die_with_task else None)
        if track is not None:
            track(process, True)
        try:
            returncode = process.wait()
        except KeyboardInterrupt:  # a cancelled Ray task: the trainer checkpoints, then the task ends
            process.send_signal(signal.SIGINT)
            returncode = process.wait()
        finally:
            if track is not None:
                track(process, False)
    wall_s = time.perf_counter() - started
    rg.record_attempt(directory, state, returncode, wall_s)
    marker = rg.mark_done(directory, spec, options) if returncode == 0 else None
    steps = rg.progress_of(directory)[0]
    outcome = ("done" if marker else f"unfinished ({steps} steps)" if returncode in (0, 130)
               else f"FAILED (exit {returncode}; see {directory / rg.LOG_FILE})")
    print(f"[{spec.name}] {outcome} after {wall_s:.0f} s", flush=True)
    return outcome


def report_is_current(report_dir: Path, stamp: dict) -> bool:
    try:
        return json.loads((report_dir / GRID_STAMP).read_text()) == stamp
    except (OSError, ValueError):
        return False


def build_report(args: argparse.Namespace, specs: list[rg.RunSpec]) -> bool:
    """adr-report over the grid's run directories, then the claims; skipped when nothing changed."""
    from experiments.repro_claims import claims_data, claims_markdown

    report_dir = args.out / "report"
    markers = {spec.name: rg.done_marker(rg.run_dir(args.out, spec)) for spec in specs}
    report_args = ["--episodes", str(args.eval_episodes), "--seeds", *map(str, args.eval_seeds),
                   "--workers", str(os.cpu_count() or 1), *(["--points", str(args.points)] if args.points else []),
                   *args.report_arg]
    stamp = {"runs": markers, "report_args": report_args}
    if report_is_current(report_dir, stamp):
        print(f"report: up to date ({report_dir}); claims: {args.out / 'claims.md'}")
        return True
    command = ["adr-report", *(str(rg.run_dir(args.out, s)) for s in specs), "--out", str(report_dir), *report_args]
    print(f"report: {' '.join(command)}", flush=True)
    if subprocess.run(command).returncode != 0:
        print("reproduce: adr-report failed", file=sys.stderr)
        return False
    claims = [claims_markdown(report_dir, env, args.budget, args.seeds) + per_setting(args.out, env)
              for env in args.envs]
    (args.out / "claims.md").write_text("\n".join(claims))
    data = [{"budget": args.budget, "seeds": args.seeds, **claims_data(report_dir, env)} for env in args.envs]
    (args.out / "claims.json").write_text(json.dumps(data, indent=1))
    (report_dir / GRID_STAMP).write_text(json.dumps(stamp, indent=1))
    print("\n" + "\n".join(claims))
    return True


def per_setting(out: Path, env_id: str) -> str:
    """The per-setting tables and, for ADR, where the final policies fail vs where the sampler proposed."""
    from experiments import repro_sweep

    report_dir = out / "report"
    try:
        sweep = repro_sweep.load_sweep(report_dir, env_id)
    except (OSError, ValueError) as error:
        return f"\nNo per-setting table: {error}\n"
    text = "\n## Per setting\n\n" + repro_sweep.sweep_markdown(sweep, env_id)
    runs = {seed: rg.run_dir(out, rg.RunSpec(env_id, "adr", seed))
            for seed in (sweep.methods["ADR"][0].solved if "ADR" in sweep.methods else {})}
    if runs and all(path.is_dir() for path in runs.values()):
        short = env_id.split("/")[-1].split("-")[0].lower()
        path = report_dir / "figures" / f"{short}_adr_failures_vs_proposals.png"
        figure = repro_sweep.focus_figure(sweep, runs, path, env_id)
        text += (f"\n## Where the ADR policies fail vs where their sampler proposed\n\n"
                 f"![{figure.name}](report/figures/{figure.name})\n\n" + repro_sweep.focus_table(sweep, runs))
    return text


def print_plan(out: Path, plan: list[tuple[rg.RunSpec, rg.State]], options: rg.GridOptions) -> None:
    print(f"{len(plan)} runs, budget {options.budget} agent steps, as {options.backend}, "
          f"{options.torch_threads} torch thread(s) per run; {out}")
    for spec, state in plan:
        steps = rg.progress_of(rg.run_dir(out, spec))[0]
        print(f"  {spec.name:28s} {state:6s} {steps:>9d} steps so far")


def print_summary(out: Path, specs: list[rg.RunSpec]) -> None:
    print("\n| run | agent steps | iterations | iteration s | wall s | steps/s (wall) |")
    print("|---|---|---|---|---|---|")
    for spec in specs:
        directory = rg.run_dir(out, spec)
        steps, iterations, iteration_s = rg.progress_of(directory)
        wall_s = sum(a["wall_s"] for a in rg.attempts_of(directory))
        rate = f"{steps / wall_s:.1f}" if wall_s > 0 else ""
        print(f"| {spec.name} | {steps} | {iterations} | {iteration_s:.1f} | {wall_s:.1f} | {rate} |")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    options = grid_options(args)
    specs = rg.grid(args.envs, args.methods, args.seeds)
    plan = [(spec, rg.state_of(rg.run_dir(args.out, spec), options)) for spec in specs]
    print_plan(args.out, plan, options)
    pending = [(spec, state) for spec, state in plan if state != "done"]
    if args.dry_run:
        for spec, state in pending:
            print(" ".join(rg.command(spec, rg.run_dir(args.out, spec), options, state)))
        return 0
    if pending:
        try:
            GridRunner(args.out, options, args.parallel, args.domain_base, args.cluster).run_all(pending)
        except cluster.ClusterError as error:
            print(f"reproduce: {error}", file=sys.stderr)
            return 2
    print_summary(args.out, specs)
    unfinished = [s.name for s in specs if rg.state_of(rg.run_dir(args.out, s), options) != "done"]
    if unfinished:
        print(f"\n{len(unfinished)} run(s) not finished ({', '.join(unfinished)}): run the same command again to "
              f"continue them; the report is built once every run is done.")
        return 1 if any("FAILED" in line for line in _last_outcomes(args.out, unfinished)) else 0
    if args.no_report:
        return 0
    return 0 if build_report(args, specs) else 1


def _last_outcomes(out: Path, names: list[str]) -> list[str]:
    lines = []
    for name in names:
        attempts = rg.attempts_of(out / "runs" / name)
        if attempts and attempts[-1]["returncode"] not in (0, 130):
            lines.append(f"FAILED {name}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
