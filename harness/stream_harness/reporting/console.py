"""The report as a terminal or a CI log shows it.

Three forms of the same content (scope, matrix, every new failure with its difference and
reproduce command, verdict): ``rich`` tables on a terminal; ``plain`` lines where output
is a log (no TTY): nothing is cut with "…" and no command is wrapped, because a command
that cannot be pasted back is worthless; ``github`` adds workflow-command annotations
(``::error file=...``) so failures show on the pull request.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import IO, Final, Literal, TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from stream_harness.conformance.cases import Skipped
from stream_harness.conformance.failure_text import failure_lines
from stream_harness.reporting.report import FAILING, Report, Result, SkippedInfo, matrix

Format = Literal["rich", "plain", "github"]
FORMATS: tuple[str, ...] = ("auto", "rich", "plain", "github")


def choose_format(requested: str, stream: TextIO | None = None) -> Format:
    """``auto``: github under GitHub Actions, rich on a terminal, plain otherwise."""
    if requested in ("rich", "plain", "github"):
        return requested  # type: ignore[return-value]
    if os.environ.get("GITHUB_ACTIONS") == "true":
        return "github"
    out = stream or sys.stdout
    return "rich" if is_terminal(out) else "plain"


def new_failures(report: Report) -> list[Result]:
    return [r for r in report.results if r.outcome in FAILING]


def render(report: Report, form: Format, stream: TextIO | None = None) -> None:
    out = stream or sys.stdout
    print(f"stream-harness: checked {report.scope}", file=out)
    for line in skipped_lines(report.skipped):
        print(line, file=out)
    if form == "rich":
        _rich_matrix(report, out)
    else:
        for line in plain_matrix(report):
            print(line, file=out)
    for r in new_failures(report):
        for line in reported_failure_lines(r):
            print(line, file=out)
        if form == "github":
            print(annotation(report, r), file=out)
    print(f"verdict: {report.verdict}", file=out)


def skipped_lines(skipped: Iterable[SkippedInfo | Skipped]) -> list[str]:
    """One line per input passed over (a file, or an interaction of a usable file), with
    the reason: what ``--skip-unusable`` left out must be visible wherever the run is read."""
    return [f"skipped {s.where}: {s.reason}" for s in skipped]


def plain_matrix(report: Report) -> list[str]:
    """One line per adapter: every check's cell, never cut."""
    lines = []
    adapters = {a.name: a for a in report.adapters}
    for row in matrix(report):
        if not row:
            continue
        info = adapters[row[0].adapter]
        cells = ", ".join(f"{c.check} {c.text}" for c in row if c.status != "na")
        lines.append(f"{info.name} {info.version}: {cells or 'no check applied'}")
    return lines


def shown_checks(report: Report) -> list[int]:
    """The matrix columns worth drawing: a check that applied to no row shown (the
    gateway checks on a library's rows) is a column of ``n/a`` that only pushes the others
    off a terminal's width."""
    rows = [row for row in matrix(report) if row]
    return [i for i in range(len(report.checks)) if any(row[i].status != "na" for row in rows)]


# A width no table or line of ours reaches (rich needs a number); lines are as long as
# their content, never padded to it.
UNBOUNDED: Final = 1_000_000


def is_terminal(out: IO[str]) -> bool:
    """Whether ``out`` is a terminal, by the file alone: rich also answers yes under
    ``FORCE_COLOR`` or ``TTY_COMPATIBLE=1``, which CI systems set for colours in their
    logs, where a terminal's width would still fold and cut lines."""
    try:
        return out.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed file
        return False


def console_for(out: TextIO) -> Console:
    """A rich Console for ``out`` that never wraps or cuts when ``out`` is not a terminal.

    Rich lays out for 80 columns (or ``$COLUMNS``) off a terminal, folding long lines and
    cutting table cells with "…"; a log or a file has no width, so it gets one no line
    can reach. On a terminal the terminal's width stands.
    """
    if is_terminal(out):
        return Console(file=out, highlight=False)
    return Console(file=out, highlight=False, width=UNBOUNDED)


def _rich_matrix(report: Report, out: TextIO) -> None:
    console = console_for(out)
    columns = shown_checks(report)
    table = Table(title="stream-harness conformance")
    table.add_column("adapter")
    table.add_column("version")
    for i in columns:
        table.add_column(report.checks[i].id, justify="center")
    style = {"pass": "green", "known": "yellow", "fail": "red", "na": "dim"}
    adapters = {a.name: a for a in report.adapters}
    for row in matrix(report):
        if not row:
            continue
        info = adapters[row[0].adapter]
        # Text, not markup: a gateway row's name is `litellm-proxy[a->b]`, which rich would
        # read as a style tag and drop.
        cells = (Text(row[i].text, style=style[row[i].status]) for i in columns)
        table.add_row(Text(info.name), Text(info.version), *cells)
    console.print(table)
    hidden = [report.checks[i].id for i in range(len(report.checks)) if i not in columns]
    if hidden:
        console.print(
            Text(f"not shown: n/a for every adapter above: {', '.join(hidden)}", style="dim")
        )


def reported_failure_lines(r: Result) -> list[str]:
    """A new failure as every place shows it, and where the rest of its failures are."""
    lines = failure_lines(r)
    if len(r.failures) > 1:
        lines.append(f"    (+{len(r.failures) - 1} more in report.jsonl)")
    return lines


def annotation(report: Report, r: Result) -> str:
    """A GitHub Actions ``::error`` workflow command for one failure."""
    case = next((c for c in report.cases if c.id == r.case), None)
    first = r.failures[0] if r.failures else None
    body = "\n".join(reported_failure_lines(r)[1:] or [r.outcome])
    message = f"{first.message if first else r.outcome}\n{body}"
    where = f"file={workflow_property(case.cassette)}," if case is not None else ""
    return f"::error {where}title={workflow_property(f'{r.check} [{r.adapter}] {r.case}')}::{workflow_data(message)}"


def workflow_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_property(text: str) -> str:
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")
