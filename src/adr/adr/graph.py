"""The node graphs of the ADR stack, described once.

Both ``launch/*.launch.py`` (for ``ros2 launch adr ...``) and the pip-path launcher (``adr_launch``) build their
processes from these descriptions, so the two start the same nodes with the same parameters.
"""
from __future__ import annotations

import json
import signal
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from adr import dds_interfaces

# A value a launch argument refuses, with the other arguments (name:=value) it is refused beside. SCRATCH stands for a
# folder holding a file a_file, a folder a_folder and a key a_key (the table-driven test's), BUSY_PORT for a TCP port
# something listens on.
Bad = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class Argument:
    """A launch argument: ``name:=value`` on the command line of both launchers."""

    name: str
    default: str
    description: str
    choices: tuple[str, ...] = ()
    kind: type = str  # int or float: the value must parse as one (empty allowed when the default is empty)
    bounds: tuple[float, float] | None = None  # int/float: inclusive range
    bad: tuple[Bad, ...] = ()  # values refused before anything is written or started (besides choices and numbers)
    unchecked: str = ""  # why no value of this (free-text) argument can be refused at launch

    def bad_values(self) -> list[Bad]:
        """Every kind of value this argument refuses (``tests/ros/test_launch_bad_input.py`` feeds each to the
        launcher: one line, a nonzero exit, nothing written)."""
        values = list(self.bad)
        if self.choices:
            values.append(("not_a_choice", ()))
        if self.kind in (int, float):
            values += [("abc", ()), ("nan", ())]
            if self.bounds:
                low, high = self.bounds
                values += [(str(int(low) - 1) if self.kind is int else f"{low - 1:g}", ()),
                           (str(int(high) + 1) if self.kind is int else f"{high + 1:g}", ())]
        return values

    def check(self, value: str) -> None:
        if self.choices and value not in self.choices and not (value == "" and self.default == ""):
            raise ValueError(f"{self.name}:={value} is not one of {', '.join(self.choices)}")
        if self.kind is str or (value == "" and self.default == ""):
            return
        form = "an integer" if self.kind is int else "a number"
        try:
            number = self.kind(value)
        except ValueError:
            raise ValueError(f"{self.name}:={value} is not {form}"
                             + (" (or empty)" if self.default == "" else "")) from None
        if self.bounds and not (self.bounds[0] <= number <= self.bounds[1]) or number != number:
            low, high = self.bounds or (float("-inf"), float("inf"))
            raise ValueError(f"{self.name}:={value} must be {form} in [{low:g}, {high:g}]")


@dataclass(frozen=True)
class NodeSpec:
    """One process of a graph: a console script of a workspace package, its node name and ROS parameters."""

    package: str
    executable: str
    name: str
    parameters: Mapping[str, Any] = field(default_factory=dict)
    arguments: tuple[str, ...] = ()
    required: bool = False  # the graph stops when a required node exits
    respawn: bool = False
    shutdown_timeout: float = 10.0  # seconds between Ctrl-C and SIGTERM (the trainer finishes its update first)
    env: Mapping[str, str] = field(default_factory=dict)  # set for this process (the DDS profile: dds_interfaces)
    serves: str = ""  # a node this one serves at shutdown (its final checkpoint): once that one has exited, this one
    #                   gets at most SERVED_EXIT_GRACE_S more (pip launcher)


@dataclass(frozen=True)
class Graph:
    name: str
    description: str
    arguments: tuple[Argument, ...]
    build: Callable[[Mapping[str, str]], list[NodeSpec]]

    def resolve(self, overrides: Mapping[str, str]) -> dict[str, str]:
        """Defaults completed by ``overrides``; unknown names and invalid values raise ValueError."""
        self.check_names(overrides)
        known = {argument.name: argument for argument in self.arguments}
        values = {name: argument.default for name, argument in known.items()} | dict(overrides)
        for name, value in values.items():
            try:
                known[name].check(value)
            except ValueError as error:
                raise ValueError(f"{self.name}: {error}") from None
        return values

    def check_names(self, names: Iterable[str]) -> None:
        """Refuse argument names the graph does not declare, in one wording for both launchers: the unknown ones
        sorted and written as typed (``name:=``), the known ones in declaration order (as ``--show-args`` lists)."""
        known = [argument.name for argument in self.arguments]
        unknown = sorted(set(names) - set(known))
        if unknown:
            raise ValueError(f"{self.name}: unknown argument(s) {', '.join(f'{u}:=' for u in unknown)}; "
                             f"known: {', '.join(known)}")

    def nodes(self, overrides: Mapping[str, str]) -> list[NodeSpec]:
        """Every argument checked, then the nodes; writes nothing but the DDS profile, once they are known."""
        values = self.resolve(overrides)
        dds_interfaces.parse(values["dds_interfaces"])
        specs = self.build(values)
        env = dds_interfaces.node_environment(values["dds_interfaces"])
        return [replace(spec, env={**env, **spec.env}) for spec in specs]


