"""stream_harness.wire.jsonlines: NDJSON framing (Ollama), per-line errors that do not stop the
stream, the line bound, and split invariance."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stream_harness.wire import FramingError, JSONLine, JSONLinesDecoder
from wire_chunkings import chunkings, decode_all, one_byte_chunks

# Ollama /api/chat, shaped like recorded traffic: thinking first, then content, then
# the final line with done/done_reason and the counters.
OLLAMA_LINES = [
    '{"model":"qwen3:latest","created_at":"2026-08-07T06:08:14.947137Z","message":{"role":"assistant","content":"","thinking":"Here"},"done":false}',
    '{"model":"qwen3:latest","created_at":"2026-08-07T06:08:14.957782Z","message":{"role":"assistant","content":"Olá 🌍"},"done":false}',
    '{"model":"qwen3:latest","created_at":"2026-08-07T06:08:15.001Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","eval_count":2}',
]
OLLAMA_BODY = "".join(line + "\n" for line in OLLAMA_LINES).encode()


def decode(body: bytes, **kwargs: int) -> list[JSONLine | FramingError]:
    return decode_all(JSONLinesDecoder(**kwargs), [body])


def test_ollama_body() -> None:
    out = decode(OLLAMA_BODY)
    assert [o.raw for o in out if isinstance(o, JSONLine)] == OLLAMA_LINES
    assert [o.value["message"]["content"] for o in out if isinstance(o, JSONLine)] == [
        "",
        "Olá 🌍",
        "",
    ]
    assert out[-1] == JSONLine(
        {
            "model": "qwen3:latest",
            "created_at": "2026-08-07T06:08:15.001Z",
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": "stop",
            "eval_count": 2,
        },
        OLLAMA_LINES[2],
    )


def test_lines_are_emitted_as_soon_as_they_end() -> None:
    decoder = JSONLinesDecoder()
    assert decoder.feed(b'{"a": 1}\n{"b"') == [JSONLine({"a": 1}, '{"a": 1}')]
    assert decoder.feed(b": 2}\n") == [JSONLine({"b": 2}, '{"b": 2}')]
    assert decoder.close() == []


def test_crlf_line_ends_and_raw_without_cr() -> None:
    assert decode(b'{"a": 1}\r\n[2]\r\n') == [JSONLine({"a": 1}, '{"a": 1}'), JSONLine([2], "[2]")]


def test_blank_and_whitespace_lines_are_skipped() -> None:
    assert decode(b'\n{"a": 1}\n\n  \t\n\r\n3\n') == [
        JSONLine({"a": 1}, '{"a": 1}'),
        JSONLine(3, "3"),
    ]


def test_last_line_without_newline_is_parsed_at_close() -> None:
    decoder = JSONLinesDecoder()
    assert decoder.feed(b'{"a": 1}\n{"done": true}') == [JSONLine({"a": 1}, '{"a": 1}')]
    assert decoder.close() == [JSONLine({"done": True}, '{"done": true}')]


def test_bom_at_start_is_skipped() -> None:
    assert decode(b'\xef\xbb\xbf{"a": 1}\n') == [JSONLine({"a": 1}, '{"a": 1}')]
    assert decode(b"\xef\xbb\xbf\n1\n") == [JSONLine(1, "1")]


def test_bad_json_line_names_line_number_and_excerpt_and_decoding_goes_on() -> None:
    out = decode(b'{"a": 1}\n\n{"b": tru\n{"c": 3}\n')
    assert out[0] == JSONLine({"a": 1}, '{"a": 1}')
    error = out[1]
    assert isinstance(error, FramingError)
    assert error.offset == 10  # start of line 3
    assert "line 3" in error.message and "invalid JSON" in error.message
    assert '{"b": tru' in error.message
    assert out[2] == JSONLine({"c": 3}, '{"c": 3}')
    assert len(out) == 3


def test_excerpt_of_a_long_bad_line_is_short() -> None:
    line = b'{"text": "' + b"x" * 500 + b'"'
    out = decode(line + b"\n")
    assert isinstance(out[0], FramingError)
    assert len(out[0].message) < 200 and out[0].message.endswith("...'")


def test_invalid_utf8_line_is_an_error_and_decoding_goes_on() -> None:
    out = decode(b'{"a": 1}\n"\xff"\n2\n')
    assert out[0] == JSONLine({"a": 1}, '{"a": 1}')
    assert isinstance(out[1], FramingError)
    assert out[1].offset == 10 and "line 2" in out[1].message and "invalid UTF-8" in out[1].message
    assert out[2] == JSONLine(2, "2")


def test_deeply_nested_line_is_an_error_not_a_recursion_crash() -> None:
    out = decode(b"[" * 100_000 + b"]" * 100_000 + b"\n1\n")
    assert isinstance(out[0], FramingError) and "line 1" in out[0].message
    assert out[1] == JSONLine(1, "1")


def test_line_bound_fails_the_decoder() -> None:
    decoder = JSONLinesDecoder(max_line_bytes=10)
    out = decoder.feed(b"[1,2,3]\n[1,2,3,4,5]\n[6]\n")
    assert out[0] == JSONLine([1, 2, 3], "[1,2,3]")
    assert isinstance(out[1], FramingError)
    assert (
        out[1].offset == 8
        and "line 2" in out[1].message
        and "longer than 10 bytes" in out[1].message
    )
    assert len(out) == 2
    assert decoder.feed(b"[7]\n") == []
    assert decoder.close() == []


def test_line_bound_includes_the_cr_and_is_checked_before_the_line_ends() -> None:
    assert decode(b"[1,2,3,45]\n", max_line_bytes=10) == [JSONLine([1, 2, 3, 45], "[1,2,3,45]")]
    assert isinstance(decode(b"[1,2,3,45]\r\n", max_line_bytes=10)[0], FramingError)
    decoder = JSONLinesDecoder(max_line_bytes=10)
    out = decoder.feed(b"[" + b"1," * 10)
    assert len(out) == 1 and isinstance(out[0], FramingError) and out[0].offset == 0


def test_feed_after_close_returns_nothing() -> None:
    decoder = JSONLinesDecoder()
    decoder.close()
    assert decoder.feed(b"1\n") == []


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=150)
@given(
    st.data(),
    st.lists(st.tuples(json_values, st.sampled_from(["\n", "\r\n", "\n\n", "\n \n"])), max_size=8),
    st.booleans(),
)
def test_generated_lines_round_trip_under_any_chunking(
    data: st.DataObject, rows: list[tuple[object, str]], final_newline: bool
) -> None:
    text = "".join(json.dumps(value, ensure_ascii=False) + eol for value, eol in rows)
    if rows and not final_newline:
        text = text.rstrip("\r\n ")
    body = text.encode()
    chunks = data.draw(chunkings(body), label="chunks")
    out = decode_all(JSONLinesDecoder(), chunks)
    assert [o.value for o in out] == [value for value, _ in rows]
    assert all(isinstance(o, JSONLine) for o in out)


@settings(max_examples=150)
@given(st.binary(max_size=200).map(lambda b: b.replace(b"\x00", b"\n")), st.data())
@example(OLLAMA_BODY, None)
def test_arbitrary_bytes_never_raise_and_decode_the_same_under_any_chunking(
    body: bytes, data: st.DataObject | None
) -> None:
    whole = decode_all(JSONLinesDecoder(max_line_bytes=32), [body])
    chunks = one_byte_chunks(body) if data is None else data.draw(chunkings(body), label="chunks")
    assert decode_all(JSONLinesDecoder(max_line_bytes=32), chunks) == whole
    assert all(isinstance(o, JSONLine | FramingError) for o in whole)


@pytest.mark.parametrize("cut", range(1, len('["é€😀"]\r\n'.encode())))
def test_split_inside_characters_and_crlf(cut: int) -> None:
    body = '["é€😀"]\r\n'.encode()
    assert decode_all(JSONLinesDecoder(), [body[:cut], body[cut:]]) == [
        JSONLine(["é€😀"], '["é€😀"]')
    ]
