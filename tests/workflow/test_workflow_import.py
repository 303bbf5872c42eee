"""``stream-harness import``: each input kind gives a cassette that vcrpy replays and that
the reference normalizes like the original.

The originals are the bundled cassettes (and, when present, corpus cassettes in other
projects' dialects): each is turned into the input a user would have (the raw body, the
JSON lines of its payloads, a HAR entry, a gzip or ``parsed_body`` cassette), imported,
and compared with the original event for event.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
from pathlib import Path

import httpx
import pytest
import vcr
from tests.conftest import REPO_ROOT

from stream_harness.contract.events import ErrorEvent
from stream_harness.providers.reference import normalize
from stream_harness.recordings.cassette import Interaction, load_cassette
from stream_harness.recordings.golden import interaction_events
from stream_harness.wire.sse import SSEDecoder, SSEEvent
from stream_harness.workflow.endpoints import endpoints
from stream_harness.workflow.importing import add_import_parser, detect_format, import_command
from stream_harness.workflow.lint import lint_file

PROTOCOLS = sorted(endpoints())


def _streams() -> list[tuple[str, Path, int]]:
    out = []
    for protocol in PROTOCOLS:
        for path in sorted((REPO_ROOT / "cassettes" / protocol).glob("*.yaml")):
            for it in load_cassette(path).interactions:
                if it.is_streaming and it.response.status == 200:
                    out.append((protocol, path, it.index))
    return out


STREAMS = _streams()
STREAM_IDS = [f"{p}/{path.stem}#{i}" for p, path, i in STREAMS]


def _import(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="stream-harness")
    add_import_parser(parser.add_subparsers())
    args = parser.parse_args(["import", *argv])
    return import_command(args)


def _original(path: Path, index: int) -> Interaction:
    return load_cassette(path).interactions[index]


def _only(out: Path) -> Interaction:
    cassette = load_cassette(out)
    assert len(cassette.interactions) == 1
    return cassette.interactions[0]


def _replay(cassette: Path, it: Interaction) -> httpx.Response:
    with vcr.use_cassette(str(cassette), record_mode="none"), httpx.Client() as client:
        return client.request(it.request.method, it.request.uri, content=it.request.body)


def _imported_raw(tmp_path: Path, protocol: str, original: Interaction, out: Path) -> Interaction:
    """``original``'s response body, saved as a raw file and imported to ``out``."""
    raw = tmp_path / "body.txt"
    raw.write_bytes(original.response.body)
    assert _import(str(raw), "--protocol", protocol, "--out", str(out)) == 0
    return _only(out)


def test_bundled_streams_are_many() -> None:
    assert len({p for p, _, _ in STREAMS}) == len(PROTOCOLS)
    assert len(STREAMS) >= 40


@pytest.mark.parametrize(("protocol", "path", "index"), STREAMS, ids=STREAM_IDS)
def test_raw_body_imports_and_normalizes_like_the_original(
    protocol: str, path: Path, index: int, tmp_path: Path
) -> None:
    original = _original(path, index)
    out = tmp_path / protocol / "imported.yaml"
    imported = _imported_raw(tmp_path, protocol, original, out)
    assert imported.response.body == original.response.body
    assert imported.is_streaming
    assert interaction_events(imported, protocol) == interaction_events(original, protocol)
    assert lint_file(out).findings == []


def _payloads(body: bytes) -> list[str]:
    decoder = SSEDecoder()
    items = decoder.feed(body) + decoder.close()
    return [item.data for item in items if isinstance(item, SSEEvent)]


SSE_STREAMS = [
    pytest.param(p, path, i, id=f"{p}/{path.stem}#{i}")
    for p, path, i in STREAMS
    if _original(path, i).stream_framing == "sse"
]