def describe_exit(name: str, returncode: int) -> str:
    """'adr_sampler was killed by SIGKILL (exit status 137)' / 'adr_trainer exited with code 0'."""
    if returncode < 0:
        try:
            signal_name = signal.Signals(-returncode).name
        except ValueError:
            signal_name = f"signal {-returncode}"
        return f"{name} was killed by {signal_name} (exit status {exit_status(returncode)})"
    return f"{name} exited with code {returncode}"


def exit_status(returncode: int) -> int:
    """A node's return code as a shell reports it: its own exit code, or 128 + s when signal s killed it
    (Python's Popen gives -s; ``-9 & 0xFF`` would be 247, which no script tests for)."""
    return 128 - returncode if returncode < 0 else returncode & 0xFF


# After Ctrl-C the trainer completes the agent update it is in (1000 updates of batch 1000 take ~30 s on 2 CPU
# cores) and checkpoints that iteration, so it gets more time than the launch default of 5 s before SIGTERM.
TRAINER_SHUTDOWN_S = 300.0
SERVED_EXIT_GRACE_S = 10.0  # a helper still running this long after the trainer it served has exited is killed
# Ctrl-C to a simulator instance or the viewer: an instance finishes the rollout it is in (its own limit: 30 s); on a
# loaded machine either may need more than the launch default of 10 s to exit, and a killed node ends the launch 137
INSTANCE_SHUTDOWN_S = 40.0

DDS_INTERFACES = Argument(
    "dds_interfaces", dds_interfaces.DEFAULT, "network interfaces the nodes' DDS (Fast DDS) listens on: loopback "
    "(this host only), all (every interface: sim instances on other hosts), or IPv4 addresses of this host, "
    "comma-separated (e.g. 10.0.0.5,127.0.0.1)", bad=(("nowhere", ()), ("10.255.255.1", ()), ("", ())))

