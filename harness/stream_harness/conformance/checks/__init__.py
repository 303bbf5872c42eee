"""The check catalogue (documented in specs/checks.md), assembled from its families.

Each check has an id, the contract rule or spec table it enforces, and the adapter level
it needs: ``event`` checks read the event sequence, ``message`` checks only the final
message, so they apply to every adapter. The engine (context, split plans, shrinking)
is in :mod:`.engine`; each family's module holds its checks and their fixtures, and the
agent checks are in :mod:`stream_harness.agents.conformance.checks`. The order below is the
order of reports, so it is kept.
"""

from __future__ import annotations

from stream_harness.conformance.checks import gateway, resumption, session, stream
from stream_harness.conformance.checks.engine import Check

CHECKS: tuple[Check, ...] = (*stream.CHECKS, *session.CHECKS, *resumption.CHECKS, *gateway.CHECKS)

CHECKS_BY_ID = {c.id: c for c in CHECKS}
