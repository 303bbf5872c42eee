"""The fault space as data, where a generator finds it (specs/scenarios.md, "Fault placement").

Documented for users as ``stream_harness.agents.faults``; the model lives in
:mod:`stream_harness.agents.scenario.faults`, with the scenario it belongs to, and its
``__all__`` is the one list of what this path gives.
"""

from stream_harness.agents.scenario.faults import *  # noqa: F403 (the whole public model)
from stream_harness.agents.scenario.faults import __all__ as __all__