TRAIN_SIM_ARGUMENTS = (
    Argument(
        "env",
        "",
        "randomized environment id (empty: the config's env_id; adr/LunarLander-v0 without config:=): a registered "
        "one (adr/LunarLander-v0, adr/Pusher3DOF-v0, adr/ErgoReacher-v0, adr/ErgoPusher-v0, or one the config's "
        "env_modules register); with config:= it must name the config's own env",
        bad=(("adr/NoSuchEnv-v0", ()), ("adr/ErgoReacher-v0", ("config:=lunar_lander_adr_fast",))),
    ),
    Argument(
        "method",
        "",
        "how simulator settings are chosen: the method name of a registered sampler (adr-train --help lists them "
        "under --sampler: its kind, or the method its record names), a plug-in's included (its module "
        "named in sampler_modules, of the config or of overrides:=); empty: the config's sampler (adr without "
        "config:=); given with config:=, it replaces the config's sampler and keeps its agent",
        bad=(("no_such_method", ()),),
    ),
    Argument("instances", "2", "number of simulator instance nodes", kind=int, bounds=(1, 64)),
    Argument("role", "all", "which nodes this launch starts: all (one host), head (sampler, discriminator, trainer, "
             "viewer, recorder: no simulator instance), sims (only the instances of sim_ids:=, e.g. on a worker "
             "host; every other argument as on the head)", ("all", "head", "sims")),
    Argument("sim_ids", "", "role:=sims: comma-separated instance numbers this host runs, e.g. 0,1 (empty: all "
             "0..instances-1)",
             bad=(("0", ()), ("7", ("role:=sims", "run_id:=r1", "key_file:=SCRATCH/a_key", "run_start:=s1")),
                  ("x", ("role:=sims", "run_id:=r1", "key_file:=SCRATCH/a_key", "run_start:=s1")))),
    Argument("run_id", "", "id carried in every message of the run; nodes refuse other runs' messages (empty: a new "
             "random id at every launch, logged by the trainer; role:=sims needs the head's)",
             bad=(("a b", ()), ("x" * 65, ()))),
    Argument("run_start", "", "this start of the run: a nonce every signature covers, so nothing signed in an "
             "earlier start of the run verifies in this one (a resume included); empty: a new random one at every "
             "launch (the trainer logs it); role:=sims needs the head's; one given to a head must not have started "
             "this run before", bad=(("a b", ()), ("x" * 65, ()))),
    Argument("key_file", "", "the run's key: every message of the run is signed and checked with it (HMAC-SHA256, "
             "docs/node_graph.md 'Signed messages'); empty: <run_dir>/run.key, created (mode 0600) if absent; "
             "role:=sims needs a copy of the head's",
             bad=(("SCRATCH/missing", ()), ("SCRATCH/a_file", ()), ("SCRATCH/a_folder", ()))),
    Argument("seed", "", "seed of every random generator of the run (empty: the config's seed; 0 without config:=)",
             kind=int, bounds=(0, 2**31 - 1)),
    Argument("budget", "", "agent steps to train for (empty: the config's total_agent_steps, paper 1M)", kind=int,
             bounds=(1, 10**10)),
    Argument(
        "mode",
        "sync",
        "sync: Algorithm 1 exactly (iteration waits for its rollouts); async: instances roll "
        "out with the latest weights while the trainer learns; probe: Algorithm 1 around the frozen policy:= "
        "(no agent updates; adr-probe as a graph, files in run_dir)",
        ("sync", "async", "probe"),
        bad=(("probe", ()), ("probe", ("policy:=adr_core.probe.controllers:lunar_lander_heuristic", "resume:=true"))),
    ),
    Argument(
        "policy",
        "",
        "mode:=probe: the frozen policy: a run directory / checkpoint of this env, or "
        "module:callable (e.g. adr_core.probe.controllers:lunar_lander_heuristic)",
        bad=(("SCRATCH/missing", ("mode:=probe",)), ("SCRATCH/a_folder", ("mode:=probe",)),
             ("adr_core.probe.controllers:no_such_controller", ("mode:=probe",)),
             ("adr_core.probe.controllers:lunar_lander_heuristic", ())),
    ),
    Argument("iterations", "200", "mode:=probe: ADR iterations", kind=int, bounds=(1, 10**6)),
    Argument("run_dir", "", "run directory (empty: runs/<env>_<method>_seed<seed>)",
             bad=(("SCRATCH/a_file", ()), ("SCRATCH/a_file/run", ()))),
    Argument("config", "", "experiment YAML path or packaged name (see adr-train --list); empty: paper defaults",
             bad=(("no_such_experiment", ()), ("SCRATCH/a_file", ()))),
    Argument("overrides", "{}", "extra config keys as a YAML mapping, e.g. {agent.batch_size: 256}",
             bad=(("{a: [", ()), ("[1, 2]", ()), ("{no_such_key: 1}", ()), ("{agent.batch_size: -3}", ()))),
    Argument("resume", "false", "continue the run in run_dir from its latest checkpoint", ("true", "false"),
             bad=(("true", ()),)),
    Argument("device", "", "torch device of the learner and discriminator (empty: the config's device; cpu without "
             "config:=)", ("cpu", "cuda", "auto")),
    Argument("rollout_timeout", "120", "seconds before an unfinished rollout is given to another instance", kind=float,
             bounds=(1, 3600)),
    Argument("service_timeout", "60", "seconds the trainer waits for the sampler's proposal or the discriminator's "
             "rewards before dropping the iteration", kind=float, bounds=(1, 3600)),
    Argument(
        "viewer", "false", "also start adr_viewer: live browser view and rviz particle markers", ("true", "false")
    ),
    Argument("viewer_port", "8765", "HTTP port of adr_viewer (0: any free port)", kind=int, bounds=(0, 65535),
             bad=(("BUSY_PORT", ("viewer:=true",)),)),
    Argument("record", "false", "also record the graph's topics into a rosbag2 bag (MCAP) in <run_dir>/bag",
             ("true", "false"), bad=(("true", ("run_dir:=SCRATCH/a_folder",)),)),
    Argument("record_trajectories", "0.2", "record:=true: full trajectories per second in the bag (0: none)",
             kind=float, bounds=(0, 1000)),
    Argument("record_overwrite", "false", "record:=true: replace an existing bag folder", ("true", "false")),
    DDS_INTERFACES,
)


