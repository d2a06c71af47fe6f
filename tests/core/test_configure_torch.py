"""Every process of a run computes in the same floating-point mode: the trainer (and the graph's nodes, through
adr_ros.run_config) apply the config's ``flush_denormals``, and the threads they start inherit it."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import torch
from tiny_configs import tiny_config

from adr_core.base.devices import configure_torch
from adr_core.training.trainer import Trainer

DENORMAL = 1e-39  # below float32's smallest normal number (1.2e-38)


def flushed() -> bool:
    """Whether this thread computes a float32 denormal as 0."""
    return float(torch.tensor([DENORMAL], dtype=torch.float32).mul(1.0)[0]) == 0.0


@pytest.fixture(autouse=True)
def restore_mode():
    before = flushed()
    yield
    torch.set_flush_denormal(before)


@pytest.mark.parametrize("flush", [True, False])
def test_the_trainer_applies_the_configs_mode_to_itself_and_its_learner_thread(flush):
    torch.set_flush_denormal(not flush)
    trainer = Trainer(tiny_config(flush_denormals=flush, concurrent_learning=True), None)
    assert flushed() is flush
    assert trainer._learner_pool is not None
    assert trainer._learner_pool.submit(flushed).result() is flush


def test_configure_torch_sets_threads_and_mode_and_new_threads_inherit_it():
    threads = torch.get_num_threads()
    try:
        configure_torch(1, True)
        assert torch.get_num_threads() == 1 and flushed()
        with ThreadPoolExecutor(1) as pool:
            assert pool.submit(flushed).result()
        configure_torch(0, False)  # 0 threads: leave the count as it is
        assert torch.get_num_threads() == 1 and not flushed()
    finally:
        torch.set_num_threads(threads)
