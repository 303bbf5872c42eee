"""Turning results into what people read: terminal tables and the conformance report.

The conformance report is a plain model (:class:`Report`) built from a run
(:func:`build_report`) or read back from ``report.jsonl`` (:func:`load_report`), merged
across environments (:func:`merge_reports`) and written as four files
(:func:`write_report`): ``report.jsonl``, ``README.md``, ``report.html`` and ``junit.xml``.
"""

from __future__ import annotations

from stream_harness.reporting.files import write_report
from stream_harness.reporting.jsonl import load_report
from stream_harness.reporting.report import (
    Report,
    ReportError,
    build_report,
    merge_reports,
    reclassify,
    update_report,
)

__all__ = [
    "Report",
    "ReportError",
    "build_report",
    "load_report",
    "merge_reports",
    "reclassify",
    "update_report",
    "write_report",
]
