"""What every randomized env shares: its space, pending parameters, and the reset-time hand-over."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..randomization import RandomizationError, RandomizationSpace, load_space


def resolve_space(space: RandomizationSpace | str | None, env_id: str, required: tuple[str, ...],
                  optional: tuple[str, ...] = ()) -> RandomizationSpace:
    """The packaged space of ``env_id``, or a custom one (object, packaged variant name or YAML path) that has every
    one of the env's ``required`` dimensions and possibly some of its ``optional`` ones (e.g. sim-to-real effects)."""
    resolved = (
        load_space(env_id) if space is None else space if isinstance(space, RandomizationSpace) else load_space(space)
    )
    if resolved.env_id != env_id:
        raise RandomizationError(f"{env_id}: randomization space is for {resolved.env_id!r}, not this env")
    names = set(resolved.names)
    if not set(required) <= names or not names <= set(required) | set(optional):
        raise RandomizationError(
            f"{env_id}: randomization space {resolved.env_id!r} has dimensions {resolved.names}; "
            f"this env needs {list(required)}" + (f" and takes any of {list(optional)}" if optional else "")
        )
    return resolved


class RandomizedEnvMixin:
    """Parameters set with ``set_parameters`` are validated at once and take effect at the next ``reset()``.

    Subclasses call ``_init_randomization`` in ``__init__``, implement ``_apply_parameters`` (physical
    values in space order), and call ``_begin_episode_parameters`` at the start of ``reset``.
    """

    randomization_space: RandomizationSpace

    def _init_randomization(
        self, space: RandomizationSpace | str | None, env_id: str, required: tuple[str, ...],
        optional: tuple[str, ...] = (),
    ) -> None:
        self.randomization_space = resolve_space(space, env_id, required, optional)
        self._param_index = {name: i for i, name in enumerate(self.randomization_space.names)}
        self._pending_parameters = self.randomization_space.reference()
        self._parameters = self._pending_parameters.copy()
        self._parameters_info: dict[str, float] = self.randomization_space.as_dict(self._parameters)
        self._apply_parameters(self._parameters)

    def set_parameters(self, values: np.ndarray | Mapping[str, float] | Any) -> None:
        """Physical values (space order, or a complete name -> value mapping). Effective from the next reset."""
        validated = self.randomization_space.validate(values)
        if validated.ndim != 1:
            raise RandomizationError(
                f"{self.randomization_space.env_id}: set_parameters takes one point of "
                f"{self.randomization_space.ndim} values, got shape {validated.shape}"
            )
        self._pending_parameters = validated

    @property
    def parameters(self) -> np.ndarray:
        """Physical values in effect for the current episode."""
        return self._parameters.copy()

    def _param(self, values: np.ndarray, name: str, absent: float | None = None) -> float:
        """The value of dimension ``name``; ``absent`` for an optional dimension the space does not have."""
        if name not in self._param_index and absent is not None:
            return absent
        return float(values[self._param_index[name]])

    def _begin_episode_parameters(self) -> dict[str, float]:
        """Apply pending parameters (if they changed) and return them for ``info["parameters"]``."""
        if not np.array_equal(self._pending_parameters, self._parameters):
            self._apply_parameters(self._pending_parameters)
            self._parameters = self._pending_parameters.copy()
            self._parameters_info = self.randomization_space.as_dict(self._parameters)
        return dict(self._parameters_info)

    def _apply_parameters(self, values: np.ndarray) -> None:  # pragma: no cover - abstract
        raise NotImplementedError
