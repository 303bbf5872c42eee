"""stream_harness.wire.eventstream: AWS event-stream frames (Bedrock), known-answer vectors from
the AWS C runtime, every header type, CRC and length checks, corruption never raising,
encode/decode round trips, and split invariance."""

from __future__ import annotations

import json
import struct
import zlib

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stream_harness.wire import EventStreamDecoder, EventStreamMessage, FramingError, encode_message
from wire_chunkings import chunkings, decode_all, one_byte_chunks

# Known-answer vectors from awslabs/aws-c-event-stream tests/message_deserializer_test.c
# (also used by smithy-rs aws-smithy-eventstream): payload "{'foo':'bar'}".
AWS_NO_HEADERS = bytes.fromhex("0000001d00000000fd528c5a7b27666f6f273a27626172277dc3653936")
AWS_ONE_HEADER = bytes.fromhex(
    "0000003d0000002007fd83960c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e"
    "7b27666f6f273a27626172277d8d9c08b1"
)

BEDROCK_HEADERS = {":content-type": "application/json", ":message-type": "event"}


def bedrock_event(event_type: str, payload: dict[str, object]) -> bytes:
    headers = {":event-type": event_type, **BEDROCK_HEADERS}
    return encode_message(headers, json.dumps(payload, separators=(",", ":")).encode())


