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
    report: Report,
    out: Path,
    expectations: Callable[[str], Expectations] = expectations_for,
    *,
    exists: Callable[[str], bool] | None = None,
    keep_missing: bool = False,
) -> tuple[Report, list[str]]:
    """``report`` plus the rows of ``out/report.jsonl`` for adapters it did not run, and the
    lines saying what was kept, what was dropped and why (none: no previous report).

    ``exists`` tells an adapter that can still be run from one that no longer exists (a
    project's adapter renamed or removed): the rows of the latter are dropped, each named,
    unless ``keep_missing`` (``report --keep``), which keeps them and says so. None: every
    adapter counts as existing (the matrix, whose pins file names its adapters).
    """
    previous_path = out / "report.jsonl"
    if not previous_path.is_file():
        return report, []
    try:
        previous = load_report(previous_path)
    except (ReportError, ValueError, OSError) as exc:
        return report, [_not_keeping(previous_path, exc)]
    ran = {a.name for a in report.adapters}
    gone = [
        a.name
        for a in previous.adapters
        if a.name not in ran and exists is not None and not exists(a.name)
    ]
    lines: list[str] = []
    if gone and not keep_missing:
        previous = _without(previous, set(gone))
        lines += [
            f"dropped the rows of {name} from {previous_path}: no adapter of that name any more "
            "(--keep keeps them)"
            for name in gone
        ]
    try:
        previous = reclassify(previous, expectations)
        stale = stale_adapters(previous, report)
        updated = update_report(previous, report)
    except (ReportError, ExpectationsError, ValueError, OSError) as exc:
        return report, [*lines, _not_keeping(previous_path, exc)]
    kept = [a.name for a in updated.adapters if a.name not in ran]
    if kept:
        lines.insert(
            0, f"kept the rows of {', '.join(kept)} from {previous_path} (--fresh drops them)"
        )
    lines += [
        f"dropped {name}: {why} (re-run it, e.g. with `stream-harness matrix`)"
        for name, why in stale.items()
    ]
    missing_kept = [name for name in gone if name in kept]
    if missing_kept and keep_missing:
        lines.append(
            f"kept as asked (--keep), though no adapter has the name: {', '.join(missing_kept)}"
        )
    return updated, lines


def _not_keeping(path: Path, exc: Exception) -> str:
    return f"not keeping the other adapters of {path}: {exc} (re-run them, e.g. with `stream-harness matrix`)"


def _without(report: Report, names: set[str]) -> Report:
    """``report`` without the rows (and header entries) of the adapters ``names``."""
    return report.model_copy(
        update={
            "adapters": tuple(a for a in report.adapters if a.name not in names),
            "results": tuple(r for r in report.results if r.adapter not in names),
        }
    )
