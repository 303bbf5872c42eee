"""The js-langgraph row's one piece of logic of its own (adapters-js/agents/langgraph.mjs).

At its defaults LangChain.js retries a failing model call for 63 to 126 s, longer than a
run's limit; the row aborts the run through LangGraph's ``signal`` just before the harness
stops waiting, so that such a run ends as the framework's abort, an outcome the checks can
judge, instead of a hung adapter. Needs Node and the adapters-js install; skips without.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_harness.adapters.processes.js import missing
from stream_harness.agents.conformance.runner import observe
from stream_harness.agents.js import js_agent
from stream_harness.agents.protocol import AgentLimits
from stream_harness.agents.scenario.model import load_agent_scenario

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(missing() is not None, reason=f"JS agents unavailable: {missing()}")


def test_a_run_still_retrying_at_its_limit_ends_as_the_frameworks_abort_not_a_hang() -> None:
    # 529 on every request: the AsyncCaller would go on retrying for over a minute.
    scenario = load_agent_scenario(
        ROOT / "cassettes" / "agent-scenarios" / "retries_exhausted.yaml"
    )
    agent = js_agent("js-langgraph")
    try:
        run = observe(agent, scenario, "anthropic-messages", AgentLimits(timeout_s=4.0))
    finally:
        agent.close()
    assert run.crash is None, run.crash
    assert run.outcome is not None and run.outcome.raised
    assert "abort" in (run.outcome.error_message or "").lower(), run.outcome
    # Still inside the retries (the seventh attempt would come after 63 s at the earliest).
    assert 1 <= len(run.requests) < 7
