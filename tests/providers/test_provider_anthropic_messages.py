"""The anthropic-messages reference normalizer on hand-written bodies and bundled cassettes.

Unit tests cite the conformance case (provider-facts.md section 7) or the ecosystem bug
(ecosystem.md section 6) they pin. Expected values are read off the wire text in each
test, never produced by running the normalizer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cassette_checks import Translate, terminal, text_block_opening
from stream_harness.contract.events import (
    DoneEvent,
    ProviderBlock,
    StartEvent,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    Usage,
)
from stream_harness.providers.anthropic_messages import Normalizer

REPO = Path(__file__).resolve().parents[2]
PROTOCOL = "anthropic-messages"


# -- helpers --------------------------------------------------------------------------


def sse(payload: dict[str, Any] | str, name: str | None = None) -> str:
    """One SSE event; the event name defaults to the JSON type, as Anthropic sends it."""
    if isinstance(payload, str):
        return f"event: {name or 'message'}\ndata: {payload}\n\n"
    return f"event: {name or payload['type']}\ndata: {json.dumps(payload)}\n\n"


PING = 'event: ping\ndata: {"type": "ping"}\n\n'


def start(msg_id: str = "msg_1", model: str = "claude-test", **usage: int) -> str:
    u = {"input_tokens": 10, "output_tokens": 1, **usage}
    return sse(
        {
            "type": "message_start",
            "message": {"id": msg_id, "type": "message", "role": "assistant", "model": model,
                        "content": [], "stop_reason": None, "stop_sequence": None, "usage": u},
        }
    )  # fmt: skip


def block(index: int, content_block: dict[str, Any]) -> str:
    return sse({"type": "content_block_start", "index": index, "content_block": content_block})


def delta(index: int, **d: Any) -> str:
    return sse({"type": "content_block_delta", "index": index, "delta": d})


def text(index: int, t: str) -> str:
    return delta(index, type="text_delta", text=t)


def args(index: int, partial: str) -> str:
    return delta(index, type="input_json_delta", partial_json=partial)


def stop(index: int) -> str:
    return sse({"type": "content_block_stop", "index": index})


def message_delta(
    stop_reason: str | None = "end_turn", usage: dict[str, Any] | None = None, **extra: Any
) -> str:
    d = {"stop_reason": stop_reason, "stop_sequence": None, **extra}
    return sse(
        {
            "type": "message_delta",
            "delta": d,
            "usage": usage if usage is not None else {"output_tokens": 5},
        }
    )


END = sse({"type": "message_stop"})


TRANSLATE = Translate(PROTOCOL)
run = TRANSLATE.run
done = TRANSLATE.done
failed = TRANSLATE.failed


def simple_text(t: str = "Hi", index: int = 0) -> str:
    return block(index, {"type": "text", "text": ""}) + text(index, t) + stop(index)


# -- the basics -------------------------------------------------------------------------


def test_plain_text_exact_events() -> None:
    body = (
        start("msg_A", "claude-x")
        + block(0, {"type": "text", "text": ""})
        + text(0, "Hel")
        + text(0, "lo")
    )
    body += stop(0) + message_delta("end_turn", {"output_tokens": 7}) + END
    events = run(body)
    message = events[-1].message
    assert events == [*text_block_opening("Hel", "lo"), DoneEvent(reason="stop", message=message)]
    assert message.content == [TextBlock(content="Hello")]
    assert message.model == "claude-x"
    assert message.response_id == "msg_A"
    assert message.provider_stop_reason == "end_turn"
    assert message.usage == Usage(input=10, output=7, total=17)


def test_case19_ping_anywhere_is_ignored() -> None:
    body = (
        PING + start() + PING + block(0, {"type": "text", "text": ""}) + PING + text(0, "a") + PING
    )
    body += text(0, "b") + stop(0) + PING + message_delta() + PING + END + PING
    assert done(body).message.content == [TextBlock(content="ab")]


def test_ping_without_event_name_is_ignored_too() -> None:
    body = start() + sse('{"type": "ping"}') + simple_text() + message_delta() + END
    assert done(body).message.content == [TextBlock(content="Hi")]


def test_data_only_events_dispatch_on_the_json_type() -> None:
    # A proxy that drops the `event:` lines still sends the JSON `type`.
    body = "".join(
        "data: " + line.split("data: ", 1)[1]
        for line in (start() + simple_text("x") + message_delta() + END).split("event: ")
        if line
    )
    assert "event:" not in body
    assert done(body).message.content == [TextBlock(content="x")]


def test_padded_json_is_parsed() -> None:
    # Anthropic pads data lines with trailing spaces (corpus notes section 4).
    body = start() + simple_text("pad") + message_delta() + END
    padded = body.replace("}\n\n", "}        \n\n")
    assert padded != body
    assert done(padded).message.content == [TextBlock(content="pad")]


# -- thinking ---------------------------------------------------------------------------


def test_case20_signature_fragments_are_concatenated() -> None:
    body = start() + block(0, {"type": "thinking", "thinking": "", "signature": ""})
    body += delta(0, type="thinking_delta", thinking="Let me ") + delta(
        0, type="thinking_delta", thinking="think."
    )
    body += delta(0, type="signature_delta", signature="AAAA") + delta(
        0, type="signature_delta", signature="BBBB"
    )
    body += (
        stop(0)
        + block(1, {"type": "text", "text": ""})
        + text(1, "42")
        + stop(1)
        + message_delta()
        + END
    )
    msg = done(body).message
    assert msg.content == [
        ThinkingBlock(content="Let me think.", signature="AAAABBBB"),
        TextBlock(content="42"),
    ]


def test_signature_only_thinking_block_is_kept() -> None:
    # The advisor corpus stream: a thinking block whose only delta is the signature.
    body = start() + block(0, {"type": "thinking", "thinking": "", "signature": ""}) + PING
    body += delta(0, type="signature_delta", signature="SIG") + stop(0) + message_delta() + END
    events = run(body)
    assert [e.type for e in events] == ["start", "thinking_start", "thinking_end", "done"]
    assert terminal(events).message.content == [ThinkingBlock(content="", signature="SIG")]


def test_bug21_thinking_without_signature_keeps_its_text() -> None:
    # ecosystem bug 21: the text must not be dropped when no signature arrives.
    body = start() + block(0, {"type": "thinking", "thinking": ""})
    body += (
        delta(0, type="thinking_delta", thinking="partial thought")
        + stop(0)
        + message_delta()
        + END
    )
    assert done(body).message.content == [ThinkingBlock(content="partial thought", signature=None)]


def test_case21_redacted_thinking_round_trips_as_opaque_payload() -> None:
    body = start() + block(0, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va=="}) + stop(0)
    body += simple_text("ok", 1) + message_delta() + END
    events = run(body)
    assert [e.type for e in events][:3] == ["start", "thinking_start", "thinking_end"]
    assert terminal(events).message.content == [
        ThinkingBlock(content="", signature="EmwKAhgBEgy3va==", redacted=True),
        TextBlock(content="ok"),
    ]


def test_a_stray_delta_on_a_redacted_thinking_block_is_ignored() -> None:
    body = start() + block(0, {"type": "redacted_thinking", "data": "OPAQUE"})
    body += delta(0, type="thinking_delta", thinking="leak?") + stop(0) + message_delta() + END
    assert done(body).message.content == [
        ThinkingBlock(content="", signature="OPAQUE", redacted=True)
    ]


def test_signature_delta_on_a_text_block_is_ignored() -> None:
    # provider-facts 2.1: signature_delta is meaningful only on thinking blocks (VAI ignores it).
    body = start() + block(0, {"type": "text", "text": ""}) + text(0, "t")
    body += delta(0, type="signature_delta", signature="S") + stop(0) + message_delta() + END
    assert done(body).message.content == [TextBlock(content="t", signature=None)]


# -- tool calls -------------------------------------------------------------------------


def test_one_tool_call_exact_events() -> None:
    body = start() + block(
        0, {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}
    )
    body += args(0, "") + args(0, '{"city": "Pa') + args(0, 'ris"}') + stop(0)
    body += message_delta("tool_use") + END
    events = run(body)
    call = ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"})
    assert events[:-1] == [
        StartEvent(),
        ToolCallStartEvent(content_index=0, id="toolu_1", name="get_weather"),
        ToolCallDeltaEvent(content_index=0, delta='{"city": "Pa', arguments={"city": "Pa"}),
        ToolCallDeltaEvent(content_index=0, delta='ris"}', arguments={"city": "Paris"}),
        ToolCallEndEvent(
            content_index=0, tool_call=call, raw_arguments='{"city": "Paris"}', strict=True
        ),
    ]
    t = terminal(events)
    assert isinstance(t, DoneEvent) and t.reason == "tool_use"
    assert t.message.content == [call]


def test_case22_empty_partial_json_is_skipped() -> None:
    body = start() + block(0, {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}})
    body += (
        args(0, "") + args(0, '{"a": 1}') + args(0, "") + stop(0) + message_delta("tool_use") + END
    )
    events = run(body)
    assert [e.delta for e in events if isinstance(e, ToolCallDeltaEvent)] == ['{"a": 1}']


def test_tool_use_with_empty_input_and_no_deltas_has_empty_arguments() -> None:
    body = (
        start()
        + block(0, {"type": "tool_use", "id": "toolu_1", "name": "now", "input": {}})
        + stop(0)
    )
    body += message_delta("tool_use") + END
    events = run(body)
    assert [e.type for e in events] == ["start", "toolcall_start", "toolcall_end", "done"]
    assert terminal(events).message.content == [ToolCall(id="toolu_1", name="now", arguments={})]


def test_case22_non_empty_input_in_start_is_respected() -> None:
    # Programmatic (code-execution deferred) tool calls carry their input in the start.
    body = start() + block(
        0, {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"q": "x", "n": 2}}
    )
    body += stop(0) + message_delta("tool_use") + END
    events = run(body)
    assert [e.delta for e in events if isinstance(e, ToolCallDeltaEvent)] == ['{"q":"x","n":2}']
    assert terminal(events).message.content == [
        ToolCall(id="toolu_1", name="f", arguments={"q": "x", "n": 2})
    ]


def test_input_json_deltas_replace_a_start_input() -> None:
    # As in the SDK (content.input = parse of the delta buffer): the deltas win.
    body = start() + block(
        0, {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"old": True}}
    )
    body += args(0, '{"new": 1}') + stop(0) + message_delta("tool_use") + END
    assert done(body).message.content == [ToolCall(id="toolu_1", name="f", arguments={"new": 1})]


def test_parallel_tool_calls() -> None:
    body = start() + simple_text("Both.")
    body += block(1, {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {}})
    body += args(1, '{"city": "Tokyo"}') + stop(1)
    body += block(2, {"type": "tool_use", "id": "toolu_b", "name": "get_time", "input": {}})
    body += (
        args(2, '{"tz": ') + args(2, '"Asia/Tokyo"}') + stop(2) + message_delta("tool_use") + END
    )
    t = done(body)
    assert t.reason == "tool_use"
    assert t.message.content == [
        TextBlock(content="Both."),
        ToolCall(id="toolu_a", name="get_weather", arguments={"city": "Tokyo"}),
        ToolCall(id="toolu_b", name="get_time", arguments={"tz": "Asia/Tokyo"}),
    ]


def test_a_repeated_tool_id_is_malformed() -> None:
    body = (
        start()
        + block(0, {"type": "tool_use", "id": "toolu_a", "name": "f", "input": {}})
        + stop(0)
    )
    body += (
        block(1, {"type": "tool_use", "id": "toolu_a", "name": "f", "input": {}}) + stop(1) + END
    )
    t = failed(body)
    assert t.error_message == "malformed event #4: tool_use at index 1 repeats the id 'toolu_a'"
    assert t.message.content == [ToolCall(id="toolu_a", name="f", arguments={})]


def test_the_same_start_sent_twice_opens_one_block() -> None:
    b = block(0, {"type": "tool_use", "id": "toolu_a", "name": "f", "input": {}})
    body = start() + b + b + args(0, '{"k": 1}') + stop(0) + message_delta("tool_use") + END
    assert done(body).message.content == [ToolCall(id="toolu_a", name="f", arguments={"k": 1})]


def test_deltas_of_the_wrong_type_for_their_block_are_ignored() -> None:
    # The SDK ignores them too (it checks content.type before applying a delta).
    body = start() + block(0, {"type": "tool_use", "id": "toolu_a", "name": "f", "input": {}})
    body += (
        text(0, "stray")
        + delta(0, type="thinking_delta", thinking="stray")
        + args(0, "{}")
        + stop(0)
    )
    body += block(1, {"type": "text", "text": ""}) + args(1, '{"x":1}') + text(1, "ok") + stop(1)
    body += message_delta("tool_use") + END
    assert done(body).message.content == [
        ToolCall(id="toolu_a", name="f", arguments={}),
        TextBlock(content="ok"),
    ]


# -- usage ------------------------------------------------------------------------------


def test_case23_message_delta_without_input_tokens_keeps_message_start_values() -> None:
    body = start(
        input_tokens=12,
        output_tokens=1,
        cache_creation_input_tokens=1830,
        cache_read_input_tokens=20480,
    )
    body += simple_text() + message_delta("end_turn", {"output_tokens": 11}) + END
    assert done(body).message.usage == Usage(
        input=12, output=11, cache_read=20480, cache_write=1830, total=22333
    )


def test_message_delta_usage_overwrites_the_fields_it_carries() -> None:
    # Cumulative (provider-facts 2.1): overwrite, never add; here cache_read drops to 0
    # as in the corpus compaction stream.
    body = start(input_tokens=100, output_tokens=7, cache_read_input_tokens=55096) + simple_text()
    body += (
        message_delta(
            "end_turn", {"input_tokens": 181, "cache_read_input_tokens": 0, "output_tokens": 8}
        )
        + END
    )
    assert done(body).message.usage == Usage(
        input=181, output=8, cache_read=0, cache_write=0, total=189
    )


def test_usage_values_of_the_wrong_type_are_ignored() -> None:
    body = start(input_tokens=5, output_tokens=1) + simple_text()
    body += (
        message_delta(
            "end_turn",
            {"output_tokens": "many", "input_tokens": True, "cache_read_input_tokens": None},
        )
        + END
    )
    assert done(body).message.usage == Usage(input=5, output=1, total=6)


# -- stop reasons -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason", "message"),
    [
        ("end_turn", "stop", None),
        ("stop_sequence", "stop", None),
        ("pause_turn", "stop", None),
        ("max_tokens", "length", None),
        ("model_context_window_exceeded", "length", None),
        ("refusal", "error", "The model refused to complete the request"),
        ("sensitive", "error", "Provider stopped with: sensitive"),
        ("compaction", "error", "Provider stopped with: compaction"),
        ("brand_new_reason", "error", "unrecognized stop reason 'brand_new_reason'"),
        (None, "stop", None),
    ],
)
def test_case26_every_stop_reason_maps_without_raising(
    raw: str | None, reason: str, message: str | None
) -> None:
    t = terminal(run(start() + simple_text() + message_delta(raw) + END))
    assert t.message.stop_reason == reason
    assert t.message.provider_stop_reason == raw
    assert t.message.error_message == message
    assert t.message.content == [TextBlock(content="Hi")]


def test_tool_use_stop_reason() -> None:
    body = start() + block(0, {"type": "tool_use", "id": "t1", "name": "f", "input": {}}) + stop(0)
    t = done(body + message_delta("tool_use") + END)
    assert (t.reason, t.message.provider_stop_reason) == ("tool_use", "tool_use")


def test_case26_refusal_carries_stop_details_explanation() -> None:
    details = {"type": "refusal", "category": "cyber", "explanation": "This could enable malware."}
    t = failed(
        start() + simple_text("I can't") + message_delta("refusal", stop_details=details) + END
    )
    assert t.error_message == "This could enable malware."
    assert t.message.provider_stop_reason == "refusal"
    assert t.message.content == [TextBlock(content="I can't")]
    # the details are kept verbatim too, with the other message_delta metadata
    assert t.message.provider_blocks == [
        ProviderBlock(provider_type="message_delta", position=1, data={"stop_details": details})
    ]


def test_explanation_is_not_used_for_other_stop_reasons() -> None:
    details = {"type": "refusal", "explanation": "should not hide the raw value"}
    t = failed(start() + simple_text() + message_delta("brand_new", stop_details=details) + END)
    assert t.error_message == "unrecognized stop reason 'brand_new'"


def test_case27_context_window_exceeded_is_length_with_the_raw_reason() -> None:
    t = done(start() + simple_text("cut") + message_delta("model_context_window_exceeded") + END)
    assert t.reason == "length"
    assert t.message.provider_stop_reason == "model_context_window_exceeded"


def test_stop_sequence_and_container_are_kept_in_a_message_delta_block() -> None:
    container = {"id": "container_1", "expires_at": "2026-01-01T00:00:00Z"}
    body = (
        start()
        + simple_text()
        + message_delta("stop_sequence", stop_sequence="###", container=container)
        + END
    )
    t = done(body)
    assert t.message.provider_stop_reason == "stop_sequence"
    assert t.message.provider_blocks == [
        ProviderBlock(
            provider_type="message_delta",
            position=1,
            data={"stop_sequence": "###", "container": container},
        )
    ]


def test_a_stop_reason_that_is_not_a_string_is_malformed() -> None:
    t = failed(start() + simple_text() + message_delta(5) + END)  # type: ignore[arg-type]
    assert t.error_message == "malformed event #5: message_delta stop_reason is not a string: 5"
    assert t.message.content == [TextBlock(content="Hi")]


# -- server tools, citations, compaction, unknown blocks ----------------------------------


def test_server_tool_use_is_a_provider_block_with_its_input_assembled() -> None:
    result = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
              "content": [{"type": "web_search_result", "title": "T", "url": "https://example.org/a"}]}  # fmt: skip
    body = start() + simple_text("Searching.")
    body += block(
        1, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    )
    body += args(1, "") + args(1, '{"query": "Paris') + args(1, ' weather"}') + stop(1)
    body += block(2, result) + stop(2)
    body += (
        block(3, {"type": "text", "text": ""}) + text(3, "Sunny.") + stop(3) + message_delta() + END
    )
    t = done(body)
    assert t.message.content == [TextBlock(content="Searching."), TextBlock(content="Sunny.")]
    assert t.message.provider_blocks == [
        ProviderBlock(
            provider_type="server_tool_use",
            position=1,
            data={
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "web_search",
                "input": {"query": "Paris weather"},
            },
        ),
        ProviderBlock(provider_type="web_search_tool_result", position=1, data=result),
    ]


def test_mcp_tool_use_input_is_assembled_too() -> None:
    body = start() + block(
        0,
        {
            "type": "mcp_tool_use",
            "id": "mcptoolu_1",
            "name": "ask",
            "server_name": "s",
            "input": {},
        },
    )
    body += args(0, '{"q": 1}') + stop(0) + message_delta() + END
    (pb,) = done(body).message.provider_blocks
    assert pb.data == {
        "type": "mcp_tool_use",
        "id": "mcptoolu_1",
        "name": "ask",
        "server_name": "s",
        "input": {"q": 1},
    }


def test_citations_are_kept_as_a_provider_block_after_their_text() -> None:
    citation = {
        "type": "web_search_result_location",
        "cited_text": "24°C",
        "url": "https://example.org/a",
    }
    body = start() + simple_text("Per the forecast, ")
    body += block(1, {"citations": [], "type": "text", "text": ""}) + delta(
        1, type="citations_delta", citation=citation
    )
    body += text(1, "it is 24°C") + stop(1) + message_delta() + END
    t = done(body)
    assert t.message.content == [
        TextBlock(content="Per the forecast, "),
        TextBlock(content="it is 24°C"),
    ]
    assert t.message.provider_blocks == [
        ProviderBlock(
            provider_type="citations",
            position=2,
            data={"content_index": 1, "citations": [citation]},
        )
    ]


def test_compaction_block_takes_its_compaction_delta() -> None:
    body = start() + block(0, {"type": "compaction", "content": None}) + PING
    body += delta(0, type="compaction_delta", content="Summary of the earlier turns.") + stop(0)
    body += (
        block(1, {"type": "text", "text": ""}) + text(1, "Hello!") + stop(1) + message_delta() + END
    )
    t = done(body)
    assert t.message.content == [TextBlock(content="Hello!")]
    assert t.message.provider_blocks == [
        ProviderBlock(
            provider_type="compaction",
            position=0,
            data={"type": "compaction", "content": "Summary of the earlier turns."},
        )
    ]


def test_fallback_block_is_kept_and_names_the_serving_model() -> None:
    fb = {
        "type": "fallback",
        "from": {"model": "claude-a"},
        "to": {"model": "claude-b"},
        "trigger": {"type": "refusal"},
    }
    body = start(model="claude-a") + block(0, fb) + stop(0) + simple_text(index=1)
    t = done(body + message_delta() + END)
    assert t.message.model == "claude-b"
    assert t.message.provider_blocks == [
        ProviderBlock(provider_type="fallback", position=0, data=fb)
    ]


def test_unknown_events_and_block_types_are_passed_over() -> None:
    body = (
        start()
        + sse({"type": "brand_new_event", "x": 1})
        + block(0, {"type": "hologram", "data": [1]})
    )
    body += delta(0, type="hologram_delta", frame=2) + stop(0)
    body += simple_text(index=1) + message_delta() + END
    t = done(body)
    assert t.message.content == [TextBlock(content="Hi")]
    assert t.message.provider_blocks == [
        ProviderBlock(provider_type="hologram", position=0, data={"type": "hologram", "data": [1]})
    ]


# -- errors -------------------------------------------------------------------------------

OVERLOADED = sse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})


def test_case24_overloaded_error_as_first_event_is_a_529() -> None:
    t = failed(OVERLOADED)
    assert t.error_message == "Overloaded"
    assert t.message.content == []
    assert t.error is not None
    assert (t.error.status, t.error.kind, t.error.retryable) == (529, "overloaded", True)
    assert t.error.provider_type == "overloaded_error"


def test_case24_first_means_before_message_start_pings_do_not_count() -> None:
    t = failed(PING + OVERLOADED)
    assert t.error is not None and t.error.status == 529


def test_case25_error_after_text_keeps_the_partial_content() -> None:
    body = start() + block(0, {"type": "text", "text": ""}) + text(0, "The moons are") + OVERLOADED
    t = failed(body)
    assert t.reason == "error"
    assert t.error_message == "Overloaded"
    assert t.message.content == [TextBlock(content="The moons are")]
    assert t.error is not None
    assert t.error.status is None  # bug 30 (ecosystem.md): not HTTP 200, not invented
    assert (t.error.kind, t.error.provider_type) == ("overloaded", "overloaded_error")


def test_error_event_with_another_type() -> None:
    body = (
        start()
        + simple_text()
        + sse({"type": "error", "error": {"type": "api_error", "message": "Internal server error"}})
    )
    t = failed(body)
    assert t.error_message == "Internal server error"
    assert t.error is not None and t.error.provider_type == "api_error"
    assert t.message.content == [TextBlock(content="Hi")]


def test_error_event_with_non_json_data_uses_its_text() -> None:
    t = failed(start() + sse("upstream connect error", name="error"))
    assert t.error_message == "upstream connect error"


def test_error_event_without_a_message() -> None:
    t = failed(start() + sse({"type": "error"}))
    assert t.error_message == 'error event: {"type": "error"}'


def test_case61_events_after_message_stop_are_dropped() -> None:
    body = start() + simple_text() + message_delta() + END + simple_text("late") + OVERLOADED + END
    events = run(body)
    assert [e.type for e in events] == ["start", "text_start", "text_delta", "text_end", "done"]


# -- EOF ------------------------------------------------------------------------------------


def test_bug27_eof_inside_input_json_keeps_the_partial_call() -> None:
    body = start() + simple_text("Let me check.")
    body += block(1, {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}})
    body += args(1, '{"city": "San Fr')
    t = failed(body)
    assert t.error_message == "stream ended without message_stop"
    assert t.message.provider_stop_reason is None
    assert t.message.content == [
        TextBlock(content="Let me check."),
        ToolCall(id="toolu_1", name="get_weather", arguments={"city": "San Fr"}),
    ]


def test_bug28_message_delta_without_message_stop_is_an_error() -> None:
    # Decision (specs/protocols/anthropic-messages.md, EOF): only message_stop ends a stream.
    t = failed(start() + simple_text() + message_delta("end_turn", {"output_tokens": 3}))
    assert t.error_message == "stream ended without message_stop"
    assert t.message.provider_stop_reason == "end_turn"
    assert t.message.usage == Usage(input=10, output=3, total=13)
    assert t.message.content == [TextBlock(content="Hi")]


def test_empty_body_is_an_error() -> None:
    t = failed(b"")
    assert t.error_message == "stream ended without message_stop (no events received)"


def test_a_server_tool_block_open_at_eof_is_kept() -> None:
    body = start() + block(
        0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    )
    body += args(0, '{"query": "hal')
    t = failed(body)
    assert t.message.provider_blocks == [
        ProviderBlock(
            provider_type="server_tool_use",
            position=0,
            data={
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "web_search",
                "input": {"query": "hal"},
            },
        )
    ]


def test_a_start_input_is_kept_when_the_stream_ends_before_the_block_stop() -> None:
    body = start() + block(0, {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}})
    assert failed(body).message.content == [ToolCall(id="toolu_1", name="f", arguments={"a": 1})]


def test_message_stop_closes_blocks_that_never_got_their_stop() -> None:
    body = (
        start() + block(0, {"type": "text", "text": ""}) + text(0, "open") + message_delta() + END
    )
    assert done(body).message.content == [TextBlock(content="open")]


# -- malformed input ---------------------------------------------------------------------


def test_malformed_json_fails_and_keeps_the_text() -> None:
    body = (
        start()
        + block(0, {"type": "text", "text": ""})
        + text(0, "kept")
        + "event: content_block_delta\ndata: {oops\n\n"
    )
    t = failed(body)
    assert t.error_message.startswith("malformed JSON in SSE event #4 (content_block_delta): ")
    assert t.message.content == [TextBlock(content="kept")]


def test_malformed_json_still_flushes_a_pending_provider_block() -> None:
    body = start() + block(
        0, {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}
    )
    t = failed(body + "data: {oops\n\n")
    assert [p.provider_type for p in t.message.provider_blocks] == ["server_tool_use"]


def test_framing_error_keeps_content_and_pending_provider_blocks() -> None:
    body = (start() + simple_text("ok")).encode()
    body += block(1, {"type": "web_fetch_tool_result", "tool_use_id": "s1", "content": {}}).encode()
    body += b"event: content_block_delta\ndata: \xff\xfe\n\n"
    t = failed(body)
    assert t.error_message.startswith("framing error at byte ")
    assert t.message.content == [TextBlock(content="ok")]
    assert [p.provider_type for p in t.message.provider_blocks] == ["web_fetch_tool_result"]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("[1, 2]", "malformed event #2: message event data is not a JSON object: [1, 2]"),
        ("null", "malformed event #2: message event data is not a JSON object: null"),
        ('{"type": "content_block_delta", "delta": {"type": "text_delta", "text": "x"}}',
         "malformed event #2: content_block_delta without an integer index: None"),
        ('{"type": "content_block_delta", "index": 7, "delta": {"type": "text_delta", "text": "x"}}',
         "malformed event #2: content_block_delta for index 7, which is not an open block"),
        ('{"type": "content_block_start", "index": 0, "content_block": "text"}',
         "malformed event #2: content_block_start at index 0 without a content_block object"),
        ('{"type": "content_block_start", "index": 0, "content_block": {"type": "redacted_thinking"}}',
         "malformed event #2: redacted_thinking block at index 0: 'data' is not a string"),
        ('{"type": "message_delta", "delta": "end_turn"}',
         "malformed event #2: message_delta with a delta that is not an object"),
    ],
)  # fmt: skip
def test_malformed_events_fail_with_a_message(payload: str, message: str) -> None:
    assert failed(start() + sse(payload)).error_message == message


@pytest.mark.parametrize(
    ("bad_delta", "message"),
    [
        (
            '"just a string"',
            "malformed event #3: content_block_delta at index 0 without a delta object",
        ),
        (
            '{"type": "text_delta", "text": 5}',
            "malformed event #3: text_delta at index 0: 'text' is not a string",
        ),
        (
            '{"type": "text_delta"}',
            "malformed event #3: text_delta at index 0: 'text' is not a string",
        ),
    ],
)
def test_malformed_deltas_fail(bad_delta: str, message: str) -> None:
    body = start() + block(0, {"type": "text", "text": ""})
    body += f'event: content_block_delta\ndata: {{"type": "content_block_delta", "index": 0, "delta": {bad_delta}}}\n\n'
    t = failed(body)
    assert t.error_message == message


def test_malformed_delta_after_text_keeps_the_text() -> None:
    body = (
        start()
        + block(0, {"type": "text", "text": ""})
        + text(0, "kept")
        + delta(0, type="text_delta", text=None)
    )
    t = failed(body)
    assert t.message.content == [TextBlock(content="kept")]


def test_missing_message_start_is_tolerated() -> None:
    t = done(simple_text() + message_delta() + END)
    assert t.message.content == [TextBlock(content="Hi")]
    assert (t.message.model, t.message.response_id) == (None, None)


def test_a_second_message_start_is_ignored() -> None:
    body = (
        start("msg_1", "m1", input_tokens=3) + simple_text() + start("msg_2", "m2", input_tokens=99)
    )
    t = done(body + message_delta("end_turn", {"output_tokens": 2}) + END)
    assert (t.message.response_id, t.message.model, t.message.usage.input) == ("msg_1", "m1", 3)


# -- more cases ---------------------------------------------------------------------------


def test_json_nested_too_deeply_is_an_error_not_an_exception() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    t = failed(start() + simple_text() + f"event: content_block_delta\ndata: {deep}\n\n")
    assert t.error_message.startswith("malformed JSON in SSE event #5 (content_block_delta): ")
    assert t.message.content == [TextBlock(content="Hi")]


def _body(name: str) -> bytes:
    from stream_harness.recordings.cassette import load_cassette

    path = REPO / "cassettes" / "anthropic-messages" / f"{name}.yaml"
    return load_cassette(path).interactions[0].response.body


def test_index_reuse_after_a_server_tool_result_recovers_every_block_with_a_warning() -> None:
    # anthropic-sdk-typescript#879: the text block's start says index 1 (the result's),
    # its deltas and stop say 2. Before issue 14 this ended in an error losing the text.
    norm = Normalizer()
    events = norm.feed(_body("server_tool_index_reuse")) + norm.close()
    last = events[-1]
    assert last.type == "done" and last.reason == "stop"
    assert [b.content for b in last.message.content if b.type == "text"] == [
        "Spain has about 49 million inhabitants."
    ]
    assert [p.provider_type for p in last.message.provider_blocks] == [
        "server_tool_use",
        "web_search_tool_result",
    ]
    assert norm.warnings == [
        "content_block_start reused index 1 of a stopped block; taken as index 2"
    ]


def test_deltas_at_the_reused_index_itself_reach_the_moved_block() -> None:
    body = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"x","usage":{}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"b"}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    norm = Normalizer()
    last = (norm.feed(body) + norm.close())[-1]
    assert last.type == "done"
    assert [b.content for b in last.message.content] == ["a", "b"]
    assert len(norm.warnings) == 1


def test_prepopulated_message_start_content_becomes_blocks_and_its_stop_reason_counts() -> None:
    norm = Normalizer()
    last = (norm.feed(_body("prepopulated_message_start")) + norm.close())[-1]
    assert last.type == "done" and last.reason == "tool_use"
    assert last.message.provider_stop_reason == "tool_use"
    assert [b.type for b in last.message.content] == ["text", "tool_call"]
    assert last.message.content[1].arguments == {"city": "Canberra"}
    assert [(p.provider_type, p.position) for p in last.message.provider_blocks] == [
        ("server_tool_use", 1),
        ("web_search_tool_result", 1),
    ]
