"""``adr-train``: run Algorithm 1 (ADR) or a baseline sampler in one process.

Config precedence: paper defaults < --config YAML < --set / per-field flags. ``--resume`` reads
<out>/config.yaml and <out>/checkpoints/latest.pt; only runtime fields may change on resume.
"""
from __future__ import annotations

import argparse
import signal
import sys
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from ..base.checkpoint import CheckpointError
from ..cli_types import (
    ArgumentParser,
    Checked,
    at_least,
    env_modules_option,
    existing_path,
    output_dir,
    text,
    writable_dir,
)
from ..envs import allow_env_modules
from ..run_dir import RunDirError, prepare_run_dir
from .config import ConfigError, TrainConfig, field_docs
from .experiments import EXPERIMENTS_DIR, packaged_experiments, resolve_experiment
from .trainer import CONFIG_FILE, Trainer

DESCRIPTION = """\
Train an agent with Active Domain Randomization (Mehta et al., CoRL 2019, Algorithm 1) or with one of
the other samplers (--sampler below: the paper's comparisons and those beyond it), in one process.

Every config key below can be set in a YAML file (--config) or on the command line
(--agent.batch_size 256, or --set agent.batch_size=256). Defaults are the paper's unless noted.

Outputs in --out: config.yaml, metrics.csv (one row per iteration), sampled_parameters.csv
(iteration, slot, normalized and physical values), tb/ (TensorBoard), checkpoints/latest.pt and
checkpoints/iter_<n>.pt. See docs/algorithm.md."""

EPILOG = """\
examples:
  adr-train --config lunar_lander_adr --out runs/ll_adr_s0 --seed 0
  adr-train --config lunar_lander_udr --out runs/ll_udr_s0 --total_agent_steps 200000
  adr-train --out runs/ll_adr_s0 --resume                       # continue after an interruption
  adr-train --config lunar_lander_adr --out runs/boot --bootstrap runs/ll_adr_s0/checkpoints/latest.pt
packaged experiments: """


def _type_name(kind: Any) -> str:
    origin = typing.get_origin(kind)
    if origin is typing.Literal:
        return "{" + ",".join(map(str, typing.get_args(kind))) + "}"
    if origin is tuple:
        return "LIST"
    if origin is not None:
        inner = [a for a in typing.get_args(kind) if a is not type(None)]
        return _type_name(inner[0]) if inner else "VALUE"
    return {int: "INT", float: "FLOAT", bool: "BOOL", str: "STR"}.get(kind, "VALUE")


