"""``stream-harness serve``: every bundled cassette, byte-exact, in the chunks asked for.

The client here reads the HTTP/1.1 chunked framing itself, so it sees the chunk
boundaries the server wrote (a client reading the decoded body through TCP may see
neighbours merged).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from stream_harness.conformance import bundled_cassettes
from stream_harness.recordings.chunking import apply_split
from stream_harness.recordings.transport import response_headers
from stream_harness.server.loopback import LoopbackServer
from stream_harness.server.serve import (
    Recorded,
    ReplayServer,
    ServeError,
    load_recorded,
    replay_server,
)
from stream_harness.server.ws_session import OneSession

RECORDED = load_recorded([bundled_cassettes()])


def target(recorded: Recorded) -> str:
    parts = urlsplit(recorded.interaction.request.uri)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def fetch(
    port: int, method: str, path: str, body: bytes = b""
) -> tuple[int, dict[str, str], list[bytes]]:
    """One request on a fresh connection; the status, headers and the body's chunks as framed."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        sock.sendall(head.encode() + body)
        f = sock.makefile("rb")
        status = int(f.readline().split()[1])
        headers: dict[str, str] = {}
        while (line := f.readline().rstrip(b"\r\n")) != b"":
            name, _, value = line.decode("latin-1").partition(":")
            headers.setdefault(name.strip().lower(), value.strip())
        if headers.get("transfer-encoding") != "chunked":
            return status, headers, [f.read(int(headers.get("content-length", "0")))]
        chunks = []
        while (size := int(f.readline().strip(), 16)) != 0:
            chunks.append(f.read(size))
            assert f.read(2) == b"\r\n"
        assert f.readline() == b"\r\n"
        return status, headers, chunks


@pytest.mark.parametrize("split", ["whole", "bytes:1", "bytes:7", "random:3"])
def test_every_bundled_cassette_is_served_byte_exact(split: str) -> None:
    assert len(RECORDED) > 100
    with ReplayServer(RECORDED, split=split) as server:
        for rec in RECORDED:
            response = rec.interaction.response
            status, headers, chunks = fetch(
                server.port,
                rec.interaction.request.method,
                target(rec),
                rec.interaction.request.body,
            )
            assert (status, b"".join(chunks)) == (response.status, response.body), rec.source
            assert chunks == [c for c in apply_split(split, response.body) if c], rec.source
            for name, _value in response_headers(response):
                assert name.lower() in headers, (rec.source, name)
            assert "content-encoding" not in headers and "content-length" not in headers
        assert all(s.source is not None for s in server.log)


@pytest.mark.parametrize("delay", [0.0005, 0.002])
def test_paced_chunks_arrive_intact_through_an_ordinary_client(delay: float) -> None:
    anthropic = [r for r in RECORDED if "anthropic-messages/" in r.source][:5]
    with (
        ReplayServer(anthropic, split="bytes:5", delay=delay) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        for rec in anthropic:
            request = rec.interaction.request
            with client.stream(request.method, target(rec), content=request.body) as response:
                got = b"".join(response.iter_raw())
            assert (response.status_code, got) == (
                rec.interaction.response.status,
                rec.interaction.response.body,
            )


def test_matching_is_vcrpy_like_played_once_in_order() -> None:
    first, second = [r for r in RECORDED if "anthropic-messages/" in r.source][:2]
    with ReplayServer([first, second]) as server:
        bodies = [fetch(server.port, "POST", "/v1/messages")[2] for _ in range(3)]
        wrong_path = fetch(server.port, "POST", "/v1/other")
        wrong_method = fetch(server.port, "GET", "/v1/messages")
    assert [b"".join(b) for b in bodies[:2]] == [
        first.interaction.response.body,
        second.interaction.response.body,
    ]
    assert bodies[2] == [
        json.dumps(
            {
                "error": {
                    "type": "not_found",
                    "message": "stream-harness serve: no recorded interaction matches POST /v1/messages",
                }
            }
        ).encode()
    ]
    assert wrong_path[0] == wrong_method[0] == 404
    with ReplayServer([first, second], allow_playback_repeats=True) as server:
        again = [b"".join(fetch(server.port, "POST", "/v1/messages")[2]) for _ in range(3)]
    assert again[2] == second.interaction.response.body


def test_query_is_matched_as_a_set_of_pairs_and_body_on_request() -> None:
    gemini = next(r for r in RECORDED if "?" in r.interaction.request.uri)
    path, _, query = target(gemini).partition("?")
    pairs = query.split("&")
    with ReplayServer([gemini], allow_playback_repeats=True) as server:
        assert (
            fetch(
                server.port,
                gemini.interaction.request.method,
                f"{path}?{'&'.join(reversed(pairs))}",
            )[0]
            == gemini.interaction.response.status
        )
        assert fetch(server.port, gemini.interaction.request.method, path)[0] == 404
    with ReplayServer([gemini], match_on=("method", "path", "body")) as server:
        assert fetch(server.port, gemini.interaction.request.method, path, b"other")[0] == 404
        assert (
            fetch(
                server.port,
                gemini.interaction.request.method,
                path,
                gemini.interaction.request.body,
            )[0]
            == gemini.interaction.response.status
        )


def test_bad_options_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(ServeError, match="unknown matcher"):
        ReplayServer(RECORDED, match_on=("host",))
    with pytest.raises(ServeError, match="bad --split"):
        ReplayServer(RECORDED, split="bytes:0")
    with pytest.raises(ServeError, match="no recorded interactions"):
        load_recorded([tmp_path])
    done = subprocess.run(
        [sys.executable, "-m", "stream_harness.cli.main", "serve", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (
        done.returncode == 2
        and done.stderr.strip().count("\n") == 0
        and "no such cassette" in done.stderr
    )


def test_the_fixture_serves_and_stops(harness_replay_server) -> None:  # type: ignore[no-untyped-def]
    path = bundled_cassettes() / "openai-completions" / "text_plain.yaml"
    server = harness_replay_server([path], split="bytes:3")
    rec = load_recorded([path])[0]
    response = httpx.post(server.url + target(rec), content=rec.interaction.request.body)
    assert response.content == rec.interaction.response.body
    server.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.post(server.url + target(rec))


def test_a_loopback_server_stops_at_once_and_its_wake_up_is_no_hit() -> None:
    """stop() wakes the blocking accept loop with a connection of its own (no poll interval
    to wait out, benchmarks/bench_main_job.py): the loop's thread has ended when stop()
    returns, the port is closed, and the wake-up connection is not in the server's log."""
    server = LoopbackServer(OneSession([])).start()
    assert httpx.get(server.url + "/v1/responses").status_code == 404
    name = f"stream-harness loopback {server.port}"
    assert any(t.name == name for t in threading.enumerate())
    server.stop()
    assert not any(t.name == name and t.is_alive() for t in threading.enumerate())
    assert [h.path for h in server.log] == ["/v1/responses"]
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url + "/v1/responses")


def test_the_context_manager_takes_folders() -> None:
    with replay_server([bundled_cassettes() / "ollama"], split="bytes:2") as server:
        assert len(server.recorded) == len([r for r in RECORDED if "/ollama/" in r.source])
