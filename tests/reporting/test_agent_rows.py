"""Agent rows in the report: read back as written, counted in the verdict, kept on a re-run.

The rows are made by hand here (not by the agent runner), so the expected counts and
renderings below are worked out from them: two agents, one failed row, one known failure.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from report_fixtures import make_report
from stream_harness.reporting import html, jsonl, junit, markdown
from stream_harness.reporting.report import (
    AgentRow,
    Report,
    ReportError,
    merge_reports,
    update_report,
)

HOSTILE = "<script>alert('x')</script> | `tick`"


def row(agent: str, check: str, outcome: str, message: str = "") -> AgentRow:
    return AgentRow(
        agent=agent,
        agent_version="1.0",
        scenario="retry_after_payment",
        protocol="openai-completions",
        check=check,
        title="t",
        outcome=outcome,  # type: ignore[arg-type]
        message=message,
        command=f"stream-harness agents --agent {agent} --check {check}",
        faults=("cut_at",),
        conventions={"max_retries": 2},
        settings="delays x0.01",
        issue="https://example.org/1" if outcome == "known_failure" else None,
    )


ROWS = (
    row("reference", "A1", "passed"),
    row("reference", "A2", "passed"),
    row("fw", "A1", "passed"),
    row("fw", "A2", "failed", HOSTILE),
    row("fw", "A9", "known_failure", "retried after partial output"),
)


def test_agent_rows_round_trip_and_count_in_the_verdict() -> None:
    base = make_report()
    report = base.model_copy(update={"agent_results": ROWS})
    text = jsonl.render(report)
    # Each row's command is not the one the header rebuilds: each keeps its own line.
    assert text.count('"kind":"agent_result"') == 5
    back = jsonl.parse(text, "r.jsonl")
    # Read back sorted by key (agent fw before reference), each row as written.
    assert back.agent_results == tuple(sorted(ROWS, key=lambda r: r.agent))
    assert back.counts.total == base.counts.total + 5
    assert back.counts.failed == base.counts.failed + 1
    assert back.counts.known_failure == base.counts.known_failure + 1
    assert "2 agent run(s) of 2 agent(s)" in back.scope


def test_a_stream_only_report_gains_nothing() -> None:
    """The committed report's stream rows alone (it carries agent rows too, from the
    matrix): no rendering grows an agent line, section or suite."""
    folder = Path(__file__).resolve().parents[2] / "conformance_report"
    if not (folder / "report.jsonl").exists():
        pytest.skip("no committed report in this checkout")
    committed = jsonl.load_report(
        folder / "report.jsonl"
    )  # the footer's counts are checked on load
    report = committed.model_copy(update={"agent_results": ()})
    assert "agent run" not in report.scope and report.counts.total == len(report.results)
    text = jsonl.render(report)
    assert '"kind":"agent_' not in text and "agent_results" not in text.splitlines()[0]
    assert jsonl.parse(text, "again").counts == report.counts
    assert "Agent rows" not in html.render(report) and "Agent rows" not in markdown.render(report)
    assert 'name="agent:' not in junit.render(report)


def test_the_renderers_show_agent_rows_escaped() -> None:
    report = make_report().model_copy(update={"agent_results": ROWS})
    page = html.render(report)
    assert "Agent rows" in page and "<script>alert" not in page
    assert "stream-harness agents --agent fw --check A2" in page
    readme = markdown.render(report)
    assert "## Agent rows" in readme and "| fw | 1.0 |" in readme
    root = ET.fromstring(junit.render(report))
    suite = next(s for s in root.iter("testsuite") if s.get("name") == "agent:fw")
    assert (
        suite.get("failures") == "1" and suite.get("skipped") == "1" and suite.get("tests") == "3"
    )


def test_a_lost_or_duplicate_agent_row_is_refused() -> None:
    report = make_report().model_copy(update={"agent_results": ROWS})
    lines = jsonl.render(report).splitlines()
    with pytest.raises(ReportError, match="out of order or repeated"):
        jsonl.parse("\n".join([*lines[:-1], lines[-2], lines[-1]]) + "\n", "r.jsonl")
    del lines[-3]  # an agent_result line lost
    with pytest.raises(ReportError, match="counts do not match"):
        jsonl.parse("\n".join(lines) + "\n", "r.jsonl")
    with pytest.raises(ValueError, match="two agent results"):
        Report.model_validate({**make_report().model_dump(), "agent_results": [*ROWS, ROWS[0]]})


def test_a_stream_rerun_keeps_the_agent_rows_and_merges_refuse_conflicts() -> None:
    previous = make_report().model_copy(update={"agent_results": ROWS})
    kept = update_report(previous, make_report())
    assert kept.agent_results == ROWS
    rerun = make_report().model_copy(update={"agent_results": (row("fw", "A2", "passed"),)})
    assert {r.outcome for r in update_report(previous, rerun).agent_results if r.agent == "fw"} == {
        "passed"
    }
    conflicting = make_report().model_copy(update={"agent_results": (row("fw", "A2", "passed"),)})
    with pytest.raises(ReportError, match="conflicting agent result"):
        merge_reports([previous, conflicting])
