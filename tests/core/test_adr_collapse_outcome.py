"""The ADR-collapse ablation's decision rule (results/adr_collapse/rules.md): the exact one-sided sign test."""
from __future__ import annotations

import pytest

from experiments.adr_collapse_outcome import sign_test


@pytest.mark.parametrize(("b", "c", "p"), [(5, 0, 1 / 32), (0, 4, 1.0), (4, 1, 6 / 32), (0, 0, 1.0), (6, 2, 37 / 256)])
def test_the_sign_test_is_the_binomial_tail_of_the_discordant_pairs(b: int, c: int, p: float) -> None:
    assert sign_test(b, c) == pytest.approx(p)
