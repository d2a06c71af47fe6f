"""PolicyWeights message <-> a state dict of float32 tensors (no pickle: names, shapes and one flat buffer)."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from adr_interfaces.msg import PolicyWeights
from adr_ros.arrays import from_field, to_field


class MalformedWeights(ValueError):
    """Policy weights whose names, shapes and data do not add up."""


def to_msg(state_dict: Mapping[str, torch.Tensor], *, version: int, algorithm: str, obs_dim: int,
           act_dim: int, run_id: str = "") -> PolicyWeights:
    tensors = [t.detach().to("cpu", torch.float32).contiguous() for t in state_dict.values()]
    shapes = [list(t.shape) for t in tensors]
    sizes = [t.numel() for t in tensors]
    msg = PolicyWeights(run_id=run_id, version=int(version), algorithm=algorithm, obs_dim=int(obs_dim),
                        act_dim=int(act_dim))
    msg.names = list(state_dict.keys())
    msg.shape_offsets = to_field(np.cumsum([0] + [len(s) for s in shapes]), np.uint32)
    msg.shape_data = to_field(np.array([d for s in shapes for d in s], dtype=np.uint32), np.uint32)
    msg.data_offsets = to_field(np.cumsum([0] + sizes), np.uint64)
    msg.data = to_field(torch.cat([t.reshape(-1) for t in tensors]).numpy() if tensors else np.zeros(0, np.float32))
    return msg


def from_msg(msg: PolicyWeights) -> dict[str, torch.Tensor]:
    """Tensors that share no memory with the message; raises MalformedWeights on inconsistent fields."""
    n = len(msg.names)
    shape_offsets = from_field(msg.shape_offsets, np.uint32).astype(np.int64)
    shape_data = from_field(msg.shape_data, np.uint32).astype(np.int64)
    data_offsets = from_field(msg.data_offsets, np.uint64).astype(np.int64)
    data = from_field(msg.data)
    if shape_offsets.size != n + 1 or data_offsets.size != n + 1:
        raise MalformedWeights(f"{n} tensors need {n + 1} shape and data offsets, got {shape_offsets.size} and "
                               f"{data_offsets.size}")
    if shape_offsets[-1] != shape_data.size or data_offsets[-1] != data.size:
        raise MalformedWeights(f"offsets end at {shape_offsets[-1]}/{data_offsets[-1]} but shape_data has "
                               f"{shape_data.size} and data {data.size} values")
    if not np.isfinite(data).all():
        raise MalformedWeights("weights hold NaN or inf")
    out: dict[str, torch.Tensor] = {}
    flat = torch.from_numpy(data.copy())
    for k, name in enumerate(msg.names):
        shape = shape_data[shape_offsets[k]:shape_offsets[k + 1]].tolist()
        start, stop = data_offsets[k], data_offsets[k + 1]
        if int(np.prod(shape)) != stop - start:
            raise MalformedWeights(f"tensor {name!r}: shape {shape} needs {int(np.prod(shape))} values, "
                                   f"has {stop - start}")
        out[name] = flat[start:stop].view(shape)
    return out