@pytest.mark.parametrize(("protocol", "path", "index"), SSE_STREAMS)
def test_json_lines_import_and_normalize_like_the_original(
    protocol: str, path: Path, index: int, tmp_path: Path
) -> None:
    original = _original(path, index)
    payloads = [d for d in _payloads(original.response.body) if d != "[DONE]"]
    assert payloads and all("\n" not in d for d in payloads)
    lines = tmp_path / "chunks.jsonl"
    lines.write_text("".join(d + "\n" for d in payloads), encoding="utf-8")
    out = tmp_path / protocol / "imported.yaml"
    assert _import(str(lines), "--protocol", protocol, "--out", str(out)) == 0
    imported = _only(out)
    sentinel = endpoints()[protocol].sse.done  # specs/recording.yaml
    done = [sentinel] if sentinel is not None else []
    assert _payloads(imported.response.body) == [*payloads, *done]
    # The framing is put back as the provider sends it, [DONE] included; a fixture whose
    # point is a missing [DONE] (eof_without_done) is compared with [DONE] added.
    expected = original.response.body
    if sentinel and sentinel.encode() not in expected:
        expected += b"data: " + sentinel.encode() + b"\n\n"
    assert interaction_events(imported, protocol) == list(normalize(protocol, [expected]))


def test_json_lines_get_the_providers_framing(tmp_path: Path) -> None:
    cases = {
        "anthropic-messages": (
            b'{"type":"message_stop"}\n',
            b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
        ),
        "openai-responses": (
            b'{"type":"response.completed"}\n',
            b'event: response.completed\ndata: {"type":"response.completed"}\n\n',
        ),
        "openai-completions": (b'{"choices":[]}\n', b'data: {"choices":[]}\n\ndata: [DONE]\n\n'),
        "google-generative-ai": (b'{"candidates":[]}\n', b'data: {"candidates":[]}\r\n\r\n'),
    }
    for protocol, (lines, expected) in cases.items():
        src = tmp_path / f"{protocol}.jsonl"
        src.write_bytes(lines)
        out = tmp_path / f"{protocol}.yaml"
        assert _import(str(src), "--protocol", protocol, "--out", str(out)) == 0
        assert _only(out).response.body == expected, protocol


@pytest.mark.parametrize(("protocol", "path", "index"), STREAMS[::7], ids=STREAM_IDS[::7])
def test_imported_cassettes_replay_through_vcrpy(
    protocol: str, path: Path, index: int, tmp_path: Path
) -> None:
    original = _original(path, index)
    out = tmp_path / "imported.yaml"
    response = _replay(out, _imported_raw(tmp_path, protocol, original, out))
    assert response.status_code == 200
    assert response.content == original.response.body


def test_curl_i_output_keeps_status_and_headers_and_drops_cookies(tmp_path: Path) -> None:
    original = _original(REPO_ROOT / "cassettes" / "anthropic-messages" / "plain_text.yaml", 0)
    head = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/2 200 \r\ncontent-type: text/event-stream\r\nset-cookie: __cf_bm=abcdefgh12345678; path=/\r\nrequest-id: req_1\r\n\r\n"
    raw = tmp_path / "curl.txt"
    raw.write_bytes(head + original.response.body)
    out = tmp_path / "imported.yaml"
    assert _import(str(raw), "--protocol", "anthropic-messages", "--out", str(out)) == 0
    imported = _only(out)
    assert imported.response.status == 200
    assert imported.response.headers == {
        "content-type": ["text/event-stream"],
        "request-id": ["req_1"],
    }
    assert imported.response.body == original.response.body
    assert interaction_events(imported) == interaction_events(original)


def test_raw_error_body_with_a_status(tmp_path: Path) -> None:
    original = _original(
        REPO_ROOT / "cassettes" / "anthropic-messages" / "http_429_rate_limit.yaml", 0
    )
    raw = tmp_path / "error.json"
    raw.write_bytes(original.response.body)
    out = tmp_path / "imported.yaml"
    assert (
        _import(
            str(raw),
            "--protocol",
            "anthropic-messages",
            "--out",
            str(out),
            "--format",
            "raw",
            "--status",
            "429",
        )
        == 0
    )
    imported = _only(out)
    assert imported.response.status == 429
    # Without headers the retry-after is unknown; the error itself is the same.
    [_, got], [_, want] = interaction_events(imported), interaction_events(original)
    assert isinstance(got, ErrorEvent) and isinstance(want, ErrorEvent)
    assert (got.error_message, got.error and got.error.kind) == (
        want.error_message,
        want.error and want.error.kind,
    )


