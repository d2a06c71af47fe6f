"""Reproduction harness: an (env x method x seed) grid of training runs at a stated budget, in parallel, resumable;
then the comparison report (adr-report) and a table of the paper's claims decided by stated rules.

    python -m experiments.reproduce --budget 50000 --out runs/repro          # LunarLander, 4 methods x seeds 0 1 2
    python -m experiments.reproduce --envs adr/LunarLander-v0 --methods adr udr baseline oracle --seeds 0 1 2 \\
        --budget 50000 --parallel 2 --out runs/repro
    python -m experiments.reproduce ... --dry-run                            # the plan and the command of every run
    python -m experiments.reproduce ... --backend graph --instances 1        # each run as the ROS 2 node graph

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
import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from adr_core.samplers import PAPER_METHODS
from experiments import repro_grid as rg

DEFAULT_METHODS = list(PAPER_METHODS)  # adr, udr, baseline, oracle (the paper's comparison)
GRID_STAMP = "grid.json"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    cpus = os.cpu_count() or 1
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    running.add_argument("--backend", choices=("adr-train", "graph"), default="adr-train")
    running.add_argument("--instances", type=int, default=1, help="graph: simulator instances per run")
    running.add_argument("--mode", choices=("sync", "async"), default="sync", help="graph: sync or async")
    running.add_argument("--max-iterations", type=int, default=None,
                         help="adr-train: stop each run after N iterations of this invocation (time slicing)")
    running.add_argument("--domain-base", type=int, default=60, help="graph: ROS domain id of the first slot")
    running.add_argument("--dry-run", action="store_true", help="print the plan and the commands, run nothing")
    report = parser.add_argument_group("report (adr-report options)")
    report.add_argument("--no-report", action="store_true", help="train only")
    report.add_argument("--eval-episodes", type=int, default=5, help="episodes per point and seed [5]")
    report.add_argument("--eval-seeds", type=int, nargs="+", default=[0, 1, 2], help="evaluation seeds [0 1 2]")
    report.add_argument("--points", type=int, default=None, help="sweep points per dimension [adr-report's]")
    report.add_argument("--report-arg", action="append", default=[], metavar="ARG",
                        help="extra adr-report argument, e.g. --report-arg=--no-checkpoint-curves")
    args = parser.parse_args(argv)
    if args.backend == "graph" and args.max_iterations is not None:
        parser.error("--max-iterations applies to the adr-train backend only")
    if args.threads is None:
        args.threads = max(1, cpus // max(1, args.parallel))
    return args


def grid_options(args: argparse.Namespace) -> rg.GridOptions:
    overrides = []
    for item in args.set:
        if "=" not in item:
            raise SystemExit(f"reproduce: --set needs KEY=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        overrides.append((key.strip(), value))
    return rg.GridOptions(budget=args.budget, backend=args.backend, torch_threads=args.threads,
                          overrides=tuple(overrides), max_iterations=args.max_iterations, instances=args.instances,
                          mode=args.mode, config=args.config)


class GridRunner:
    """Runs the pending runs, ``parallel`` at a time; Ctrl-C (SIGINT) is passed on to every running trainer."""

    def __init__(self, out: Path, options: rg.GridOptions, parallel: int, domain_base: int) -> None:
        self.out, self.options, self.parallel = out, options, parallel
        self.free_domains = list(range(domain_base, domain_base + parallel))
        self.lock = threading.Lock()
        self.running: set[subprocess.Popen] = set()
        self.stopping = False

    def run_all(self, pending: list[tuple[rg.RunSpec, rg.State]]) -> dict[str, str]:
        outcomes: dict[str, str] = {}
        with ThreadPoolExecutor(max_workers=self.parallel) as pool:
            futures = {spec.name: pool.submit(self.run_one, spec, state) for spec, state in pending}
            try:
                while not all(f.done() for f in futures.values()):
                    time.sleep(0.2)
            except KeyboardInterrupt:
                self.stop()
            for name, future in futures.items():
                outcomes[name] = future.result() if not future.cancelled() else "not started"
        return outcomes

    def stop(self) -> None:
        print("\nreproduce: stopping: every run checkpoints at its next iteration boundary", file=sys.stderr)
        with self.lock:
            self.stopping = True
            for process in self.running:
                process.send_signal(signal.SIGINT)

    def run_one(self, spec: rg.RunSpec, state: rg.State) -> str:
        directory = rg.run_dir(self.out, spec)
        with self.lock:
            if self.stopping:
                return "not started"
            domain = self.free_domains.pop()
        try:
            if state == "new":
                rg.clear_partial(directory)
            directory.mkdir(parents=True, exist_ok=True)
            command = rg.command(spec, directory, self.options, state)
            env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
                       PYTHONUNBUFFERED="1")
            print(f"[{spec.name}] {'resuming' if state == 'resume' else 'starting'}: {' '.join(command)}", flush=True)
            started = time.perf_counter()
            with open(directory / rg.LOG_FILE, "ab") as log:
                log.write(f"\n=== reproduce.py {time.strftime('%Y-%m-%d %H:%M:%S')}: {' '.join(command)}\n".encode())
                log.flush()
                # own session: a Ctrl-C in the terminal reaches the trainers only through stop(), exactly once
                process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT,
                                           start_new_session=True)
                with self.lock:
                    self.running.add(process)
                returncode = process.wait()
                with self.lock:
                    self.running.discard(process)
            wall_s = time.perf_counter() - started
            rg.record_attempt(directory, state, returncode, wall_s)
            marker = rg.mark_done(directory, spec, self.options) if returncode == 0 else None
            steps = rg.progress_of(directory)[0]
            outcome = ("done" if marker else f"unfinished ({steps} steps)" if returncode in (0, 130)
                       else f"FAILED (exit {returncode}; see {directory / rg.LOG_FILE})")
            print(f"[{spec.name}] {outcome} after {wall_s:.0f} s", flush=True)
            return outcome
        finally:
            with self.lock:
                self.free_domains.append(domain)


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
    print(f"{len(plan)} runs, budget {options.budget} agent steps, backend {options.backend}, "
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
        GridRunner(args.out, options, args.parallel, args.domain_base).run_all(pending)
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
