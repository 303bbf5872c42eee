"""The ollama reference normalizer on hand-written NDJSON bodies and bundled cassettes.

Unit tests cite the research they pin (provider-facts.md sections, conformance cases of
its section 7, ecosystem.md section 6 bugs). Expected values are read off the lines
written in each test, never produced by running the normalizer.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from cassette_checks import Translate, terminal, text_block_opening
from stream_harness.contract.events import (
    AssistantMessage,
    DoneEvent,
    ProviderBlock,
    StartEvent,
    TextBlock,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingBlock,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    Usage,
)

PROTOCOL = "ollama"
MODEL = "qwen3:8b"


# -- helpers --------------------------------------------------------------------------


def line(message: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"model": MODEL, "created_at": "2025-11-05T14:00:00.1Z"}
    if message is not None:
        obj["message"] = {"role": "assistant", "content": "", **message}
    obj["done"] = False
    obj.update(extra)
    return obj


def content(text: str) -> dict[str, Any]:
    return line({"content": text})


def thinking(text: str) -> dict[str, Any]:
    return line({"thinking": text})


def calls(*items: dict[str, Any]) -> dict[str, Any]:
    return line({"tool_calls": list(items)})


def call(name: str, arguments: Any, **extra: Any) -> dict[str, Any]:
    return {**extra, "function": {"name": name, "arguments": arguments}}


def done_line(
    reason: str | None = "stop", prompt: int | None = 10, generated: int | None = 5, **extra: Any
) -> dict[str, Any]:
    obj = line({}, done=True)
    if reason is not None:
        obj["done_reason"] = reason
    if prompt is not None:
        obj["prompt_eval_count"] = prompt
    if generated is not None:
        obj["eval_count"] = generated
    obj.update(extra)
    return obj


def ndjson(*lines: dict[str, Any] | str) -> bytes:
    return "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines).encode()


TRANSLATE = Translate(PROTOCOL)
run = TRANSLATE.run
done = TRANSLATE.done
failed = TRANSLATE.failed


# -- the basics -------------------------------------------------------------------------


def test_plain_text_exact_events() -> None:
    # provider-facts.md 1.3: message.content increments, then done: true with counts.
    data = ndjson(
        content("Hello"),
        content(" world"),
        done_line("stop", 12, 3, total_duration=5000, eval_duration=3000),
    )
    assert run(data) == [
        *text_block_opening("Hello", " world"),
        DoneEvent(
            reason="stop",
            message=AssistantMessage(
                content=[TextBlock(content="Hello world")],
                stop_reason="stop",
                provider_stop_reason="stop",
                usage=Usage(input=12, output=3, total=15),
                model=MODEL,
                provider_blocks=[
                    ProviderBlock(
                        provider_type="done",
                        position=1,
                        data={"total_duration": 5000, "eval_duration": 3000},
                    )
                ],
            ),
        ),
    ]


def test_thinking_then_content_exact_events() -> None:
    # The corpus qwen3.6 stream's shape: thinking lines carry content "" (which must
    # neither open a text block nor close the thinking one), then content lines.
    events = run(ndjson(thinking("Hmm"), thinking(", ok."), content("42"), done_line()))
    assert events[:8] == [
        StartEvent(),
        ThinkingStartEvent(content_index=0),
        ThinkingDeltaEvent(content_index=0, delta="Hmm"),
        ThinkingDeltaEvent(content_index=0, delta=", ok."),
        ThinkingEndEvent(content_index=0, content="Hmm, ok."),
        TextStartEvent(content_index=1),
        TextDeltaEvent(content_index=1, delta="42"),
        TextEndEvent(content_index=1, content="42"),
    ]
    assert terminal(events).message.content == [
        ThinkingBlock(content="Hmm, ok."),
        TextBlock(content="42"),
    ]


def test_thinking_and_content_on_one_line_thinking_first() -> None:
    t = done(ndjson(line({"thinking": "t", "content": "c"}), done_line()))
    assert t.message.content == [ThinkingBlock(content="t"), TextBlock(content="c")]


def test_kind_changes_open_new_blocks() -> None:
    t = done(ndjson(thinking("a"), content("b"), thinking("c"), content("d"), done_line()))
    assert t.message.content == [
        ThinkingBlock(content="a"),
        TextBlock(content="b"),
        ThinkingBlock(content="c"),
        TextBlock(content="d"),
    ]


def test_generate_endpoint_lines_are_read_too() -> None:
    # /api/generate puts `response` and `thinking` at the top level (same NDJSON framing).
    data = ndjson(
        {"model": MODEL, "response": "", "thinking": "plan", "done": False},
        {"model": MODEL, "response": "Hi", "done": False},
        {"model": MODEL, "response": "", "done": True, "done_reason": "stop", "context": [1, 2]},
    )
    t = done(data)
    assert t.message.content == [ThinkingBlock(content="plan"), TextBlock(content="Hi")]
    assert t.message.provider_blocks == [
        ProviderBlock(provider_type="done", position=2, data={"context": [1, 2]})
    ]


def test_crlf_lines_and_a_missing_final_newline() -> None:
    data = (json.dumps(content("a")) + "\r\n" + json.dumps(done_line())).encode()
    assert done(data).message.content == [TextBlock(content="a")]


# -- tool calls -----------------------------------------------------------------------------


def test_whole_tool_call_without_id_gets_a_synthetic_one() -> None:
    # provider-facts.md 1.3: arguments arrive as an object, no id; the id is f"{name}_{n}".
    events = run(ndjson(calls(call("get_weather", {"city": "Toronto"})), done_line("stop")))
    expected = ToolCall(id="get_weather_1", name="get_weather", arguments={"city": "Toronto"})
    assert events[1:4] == [
        ToolCallStartEvent(content_index=0, id="get_weather_1", name="get_weather"),
        ToolCallDeltaEvent(
            content_index=0, delta='{"city":"Toronto"}', arguments={"city": "Toronto"}
        ),
        ToolCallEndEvent(
            content_index=0, tool_call=expected, raw_arguments='{"city":"Toronto"}', strict=True
        ),
    ]
    t = terminal(events)
    assert isinstance(t, DoneEvent)
    # "stop" with tool calls -> tool_use (stop_reasons.yaml tool_calls_override).
    assert (t.reason, t.message.provider_stop_reason) == ("tool_use", "stop")


def test_wire_ids_are_kept_and_repeats_replaced() -> None:
    # ecosystem.md bug 4 (Ollama sends index 0 for every parallel call in its OpenAI
    # layer): natively every call is whole, so the index is irrelevant; ids are kept
    # unless repeated.
    data = ndjson(
        calls(
            call("a", {}, id="call_1", index=0),
            call("b", {"x": 1}, id="call_1"),
            call("c", {"y": 2}),
        ),
        done_line(),
    )
    t = done(data)
    assert [(c.id, c.name) for c in t.message.content if isinstance(c, ToolCall)] == [
        ("call_1", "a"),
        ("b_1", "b"),
        ("c_2", "c"),
    ]


def test_synthetic_ids_never_collide_with_wire_ids() -> None:
    t = done(ndjson(calls(call("f", {}, id="f_1"), call("f", {})), done_line()))
    assert [c.id for c in t.message.content if isinstance(c, ToolCall)] == ["f_1", "f_2"]


def test_tool_call_closes_the_open_text_block() -> None:
    t = done(
        ndjson(content("Let me check."), calls(call("f", {"a": 1})), content("Done."), done_line())
    )
    assert t.message.content == [
        TextBlock(content="Let me check."),
        ToolCall(id="f_1", name="f", arguments={"a": 1}),
        TextBlock(content="Done."),
    ]


def test_string_arguments_are_parsed() -> None:
    # Some Ollama-compatible servers send the OpenAI string form.
    t = done(ndjson(calls(call("f", '{"a": [1, 2]}')), done_line()))
    assert t.message.content == [ToolCall(id="f_1", name="f", arguments={"a": [1, 2]})]


def test_missing_arguments_are_an_empty_object() -> None:
    t = done(ndjson(calls({"function": {"name": "ping"}}), done_line()))
    assert t.message.content == [ToolCall(id="ping_1", name="ping", arguments={})]


@pytest.mark.parametrize(
    ("bad", "what"),
    [
        (calls({"function": "f"}), "tool call without a function object"),
        (calls("f"), "tool call without a function object"),
        (calls(call("f", [1, 2])), "tool call arguments are not an object"),
        (line({"tool_calls": {"function": {}}}), "'tool_calls' is not a list"),
    ],
)
def test_malformed_tool_calls_end_in_an_error(bad: dict[str, Any], what: str) -> None:
    t = failed(ndjson(content("kept"), bad, done_line()))
    assert t.error_message.startswith("malformed line #2: ")
    assert what in t.error_message
    assert t.message.content == [TextBlock(content="kept")]


# -- the end --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason"),
    [("stop", "stop"), ("length", "length"), ("load", "stop"), ("unload", "stop"), (None, "stop")],
)
def test_done_reasons(raw: str | None, reason: str) -> None:
    # provider-facts.md 1.3 / 3.1: stop, length, load (and unload); done_reason omitted
    # (omitempty) is still the end marker.
    t = done(ndjson(content("x"), done_line(raw)))
    assert (t.reason, t.message.provider_stop_reason) == (reason, raw)


def test_unknown_done_reason_is_an_error_naming_it() -> None:
    t = failed(ndjson(content("x"), done_line("cancelled")))
    assert t.error_message == "unrecognized stop reason 'cancelled'"
    assert t.message.content == [TextBlock(content="x")]


def test_load_reply_has_no_content() -> None:
    # An empty messages list only loads the model (done_reason "load", no counts).
    t = done(ndjson(done_line("load", None, None)))
    assert t.message.content == []
    assert t.message.usage == Usage()


def test_usage_counts_omitted_when_zero() -> None:
    t = done(ndjson(content("x"), done_line("stop", None, 4)))
    assert t.message.usage == Usage(input=0, output=4, total=4)


def test_content_on_the_done_line_is_kept() -> None:
    final = done_line()
    final["message"]["content"] = " end"
    t = done(ndjson(content("The"), final))
    assert t.message.content == [TextBlock(content="The end")]


def test_case61_lines_after_done_are_dropped() -> None:
    events = run(ndjson(content("a"), done_line(), content("late")))
    assert [e.type for e in events][-1] == "done"
    assert terminal(events).message.content == [TextBlock(content="a")]


def test_eof_without_done_is_an_error_keeping_content() -> None:
    # bugs 27-29 (ecosystem.md section 6): a cut stream is an error, not a short answer.
    t = failed(ndjson(thinking("t"), content("partial")))
    assert t.error_message == "stream ended without done: true"
    assert t.message.content == [ThinkingBlock(content="t"), TextBlock(content="partial")]


def test_done_false_everywhere_is_not_an_end() -> None:
    t = failed(ndjson(content("x"), line({}, done_reason="stop")))
    assert t.error_message == "stream ended without done: true"


def test_empty_body_is_an_error() -> None:
    assert failed(b"").error_message == "stream ended without done: true (no lines received)"


def test_truncated_last_line_is_an_error_keeping_content() -> None:
    data = ndjson(content("kept")) + b'{"model":"m","message":{"content":"lo'
    t = failed(data)
    assert t.error_message.startswith("framing error at byte ")
    assert t.message.content == [TextBlock(content="kept")]


# -- errors ---------------------------------------------------------------------------------


def test_in_band_error_line_keeps_content() -> None:
    t = failed(
        ndjson(
            content("partial"),
            {"error": "an error was encountered while running the model: unexpected EOF"},
        )
    )
    assert t.error_message == "an error was encountered while running the model: unexpected EOF"
    assert t.message.content == [TextBlock(content="partial")]


def test_in_band_overflow_error_is_classified_as_overflow() -> None:
    # provider-facts.md 4.3: Ollama "prompt too long; exceeded max context length by X tokens".
    t = failed(ndjson({"error": "prompt too long; exceeded max context length by 12 tokens"}))
    assert t.error is not None and t.error.kind == "overflow"


def test_error_object_form_uses_its_message() -> None:
    t = failed(ndjson({"error": {"message": "boom", "type": "server_error"}}))
    assert t.error_message == "boom"


def test_error_without_text_names_the_line() -> None:
    t = failed(ndjson({"error": 3}))
    assert t.error_message == 'in-stream error: {"error": 3}'


@pytest.mark.parametrize(
    ("raw", "what"),
    [
        ("[1, 2]", "not a JSON object"),
        ('{"message": "x", "done": false}', "'message' is not an object"),
        ('{"message": {"content": 5}, "done": false}', "text field is not a string"),
        ('{"message": {"thinking": []}, "done": false}', "thinking field is not a string"),
        ('{"message": {}, "done": true, "done_reason": 1}', "done_reason is not a string"),
    ],
)
def test_malformed_lines_end_in_an_error(raw: str, what: str) -> None:
    t = failed(ndjson(content("kept"), raw, done_line()))
    assert t.error_message.startswith("malformed line #2: ")
    assert what in t.error_message
    assert t.message.content == [TextBlock(content="kept")]


def test_invalid_json_line_is_a_framing_error() -> None:
    t = failed(ndjson(content("kept"), "{not json", done_line()))
    assert t.error_message.startswith("framing error at byte ")
    assert "line 2: invalid JSON" in t.error_message


def test_wrong_types_in_fields_without_content_are_ignored() -> None:
    t = done(
        ndjson(
            {"model": 5, "message": {"content": "x"}, "done": False}, done_line("stop", "10", True)
        )
    )
    assert t.message.model == MODEL  # set by the done line's model
    assert t.message.usage == Usage()
