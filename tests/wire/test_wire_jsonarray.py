"""stream_harness.wire.jsonarray: Gemini's streamed JSON array (no alt=sse), elements emitted
as they complete, the single-object error body, the unclosed array, and split
invariance over generated arrays."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stream_harness.wire import FramingError, JSONArrayDecoder, JSONLine
from wire_chunkings import chunkings, decode_all, one_byte_chunks

# Shaped like llm-gemini's recordings: pretty-printed elements, "\n,\r\n" between them.
GEMINI_ELEMENTS: list[dict[str, Any]] = [
    {
        "candidates": [
            {
                "content": {
                    "parts": [
                        {"text": '**Thinking** about "pelicans" [sic] {ok}\n\n', "thought": True}
                    ],
                    "role": "model",
                },
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 11, "totalTokenCount": 11},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "IopyaseNCL-s-8YP7urOoAY",
    },
    {
        "candidates": [
            {"content": {"parts": [{"text": "Pierre le Pélican 🐦"}], "role": "model"}, "index": 0}
        ],
        "modelVersion": "gemini-2.5-flash",
    },
    {
        "candidates": [
            {
                "content": {
                    "parts": [{"functionCall": {"name": "pelican_name_generator", "args": {}}}],
                    "role": "model",
                },
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 137,
            "candidatesTokenCount": 9,
            "totalTokenCount": 146,
        },
    },
]
GEMINI_RAW = [json.dumps(e, indent=2, ensure_ascii=False) for e in GEMINI_ELEMENTS]
GEMINI_BODY = ("[" + "\n,\r\n".join(GEMINI_RAW) + "\n]").encode()

GEMINI_ERROR_BODY = (
    b'{\n  "error": {\n    "code": 404,\n    "message": "models/nope is not found for API '
    b'version v1beta.",\n    "status": "NOT_FOUND"\n  }\n}\n'
)


def decode(body: bytes) -> list[JSONLine | FramingError]:
    return decode_all(JSONArrayDecoder(), [body])


def test_gemini_array_elements_and_their_raw_text() -> None:
    assert decode(GEMINI_BODY) == [
        JSONLine(v, raw) for v, raw in zip(GEMINI_ELEMENTS, GEMINI_RAW, strict=True)
    ]


def test_element_is_emitted_as_soon_as_it_closes() -> None:
    decoder = JSONArrayDecoder()
    first_end = GEMINI_BODY.index(b"\n}") + 2
    assert decoder.feed(GEMINI_BODY[: first_end - 1]) == []
    assert decoder.feed(GEMINI_BODY[first_end - 1 : first_end]) == [
        JSONLine(GEMINI_ELEMENTS[0], GEMINI_RAW[0])
    ]
    rest = decoder.feed(GEMINI_BODY[first_end:])
    assert [o.value for o in rest if isinstance(o, JSONLine)] == GEMINI_ELEMENTS[1:]
    assert decoder.close() == []


def test_single_object_body_is_one_element() -> None:
    out = decode(GEMINI_ERROR_BODY)
    assert out == [JSONLine(json.loads(GEMINI_ERROR_BODY), GEMINI_ERROR_BODY.decode().rstrip("\n"))]
    assert out[0].value["error"]["code"] == 404  # type: ignore[union-attr]


def test_array_wrapped_error_is_an_ordinary_element() -> None:
    body = b'[{\n  "error": {\n    "code": 429,\n    "status": "RESOURCE_EXHAUSTED"\n  }\n}\n]'
    assert [o.value for o in decode(body)] == [
        {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}
    ]  # type: ignore[union-attr]


@pytest.mark.parametrize("body", [b"[]", b" [ ] \n", b"\r\n[\r\n]\r\n", b"\xef\xbb\xbf[]"])
def test_empty_arrays(body: bytes) -> None:
    assert decode(body) == []


def test_strings_with_brackets_quotes_and_backslashes_split_everywhere() -> None:
    body = b'[{"a": "}]\\"{[", "b": "\\\\", "c": "\\\\\\"", "d": ["\\u00e9\\n"]}]'
    expected = [JSONLine({"a": '}]"{[', "b": "\\", "c": '\\"', "d": ["é\n"]}, body[1:-1].decode())]
    for cut in range(len(body) + 1):
        assert decode_all(JSONArrayDecoder(), [body[:cut], body[cut:]]) == expected, cut
    assert decode_all(JSONArrayDecoder(), one_byte_chunks(body)) == expected


def test_arrays_as_elements() -> None:
    assert [o.value for o in decode(b"[[1, [2]], []]")] == [[1, [2]], []]  # type: ignore[union-attr]


def test_missing_closing_bracket_keeps_emitted_elements_and_says_not_closed() -> None:
    body = GEMINI_BODY[: GEMINI_BODY.rindex(b"]")]
    out = decode(body)
    assert [o.value for o in out[:-1]] == GEMINI_ELEMENTS  # type: ignore[union-attr]
    assert isinstance(out[-1], FramingError)
    assert "not closed" in out[-1].message and out[-1].offset == len(body)


def test_body_cut_inside_an_element_says_not_closed_and_points_at_the_element() -> None:
    out = decode(b'[{"a": 1},\n{"b": [2')
    assert out[0] == JSONLine({"a": 1}, '{"a": 1}')
    assert isinstance(out[1], FramingError)
    assert "not closed" in out[1].message and out[1].offset == 11


def test_single_object_cut_short_is_an_error() -> None:
    out = decode(GEMINI_ERROR_BODY[:30])
    assert len(out) == 1 and isinstance(out[0], FramingError) and out[0].offset == 0


@pytest.mark.parametrize("body", [b"", b"   \r\n"])
def test_body_without_any_value_is_an_error(body: bytes) -> None:
    out = decode(body)
    assert len(out) == 1 and isinstance(out[0], FramingError) and out[0].offset == len(body)


@pytest.mark.parametrize(
    ("body", "offset", "words"),
    [
        (b'[{"a": 1} {"b": 2}]', 10, "',' or ']'"),  # missing comma
        (b'[{"a": 1},]', 10, "element"),  # trailing comma
        (b'[{"a": 1}] x', 11, "only whitespace"),  # text after the end
        (b'{"a": 1}{"b": 2}', 8, "only whitespace"),  # two objects, no array
        (b"[1, 2]", 1, "element"),  # bare numbers are not elements
        (b'["a"]', 1, "element"),
        (b"data: {}\n\n", 0, "'[' or '{'"),  # an SSE body fed to the wrong decoder
    ],
)
def test_structural_errors_fail_the_decoder(body: bytes, offset: int, words: str) -> None:
    decoder = JSONArrayDecoder()
    out = decode_all(decoder, [body])
    assert isinstance(out[-1], FramingError)
    assert out[-1].offset == offset and words in out[-1].message
    assert all(isinstance(o, JSONLine) for o in out[:-1])
    assert decoder.feed(b"[]") == []


def test_element_with_balanced_brackets_but_bad_json_is_an_error_and_decoding_goes_on() -> None:
    out = decode(b'[{"a" 1},\n{"b": 2}]')
    assert (
        isinstance(out[0], FramingError)
        and out[0].offset == 1
        and "not valid JSON" in out[0].message
    )
    assert out[1:] == [JSONLine({"b": 2}, '{"b": 2}')]


def test_element_with_invalid_utf8_is_an_error_and_decoding_goes_on() -> None:
    out = decode(b'[{"a": "\xff"}, {"b": 2}]')
    assert (
        isinstance(out[0], FramingError)
        and out[0].offset == 8
        and "invalid UTF-8" in out[0].message
    )
    assert out[1:] == [JSONLine({"b": 2}, '{"b": 2}')]


def test_feed_after_close_returns_nothing() -> None:
    decoder = JSONArrayDecoder()
    assert decode_all(decoder, [b"[]"]) == []
    assert decoder.feed(b"[{}]") == []
    assert decoder.close() == []


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------

_text = st.text(st.characters(codec="utf-8"), max_size=6) | st.sampled_from(
    ['"', "\\", "}", "]", '\\"', "é😀"]
)
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=10,
)
_elements = st.lists(_json, max_size=3) | st.dictionaries(_text, _json, max_size=4)
_ws = st.sampled_from(["", " ", "\n", "\r\n", "\n  ", "\t"])


@st.composite
def streamed_arrays(draw: st.DrawFn) -> tuple[list[Any], bytes]:
    """A list of elements and one way a server could stream it as a JSON array."""
    elements = draw(st.lists(_elements, max_size=5))
    parts = [draw(_ws), "["]
    for i, element in enumerate(elements):
        if i:
            parts += [draw(_ws), ",", draw(_ws)]
        else:
            parts.append(draw(_ws))
        indent = draw(st.sampled_from([None, 2]))
        parts.append(json.dumps(element, indent=indent, ensure_ascii=draw(st.booleans())))
    parts += [draw(_ws), "]", draw(_ws)]
    return elements, "".join(parts).encode()


@settings(max_examples=200, deadline=None)
@given(streamed_arrays(), st.data())
@example((GEMINI_ELEMENTS, GEMINI_BODY), None)
def test_generated_arrays_decode_to_their_elements_under_any_chunking(
    case: tuple[list[Any], bytes], data: st.DataObject | None
) -> None:
    elements, body = case
    chunks = one_byte_chunks(body) if data is None else data.draw(chunkings(body), label="chunks")
    out = decode_all(JSONArrayDecoder(), chunks)
    assert [o.value for o in out] == elements
    assert all(isinstance(o, JSONLine) and json.loads(o.raw) == o.value for o in out)


@settings(max_examples=200, deadline=None)
@given(
    st.data(),
    streamed_arrays(),
    st.integers(0, 10_000),
    st.sampled_from([b"", b"x", b",", b"]", b"}", b'"']),
)
def test_damaged_arrays_never_raise_and_decode_the_same_under_any_chunking(
    data: st.DataObject, case: tuple[list[Any], bytes], cut: int, junk: bytes
) -> None:
    _, body = case
    cut %= len(body) + 1
    body = body[:cut] + junk + body[cut:]
    body = body[: data.draw(st.integers(0, len(body)), label="truncate at")]
    whole = decode_all(JSONArrayDecoder(), [body])
    assert all(isinstance(o, JSONLine | FramingError) for o in whole)
    assert decode_all(JSONArrayDecoder(), data.draw(chunkings(body), label="chunks")) == whole


def test_elements_deeper_than_the_fast_path_use_the_scanner() -> None:
    deep: Any = 1
    for i in range(30):
        deep = {"k": deep} if i % 2 else [deep, "]}"]
    body = ("[" + json.dumps(deep) + ",\r\n" + json.dumps(deep, indent=1) + "]").encode()
    assert [o.value for o in decode(body)] == [deep, deep]  # type: ignore[union-attr]
    assert [o.value for o in decode_all(JSONArrayDecoder(), one_byte_chunks(body))] == [deep, deep]  # type: ignore[union-attr]
