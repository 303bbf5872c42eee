"""A case row of specs/overflow.yaml or specs/retry.yaml, classified as the row says.

Both tables write a provider error the same way (status, message, body, headers, the
raw stop reason, the protocol, and for relative retry hints the row's ``now``), so their
test modules read a row through this one function. Imported by bare name (pytest's
default import mode puts tests/ on sys.path).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from stream_harness.contract.events import ErrorInfo
from stream_harness.errors import classify


def row_now(case: dict[str, Any]) -> datetime | None:
    """The row's ``now`` (what absolute retry hints are measured from), if it has one."""
    return datetime.fromisoformat(case["now"]) if case.get("now") else None


def classify_row(case: dict[str, Any]) -> ErrorInfo:
    return classify(
        status=case.get("status"),
        message=case.get("message"),
        body=case.get("body"),
        headers=case.get("headers"),
        provider_stop_reason=case.get("provider_stop_reason"),
        protocol=case.get("protocol"),
        now=row_now(case),
    )