# ConverseStream, shaped like recorded traffic: every payload carries the "p" padding.
BEDROCK_PAYLOADS: list[tuple[str, dict[str, object]]] = [
    ("messageStart", {"p": "abcdefghijklmnopqr", "role": "assistant"}),
    (
        "contentBlockDelta",
        {"contentBlockIndex": 0, "delta": {"text": "The"}, "p": "abcdefghijklmnopqrstuvwxyzABCDEF"},
    ),
    (
        "contentBlockDelta",
        {
            "contentBlockIndex": 0,
            "delta": {"text": " capital of France is Paris. ☕"},
            "p": "abcdefghijk",
        },
    ),
    (
        "contentBlockStop",
        {"contentBlockIndex": 0, "p": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"},
    ),
    (
        "messageStop",
        {"p": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW", "stopReason": "end_turn"},
    ),
    (
        "metadata",
        {
            "metrics": {"latencyMs": 330},
            "p": "abcdefghijklmnopqrstuvwxyzABCDEF",
            "usage": {"inputTokens": 13, "outputTokens": 8, "totalTokens": 21},
        },
    ),
]
BEDROCK_BODY = b"".join(bedrock_event(name, payload) for name, payload in BEDROCK_PAYLOADS)
THROTTLE = encode_message(
    {
        ":exception-type": "throttlingException",
        ":content-type": "application/json",
        ":message-type": "exception",
    },
    b'{"message":"Too many requests, please wait before trying again."}',
)


def frame(raw_headers: bytes, payload: bytes = b"") -> bytes:
    """A frame with the given header block, built with struct and zlib only."""
    prelude = struct.pack(">II", 16 + len(raw_headers) + len(payload), len(raw_headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + raw_headers + payload
    return message + struct.pack(">I", zlib.crc32(message))


def decode(body: bytes, **kwargs: int) -> list[EventStreamMessage | FramingError]:
    return decode_all(EventStreamDecoder(**kwargs), [body])


# ---------------------------------------------------------------------------
# Known answers and real-looking streams
# ---------------------------------------------------------------------------


def test_aws_vector_without_headers() -> None:
    assert decode(AWS_NO_HEADERS) == [EventStreamMessage({}, b"{'foo':'bar'}")]
    assert encode_message({}, b"{'foo':'bar'}") == AWS_NO_HEADERS


def test_aws_vector_with_one_string_header() -> None:
    assert decode(AWS_ONE_HEADER) == [
        EventStreamMessage({"content-type": "application/json"}, b"{'foo':'bar'}")
    ]
    assert encode_message({"content-type": "application/json"}, b"{'foo':'bar'}") == AWS_ONE_HEADER


def test_bedrock_converse_stream_with_padding_field() -> None:
    out = decode(BEDROCK_BODY)
    assert [(m.message_type, m.event_type, m.exception_type) for m in out] == [  # type: ignore[union-attr]
        ("event", name, None) for name, _ in BEDROCK_PAYLOADS
    ]
    assert [json.loads(m.payload) for m in out] == [p for _, p in BEDROCK_PAYLOADS]  # type: ignore[union-attr]
    assert out[0] == EventStreamMessage(
        {
            ":event-type": "messageStart",
            ":content-type": "application/json",
            ":message-type": "event",
        },
        b'{"p":"abcdefghijklmnopqr","role":"assistant"}',
    )


def test_exception_frame_properties() -> None:
    (message,) = decode(THROTTLE)
    assert isinstance(message, EventStreamMessage)
    assert message.message_type == "exception"
    assert message.exception_type == "throttlingException"
    assert message.event_type is None


def test_convenience_properties_ignore_non_string_values() -> None:
    (message,) = decode(encode_message({":message-type": 7, ":event-type": b"chunk"}, b""))
    assert isinstance(message, EventStreamMessage)
    assert message.message_type is None and message.event_type is None


def test_every_header_value_type() -> None:
    raw = (
        b"\x04true" + b"\x00"
        + b"\x05false" + b"\x01"
        + b"\x04byte" + b"\x02" + b"\xce"  # -50
        + b"\x05short" + b"\x03" + b"\x4e\x20"  # 20000
        + b"\x03int" + b"\x04" + b"\xff\xf8\x5e\xe0"  # -500000
        + b"\x04long" + b"\x05" + b"\x00\x00\x00\x0b\xa4\x3b\x74\x00"  # 50_000_000_000
        + b"\x05bytes" + b"\x06" + b"\x00\x03" + b"\x00\xff\x10"
        + b"\x03str" + b"\x07" + b"\x00\x05" + "héllo".encode()[:5]
        + b"\x04time" + b"\x08" + b"\x00\x00\x01\x8b\xcf\xe5\x68\x00"  # 1_700_000_000_000 ms
        + b"\x04uuid" + b"\x09" + bytes.fromhex("b79bc914de214e13b8b2bc47e85b7f0b")
    )  # fmt: skip
    (message,) = decode(frame(raw, b"payload"))
    assert message == EventStreamMessage(
        {
            "true": True,
            "false": False,
            "byte": -50,
            "short": 20000,
            "int": -500000,
            "long": 50_000_000_000,
            "bytes": b"\x00\xff\x10",
            "str": "héll",
            "time": 1_700_000_000_000,
            "uuid": "b79bc914-de21-4e13-b8b2-bc47e85b7f0b",
        },
        b"payload",
    )


def test_empty_body_and_empty_payload() -> None:
    assert decode(b"") == []
    assert decode(frame(b"")) == [EventStreamMessage({}, b"")]


def test_messages_are_emitted_as_soon_as_their_frame_is_complete() -> None:
    first = bedrock_event(*BEDROCK_PAYLOADS[0])
    decoder = EventStreamDecoder()
    assert decoder.feed(first[:-1]) == []
    assert len(decoder.feed(first[-1:] + THROTTLE[:5])) == 1
    assert len(decoder.feed(THROTTLE[5:])) == 1
    assert decoder.close() == []


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def test_incomplete_frame_at_close() -> None:
    out = decode(BEDROCK_BODY + THROTTLE[:20])
    assert len(out) == len(BEDROCK_PAYLOADS) + 1
    error = out[-1]
    assert error == FramingError(
        "incomplete event-stream frame: 20 bytes remain", len(BEDROCK_BODY)
    )


def test_prelude_crc_mismatch_is_reported_as_soon_as_the_prelude_is_in() -> None:
    damaged = bytearray(AWS_ONE_HEADER)
    damaged[3] ^= 0x01  # total length 61 -> 60
    decoder = EventStreamDecoder()
    out = decoder.feed(bytes(damaged[:12]))
    assert len(out) == 1 and isinstance(out[0], FramingError)
    assert "prelude CRC" in out[0].message and out[0].offset == 0
    assert decoder.feed(bytes(damaged[12:])) == [] and decoder.close() == []


def test_message_crc_mismatch() -> None:
    damaged = bytearray(BEDROCK_BODY + AWS_ONE_HEADER)
    damaged[len(BEDROCK_BODY) + 40] ^= 0x20  # inside the header value
    out = decode(bytes(damaged))
    assert len(out) == len(BEDROCK_PAYLOADS) + 1
    assert isinstance(out[-1], FramingError)
    assert "message CRC" in out[-1].message and out[-1].offset == len(BEDROCK_BODY)


@pytest.mark.parametrize(
    ("total", "headers_len"),
    [(15, 0), (0, 0), (16, 1), (20, 5), (0xFFFFFFFF, 0xFFFFFFF0)],
)
def test_impossible_lengths_with_a_valid_prelude_crc(total: int, headers_len: int) -> None:
    prelude = struct.pack(">II", total, headers_len)
    prelude += struct.pack(">I", zlib.crc32(prelude))
    out = decode(prelude + b"\x00" * 8)
    assert len(out) == 1 and isinstance(out[0], FramingError) and out[0].offset == 0


def test_limits_on_headers_and_payload() -> None:
    big_payload = encode_message({}, b"x" * 101)
    out = decode(big_payload[:12], max_payload_bytes=100)
    assert (
        len(out) == 1
        and isinstance(out[0], FramingError)
        and "exceeds the limits" in out[0].message
    )
    assert decode(big_payload, max_payload_bytes=101) == [EventStreamMessage({}, b"x" * 101)]
    big_headers = encode_message({"h": "v" * 20}, b"")
    assert isinstance(decode(big_headers, max_headers_bytes=20)[0], FramingError)


@pytest.mark.parametrize(
    ("raw", "words", "at"),
    [
        (b"\x05ab", "runs past", 0),  # name longer than the block
        (b"\x01a", "runs past", 0),  # no value type byte
        (b"\x01a\x0a", "unknown value type 10", 0),
        (b"\x01a\x04\x00\x00", "runs past", 0),  # int32 cut short
        (b"\x01a\x07\x00\x09abc", "runs past", 0),  # string longer than the block
        (b"\x01a\x06\x00", "runs past", 0),  # bytes length cut short
        (b"\x01a\x09" + b"\x00" * 15, "runs past", 0),  # uuid cut short
        (b"\x01\xff\x00", "not valid UTF-8", 0),
        (b"\x01a\x07\x00\x01\xff", "not valid UTF-8", 0),
        (b"\x01a\x00\x01a\x01", "occurs twice", 3),  # points at the second "a"
    ],
)
def test_malformed_header_blocks_with_valid_crcs(raw: bytes, words: str, at: int) -> None:
    out = decode(AWS_NO_HEADERS + frame(raw, b"{}"))
    assert out[0] == EventStreamMessage({}, b"{'foo':'bar'}")
    assert len(out) == 2 and isinstance(out[1], FramingError)
    assert words in out[1].message
    assert out[1].offset == len(AWS_NO_HEADERS) + 12 + at  # the offending header


def test_after_an_error_the_decoder_stays_failed() -> None:
    decoder = EventStreamDecoder()
    assert isinstance(decoder.feed(b"\x00" * 12)[0], FramingError)  # CRC of 8 zero bytes is not 0
    assert decoder.feed(AWS_NO_HEADERS) == []
    assert decoder.close() == []


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------

header_values = (
    st.booleans()
    | st.integers(-(2**31), 2**31 - 1)
    | st.integers(-(2**63), 2**63 - 1).filter(lambda v: not -(2**31) <= v < 2**31)
    | st.binary(max_size=20)
    | st.text(max_size=20)
)
header_names = st.text(min_size=1, max_size=20).filter(lambda n: len(n.encode()) < 256)
messages = st.tuples(
    st.dictionaries(header_names, header_values, max_size=5), st.binary(max_size=200)
)


@settings(max_examples=200)
@given(messages)
def test_encode_then_decode_round_trips(
    message: tuple[dict[str, str | int | bool | bytes], bytes],
) -> None:
    headers, payload = message
    body = encode_message(headers, payload)
    (decoded,) = decode(body)
    assert decoded == EventStreamMessage(headers, payload)
    assert isinstance(decoded, EventStreamMessage)
    assert encode_message(decoded.headers, decoded.payload) == body


@settings(max_examples=150)
@given(st.lists(messages, max_size=4), st.data())
@example([], None)
def test_streams_decode_the_same_under_any_chunking(
    stream: list[tuple[dict[str, str | int | bool | bytes], bytes]], data: st.DataObject | None
) -> None:
    body = b"".join(encode_message(h, p) for h, p in stream) if stream else BEDROCK_BODY
    expected = [EventStreamMessage(h, p) for h, p in stream] if stream else decode(BEDROCK_BODY)
    chunks = one_byte_chunks(body) if data is None else data.draw(chunkings(body), label="chunks")
    assert decode_all(EventStreamDecoder(), chunks) == expected


@settings(max_examples=300)
@given(st.integers(0, len(BEDROCK_BODY) - 1), st.integers(1, 255), st.data())
@example(0, 1, None)
@example(len(BEDROCK_BODY) - 1, 0x80, None)
def test_any_flipped_byte_is_detected_and_never_raises(
    index: int, mask: int, data: st.DataObject | None
) -> None:
    damaged = bytearray(BEDROCK_BODY)
    damaged[index] ^= mask
    body = bytes(damaged)
    chunks = [body] if data is None else data.draw(chunkings(body), label="chunks")
    out = decode_all(EventStreamDecoder(), chunks)
    # Everything before the damaged frame comes through intact, then exactly one error.
    frame_starts = [0]
    for name, payload in BEDROCK_PAYLOADS:
        frame_starts.append(frame_starts[-1] + len(bedrock_event(name, payload)))
    damaged_frame = max(i for i, start in enumerate(frame_starts) if start <= index)
    assert out[:-1] == decode(BEDROCK_BODY)[:damaged_frame]
    assert isinstance(out[-1], FramingError)
    assert out[-1].offset >= frame_starts[damaged_frame]


@settings(max_examples=200)
@given(st.binary(max_size=120), st.data())
def test_arbitrary_bytes_never_raise(body: bytes, data: st.DataObject) -> None:
    out = decode_all(EventStreamDecoder(), data.draw(chunkings(body), label="chunks"))
    assert all(isinstance(o, EventStreamMessage | FramingError) for o in out)
    assert out == decode(body)


def test_encode_rejects_what_it_cannot_encode() -> None:
    with pytest.raises(ValueError):
        encode_message({"": "x"}, b"")
    with pytest.raises(ValueError):
        encode_message({"n": 2**63}, b"")
    with pytest.raises(TypeError):
        encode_message({"n": 1.5}, b"")  # type: ignore[dict-item]
