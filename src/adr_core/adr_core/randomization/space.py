"""RandomizationSpace: named physical dimensions <-> the normalized cube [0, 1]^d.

Normalized coordinates are relative to the *training* range: ``u = 0`` is its low edge,
``u = 1`` its high edge. Physical values are accepted anywhere inside the *allowed* range of
a dimension (its ``limits``): by default the hull of the default, the training range and every
named range, so test ranges such as Pusher's ``[0.5, 0.67]x`` (normalized u < 0) stay usable.
Nothing is ever clipped: a value outside the allowed range raises ``RandomizationError``.

A dimension whose training range is a single point (e.g. after ``with_training_range("hard")``
on ErgoReacher) maps every ``u`` to that point, and only that point back to ``u = 0.5``.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .dimension import Dimension, parse_range
from .errors import RandomizationError

TRAIN = "train"
_RELATIVE_TOLERANCE = 1e-9  # accepted excess at an allowed edge, relative to the edge's magnitude (no clipping)

Box = tuple[np.ndarray, np.ndarray]


def _fmt(x: float) -> str:
    return f"{x:.10g}"


class RandomizationSpace:
    """Named dimensions with a physical default, a training range, named ranges and allowed limits."""

    def __init__(
        self,
        env_id: str,
        dims: Iterable[Dimension],
        ranges: Mapping[str, Box] | None = None,
        limits: Box | None = None,
    ) -> None:
        self.env_id = str(env_id)
        self.dims: tuple[Dimension, ...] = tuple(dims)
        if not self.dims:
            raise RandomizationError(f"{self.env_id}: a randomization space needs at least one dimension")
        names = [d.name for d in self.dims]
        if len(set(names)) != len(names):
            raise RandomizationError(f"{self.env_id}: duplicate dimension names in {names}")
        self._index = {name: i for i, name in enumerate(names)}
        self._default = np.array([d.default for d in self.dims], dtype=np.float64)
        self._low = np.array([d.low for d in self.dims], dtype=np.float64)
        self._high = np.array([d.high for d in self.dims], dtype=np.float64)
        self._width = self._high - self._low
        self._point = self._width == 0.0

        self._ranges: dict[str, Box] = {}
        for range_name, (lo, hi) in (ranges or {}).items():
            if range_name != TRAIN:
                self._ranges[range_name] = self._checked_box(range_name, lo, hi)
        self._ranges[TRAIN] = (self._low.copy(), self._high.copy())

        hull_low = np.minimum.reduce([self._default] + [lo for lo, _ in self._ranges.values()])
        hull_high = np.maximum.reduce([self._default] + [hi for _, hi in self._ranges.values()])
        if limits is None:
            self._limit_low, self._limit_high = hull_low, hull_high
        else:
            self._limit_low, self._limit_high = self._checked_box("limits", *limits)
            outside = (hull_low < self._limit_low) | (hull_high > self._limit_high)
            if outside.any():
                i = int(np.argmax(outside))
                raise RandomizationError(
                    f"{self.env_id}: dimension {names[i]!r}: default and ranges span "
                    f"[{_fmt(hull_low[i])}, {_fmt(hull_high[i])}], outside its limits "
                    f"[{_fmt(self._limit_low[i])}, {_fmt(self._limit_high[i])}]"
                )
        scale = np.maximum(np.abs(self._limit_low), np.abs(self._limit_high))
        self._accept_low = self._limit_low - _RELATIVE_TOLERANCE * scale
        self._accept_high = self._limit_high + _RELATIVE_TOLERANCE * scale

    # ----------------------------------------------------------------- basics
    @property
    def names(self) -> list[str]:
        return [d.name for d in self.dims]

    @property
    def ndim(self) -> int:
        return len(self.dims)

    @property
    def range_names(self) -> list[str]:
        return list(self._ranges)

    def reference(self) -> np.ndarray:
        """Physical defaults, float64 ``(d,)``."""
        return self._default.copy()

    def reference_normalized(self) -> np.ndarray:
        """Defaults in normalized coordinates (outside [0, 1] when a default lies outside the training range)."""
        return self.to_normalized(self._default)

    def limits(self) -> Box:
        """Physical ``(low, high)`` of the allowed values: what ``validate`` accepts."""
        return self._limit_low.copy(), self._limit_high.copy()

    def range_box(self, name: str) -> Box:
        """Physical ``(low, high)`` of a named range; ``"train"`` always exists."""
        if name not in self._ranges:
            raise RandomizationError(f"{self.env_id}: unknown range {name!r}; known ranges: {self.range_names}")
        lo, hi = self._ranges[name]
        return lo.copy(), hi.copy()

    def with_training_range(self, name: str) -> RandomizationSpace:
        """A copy whose training range is the named range (limits and other named ranges unchanged)."""
        lo, hi = self.range_box(name)
        dims = [
            Dimension(d.name, d.default, float(low), float(high), d.unit, d.description)
            for d, low, high in zip(self.dims, lo, hi)
        ]
        others = {k: v for k, v in self._ranges.items() if k != TRAIN}
        return RandomizationSpace(self.env_id, dims, others, (self._limit_low, self._limit_high))

    # ------------------------------------------------------------- validation
    def validate(self, values: Any) -> np.ndarray:
        """Check physical values; return them as float64 ``(d,)`` or ``(n, d)``. Raises ``RandomizationError``."""
        x = self._as_array(values, "values")
        bad = ~np.isfinite(x) | (x < self._accept_low) | (x > self._accept_high)
        if bad.any():
            row, col = self._first(bad)
            value = x[row][col] if x.ndim == 2 else x[col]
            raise RandomizationError(self._allowed_message(col, f"{_fmt(value)}{row_suffix(row)}"))
        return x

    def to_normalized(self, values: Any) -> np.ndarray:
        """Physical -> normalized (validated). Accepts ``(d,)``, ``(n, d)`` or a name -> value mapping."""
        x = self.validate(values)
        width = np.where(self._point, 1.0, self._width)
        u = (x - self._low) / width
        if self._point.any():
            off_point = self._point & (x != self._low)
            if off_point.any():
                row, col = self._first(off_point)
                value = x[row][col] if x.ndim == 2 else x[col]
                raise RandomizationError(
                    f"{self.env_id}: {self.names[col]}={_fmt(value)}{row_suffix(row)} has no normalized coordinate: "
                    f"the training range is the single point {_fmt(self._low[col])}"
                )
            u = np.where(self._point, 0.5, u)
        return u

    def from_normalized(self, u: Any) -> np.ndarray:
        """Normalized -> physical, ``(1-u)*low + u*high`` (exact at u = 0 and u = 1). Validated."""
        u = self._as_array(u, "normalized values")
        if not np.isfinite(u).all():
            row, col = self._first(~np.isfinite(u))
            value = u[row][col] if u.ndim == 2 else u[col]
            raise RandomizationError(
                f"{self.env_id}: normalized {self.names[col]}={value}{row_suffix(row)} is not finite; "
                f"training range [0, 1] maps to [{_fmt(self._low[col])}, {_fmt(self._high[col])}]"
            )
        x: np.ndarray = (1.0 - u) * self._low + u * self._high
        bad = (x < self._accept_low) | (x > self._accept_high)
        if bad.any():
            row, col = self._first(bad)
            value = u[row][col] if u.ndim == 2 else u[col]
            physical = x[row][col] if x.ndim == 2 else x[col]
            raise RandomizationError(
                self._allowed_message(col, f"{_fmt(physical)} (normalized {_fmt(value)}){row_suffix(row)}")
            )
        return x

    def sample_uniform(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``(n, d)`` normalized points, uniform over the training range."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise RandomizationError(f"{self.env_id}: sample count must be an integer >= 0, got {n!r}")
        return rng.random((int(n), self.ndim))

    def as_dict(self, values: Any) -> dict[str, float]:
        """Validated physical ``(d,)`` values as ``{name: float}`` (what envs report in ``info``)."""
        x = self.validate(values)
        if x.ndim != 1:
            raise RandomizationError(
                f"{self.env_id}: as_dict needs one point of {self.ndim} values, got shape {x.shape}"
            )
        return {name: float(v) for name, v in zip(self._index, x)}

    # ---------------------------------------------------------- serialization
    def to_dict(self) -> dict[str, Any]:
        """Plain data (absolute bounds), the same schema as the YAML files; ``from_dict`` round-trips it exactly."""
        dims = []
        for i, d in enumerate(self.dims):
            dims.append(
                {
                    "name": d.name,
                    "default": float(d.default),
                    "unit": d.unit,
                    "description": d.description,
                    "train": {"absolute": [float(d.low), float(d.high)]},
                    "limits": {"absolute": [float(self._limit_low[i]), float(self._limit_high[i])]},
                }
            )
        ranges = {
            name: {d: {"absolute": [float(lo[i]), float(hi[i])]} for i, d in enumerate(self.names)}
            for name, (lo, hi) in self._ranges.items()
            if name != TRAIN
        }
        return {"env_id": self.env_id, "dimensions": dims, "ranges": ranges}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RandomizationSpace:
        """Build from the YAML schema (see ``docs/environments.md``). Named ranges leave unlisted dims at default."""
        if not isinstance(data, Mapping) or "env_id" not in data or "dimensions" not in data:
            raise RandomizationError("a randomization space needs the keys 'env_id' and 'dimensions'")
        env_id = str(data["env_id"])
        unknown_keys = set(data) - {"env_id", "dimensions", "ranges", "description"}
        if unknown_keys:
            raise RandomizationError(f"{env_id}: unknown top-level keys {sorted(unknown_keys)}")
        dims: list[Dimension] = []
        limits: list[tuple[float, float] | None] = []
        for entry in data["dimensions"]:
            if not isinstance(entry, Mapping):
                raise RandomizationError(f"{env_id}: each dimension must be a mapping, got {entry!r}")
            name = str(entry.get("name", ""))
            where = f"{env_id}: dimension {name!r}"
            extra = set(entry) - {"name", "default", "unit", "description", "train", "limits"}
            if not name or "default" not in entry or "train" not in entry or extra:
                raise RandomizationError(
                    f"{where}: needs name, default, train (optional unit, description, limits); "
                    f"extra keys {sorted(extra)}"
                )
            default = float(entry["default"])
            low, high = parse_range(entry["train"], default, f"{where} train")
            dims.append(
                Dimension(name, default, low, high, str(entry.get("unit", "")), str(entry.get("description", "")))
            )
            limits.append(parse_range(entry["limits"], default, f"{where} limits") if "limits" in entry else None)

        by_name = {d.name: d for d in dims}
        ranges: dict[str, Box] = {}
        for range_name, per_dim in (data.get("ranges") or {}).items():
            if not isinstance(per_dim, Mapping):
                raise RandomizationError(f"{env_id}: range {range_name!r} must map dimension names to ranges")
            unknown = set(per_dim) - set(by_name)
            if unknown:
                raise RandomizationError(
                    f"{env_id}: range {range_name!r} names unknown dimensions {sorted(unknown)}; known: {list(by_name)}"
                )
            lo = np.array([d.default for d in dims])
            hi = lo.copy()
            for i, d in enumerate(dims):
                if d.name in per_dim:
                    lo[i], hi[i] = parse_range(
                        per_dim[d.name], d.default, f"{env_id}: range {range_name!r} dimension {d.name!r}"
                    )
            ranges[str(range_name)] = (lo, hi)

        space = cls(env_id, dims, ranges)
        if any(lim is not None for lim in limits):
            hull_low, hull_high = space.limits()
            limit_low = np.array([lim[0] if lim else hull_low[i] for i, lim in enumerate(limits)])
            limit_high = np.array([lim[1] if lim else hull_high[i] for i, lim in enumerate(limits)])
            space = cls(env_id, dims, ranges, (limit_low, limit_high))
        return space

    @classmethod
    def from_yaml(cls, path: str | Path) -> RandomizationSpace:
        from ..yaml_files import read_yaml_mapping

        data = read_yaml_mapping(path, "randomization space", RandomizationError)
        if data is None:
            raise RandomizationError(f"randomization space {path} is empty")
        return cls.from_dict(data)

    def to_yaml(self, path: str | Path) -> None:
        from ..yaml_files import write_yaml

        write_yaml(path, self.to_dict())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RandomizationSpace) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        parts = ", ".join(f"{d.name}={_fmt(d.default)} [{_fmt(d.low)}, {_fmt(d.high)}]" for d in self.dims)
        return f"RandomizationSpace({self.env_id!r}: {parts}; ranges {self.range_names})"

    # ---------------------------------------------------------------- helpers
    def _as_array(self, values: Any, what: str) -> np.ndarray:
        if isinstance(values, Mapping):
            return self._mapping_to_array(values)
        try:
            x = np.array(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise RandomizationError(
                f"{self.env_id}: {what} must be numbers in the order {self.names}, got {values!r}"
            ) from None
        if x.ndim not in (1, 2) or x.shape[-1] != self.ndim:
            raise RandomizationError(
                f"{self.env_id}: expected {self.ndim} {what} in the order {self.names} (shape (d,) or (n, d)), "
                f"got shape {x.shape}"
            )
        return x

    def _mapping_to_array(self, values: Mapping[str, Any]) -> np.ndarray:
        unknown = [k for k in values if k not in self._index]
        if unknown:
            raise RandomizationError(f"{self.env_id}: unknown dimension(s) {unknown}; known: {self.names}")
        missing = [k for k in self._index if k not in values]
        if missing:
            raise RandomizationError(
                f"{self.env_id}: missing value(s) for {missing}; every dimension of {self.names} is required"
            )
        x = np.empty(self.ndim, dtype=np.float64)
        for name, i in self._index.items():
            try:
                x[i] = float(values[name])
            except (TypeError, ValueError):
                raise RandomizationError(self._allowed_message(i, repr(values[name]))) from None
        return x

    def _checked_box(self, what: str, lo: Any, hi: Any) -> Box:
        lo = np.array(lo, dtype=np.float64).reshape(-1)
        hi = np.array(hi, dtype=np.float64).reshape(-1)
        if lo.shape != (self.ndim,) or hi.shape != (self.ndim,):
            raise RandomizationError(f"{self.env_id}: {what} needs {self.ndim} bounds, got {lo.shape} and {hi.shape}")
        bad = ~np.isfinite(lo) | ~np.isfinite(hi) | (lo > hi)
        if bad.any():
            i = int(np.argmax(bad))
            raise RandomizationError(
                f"{self.env_id}: {what} of dimension {self.names[i]!r} is [{lo[i]}, {hi[i]}]; needs finite low <= high"
            )
        return lo, hi

    def _allowed_message(self, col: int, shown: str) -> str:
        return (
            f"{self.env_id}: {self.names[col]}={shown} is outside the allowed range "
            f"[{_fmt(self._limit_low[col])}, {_fmt(self._limit_high[col])}]"
            f" (training range [{_fmt(self._low[col])}, {_fmt(self._high[col])}])"
        )

    @staticmethod
    def _first(mask: np.ndarray) -> tuple[int | None, int]:
        if mask.ndim == 1:
            return None, int(np.argmax(mask))
        row, col = np.argwhere(mask)[0]
        return int(row), int(col)


def row_suffix(row: int | None) -> str:
    return "" if row is None else f" (row {row})"
