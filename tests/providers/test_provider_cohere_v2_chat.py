"""The cohere-v2-chat reference normalizer on hand-written SSE bodies.

What the bundled cassettes (and the registry-wide suites over them) do not pin: the
decisions of specs/protocols/cohere-v2-chat.md where the protocol is silent or a server
strays from the documented shape. Expected values are read off the events written in
each test, never produced by running the normalizer.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from cassette_checks import events_of, terminal
from stream_harness.conformance.strategies import split_at
from stream_harness.contract.events import (
    DoneEvent,
    ErrorEvent,
    Event,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from stream_harness.contract.rules import check_contract
from stream_harness.providers import get_normalizer

PROTOCOL = "cohere-v2-chat"


def ev(payload: dict[str, Any]) -> str:
    return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n"


START = ev({"id": "r1", "type": "message-start", "delta": {"message": {"role": "assistant"}}})


def content(index: int | None, kind: str, text: str, *, start: bool = False) -> str:
    payload: dict[str, Any] = {
        "type": "content-start" if start else "content-delta",
        "delta": {"message": {"content": {kind: text, **({"type": kind} if start else {})}}},
    }
    if index is not None:
        payload["index"] = index
    return ev(payload)


def call_start(index: int | None, call: Any) -> str:
    payload: dict[str, Any] = {
        "type": "tool-call-start",
        "delta": {"message": {"tool_calls": call}},
    }
    if index is not None:
        payload["index"] = index
    return ev(payload)


def call_delta(index: int | None, fragment: str) -> str:
    payload: dict[str, Any] = {
        "type": "tool-call-delta",
        "delta": {"message": {"tool_calls": {"function": {"arguments": fragment}}}},
    }
    if index is not None:
        payload["index"] = index
    return ev(payload)


def end(reason: str | None = "COMPLETE", **delta: Any) -> str:
    body: dict[str, Any] = dict(delta)
    if reason is not None:
        body["finish_reason"] = reason
    return ev({"type": "message-end", "delta": body})


def call(call_id: str | None, name: str, arguments: Any = "") -> dict[str, Any]:
    found: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        found["id"] = call_id
    return found


def run(body: str) -> list[Event]:
    raw = body.encode()
    whole = events_of(PROTOCOL, [raw])
    # Every body here also gives the same events one byte at a time and cut anywhere.
    assert events_of(PROTOCOL, [raw[i : i + 1] for i in range(len(raw))]) == whole
    assert events_of(PROTOCOL, split_at(raw, [len(raw) // 3, len(raw) // 2])) == whole
    assert check_contract(whole) == []
    return whole


# -- the tool plan and content blocks --------------------------------------------------------


def test_the_tool_plan_is_a_thinking_block_before_the_calls() -> None:
    body = (
        START
        + ev({"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will look."}}})
        + call_start(0, call("get_weather_a1", "get_weather"))
        + call_delta(0, '{"location": "Oslo"}')
        + ev({"type": "tool-call-end", "index": 0})
        + end("TOOL_CALL")
    )
    last = terminal(run(body))
    assert last.message.content == [
        ThinkingBlock(content="I will look."),
        ToolCall(id="get_weather_a1", name="get_weather", arguments={"location": "Oslo"}),
    ]
    assert last.message.stop_reason == "tool_use"


def test_thinking_and_text_blocks_keep_their_own_indexes() -> None:
    body = (
        START
        + content(0, "thinking", "", start=True)
        + content(0, "thinking", "Two sisters.")
        + ev({"type": "content-end", "index": 0})
        + content(1, "text", "", start=True)
        + content(1, "text", "Three.")
        + ev({"type": "content-end", "index": 1})
        + end()
    )
    assert terminal(run(body)).message.content == [
        ThinkingBlock(content="Two sisters."),
        TextBlock(content="Three."),
    ]


def test_deltas_without_index_or_start_say_their_kind_by_their_field() -> None:
    # Older servers and test servers send no content-start and no index.
    body = START + content(None, "thinking", "hmm") + content(None, "text", "Hi") + end()
    # Thinking then text under the same (absent) index: two blocks in arrival order.
    assert terminal(run(body)).message.content == [
        ThinkingBlock(content="hmm"),
        TextBlock(content="Hi"),
    ]


def test_calls_without_index_are_numbered_in_start_order() -> None:
    body = (
        START
        + call_start(None, call("c1", "a"))
        + call_delta(None, '{"x": 1}')
        + ev({"type": "tool-call-end"})
        + call_start(None, call("c2", "b"))
        + call_delta(None, '{"y": 2}')
        + ev({"type": "tool-call-end"})
        + end("TOOL_CALL")
    )
    assert terminal(run(body)).message.content == [
        ToolCall(id="c1", name="a", arguments={"x": 1}),
        ToolCall(id="c2", name="b", arguments={"y": 2}),
    ]


def test_a_call_given_as_a_list_or_with_object_arguments_is_read() -> None:
    # The documented shape is one object with string arguments; proxies send a list of
    # one, or the arguments as an object.
    body = (
        START
        + call_start(0, [call("c1", "a", {"x": 1})])
        + ev({"type": "tool-call-end", "index": 0})
        + end("TOOL_CALL")
    )
    norm = get_normalizer(PROTOCOL)
    events = norm.feed(body.encode()) + norm.close()
    assert terminal(events).message.content == [ToolCall(id="c1", name="a", arguments={"x": 1})]
    assert any("list" in w for w in norm.warnings)


def test_a_missing_or_repeated_call_id_gets_a_synthetic_one() -> None:
    body = (
        START
        + call_start(0, call(None, "a"))
        + call_start(1, call("dup", "b"))
        + call_start(2, call("dup", "b"))
        + end("TOOL_CALL")
    )
    ids = [b.id for b in terminal(run(body)).message.content if isinstance(b, ToolCall)]
    assert ids == ["a_1", "dup", "b_2"]


# -- citations ----------------------------------------------------------------------------


def _cite(text: str, **extra: Any) -> str:
    citation = {"start": 0, "end": len(text), "text": text, "sources": [], **extra}
    return ev({"type": "citation-start", "index": 0, "delta": {"message": {"citations": citation}}})


def test_citations_are_kept_after_the_block_they_cite() -> None:
    body = (
        START
        + content(0, "text", "", start=True)
        + content(0, "text", "Paris")
        + _cite("Paris", type="TEXT_CONTENT")
        + ev({"type": "citation-end", "index": 0})
        + ev({"type": "content-end", "index": 0})
        + end()
    )
    blocks = terminal(run(body)).message.provider_blocks
    assert [(b.provider_type, b.position, b.data["content_index"]) for b in blocks] == [
        ("citations", 1, 0)
    ]
    assert blocks[0].data["citations"][0]["text"] == "Paris"


def test_a_citation_after_its_block_ended_is_kept_on_its_own() -> None:
    body = (
        START
        + content(0, "text", "Paris")
        + ev({"type": "content-end", "index": 0})
        + _cite("Paris", content_index=0)
        + end()
    )
    blocks = terminal(run(body)).message.provider_blocks
    assert [(b.provider_type, b.data["content_index"]) for b in blocks] == [("citations", 0)]


def test_a_plan_citation_goes_with_the_plan() -> None:
    body = (
        START
        + ev({"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "Look it up."}}})
        + _cite("Look", type="PLAN")
        + call_start(0, call("c1", "a"))
        + end("TOOL_CALL")
    )
    blocks = terminal(run(body)).message.provider_blocks
    assert [(b.provider_type, b.position, b.data["content_index"]) for b in blocks] == [
        ("citations", 1, 0)
    ]


# -- usage ----------------------------------------------------------------------------------


def test_usage_takes_tokens_and_splits_the_cached_part() -> None:
    usage = {
        "billed_units": {"input_tokens": 50, "output_tokens": 26},
        "tokens": {"input_tokens": 793.0, "output_tokens": 61.0},
        "cached_tokens": 176,
    }
    last = terminal(run(START + content(0, "text", "ok") + end(usage=usage)))
    assert (last.message.usage.input, last.message.usage.cache_read) == (617, 176)
    assert (last.message.usage.output, last.message.usage.total) == (61, 854)
    assert [b.data for b in last.message.provider_blocks] == [
        {"billed_units": {"input_tokens": 50, "output_tokens": 26}}
    ]


def test_billed_units_stand_in_when_tokens_are_absent() -> None:
    usage = {"billed_units": {"input_tokens": 9, "output_tokens": 3}}
    last = terminal(run(START + content(0, "text", "ok") + end(usage=usage)))
    assert (last.message.usage.input, last.message.usage.output) == (9, 3)


# -- the end --------------------------------------------------------------------------------


def test_the_error_string_of_message_end_is_the_message() -> None:
    last = terminal(run(START + content(0, "text", "Half") + end("ERROR", error="boom")))
    assert isinstance(last, ErrorEvent)
    assert last.error_message == "boom"
    assert last.message.content == [TextBlock(content="Half")]
    assert last.message.provider_stop_reason == "ERROR"
    assert last.error is not None and last.error.origin == "provider"


def test_an_error_without_a_finish_reason_is_still_an_error() -> None:
    last = terminal(run(START + end(None, error="upstream failed")))
    assert isinstance(last, ErrorEvent)
    assert last.error_message == "upstream failed"


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        ("", "stream ended without message-end"),
        ("data: [DONE]\n\n", "stream ended without message-end ([DONE] came first)"),
    ],
)
def test_a_stream_without_message_end_is_an_error_keeping_the_text(tail: str, message: str) -> None:
    last = terminal(run(START + content(0, "text", "Half a") + tail))
    assert isinstance(last, ErrorEvent)
    assert last.error_message == message
    assert last.message.content == [TextBlock(content="Half a")]
    # A cut stream is a transport fault: retryable (specs/retry.yaml, stream_cut).
    assert last.error is not None and last.error.kind == "transient"


def test_done_after_message_end_is_not_needed_and_not_an_error() -> None:
    with_done = run(START + content(0, "text", "ok") + end() + "data: [DONE]\n\n")
    without = run(START + content(0, "text", "ok") + end())
    assert with_done == without
    assert isinstance(terminal(without), DoneEvent)


# -- malformed input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        (
            'event: content-delta\ndata: {"type":"content-delta","index":0,"delta":{"message":{"content":{"text":7}}}}\n\n',
            "'text' is not a string",
        ),
        (
            'event: tool-call-delta\ndata: {"type":"tool-call-delta","index":5,"delta":{}}\n\n',
            "not started",
        ),
        (
            'event: message-end\ndata: {"type":"message-end","delta":{"finish_reason":3}}\n\n',
            "finish_reason is not a string",
        ),
        ("event: content-delta\ndata: {not json\n\n", "malformed JSON"),
        ('data: {"message":"gateway exploded"}\n\n', "gateway exploded"),
    ],
)
def test_bad_input_ends_in_an_error_keeping_what_came(bad: str, fragment: str) -> None:
    last = terminal(run(START + content(0, "text", "kept") + bad + end()))
    assert isinstance(last, ErrorEvent)
    assert fragment in last.error_message
    assert last.message.content == [TextBlock(content="kept")]
