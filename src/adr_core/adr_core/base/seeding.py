"""Seeds of the run's components, derived from the run seed only (so any process can rebuild them).

Rollouts derive theirs from ``(run seed, iteration, slot, kind)``: see ``adr_core.rollout.rollout_randomness``.
"""
from __future__ import annotations

import numpy as np

COMPONENT_CODES = {"agent": 101, "sampler": 102, "discriminator": 103}


def component_seed(run_seed: int, component: str) -> int:
    """A 63-bit seed for ``component`` ('agent', 'sampler' or 'discriminator')."""
    sequence = np.random.SeedSequence([int(run_seed), COMPONENT_CODES[component]])
    return int(sequence.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
