"""What the pages a person reads (README.md, report.html) show instead of every row.

A report of 25,000 results lists 2,000 known failures; listed one by one they made a
1 MB README that nobody reads. Known failures are the same few library bugs seen on many
cases, so a page groups them by finding (the upstream issue or finding file their
expectation entry cites), per adapter, with a count and one reproduce command; new
failures, the ones a reader must act on, stay in full. ``report.jsonl`` and ``report.html``
keep every row. Built from the in-memory model (:mod:`stream_harness.reporting.report`),
so it holds whatever layout ``report.jsonl`` is written in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from stream_harness.reporting.report import (
    FAILING,
    AgentRow,
    AgentSummary,
    CheckInfo,
    Report,
    Result,
    grouped_results,
    matrix,
)

_DIGITS = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """``A2`` before ``A10``: runs of digits compared as numbers, the rest as text."""
    return tuple((1, int(p)) if p.isdigit() else (0, p) for p in _DIGITS.split(name) if p)


def agent_check_order(agents: Iterable[AgentSummary]) -> list[str]:
    """Every agent check any agent ran, in natural order (A1, A2, ... A10, A11)."""
    return sorted({c for a in agents for c in a.by_check}, key=natural_key)


def shown_checks(report: Report) -> tuple[list[CheckInfo], list[CheckInfo]]:
    """The matrix columns worth a column (the check applied to some adapter), and the
    ones left out because they applied to none: a column of ``n/a`` only widens the table."""
    cells = matrix(report)
    shown: list[CheckInfo] = []
    hidden: list[CheckInfo] = []
    for j, check in enumerate(report.checks):
        applied = any(row[j].counts.total for row in cells)
        (shown if applied or not cells else hidden).append(check)
    return shown, hidden


@dataclass(frozen=True, slots=True)
class Finding:
    """Known failures of one row (adapter or agent) citing one issue: a count, which
    checks, and the first of them as the example to reproduce."""

    row: str
    issue: str | None
    checks: tuple[str, ...]
    count: int
    example: str  # a case id, or "scenario [protocol]" for an agent row
    message: str
    command: str | None


def stream_findings(report: Report) -> list[Finding]:
    """Known failures of the stream rows, grouped by (adapter, issue), in adapter order,
    then by how many results each covers (most first)."""
    groups: dict[tuple[str, str | None], list[Result]] = {}
    for r in report.results:
        if r.outcome == "known_failure":
            groups.setdefault((r.adapter, r.issue), []).append(r)
    order = {a.name: i for i, a in enumerate(report.adapters)}
    checks = {c.id: i for i, c in enumerate(report.checks)}
    out = []
    for (adapter, issue), rows in groups.items():
        first = rows[0].failures[0] if rows[0].failures else None
        out.append(
            Finding(
                adapter,
                issue,
                tuple(sorted({r.check for r in rows}, key=checks.__getitem__)),
                len(rows),
                rows[0].case,
                first.message if first else "",
                first.command if first else None,
            )
        )
    return sorted(out, key=lambda f: (order[f.row], -f.count, f.issue or ""))


def agent_findings(rows: Sequence[AgentRow]) -> list[Finding]:
    """Known failures of agent rows, grouped by (agent, issue) as :func:`stream_findings`."""
    groups: dict[tuple[str, str | None], list[AgentRow]] = {}
    for r in rows:
        if r.outcome == "known_failure":
            groups.setdefault((r.agent, r.issue), []).append(r)
    order = {a: i for i, a in enumerate(dict.fromkeys(r.agent for r in rows))}
    out = [
        Finding(
            agent,
            issue,
            tuple(sorted({r.check for r in group}, key=natural_key)),
            len(group),
            f"{group[0].scenario} [{group[0].protocol}]",
            group[0].message,
            group[0].command,
        )
        for (agent, issue), group in groups.items()
    ]
    return sorted(out, key=lambda f: (order[f.row], -f.count, f.issue or ""))


def by_issue(findings: Sequence[Finding]) -> list[list[Finding]]:
    """The findings of several rows that cite one issue, together (in the order the first of
    them comes): a library bug seen through five adapters is one entry with five counts and
    one reproduce command, not five entries (issue 36, point 5)."""
    groups: dict[str | None, list[Finding]] = {}
    for f in findings:
        groups.setdefault(f.issue, []).append(f)
    return list(groups.values())


def new_failures(report: Report) -> list[tuple[str, str, list[Result]]]:
    """The results that fail the run (failed, timeout, crashed, errored), grouped by
    (adapter, check) in matrix order: what a reader must act on."""
    return grouped_results(report, lambda r: r.outcome in FAILING)


def fixes(report: Report) -> list[Result]:
    """Results listed as known failures that passed: their expectation entries are stale."""
    return [r for r in report.results if r.outcome == "fixed"]


def short_version(version: str) -> str:
    """The first part of a version line (``7.0.173`` of ``7.0.173 (javascript; node ...)``),
    for a table's row header; the whole line stays in the page's metadata and tooltips."""
    head = re.split(r" \(|;|,", version, maxsplit=1)[0].strip()
    return head if head == version.strip() else head + " …"
