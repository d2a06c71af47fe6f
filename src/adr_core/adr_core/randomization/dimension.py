"""One named randomization dimension and the YAML range specs that describe its ranges."""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import RandomizationError


@dataclass(frozen=True)
class Dimension:
    """A physical quantity that can be randomized.

    ``low``/``high`` are the physical training range (not multipliers). ``default`` is the
    reference value of the unrandomized simulator and may lie outside the training range.
    """

    name: str
    default: float
    low: float
    high: float
    unit: str = ""
    description: str = ""

    def __post_init__(self) -> None:
        for field_name in ("default", "low", "high"):
            value = getattr(self, field_name)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise RandomizationError(f"dimension {self.name!r}: {field_name}={value!r} must be a finite number")
        if self.low > self.high:
            raise RandomizationError(
                f"dimension {self.name!r}: training range [{self.low}, {self.high}] has low > high"
            )


def parse_range(spec: Any, default: float, where: str) -> tuple[float, float]:
    """Turn a YAML range spec into physical ``(low, high)``.

    Accepted forms (``x`` is a number, a single number means a point range):
      ``{multiplier: [a, b]}`` / ``{multiplier: x}``  -> ``[a*default, b*default]``
      ``{absolute: [a, b]}`` / ``{absolute: x}``      -> ``[a, b]``
      ``default``                                     -> ``[default, default]``
    """
    if spec == "default":
        return float(default), float(default)
    if not isinstance(spec, Mapping) or len(spec) != 1 or next(iter(spec)) not in ("multiplier", "absolute"):
        raise RandomizationError(
            f"{where}: range must be {{multiplier: [a, b]}}, {{absolute: [a, b]}} or 'default', got {spec!r}"
        )
    kind, bounds = next(iter(spec.items()))
    pair = [bounds, bounds] if isinstance(bounds, (int, float)) else bounds
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        raise RandomizationError(f"{where}: {kind} needs one number or a pair [low, high], got {bounds!r}")
    try:
        low, high = (float(v) for v in pair)
    except (TypeError, ValueError):
        raise RandomizationError(f"{where}: {kind} bounds must be numbers, got {bounds!r}") from None
    if kind == "multiplier":
        low, high = low * default, high * default
    if not (math.isfinite(low) and math.isfinite(high)) or low > high:
        raise RandomizationError(f"{where}: range [{low}, {high}] must be finite with low <= high")
    return low, high
