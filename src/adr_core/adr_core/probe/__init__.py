"""The ADR probe: Algorithm 1 without agent updates around a frozen policy, to see where the sampler looks.

``Probe`` (probe.py) runs the iterations (``adr_core.iteration``: propose, roll out, score then train the
discriminator, update the particles) with a policy that never changes, after measuring that policy's failure map
over the training range (failure.py). ``adr-probe`` (cli.py) writes the proposals and rewards of every iteration,
the failure map, the focus statistics and one figure (figure.py). Frozen policies: a run's checkpoint or any
``module:callable`` (policies.py); controllers whose failure region is known by construction: controllers.py.
"""
from .failure import FailureRegion, failure_region
from .policies import FrozenPolicy, PolicyLoadError, load_frozen_policy
from .probe import Probe, ProbeResult

__all__ = ["FailureRegion", "FrozenPolicy", "PolicyLoadError", "Probe", "ProbeResult", "failure_region",
           "load_frozen_policy"]
