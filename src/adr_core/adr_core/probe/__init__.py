"""The ADR probe: Algorithm 1 without agent updates around a frozen policy, to see where the sampler looks.

``Probe`` (probe.py) runs the iterations (``adr_core.iteration``: propose, roll out, score then train the
discriminator, update the particles) with a policy that never changes, after measuring that policy's failure map
over the training range (failure.py). ``adr-probe`` (cli.py) writes the proposals and rewards of every iteration,
the failure map, the focus statistics (focus.py) and one figure (figure.py), through record.py, which the node
graph's ``mode:=probe`` uses too. Frozen policies: a run's checkpoint or any
``module:callable`` (policies.py); controllers whose failure region is known by construction: controllers.py.
"""
from .failure import FailureRegion, failure_region
from .focus import FOCUS_RATIO, focus_statistics
from .policies import FrozenPolicy, PolicyLoadError, load_frozen_policy
from .probe import Probe, ProbeResult, Sweep, measure_failure_map, probe_options
from .record import ProbeRecorder

__all__ = ["FOCUS_RATIO", "FailureRegion", "FrozenPolicy", "PolicyLoadError", "Probe", "ProbeRecorder", "ProbeResult",
           "Sweep", "failure_region", "focus_statistics", "load_frozen_policy", "measure_failure_map", "probe_options"]
