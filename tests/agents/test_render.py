"""The rendered bytes are what each protocol's own normalizer reads as the script says.

The oracle is the project's normalizers (each checked against the recorded corpus), not
the renderer itself: a rendering that our normalizer reads differently is a wrong one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stream_harness.agents.scenario.model import load_agent_scenario
from stream_harness.agents.scenario.render import (
    PROTOCOLS,
    Fault,
    Script,
    ScriptedCall,
    render,
    served_from_bytes,
)
from stream_harness.contract.events import (
    DoneEvent,
    ErrorEvent,
    Event,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from stream_harness.contract.facts import bundled_cassettes
from stream_harness.errors import classify
from stream_harness.providers.registry import get_normalizer

CALL = ScriptedCall("call_1", "charge_card", {"amount_cents": 4200, "customer": "cus_ada"})
SCRIPT = Script(text="Charging now.", thinking="I should charge.", tool_calls=(CALL,))


def normalize(protocol: str, chunks: tuple[bytes, ...]) -> list[Event]:
    normalizer = get_normalizer(protocol)
    events: list[Event] = []
    for chunk in chunks:
        events += normalizer.feed(chunk)
    return events + normalizer.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_clean_response_is_the_script(protocol: str) -> None:
    served = render(protocol, SCRIPT, Fault())
    last = normalize(protocol, served.chunks)[-1]
    assert isinstance(last, DoneEvent)
    assert last.reason == "tool_use"
    calls = [b for b in last.message.content if isinstance(b, ToolCall)]
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        (CALL.id, CALL.name, dict(CALL.arguments))
    ]
    assert (
        "".join(b.content for b in last.message.content if isinstance(b, TextBlock)) == SCRIPT.text
    )
    assert served.complete and served.calls[0].delivered
    # The argument text as read back, strict JSON (A13 reads these, not the script).
    assert served.calls[0].strict and json.loads(served.calls[0].raw or "") == CALL.arguments
    thinking = [b for b in last.message.content if isinstance(b, ThinkingBlock)]
    if protocol == "anthropic-messages":
        assert thinking[0].signature == served.thinking_signature
    else:
        assert not thinking and served.thinking_signature is None


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    "fault",
    [
        Fault(cut_in_tool_args=True),
        Fault(no_terminal_event=True),
        Fault(error_event="overloaded"),
        Fault(cut_at=40),
    ],
    ids=lambda f: f.kind,
)
def test_a_faulted_stream_ends_in_error_for_the_normalizer(protocol: str, fault: Fault) -> None:
    served = render(protocol, SCRIPT, fault)
    assert not served.complete and served.retryable
    assert isinstance(normalize(protocol, served.chunks)[-1], ErrorEvent)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_length_stop_truncates_the_call(protocol: str) -> None:
    served = render(protocol, SCRIPT, Fault(length_stop_in_tool_call=True))
    last = normalize(protocol, served.chunks)[-1]
    assert isinstance(last, DoneEvent) and last.reason == "length"
    assert served.stop == "length" and not any(c.delivered for c in served.calls)
    if protocol == "google-generative-ai":
        assert served.calls == ()  # Gemini sends nothing of a call the limit cut


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    ("fault", "kind", "retryable"),
    [
        (Fault(http_status=429, headers={"retry-after": "2"}), "rate_limit", True),
        (Fault(http_status=400, overflow=True), "overflow", False),
        (Fault(http_status=500), None, True),
    ],
    ids=["429", "overflow", "500"],
)
def test_http_errors_classify_as_the_provider_s(
    protocol: str, fault: Fault, kind: str | None, retryable: bool
) -> None:
    served = render(protocol, SCRIPT, fault)
    info = classify(status=served.status, body=served.chunks[0], protocol=protocol)
    if kind is not None:
        assert info.kind == kind
    assert served.retryable is retryable
    assert served.overflow is fault.overflow
    assert served.retry_after == (2.0 if fault.headers else None)


def test_an_unknown_protocol_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot render"):
        render("cohere-v2-chat", SCRIPT, Fault())


BUNDLED = sorted((bundled_cassettes() / "agent-scenarios").glob("*.yaml"))


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_what_a_rendering_says_it_delivered_is_what_our_normalizer_reads(path: Path) -> None:
    """The checks trust each rendering's account of what it delivered (which calls, whether
    it completed); our normalizers, checked against the recorded corpus, are the oracle."""
    scenario = load_agent_scenario(path)
    for protocol in scenario.protocols:
        for k, served in enumerate(scenario.served(protocol)):
            body = b"".join(served.chunks)
            read = served_from_bytes(
                protocol, served.status, dict(served.headers), body, cut=served.cut
            )
            where = f"{protocol} response {k} ({served.fault})"
            assert read.complete == served.complete, where
            assert read.retryable == served.retryable, where
            assert read.overflow == served.overflow, where
            assert read.thinking_signature == served.thinking_signature, where
            # openai-completions ends no call before the finish reason: a call whose
            # arguments all went out before a cut is delivered for A1 (its arguments are
            # complete), though the normalizer only closes it at the cut.
            per_call_end = protocol != "openai-completions" or served.complete
            scripted = {c.id: c for c in served.calls}
            for call in read.calls:
                assert call.name == scripted[call.id].name, where
                if per_call_end:
                    assert call.delivered == scripted[call.id].delivered, where
                if call.delivered:
                    assert call.strict == scripted[call.id].strict, where
            seen = {c.id for c in read.calls}
            assert not any(c.delivered for c in served.calls if c.id not in seen), where
            if served.complete:
                assert read.text == served.text, where


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_each_response_of_a_scenario_has_its_own_ids(protocol: str) -> None:
    """Providers give each response its own id; frameworks key messages by it (LangGraph's
    add_messages replaces a message whose id it has seen), so one id for every response
    made the final answer overwrite the turn that asked for the tool."""
    scenario = load_agent_scenario(
        bundled_cassettes() / "agent-scenarios" / "weather_tool_call.yaml"
    )
    served = scenario.served(protocol)[:2]
    if protocol == "bedrock-converse-stream":
        # Its stream names no message: the request id header is the response's id.
        rids = [dict(s.headers)["x-amzn-requestid"] for s in served]
        assert len(set(rids)) == 2, rids
        return
    first, second = (b"".join(s.chunks) for s in served)
    ids = {b'"chatcmpl-sh', b'"resp_sh', b'"msg_sh', b'"responseId": "sh', b'"responseId":"sh'}
    marks = [m for m in ids if m in first]
    assert marks, f"{protocol}: no response id found in the rendering"
    for mark in marks:
        assert mark + b"0" in first and mark + b"1" in second, (protocol, mark)
