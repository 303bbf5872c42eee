"""The fault space as data, where a generator finds it (specs/scenarios.md, "Fault placement").

Documented for users as ``stream_harness.agents.faults``; the model lives in
:mod:`stream_harness.agents.scenario.faults`, with the scenario it belongs to.
"""

from stream_harness.agents.scenario.faults import (
    ENDINGS,
    ERROR_KINDS,
    NAMED_PLACES,
    WHOLE_CALLS,
    ByteAt,
    CallFault,
    FaultSpec,
    InCall,
    Resolved,
    canonical_yaml,
    fault_space,
    normalize,
    place_offset,
    unexpressible,
)

__all__ = [
    "ENDINGS",
    "ERROR_KINDS",
    "NAMED_PLACES",
    "WHOLE_CALLS",
    "ByteAt",
    "CallFault",
    "FaultSpec",
    "InCall",
    "Resolved",
    "canonical_yaml",
    "fault_space",
    "normalize",
    "place_offset",
    "unexpressible",
]
