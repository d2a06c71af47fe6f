"""The paper's "solved" criterion of each environment as data (for the lines in the figures and the saved files).

The criterion is part of the env's record (``adr_core.envs.registry``); the env modules' ``is_solved`` read the same
numbers.
"""
from __future__ import annotations

from ..envs.registry import Metric, SolvedCriterion, env_record

__all__ = ["Metric", "SolvedCriterion", "solved_criterion"]


def solved_criterion(env_id: str) -> SolvedCriterion:
    try:
        return env_record(env_id).solved
    except ValueError:
        raise ValueError(f"no solved criterion known for {env_id!r}") from None
