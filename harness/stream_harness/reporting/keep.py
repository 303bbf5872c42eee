"""A new run written over a committed report keeps the rows it did not re-run.

``stream-harness report`` re-runs the default adapters and ``stream-harness matrix
--group X`` one library's; the committed ``conformance_report/`` holds the whole matrix.
Both keep the other adapters' rows when they describe the same run, with their known
failures recomputed from the expectation files as they are now.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from stream_harness.conformance.expectations import (
    Expectations,
    ExpectationsError,
    expectations_for,
)
from stream_harness.reporting.jsonl import load_report
from stream_harness.reporting.report import (
    Report,
    ReportError,
    reclassify,
    stale_adapters,
    update_report,
)


def keep_previous(
    report: Report, out: Path, expectations: Callable[[str], Expectations] = expectations_for
) -> tuple[Report, str | None]:
    """``report`` plus the rows of ``out/report.jsonl`` for adapters it did not run,
    and one line saying what was kept or why nothing was (None: no previous report)."""
    previous_path = out / "report.jsonl"
    if not previous_path.is_file():
        return report, None
    try:
        previous = reclassify(load_report(previous_path), expectations)
        stale = stale_adapters(previous, report)
        updated = update_report(previous, report)
    except (ReportError, ExpectationsError, ValueError, OSError) as exc:
        return report, (
            f"not keeping the other adapters of {previous_path}: {exc} "
            "(re-run them, e.g. with `stream-harness matrix`)"
        )
    ran = {a.name for a in report.adapters}
    kept = [a.name for a in updated.adapters if a.name not in ran]
    dropped = "".join(
        f"; dropped {name}: {why} (re-run it, e.g. with `stream-harness matrix`)"
        for name, why in stale.items()
    )
    if not kept:
        return updated, dropped[2:] or None
    return updated, (
        f"kept the rows of {', '.join(kept)} from {previous_path} (--fresh drops them){dropped}"
    )
