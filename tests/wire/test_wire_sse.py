"""stream_harness.wire.sse: each WHATWG event-stream rule, our documented departures (dispatch
at EOF, invalid UTF-8 and over-long lines as errors), and split invariance checked
against an independent reference parser written from the spec's text."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stream_harness.wire import FramingError, SSEDecoder, SSEEvent
from wire_chunkings import (
    bodies_with_chunkings,
    chunkings,
    decode_all,
    one_byte_chunks,
)

# ---------------------------------------------------------------------------
# Real-looking bodies (written for these tests, shaped like recorded traffic)
# ---------------------------------------------------------------------------

# Anthropic: named events equal to the JSON "type", data padded with trailing spaces
# inside the JSON line, a ping whose JSON has a space after the colon.
ANTHROPIC_EVENTS = [
    (
        "message_start",
        '{"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message",'
        '"role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,'
        '"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}    }',
    ),
    (
        "content_block_start",
        '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}             }',
    ),
    ("ping", '{"type": "ping"}'),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Bonjour, ça va ? 👋"}       }',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":0   }'),
    (
        "message_delta",
        '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":12}   }',
    ),
    ("message_stop", '{"type":"message_stop"      }'),
]
ANTHROPIC_BODY = "".join(
    f"event: {name}\ndata: {data}\n\n" for name, data in ANTHROPIC_EVENTS
).encode()

# OpenAI Chat Completions: unnamed events, the [DONE] sentinel.
OPENAI_DATA = [
    '{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"obfuscation":"Xq1"}',
    '{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Grüße"},"finish_reason":null}],"obfuscation":"k"}',
    '{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
    "[DONE]",
]
OPENAI_BODY = "".join(f"data: {d}\n\n" for d in OPENAI_DATA).encode()

# Gemini alt=sse: CRLF line ends, "\r\n\r\n" between events.
GEMINI_DATA = [
    '{"candidates": [{"content": {"parts": [{"text": "The"}],"role": "model"}}],"modelVersion": "gemini-2.0-flash"}',
    '{"candidates": [{"content": {"parts": [{"text": " capital is 東京."}],"role": "model"},"finishReason": "STOP"}]}',
]
GEMINI_BODY = "".join(f"data: {d}\r\n\r\n" for d in GEMINI_DATA).encode()

# OpenRouter: keep-alive comments before the first event.
OPENROUTER_BODY = (
    b": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\ndata: "
    + OPENAI_DATA[2].encode()
    + b"\n\ndata: [DONE]\n\n"
)


def events(body: bytes, **kwargs: int) -> list[SSEEvent | FramingError]:
    return decode_all(SSEDecoder(**kwargs), [body])


def datas(out: list[SSEEvent | FramingError]) -> list[str]:
    return [e.data for e in out if isinstance(e, SSEEvent)]


# ---------------------------------------------------------------------------
# Real-looking bodies decode to what was written
# ---------------------------------------------------------------------------


def test_anthropic_named_events_keep_padded_json_and_split_invariance_examples() -> None:
    expected = [SSEEvent(data, name) for name, data in ANTHROPIC_EVENTS]
    assert events(ANTHROPIC_BODY) == expected
    assert decode_all(SSEDecoder(), one_byte_chunks(ANTHROPIC_BODY)) == expected
    # The padding is inside the JSON text; it must reach the normalizer untouched.
    assert expected[0].data.endswith("}    }")
    assert json.loads(expected[3].data)["delta"]["text"] == "Bonjour, ça va ? 👋"


def test_openai_unnamed_events_and_done_sentinel() -> None:
    out = events(OPENAI_BODY)
    assert out == [SSEEvent(d) for d in OPENAI_DATA]
    assert {e.event for e in out if isinstance(e, SSEEvent)} == {"message"}
    assert datas(out)[-1] == "[DONE]"


def test_gemini_crlf_body() -> None:
    assert events(GEMINI_BODY) == [SSEEvent(d) for d in GEMINI_DATA]


def test_openrouter_keepalive_comments_are_counted_not_dispatched() -> None:
    decoder = SSEDecoder()
    out = decode_all(decoder, [OPENROUTER_BODY])
    assert datas(out) == [OPENAI_DATA[2], "[DONE]"]
    assert decoder.comments == 2


def test_data_before_event_line_still_names_the_event() -> None:
    # A Responses-compatible server in the corpus (bedrock-mantle) writes data: first.
    assert events(b'data: {"type":"response.completed"}\nevent: response.completed\n\n') == [
        SSEEvent('{"type":"response.completed"}', "response.completed")
    ]


# ---------------------------------------------------------------------------
# Line ends
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"], ids=["LF", "CR", "CRLF"])
def test_each_line_end_alone(eol: bytes) -> None:
    body = b"event: a" + eol + b"data: 1" + eol + b"data: 2" + eol + eol + b"data: 3" + eol + eol
    assert events(body) == [SSEEvent("1\n2", "a"), SSEEvent("3")]


def test_mixed_line_ends_in_one_stream() -> None:
    body = b"data: 1\r\n\r\ndata: 2\n\ndata: 3\r\rdata: 4\r\n\ndata: 5\n\r\n"
    assert datas(events(body)) == ["1", "2", "3", "4", "5"]


def test_cr_at_chunk_end_and_lf_at_next_chunk_start_are_one_line_end() -> None:
    # Were they two line ends, the LF would be a blank line and split the event in two.
    out = decode_all(SSEDecoder(), [b"data: a\r", b"\ndata: b\r\n\r\n"])
    assert out == [SSEEvent("a\nb")]


def test_empty_chunk_between_cr_and_lf_changes_nothing() -> None:
    out = decode_all(SSEDecoder(), [b"data: a\r", b"", b"\n", b"", b"data: b\n\n"])
    assert out == [SSEEvent("a\nb")]


def test_cr_followed_by_cr_across_chunks_is_a_blank_line() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\rdata: b\r\r") == [SSEEvent("a"), SSEEvent("b")]


# ---------------------------------------------------------------------------
# Fields
# ---------------------------------------------------------------------------


def test_comment_inside_an_event_does_not_end_it() -> None:
    decoder = SSEDecoder()
    assert decode_all(decoder, [b"data: a\n: keep-alive\n:\ndata: b\n\n"]) == [SSEEvent("a\nb")]
    assert decoder.comments == 2


def test_multi_line_data_joined_with_lf_and_only_one_space_removed() -> None:
    assert events(b"data: a\ndata:\ndata:  b\ndata:c\n\n") == [SSEEvent("a\n\n b\nc")]


def test_space_removal_is_space_only_not_tab() -> None:
    assert events(b"data:\tx\n\n") == [SSEEvent("\tx")]


def test_colon_in_value_is_kept() -> None:
    assert events(b'data: {"a": "b:c"}\n\n') == [SSEEvent('{"a": "b:c"}')]


def test_field_without_colon_has_empty_value() -> None:
    # "data" alone is a data line with an empty value; "event" alone resets the type.
    assert events(b"data\ndata\n\n") == [SSEEvent("\n")]
    assert events(b"event: x\nevent\ndata: 1\n\n") == [SSEEvent("1", "message")]


def test_empty_data_line_dispatches_an_empty_event() -> None:
    assert events(b"data:\n\n") == [SSEEvent("")]


def test_block_without_data_is_not_dispatched_and_resets_event_type() -> None:
    assert events(b"event: ping\n\n") == []
    assert events(b"event: ping\n\ndata: x\n\n") == [SSEEvent("x", "message")]


def test_unknown_and_wrongly_cased_fields_are_ignored_and_counted() -> None:
    decoder = SSEDecoder()
    assert decode_all(decoder, [b"foo: bar\nData: no\nEVENT: no\ndata: yes\n\n"]) == [
        SSEEvent("yes")
    ]
    assert decoder.unknown_fields == 3


def test_json_error_body_under_event_stream_content_type_shows_as_unknown_fields() -> None:
    # Gemini answers a failed stream request with pretty JSON under text/event-stream.
    decoder = SSEDecoder()
    body = b'{\n  "error": {\n    "code": 404,\n    "status": "NOT_FOUND"\n  }\n}\n'
    assert decode_all(decoder, [body]) == []
    assert decoder.unknown_fields == 6


def test_id_persists_across_events_and_can_be_reset() -> None:
    body = b"id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: 2\n\ndata: d\n\n"
    assert events(body) == [
        SSEEvent("a", id="1"),
        SSEEvent("b", id="1"),
        SSEEvent("c", id=""),
        SSEEvent("d", id="2"),  # an id-only block is not dispatched but sets the id
    ]


def test_id_containing_nul_is_ignored() -> None:
    assert events(b"id: 1\n\nid: a\x00b\ndata: x\n\n") == [SSEEvent("x", id="1")]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b"retry: 3000", 3000),
        (b"retry:0", 0),
        (b"retry: 3s", None),
        (b"retry: -1", None),
        (b"retry: 1.5", None),
        (b"retry:", None),
        (b"retry:  10", None),  # only one space is removed; " 10" is not all digits
        ("retry: ٣".encode(), None),  # a digit, but not an ASCII one
        (b"retry: " + b"9" * 5000, None),  # more digits than int() accepts: ignored, no exception
    ],
)
def test_retry_accepts_ascii_digits_only(line: bytes, expected: int | None) -> None:
    assert events(line + b"\ndata: x\n\n") == [SSEEvent("x", retry=expected)]


def test_retry_persists_and_invalid_value_keeps_the_previous_one() -> None:
    body = b"retry: 10\ndata: a\n\nretry: x\ndata: b\n\nretry: 20\n\ndata: c\n\n"
    assert [e.retry for e in events(body) if isinstance(e, SSEEvent)] == [10, 10, 20]


# ---------------------------------------------------------------------------
# BOM
# ---------------------------------------------------------------------------


def test_bom_at_start_is_stripped_even_when_split_across_chunks() -> None:
    body = b"\xef\xbb\xbfdata: x\n\n"
    assert events(body) == [SSEEvent("x")]
    assert decode_all(SSEDecoder(), [b"\xef", b"\xbb", b"\xbfdata: x\n", b"\n"]) == [SSEEvent("x")]


def test_only_one_bom_and_only_at_start_is_stripped() -> None:
    # A second BOM makes the first line's field "\ufeffdata", which is unknown.
    assert events(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n") == []
    assert events(b"data: x\n\n\xef\xbb\xbfdata: y\n\n") == [SSEEvent("x")]


def test_bom_on_unterminated_only_line_is_stripped_at_close() -> None:
    assert events(b"\xef\xbb\xbfdata: x") == [SSEEvent("x")]


# ---------------------------------------------------------------------------
# End of stream (documented departure: dispatch instead of discard)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("body", [b"data: x", b"data: x\n", b"data: x\r", b"data: x\r\n"])
def test_event_without_final_blank_line_is_dispatched_at_close(body: bytes) -> None:
    decoder = SSEDecoder()
    assert decoder.feed(body) == []
    assert decoder.unterminated_at_close is False
    assert decoder.close() == [SSEEvent("x")]
    assert decoder.unterminated_at_close is True


def test_properly_terminated_stream_is_not_flagged() -> None:
    decoder = SSEDecoder()
    decode_all(decoder, [OPENAI_BODY])
    assert decoder.unterminated_at_close is False


def test_truncated_json_line_at_eof_is_handed_on_not_dropped() -> None:
    assert events(b'data: {"type":"message_delta","usa') == [
        SSEEvent('{"type":"message_delta","usa')
    ]


def test_feed_and_close_after_close_return_nothing() -> None:
    decoder = SSEDecoder()
    assert decoder.close() == []
    assert decoder.feed(b"data: x\n\n") == []
    assert decoder.close() == []


# ---------------------------------------------------------------------------
# UTF-8
# ---------------------------------------------------------------------------


def test_multibyte_characters_split_at_every_position() -> None:
    body = "data: é€😀\n\n".encode()
    for cut in range(len(body) + 1):
        assert decode_all(SSEDecoder(), [body[:cut], body[cut:]]) == [SSEEvent("é€😀")], cut


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (b"\xff", "invalid start byte"),
        (b"\xc3(", "invalid continuation byte"),
        (b"\xc0\x80", "invalid start byte"),  # overlong NUL
        (b"\xed\xa0\x80", "invalid continuation byte"),  # a UTF-16 surrogate
    ],
)
def test_invalid_utf8_is_a_framing_error_at_its_offset(bad: bytes, reason: str) -> None:
    body = b"data: ok\n\ndata: " + bad + b"\n\ndata: later\n\n"
    out = events(body)
    assert out[0] == SSEEvent("ok")
    assert len(out) == 2 and isinstance(out[1], FramingError)
    assert out[1].offset == 16
    assert "invalid UTF-8" in out[1].message and reason in out[1].message


def test_after_a_framing_error_the_decoder_stays_failed() -> None:
    decoder = SSEDecoder()
    out = decoder.feed(b"data: \xff\n\n")
    assert [type(o) for o in out] == [FramingError]
    assert decoder.feed(b"data: fine\n\n") == []
    assert decoder.close() == []


def test_lines_before_the_bad_one_in_the_same_chunk_are_kept() -> None:
    # The event "a\nb" is complete only with the blank line that precedes the bad line.
    out = events(b"data: a\ndata: b\n\ndata: c\ndata: \xff\n\n")
    assert out[0] == SSEEvent("a\nb")
    assert isinstance(out[1], FramingError) and out[1].offset == 31
    assert len(out) == 2


def test_truncated_character_at_eof_is_a_framing_error() -> None:
    out = events(b"data: ok\n\ndata: \xe2\x82")
    assert out[0] == SSEEvent("ok")
    assert isinstance(out[1], FramingError) and out[1].offset == 16


def test_error_offsets_count_the_bom() -> None:
    out = events(b"\xef\xbb\xbfdata: \xff\n\n")
    assert isinstance(out[0], FramingError) and out[0].offset == 9


# ---------------------------------------------------------------------------
# Line bound
# ---------------------------------------------------------------------------


def test_line_at_the_bound_is_fine_and_one_byte_more_is_an_error() -> None:
    assert events(b"data: 0123456789\n\n", max_line_bytes=16) == [SSEEvent("0123456789")]
    out = events(b"data: ok\n\ndata: 01234567890\n\n", max_line_bytes=16)
    assert out[0] == SSEEvent("ok")
    assert isinstance(out[1], FramingError)
    assert out[1].offset == 10 and "longer than 16 bytes" in out[1].message


def test_long_unterminated_line_fails_at_feed_not_at_close() -> None:
    decoder = SSEDecoder(max_line_bytes=16)
    assert decoder.feed(b"data: ok\n\ndata: ") == [SSEEvent("ok")]
    out = decoder.feed(b"x" * 20)
    assert len(out) == 1 and isinstance(out[0], FramingError) and out[0].offset == 10
    assert decoder.close() == []


def test_line_bound_counts_bytes_not_characters() -> None:
    body = "data: éééé\n\n".encode()  # 10 characters, 14 bytes
    assert events(body, max_line_bytes=14) == [SSEEvent("éééé")]
    assert isinstance(events(body, max_line_bytes=13)[0], FramingError)


def test_first_bad_line_wins_whatever_its_fault() -> None:
    # Fed whole, the long line and the bad byte are both in view; chunked small, the
    # long line is met first. The error must be the same either way.
    body = b"data: 0123456789ABCDEF\xff\n\n"
    whole = events(body, max_line_bytes=8)
    assert len(whole) == 1 and isinstance(whole[0], FramingError) and whole[0].offset == 0
    assert "longer than" in whole[0].message
    assert decode_all(SSEDecoder(max_line_bytes=8), one_byte_chunks(body)) == whole


# ---------------------------------------------------------------------------
# Reference parser (written from the spec text, independently of the decoder) and the
# split-invariance properties
# ---------------------------------------------------------------------------

_LINE_END = re.compile(rb"\r\n|\r|\n")


def _byte_lines(body: bytes) -> list[tuple[int, bytes]]:
    """(offset, content) of every line, the unterminated last one included."""
    lines = []
    start = 0
    for m in _LINE_END.finditer(body):
        lines.append((start, body[start : m.start()]))
        start = m.end()
    if start < len(body):
        lines.append((start, body[start:]))
    return lines


def _reference_events(lines: list[str], dispatch_at_eof: bool) -> list[SSEEvent]:
    out = []
    data_buffer, event_type, last_id, retry = "", "", None, None
    for line in [*lines, ""] if dispatch_at_eof else lines:
        if line == "":
            if data_buffer:
                out.append(SSEEvent(data_buffer[:-1], event_type or "message", last_id, retry))
            data_buffer, event_type = "", ""
            continue
        if line.startswith(":"):
            continue
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "event":
            event_type = value
        elif field == "data":
            data_buffer += value + "\n"
        elif field == "id" and "\0" not in value:
            last_id = value
        elif field == "retry" and value and all(c in "0123456789" for c in value):
            retry = int(value)
    return out


def reference_outputs(body: bytes, max_line_bytes: int) -> list[SSEEvent | FramingError]:
    """What the decoder must produce: events up to the first bad line, then its error."""
    texts: list[str] = []
    for offset, raw in _byte_lines(body):
        if len(raw) > max_line_bytes:
            return [*_reference_events(texts, False), FramingError("", offset)]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return [*_reference_events(texts, False), FramingError("", offset + exc.start)]
        texts.append(text[1:] if offset == 0 and text.startswith("\ufeff") else text)
    return _reference_events(texts, True)


def without_messages(out: list[SSEEvent | FramingError]) -> list[SSEEvent | FramingError]:
    return [FramingError("", o.offset) if isinstance(o, FramingError) else o for o in out]


_TOKENS = [
    b"data:", b"data: ", b"event: ", b"event:", b"id: ", b"id:", b"retry: ", b"retry:", b":",
    b" ", b"x", b"42", b"{\"a\": [1]}", b"foo:", b"data", b"\x00",
    b"\r", b"\n", b"\r\n", b"\n\n", b"\r\n\r\n",
    "é".encode(), "€".encode(), "😀".encode(), b"\xef\xbb\xbf",
]  # fmt: skip
_BAD_TOKENS = [b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80"]

valid_sse_bodies = st.lists(st.sampled_from(_TOKENS), max_size=50).map(b"".join)
any_sse_bodies = st.lists(st.sampled_from(_TOKENS + _BAD_TOKENS), max_size=50).map(b"".join)


def test_reference_parser_agrees_on_the_hand_written_bodies() -> None:
    # The oracle itself is checked against values written by hand above.
    assert reference_outputs(ANTHROPIC_BODY, 1 << 20) == [
        SSEEvent(d, n) for n, d in ANTHROPIC_EVENTS
    ]
    assert reference_outputs(b"data: a\r\rdata: \xff", 1 << 20) == [
        SSEEvent("a"),
        FramingError("", 15),
    ]


REAL_BODIES = [ANTHROPIC_BODY, OPENAI_BODY, GEMINI_BODY, OPENROUTER_BODY]


@settings(max_examples=150)
@given(bodies_with_chunkings(REAL_BODIES))
@example((ANTHROPIC_BODY, [ANTHROPIC_BODY]))
@example((GEMINI_BODY, one_byte_chunks(GEMINI_BODY)))
@example((ANTHROPIC_BODY, one_byte_chunks(ANTHROPIC_BODY)))
def test_real_bodies_decode_the_same_under_any_chunking(case: tuple[bytes, list[bytes]]) -> None:
    body, chunks = case
    assert decode_all(SSEDecoder(), chunks) == decode_all(SSEDecoder(), [body])


@settings(max_examples=300)
@given(st.data(), valid_sse_bodies)
def test_valid_bodies_match_the_reference_under_any_chunking(
    data: st.DataObject, body: bytes
) -> None:
    chunks = data.draw(chunkings(body), label="chunks")
    decoder = SSEDecoder()
    assert decode_all(decoder, chunks) == reference_outputs(body, 1 << 20)
    whole = SSEDecoder()
    decode_all(whole, [body])
    assert (decoder.comments, decoder.unknown_fields, decoder.unterminated_at_close) == (
        whole.comments,
        whole.unknown_fields,
        whole.unterminated_at_close,
    )


@settings(max_examples=300)
@given(st.data(), any_sse_bodies, st.sampled_from([4, 8, 16, 1 << 20]))
def test_bad_bytes_and_long_lines_match_the_reference_under_any_chunking(
    data: st.DataObject, body: bytes, bound: int
) -> None:
    chunks = data.draw(chunkings(body), label="chunks")
    out = decode_all(SSEDecoder(max_line_bytes=bound), chunks)
    assert without_messages(out) == reference_outputs(body, bound)
    assert out == decode_all(SSEDecoder(max_line_bytes=bound), [body])  # messages too


@settings(max_examples=200)
@given(st.data(), st.binary(max_size=300))
def test_arbitrary_bytes_never_raise_and_errors_come_last(data: st.DataObject, body: bytes) -> None:
    chunks = data.draw(chunkings(body), label="chunks")
    out = decode_all(SSEDecoder(max_line_bytes=64), chunks)
    assert all(isinstance(o, SSEEvent | FramingError) for o in out)
    errors = [i for i, o in enumerate(out) if isinstance(o, FramingError)]
    assert errors in ([], [len(out) - 1])
    assert out == decode_all(SSEDecoder(max_line_bytes=64), [body])


def test_bytearray_and_memoryview_chunks_are_accepted() -> None:
    decoder = SSEDecoder()
    out = decoder.feed(bytearray(b"data: a\n\n")) + decoder.feed(memoryview(b"data: b\n\n"))
    assert out == [SSEEvent("a"), SSEEvent("b")]
