"""``stream-harness agents``' console output in the formats ``check`` offers.

``check``, ``report`` and ``matrix`` print a table on a terminal, plain lines (never cut)
in a log and GitHub annotations under Actions (``--format``); ``agents`` ran in the same
CI jobs and printed plain lines only, so its failures were the ones missing from a pull
request's annotations. The lines that plain output prints are the same in every format
(a log grepped for ``FAIL`` or ``reproduce:`` reads alike); rich adds the table, github
an ``::error`` per failure.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from typing import TextIO

from rich.table import Table
from rich.text import Text

from stream_harness.agents.conformance.runner import AgentResult
from stream_harness.reporting.console import Format, console_for, workflow_data, workflow_property

__all__ = ["agent_failure_lines", "render_agent_results"]

_STYLE = {
    "passed": "green",
    "known_failure": "yellow",
    "failed": "red",
    "timeout": "red",
    "crashed": "red",
    "fixed": "red",
    "skipped": "dim",
}


def render_agent_results(
    results: Sequence[AgentResult], form: Format, stream: TextIO | None = None
) -> None:
    """The per-agent counts (a table under ``rich``), then each failure with its
    reproduce command (and its annotation under ``github``). The verdict line is the
    caller's: it is the exit status said in words."""
    out = stream or sys.stdout
    by_agent: dict[str, Counter[str]] = {}
    for r in results:
        by_agent.setdefault(r.agent, Counter())[r.status] += 1
    if form == "rich":
        statuses = [s for s in _STYLE if any(s in c for c in by_agent.values())]
        table = Table(title="stream-harness agents")
        table.add_column("agent")
        for status in statuses:
            table.add_column(status.replace("_", " "), justify="right")
        for agent, counts in by_agent.items():
            table.add_row(
                Text(agent),
                *(Text(str(counts[s]), style=_STYLE[s] if counts[s] else "dim") for s in statuses),
            )
        console_for(out).print(table)
    else:
        for agent, counts in by_agent.items():
            row = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in sorted(counts.items()))
            print(f"{agent}: {row}", file=out)
    for r in results:
        if not r.failing:
            continue
        for line in agent_failure_lines(r):
            print(line, file=out)
        if form == "github":
            print(_annotation(r), file=out)


def agent_failure_lines(r: AgentResult) -> list[str]:
    """A failing result as the console shows it: what failed, then how to run it alone."""
    what = r.message
    if r.status == "fixed":  # a passed check carries no message; a skipped one says why
        what = (
            f"not judged ({r.message}), but is listed as a known failure"
            if r.message
            else "passed, but is listed as a known failure"
        )
    lines = [f"  FAIL {r.agent} {r.scenario} [{r.protocol}] {r.check} {r.title}: {what}"]
    if r.advice:
        lines.append(f"    advice: {r.advice}")
    return [*lines, f"    reproduce: {r.command}"]


def _annotation(r: AgentResult) -> str:
    """A GitHub Actions ``::error`` on the scenario file, titled as the row is named."""
    lines = agent_failure_lines(r)
    title = f"{r.check} [{r.agent}] {r.scenario} [{r.protocol}]"
    body = "%0A".join(workflow_data(line.strip()) for line in lines)
    return f"::error file={workflow_property(r.path)},title={workflow_property(title)}::{body}"