def test_curl_i_error_response_normalizes_like_the_original(tmp_path: Path) -> None:
    original = _original(
        REPO_ROOT / "cassettes" / "anthropic-messages" / "http_429_rate_limit.yaml", 0
    )
    head = "HTTP/1.1 429 Too Many Requests\r\n" + "".join(
        f"{name}: {value}\r\n"
        for name, values in original.response.headers.items()
        for value in values
    )
    raw = tmp_path / "curl.txt"
    raw.write_bytes(head.encode() + b"\r\n" + original.response.body)
    out = tmp_path / "imported.yaml"
    assert _import(str(raw), "--protocol", "anthropic-messages", "--out", str(out)) == 0
    imported = _only(out)
    assert (imported.response.status, imported.response.reason) == (429, "Too Many Requests")
    assert interaction_events(imported, "anthropic-messages") == interaction_events(
        original, "anthropic-messages"
    )


def test_raw_import_uses_the_request_file(tmp_path: Path) -> None:
    original = _original(REPO_ROOT / "cassettes" / "google-generative-ai" / "plain_text.yaml", 0)
    raw = tmp_path / "body.txt"
    raw.write_bytes(original.response.body)
    request = tmp_path / "request.json"
    request.write_text(
        json.dumps(
            {"model": "gemini-2.5-flash", "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
        )
    )
    out = tmp_path / "imported.yaml"
    assert (
        _import(
            str(raw),
            "--protocol",
            "google-generative-ai",
            "--out",
            str(out),
            "--request",
            str(request),
        )
        == 0
    )
    imported = _only(out)
    assert (
        imported.request.uri
        == "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert json.loads(imported.request.body) == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}]
    }
    assert "x-goog-api-key" not in imported.request.headers  # import never sends or stores a key


def _har(
    original: Interaction, *, base64_body: bool = False, with_text: bool = True
) -> dict[str, object]:
    body = original.response.body
    content: dict[str, object] = {
        "size": len(body),
        "mimeType": original.response.content_type or "",
    }
    if with_text:
        content["text"] = base64.b64encode(body).decode() if base64_body else body.decode("utf-8")
        if base64_body:
            content["encoding"] = "base64"
    return {
        "log": {
            "version": "1.2",
            "creator": {"name": "WebInspector", "version": "537.36"},
            "entries": [
                {
                    "request": {
                        "method": "GET",
                        "url": "https://app.example.com/static/app.js",
                        "headers": [],
                        "cookies": [],
                    },
                    "response": {
                        "status": 200,
                        "statusText": "OK",
                        "headers": [],
                        "content": {"size": 3, "mimeType": "text/javascript", "text": "x=1"},
                    },
                },
                {
                    "request": {
                        "method": "POST",
                        "url": original.request.uri,
                        "headers": [
                            {"name": ":authority", "value": "api.anthropic.com"},
                            {"name": "x-api-key", "value": "sk-ant-" + "api03-" + "H4r" * 14},
                            {"name": "cookie", "value": "sessionid=abcdef123456789"},
                            {"name": "content-type", "value": "application/json"},
                        ],
                        "cookies": [{"name": "sessionid", "value": "abcdef123456789"}],
                        "postData": {
                            "mimeType": "application/json",
                            "text": original.request.body.decode(),
                        },
                    },
                    "response": {
                        "status": 200,
                        "statusText": "",
                        "headers": [
                            {"name": "content-type", "value": "text/event-stream; charset=utf-8"},
                            {"name": "content-encoding", "value": "br"},
                            {
                                "name": "anthropic-organization-id",
                                "value": "0f0e0d0c-1111-2222-3333-444455556666",
                            },
                            {"name": "set-cookie", "value": "_cfuvid=abcdefgh12345678; path=/"},
                        ],
                        "cookies": [{"name": "_cfuvid", "value": "abcdefgh12345678"}],
                        "content": content,
                    },
                },
            ],
        }
    }


@pytest.mark.parametrize("base64_body", [False, True], ids=["text", "base64"])
def test_har_import_picks_the_stream_and_drops_credentials(
    base64_body: bool, tmp_path: Path
) -> None:
    original = _original(REPO_ROOT / "cassettes" / "anthropic-messages" / "tool_call.yaml", 0)
    har = tmp_path / "session.har"
    har.write_text(json.dumps(_har(original, base64_body=base64_body)))
    out = tmp_path / "imported.yaml"
    assert _import(str(har), "--protocol", "anthropic-messages", "--out", str(out)) == 0
    imported = _only(out)
    assert imported.request.uri == original.request.uri
    assert imported.request.headers == {"content-type": ["application/json"]}
    assert imported.response.headers == {"content-type": ["text/event-stream; charset=utf-8"]}
    assert imported.response.body == original.response.body
    text = out.read_bytes()
    for secret in (b"H4rH4r", b"abcdef123456789", b"abcdefgh12345678", b"0f0e0d0c"):
        assert secret not in text
    assert interaction_events(imported) == interaction_events(original)
    assert _replay(out, imported).content == original.response.body


def test_har_entry_selection_and_missing_bodies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = _original(REPO_ROOT / "cassettes" / "anthropic-messages" / "plain_text.yaml", 0)
    har = tmp_path / "session.har"
    har.write_text(json.dumps(_har(original)))
    out = tmp_path / "js.yaml"
    # Entry 0 is a script, not a stream: refused unless --force says it is meant.
    assert (
        _import(str(har), "--protocol", "anthropic-messages", "--out", str(out), "--entry", "0")
        == 2
    )
    assert "not a anthropic-messages stream" in capsys.readouterr().err and not out.exists()
    assert (
        _import(
            str(har),
            "--protocol",
            "anthropic-messages",
            "--out",
            str(out),
            "--entry",
            "0",
            "--force",
        )
        == 0
    )
    assert _only(out).response.body == b"x=1"
    har.write_text(json.dumps(_har(original, with_text=False)))
    assert (
        _import(str(har), "--protocol", "anthropic-messages", "--out", str(tmp_path / "none.yaml"))
        == 2
    )
    assert "has no response body" in capsys.readouterr().err
    assert (
        _import(str(har), "--protocol", "openai-responses", "--out", str(tmp_path / "none.yaml"))
        == 2
    )
    assert "no HAR entry is a openai-responses request" in capsys.readouterr().err
    assert not (tmp_path / "none.yaml").exists()


GZIP_CASSETTE = """\
interactions:
- request:
    body: '{{"contents":[]}}'
    headers:
      Content-Type: [application/json]
      x-goog-api-key: [{key}]
    method: POST
    uri: https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse
  response:
    body:
      string: !!binary |
        {body}
    headers:
      Content-Encoding: [gzip]
      Content-Type: [text/event-stream]
    status: {{code: 200, message: OK}}
version: 1
"""

PARSED_BODY_CASSETTE = """\
interactions:
- request:
    headers:
      content-type: [application/json]
    method: POST
    parsed_body:
      model: gpt-4.1
      stream: true
    uri: https://api.openai.com/v1/chat/completions
  response:
    headers:
      content-type: [application/json]
    parsed_body:
      error:
        code: context_length_exceeded
        message: This model's maximum context length is 128000 tokens.
        type: invalid_request_error
    status:
      code: 400
      message: Bad Request
version: 1
"""


def test_gzip_cassette_import(tmp_path: Path) -> None:
    original = _original(REPO_ROOT / "cassettes" / "google-generative-ai" / "plain_text.yaml", 0)
    packed = base64.b64encode(gzip.compress(original.response.body)).decode()
    src = tmp_path / "theirs.yaml"
    src.write_text(GZIP_CASSETTE.format(key="AI" + "za" + "Sy" + "C" * 33, body=packed))
    out = tmp_path / "imported.yaml"
    assert _import(str(src), "--protocol", "google-generative-ai", "--out", str(out)) == 0
    imported = _only(out)
    assert imported.response.body == original.response.body
    assert imported.response.decoded_encoding is False  # stored decoded
    assert "content-encoding" not in imported.response.headers
    assert "x-goog-api-key" not in imported.request.headers
    assert interaction_events(imported) == interaction_events(original)
    assert _replay(out, imported).content == original.response.body


def test_parsed_body_cassette_import(tmp_path: Path) -> None:
    src = tmp_path / "theirs.yaml"
    src.write_text(PARSED_BODY_CASSETTE)
    out = tmp_path / "imported.yaml"
    assert _import(str(src), "--protocol", "openai-completions", "--out", str(out)) == 0
    imported = _only(out)
    # pydantic-ai's deserializer rebuilds the body with json.dumps; so does the import.
    expected = json.dumps(
        {
            "error": {
                "code": "context_length_exceeded",
                "message": "This model's maximum context length is 128000 tokens.",
                "type": "invalid_request_error",
            }
        }
    )
    assert imported.response.body == expected.encode()
    assert imported.request.body == b'{"model": "gpt-4.1", "stream": true}'
    assert interaction_events(imported, "openai-completions") == interaction_events(
        _original(src, 0), "openai-completions"
    )
    response = _replay(out, imported)
    assert (response.status_code, response.content) == (400, expected.encode())


CORPUS_CASSETTES = [
    ("gemini/llm-gemini__test_prompt.yaml", "google-generative-ai"),  # gzip !!binary, JSON array
    (
        "anthropic_messages/pydantic-ai__test_anthropic_model_thinking_part_stream.yaml",
        "anthropic-messages",
    ),
    (
        "openai_chat/pydantic-ai__test_context_window_exceeded[groq].yaml",
        "openai-completions",
    ),  # parsed_body
    ("openai_responses", "openai-responses"),
]


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("name", "protocol"), CORPUS_CASSETTES, ids=[n for n, _ in CORPUS_CASSETTES]
)
def test_corpus_cassettes_import_and_normalize_alike(
    name: str, protocol: str, corpus_dir: Path, tmp_path: Path
) -> None:
    src = corpus_dir / name
    if src.is_dir():  # the first cassette of the folder
        src = sorted(src.glob("*.yaml"))[0]
    if not src.is_file():
        pytest.skip(f"{name} is not in this corpus")
    original = load_cassette(src)
    out = tmp_path / "imported.yaml"
    assert _import(str(src), "--protocol", protocol, "--out", str(out)) == 0
    imported = load_cassette(out)
    assert len(imported.interactions) == len(original.interactions)
    for before, after in zip(original.interactions, imported.interactions, strict=True):
        assert after.response.body == before.response.body
        assert interaction_events(after, protocol) == interaction_events(before, protocol)
    last = imported.interactions[-1]
    assert _replay(out, last).content == last.response.body


