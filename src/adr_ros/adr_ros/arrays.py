"""numpy <-> ROS array fields without per-element Python loops.

rclpy checks every element when a list or ndarray is assigned to a float32[] field (~7 ms per 100k values);
an ``array.array`` of the right typecode is taken as is (~0.035 ms). Reading back, ``np.frombuffer`` is a view.
"""
from __future__ import annotations

from array import array

import numpy as np

_TYPECODES = {np.dtype(np.float32): "f", np.dtype(np.float64): "d", np.dtype(np.uint32): "I", np.dtype(np.uint64): "Q"}


def to_field(values: np.ndarray, dtype: type[np.generic] = np.float32) -> array:
    """Pack ``values`` (any shape) into an ``array.array`` for a ``float32[]``/``float64[]``/``uint32[]`` field."""
    contiguous = np.ascontiguousarray(values, dtype=dtype)
    packed = array(_TYPECODES[contiguous.dtype])
    packed.frombytes(contiguous.tobytes())
    return packed


def from_field(field: array | np.ndarray | list, dtype: type[np.generic] = np.float32) -> np.ndarray:
    """A read-only numpy view of an array field (copy it before mutating)."""
    if isinstance(field, array):
        return np.frombuffer(field, dtype=dtype)
    return np.asarray(field, dtype=dtype)
