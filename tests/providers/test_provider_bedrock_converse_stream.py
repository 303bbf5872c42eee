"""The bedrock-converse-stream reference normalizer on hand-built frames and bundled cassettes.

Unit tests cite the conformance case (provider-facts.md section 7) or the ecosystem bug
(ecosystem.md section 6) they pin. Bodies are real AWS event-stream frames made with
``encode_message``; expected values are read off the payloads written in each test
(texts, ids, token counts), never produced by running the normalizer.
"""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from cassette_checks import Translate, terminal, text_block_opening
from stream_harness.contract.events import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
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
from stream_harness.recordings.golden import expected_path, read_expected
from stream_harness.wire.eventstream import encode_message

REPO = Path(__file__).resolve().parents[2]
CASSETTES = sorted((REPO / "cassettes" / "bedrock-converse-stream").glob("*.yaml"))
PROTOCOL = "bedrock-converse-stream"


# -- helpers --------------------------------------------------------------------------


def frame(event_type: str, payload: dict[str, Any], *, pad: bool = True) -> bytes:
    """One event frame as Bedrock sends it (headers in Bedrock's order, "p" padding)."""
    body = {**payload, "p": "abcdefgh"} if pad else payload
    headers = {
        ":event-type": event_type,
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return encode_message(headers, json.dumps(body).encode())


def raw_frame(event_type: str, payload: bytes) -> bytes:
    headers = {":event-type": event_type, ":message-type": "event"}
    return encode_message(headers, payload)


def exception(exception_type: str, payload: dict[str, Any] | None) -> bytes:
    headers = {
        ":exception-type": exception_type,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_message(headers, b"" if payload is None else json.dumps(payload).encode())


def start() -> bytes:
    return frame("messageStart", {"role": "assistant"})


def text(index: int, value: Any) -> bytes:
    return frame("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": value}})


def reasoning(index: int, **fields: Any) -> bytes:
    return frame(
        "contentBlockDelta", {"contentBlockIndex": index, "delta": {"reasoningContent": fields}}
    )


def tool_start(index: int, tool_id: str, name: str, **extra: Any) -> bytes:
    tool = {"toolUseId": tool_id, "name": name, **extra}
    return frame("contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": tool}})


def tool_input(index: int, fragment: Any) -> bytes:
    return frame(
        "contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": fragment}}}
    )


def block_stop(index: int) -> bytes:
    return frame("contentBlockStop", {"contentBlockIndex": index})


def message_stop(reason: str | None = "end_turn", **extra: Any) -> bytes:
    payload: dict[str, Any] = {**extra}
    if reason is not None:
        payload["stopReason"] = reason
    return frame("messageStop", payload)


def metadata(inp: int, out: int, **usage: int) -> bytes:
    counts = {"inputTokens": inp, "outputTokens": out, **usage}
    return frame("metadata", {"usage": counts, "metrics": {"latencyMs": 100}})


def body(*frames: bytes) -> bytes:
    return b"".join(frames)


TRANSLATE = Translate(PROTOCOL)
run = TRANSLATE.run
done = TRANSLATE.done
failed = TRANSLATE.failed


