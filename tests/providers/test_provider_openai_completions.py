"""The openai-completions reference normalizer on hand-written bodies and bundled cassettes.

Unit tests cite the conformance case (provider-facts.md section 7, "case N") or the
ecosystem bug (ecosystem.md section 6, "bug N") they pin. Expected values are read off the
wire text written in each test, never produced by running the normalizer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cassette_checks import Translate, terminal, text_block_opening
from stream_harness.contract.events import (
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextBlock,
    ThinkingBlock,
    ThinkingEndEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    Usage,
)
from stream_harness.contract.rules import check_contract
from stream_harness.providers.openai_completions import (
    NO_FINISH_REASON,
)
from stream_harness.recordings.cassette import load_cassette

PROTOCOL = "openai-completions"
REPO = Path(__file__).resolve().parents[2]
CASSETTES = sorted((REPO / "cassettes" / PROTOCOL).glob("*.yaml"))


# -- helpers --------------------------------------------------------------------------


def data(obj: dict[str, Any] | str) -> str:
    return f"data: {obj if isinstance(obj, str) else json.dumps(obj)}\n\n"


DONE = "data: [DONE]\n\n"


def chunk(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    *,
    cid: str = "chatcmpl-1",
    model: str = "gpt-test",
    **extra: Any,
) -> str:
    body: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
        "choices": [
            {"index": 0, "delta": delta if delta is not None else {}, "finish_reason": finish}
        ],
    }
    body.update(extra)
    return data(body)


def raw_chunk(**fields: Any) -> str:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
    }
    body.update(fields)
    return data(body)


def text(t: str) -> str:
    return chunk({"content": t})


def tc(
    index: int | None = None,
    id: str | None = None,
    name: str | None = None,
    args: Any = None,
    **kw: Any,
) -> dict[str, Any]:
    """One tool-call delta entry; only the given fields are present."""
    entry: dict[str, Any] = dict(kw)
    if index is not None:
        entry["index"] = index
    if id is not None:
        entry["id"] = id
        entry["type"] = "function"
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if args is not None:
        function["arguments"] = args
    entry["function"] = function
    return entry


def calls(*entries: dict[str, Any]) -> str:
    return chunk({"tool_calls": list(entries)})


TRANSLATE = Translate(PROTOCOL)
run = TRANSLATE.run
done = TRANSLATE.done
failed = TRANSLATE.failed


def tool_calls_of(t: DoneEvent | ErrorEvent) -> list[tuple[str, str, dict[str, Any]]]:
    return [(b.id, b.name, b.arguments) for b in t.message.content if isinstance(b, ToolCall)]


# -- basics ---------------------------------------------------------------------------


def test_plain_text_exact_events() -> None:
    body = (
        chunk({"role": "assistant", "content": ""})
        + text("Hel")
        + text("lo")
        + chunk({}, "stop")
        + DONE
    )
    events = run(body)
    msg = terminal(events).message
    assert events[:-1] == text_block_opening("Hel", "lo")
    assert events[-1] == DoneEvent(reason="stop", message=msg)
    assert msg.content == [TextBlock(content="Hello")]
    assert (msg.stop_reason, msg.provider_stop_reason) == ("stop", "stop")
    assert (msg.model, msg.response_id) == ("gpt-test", "chatcmpl-1")


# -- the end: [DONE], finish_reason, EOF (case 6, 62) -----------------------------------


def test_case6_done_ends_with_the_finish_reason_seen() -> None:
    assert done(text("x") + chunk({}, "length") + DONE).reason == "length"


def test_case6_eof_without_done_or_finish_reason_is_an_error_keeping_the_text() -> None:
    t = failed(text("partial ") + text("answer"))
    assert t.error_message == NO_FINISH_REASON == "stream ended without finish_reason"
    assert t.message.content == [TextBlock(content="partial answer")]
    assert t.message.stop_reason == "error"


def test_case62_eof_without_anything_is_an_error() -> None:
    t = failed(b"")
    assert t.error_message == NO_FINISH_REASON
    assert t.message.content == []


def test_eof_after_a_finish_reason_without_done_is_done() -> None:
    # Many compatibles omit [DONE] (provider-facts 2.7): the finish reason is the end.
    t = done(text("ok") + chunk({}, "stop"))
    assert t.message.content == [TextBlock(content="ok")]
    assert t.message.provider_stop_reason == "stop"


def test_done_without_any_finish_reason_is_stop_as_snowflake_sends_it() -> None:
    # Corpus: Snowflake Cortex never sends finish_reason; [DONE] is its end marker.
    t = done(
        text("405")
        + raw_chunk(
            choices=[], usage={"prompt_tokens": 4, "completion_tokens": 1, "total_tokens": 5}
        )
        + DONE
    )
    assert (t.reason, t.message.provider_stop_reason) == ("stop", None)
    assert t.message.usage == Usage(input=4, output=1, total=5)


def test_done_with_tool_calls_and_no_finish_reason_is_tool_use_per_the_override() -> None:
    # No finish reason at [DONE] is stop (the table), and stop with tool calls is tool_use
    # (the tool-call override, which Chat Completions has since issue 14).
    t = done(calls(tc(0, "call_1", "f", "{}")) + DONE)
    assert t.reason == "tool_use"
    assert tool_calls_of(t) == [("call_1", "f", {})]


def test_case61_events_after_done_are_dropped() -> None:
    t = done(
        text("a") + chunk({}, "stop") + DONE + text("late") + data({"error": {"message": "x"}})
    )
    assert t.message.content == [TextBlock(content="a")]


def test_finish_reason_sent_twice_the_last_non_null_wins() -> None:
    # OpenRouter sends finish_reason, then a usage chunk with finish_reason null (corpus).
    t = done(text("a") + chunk({}, "length") + chunk({}, "stop") + chunk({}, None) + DONE)
    assert t.message.provider_stop_reason == "stop"


def test_bug18_deltas_after_the_finish_reason_are_still_taken() -> None:
    t = done(
        calls(tc(0, "call_1", "f", '{"a"'))
        + chunk({}, "tool_calls")
        + calls(tc(0, args=": 1}"))
        + DONE
    )
    assert tool_calls_of(t) == [("call_1", "f", {"a": 1})]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [("stop", "stop"), ("length", "length"), ("tool_calls", "tool_use"), ("function_call", "tool_use"),
     ("model_length", "length"), ("end", "stop"), ("eos", "stop")],
)  # fmt: skip
def test_finish_reasons_map_through_the_table(raw: str, reason: str) -> None:
    t = done(text("x") + chunk({}, raw) + DONE)
    assert (t.reason, t.message.provider_stop_reason) == (reason, raw)


def test_content_filter_is_an_error_keeping_the_text() -> None:
    t = failed(text("The scene") + chunk({}, "content_filter") + DONE)
    assert t.message.provider_stop_reason == "content_filter"
    assert t.message.content == [TextBlock(content="The scene")]
    assert "content_filter" in t.error_message


def test_unknown_finish_reason_is_an_error_naming_it() -> None:
    t = failed(text("x") + chunk({}, "brand_new_reason") + DONE)
    assert t.message.provider_stop_reason == "brand_new_reason"
    assert "brand_new_reason" in t.error_message


# -- tool calls -------------------------------------------------------------------------


def test_one_tool_call_exact_events() -> None:
    body = (
        calls(tc(0, "call_1", "get_weather", ""))
        + calls(tc(0, args='{"city":'))
        + calls(tc(0, args=' "Paris"}'))
        + chunk({}, "tool_calls")
        + DONE
    )
    events = run(body)
    final = ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})
    assert events[:-1] == [
        StartEvent(),
        ToolCallStartEvent(content_index=0, id="call_1", name="get_weather"),
        ToolCallDeltaEvent(content_index=0, delta='{"city":', arguments={}),
        ToolCallDeltaEvent(content_index=0, delta=' "Paris"}', arguments={"city": "Paris"}),
        ToolCallEndEvent(
            content_index=0, tool_call=final, raw_arguments='{"city": "Paris"}', strict=True
        ),
    ]
    t = terminal(events)
    assert (t.reason, t.message.content) == ("tool_use", [final])


def test_case8_continuation_deltas_with_only_index_append_to_their_call() -> None:
    t = done(
        calls(tc(0, "call_1", "f", '{"a":'))
        + calls(tc(0, args="1,"))
        + calls(tc(0, args='"b":2}'))
        + chunk({}, "tool_calls")
        + DONE
    )
    assert tool_calls_of(t) == [("call_1", "f", {"a": 1, "b": 2})]


def test_case9_interleaved_parallel_calls_by_index() -> None:
    body = (
        calls(tc(0, "call_a", "get_weather", ""))
        + calls(tc(1, "call_b", "get_time", ""))
        + calls(tc(0, args='{"city": '))
        + calls(tc(1, args='{"tz": '))
        + calls(tc(1, args='"CET"}'))
        + calls(tc(0, args='"Paris"}'))
        + chunk({}, "tool_calls")
        + DONE
    )
    t = done(body)
    assert tool_calls_of(t) == [
        ("call_a", "get_weather", {"city": "Paris"}),
        ("call_b", "get_time", {"tz": "CET"}),
    ]


def test_case10_name_arriving_after_the_first_delta_is_kept() -> None:
    events = run(
        calls(tc(0, "call_1", None, ""))
        + calls(tc(0, name="search"))
        + calls(tc(0, args='{"q": "x"}'))
        + chunk({}, "tool_calls")
        + DONE
    )
    assert events[1] == ToolCallStartEvent(content_index=0, id="call_1", name=None)
    assert tool_calls_of(terminal(events)) == [("call_1", "search", {"q": "x"})]


def test_case11_whole_call_in_one_chunk_then_finish_in_an_empty_delta() -> None:
    t = done(calls(tc(0, "call_k2", "weather", "{}")) + chunk({}, "tool_calls") + DONE)
    assert tool_calls_of(t) == [("call_k2", "weather", {})]
    assert t.reason == "tool_use"


def test_case12_parseable_arguments_are_not_finished_early() -> None:
    events = run(
        calls(tc(0, "call_1", "f", '{"a":1'))
        + calls(tc(0, args="2}"))
        + chunk({}, "tool_calls")
        + DONE
    )
    ends = [i for i, e in enumerate(events) if isinstance(e, ToolCallEndEvent)]
    deltas = [i for i, e in enumerate(events) if isinstance(e, ToolCallDeltaEvent)]
    assert len(ends) == 1 and ends[0] > max(deltas)
    assert tool_calls_of(terminal(events)) == [("call_1", "f", {"a": 12})]


def test_case15_truncated_arguments_at_length_keep_the_best_effort_parse() -> None:
    t = done(
        calls(tc(0, "call_1", "write", '{"path": "a.txt", "body": "Hello wor'))
        + chunk({}, "length")
        + DONE
    )
    assert t.reason == "length"
    name, args = tool_calls_of(t)[0][1:]
    assert name == "write" and args["path"] == "a.txt"


def test_bug4_same_index_with_a_new_id_starts_a_new_call() -> None:
    # Ollama /v1: every parallel call at index 0, each with its own id.
    body = (
        calls(tc(0, "call_x", "get_weather", '{"city":"Lyon"}'))
        + calls(tc(0, "call_y", "get_time", '{"tz":"CET"}'))
        + chunk({}, "tool_calls")
        + DONE
    )
    t = done(body)
    assert tool_calls_of(t) == [
        ("call_x", "get_weather", {"city": "Lyon"}),
        ("call_y", "get_time", {"tz": "CET"}),
    ]


def test_bug4_same_index_new_id_then_continuations_go_to_the_new_call() -> None:
    body = (
        calls(tc(0, "call_x", "f", '{"a":'))
        + calls(tc(0, args="1}"))
        + calls(tc(0, "call_y", "g", '{"b":'))
        + calls(tc(0, args="2}"))
        + chunk({}, "tool_calls")
        + DONE
    )
    assert tool_calls_of(done(body)) == [("call_x", "f", {"a": 1}), ("call_y", "g", {"b": 2})]


def test_bug3_same_index_with_a_different_name_and_no_ids_starts_a_new_call() -> None:
    body = (
        calls(tc(0, None, "read_file", '{"p": 1}'))
        + calls(tc(0, None, "search_text", '{"q": 2}'))
        + chunk({}, "tool_calls")
        + DONE
    )
    t = done(body)
    assert [(n, a) for _, n, a in tool_calls_of(t)] == [
        ("read_file", {"p": 1}),
        ("search_text", {"q": 2}),
    ]
    ids = [i for i, _, _ in tool_calls_of(t)]
    assert ids == ["toolcall_0", "toolcall_1"]


def test_bug7_id_and_full_name_repeated_on_every_delta_are_not_appended() -> None:
    # llama-server repeats the full name per delta; the SDK builds call_acall_a / ff.
    body = (
        calls(tc(0, "call_a", "final_result", '{"x"'))
        + calls(tc(0, "call_a", "final_result", ": 1"))
        + calls(tc(0, "call_a", "final_result", "}"))
        + chunk({}, "tool_calls")
        + DONE
    )
    assert tool_calls_of(done(body)) == [("call_a", "final_result", {"x": 1})]


def test_bug6_two_entries_for_one_index_in_one_chunk_are_taken_in_order() -> None:
    body = (
        calls(tc(0, "call_1", "f", ""))
        + calls(tc(0, args='{"a": "x'), tc(0, args='y"}'))
        + chunk({}, "tool_calls")
        + DONE
    )
    assert tool_calls_of(done(body)) == [("call_1", "f", {"a": "xy"})]


def test_bug8_arguments_sent_with_id_and_name_are_taken_once() -> None:
    body = (
        calls(tc(0, "call_b", "weather", '{ "city": "Berlin" }')) + chunk({}, "tool_calls") + DONE
    )
    events = run(body)
    assert [e.delta for e in events if isinstance(e, ToolCallDeltaEvent)] == [
        '{ "city": "Berlin" }'
    ]
    assert tool_calls_of(terminal(events)) == [("call_b", "weather", {"city": "Berlin"})]


def test_bug1_two_objects_run_together_in_one_call_keep_both_keys() -> None:
    # No ids, one index: a server squashing parallel calls into one call's arguments
    # (litellm#7621). parse_partial merges run-together objects; no call is invented.
    body = (
        calls(tc(0, "call_1", "f", '{"a": 1}'))
        + calls(tc(0, args='{"b": 2}'))
        + chunk({}, "tool_calls")
        + DONE
    )
    assert tool_calls_of(done(body)) == [("call_1", "f", {"a": 1, "b": 2})]


def test_bug1_same_key_run_together_gives_the_one_merged_object() -> None:
    # The literal bug 1 text. The later value replaces the earlier (partial_json's run-
    # together rule), so the live value is not a prefix of the final one; the argument
    # text is not valid JSON, so C9 promises nothing (specs/contract.md) and C7 holds.
    body = (
        calls(tc(0, "call_1", "weather", '{"location": "SF"}'))
        + calls(tc(0, args='{"location": "Tokyo"}'))
        + chunk({}, "tool_calls")
        + DONE
    )
    events = run(body)
    assert isinstance(events[-1], DoneEvent)
    assert tool_calls_of(events[-1]) == [("call_1", "weather", {"location": "Tokyo"})]
    assert check_contract(events) == []


def test_bug9_trailing_empty_arguments_chunk_creates_no_second_call() -> None:
    body = (
        calls(tc(0, "call_1", "f", '{"a": 1}'))
        + chunk({"tool_calls": [tc(0, args="")]}, "tool_calls")
        + DONE
    )
    t = done(body)
    assert tool_calls_of(t) == [("call_1", "f", {"a": 1})]
    assert sum(isinstance(e, ToolCallStartEvent) for e in run(body)) == 1


def test_bug9_trailing_chunk_repeating_id_and_name_creates_no_second_call() -> None:
    body = (
        calls(tc(0, "call_1", "f", '{"a": 1}'))
        + chunk({"tool_calls": [tc(0, "call_1", "f", "")]}, "tool_calls")
        + DONE
    )
    assert tool_calls_of(done(body)) == [("call_1", "f", {"a": 1})]


@pytest.mark.parametrize("arguments", ["", None])
def test_bugs10_11_empty_arguments_give_an_empty_object(arguments: str | None) -> None:
    t = done(calls(tc(0, "call_1", "get_time", arguments)) + chunk({}, "tool_calls") + DONE)
    assert tool_calls_of(t) == [("call_1", "get_time", {})]


def test_missing_index_falls_back_to_the_id() -> None:
    # Mistral sends calls without `index`: two ids are two calls, a repeated id continues.
    body = (
        calls(tc(None, "a1", "f", '{"x":'))
        + calls(tc(None, "b2", "g", '{"y": 2}'))
        + calls(tc(None, "a1", None, " 1}"))
        + chunk({}, "tool_calls")
        + DONE
    )
    assert tool_calls_of(done(body)) == [("a1", "f", {"x": 1}), ("b2", "g", {"y": 2})]


def test_missing_index_and_id_continue_the_latest_call() -> None:
    body = (
        calls(tc(None, "a1", "f", '{"x":'))
        + calls(tc(None, None, None, " 1}"))
        + chunk({}, "tool_calls")
        + DONE
    )
    assert tool_calls_of(done(body)) == [("a1", "f", {"x": 1})]


def test_missing_index_id_and_no_call_yet_opens_one_with_a_synthetic_id() -> None:
    t = done(calls(tc(None, None, "f", "{}")) + chunk({}, "tool_calls") + DONE)
    assert tool_calls_of(t) == [("toolcall_0", "f", {})]


def test_tool_calls_close_at_the_end_in_wire_index_order() -> None:
    body = (
        calls(tc(1, "call_b", "g", "{}"))
        + calls(tc(0, "call_a", "f", "{}"))
        + chunk({}, "tool_calls")
        + DONE
    )
    events = run(body)
    ends = [e.tool_call.id for e in events if isinstance(e, ToolCallEndEvent)]
    assert ends == ["call_a", "call_b"]
    # content order is opening order
    assert tool_calls_of(terminal(events)) == [("call_b", "g", {}), ("call_a", "f", {})]


def test_a_tool_call_closes_the_text_before_it() -> None:
    events = run(
        text("Let me check.") + calls(tc(0, "call_1", "f", "{}")) + chunk({}, "tool_calls") + DONE
    )
    kinds = [e.type for e in events]
    assert kinds.index("text_end") < kinds.index("toolcall_start")
    assert terminal(events).message.content == [
        TextBlock(content="Let me check."),
        ToolCall(id="call_1", name="f", arguments={}),
    ]


def test_legacy_function_call_is_a_tool_call() -> None:
    body = (
        chunk({"function_call": {"name": "lookup", "arguments": ""}})
        + chunk({"function_call": {"arguments": '{"k": 1}'}})
        + chunk({}, "function_call")
        + DONE
    )
    t = done(body)
    assert (t.reason, tool_calls_of(t)) == ("tool_use", [("toolcall_0", "lookup", {"k": 1})])


def test_custom_tool_call_takes_name_and_input() -> None:
    entry = {
        "index": 0,
        "id": "call_c",
        "type": "custom",
        "custom": {"name": "grammar", "input": '{"x": 1}'},
    }
    t = done(calls(entry) + chunk({}, "tool_calls") + DONE)
    assert tool_calls_of(t) == [("call_c", "grammar", {"x": 1})]


# -- Mistral (case 48, 49) ----------------------------------------------------------------


def test_case48_mistral_content_array_of_thinking_and_text() -> None:
    body = (
        chunk({"role": "assistant", "content": ""})
        + chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Hmm,"}]}]})
        + chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": " ok."}]}]})
        + chunk({"content": [{"type": "text", "text": "Cross "}]})
        + chunk({"content": [{"type": "reference", "reference_ids": [3]}]})
        + chunk({"content": "safely."})
        + chunk({"content": [{"type": "thinking", "thinking": []}]})
        + chunk({"content": ""}, "stop")
        + DONE
    )
    t = done(body)
    assert t.message.content == [
        ThinkingBlock(content="Hmm, ok."),
        TextBlock(content="Cross safely."),
    ]
    [ref] = t.message.provider_blocks
    assert (ref.provider_type, ref.position, ref.data) == (
        "mistral.reference",
        2,
        {"type": "reference", "reference_ids": [3]},
    )


def test_case49_mistral_null_id_gets_a_synthetic_id_and_model_length_is_length() -> None:
    body = (
        chunk(
            {
                "tool_calls": [
                    {"id": "null", "index": 0, "function": {"name": "f", "arguments": "{}"}}
                ]
            }
        )
        + chunk({}, "model_length")
        + DONE
    )
    t = done(body)
    assert t.reason == "length"
    assert tool_calls_of(t) == [("toolcall_0", "f", {})]


def test_mistral_arguments_as_an_object_are_taken_as_json() -> None:
    body = (
        chunk(
            {
                "tool_calls": [
                    {
                        "id": "EscTeQY62",
                        "function": {"name": "get_weather", "arguments": {"city": "Nice"}},
                    }
                ]
            },
            "tool_calls",
        )
        + DONE
    )
    events = run(body)
    assert [e.delta for e in events if isinstance(e, ToolCallDeltaEvent)] == ['{"city":"Nice"}']
    assert tool_calls_of(terminal(events)) == [("EscTeQY62", "get_weather", {"city": "Nice"})]


# -- reasoning (case 16, 17, 18) ----------------------------------------------------------


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "reasoning_text"])
def test_case16_each_reasoning_field_is_thinking(field: str) -> None:
    t = done(
        chunk({field: "think "})
        + chunk({field: "more"})
        + text("answer")
        + chunk({}, "stop")
        + DONE
    )
    assert t.message.content == [ThinkingBlock(content="think more"), TextBlock(content="answer")]


def test_case16_both_fields_with_the_same_text_give_one_thinking_stream() -> None:
    # chutes.ai sends reasoning_content and reasoning with the same text.
    body = (
        chunk({"reasoning_content": "a", "reasoning": "a"})
        + chunk({"reasoning_content": "b", "reasoning": "b"})
        + chunk({}, "stop")
        + DONE
    )
    assert done(body).message.content == [ThinkingBlock(content="ab")]


def test_case17_empty_content_during_thinking_opens_no_text_block() -> None:
    # Ollama /v1 sends content "" on every reasoning chunk.
    body = (
        chunk({"role": "assistant", "content": "", "reasoning": "x"})
        + chunk({"content": "", "reasoning": "y"})
        + chunk({"content": "Hi", "reasoning": None})
        + chunk({}, "stop")
        + DONE
    )
    events = run(body)
    assert [e.type for e in events if e.type.endswith("_start")] == ["thinking_start", "text_start"]
    assert terminal(events).message.content == [
        ThinkingBlock(content="xy"),
        TextBlock(content="Hi"),
    ]


def test_thinking_after_text_is_a_new_block() -> None:
    body = (
        chunk({"reasoning": "r1"})
        + text("t1")
        + chunk({"reasoning": "r2"})
        + chunk({}, "stop")
        + DONE
    )
    assert done(body).message.content == [
        ThinkingBlock(content="r1"),
        TextBlock(content="t1"),
        ThinkingBlock(content="r2"),
    ]


def test_openrouter_reasoning_details_text_is_not_duplicated_with_reasoning() -> None:
    detail = {"type": "reasoning.text", "text": "We need", "index": 0, "format": None}
    body = (
        chunk({"content": "", "reasoning": "We need", "reasoning_details": [detail]})
        + chunk({}, "stop")
        + DONE
    )
    assert done(body).message.content == [ThinkingBlock(content="We need")]


def test_reasoning_details_alone_are_thinking_as_snowflake_sends_them() -> None:
    d1 = {
        "format": "anthropic-claude-v1",
        "id": "reasoning-text-1",
        "index": 0,
        "text": "15",
        "type": "reasoning.text",
    }
    d2 = {**d1, "text": " * 27 = 405"}
    body = (
        chunk({"content": "", "reasoning_details": [d1], "refusal": ""})
        + chunk({"content": "", "reasoning_details": [d2]})
        + text("405")
        + DONE
    )
    assert done(body).message.content == [
        ThinkingBlock(content="15 * 27 = 405"),
        TextBlock(content="405"),
    ]


def test_reasoning_text_signature_goes_on_the_thinking_block() -> None:
    body = (
        chunk(
            {"reasoning": "plan", "reasoning_details": [{"type": "reasoning.text", "text": "plan"}]}
        )
        + chunk(
            {"reasoning_details": [{"type": "reasoning.text", "text": "", "signature": "sig=="}]}
        )
        + text("x")
        + chunk({}, "stop")
        + DONE
    )
    assert done(body).message.content == [
        ThinkingBlock(content="plan", signature="sig=="),
        TextBlock(content="x"),
    ]


def test_reasoning_summary_detail_is_thinking() -> None:
    body = (
        chunk({"reasoning_details": [{"type": "reasoning.summary", "summary": "Short plan."}]})
        + chunk({}, "stop")
        + DONE
    )
    assert done(body).message.content == [ThinkingBlock(content="Short plan.")]


def test_case18_encrypted_detail_with_a_call_id_is_that_calls_signature() -> None:
    body = (
        chunk(
            {
                "tool_calls": [tc(0, "tool_1", "f", "{}")],
                "reasoning_details": [
                    {
                        "type": "reasoning.encrypted",
                        "id": "tool_1",
                        "data": "ENC==",
                        "format": "google-gemini-v1",
                    }
                ],
            }
        )
        + chunk({}, "tool_calls")
        + DONE
    )
    assert done(body).message.content == [
        ToolCall(id="tool_1", name="f", arguments={}, signature="ENC==")
    ]


def test_encrypted_detail_without_a_matching_call_is_a_redacted_thinking_block() -> None:
    # Corpus (OpenRouter o3): an encrypted entry with an `rs_...` id, before the text.
    detail = {
        "type": "reasoning.encrypted",
        "data": "gAAAA",
        "id": "rs_0aa4",
        "format": "openai-responses-v1",
        "index": 0,
    }
    body = (
        chunk({"content": "", "reasoning": None, "reasoning_details": [detail]})
        + text("I am")
        + chunk({}, "stop")
        + DONE
    )
    events = run(body)
    assert ThinkingEndEvent(content_index=0, content="", signature="gAAAA", redacted=True) in events
    assert terminal(events).message.content == [
        ThinkingBlock(content="", signature="gAAAA", redacted=True),
        TextBlock(content="I am"),
    ]


# -- refusal --------------------------------------------------------------------------------


def test_refusal_is_a_text_block_and_the_stream_ends_in_error() -> None:
    body = (
        chunk({"role": "assistant", "content": None, "refusal": ""})
        + chunk({"refusal": "I'm sorry,"})
        + chunk({"refusal": " no."})
        + chunk({}, "stop")
        + DONE
    )
    t = failed(body)
    assert t.message.content == [TextBlock(content="I'm sorry, no.")]
    assert t.error_message == "I'm sorry, no."
    assert t.message.provider_stop_reason == "stop"
    assert t.error is not None and (t.error.kind, t.error.provider_type, t.error.retryable) == (
        "fatal",
        "refusal",
        False,
    )


def test_refusal_and_content_are_separate_blocks() -> None:
    t = failed(text("Sure") + chunk({"refusal": "Actually, no."}) + chunk({}, "stop") + DONE)
    assert t.message.content == [TextBlock(content="Sure"), TextBlock(content="Actually, no.")]


# -- usage -----------------------------------------------------------------------------------


def test_case7_usage_only_last_chunk_updates_usage_and_opens_nothing() -> None:
    usage = {
        "prompt_tokens": 53,
        "completion_tokens": 15,
        "total_tokens": 68,
        "prompt_tokens_details": {"cached_tokens": 0},
    }
    events = run(text("Hi") + chunk({}, "stop") + raw_chunk(choices=[], usage=usage) + DONE)
    assert sum(e.type.endswith("_start") for e in events) == 1
    assert terminal(events).message.usage == Usage(input=53, output=15, total=68)


@pytest.mark.parametrize("choices", [None, [], "x", [None, 3]])
def test_bugs13_14_chunks_without_usable_choices_are_passed_over(choices: Any) -> None:
    t = done(text("Hi") + chunk({}, "stop") + raw_chunk(choices=choices) + DONE)
    assert t.message.content == [TextBlock(content="Hi")]


def test_openai_cached_tokens_are_taken_out_of_input() -> None:
    usage = {"prompt_tokens": 2006, "completion_tokens": 300, "total_tokens": 2306, "prompt_tokens_details": {"cached_tokens": 1920},
             "completion_tokens_details": {"reasoning_tokens": 256}}  # fmt: skip
    t = done(text("x") + chunk({}, "stop") + raw_chunk(choices=[], usage=usage) + DONE)
    # output is completion_tokens as sent: OpenAI already counts reasoning in it.
    assert t.message.usage == Usage(input=86, output=300, cache_read=1920, total=2306)


def test_deepseek_prompt_cache_hit_tokens() -> None:
    usage = {
        "prompt_tokens": 64,
        "completion_tokens": 40,
        "total_tokens": 104,
        "prompt_cache_hit_tokens": 48,
        "prompt_cache_miss_tokens": 16,
    }
    t = done(chunk({"content": "x"}, "stop", usage=usage) + DONE)
    assert t.message.usage == Usage(input=16, output=40, cache_read=48, total=104)


def test_together_top_level_cached_tokens() -> None:
    usage = {"prompt_tokens": 41, "completion_tokens": 15, "total_tokens": 56, "cached_tokens": 32}
    assert done(chunk({"content": "x"}, "stop", usage=usage) + DONE).message.usage == Usage(
        input=9, output=15, cache_read=32, total=56
    )


def test_openrouter_cache_write_tokens_are_taken_out_of_input() -> None:
    usage = {
        "prompt_tokens": 2317,
        "completion_tokens": 53,
        "total_tokens": 2370,
        "prompt_tokens_details": {"cached_tokens": 1000, "cache_write_tokens": 300},
    }
    assert done(chunk({"content": "x"}, "stop", usage=usage) + DONE).message.usage == Usage(
        input=1017, output=53, cache_read=1000, cache_write=300, total=2370
    )


def test_groq_x_groq_usage() -> None:
    x_groq = {
        "id": "req_1",
        "usage": {
            "queue_time": 0.1,
            "prompt_tokens": 236,
            "completion_tokens": 18,
            "total_tokens": 254,
        },
    }
    assert done(text("x") + chunk({}, "stop", x_groq=x_groq) + DONE).message.usage == Usage(
        input=236, output=18, total=254
    )


def test_top_level_usage_wins_over_x_groq_in_the_same_chunk() -> None:
    x_groq = {"usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    assert done(chunk({}, "stop", x_groq=x_groq, usage=usage) + DONE).message.usage == Usage(
        input=10, output=5, total=15
    )


def test_moonshot_usage_inside_the_choice() -> None:
    body = (
        raw_chunk(
            choices=[
                {
                    "index": 0,
                    "delta": {"content": "x"},
                    "finish_reason": "stop",
                    "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
                }
            ]
        )
        + DONE
    )
    assert done(body).message.usage == Usage(input=7, output=3, total=10)


def test_bug15_usage_on_every_chunk_is_cumulative_not_summed() -> None:
    body = "".join(
        chunk(
            {"content": c},
            usage={"prompt_tokens": 5, "completion_tokens": n, "total_tokens": 5 + n},
        )
        for n, c in enumerate("abc", 1)
    )
    assert done(body + chunk({}, "stop") + DONE).message.usage == Usage(input=5, output=3, total=8)


def test_usage_values_of_the_wrong_type_are_ignored() -> None:
    usage = {"prompt_tokens": "12", "completion_tokens": True, "total_tokens": None}
    assert done(chunk({"content": "x"}, "stop", usage=usage) + DONE).message.usage == Usage()


# -- in-band errors (case 50, 51) ----------------------------------------------------------


def test_case51_openai_error_line_after_text_keeps_the_text() -> None:
    err = {
        "error": {
            "message": "The server had an error while processing your request. Sorry about that!",
            "type": "server_error",
        }
    }
    t = failed(text("Ganymede,") + data(err))
    assert t.error_message == err["error"]["message"]
    assert t.message.content == [TextBlock(content="Ganymede,")]
    assert t.error is not None


def test_case51_vllm_object_error_line() -> None:
    t = failed(
        text("a")
        + data(
            {
                "object": "error",
                "message": "The model is overloaded",
                "type": "InternalServerError",
                "code": 500,
            }
        )
    )
    assert t.error_message == "The model is overloaded"
    assert t.message.content == [TextBlock(content="a")]


def test_error_given_as_a_string() -> None:
    assert failed(data({"error": "upstream timeout"})).error_message == "upstream timeout"


def test_error_without_a_message_is_still_readable() -> None:
    t = failed(data({"error": {"code": 500}}))
    assert "500" in t.error_message


def test_case50_openrouter_finish_reason_error_with_choice_error() -> None:
    body = (
        ": OPENROUTER PROCESSING\n\n"
        + chunk({"content": "The article argues"})
        + raw_chunk(
            choices=[
                {
                    "index": 0,
                    "delta": {"content": ""},
                    "finish_reason": "error",
                    "error": {"code": 502, "message": "Provider returned error"},
                }
            ]
        )
        + DONE
    )
    t = failed(body)
    assert t.error_message == "Provider returned error"
    assert t.message.provider_stop_reason == "error"
    assert t.message.content == [TextBlock(content="The article argues")]


def test_openrouter_error_after_finish_reason_length_keeps_usage_and_reason() -> None:
    # Corpus: finish_reason length, then a chunk with a top-level error and usage.
    body = (
        chunk({"reasoning": "We need"}, "length")
        + raw_chunk(error={"code": 400, "message": "Token limit reached"}, choices=[{"index": 0, "delta": {"content": ""}, "finish_reason": None}],
                    usage={"prompt_tokens": 43, "completion_tokens": 10, "total_tokens": 53})
        + DONE
    )  # fmt: skip
    t = failed(body)
    assert t.error_message == "Token limit reached"
    assert t.message.provider_stop_reason == "length"
    assert t.message.usage == Usage(input=43, output=10, total=53)
    assert t.message.content == [ThinkingBlock(content="We need")]


def test_event_named_error_is_an_error() -> None:
    t = failed(text("a") + 'event: error\ndata: {"message": "gateway overloaded"}\n\n')
    assert t.error_message == "gateway overloaded"


def test_case3_comment_lines_are_ignored() -> None:
    t = done(
        ": OPENROUTER PROCESSING\n\n"
        + text("a")
        + ": OPENROUTER PROCESSING\n\n"
        + chunk({}, "stop")
        + DONE
    )
    assert t.message.content == [TextBlock(content="a")]


# -- malformed data and wrong types --------------------------------------------------------


def test_malformed_json_is_an_error_keeping_what_came_before() -> None:
    t = failed(text("kept") + 'data: {"choices": [\n\n' + DONE)
    assert "malformed JSON" in t.error_message
    assert t.message.content == [TextBlock(content="kept")]


def test_json_that_is_not_an_object_is_an_error() -> None:
    t = failed(text("kept") + "data: [1, 2]\n\n" + DONE)
    assert "not a JSON object" in t.error_message
    assert t.message.content == [TextBlock(content="kept")]


def test_truncated_last_event_is_an_error() -> None:
    t = failed(text("kept") + chunk({}, "stop")[:-10])
    assert t.message.content == [TextBlock(content="kept")]


@pytest.mark.parametrize(
    "delta",
    [
        None,
        "text",
        3,
        [],
        {"content": 7},
        {"tool_calls": [None, "x"]},
        {"tool_calls": [{"function": "x"}]},
    ],
)
def test_bug19_deltas_of_the_wrong_shape_are_passed_over(delta: Any) -> None:
    body = (
        text("a")
        + raw_chunk(choices=[{"index": 0, "delta": delta, "finish_reason": None}])
        + chunk({}, "stop")
        + DONE
    )
    t = done(body)
    assert t.message.content[0] == TextBlock(content="a")


def test_nan_and_infinity_numbers_are_passed_over() -> None:
    # json.loads accepts them; int() of them raises.
    body = (
        text("a")
        + 'data: {"choices": [{"index": NaN, "delta": {"content": "b"}}], "usage": {"prompt_tokens": Infinity, "completion_tokens": NaN, "total_tokens": 3}}\n\n'
        + chunk({}, "stop")
        + DONE
    )
    t = done(body)
    assert t.message.content == [TextBlock(content="ab")]
    assert t.message.usage == Usage(total=3)


@pytest.mark.parametrize("value", [5, "x", {"a": 1}, True])
def test_list_fields_of_the_wrong_type_are_passed_over(value: Any) -> None:
    delta = {
        "content": "a",
        "annotations": value,
        "executed_tools": value,
        "reasoning_details": value,
        "tool_calls": value,
    }
    t = done(chunk(delta) + chunk({}, "stop") + DONE)
    assert t.message.content == [TextBlock(content="a")]
    assert t.message.provider_blocks == []


@pytest.mark.parametrize("error", [None, {}, "", False, 0])
def test_a_falsy_error_field_is_no_error_as_in_the_sdk(error: Any) -> None:
    t = done(
        text("a")
        + raw_chunk(
            choices=[{"index": 0, "delta": {}, "finish_reason": "stop", "error": error}],
            error=error,
        )
        + DONE
    )
    assert t.message.content == [TextBlock(content="a")]


def test_empty_data_lines_are_skipped() -> None:
    assert done("data: \n\n" + text("a") + chunk({}, "stop") + DONE).message.content == [
        TextBlock(content="a")
    ]


# -- metadata, n > 1, provider blocks --------------------------------------------------------


def test_model_and_id_come_from_the_first_chunk() -> None:
    # Groq compound: a new id on every chunk, "stub" on the last.
    body = (
        chunk({"content": "a"}, cid="chatcmpl-first")
        + chunk({"content": "b"}, cid="chatcmpl-second", model="other")
        + chunk({}, "stop", cid="stub")
        + DONE
    )
    msg = done(body).message
    assert (msg.model, msg.response_id) == ("gpt-test", "chatcmpl-first")


def test_empty_model_and_id_are_filled_from_a_later_chunk() -> None:
    # Azure: the first chunk (prompt_filter_results) has model "" and id "".
    body = (
        data(
            {
                "choices": [],
                "created": 0,
                "id": "",
                "model": "",
                "object": "",
                "prompt_filter_results": [],
            }
        )
        + chunk({"content": "a"}, "stop", cid="chatcmpl-az", model="gpt-4o")
        + DONE
    )
    msg = done(body).message
    assert (msg.model, msg.response_id) == ("gpt-4o", "chatcmpl-az")


def test_n_greater_than_one_keeps_other_choices_as_provider_blocks() -> None:
    body = (
        raw_chunk(
            choices=[
                {"index": 0, "delta": {"content": "A"}, "finish_reason": None},
                {"index": 1, "delta": {"content": "B"}, "finish_reason": None},
            ]
        )
        + raw_chunk(
            choices=[
                {
                    "index": 1,
                    "delta": {"content": "b", "tool_calls": [tc(0, "c9", "f", '{"z": 1}')]},
                    "finish_reason": "stop",
                }
            ]
        )
        + raw_chunk(choices=[{"index": 0, "delta": {"content": "a"}, "finish_reason": "stop"}])
        + DONE
    )
    t = done(body)
    assert t.message.content == [TextBlock(content="Aa")]
    [other] = t.message.provider_blocks
    assert other.provider_type == "openai.choice"
    assert other.data == {"index": 1, "content": "Bb", "reasoning": "", "refusal": "",
                          "tool_calls": [{"id": "c9", "name": "f", "arguments": '{"z": 1}'}], "finish_reason": "stop"}  # fmt: skip


def test_annotations_and_executed_tools_are_provider_blocks() -> None:
    ann = {"type": "url_citation", "url_citation": {"url": "https://example.com", "title": "Ex"}}
    tool = {"index": 0, "type": "search", "arguments": '{"query": "q"}'}
    t = done(
        chunk({"content": "", "annotations": [ann]})
        + chunk({"executed_tools": [tool]})
        + text("x")
        + chunk({}, "stop")
        + DONE
    )
    assert [(p.provider_type, p.position, p.data) for p in t.message.provider_blocks] == [
        ("openai.annotation", 0, ann),
        ("groq.executed_tool", 0, tool),
    ]


# -- bundled cassettes --------------------------------------------------------------------


@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: p.stem)
def test_bundled_cassette_is_a_streaming_request(path: Path) -> None:
    for interaction in load_cassette(path).interactions:
        assert json.loads(interaction.request.body)["stream"] is True
        assert "authorization" not in interaction.request.headers
        if interaction.response.status == 200:
            assert interaction.is_streaming


# -- properties ---------------------------------------------------------------------------


def test_case2_crlf_and_cr_line_endings_give_the_same_events() -> None:
    body = (
        text("caf\u00e9") + calls(tc(0, "call_1", "f", '{"a": 1}')) + chunk({}, "tool_calls") + DONE
    )
    lf = run(body)
    assert run(body.replace("\n", "\r\n")) == lf
    assert run(body.replace("\n", "\r")) == lf