def run_parameters(args: Mapping[str, str]) -> dict[str, Any]:
    """The parameters every node of a training graph gets (docs/node_graph.md: one run configuration).

    ``config:=`` sets everything, env and sampler included; ``env:=`` and ``method:=`` override it only when given.
    ``env:=`` naming another env than the config's is refused (a preset is tuned for its env); ``method:=`` replaces
    the config's sampler (the same agent preset under another method, as the claims grid compares them)."""
    import yaml

    try:
        overrides = yaml.safe_load(args["overrides"]) or {}
    except yaml.YAMLError as error:
        raise ValueError(f"train_sim: overrides:={args['overrides']} is not valid YAML "
                         f"({str(error).splitlines()[0]}); expected a mapping such as {{agent.batch_size: 256}}"
                         ) from None
    if not isinstance(overrides, dict):
        raise ValueError(f"train_sim: overrides:={args['overrides']} is not a YAML mapping")
    config_file = ""
    if args["config"]:
        from adr_core.training.experiments import resolve_experiment

        config_file = str(resolve_experiment(args["config"]).resolve())
    from adr_core.run_spec import RunSpec, check_run_id, new_run_id
    from adr_core.training.config import TrainConfig

    config = TrainConfig.from_yaml(config_file) if config_file else TrainConfig()
    if args["env"] and config_file and args["env"] != config.env_id:
        raise ValueError(f"train_sim: env:={args['env']} contradicts config:={args['config']}, a config of "
                         f"{config.env_id}; drop env:= or choose a config of {args['env']} (adr-train --list)")
    explicit: dict[str, Any] = {}
    if args["env"]:
        explicit["env_id"] = args["env"]
    if args["method"]:
        from adr_core.samplers import SamplerError, import_sampler_modules, record_of_method

        modules = overrides.get("sampler_modules", config.sampler_modules)  # a plug-in named either way
        try:
            import_sampler_modules(modules if isinstance(modules, (list, tuple)) else ())
            explicit["sampler"] = record_of_method(args["method"]).kind
        except SamplerError as error:
            raise ValueError(f"train_sim: method:={args['method']}: {error}") from None
    # seed:= and device:= override the config only when given (without config:=, the graph's defaults: 0 and cpu)
    if args["seed"] or not config_file:
        explicit["seed"] = int(args["seed"] or 0)
    if args["device"] or not config_file:
        explicit["device"] = args["device"] or "cpu"
    overrides = {**explicit, **overrides}
    if args["budget"]:
        overrides["total_agent_steps"] = int(args["budget"])

    if args.get("role") == "sims" and not args["run_id"]:
        raise ValueError("role:=sims needs run_id:= the head's run id (its trainer logs it at start; or choose one and "
                         "give the head the same)")
    run_id = check_run_id(args["run_id"]) if args["run_id"] else new_run_id()
    try:
        resolved = config.with_overrides(overrides)
    except ValueError as error:  # e.g. env:= names no registered env
        raise ValueError(f"train_sim: {error}") from None
    if resolved.device.startswith("cuda"):  # refused now, not by the trainer after the graph started
        from adr_core.base.devices import resolve_device

        try:
            resolve_device(resolved.device)
        except ValueError as error:
            raise ValueError(f"train_sim: device:={resolved.device}: {error}") from None
    spec = replace(RunSpec.resolve(resolved), run_id=run_id)  # once, for every node
    env_name = resolved.env_id.split("/")[-1].split("-")[0].lower()
    run_dir = args["run_dir"] or f"runs/{env_name}_{method_name(resolved.sampler)}_seed{resolved.seed}"
    from adr_core.cli_types import writable_dir

    writable_dir(Path(run_dir), "train_sim: run_dir:=")
    if args.get("resume") == "true" and args.get("role") != "sims":  # a worker host holds none of the run's files
        check_resume(Path(run_dir), resolved)
    key_file = run_key(args, Path(run_dir).resolve())
    run_start = _run_start(args)
    if args.get("role") != "sims" and run_start in started_before(Path(run_dir)):
        raise ValueError(f"train_sim: run_start:={run_start} started this run before ({Path(run_dir) / STARTS_FILE}): "
                         f"messages of that start would verify again; leave run_start:= empty for a new one")
    return {  # the run's config reaches each node once: in run_spec
        "run_dir": str(Path(run_dir).resolve()),
        "run_spec": spec.to_json(),
        "key_file": key_file,
        "run_start": run_start,
    }


STARTS_FILE = "run.starts"  # the starts of a run, one per line (the last: the current one); prepare_files appends


def _run_start(args: Mapping[str, str]) -> str:
    """run_start:= as given (checked: a run id's characters), else a new random nonce; a worker host needs the
    head's."""
    import secrets

    from adr_core.run_spec import check_run_id

    if args.get("run_start"):
        try:
            return check_run_id(args["run_start"])
        except ValueError as error:
            raise ValueError(f"train_sim: run_start:={args['run_start']}: {error}") from None
    if args.get("role") == "sims":
        raise ValueError("role:=sims needs run_start:= the head's start of the run (its trainer logs it at start: "
                         "signatures cover it, so a worker of another start cannot talk to this one)")
    return secrets.token_hex(8)


def started_before(run_dir: Path) -> list[str]:
    """The starts a run had (``<run_dir>/run.starts``), oldest first."""
    try:
        return (run_dir / STARTS_FILE).read_text().split()
    except OSError:
        return []


def check_resume(run_dir: Path, config: Any) -> None:
    """resume:=true: ``run_dir`` must hold a graph checkpoint (checkpoints/latest.json), and its config.yaml the
    config this launch resolved (runtime keys aside). Checked before anything is written or started; the run's
    config.yaml is read as a file's, so the modules it names are not imported."""
    from adr_core.base.checkpoint import CheckpointError
    from adr_core.run_dir import CONFIG_FILE, read_manifest
    from adr_core.training.config import TrainConfig

    try:
        read_manifest(run_dir)
        saved_file = run_dir / CONFIG_FILE
        if saved_file.is_file():
            saved = TrainConfig.from_saved_yaml(saved_file)
            differences = config.differences(saved, ignore=TrainConfig.RUNTIME_FIELDS)
            if differences:
                raise CheckpointError(f"{saved_file} was written with another config; differing keys: {differences} "
                                      f"(give the run's own config:= and overrides:=)")
    except (CheckpointError, ValueError) as error:
        raise ValueError(f"train_sim: resume:=true run_dir:={run_dir}: {error}") from None


