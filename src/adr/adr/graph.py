"""The node graphs of the ADR stack, described once.

Both ``launch/*.launch.py`` (for ``ros2 launch adr ...``) and the pip-path launcher (``adr_launch``) build their
processes from these descriptions, so the two start the same nodes with the same parameters.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Argument:
    """A launch argument: ``name:=value`` on the command line of both launchers."""

    name: str
    default: str
    description: str
    choices: tuple[str, ...] = ()
    kind: type = str  # int or float: the value must parse as one

    def check(self, value: str) -> None:
        if self.choices and value not in self.choices:
            raise ValueError(f"{self.name}:={value} is not one of {', '.join(self.choices)}")
        if self.kind is not str:
            try:
                self.kind(value)
            except ValueError:
                raise ValueError(f"{self.name}:={value} is not a valid {self.kind.__name__}") from None


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


@dataclass(frozen=True)
class Graph:
    name: str
    description: str
    arguments: tuple[Argument, ...]
    build: Callable[[Mapping[str, str]], list[NodeSpec]]

    def resolve(self, overrides: Mapping[str, str]) -> dict[str, str]:
        """Defaults completed by ``overrides``; unknown names and invalid values raise ValueError."""
        known = {argument.name: argument for argument in self.arguments}
        unknown = sorted(set(overrides) - set(known))
        if unknown:
            raise ValueError(f"{self.name}: unknown argument(s) {', '.join(unknown)}; known: {', '.join(known)}")
        values = {name: argument.default for name, argument in known.items()} | dict(overrides)
        for name, value in values.items():
            try:
                known[name].check(value)
            except ValueError as error:
                raise ValueError(f"{self.name}: {error}") from None
        return values

    def nodes(self, overrides: Mapping[str, str]) -> list[NodeSpec]:
        return self.build(self.resolve(overrides))


TRAIN_SIM_ARGUMENTS = (
    Argument("env", "adr/LunarLander-v0", "randomized environment id",
             ("adr/LunarLander-v0", "adr/Pusher3DOF-v0", "adr/ErgoReacher-v0", "adr/ErgoPusher-v0")),
    Argument("seed", "0", "seed of every random generator of the run", kind=int),
)


def _train_sim(args: Mapping[str, str]) -> list[NodeSpec]:
    return [
        NodeSpec(
            package="adr_sampler_node",
            executable="sampler_node",
            name="adr_sampler",
            parameters={"env_id": args["env"], "seed": int(args["seed"])},
            respawn=True,
        ),
    ]


GRAPHS: dict[str, Graph] = {
    "train_sim": Graph("train_sim", "ADR training in simulation", TRAIN_SIM_ARGUMENTS, _train_sim),
}


def graph_for_launch_file(file_name: str) -> Graph:
    """``train_sim.launch.py`` -> the train_sim graph."""
    name = file_name.removesuffix(".py").removesuffix(".launch")
    if name not in GRAPHS:
        raise ValueError(f"no graph named {name!r}; available: {', '.join(f'{g}.launch.py' for g in GRAPHS)}")
    return GRAPHS[name]