# a config key's value: YAML, checked by TrainConfig (type and range) before anything is written
CONFIG_VALUE = Checked("config_value", "YAML value of a config key", lambda value: value, lambda _: ["[1,", "{a"])


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="adr-train", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG + ", ".join(packaged_experiments()))
    run = parser.add_argument_group("run")
    run.add_argument("--config", metavar="YAML|NAME", type=text("experiment name or YAML file"),
                     help="Experiment YAML file, or the name of a packaged one (see the list below). "
                          "Without it: the paper's defaults (LunarLander, ADR).")
    run.add_argument("--out", metavar="DIR", type=output_dir(), help="Output directory of the run (required to train).")
    run.add_argument("--list", action="store_true",
                     help="List the packaged experiments (names for --config and config:=) with their first line, "
                          "then exit.")
    run.add_argument("--resume", action="store_true",
                     help="Continue the run in --out from checkpoints/latest.pt (its config.yaml is used unless "
                          "--config is given; only runtime keys such as total_agent_steps or device may change).")
    run.add_argument("--bootstrap", metavar="CHECKPOINT", type=existing_path("checkpoint"),
                     help="Start a fresh agent with the SVPG particles and discriminator of this checkpoint "
                          "(paper appendix 'Bootstrapping Training of New Agents').")
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", type=text("KEY=VALUE"),
                     help="Override any config key (YAML value syntax), e.g. --set agent.hidden_sizes=[64,64].")
    env_modules_option(parser)
    run.add_argument("--max-iterations", type=at_least(1), default=None, metavar="N",
                     help="Stop after N iterations of this invocation (the budget still applies).")

    keys = parser.add_argument_group("config keys (default in brackets)")
    for name, kind, help_text, default in field_docs():
        shown = "null" if default is None else (list(default) if isinstance(default, tuple) else default)
        keys.add_argument(f"--{name}", dest=f"key:{name}", metavar=_type_name(kind), default=None, type=CONFIG_VALUE,
                          help=f"{help_text} [{shown}]")
    return parser


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    out = Path(args.out)
    overrides: dict[str, Any] = {}
    for item in args.set:
        if "=" not in item:
            raise ConfigError(f"--set needs KEY=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        overrides[key.strip()] = _yaml_value(f"--set {key.strip()}", value)
    for dest, value in vars(args).items():
        if dest.startswith("key:") and value is not None:
            overrides[dest[4:]] = _yaml_value(f"--{dest[4:]}", value)
    if args.config:
        config = TrainConfig.from_yaml(resolve_experiment(args.config))
    elif args.resume:
        if not (out / CONFIG_FILE).is_file():
            raise ConfigError(f"--resume: {out / CONFIG_FILE} does not exist; is {out} a run directory?")
        # the run's own file: the modules it names are imported only when named here too
        for key in ("env_modules", "sampler_modules"):
            if isinstance(overrides.get(key), list):
                allow_env_modules(str(m) for m in overrides[key])
        config = TrainConfig.from_saved_yaml(out / CONFIG_FILE)
    else:
        config = TrainConfig()
    if args.config and overrides.get("env_id", config.env_id) != config.env_id:  # a preset is tuned for its env
        raise ConfigError(f"env_id {overrides['env_id']} contradicts --config {args.config}, a config of "
                          f"{config.env_id}; drop the env_id override or choose a config of {overrides['env_id']} "
                          f"(adr-train --list)")
    return config.with_overrides(overrides) if overrides else config


def _yaml_value(option: str, text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ConfigError(f"{option}={text!r} is not a valid YAML value ({problem})") from None


def _check_out(out: Path, resume: bool) -> None:
    try:
        writable_dir(out)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    if not resume and (out / "checkpoints" / "latest.pt").exists():
        raise ConfigError(f"{out} already holds a run; use --resume to continue it or choose another --out")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list:
        for name in packaged_experiments():
            first = (EXPERIMENTS_DIR / f"{name}.yaml").read_text().splitlines()[0].lstrip("# ").strip()
            print(f"{name:40s} {first}")
        return 0
    if not args.out:
        parser.error("the following arguments are required: --out")
    allow_env_modules(args.env_modules)
    try:
        _check_out(Path(args.out), args.resume)
        config = config_from_args(args)
        trainer = Trainer(config, args.out, resume=args.resume, bootstrap_from=args.bootstrap)
        prepare_run_dir(args.out)  # every argument was valid: now the folder (an unwritable one is one line)
    except (ConfigError, CheckpointError, RunDirError) as exc:
        parser.exit(2, f"adr-train: error: {exc}\n")
    def stop_at_iteration_end(*_: object) -> None:
        # first Ctrl-C: finish the iteration, checkpoint it, exit; a second one interrupts at once
        trainer.stop_requested.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        print("\nadr-train: stopping after this iteration (Ctrl-C again to abort without a checkpoint)",
              file=sys.stderr)

    previous = signal.signal(signal.SIGINT, stop_at_iteration_end)
    try:
        rows = trainer.run(max_iterations=args.max_iterations)
    except KeyboardInterrupt:
        print(f"\nadr-train: interrupted; `adr-train --out {args.out} --resume` continues from the last "
              f"checkpoint", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGINT, previous)
    if trainer.stop_requested.is_set():
        print(f"adr-train: stopped after iteration {trainer.iteration - 1} with a checkpoint; "
              f"`adr-train --out {args.out} --resume` continues", file=sys.stderr)
    if trainer.solved:
        print(f"adr-train: stopped early at {trainer.agent_steps} agent steps: the policy met the early-stop rule "
              f"(rows in {Path(args.out) / 'early_stop.csv'})")
    last = rows[-1] if rows else None
    if last is not None:
        print(f"adr-train: {trainer.iteration} iterations, {trainer.agent_steps} agent steps, "
              f"last return {last['return_mean']:.2f}; outputs in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
