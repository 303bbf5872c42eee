"""The outcomes a result can have, and which of them fail a run: one vocabulary for the
runner, the pytest plugin, the report model and every rendering of it.

Each outcome means one thing. ``errored`` is the harness's own fault (a check raised);
an adapter that hangs past its run timeout (``timeout``) or dies, raises out of its own
code or breaks its protocol (``crashed``) is that row's failure, with a label that says
which, and fails the run like a new failure unless an expectation file lists it.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

from stream_harness.conformance.expectations import KnownFailure

Outcome: TypeAlias = Literal[
    "passed", "failed", "timeout", "crashed", "errored", "known_failure", "fixed"
]
# In the order the guide, the verdict and the cells list them: the failing ones first after passed.
OUTCOMES: Final[tuple[Outcome, ...]] = (
    "passed",
    "failed",
    "timeout",
    "crashed",
    "errored",
    "known_failure",
    "fixed",
)
# The outcomes that fail a run (exit status 1): what CI must not let through.
FAILING: Final[frozenset[Outcome]] = frozenset({"failed", "timeout", "crashed", "errored"})
Fault: TypeAlias = Literal["timeout", "crashed"]


def fault_outcome(fault: Fault, known: KnownFailure | None) -> tuple[Outcome, str | None]:
    """The outcome of a run the adapter did not finish: its own label, unless an
    expectation file lists the (check, case) as known, as for any failure."""
    return ("known_failure", known.issue) if known is not None else (fault, None)
