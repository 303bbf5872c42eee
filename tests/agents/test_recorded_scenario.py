"""Agent scenarios served from recorded multi-interaction cassettes of the shared corpus.

The corpus is real traffic (pydantic-ai's recording of a Claude run that thinks, calls a
tool, then answers); it is read where it lies and skipped cleanly when absent. The
expected call comes from the recording itself, read by our normalizer, not from the code
that serves it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from stream_harness.agents.conformance.checks import judge
from stream_harness.agents.conformance.runner import observe
from stream_harness.agents.reference import ReferenceAgent
from stream_harness.agents.scenario.model import ScenarioError, load_agent_scenario
from stream_harness.contract.events import DoneEvent, ToolCall
from stream_harness.providers.registry import detect_protocol, get_normalizer
from stream_harness.recordings.cassette import load_cassette

CORPUS = Path("/work/shared/corpus/anthropic_messages")
RUN = CORPUS / "pydantic-ai__test_a_real_anthropic_run_streams_thinking_and_a_tool_call.yaml"


@pytest.fixture
def recorded_call() -> ToolCall:
    if not RUN.exists():
        pytest.skip("the shared corpus is not on this machine")
    first = load_cassette(RUN).interactions[0]
    normalizer = get_normalizer(detect_protocol(first))
    events = normalizer.feed(first.response.body) + normalizer.close()
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.reason == "tool_use"
    return next(b for b in done.message.content if isinstance(b, ToolCall))


def scenario(tmp_path: Path, call: ToolCall, first: dict[str, object] | None = None) -> Path:
    data = {
        "kind": "agent",
        "prompt": "recorded",
        "tools": {call.name: {"returns": "recorded result"}},
        "responses": [
            {"cassette": str(RUN), "interaction": 0, **(first or {})},
            *([{"cassette": str(RUN), "interaction": 0}] if first else []),
            {"cassette": str(RUN), "interaction": 1},
        ],
    }
    path = tmp_path / "recorded.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_reference_runs_the_recorded_call_once_and_sends_its_thinking_back(
    tmp_path: Path, recorded_call: ToolCall
) -> None:
    loaded = load_agent_scenario(scenario(tmp_path, recorded_call))
    assert loaded.protocols == ("anthropic-messages",)
    served = loaded.served("anthropic-messages")
    assert served[0].complete and served[0].thinking_signature
    run = observe(ReferenceAgent(), loaded, "anthropic-messages")
    assert [(e.tool, json.dumps(e.arguments, sort_keys=True)) for e in run.ledger] == [
        (recorded_call.name, json.dumps(recorded_call.arguments, sort_keys=True))
    ]
    verdicts = {v.check: v.status for v in judge(run)}
    assert verdicts["A4"] == "passed" and "failed" not in verdicts.values()


def test_a_recorded_response_cut_short_is_not_executed(
    tmp_path: Path, recorded_call: ToolCall
) -> None:
    body = load_cassette(RUN).interactions[0].response.body
    where = body.index(b"input_json_delta") + 40  # inside the call's arguments
    loaded = load_agent_scenario(scenario(tmp_path, recorded_call, {"fault": {"cut_at": where}}))
    served = loaded.served("anthropic-messages")
    assert not served[0].complete and not any(c.delivered for c in served[0].calls)
    run = observe(ReferenceAgent(), loaded, "anthropic-messages")
    assert len(run.ledger) == 1  # from the resent, complete response only
    assert all(v.status != "failed" for v in judge(run))


def test_a_recorded_response_takes_no_scripted_fault(
    tmp_path: Path, recorded_call: ToolCall
) -> None:
    path = scenario(tmp_path, recorded_call, {"fault": {"no_terminal_event": True}})
    with pytest.raises(ScenarioError, match="only the faults cut_at and pace"):
        load_agent_scenario(path)