def test_import_scrubs_secrets_in_a_raw_body(tmp_path: Path) -> None:
    key = "sk-" + "proj-" + "Ab1" * 16
    body = (
        'data: {"choices":[{"index":0,"delta":{"content":"key ' + key + '"}}]}\n\ndata: [DONE]\n\n'
    )
    raw = tmp_path / "body.txt"
    raw.write_text(body)
    out = tmp_path / "imported.yaml"
    assert _import(str(raw), "--protocol", "openai-completions", "--out", str(out)) == 0
    assert _only(out).response.body == body.replace(key, "<filtered>").encode()


def test_import_keeps_an_existing_cassette_without_force(tmp_path: Path) -> None:
    raw = tmp_path / "body.txt"
    raw.write_bytes(b'data: {"choices":[]}\n\ndata: [DONE]\n\n')
    out = tmp_path / "x.yaml"
    out.write_text("old\n")
    assert _import(str(raw), "--protocol", "openai-completions", "--out", str(out)) == 2
    assert out.read_text() == "old\n"
    assert _import(str(raw), "--protocol", "openai-completions", "--out", str(out), "--force") == 0
    assert _only(out).response.body == b'data: {"choices":[]}\n\ndata: [DONE]\n\n'


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("x.yaml", b"interactions: []\nversion: 1\n", "cassette"),
        ("x.har", b"{}", "har"),
        ("export.json", b'{"log": {"entries": []}}', "har"),
        ("chunks.txt", b'{"type":"message_start"}\n{"type":"message_stop"}\n', "jsonl"),
        ("body.txt", b'event: message_start\ndata: {"type":"message_start"}\n\n', "raw"),
        ("body.txt", b'[{"candidates": []}\n]', "raw"),
        ("curl.txt", b"HTTP/1.1 200 OK\r\n\r\ndata: x\n\n", "raw"),
    ],
)
def test_input_kind_detection(name: str, data: bytes, expected: str) -> None:
    assert detect_format(Path(name), data) == expected