def run_key(args: Mapping[str, str], run_dir: Path) -> str:
    """The run's key file: ``key_file:=`` (checked now), or ``<run_dir>/run.key`` (``prepare_files`` creates it,
    mode 0600, when the graph starts: a resumed run keeps its key); a worker host (role:=sims) must name its copy of
    the head's."""
    from adr_ros.signing import KEY_FILE, KeyError_, read_key

    if args.get("role") == "sims" and not args.get("key_file"):
        raise ValueError("role:=sims needs key_file:= a copy of the head's <run_dir>/run.key (the run's messages are "
                         "signed with it; docs/node_graph.md 'Signed messages')")
    if not args.get("key_file"):
        return str(run_dir / KEY_FILE)
    try:
        read_key(args["key_file"])
    except KeyError_ as error:
        raise ValueError(f"train_sim: {error}") from None
    return str(Path(args["key_file"]).resolve())


def prepare_files(specs: list[NodeSpec]) -> None:
    """What must exist before the nodes start (both launchers call it; resolving a graph writes nothing): the run's
    key file, created when absent (adr_ros.signing.create_key_file: mode 0600; an existing one is checked), and on
    the head the start of the run appended to ``<run_dir>/run.starts`` (adr_monitor reads the last one)."""
    from adr_ros.signing import KeyError_, create_key_file

    for key_file in sorted({str(s.parameters["key_file"]) for s in specs if s.parameters.get("key_file")}):
        try:
            create_key_file(key_file)
        except (KeyError_, OSError) as error:
            raise ValueError(f"{error}") from None
    for spec in specs:
        if spec.name == "adr_trainer" and spec.parameters.get("run_start"):
            starts = Path(str(spec.parameters["run_dir"])) / STARTS_FILE
            try:
                with starts.open("a") as handle:
                    handle.write(f"{spec.parameters['run_start']}\n")
            except OSError as error:
                raise ValueError(f"cannot write {starts}: {error.strerror or error}") from None


def method_name(sampler: str) -> str:
    """The launch name of a core sampler kind (``fixed`` -> ``oracle``); other kinds keep their own name."""
    from adr_core.samplers import method_of

    return method_of(sampler)


def _train_sim(args: Mapping[str, str]) -> list[NodeSpec]:
    resume = args["resume"] == "true"
    instances = [f"adr_sim_{i}" for i in range(int(args["instances"]))]
    if not instances:
        raise ValueError("instances:=0: the graph needs at least one simulator instance")
    probe = args["mode"] == "probe"
    if probe and not args["policy"]:
        raise ValueError("mode:=probe needs policy:= (a run directory / checkpoint, or module:callable)")
    if args["policy"] and not probe:
        raise ValueError(f"policy:={args['policy']} is used by mode:=probe only (mode:={args['mode']})")
    if probe and resume:
        raise ValueError("mode:=probe cannot resume: start a new probe in another run_dir")
    if probe and int(args["iterations"]) < 1:
        raise ValueError(f"iterations:={args['iterations']} must be >= 1")
    common = run_parameters(args)
    frozen = _frozen_policy_parameter(args["policy"]) if probe else ""
    if probe:
        _check_frozen_policy(frozen, common["run_spec"])
    if args["viewer"] == "true" and args["role"] != "sims":
        _check_port_free(int(args["viewer_port"]))
    local = _local_instances(args, instances)
    # The run cannot go on without its sampler, discriminator or trainer: any of them exiting stops the graph.
    # After Ctrl-C, sampler and discriminator keep serving until the trainer has written its final checkpoint.
    nodes = [NodeSpec("adr_sampler_node", "sampler_node", "adr_sampler", {**common, "resume": resume}, required=True,
                      shutdown_timeout=TRAINER_SHUTDOWN_S, serves="adr_trainer")]
    learns = json.loads(common["run_spec"])["learns_from_rewards"]  # ADR: a discriminator, reference rollouts
    consumer_nodes = ["adr_trainer", "adr_discriminator"] if learns else ["adr_trainer"]  # of the trajectories
    # an instance lets a running rollout finish at Ctrl-C (up to its own 30 s): killing it would end the launch 137
    nodes += [NodeSpec("adr_sim_node", "sim_node", name, {**common, "trajectory_consumers": len(consumer_nodes),
                                                          "trajectory_consumer_nodes": consumer_nodes,
                                                          "frozen_policy": frozen}, respawn=True,
                       shutdown_timeout=INSTANCE_SHUTDOWN_S)
              for name in local]
    if args["role"] == "sims":
        return nodes[1:]  # a worker host: the head runs the sampler, discriminator and trainer
    if learns:
        nodes.append(NodeSpec("adr_discriminator_node", "discriminator_node", "adr_discriminator",
                              {**common, "resume": resume}, required=True, shutdown_timeout=TRAINER_SHUTDOWN_S,
                              serves="adr_trainer"))
    if args["viewer"] == "true":
        nodes.append(NodeSpec("adr_viewer", "viewer_node", "adr_viewer",
                              {"port": int(args["viewer_port"]), "run_id": json.loads(common["run_spec"])["run_id"],
                               "key_file": common["key_file"], "run_start": common["run_start"]},
                              shutdown_timeout=INSTANCE_SHUTDOWN_S))
    if args["record"] == "true":
        nodes.append(_recorder(Path(common["run_dir"]) / "bag", TRAIN_TOPICS, args))
    nodes.append(NodeSpec("adr_trainer_node", "trainer_node", "adr_trainer",
                          {**common, "resume": resume, "mode": args["mode"], "sim_instances": instances,
                           "rollout_timeout": float(args["rollout_timeout"]),
                           "service_timeout": float(args["service_timeout"]), "frozen_policy": frozen,
                           "probe_iterations": int(args["iterations"]),
                           "wait_for_recorder": "adr_recorder" if args["record"] == "true" else ""},
                          required=True, shutdown_timeout=TRAINER_SHUTDOWN_S))
    return nodes


