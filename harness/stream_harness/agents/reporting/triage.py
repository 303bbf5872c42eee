"""Agent rows' known failures recomputed from the expectation files, as stream rows' are.

``stream-harness merge`` recomputes a stream row's outcome from the expectation files as
they are where the merge runs (:func:`stream_harness.reporting.report.reclassify`): the
shards' results are their verdicts, the triage is the merge's. Agent rows kept each
shard's triage instead, so an entry added (or removed) between the shards' runs and the
merge, or a shard run with another ``--expect``, left the merged report disagreeing with
the files. The same rule the runner applies (:func:`run_agent_checks`) is applied here to
what each row observed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from stream_harness.agents.conformance.explore import explored_reason
from stream_harness.agents.conformance.runner import AgentExpectation
from stream_harness.reporting.report import AgentRow, Outcome, Report

__all__ = ["reclassify_agents"]

Observed = Literal["passed", "failed", "timeout", "crashed", "skipped", "errored"]


def reclassify_agents(report: Report, expectations: Sequence[AgentExpectation]) -> Report:
    """The report with every agent row's outcome and issue following ``expectations``."""
    rows: list[AgentRow] = []
    for row in report.agent_results:
        observed = _observed(row)
        if observed == "errored":
            rows.append(row)
            continue
        reason = _known(row, expectations)
        outcome: Outcome
        if reason is None:
            if observed == "skipped":
                continue  # a check that did not apply is no row, unless an entry names it
            outcome = observed
        else:
            outcome = "known_failure" if observed in ("failed", "timeout", "crashed") else "fixed"
        rows.append(row.model_copy(update={"outcome": outcome, "issue": reason or None}))
    return report.model_copy(update={"agent_results": tuple(rows)})


def _known(row: AgentRow, expectations: Sequence[AgentExpectation]) -> str | None:
    """The entry's reason when one covers the row (None: none does). An explored row is
    covered as the exploration judged it (:func:`explored_reason`, by its shrunk
    schedule's fault words); a row of a scenario as written by its name."""
    if row.explored is not None:
        if row.outcome not in ("failed", "known_failure"):
            return None
        return (
            explored_reason(
                expectations, row.agent, row.scenario, row.protocol, row.check, row.faults
            )
            or None
        )
    known = next(
        (e for e in expectations if e.matches(row.agent, row.scenario, row.protocol, row.check)),
        None,
    )
    return None if known is None else known.reason


def _observed(row: AgentRow) -> Observed:
    """What the run showed, before any expectation: a known failure failed; a fixed row
    passed, or (with a message saying why) was not judged; the runner writes a passed
    check with no message."""
    if row.outcome in ("failed", "known_failure"):
        return "failed"
    if row.outcome == "fixed":
        return "skipped" if row.message else "passed"
    if row.outcome in ("errored", "timeout", "crashed"):
        return row.outcome
    return "passed"