def frame_spans(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each complete frame, read from the 4-byte total length prefix."""
    spans, pos = [], 0
    while pos + 4 <= len(data):
        (total,) = struct.unpack_from(">I", data, pos)
        if total < 16 or pos + total > len(data):
            break
        spans.append((pos, pos + total))
        pos += total
    return spans


# -- the basics -------------------------------------------------------------------------


def test_plain_text_exact_events() -> None:
    # Text blocks have no contentBlockStart on the wire (provider-facts.md 2.5): the first
    # delta opens the block; metadata after messageStop fills the usage (case 46).
    data = body(
        start(),
        text(0, "Hello"),
        text(0, " world"),
        block_stop(0),
        message_stop("end_turn"),
        metadata(7, 2, totalTokens=9),
    )
    assert run(data) == [
        *text_block_opening("Hello", " world"),
        DoneEvent(
            reason="stop",
            message=AssistantMessage(
                content=[TextBlock(content="Hello world")],
                stop_reason="stop",
                provider_stop_reason="end_turn",
                usage=Usage(input=7, output=2, total=9),
                provider_blocks=[
                    ProviderBlock(
                        provider_type="metadata",
                        position=1,
                        # the "p" padding is dropped; everything else is kept
                        data={
                            "usage": {"inputTokens": 7, "outputTokens": 2, "totalTokens": 9},
                            "metrics": {"latencyMs": 100},
                        },
                    )
                ],
            ),
        ),
    ]


def test_empty_text_delta_opens_no_block() -> None:
    # corpus pydantic-ai__test_bedrock_model_stream_empty_text_delta: index 0 gets one ""
    # delta and a stop, then reasoning at 1 and text at 2.
    t = done(
        body(
            start(),
            text(0, ""),
            block_stop(0),
            reasoning(1, text="think"),
            block_stop(1),
            text(2, "Hi"),
            block_stop(2),
            message_stop(),
        )
    )
    assert t.message.content == [ThinkingBlock(content="think"), TextBlock(content="Hi")]


def test_padding_field_is_ignored_everywhere() -> None:
    t = done(body(start(), text(0, "x"), message_stop(), metadata(1, 1)))
    assert all("p" not in b.data for b in t.message.provider_blocks)


def test_message_start_is_optional() -> None:
    t = done(body(text(0, "no start"), block_stop(0), message_stop()))
    assert t.message.content == [TextBlock(content="no start")]


# -- reasoning ----------------------------------------------------------------------------


def test_reasoning_text_and_signature_make_one_thinking_block() -> None:
    t = done(
        body(
            start(),
            reasoning(0, text="Let me"),
            reasoning(0, text=" think."),
            reasoning(0, signature="U0lHTkFUVVJF"),
            block_stop(0),
            text(1, "Answer."),
            block_stop(1),
            message_stop(),
        )
    )
    assert t.message.content == [
        ThinkingBlock(content="Let me think.", signature="U0lHTkFUVVJF"),
        TextBlock(content="Answer."),
    ]


def test_signature_only_reasoning_block_is_a_thinking_block() -> None:
    t = done(body(start(), reasoning(0, signature="QUJD"), block_stop(0), message_stop()))
    assert t.message.content == [ThinkingBlock(content="", signature="QUJD")]


def test_case45_redacted_content_deltas_are_joined_as_bytes() -> None:
    # Three independent base64 blobs (4, 5 and 2 bytes: each piece carries padding), so
    # the joined token is base64 of the concatenated bytes, not of the strings.
    pieces = [b"\x00\x01\x02\x03", b"redac", b"\xff\xfe"]
    data = body(
        start(),
        *(reasoning(0, redactedContent=base64.b64encode(p).decode()) for p in pieces),
        block_stop(0),
        text(1, "ok"),
        block_stop(1),
        message_stop(),
    )
    expected = base64.b64encode(b"\x00\x01\x02\x03redac\xff\xfe").decode()
    assert expected == "AAECA3JlZGFj//4="
    t = done(data)
    assert t.message.content == [
        ThinkingBlock(content="", signature=expected, redacted=True),
        TextBlock(content="ok"),
    ]


def test_redacted_block_keeps_its_place_before_later_blocks() -> None:
    # The block opens at its first fragment, so its content_index is in wire order even
    # though the redacted payload is only known at contentBlockStop.
    events = run(body(start(), reasoning(0, redactedContent="QUI="), block_stop(0), message_stop()))
    assert [e.type for e in events] == ["start", "thinking_start", "thinking_end", "done"]
    assert terminal(events).message.content == [
        ThinkingBlock(content="", signature="QUI=", redacted=True)
    ]


def test_legacy_redacted_data_field() -> None:
    # provider-facts.md 2.5: reasoningContent.data is the legacy name of the blob.
    t = done(body(start(), reasoning(0, data="QUJD"), block_stop(0), message_stop()))
    assert t.message.content == [ThinkingBlock(content="", signature="QUJD", redacted=True)]


def test_redacted_content_that_is_not_base64_is_malformed() -> None:
    t = failed(body(start(), text(0, "kept"), reasoning(1, redactedContent="not base64!")))
    assert "redactedContent at index 1 is not base64" in t.error_message
    assert t.message.content == [TextBlock(content="kept")]


def test_redacted_content_still_pending_at_an_error_is_kept() -> None:
    t = failed(
        body(
            start(),
            reasoning(0, redactedContent="QUI="),
            exception("internalServerException", {"message": "boom"}),
        )
    )
    assert t.message.content == [ThinkingBlock(content="", signature="QUI=", redacted=True)]


# -- tool use -----------------------------------------------------------------------------


def test_tool_use_exact_events() -> None:
    data = body(
        start(),
        tool_start(0, "tooluse_abc", "get_weather"),
        tool_input(0, '{"city":'),
        tool_input(0, ' "Paris"}'),
        block_stop(0),
        message_stop("tool_use"),
        metadata(10, 5, totalTokens=15),
    )
    events = run(data)
    call = ToolCall(id="tooluse_abc", name="get_weather", arguments={"city": "Paris"})
    assert events[:6] == [
        StartEvent(),
        ToolCallStartEvent(content_index=0, id="tooluse_abc", name="get_weather"),
        ToolCallDeltaEvent(content_index=0, delta='{"city":', arguments={}),
        ToolCallDeltaEvent(content_index=0, delta=' "Paris"}', arguments={"city": "Paris"}),
        ToolCallEndEvent(
            content_index=0, tool_call=call, raw_arguments='{"city": "Paris"}', strict=True
        ),
        events[5],
    ]
    t = terminal(events)
    assert isinstance(t, DoneEvent) and t.reason == "tool_use"
    assert t.message.content == [call]


def test_two_tool_uses_in_one_message() -> None:
    t = done(
        body(
            start(),
            text(0, "Both."),
            block_stop(0),
            tool_start(1, "t1", "a"),
            tool_input(1, '{"x":1}'),
            block_stop(1),
            tool_start(2, "t2", "b"),
            tool_input(2, '{"y":2}'),
            block_stop(2),
            message_stop("tool_use"),
        )
    )
    assert t.message.content == [
        TextBlock(content="Both."),
        ToolCall(id="t1", name="a", arguments={"x": 1}),
        ToolCall(id="t2", name="b", arguments={"y": 2}),
    ]


def test_tool_use_without_input_has_empty_arguments() -> None:
    t = done(body(start(), tool_start(0, "t1", "ping"), block_stop(0), message_stop("tool_use")))
    assert t.message.content == [ToolCall(id="t1", name="ping", arguments={})]


def test_tool_input_delta_without_its_start_is_malformed() -> None:
    t = failed(body(start(), text(0, "kept"), tool_input(1, '{"a":1}')))
    assert "toolUse delta at index 1 without a toolUse contentBlockStart" in t.error_message
    assert t.message.content == [TextBlock(content="kept")]


def test_repeated_tool_use_id_is_malformed() -> None:
    # contract C10: ids are unique in a message.
    t = failed(body(start(), tool_start(0, "t1", "a"), block_stop(0), tool_start(1, "t1", "a")))
    assert "repeats the id 't1'" in t.error_message
    assert t.message.content == [ToolCall(id="t1", name="a", arguments={})]


def test_end_turn_with_tool_calls_stays_stop() -> None:
    # specs/stop_reasons.yaml: Bedrock has no tool_calls override; the wire reason wins.
    t = done(body(start(), tool_start(0, "t1", "a"), block_stop(0), message_stop("end_turn")))
    assert t.reason == "stop"


def test_server_tool_use_and_its_result_are_provider_blocks() -> None:
    # corpus code_execution_tool_stream (Nova code interpreter): the service runs the
    # tool, so it is not a call for the client; the client tool after it is.
    data = body(
        start(),
        tool_start(0, "tooluse_s", "nova_code_interpreter", type="server_tool_use"),
        tool_input(0, '{"snippet":"1+1"}'),
        block_stop(0),
        frame(
            "contentBlockStart",
            {
                "contentBlockIndex": 1,
                "start": {"toolResult": {"toolUseId": "tooluse_s", "status": "success"}},
            },
        ),
        frame(
            "contentBlockDelta",
            {"contentBlockIndex": 1, "delta": {"toolResult": [{"json": {"stdOut": "2"}}]}},
        ),
        block_stop(1),
        tool_start(2, "tooluse_c", "final_result", type="tool_use"),
        tool_input(2, '{"result":2}'),
        block_stop(2),
        message_stop("tool_use"),
    )
    t = done(data)
    assert t.message.content == [
        ToolCall(id="tooluse_c", name="final_result", arguments={"result": 2})
    ]
    assert t.message.provider_blocks == [
        ProviderBlock(
            provider_type="server_tool_use",
            position=0,
            data={
                "toolUseId": "tooluse_s",
                "name": "nova_code_interpreter",
                "type": "server_tool_use",
                "input": {"snippet": "1+1"},
            },
        ),
        ProviderBlock(
            provider_type="toolResult",
            position=0,
            data={
                "toolUseId": "tooluse_s",
                "status": "success",
                "content": [{"json": {"stdOut": "2"}}],
            },
        ),
    ]


def test_citations_are_kept_next_to_their_text_block() -> None:
    citation = {"title": "Doc", "sourceContent": [{"text": "quote"}]}
    t = done(
        body(
            start(),
            text(0, "Claim."),
            frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"citation": citation}}),
            block_stop(0),
            message_stop(),
        )
    )
    assert t.message.provider_blocks == [
        ProviderBlock(
            provider_type="citations",
            position=1,
            data={"content_index": 0, "citations": [citation]},
        )
    ]


def test_additional_model_response_fields_are_kept() -> None:
    fields = {"stop_sequence": "###"}
    t = done(
        body(
            start(),
            text(0, "a"),
            message_stop("stop_sequence", additionalModelResponseFields=fields),
        )
    )
    assert t.reason == "stop"
    assert ProviderBlock(
        provider_type="additionalModelResponseFields", position=1, data=fields
    ) in (t.message.provider_blocks)


# -- stop reasons (case 47) and usage (case 46) ---------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("tool_use", "tool_use"),
    ],
)
def test_stop_reasons_that_end_in_done(raw: str, reason: str) -> None:
    t = done(body(start(), text(0, "x"), message_stop(raw)))
    assert (t.reason, t.message.provider_stop_reason) == (reason, raw)


@pytest.mark.parametrize(
    "raw",
    ["guardrail_intervened", "content_filtered", "malformed_model_output", "malformed_tool_use"],
)
def test_case47_stop_reasons_that_end_in_error(raw: str) -> None:
    t = failed(body(start(), text(0, "partial"), block_stop(0), message_stop(raw), metadata(3, 4)))
    assert t.message.provider_stop_reason == raw
    assert t.message.content == [TextBlock(content="partial")]
    assert t.message.usage == Usage(input=3, output=4, total=7)


def test_unknown_stop_reason_is_an_error_naming_it() -> None:
    t = failed(body(start(), text(0, "x"), message_stop("brand_new_reason")))
    assert t.error_message == "unrecognized stop reason 'brand_new_reason'"


def test_message_stop_without_a_reason_is_stop() -> None:
    # stop_reasons.yaml raw=null row: messageStop is the end marker.
    assert done(body(start(), text(0, "x"), message_stop(None))).reason == "stop"


def test_case46_metadata_after_message_stop_updates_usage() -> None:
    t = done(
        body(
            start(),
            text(0, "x"),
            message_stop(),
            metadata(11, 22, cacheReadInputTokens=300, cacheWriteInputTokens=40, totalTokens=373),
        )
    )
    assert t.message.usage == Usage(input=11, output=22, cache_read=300, cache_write=40, total=373)


def test_metadata_before_message_stop_counts_too() -> None:
    # VAI and PI-M accept either order (provider-facts.md 2.5).
    t = done(body(start(), text(0, "x"), metadata(5, 6), message_stop()))
    assert t.message.usage == Usage(input=5, output=6, total=11)


def test_message_stop_without_metadata_ends_with_zero_usage() -> None:
    t = done(body(start(), text(0, "x"), message_stop()))
    assert t.message.usage == Usage()


def test_usage_without_total_is_the_sum() -> None:
    t = done(body(start(), text(0, "x"), message_stop(), metadata(5, 6, cacheReadInputTokens=7)))
    assert t.message.usage == Usage(input=5, output=6, cache_read=7, total=18)


def test_usage_counters_of_the_wrong_type_are_ignored() -> None:
    data = body(
        start(),
        text(0, "x"),
        message_stop(),
        frame("metadata", {"usage": {"inputTokens": "5", "outputTokens": True, "totalTokens": 3}}),
    )
    assert done(data).message.usage == Usage(total=3)


# -- exceptions and errors ----------------------------------------------------------------------


def test_case44_throttling_exception_midstream_is_a_rate_limit_not_an_overflow() -> None:
    t = failed(
        body(
            start(),
            text(0, "partial answer"),
            exception(
                "throttlingException",
                {"message": "Too many tokens, please wait before trying again."},
            ),
        )
    )
    assert t.error_message == "Too many tokens, please wait before trying again."
    assert t.message.content == [TextBlock(content="partial answer")]
    assert t.error is not None
    assert t.error.kind == "rate_limit"
    assert t.error.retryable is True
    assert t.error.provider_type == "throttlingException"
    assert t.error.status is None  # the response was a 200; no status is invented


@pytest.mark.parametrize(
    ("exception_type", "message", "kind", "retryable"),
    [
        ("modelStreamErrorException", "Model stream error", "transient", True),
        ("internalServerException", "Internal error", "transient", True),
        (
            "serviceUnavailableException",
            "Bedrock is unable to process your request.",
            "overloaded",
            True,
        ),
        ("validationException", "Input is too long for requested model.", "overflow", False),
    ],
)
def test_exception_frames_are_classified_by_their_type(
    exception_type: str, message: str, kind: str, retryable: bool
) -> None:
    # provider-facts.md 2.5 (the exception members), 5.4; specs/retry.yaml bedrock rows.
    t = failed(body(start(), text(0, "x"), exception(exception_type, {"message": message})))
    assert t.error_message == message
    assert t.error is not None
    assert (t.error.kind, t.error.retryable, t.error.provider_type) == (
        kind,
        retryable,
        exception_type,
    )


def test_exception_without_a_message_is_named_by_its_type() -> None:
    t = failed(body(start(), exception("modelStreamErrorException", None)))
    assert t.error_message == "modelStreamErrorException"


def test_exception_after_message_stop_keeps_the_stop_reason() -> None:
    t = failed(
        body(
            start(),
            text(0, "x"),
            message_stop("end_turn"),
            exception("internalServerException", {}),
        )
    )
    assert t.message.provider_stop_reason == "end_turn"
    assert t.message.content == [TextBlock(content="x")]


def test_error_message_type_frame_is_an_error() -> None:
    # AWS ":message-type: error" frames carry :error-code / :error-message headers; VAI
    # drops them silently (PF 1.2), which would be a silent success.
    err = encode_message(
        {":message-type": "error", ":error-code": "InternalFailure", ":error-message": "It broke"},
        b"",
    )
    t = failed(body(start(), text(0, "kept"), err))
    assert t.error_message == "It broke"
    assert t.message.content == [TextBlock(content="kept")]


def test_case61_frames_after_an_exception_are_dropped() -> None:
    events = run(
        body(start(), exception("internalServerException", {"message": "x"}), text(0, "late"))
    )
    assert [e.type for e in events] == ["start", "error"]


def test_unknown_event_and_message_types_are_passed_over() -> None:
    odd = encode_message({":message-type": "heartbeat"}, b"{}")
    t = done(body(start(), frame("somethingNew", {"x": 1}), odd, text(0, "x"), message_stop()))
    assert t.message.content == [TextBlock(content="x")]


# -- framing (cases 42, 43) and EOF ---------------------------------------------------------------


def test_case42_message_crc_mismatch_is_an_error_keeping_content() -> None:
    good = body(start(), text(0, "kept"))
    bad = bytearray(text(0, "lost"))
    bad[-6] ^= 0x01  # a payload byte: the message CRC no longer matches
    t = failed(good + bytes(bad) + message_stop())
    assert (
        t.error_message
        == f"framing error at byte {len(good)}: message CRC mismatch in the frame at byte {len(good)}"
    )
    assert t.message.content == [TextBlock(content="kept")]


def test_case42_prelude_crc_mismatch_is_an_error() -> None:
    good = body(start(), text(0, "kept"))
    bad = bytearray(text(0, "lost"))
    bad[2] ^= 0x01  # the total length: the prelude CRC no longer matches
    t = failed(good + bytes(bad))
    assert "prelude CRC mismatch" in t.error_message
    assert t.message.content == [TextBlock(content="kept")]


def test_case43_leftover_bytes_at_the_end_are_an_error() -> None:
    good = body(start(), text(0, "kept"))
    partial = text(0, "more")[:20]
    t = failed(good + partial)
    assert (
        t.error_message
        == f"framing error at byte {len(good)}: incomplete event-stream frame: 20 bytes remain"
    )
    assert t.message.content == [TextBlock(content="kept")]


def test_case43_leftover_bytes_after_a_complete_message_are_still_an_error() -> None:
    # Decision (spec: "EOF"): a body is complete only if every byte belongs to a frame.
    t = failed(body(start(), text(0, "x"), message_stop(), metadata(1, 1)) + b"\x00\x00")
    assert "incomplete event-stream frame: 2 bytes remain" in t.error_message
    assert t.message.provider_stop_reason == "end_turn"


def test_eof_without_message_stop_is_an_error_keeping_content() -> None:
    # bugs 27-29 (ecosystem.md section 6): a cut stream is an error, not a short answer.
    t = failed(body(start(), text(0, "Step one"), block_stop(0), metadata(3, 2)))
    assert t.error_message == "stream ended without messageStop"
    assert t.message.content == [TextBlock(content="Step one")]
    assert t.message.usage == Usage(input=3, output=2, total=5)


def test_empty_body_is_an_error() -> None:
    t = failed(b"")
    assert t.error_message == "stream ended without messageStop (no frames received)"


# -- malformed payloads ----------------------------------------------------------------------------


def test_malformed_json_payload_is_an_error_keeping_content() -> None:
    t = failed(body(start(), text(0, "kept"), raw_frame("contentBlockDelta", b"{not json")))
    assert t.error_message.startswith("malformed JSON in frame #3 (contentBlockDelta): ")
    assert t.message.content == [TextBlock(content="kept")]


@pytest.mark.parametrize(
    ("bad", "what"),
    [
        (
            raw_frame("contentBlockDelta", b"[1, 2]"),
            "contentBlockDelta payload is not a JSON object",
        ),
        (
            frame("contentBlockDelta", {"delta": {"text": "x"}}),
            "contentBlockDelta without a contentBlockIndex",
        ),
        (
            frame("contentBlockDelta", {"contentBlockIndex": True, "delta": {"text": "x"}}),
            "without a contentBlockIndex",
        ),
        (
            frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": "x"}),
            "without a delta object",
        ),
        (text(0, None), "text delta at index 0 is not a string"),
        (reasoning(0, text=5), "reasoningContent.text at index 0 is not a string"),
        (tool_input(0, {"a": 1}), "toolUse delta at index 0: 'input' is not a string"),
        (
            frame("contentBlockStart", {"contentBlockIndex": 0, "start": None}),
            "without a start object",
        ),
        (message_stop(None, stopReason=3), "messageStop stopReason is not a string"),
    ],
)
def test_malformed_payloads_end_in_an_error(bad: bytes, what: str) -> None:
    t = failed(body(start(), bad, message_stop()))
    assert t.error_message.startswith("malformed frame #2: "), t.error_message
    assert what in t.error_message


def test_delta_after_its_block_stop_is_malformed() -> None:
    t = failed(body(start(), text(0, "a"), block_stop(0), text(0, "b")))
    assert "contentBlockDelta for index 0 after its contentBlockStop" in t.error_message
    assert t.message.content == [TextBlock(content="a")]


def test_delta_after_message_stop_is_malformed() -> None:
    t = failed(body(start(), text(0, "a"), message_stop(), text(1, "b")))
    assert "after messageStop" in t.error_message


# -- bundled cassettes -------------------------------------------------------------------------


def test_bundled_cassettes_cover_the_brief() -> None:
    # What each cassette pins, read from the golden files' last event.
    outcomes = {}
    for path in CASSETTES:
        last = read_expected(expected_path(path))[-1]
        assert isinstance(last, DoneEvent | ErrorEvent)
        outcomes[path.stem] = (last.type, last.message.provider_stop_reason)
    assert outcomes["plain_text"] == ("done", "end_turn")
    assert outcomes["max_tokens"] == ("done", "max_tokens")
    assert outcomes["parallel_tool_calls"] == ("done", "tool_use")
    assert outcomes["guardrail_intervened"] == ("error", "guardrail_intervened")
    assert outcomes["malformed_tool_use"] == ("error", "malformed_tool_use")
    assert outcomes["throttling_midstream"] == ("error", None)
    assert outcomes["crc_corruption"][0] == outcomes["leftover_bytes"][0] == "error"


def frame_cuts(data: bytes) -> st.SearchStrategy[list[int]]:
    """Cut points biased to frame boundaries and the 12-byte preludes around them."""
    spots = sorted(
        {
            s + d
            for s, _ in frame_spans(data)
            for d in (-1, 0, 1, 4, 8, 11, 12, 13)
            if 0 < s + d < len(data)
        }
    )
    if not spots:
        return st.just([])
    return st.lists(st.sampled_from(spots), max_size=24).map(lambda cuts: sorted(set(cuts)))
