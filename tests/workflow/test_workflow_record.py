"""``stream-harness record`` against a local chunked-transfer server on 127.0.0.1.

No provider and no network beyond 127.0.0.1: the server streams a known body, so the
tests can check that what vcrpy recorded replays byte for byte, that every planted secret
is gone from the file, and that a failure at any point leaves no file behind.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import httpx
import pytest
import vcr
from tests.workflow.test_workflow_secrets import NOT_IN_QUERY, SAMPLES
from tests.workflow_server import StreamServer, StreamSpec

from stream_harness.recordings.cassette import load_cassette
from stream_harness.workflow.lint import lint_file
from stream_harness.workflow.record import add_record_parser, record_command
from stream_harness.workflow.scrub import Scrubber

ANTHROPIC_KEY = "sk-ant-" + "api03-" + "R3cord" * 8
# A body whose HTTP chunks split a UTF-8 character and an SSE line, as a real stream may.
KNOWN_CHUNKS = [
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}\n\n',
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"h\xc3',
    b'\xa9llo"}}\n\n',
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\nevent: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n',
]
KNOWN_BODY = b"".join(KNOWN_CHUNKS)
REQUEST = {"model": "claude-x", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}


def _run(argv: list[str], env: dict[str, str]) -> int:
    parser = argparse.ArgumentParser(prog="stream-harness")
    add_record_parser(parser.add_subparsers())
    args = parser.parse_args(argv)
    return record_command(args, environ=env)


def _request_file(tmp_path: Path, body: dict[str, object]) -> Path:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def _record(
    server: StreamServer, tmp_path: Path, out: Path, *extra: str, protocol: str = "anthropic-messages",
    request: dict[str, object] | None = None, env: dict[str, str] | None = None,
) -> int:  # fmt: skip
    req = _request_file(tmp_path, request if request is not None else REQUEST)
    argv = [
        "record",
        "--protocol",
        protocol,
        "--request",
        str(req),
        "--out",
        str(out),
        "--base-url",
        server.url,
        "--timeout",
        "10",
        *extra,
    ]
    return _run(argv, env if env is not None else {"ANTHROPIC_API_KEY": ANTHROPIC_KEY})


def _replay(cassette: Path, url: str, body: bytes) -> httpx.Response:
    with vcr.use_cassette(str(cassette), record_mode="none"), httpx.Client() as client:
        with client.stream("POST", url, content=body) as response:
            response.read()
            return response


@pytest.mark.parametrize("gzipped", [False, True], ids=["identity", "gzip"])
def test_recorded_body_replays_byte_identically(gzipped: bool, tmp_path: Path) -> None:
    out = tmp_path / "cassettes" / "anthropic-messages" / "hello.yaml"
    spec = StreamSpec(KNOWN_CHUNKS, gzip=gzipped)
    with StreamServer(spec) as server:
        assert _record(server, tmp_path, out) == 0
        url = server.url + "/v1/messages"
    cassette = load_cassette(out)
    assert len(cassette.interactions) == 1
    recorded = cassette.interactions[0]
    assert recorded.response.body == KNOWN_BODY
    assert recorded.response.status == 200
    # vcrpy's decode_compressed_response: stored decoded, the encoding header gone.
    assert "content-encoding" not in recorded.response.headers
    replayed = _replay(out, url, recorded.request.body)
    assert replayed.status_code == 200
    assert replayed.content == KNOWN_BODY
    # What was sent: the key in its header, "stream": true added to the request body.
    sent = spec.received[0]
    assert sent.headers["x-api-key"] == ANTHROPIC_KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert json.loads(sent.body) == {**REQUEST, "stream": True}
    # ... and none of it in the file.
    assert ANTHROPIC_KEY.encode() not in out.read_bytes()
    assert "x-api-key" not in recorded.request.headers
    assert lint_file(out).findings == []


def test_every_planted_secret_is_scrubbed_from_headers_query_body_and_error_text(
    tmp_path: Path,
) -> None:
    samples = [text for text, _secret in SAMPLES.values()]
    url_safe = [
        SAMPLES[k][0] for k in SAMPLES if k not in NOT_IN_QUERY and k not in {"organization-uuid"}
    ]
    url_safe.append("organization_id=3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b")
    joined = " | ".join(samples)
    sse = (
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","model":"m","usage":{}}}\n\n'
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"'
        + joined.replace('"', "'")
        + '"}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n'
    ).encode()
    headers = [
        ("Content-Type", "text/event-stream"),
        ("Set-Cookie", "__cf_bm=abcdefgh12345678; path=/; HttpOnly"),
        ("anthropic-organization-id", "0f0e0d0c-1111-2222-3333-444455556666"),
        ("openai-organization", "user-plain"),
        ("x-echo", joined.replace("\n", " ")),
    ]
    request = {
        **REQUEST,
        "_path": "/v1/messages?beta=true&key=plainvalue42&"
        + "&".join(f"n{i}={s}" for i, s in enumerate(url_safe)),
        "_headers": {"x-note": joined, "openai-project": "proj-plain", "cookie": "sid=abc"},
        "metadata": {"user_id": "end-user-42", "note": joined},
        "api_key": "plain-key-value",
    }
    out = tmp_path / "planted.yaml"
    spec = StreamSpec([sse[:100], sse[100:]], headers=headers)
    with StreamServer(spec) as server:
        assert _record(server, tmp_path, out, request=request) == 0
    raw = out.read_bytes()
    for kind, (_text, secret) in SAMPLES.items():
        assert secret.encode() not in raw, kind
    for plain in (
        ANTHROPIC_KEY,
        "plainvalue42",
        "end-user-42",
        "plain-key-value",
        "user-plain",
        "proj-plain",
        "abcdefgh12345678",
        "0f0e0d0c-1111",
    ):
        assert plain.encode() not in raw, plain
    recorded = load_cassette(out).interactions[0]
    for name in ("x-api-key", "cookie", "openai-project"):
        assert name not in recorded.request.headers
    for name in ("set-cookie", "anthropic-organization-id", "openai-organization"):
        assert name not in recorded.response.headers
    assert "&key=" not in recorded.request.uri and "?beta=true&n0=" in recorded.request.uri
    assert (
        b'"user_id": "<filtered>"' in recorded.request.body
        or b'"user_id":"<filtered>"' in recorded.request.body
    )
    # The body kept its shape: only secrets were replaced, so it still normalizes.
    assert recorded.response.body.count(b"<filtered>") == len(SAMPLES)
    assert lint_file(out).findings == []


def test_identifiers_in_an_error_text_are_scrubbed(tmp_path: Path) -> None:
    org = "org-" + "Ab12" * 6
    error = {
        "error": {
            "message": f"Rate limit reached for gpt-4.1 in organization {org} on tokens per min (TPM): Limit 30000.",
            "type": "tokens",
            "code": "rate_limit_exceeded",
        }
    }
    out = tmp_path / "rate_limit.yaml"
    spec = StreamSpec(
        [json.dumps(error).encode()], status=429, headers=[("Content-Type", "application/json")]
    )
    with StreamServer(spec) as server:
        rc = _record(
            server,
            tmp_path,
            out,
            protocol="openai-completions",
            request={"model": "gpt-4.1", "messages": []},
            env={"OPENAI_API_KEY": "sk-" + "Zq9" * 16},
        )
    assert rc == 0  # an error response is worth a cassette too
    recorded = load_cassette(out).interactions[0]
    assert recorded.response.status == 429
    message = json.loads(recorded.response.body)["error"]["message"]
    assert (
        message
        == "Rate limit reached for gpt-4.1 in organization <filtered> on tokens per min (TPM): Limit 30000."
    )
    assert spec.received[0].headers["authorization"] == "Bearer " + "sk-" + "Zq9" * 16
    assert "authorization" not in recorded.request.headers


def test_google_puts_the_model_in_the_path_and_prefers_google_api_key(tmp_path: Path) -> None:
    out = tmp_path / "g.yaml"
    body = b'data: {"candidates":[{"content":{"parts":[{"text":"hi"}],"role":"model"},"finishReason":"STOP"}]}\r\n\r\n'
    spec = StreamSpec([body])
    google_key = "AI" + "za" + "Sy" + "G" * 33
    gemini_key = "AI" + "za" + "Sy" + "H" * 33
    with StreamServer(spec) as server:
        rc = _record(
            server,
            tmp_path,
            out,
            protocol="google-generative-ai",
            request={"model": "gemini-x", "contents": []},
            env={"GOOGLE_API_KEY": google_key, "GEMINI_API_KEY": gemini_key},
        )
    assert rc == 0
    sent = spec.received[0]
    assert sent.path == "/v1beta/models/gemini-x:streamGenerateContent?alt=sse"
    assert sent.headers["x-goog-api-key"] == google_key
    assert json.loads(sent.body) == {"contents": []}  # model moved to the URL, no "stream"
    assert load_cassette(out).interactions[0].response.body == body


def test_no_auth_sends_no_key_and_an_unknown_directive_is_refused(tmp_path: Path) -> None:
    spec = StreamSpec(KNOWN_CHUNKS)
    with StreamServer(spec) as server:
        assert _record(server, tmp_path, tmp_path / "a.yaml", "--no-auth", env={}) == 0
        assert "x-api-key" not in spec.received[0].headers
        assert (
            _record(server, tmp_path, tmp_path / "b.yaml", request={**REQUEST, "_pth": "/x"}) == 2
        )
    assert len(spec.received) == 1
    assert not (tmp_path / "b.yaml").exists()


def test_missing_key_is_a_usage_error_and_sends_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = StreamSpec(KNOWN_CHUNKS)
    with StreamServer(spec) as server:
        assert _record(server, tmp_path, tmp_path / "a.yaml", env={}) == 2
    assert spec.received == []
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().err


def test_an_existing_cassette_is_kept_without_force(tmp_path: Path) -> None:
    out = tmp_path / "hello.yaml"
    out.write_text("old\n")
    spec = StreamSpec(KNOWN_CHUNKS)
    with StreamServer(spec) as server:
        assert _record(server, tmp_path, out) == 2
        assert spec.received == []  # refused before the request, not after
        assert out.read_text() == "old\n"
        assert _record(server, tmp_path, out, "--force") == 0
    assert load_cassette(out).interactions[0].response.body == KNOWN_BODY


def _leftovers(folder: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


@pytest.mark.parametrize("existing", [False, True], ids=["new", "force-over-existing"])
def test_a_stream_cut_mid_body_leaves_no_file(existing: bool, tmp_path: Path) -> None:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    out = folder / "cut.yaml"
    if existing:
        out.write_text("old\n")
    spec = StreamSpec(KNOWN_CHUNKS, die_after=2)
    with StreamServer(spec) as server:
        rc = _record(server, tmp_path, out, *(["--force"] if existing else []))
    assert rc == 1
    assert len(spec.received) == 1  # the request did go out
    assert _leftovers(folder, {"cut.yaml"}) == []
    assert out.read_text() == "old\n" if existing else not out.exists()


@pytest.mark.parametrize("existing", [False, True], ids=["new", "force-over-existing"])
def test_an_interrupt_while_recording_leaves_no_file(
    existing: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    out = folder / "interrupted.yaml"
    if existing:
        out.write_text("old\n")

    def interrupt(self: Scrubber, response: dict[str, object]) -> dict[str, object]:
        raise KeyboardInterrupt

    monkeypatch.setattr(Scrubber, "vcr_response", interrupt)
    with StreamServer(StreamSpec(KNOWN_CHUNKS)) as server:
        rc = _record(server, tmp_path, out, *(["--force"] if existing else []))
    assert rc == 130
    assert _leftovers(folder, {"interrupted.yaml"}) == []
    assert out.read_text() == "old\n" if existing else not out.exists()


def test_a_secret_the_scrubber_misses_stops_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cookie = "__cf_bm=abcdefgh12345678"
    monkeypatch.setattr(Scrubber, "vcr_response", lambda self, response: response)
    spec = StreamSpec(
        KNOWN_CHUNKS, headers=[("Content-Type", "text/event-stream"), ("Set-Cookie", cookie)]
    )
    folder = tmp_path / "cassettes"
    folder.mkdir()
    with StreamServer(spec) as server:
        rc = _record(server, tmp_path, folder / "leak.yaml")
    assert rc == 1
    assert list(folder.iterdir()) == []
    err = capsys.readouterr().err
    assert "cookie in response header set-cookie" in err
    assert "abcdefgh12345678" not in err  # reported masked