TRAIN_TOPICS = ("adr/proposals", "adr/particle_rewards", "adr/sampler_state", "adr/sample_histogram",
                "adr/metrics/*", "diagnostics", "joint_states", "adr_sim_*/goal", "adr/trajectories")
DEPLOY_TOPICS = ("joint_states", "diagnostics", "poppy_driver/*", "policy_runner/*", "clicked_point", "signed/*",
                 "puck", "puck_start")


def _local_instances(args: Mapping[str, str], instances: list[str]) -> list[str]:
    """The simulator instances this launch starts (role:=head: none; role:=sims: those of sim_ids:=)."""
    if args["sim_ids"] and args["role"] != "sims":
        raise ValueError(f"sim_ids:={args['sim_ids']} is for role:=sims (role:={args['role']})")
    if args["role"] == "head":
        return []
    if args["role"] == "all" or not args["sim_ids"]:
        return instances
    ids = []
    for part in args["sim_ids"].split(","):
        if not part.strip().isdigit() or int(part) >= len(instances):
            raise ValueError(f"sim_ids:={args['sim_ids']}: {part.strip()!r} is not an instance number in "
                             f"0..{len(instances) - 1} (instances:={len(instances)})")
        ids.append(int(part))
    return [instances[i] for i in sorted(set(ids))]


def _recorder(bag_dir: Path, topics: tuple[str, ...], args: Mapping[str, str]) -> NodeSpec:
    if float(args["record_trajectories"]) < 0:
        raise ValueError(f"record_trajectories:={args['record_trajectories']} must be >= 0")
    from adr_core.cli_types import writable_dir

    if bag_dir.exists() and args["record_overwrite"] != "true":  # refused now, not by the recorder once started
        raise ValueError(f"record:=true: the bag folder {bag_dir} exists already: choose another "
                         f"({'bag_dir:=' if args.get('bag_dir') else 'run_dir:='}) or record_overwrite:=true")
    writable_dir(bag_dir, "record:=true: the bag folder")
    # not required: a failing recorder says why and the run goes on; it stops with the others and closes the bag
    return NodeSpec("adr", "adr_record", "adr_recorder",
                    {"bag_dir": str(bag_dir.resolve()), "topics": list(topics),
                     "trajectory_rate": float(args["record_trajectories"]),
                     "overwrite": args["record_overwrite"] == "true"}, shutdown_timeout=30.0)


def _check_frozen_policy(frozen: str, run_spec: str) -> None:
    """mode:=probe: the frozen policy loads and fits the run's env (adr-probe's own check), before any node starts."""
    from adr_core.probe.policies import load_frozen_policy
    from adr_core.run_spec import RunSpec

    spec = RunSpec.from_json(run_spec)
    try:
        load_frozen_policy(frozen, spec.env_id, spec.randomization_space())
    except ValueError as error:
        raise ValueError(f"train_sim: policy:=: {error}") from None


def _check_port_free(port: int) -> None:
    """viewer:=true: the viewer's port (on 127.0.0.1, its default host) takes a server now; 0 picks a free one."""
    import socket

    if port == 0:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as error:
            raise ValueError(f"train_sim: viewer_port:={port} cannot be served ({error.strerror or error}); choose "
                             f"another port, or viewer_port:=0 for any free one") from None


def _check_output_file(name: str, value: str) -> None:
    """A file a node appends to: not a folder, nothing above it a file, its folder writable."""
    from adr_core.cli_types import writable_dir

    path = Path(value)
    if path.is_dir():
        raise ValueError(f"deploy_real: {name}:={value} is a folder, not a file")
    writable_dir(path.parent, f"deploy_real: {name}:={value}: its folder")


def _frozen_policy_parameter(spec: str) -> str:
    """A module:callable as given; a checkpoint path made absolute (nodes may run elsewhere)."""
    from adr_core.probe.policies import is_callable_path

    return spec if is_callable_path(spec) else str(Path(spec).resolve())


