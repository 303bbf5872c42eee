"""The AI SDK agent rows' own reading of a failure (adapters-js/agents/ai-sdk-common.mjs).

The SDK hands a step's error to ``onError`` and to an ``error`` part that ``textStream``
filters out, and ``text`` still resolves to the last recorded step's text; the rows raise
the error from ``onError`` instead. A 400 on the second request (after a tool step whose
text is ``Let me look that up.``) must therefore come back as the SDK's APICallError, not
as that text. Each row wires ``onError`` its own way (a ``streamText`` option, a
``ToolLoopAgent`` setting), so both are run. Skipped where Node or the npm install is not.

Once its retries are spent the SDK raises a RetryError, which has no ``cause``: the failure
that ended the run is its ``lastError``, whose ``cause`` is undici's ``terminated`` when the
connection dropped. The outcome the rows report follows that chain
(adapters-js/lib/agent-protocol.mjs ``causesOf``), so that A12 sees the transport fault; an
error with nothing to say about the fault still fails A12.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest

from stream_harness.adapters.processes.js import js_root, missing, node_binary
from stream_harness.agents.conformance.checks import judge
from stream_harness.agents.conformance.runner import observe
from stream_harness.agents.js import JSAgentMissingError, js_agent
from stream_harness.agents.protocol import AgentOutcome
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


# The schedule the explorer found and shrank (conformance_report/explored/
# js-ai-sdk*-A12-*.yaml): two retryable 500s, then a response whose connection closes before
# its first byte. The 500s carry a 10 ms retry-after-ms, which the SDK honours, so the test
# does not wait out the SDK's 2 s + 4 s backoff; the chain it raises is the same.
RETRIES_THEN_DROP = """
kind: agent
prompt: What is the weather in Paris?
responses:
  - script: {text: "Hi."}
    fault: {status: 500, headers: {retry-after-ms: "10"}}
  - script: {text: "Hi."}
    fault: {status: 500, headers: {retry-after-ms: "10"}}
  - script: {text: "Hi."}
    fault: {place: {byte: 0}, ending: fin}
  - script: {text: "It is 18 C and cloudy in Paris."}
"""


@pytest.mark.parametrize("name", ["js-ai-sdk-agent", "js-ai-sdk-tool-loop-agent"])
def test_a_dropped_connection_after_spent_retries_is_named_and_passes_a12(
    name: str, tmp_path: Path
) -> None:
    try:
        agent: StdioAgent = js_agent(name)
    except JSAgentMissingError as exc:
        pytest.skip(str(exc))
    path = tmp_path / "retries_then_drop.yaml"
    path.write_text(RETRIES_THEN_DROP)
    try:
        run = observe(agent, load_agent_scenario(path), "openai-responses")
    finally:
        agent.close()
    assert run.crash is None and run.outcome is not None
    assert len(run.requests) == 3  # two retries, then the dropped response ended the run
    assert run.outcome.error_type == "RetryError"
    message = run.outcome.error_message or ""
    assert "caused by APICallError: Failed to process successful response" in message
    assert "caused by TypeError: terminated" in message  # undici's word for the drop
    a12 = next(v for v in judge(run) if v.check == "A12")
    assert a12.status == "passed", a12.message
    # The same run, had the last attempt failed for a reason unrelated to the drop.
    unrelated = AgentOutcome(
        output=None,
        error_type="RetryError",
        error_message="Failed after 3 attempts. Last error: Invalid tool call (caused by "
        "InvalidToolInputError: Invalid input for tool get_weather)",
    )
    a12 = next(v for v in judge(dataclasses.replace(run, outcome=unrelated)) if v.check == "A12")
    assert a12.status == "failed"
    assert "does not say what response 2 served: a transport fault" in a12.message


# Errors built with the SDK's own classes, as it builds them (ai's RetryError, the
# provider package's APICallError), and the chain `causesOf` reports for each.
CAUSES_SCRIPT = """
import { causesOf } from './lib/agent-protocol.mjs';
const { RetryError, APICallError } = await import('ai');
const call = (message, extra) => new APICallError({ message, url: 'u', requestBodyValues: {}, ...extra });
class SocketError extends Error {}  // undici's, as the dropped connection raises it
const socket = new SocketError('other side closed');
const dropped = call('Failed to process successful response', {
  statusCode: 200, cause: new TypeError('terminated', { cause: socket }) });
const http500 = call('Internal Server Error', { statusCode: 500 });
const unrelated = call('Invalid JSON response', { statusCode: 200 });
const loop = new Error('loop'); loop.cause = loop;
const out = {
  retried_then_dropped: causesOf(new RetryError({ message: 'm', reason: 'maxRetriesExceeded',
    errors: [http500, http500, dropped] })),
  retried_then_unrelated: causesOf(new RetryError({ message: 'm', reason: 'maxRetriesExceeded',
    errors: [dropped, unrelated] })),
  aggregate: causesOf(new AggregateError([http500, dropped], 'all failed')),
  cycle: causesOf(loop),
  issues: causesOf(Object.assign(new Error('invalid'), { errors: [{ message: 'stream ended' }] })),
  plain: causesOf(new Error('no cause')),
};
console.error(JSON.stringify(out));
"""


def test_the_cause_chain_follows_the_last_attempt_of_a_retry_error() -> None:
    if missing() is not None:
        pytest.skip(str(missing()))
    node = node_binary()
    assert node is not None
    done = subprocess.run(
        [node, "--input-type=module", "-e", CAUSES_SCRIPT],
        cwd=js_root(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    # protocol.mjs moves console output to stderr, keeping stdout for the protocol.
    out = json.loads(done.stderr.strip().splitlines()[-1])
    assert out["retried_then_dropped"] == (
        " (caused by APICallError: Failed to process successful response; caused by "
        "TypeError: terminated; caused by SocketError: other side closed)"
    )
    # Only the last attempt: the drop of an earlier one says nothing about how the run ended.
    assert out["retried_then_unrelated"] == " (caused by APICallError: Invalid JSON response)"
    assert out["aggregate"].startswith(" (caused by APICallError: Failed to process")
    assert out["cycle"] == ""
    assert out["issues"] == ""  # a list of plain objects (zod's issues) is no attempt
    assert out["plain"] == ""
