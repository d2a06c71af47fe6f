import pytest
import torch


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Small tensors: one thread is fastest and immune to oversubscription on a shared 2-core machine."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