DEPLOY_REAL_ARGUMENTS = (
    Argument("checkpoint", "", "trained ErgoReacher/ErgoPusher policy: run directory, checkpoints/ folder, "
             "latest.json or .pt file (required)",
             bad=(("", ()), ("SCRATCH/missing", ()), ("SCRATCH/a_folder", ()), ("SCRATCH/a_file", ()))),
    Argument("port", "", "serial port of the arm's bus (empty: the driver config's /dev/ttyAMA0)",
             unchecked="a port may appear after the launch (an adapter plugged in, the stand-in arm started): the "
                       "driver reports it every 5 s and gives up after connect_timeout"),
    Argument("connect_timeout", "30", "stop the graph (exit code 3) when the bus has not answered for this long "
             "[s]; the driver reports it every 5 s meanwhile (0: wait forever)", kind=float, bounds=(0, 3600)),
    Argument("dry_run", "false", "true: pypot's dummy simulator instead of the serial bus (no hardware)",
             ("true", "false")),
    Argument("goal_mode", "random", "random: goals drawn like in training (adr_core.evaluation's episodes); "
             "clicked: rviz 'Publish Point' on /clicked_point", ("random", "clicked")),
    Argument("episodes", "10", "evaluation episodes, then the graph stops (0: until Ctrl-C)", kind=int,
             bounds=(0, 10**6)),
    Argument("seed", "0", "random goals: the seed of the evaluation episodes", kind=int, bounds=(0, 2**31 - 1)),
    Argument("driver_rate", "120", "driver control loop and joint_states rate [Hz] (the policy runs at the "
             "simulator's 60 Hz)", kind=float, bounds=(1, 1000)),
    Argument("max_speed", "", "moving speed of the servos [rad/s] (empty: the driver's default, 1.5)", kind=float,
             bounds=(0.05, 7)),
    Argument("results_file", "", "append every episode summary (one JSON object per line) to this file",
             bad=(("SCRATCH/a_folder", ()), ("SCRATCH/a_file/results.jsonl", ()))),
    Argument("steps_file", "", "append every step (observation, action, goal, distance; beside the simulator's "
             "episode at the same goal) as CSV (empty: <results_file stem>_steps.csv when results_file is set)",
             bad=(("SCRATCH/a_folder", ()), ("SCRATCH/a_file/steps.csv", ()))),
    Argument("record", "false", "also record joint states, commands, goals, episode results and diagnostics into "
             "a rosbag2 bag (MCAP)", ("true", "false")),
    Argument("bag_dir", "", "record:=true: the bag folder (empty: <checkpoint's run dir>/deploy_bag_<time>)",
             bad=(("SCRATCH/a_folder", ("record:=true",)), ("SCRATCH/a_file/bag", ("record:=true",)))),
    Argument("record_trajectories", "0", "unused here (train_sim's)", kind=float),
    Argument("record_overwrite", "false", "record:=true: replace an existing bag folder", ("true", "false")),
    Argument("key_file", "", "the deployment's key: the driver takes commands and the runner puck readings only "
             "signed with it (empty: $ROS_HOME/adr/deploy.key, created when absent, which adr-standin-arm also uses; "
             "none: the driver's unsigned std interface)",
             bad=(("SCRATCH/missing", ()), ("SCRATCH/a_file", ()))),
    DDS_INTERFACES,
)


def deploy_key(args: Mapping[str, str]) -> str:
    """The deployment's key file ('' for key_file:=none): key_file:= (checked now) or the user's default one, which
    ``prepare_files`` creates when absent."""
    from adr_ros.signing import KeyError_, default_deploy_key, read_key

    if args["key_file"] == "none":
        return ""
    if not args["key_file"]:
        return str(default_deploy_key())
    try:
        read_key(args["key_file"])
    except KeyError_ as error:
        raise ValueError(f"deploy_real: {error}") from None
    return str(Path(args["key_file"]).resolve())


def _deploy_real(args: Mapping[str, str]) -> list[NodeSpec]:
    if not args["checkpoint"]:
        raise ValueError("checkpoint:= is required (a run directory or checkpoint file of an Ergo policy)")
    # checked before any node starts or any port opens: the file, its env (an Ergo task), its spec
    from adr_deploy.policy_runner.loading import load_deployable

    try:
        load_deployable(args["checkpoint"])
    except ValueError as error:
        raise ValueError(f"deploy_real: checkpoint:={args['checkpoint']}: {error}") from None
    for name in ("results_file", "steps_file"):
        if args[name]:
            _check_output_file(name, args[name])
    key_file = deploy_key(args)
    driver = driver_parameters(args, key_file)
    runner = {"checkpoint": str(Path(args["checkpoint"]).resolve()), "goal_mode": args["goal_mode"],
              "episodes": int(args["episodes"]), "seed": int(args["seed"]), "driver": "poppy_driver",
              "results_file": str(Path(args["results_file"]).resolve()) if args["results_file"] else "",
              "steps_file": str(Path(args["steps_file"]).resolve()) if args["steps_file"] else "",
              "key_file": key_file}
    # Either node exiting stops the graph: the runner when its episodes are done (or on a bad checkpoint),
    # the driver on a bad configuration (exit 2) or a bus that never answers (exit 3, after connect_timeout).
    nodes = [NodeSpec("poppy_driver", "poppy_driver", "poppy_driver", driver, required=True),
             NodeSpec("adr_deploy", "policy_runner", "policy_runner", runner, required=True)]
    if args["record"] == "true":
        nodes.append(_recorder(_deploy_bag_dir(args), DEPLOY_TOPICS, args))
    return nodes


