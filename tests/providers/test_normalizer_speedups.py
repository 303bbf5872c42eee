"""The speed-ups behind benchmarks/bench_normalizers.py change how fast, never what comes out.

Each shortcut is pinned against the slow path it replaces (json.loads itself, the SSE
line rule, a fresh parse of the arguments' text) or against values read off the wire
text by hand. The golden tests (tests/providers/test_provider_*, tests/providers/test_corpus_*) cover the
normalizers end to end.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from stream_harness.contract.events import DoneEvent, TextBlock, ToolCall, ToolCallDeltaEvent, Usage
from stream_harness.contract.partial_json import IncrementalJSON, parse_partial
from stream_harness.providers.accumulator import Accumulator
from stream_harness.providers.anthropic_messages import AnthropicMessagesNormalizer
from stream_harness.providers.base import parse_json
from stream_harness.providers.google_generative_ai import GoogleGenerativeAINormalizer
from stream_harness.providers.openai_completions import OpenAICompletionsNormalizer
from stream_harness.providers.openai_responses import OpenAIResponsesNormalizer
from stream_harness.wire import SSEDecoder, SSEEvent

# -- parse_json is json.loads ------------------------------------------------------------

_JSON_TEXTS = [
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"été"}}',
    "[1, 2.5, -0.0, 1e400, NaN, -Infinity, null, true]",
    '"\\ud83d"',  # a lone surrogate escape: json.loads keeps it
    "12345678901234567890123456789",
    '  {"padded": 1}  ',  # leading and trailing whitespace: the json.loads path
    '{"a": 1}    ',  # Anthropic's trailing spaces
    '{"a": 1, "a": 2}',  # duplicate keys: the last wins
]

_BAD_JSON_TEXTS = [
    "",
    "   ",
    "[DONE]",
    '{"a": 1}{"b": 2}',  # extra data
    '{"a": 1',  # truncated
    "\ufeff{}",  # a BOM in a str
    '{"a": "\x01"}',  # a raw control character
    "nul",
]


@pytest.mark.parametrize("text", _JSON_TEXTS)
def test_parse_json_gives_the_value_json_loads_gives(text: str) -> None:
    # repr compares NaN (nan != nan) and the types of 1 / 1.0 / True too.
    assert repr(parse_json(text)) == repr(json.loads(text))


@pytest.mark.parametrize("text", _BAD_JSON_TEXTS)
def test_parse_json_raises_what_json_loads_raises(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as got:
        parse_json(text)
    assert str(got.value) == str(expected.value)


# -- SSE: line ends and the events it builds ------------------------------------------------


@pytest.mark.parametrize(
    "char", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
)
@pytest.mark.parametrize("end", ["\r\n", "\r", "\n"])
def test_sse_lines_end_only_at_cr_and_lf(char: str, end: str) -> None:
    """str.splitlines also breaks at these characters; SSE does not (CRLF bodies take
    the splitlines path when none of them is present)."""
    body = f"event: x{end}data: a{char}b{end}data: c{end}{end}".encode()
    decoder = SSEDecoder()
    assert decoder.feed(body) + decoder.close() == [SSEEvent(f"a{char}b\nc", "x")]


def test_sse_mixed_line_ends_across_chunks() -> None:
    # CRLF split between chunks, a lone CR, a lone LF, all in one event and between events.
    chunks = [b"data: 1\r", b"\ndata: 2\rdata: 3\n\r", b"\n", b"data: 4\r\n\r\n"]
    decoder = SSEDecoder()
    out = [e for c in chunks for e in decoder.feed(c)] + decoder.close()
    assert out == [SSEEvent("1\n2\n3"), SSEEvent("4")]


def test_sse_events_are_ordinary_frozen_dataclasses() -> None:
    decoder = SSEDecoder()
    (event,) = decoder.feed(b"id: 7\nretry: 10\nevent: e\ndata: d\n\n")
    assert event == SSEEvent("d", "e", "7", 10)
    assert hash(event) == hash(SSEEvent("d", "e", "7", 10))
    assert dataclasses.astuple(event) == ("d", "e", "7", 10)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.data = "changed"  # type: ignore[misc]


# -- whole tool calls: the parsed arguments are not parsed again ------------------------------


def _whole_call_the_slow_way(arguments: dict[str, Any]) -> list[Any]:
    """What Accumulator.whole_tool_call did before: start, one delta of the JSON text
    (read by the incremental parser), end."""
    acc = Accumulator("test")
    acc.tool_call("k", id="call_1", name="write")
    acc.signature("k", "sig")
    acc.tool_call("k", delta=json.dumps(arguments, ensure_ascii=False, separators=(",", ":")))
    acc.end("k")
    acc.finish("tool_use")
    return acc.drain()


_ARGUMENTS: list[dict[str, Any]] = [
    {"path": "a.py", "content": 'x = "é → 😀"\n\tprint(x)\\n'},
    {"n": [1, 2.5, -0.0, None, True, {"deep": [[[]]]}], "": "", "u": "\ud83d"},
    {"nested": {"a": {"b": {"c": [1, {"d": "e"}]}}}},
]


@pytest.mark.parametrize("arguments", _ARGUMENTS)
def test_whole_tool_call_events_equal_the_slow_path(arguments: dict[str, Any]) -> None:
    acc = Accumulator("test")
    acc.whole_tool_call("k", id="call_1", name="write", arguments=arguments, signature="sig")
    acc.finish("tool_use")
    events = acc.drain()
    assert events == _whole_call_the_slow_way(arguments)
    delta = next(e for e in events if isinstance(e, ToolCallDeltaEvent))
    assert delta.arguments == arguments
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.content == [
        ToolCall(id="call_1", name="write", arguments=arguments, signature="sig")
    ]


def test_whole_tool_call_continuing_an_open_call_reads_all_of_its_text() -> None:
    # The shortcut is only for a fresh call: here a fragment came first, and the final
    # arguments are the cascade's value for the whole text, not the object.
    acc = Accumulator("test")
    acc.tool_call("k", id="c", name="f", delta='{"a": [1')
    acc.whole_tool_call("k", id="c", name="f", arguments={"b": 2})
    acc.finish("tool_use")
    done = acc.drain()[-1]
    assert isinstance(done, DoneEvent)
    text = '{"a": [1{"b":2}'
    assert parse_partial(text) == {}  # not JSON, and no partial parser makes sense of it
    assert done.message.content[0] == ToolCall(id="c", name="f", arguments={})


def test_feed_whole_then_more_text_is_feed_of_all_of_it() -> None:
    whole = IncrementalJSON()
    assert whole.feed_whole('{"a": [1, 2]}', {"a": [1, 2]}) == {"a": [1, 2]}
    assert whole.close() == {"a": [1, 2]}
    plain = IncrementalJSON()
    plain.feed('{"a": [1, 2]}')
    for fragment in ['{"b": "x', 'y"}']:
        assert whole.feed(fragment) == plain.feed(fragment)
    assert whole.text == plain.text == '{"a": [1, 2]}{"b": "xy"}'
    assert whole.close() == plain.close() == parse_partial(whole.text) == {"a": [1, 2], "b": "xy"}


# -- normalizer fast paths keep the general rules ------------------------------------------------


def _run(normalizer: Any, body: str) -> list[Any]:
    return normalizer.feed(body.encode()) + normalizer.close()


def test_anthropic_boolean_index_is_still_malformed() -> None:
    # type(True) is not int: the fast path hands it to the general check, which rejects it.
    start = {"type": "message_start", "message": {"id": "m", "model": "c", "usage": {}}}
    block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}
    delta = {
        "type": "content_block_delta",
        "index": True,
        "delta": {"type": "text_delta", "text": "x"},
    }
    body = "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in (start, block, delta))
    terminal = _run(AnthropicMessagesNormalizer(), body)[-1]
    assert terminal.type == "error"
    assert (
        terminal.error_message
        == "malformed event #3: content_block_delta without an integer index: True"
    )


def test_anthropic_text_after_the_block_opened_keeps_its_content_index() -> None:
    start = {"type": "message_start", "message": {"id": "m", "model": "c", "usage": {}}}
    events = [start]
    for index in (0, 1):
        events.append(
            {"type": "content_block_start", "index": index, "content_block": {"type": "text"}}
        )
        for text in ("a", "b"):
            delta = {"type": "text_delta", "text": f"{text}{index}"}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    events += [
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_stop"},
    ]
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    out = _run(AnthropicMessagesNormalizer(), body)
    deltas = [(e.content_index, e.delta) for e in out if e.type == "text_delta"]
    assert deltas == [(0, "a0"), (0, "b0"), (1, "a1"), (1, "b1")]
    assert out[-1].message.content == [TextBlock(content="a0b0"), TextBlock(content="a1b1")]


def test_completions_false_index_is_choice_zero_and_text_after_thinking_closes_it() -> None:
    chunks = [
        {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"reasoning_content": "hm"}}]},
        {"id": "c1", "model": "m", "choices": [{"index": False, "delta": {"content": "Hi"}}]},
        {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": "!"}}]},
        {"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    out = _run(OpenAICompletionsNormalizer(), body)
    assert [e.type for e in out] == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert [b.content for b in out[-1].message.content] == ["hm", "Hi!"]


def test_responses_text_part_reconciles_with_its_final_copy_after_many_deltas() -> None:
    item = {"id": "msg_1", "type": "message", "content": [], "role": "assistant"}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "r", "model": "g"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
    ]
    pieces = [f"w{i} " for i in range(300)]
    events += [
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": piece,
        }
        for piece in pieces
    ]
    # The final copy extends what streamed by one word: exactly that suffix is added.
    final = "".join(pieces) + "end"
    events += [
        {
            "type": "response.output_text.done",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "text": final,
        },
        {"type": "response.completed", "response": {"id": "r", "status": "completed"}},
    ]
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    out = _run(OpenAIResponsesNormalizer(), body)
    deltas = [e.delta for e in out if e.type == "text_delta"]
    assert deltas == [*pieces, "end"]
    assert out[-1].message.content[0].content == final


def test_gemini_usage_repeated_or_partial_keeps_the_latest_counters() -> None:
    def chunk(text: str, usage: dict[str, int], finish: str | None = None) -> str:
        candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}}
        if finish:
            candidate["finishReason"] = finish
        obj = {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "g"}
        return f"data: {json.dumps(obj)}\r\n\r\n"

    full = {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12}
    body = (
        chunk("a", full)
        + chunk("b", full)  # the same report again
        + chunk("c", {"candidatesTokenCount": 5})  # only one counter: the others stay
        + chunk("d", {"candidatesTokenCount": 5, "thoughtsTokenCount": 3}, "STOP")
    )
    done = _run(GoogleGenerativeAINormalizer(), body)[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.content == [TextBlock(content="abcd")]
    # input 10; output 5 candidates + 3 thoughts; total as last sent (12).
    assert done.message.usage == Usage(input=10, output=8, cache_read=0, cache_write=0, total=12)
