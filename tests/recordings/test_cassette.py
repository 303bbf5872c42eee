"""stream_harness.recordings.cassette: every storage form real projects write, errors, and dump round trips.

The cassettes here are YAML typed by hand in each project's dialect, and every expected
body is spelled out literally after reading the YAML rules for that scalar style, so the
oracle is the YAML spec, not the loader. vcrpy itself (its loader, and its replay through
httpx) is the second oracle for what a cassette means.
"""

from __future__ import annotations

import base64
import gzip
import struct
import sys
import textwrap
import zlib
from pathlib import Path

import httpx
import pytest
import vcr
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st
from vcr.serializers import yamlserializer

from stream_harness.recordings.cassette import (
    Cassette,
    CassetteError,
    Interaction,
    Request,
    Response,
    dump_cassette,
    load_cassette,
)


def write(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def b64_block(data: bytes, indent: int) -> str:
    """``data`` as the base64 lines of a ``!!binary |`` block at ``indent`` spaces."""
    encoded = base64.encodebytes(data).decode("ascii")
    return "".join(" " * indent + line + "\n" for line in encoded.splitlines())


def binary_body(data: bytes) -> str:
    """The response ``body:`` YAML of a cassette holding ``data`` as a ``!!binary`` string."""
    return "    body:\n      string: !!binary |\n" + b64_block(data, 8)


def one_response(body_yaml: str, headers_yaml: str = "headers: {}") -> str:
    """A one-interaction cassette whose response body/header YAML is given verbatim."""
    return (
        "interactions:\n"
        "- request:\n"
        "    body: null\n"
        "    headers: {}\n"
        "    method: POST\n"
        "    uri: https://api.example.com/v1/x\n"
        "  response:\n"
        f"{body_yaml}"
        f"    {headers_yaml}\n"
        "    status:\n"
        "      code: 200\n"
        "      message: OK\n"
        "version: 1\n"
    )


def only(path: Path) -> Interaction:
    cassette = load_cassette(path)
    assert len(cassette.interactions) == 1
    return cassette.interactions[0]


# ---------------------------------------------------------------------------
# Storage forms
# ---------------------------------------------------------------------------


def test_literal_block_keep_chomping_pydantic_ai_style(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        interactions:
        - request:
            headers:
              content-type:
              - application/json
            method: POST
            parsed_body:
              stream: true
            uri: https://api.anthropic.com/v1/messages?beta=true
          response:
            body:
              string: |+
                event: ping
                data: {"type": "ping"}

                event: content_block_stop
                data: {"type":"content_block_stop","index":0    }


            headers:
              content-type:
              - text/event-stream; charset=utf-8
            status:
              code: 200
              message: OK
        version: 1
        """,
    )
    it = only(path)
    assert it.response.body == (
        b'event: ping\ndata: {"type": "ping"}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0    }\n\n\n'
    )
    assert it.response.body_exact is True
    assert it.response.decoded_encoding is False
    assert it.response.content_type == "text/event-stream"
    assert it.request.body == b'{"stream": true}'
    assert it.request.body_exact is False
    assert it.is_streaming and it.stream_framing == "sse"


def test_single_quoted_folded_openinference_style(tmp_path: Path) -> None:
    # Single-quoted flow scalar: one line break folds to a space, each blank line is a
    # newline, '' is a quote. No response headers at all, as openinference records.
    body_yaml = """\
    body:
      string: 'event: message_start

        data: {"text":"Sunlight
        scatters","q":"it''s"}


        '
"""
    it = only(write(tmp_path, one_response(body_yaml)))
    assert it.response.body == (
        b'event: message_start\ndata: {"text":"Sunlight scatters","q":"it\'s"}\n\n'
    )
    assert it.response.headers == {}
    assert it.response.content_type is None
    assert it.stream_framing == "sse"


def test_double_quoted_with_escapes_and_continuations(tmp_path: Path) -> None:
    # \xE9 is U+00E9 (UTF-8 C3 A9); "\" at a line end joins without a space; a plain
    # line break inside double quotes folds to a space; \r\n are kept (Gemini alt=sse).
    body_yaml = r"""    body:
      string: "data: {\"a\":\"h\xE9llo\",\"b\":\"x\
        y\"}\r\n\r\ndata: {\"c\":\"one
        two\"}\r\n\r\n"
"""
    it = only(write(tmp_path, one_response(body_yaml)))
    assert it.response.body == (
        b'data: {"a":"h\xc3\xa9llo","b":"xy"}\r\n\r\ndata: {"c":"one two"}\r\n\r\n'
    )


def test_binary_gzip_body_is_gunzipped_and_headers_kept(tmp_path: Path) -> None:
    plain = b'[{\n  "candidates": []\n}\n,\r\n{\n  "usageMetadata": {}\n}\n]'
    body_yaml = binary_body(gzip.compress(plain))
    headers_yaml = (
        "headers:\n      Content-Encoding:\n      - gzip\n"
        "      Content-Type:\n      - application/json; charset=UTF-8"
    )
    it = only(write(tmp_path, one_response(body_yaml, headers_yaml)))
    assert it.response.body == plain
    assert it.response.decoded_encoding is True
    assert it.response.headers["content-encoding"] == ["gzip"]
    assert it.response.header("CONTENT-ENCODING") == "gzip"


@pytest.mark.parametrize(
    "compress",
    [
        pytest.param(zlib.compress, id="zlib-wrapped"),
        pytest.param(lambda b: zlib.compress(b)[2:-4], id="raw-deflate"),
    ],
)
def test_binary_deflate_body(tmp_path: Path, compress: object) -> None:
    plain = b"data: deflated\n\n"
    data = compress(plain)  # type: ignore[operator]
    body_yaml = binary_body(data)
    it = only(write(tmp_path, one_response(body_yaml, "headers: {content-encoding: [deflate]}")))
    assert it.response.body == plain


def test_several_content_encodings_are_undone_last_first(tmp_path: Path) -> None:
    # "gzip, deflate" says gzip was applied first, then deflate (RFC 9110 8.4).
    plain = b"two layers"
    data = zlib.compress(gzip.compress(plain))
    body_yaml = binary_body(data)
    for headers_yaml in (
        "headers: {content-encoding: ['gzip, deflate']}",
        "headers: {content-encoding: [gzip, deflate]}",
    ):
        it = only(write(tmp_path, one_response(body_yaml, headers_yaml)))
        assert it.response.body == plain


def test_identity_encoding_changes_nothing(tmp_path: Path) -> None:
    it = only(
        write(
            tmp_path,
            one_response("    body: {string: 'x'}\n", "headers: {content-encoding: [identity]}"),
        )
    )
    assert it.response.body == b"x"
    assert it.response.decoded_encoding is False


def test_parsed_body_becomes_json_dumps_bytes(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        interactions:
        - request:
            headers: {}
            method: POST
            parsed_body:
              messages:
              - {content: "caf\\xE9", role: user}
              n: 1.5
            uri: https://api.example.com/v1/x
          response:
            headers:
              content-type:
              - application/json
            parsed_body:
              error:
                message: prompt is too long
                type: invalid_request_error
              ok: false
              ids: [1, 2]
            status:
              code: 400
              message: Bad Request
        version: 1
        """,
    )
    it = only(path)
    # What pydantic-ai's deserializer yields: json.dumps defaults, keys in file order.
    assert it.request.body == b'{"messages": [{"content": "caf\\u00e9", "role": "user"}], "n": 1.5}'
    assert it.response.body == (
        b'{"error": {"message": "prompt is too long", "type": "invalid_request_error"}, '
        b'"ok": false, "ids": [1, 2]}'
    )
    assert (it.request.body_exact, it.response.body_exact) == (False, False)
    assert (it.response.status, it.response.reason) == (400, "Bad Request")
    assert it.is_streaming is False


def test_headers_scalar_list_any_case_binary_and_merged(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        interactions:
        - request:
            body: ''
            headers:
              Content-Type: application/json
              amz-sdk-request:
              - !!binary |
                YXR0ZW1wdD0x
              content-length:
              - 223
            method: POST
            uri: https://api.example.com/v1/x
          response:
            body: {string: ''}
            headers:
              Content-Type: Text/Event-Stream; charset=utf-8
              X-Multi: [a, b]
              x-multi: c
            status: {code: 200, message: OK}
        version: 1
        """,
    )
    it = only(path)
    assert it.request.headers == {
        "content-type": ["application/json"],
        "amz-sdk-request": ["attempt=1"],
        "content-length": ["223"],
    }
    assert it.response.headers == {
        "content-type": ["Text/Event-Stream; charset=utf-8"],
        "x-multi": ["a", "b", "c"],
    }
    assert it.response.header("X-MULTI") == "a"
    assert it.response.header("absent") is None
    assert it.response.content_type == "text/event-stream"
    assert it.request.header("Content-Type") == "application/json"


def test_missing_headers_and_status_message(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        interactions:
        - request: {body: null, method: GET, uri: 'https://h/x'}
          response:
            body: {string: null}
            status: {code: 204}
        version: 1
        """,
    )
    it = only(path)
    assert it.request.headers == {} and it.response.headers == {}
    assert it.request.body == b"" and it.response.body == b""
    assert it.response.reason == ""
    assert it.response.content_type is None


@pytest.mark.parametrize(
    ("body_yaml", "expected"),
    [
        pytest.param("body: '{\"a\": 1}'", b'{"a": 1}', id="str"),
        pytest.param("body: !!binary AP8=", b"\x00\xff", id="bytes"),
        pytest.param("body: null", b"", id="none"),
        pytest.param('body: "caf\\xE9"', b"caf\xc3\xa9", id="non-ascii-str"),
        pytest.param("parsed_body: [1, {b: null}]", b'[1, {"b": null}]', id="parsed-list"),
        pytest.param("body: x\n    parsed_body: {a: 1}", b'{"a": 1}', id="parsed-wins"),
    ],
)
def test_request_body_forms(tmp_path: Path, body_yaml: str, expected: bytes) -> None:
    text = (
        "interactions:\n- request:\n"
        f"    {body_yaml}\n"
        "    headers: {}\n    method: POST\n    uri: https://h/x\n"
        "  response: {body: {string: ''}, headers: {}, status: {code: 200, message: OK}}\n"
        "version: 1\n"
    )
    assert only(write(tmp_path, text)).request.body == expected


def test_binary_eventstream_body_is_kept_verbatim(tmp_path: Path) -> None:
    frames = frame(b'{"p":"abc"}') + frame(b"{}")
    body_yaml = binary_body(frames)
    it = only(
        write(
            tmp_path,
            one_response(
                body_yaml, "headers: {content-type: [application/vnd.amazon.eventstream]}"
            ),
        )
    )
    assert it.response.body == frames
    assert it.response.decoded_encoding is False
    assert it.stream_framing == "eventstream"


def test_interaction_indexes_and_cassette_fields(tmp_path: Path) -> None:
    resp = "  response: {body: {string: ''}, headers: {}, status: {code: 200, message: OK}}\n"
    text = "interactions:\n" + "".join(
        f"- request: {{body: '', headers: {{}}, method: GET, uri: 'https://h/{n}'}}\n" + resp
        for n in range(3)
    )
    path = write(tmp_path, text + "version: 1\n")
    cassette = load_cassette(str(path))
    assert cassette.path == path
    assert cassette.version == 1
    assert [(i.index, i.request.uri) for i in cassette.interactions] == [
        (0, "https://h/0"),
        (1, "https://h/1"),
        (2, "https://h/2"),
    ]


def test_empty_interaction_list_is_a_valid_cassette(tmp_path: Path) -> None:
    assert load_cassette(write(tmp_path, "interactions: []\nversion: 1\n")).interactions == ()


# ---------------------------------------------------------------------------
# Streaming detection
# ---------------------------------------------------------------------------


def frame(payload: bytes) -> bytes:
    """One AWS event-stream message with no headers (length, CRCs per the AWS spec)."""
    prelude = struct.pack(">II", 16 + len(payload), 0)
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + payload
    return message + struct.pack(">I", zlib.crc32(message))


def make(
    body: bytes,
    content_type: str | None = None,
    uri: str = "https://api.example.com/v1/chat",
    request_body: bytes = b"",
) -> Interaction:
    headers = {"content-type": [content_type]} if content_type is not None else {}
    return Interaction(
        0,
        Request("POST", uri, {}, request_body),
        Response(200, "OK", headers, body),
    )


GEMINI = "https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent"
NDJSON = b'{"message":{"content":"a"},"done":false}\n{"done":true,"done_reason":"stop"}\n'


@pytest.mark.parametrize(
    ("interaction", "expected"),
    [
        pytest.param(make(b"data: {}\n\n", "text/event-stream"), "sse", id="sse-labelled"),
        pytest.param(make(b"", "text/event-stream"), "sse", id="sse-labelled-empty"),
        pytest.param(
            make(b'{\n  "error": {"code": 400}\n}\n', "text/event-stream", GEMINI + "?alt=sse"),
            None,
            id="gemini-json-error-labelled-sse",
        ),
        pytest.param(make(b"event: ping\ndata: {}\n\n"), "sse", id="no-headers-event"),
        pytest.param(make(b"event: completion\r\ndata: {}\r\n\r\n"), "sse", id="no-headers-crlf"),
        pytest.param(make(b": OPENROUTER PROCESSING\n\ndata: {}\n\n"), "sse", id="comment-first"),
        pytest.param(make(b"\n\ndata: {}\n\n"), "sse", id="leading-blank-lines"),
        pytest.param(make(b"datum: x\n\n"), None, id="not-a-field"),
        pytest.param(make(b'{"id": 1}'), None, id="no-headers-json"),
        pytest.param(
            make(NDJSON, uri="http://127.0.0.1:11434/api/chat"), "jsonlines", id="ollama-ndjson"
        ),
        pytest.param(make(NDJSON, "application/x-ndjson"), "jsonlines", id="ndjson-labelled"),
        pytest.param(
            make(b'{"error": "x"}\n', request_body=b'{"stream": true}'),
            None,
            id="one-json-line-is-not-a-stream",
        ),
        pytest.param(
            make(b'[{\n "candidates": []\n}\n]', "application/json", GEMINI),
            "jsonarray",
            id="gemini-json-array",
        ),
        pytest.param(
            make(b'[{"a": 1}]', "application/json", GEMINI + "?alt=sse"),
            None,
            id="alt-sse-uri-json-body",
        ),
        pytest.param(make(b'[{"a": 1}]', "application/json"), None, id="json-array-non-stream-uri"),
        pytest.param(
            make(frame(b"{}"), "application/vnd.amazon.eventstream"),
            "eventstream",
            id="eventstream-labelled",
        ),
        pytest.param(make(frame(b"{}")), "eventstream", id="eventstream-by-prelude-crc"),
        pytest.param(
            make(b"\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00\x00" + b"\x00" * 8),
            None,
            id="bad-prelude-crc",
        ),
        pytest.param(
            make(
                b'{"message": "The provided model identifier is invalid."}',
                "application/json",
                "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream",
            ),
            None,
            id="converse-stream-json-error",
        ),
        pytest.param(make(b"data: {}\n\n", "text/plain"), None, id="text-plain-no-hint"),
        pytest.param(
            make(b"data: {}\n\n", "text/plain", request_body=b'{"model": "m", "stream": true}'),
            "sse",
            id="text-plain-request-stream-true",
        ),
        pytest.param(
            make(b"data: {}\n\n", "text/plain", request_body=b'{"stream": false}'),
            None,
            id="text-plain-request-stream-false",
        ),
        pytest.param(
            make(b"data: {}\n\n", "application/json", "https://h/v1/x?stream=true"),
            "sse",
            id="query-stream-true",
        ),
    ],
)
def test_stream_framing(interaction: Interaction, expected: str | None) -> None:
    assert interaction.stream_framing == expected
    assert interaction.is_streaming is (expected is not None)


# ---------------------------------------------------------------------------
# Malformed cassettes
# ---------------------------------------------------------------------------

GOOD_RESPONSE = "  response: {body: {string: ''}, headers: {}, status: {code: 200, message: OK}}\n"
GOOD_REQUEST = "- request: {body: '', headers: {}, method: GET, uri: 'https://h/x'}\n"


def cassette_with(second: str) -> str:
    """A cassette whose interaction 1 is ``second`` (interaction 0 is fine)."""
    return "interactions:\n" + GOOD_REQUEST + GOOD_RESPONSE + second + "version: 1\n"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


MALFORMED_FILE = [
    pytest.param("", "empty file", id="empty"),
    pytest.param("interactions: [\n  - {a: 1\n", "invalid YAML at line", id="bad-yaml"),
    pytest.param("just some text\n", "not a cassette", id="scalar"),
    pytest.param("- request: {}\n  response: {}\n", "pre-1.0", id="old-format"),
    pytest.param("version: 1\n", "no 'interactions'", id="no-interactions"),
    pytest.param("interactions: {}\nversion: 1\n", "not a list", id="interactions-mapping"),
    pytest.param("interactions: []\n", "no 'version'", id="no-version"),
    pytest.param("interactions: []\nversion: 2\n", "unsupported cassette version 2", id="v2"),
    pytest.param("interactions: []\nversion: '1'\n", "not an integer", id="version-str"),
    pytest.param("interactions: []\nversion: 1\n\x00", "invalid YAML", id="nul-byte"),
    pytest.param("a: !!python/object:os.system x\n", "invalid YAML", id="unsafe-tag"),
    # libyaml refuses a lone surrogate escape while parsing.
    pytest.param('interactions: ["\\uD800"]\nversion: 1\n', "invalid YAML", id="lone-surrogate"),
]


@pytest.mark.parametrize(("text", "problem"), MALFORMED_FILE)
def test_malformed_file_gives_one_line_error_naming_the_file(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CassetteError) as info:
        load_cassette(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    assert problem in message
    assert info.value.index is None


MALFORMED_INTERACTION = [
    pytest.param("- just a string\n", "not a mapping", id="not-mapping"),
    pytest.param(GOOD_REQUEST, "no 'response'", id="no-response"),
    pytest.param("- response: {}\n", "no 'request'", id="no-request"),
    pytest.param("- request: []\n" + GOOD_RESPONSE, "'request' is a list", id="request-list"),
    pytest.param(
        "- request: {body: '', headers: {}, uri: 'https://h'}\n" + GOOD_RESPONSE,
        "request has no 'method'",
        id="no-method",
    ),
    pytest.param(
        "- request: {body: '', headers: {}, method: GET}\n" + GOOD_RESPONSE,
        "request has no 'uri'",
        id="no-uri",
    ),
    pytest.param(
        "- request: {body: '', headers: {}, method: 7, uri: 'https://h'}\n" + GOOD_RESPONSE,
        "request method is int",
        id="method-int",
    ),
    pytest.param(
        "- request: {headers: {}, method: GET, uri: 'https://h'}\n" + GOOD_RESPONSE,
        "neither 'body' nor 'parsed_body'",
        id="no-request-body",
    ),
    pytest.param(
        "- request: {body: {string: x}, headers: {}, method: GET, uri: 'https://h'}\n"
        + GOOD_RESPONSE,
        "request body is a mapping",
        id="request-body-mapping",
    ),
    pytest.param(
        "- request: {body: '', headers: [a], method: GET, uri: 'https://h'}\n" + GOOD_RESPONSE,
        "request headers are a list",
        id="headers-list",
    ),
    pytest.param(
        "- request: {body: '', headers: {a: [{b: c}]}, method: GET, uri: 'https://h'}\n"
        + GOOD_RESPONSE,
        "request header 'a' value is a mapping, not a string",
        id="header-value-mapping",
    ),
    pytest.param(
        "- request: {body: '', headers: {a: [true]}, method: GET, uri: 'https://h'}\n"
        + GOOD_RESPONSE,
        "request header 'a' value is bool, not a string",
        id="header-value-bool",
    ),
    pytest.param(
        "- request: {headers: {}, method: GET, uri: 'https://h', parsed_body: {d: 2024-01-01}}\n"
        + GOOD_RESPONSE,
        "request parsed_body is not JSON data",
        id="parsed-body-date",
    ),
    pytest.param(
        GOOD_REQUEST + "  response: {body: {string: ''}, headers: {}}\n",
        "no 'status'",
        id="no-status",
    ),
    pytest.param(
        GOOD_REQUEST + "  response: {body: {string: ''}, headers: {}, status: {code: '200'}}\n",
        "status code is a string",
        id="status-code-str",
    ),
    pytest.param(
        GOOD_REQUEST + "  response: {body: {string: ''}, headers: {}, status: {message: OK}}\n",
        "status code is null",
        id="no-status-code",
    ),
    pytest.param(
        GOOD_REQUEST + "  response: {headers: {}, status: {code: 200}}\n",
        "neither a 'body' mapping nor 'parsed_body'",
        id="no-response-body",
    ),
    pytest.param(
        GOOD_REQUEST + "  response: {body: {}, headers: {}, status: {code: 200}}\n",
        "response body has no 'string'",
        id="no-body-string",
    ),
    pytest.param(
        GOOD_REQUEST + "  response: {body: {string: 12}, headers: {}, status: {code: 200}}\n",
        "response body is int",
        id="body-int",
    ),
    pytest.param(
        GOOD_REQUEST + "  response: {body: {string: 'plain text'}, headers: {content-encoding: "
        "[gzip]}, status: {code: 200}}\n",
        "response body is not valid gzip",
        id="text-labelled-gzip",
    ),
    pytest.param(
        GOOD_REQUEST
        + "  response: {body: {string: !!binary "
        + b64(gzip.compress(b"hello" * 20)[:-10])
        + "}, headers: {content-encoding: [gzip]}, status: {code: 200}}\n",
        "response body is not valid gzip",
        id="truncated-gzip",
    ),
    pytest.param(
        GOOD_REQUEST + "  response: {body: {string: !!binary AAEC}, headers: "
        "{content-encoding: [deflate]}, status: {code: 200}}\n",
        "response body is not valid deflate",
        id="bad-deflate",
    ),
    pytest.param(
        GOOD_REQUEST + "  response: {body: {string: x}, headers: {content-encoding: [zstd]}, "
        "status: {code: 200}}\n",
        "unsupported content-encoding 'zstd'",
        id="zstd",
    ),
]


@pytest.mark.parametrize(("second", "problem"), MALFORMED_INTERACTION)
def test_malformed_interaction_names_file_and_index(
    tmp_path: Path, second: str, problem: str
) -> None:
    path = write(tmp_path, cassette_with(second), name="x.yaml")
    with pytest.raises(CassetteError) as info:
        load_cassette(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: interaction 1: ")
    assert problem in message
    assert info.value.index == 1


def test_brotli_needs_the_brotli_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry in sys.modules makes the import fail, whatever is installed.
    monkeypatch.setitem(sys.modules, "brotli", None)
    monkeypatch.setitem(sys.modules, "brotlicffi", None)
    second = (
        GOOD_REQUEST + "  response: {body: {string: !!binary AAEC}, headers: "
        "{content-encoding: [br]}, status: {code: 200}}\n"
    )
    with pytest.raises(CassetteError, match="br-encoded; install 'brotli'"):
        load_cassette(write(tmp_path, cassette_with(second)))


def test_missing_file_is_a_cassette_error(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="cannot read file"):
        load_cassette(tmp_path / "nope.yaml")


def test_cassette_error_pickles_for_xdist() -> None:
    import pickle

    error = CassetteError("a.yaml", "bad\nthing", 3)
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == str(error) == "a.yaml: interaction 3: bad thing"


# ---------------------------------------------------------------------------
# dump -> load
# ---------------------------------------------------------------------------


def sse_interaction(response_body: bytes, request_body: bytes = b'{"stream": true}') -> Interaction:
    return Interaction(
        0,
        Request(
            "POST",
            "https://api.example.com/v1/chat",
            {"content-type": ["application/json"]},
            request_body,
        ),
        Response(200, "OK", {"content-type": ["text/event-stream"]}, response_body),
    )


AWKWARD = {
    "crlf": b"data: {}\r\n\r\ndata: [DONE]\r\n\r\n",
    "trailing-spaces": b'data: {"a":1}    \n\ndata: x \n',
    "invalid-utf8": b"data: \xff\xfe\n\n",
    "nul": b"data: \x00\n\n",
    "lone-cr": b"a\rb\n",
    "nel-ls-ps": "a\x85b\u2028c\u2029d\n".encode(),
    "bom": b"\xef\xbb\xbfdata: x\n\n",
    "tab": b"data:\tx\n\n\t\n",
    "leading-spaces": b"   indented\nline\n",
    "no-final-newline": b"event: a\ndata: b",
    "only-newlines": b"\n\n\n",
    "yaml-lookalike": b"- a: b\n# c\n--- \n...\n",
    "emoji": "data: \U0001f600 \u00e9\n\n".encode(),
    "empty": b"",
    "gzip-bytes": gzip.compress(b"x" * 100),
}


@pytest.mark.parametrize("body", list(AWKWARD.values()), ids=list(AWKWARD))
def test_dump_load_round_trip_is_byte_exact(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "out.yaml"
    original = sse_interaction(body, request_body=body)
    dump_cassette([original], path)
    back = only(path)
    assert back == original


def test_dump_writes_literal_blocks_for_plain_sse(tmp_path: Path) -> None:
    body = b'event: message_start\ndata: {"type":"message_start"}\n\ndata: [DONE]\n\n'
    path = tmp_path / "out.yaml"
    dump_cassette([sse_interaction(body)], path)
    text = path.read_text(encoding="utf-8")
    # Each SSE line is its own YAML line, so a re-recording diffs line by line.
    assert "string: |" in text
    assert '\n        data: {"type":"message_start"}\n' in text
    assert only(path).response.body == body


def test_dump_uses_quoted_text_for_crlf_and_binary_for_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "out.yaml"
    dump_cassette([sse_interaction(AWKWARD["crlf"], request_body=b"\xff")], path)
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert raw["interactions"][0]["response"]["body"]["string"] == AWKWARD["crlf"].decode()
    assert raw["interactions"][0]["request"]["body"] == b"\xff"


def test_dump_accepts_a_cassette_and_overwrites_atomically(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "out.yaml"
    first = Cassette(path, (sse_interaction(b"data: 1\n\n"),), 1)
    dump_cassette(first, path)
    dump_cassette([sse_interaction(b"data: 2\n\n")], path)
    assert only(path).response.body == b"data: 2\n\n"
    assert [p.name for p in path.parent.iterdir()] == ["out.yaml"]  # no temp files left
    assert path.stat().st_mode & 0o777 == 0o644  # not mkstemp's private 0600


def _gzipped_and_dumped(tmp_path: Path, plain: bytes, headers_yaml: str) -> tuple[Path, Path]:
    """A cassette whose stored body is ``plain`` gzipped (src.yaml), and what dump_cassette
    writes of it (out.yaml)."""
    src = write(
        tmp_path, one_response(binary_body(gzip.compress(plain)), headers_yaml), name="src.yaml"
    )
    out = tmp_path / "out.yaml"
    dump_cassette(load_cassette(src), out)
    return src, out


def test_dump_drops_content_encoding_because_the_body_is_decoded(tmp_path: Path) -> None:
    plain = b'[{"a": 1}]'
    _, out = _gzipped_and_dumped(
        tmp_path, plain, "headers: {Content-Encoding: [gzip], Content-Length: ['999'], X-Keep: [y]}"
    )
    back = only(out).response
    assert back.body == plain
    assert back.headers == {"content-length": [str(len(plain))], "x-keep": ["y"]}
    assert back.decoded_encoding is False


# Characters that stress YAML scalar styles: line breaks of every kind, quotes, escape
# starters, indicators, BOM, controls, trailing spaces, non-BMP.
AWKWARD_TEXT = st.lists(
    st.sampled_from(
        [
            *"\n\r\t \x00\x85\u2028\u2029\ufeff\x7f\\\"'#:-|>{}[]&*!%@`,?éa0",
            *["\U0001f600", "data: ", "\r\n", "\n\n"],
        ]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(
    response_body=st.one_of(st.binary(max_size=200), AWKWARD_TEXT.map(str.encode)),
    request_body=st.one_of(st.binary(max_size=50), AWKWARD_TEXT.map(str.encode)),
)
@example(response_body=b"a\x85b\n", request_body=b"")
@example(response_body=b" \n", request_body=b"\r")
def test_round_trip_property(
    tmp_path_factory: pytest.TempPathFactory, response_body: bytes, request_body: bytes
) -> None:
    path = tmp_path_factory.getbasetemp() / "prop.yaml"
    original = sse_interaction(response_body, request_body)
    dump_cassette([original], path)
    back = only(path)
    assert back.response.body == response_body
    assert back.request.body == request_body
    # vcrpy's own loader reads the same bytes from the file we wrote.
    data = yamlserializer.deserialize(path.read_text(encoding="utf-8"))
    stored = data["interactions"][0]["response"]["body"]["string"]
    assert (stored if isinstance(stored, bytes) else stored.encode()) == response_body


# ---------------------------------------------------------------------------
# vcrpy replays what we dump
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [AWKWARD["crlf"], AWKWARD["invalid-utf8"], AWKWARD["trailing-spaces"], b"data: [DONE]\n\n"],
    ids=["crlf", "invalid-utf8", "trailing-spaces", "plain"],
)
def test_vcrpy_replays_a_dumped_cassette_through_httpx(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "replay.yaml"
    dump_cassette([sse_interaction(body)], path)
    # record_mode "none": an unmatched request raises instead of reaching the network.
    player = vcr.VCR(record_mode="none")
    with player.use_cassette(str(path), allow_playback_repeats=True), httpx.Client() as client:
        response = client.post("https://api.example.com/v1/chat", content=b'{"stream": true}')
        with client.stream("POST", "https://api.example.com/v1/chat") as streamed:
            streamed_bytes = b"".join(streamed.iter_bytes())
    assert response.content == body
    assert (response.status_code, response.reason_phrase) == (200, "OK")
    assert response.headers["content-type"] == "text/event-stream"
    assert streamed_bytes == body


def test_gzip_cassette_vcrpy_and_loader_agree_before_and_after_dump(tmp_path: Path) -> None:
    plain = b'[{\n  "candidates": [{"content": {"parts": [{"text": "Pelly"}]}}]\n}\n]'
    src, out = _gzipped_and_dumped(
        tmp_path, plain, "headers: {Content-Encoding: [gzip], Content-Type: [application/json]}"
    )
    for path in (src, out):
        with vcr.VCR(record_mode="none").use_cassette(str(path)), httpx.Client() as client:
            content = client.post("https://api.example.com/v1/x").content
        assert content == plain  # httpx gunzips the original; ours is stored decoded
        assert only(path).response.body == plain