def _deploy_bag_dir(args: Mapping[str, str]) -> Path:
    if args["bag_dir"]:
        return Path(args["bag_dir"])
    import time

    checkpoint = Path(args["checkpoint"]).resolve()
    run_dir = checkpoint if checkpoint.is_dir() else checkpoint.parent
    if run_dir.name in ("checkpoints", "export"):
        run_dir = run_dir.parent
    return run_dir / f"deploy_bag_{time.strftime('%Y%m%d-%H%M%S')}"


IDENTIFY_ARM_ARGUMENTS = (
    Argument("env", "adr/ErgoPusher-v0", "the task whose arm is identified: its actuated joints are excited and the "
             "identified space is for it", ("adr/ErgoPusher-v0", "adr/ErgoReacher-v0")),
    Argument("log_dir", "", "folder the identification log is written to (required, new or empty; adr-identify "
             "fits it)", bad=(("", ()), ("SCRATCH/a_folder", ()), ("SCRATCH/a_file", ()))),
    Argument("repeats", "2", "times the whole excitation is played (about 38 s each; the fit's repeats)", kind=int,
             bounds=(1, 10)),
    *(argument for argument in DEPLOY_REAL_ARGUMENTS
      if argument.name in ("port", "connect_timeout", "dry_run", "driver_rate", "max_speed", "key_file")),
    DDS_INTERFACES,
)


def driver_default_speed() -> float:
    """The driver's moving speed when ``max_speed:=`` is empty (its packaged configuration)."""
    from poppy_driver.config import load_config

    return float(load_config().safety.max_speed)


def driver_parameters(args: Mapping[str, str], key_file: str) -> dict[str, Any]:
    """The poppy_driver node's parameters from the launch arguments deploy_real and identify_arm share."""
    driver: dict[str, Any] = {"rate": float(args["driver_rate"]), "connect_timeout": float(args["connect_timeout"]),
                              "key_file": key_file}
    if args["dry_run"] == "true":
        driver["simulator"] = "dummy"
    if args["port"]:
        driver["port"] = args["port"]
    if args["max_speed"]:
        driver["max_speed"] = float(args["max_speed"])  # checked by its Argument
    return driver


def _identify_arm(args: Mapping[str, str]) -> list[NodeSpec]:
    if not args["log_dir"]:
        raise ValueError("log_dir:= is required (the folder the identification log is written to)")
    log_dir = Path(args["log_dir"]).resolve()
    if log_dir.exists() and (not log_dir.is_dir() or any(log_dir.iterdir())):
        raise ValueError(f"identify_arm: log_dir:={args['log_dir']} is not an empty folder; choose a new one")
    key_file = deploy_key(args)
    driver = driver_parameters(args, key_file)
    speed = float(args["max_speed"]) if args["max_speed"] else driver_default_speed()
    identifier = {"env_id": args["env"], "log_dir": str(log_dir), "repeats": int(args["repeats"]),
                  "driver": "poppy_driver", "key_file": key_file, "max_speed": speed}
    return [NodeSpec("poppy_driver", "poppy_driver", "poppy_driver", driver, required=True),
            NodeSpec("adr_deploy", "arm_identifier", "arm_identifier", identifier, required=True)]


GRAPHS: dict[str, Graph] = {
    "train_sim": Graph("train_sim", "ADR training in simulation", TRAIN_SIM_ARGUMENTS, _train_sim),
    "deploy_real": Graph("deploy_real", "a trained Ergo policy on the Poppy Ergo Jr (or a dry run)",
                         DEPLOY_REAL_ARGUMENTS, _deploy_real),
    "identify_arm": Graph("identify_arm", "an excitation of the Poppy Ergo Jr's joints, logged for adr-identify",
                          IDENTIFY_ARM_ARGUMENTS, _identify_arm),
}


def graph_for_launch_file(file_name: str) -> Graph:
    """``train_sim.launch.py`` -> the train_sim graph."""
    name = file_name.removesuffix(".py").removesuffix(".launch")
    if name not in GRAPHS:
        raise ValueError(f"no graph named {name!r}; available: {', '.join(f'{g}.launch.py' for g in GRAPHS)}")
    return GRAPHS[name]
