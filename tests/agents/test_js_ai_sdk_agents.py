"""The AI SDK agent rows' own reading of a failure (adapters-js/agents/ai-sdk-common.mjs).

The SDK hands a step's error to ``onError`` and to an ``error`` part that ``textStream``
filters out, and ``text`` still resolves to the last recorded step's text; the rows raise
the error from ``onError`` instead. A 400 on the second request (after a tool step whose
text is ``Let me look that up.``) must therefore come back as the SDK's APICallError, not
as that text. Each row wires ``onError`` its own way (a ``streamText`` option, a
``ToolLoopAgent`` setting), so both are run. Skipped where Node or the npm install is not.
"""

from __future__ import annotations

import pytest

from stream_harness.agents.conformance.runner import observe
from stream_harness.agents.js import JSAgentMissingError, js_agent
from stream_harness.agents.scenario.model import load_agent_scenario
from stream_harness.agents.stdio import StdioAgent
from stream_harness.contract.facts import bundled_cassettes

HTTP_400 = bundled_cassettes() / "agent-scenarios" / "http_400_not_retried.yaml"


@pytest.mark.parametrize("name", ["js-ai-sdk-agent", "js-ai-sdk-tool-loop-agent"])
def test_a_failed_later_step_is_the_runs_error_not_the_earlier_steps_text(name: str) -> None:
    try:
        agent: StdioAgent = js_agent(name)
    except JSAgentMissingError as exc:
        pytest.skip(str(exc))
    try:
        run = observe(agent, load_agent_scenario(HTTP_400), "openai-completions")
    finally:
        agent.close()
    assert run.crash is None and run.outcome is not None
    assert [e.tool for e in run.ledger] == ["get_weather"]  # the first step did run
    assert run.outcome.output is None
    assert run.outcome.error_type == "APICallError"
    assert "HTTP 400" in (run.outcome.error_message or "")
