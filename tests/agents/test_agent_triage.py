"""The merge's triage of agent rows follows the expectation files, explored rows included:
an explored row is known by its shrunk schedule's fault words, as the exploration judged it."""

from __future__ import annotations

from datetime import UTC, datetime

from stream_harness.agents.conformance.runner import AgentExpectation
from stream_harness.agents.reporting.triage import reclassify_agents
from stream_harness.reporting.report import AgentRow, Report

T0 = datetime(2026, 11, 28, tzinfo=UTC)


def _report(*rows: AgentRow) -> Report:
    return Report(
        tool_version="0.1.0", started=T0, finished=T0, seed=0, examples=0, checks=(),
        adapters=(), cases=(), environment={}, agent_results=rows,
    )  # fmt: skip


def _explored(outcome: str, faults: tuple[str, ...]) -> AgentRow:
    return AgentRow(
        agent="fw", agent_version="1", scenario="weather_tool_call~explored",
        protocol="openai-responses", check="A5", title="t", outcome=outcome,  # type: ignore[arg-type]
        message="1 of 9 schedules run failed", faults=faults, explored={"schedules": 9},
    )  # fmt: skip


def test_an_explored_failure_becomes_known_by_an_entry_listing_its_fault_words() -> None:
    entry = AgentExpectation(
        "fw",
        "~explored",
        "A5",
        "openai-responses",
        "findings say why",
        frozenset({"http_500", "clean_eof"}),
    )
    failed = _explored("failed", ("clean_eof", "http_500"))
    [row] = reclassify_agents(_report(failed), [entry]).agent_results
    assert (row.outcome, row.issue) == ("known_failure", "findings say why")
    # without the entry (or with one short of a word) it is new again
    [row] = reclassify_agents(_report(row), []).agent_results
    assert (row.outcome, row.issue) == ("failed", None)
    short = AgentExpectation("fw", "~explored", "A5", None, "r", frozenset({"clean_eof"}))
    [row] = reclassify_agents(_report(failed), [short]).agent_results
    assert row.outcome == "failed"


def test_an_explored_row_that_passed_stays_passed_whatever_the_entries() -> None:
    entry = AgentExpectation("fw", "~explored", "A5", None, "r", frozenset({"clean_eof"}))
    passed = _explored("passed", ())
    [row] = reclassify_agents(_report(passed), [entry]).agent_results
    assert (row.outcome, row.issue) == ("passed", None)
