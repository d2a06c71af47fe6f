"""One record per sampler: everything the rest of the stack needs to know about it, in one place.

The config (``sampler:`` choices and their help, the options' checks), the in-process trainer, the node graph (launch
``method:=``, the sampler node's metric topics, the columns and reward limit the trainer node accepts), the probe,
``ADRLoop`` / the SB3 callback and the report (labels, the sampler-state figure, ``adr-report --help``) read a
sampler's facts from its ``SamplerRecord`` (``sampler_record(kind)``), never from a table of their own; the built-in
samplers' records (``samplers/__init__.py``) are read exactly like a plug-in's. Adding a sampler is one module with a
``Sampler`` subclass and one ``register_sampler(SamplerRecord(...))``; a sampler of another package is named in the
run's config (``sampler_modules``) so that every process of a run imports it (``tests/toy_sampler`` is an example).

What a sampler learns from is its class's: ``learns_from_rewards`` (the discriminator's rewards of its proposals:
the trainer rolls out reference episodes and trains a discriminator), ``learns_from_outcomes`` (each proposal's task
score, 1.0 when the env's success rule says solved), or neither.
"""
from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .base import Sampler, SamplerError, feedback_path


@dataclass(frozen=True)
class SamplerBuild:
    """What a record's ``build`` gets: the space, how many proposals an iteration has (every sampler proposes the
    same number: the paper's particles x rollout length), the sampler's seed, its options (an instance of the
    record's ``options`` class, or the config section it names) and the run's named range ``fixed_range``."""

    space: Any  # RandomizationSpace
    num_proposals: int
    seed: int
    options: Any
    fixed_range: str = "hard"


@dataclass(frozen=True)
class SamplerRecord:
    kind: str  # the config's ``sampler:`` value
    sampler_class: type[Sampler]  # what it builds (its learns_from_* attributes say what it learns from)
    build: Callable[[SamplerBuild], Sampler]
    label: str  # in figures and tables, e.g. "ALP-GMM"
    description: str  # one sentence: the rule and its source (``adr-train --help``, ``--show-args``)
    method: str | None = None  # the name users pick (launch ``method:=``, comparisons) when not ``kind``
    options: type | None = None  # dataclass of the sampler's own keys (``sampler_options:`` in a config)
    # the TrainConfig section that holds the options instead of ``sampler_options`` (ADR's ``svpg``, boundary ADR's
    # ``boundary``: sections of their own from before plug-ins; a new sampler uses ``options``)
    config_section: str | None = None
    # the statistics its ``update`` reports: metrics.csv columns (after the shared ones when not among them), the
    # names the trainer node accepts in the sampler's SamplerState, the sampler node's adr/metrics/* topics
    metric_columns: tuple[str, ...] = ()
    # the report's sampler-state figure: one panel per column; None: every metric column
    figure_columns: tuple[str, ...] | None = None
    # the largest reward magnitude its ``update`` accepts (the trainer node refuses a ParticleRewards message beyond
    # it before it reaches the sampler); None: any finite reward
    reward_limit: float | None = None
    # checks its options against the run's space (the argument: a function that loads it) when a config is made;
    # raises SamplerError naming the key
    check_space: Callable[[Any, Callable[[], Any]], None] | None = None
    paper: bool = False  # one of the paper's four methods

    def __post_init__(self) -> None:
        if not self.kind.isidentifier():
            raise SamplerError(f"sampler kind {self.kind!r}: use a Python identifier (letters, digits, _)")
        if self.options is not None and not dataclasses.is_dataclass(self.options):
            raise SamplerError(f"sampler {self.kind!r}: options must be a dataclass of its keys")

    @property
    def method_name(self) -> str:
        return self.method or self.kind

    @property
    def state_columns(self) -> tuple[str, ...]:
        """The columns of the report's sampler-state figure."""
        return self.metric_columns if self.figure_columns is None else self.figure_columns

    @property
    def feedback(self) -> str:
        """'discriminator', 'outcomes' or 'none': what the trainer hands the sampler after each iteration."""
        return feedback_path(self.sampler_class)


_RECORDS: dict[str, SamplerRecord] = {}


def register_sampler(record: SamplerRecord) -> SamplerRecord:
    """Make ``record`` known; the same record again is a no-op, another under a known kind or method is refused."""
    known = _RECORDS.get(record.kind)
    if known is not None:
        if known != record:
            raise SamplerError(f"sampler {record.kind!r} is registered already, with another record")
        return known
    clash = [r.kind for r in _RECORDS.values() if r.method_name == record.method_name]
    if clash:
        raise SamplerError(f"sampler {record.kind!r}: method name {record.method_name!r} is sampler {clash[0]!r}'s")
    _RECORDS[record.kind] = record
    return record


def sampler_kinds() -> tuple[str, ...]:
    return tuple(_RECORDS)


def sampler_records() -> tuple[SamplerRecord, ...]:
    return tuple(_RECORDS.values())


def sampler_record(kind: str) -> SamplerRecord:
    """The record of ``kind``; an unknown kind is one line naming the known ones and how to add one."""
    try:
        return _RECORDS[kind]
    except KeyError:
        raise SamplerError(f"unknown sampler {kind!r}; known: {list(_RECORDS)} (another sampler: a module that calls "
                           "adr_core.samplers.register_sampler, named in the config's sampler_modules)") from None


def record_of_method(method: str) -> SamplerRecord:
    """The record users name ``method`` (``oracle`` -> the ``fixed`` sampler; a kind is its own method)."""
    for record in _RECORDS.values():
        if method in (record.method_name, record.kind):
            return record
    raise SamplerError(f"unknown method {method!r}; known: {[r.method_name for r in _RECORDS.values()]}")


def build_options(record: SamplerRecord, values: Mapping[str, Any] | None, where: str = "sampler_options") -> Any:
    """The record's options from a mapping (a config's ``sampler_options``): unknown keys, wrong types and values its
    class refuses are one line naming ``where.<key>``; None when the sampler has no options of its own."""
    values = dict(values or {})
    if record.options is None:
        if values:
            raise SamplerError(f"{where}: sampler {record.kind!r} has no options of its own, got {sorted(values)}")
        return None
    fields = {f.name: f for f in dataclasses.fields(record.options)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise SamplerError(f"{where}: unknown key(s) {unknown} of sampler {record.kind!r}; known: {sorted(fields)}")
    for name, value in values.items():
        default = getattr(record.options(), name)
        if isinstance(default, bool) != isinstance(value, bool) or (
                isinstance(default, (int, float)) and not isinstance(value, (int, float))):
            raise SamplerError(f"{where}.{name}: expected {type(default).__name__}, got {value!r}")
    try:
        return record.options(**values)
    except (TypeError, ValueError) as error:
        raise SamplerError(f"{where}: {error}") from None


def resolve_options(record: SamplerRecord, values: Mapping[str, Any] | None) -> Any:
    """A run config's ``sampler_options`` checked against ``record`` (``build_options``); None for a sampler whose
    options are a config section of their own (``config_section``), which refuses ``sampler_options``."""
    if record.config_section is None:
        return build_options(record, values)
    if values:
        raise SamplerError(f"sampler_options: sampler {record.kind!r} reads its keys from {record.config_section}.*, "
                           "not sampler_options")
    return None


def import_sampler_modules(modules: Iterable[str]) -> None:
    """Import the modules that register a run's own samplers (config key ``sampler_modules``)."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as error:
            raise SamplerError(f"sampler_modules: cannot import {name!r} ({error}); it must be importable in every "
                               "process of the run (PYTHONPATH or an installed package)") from None
