"""``stream-harness serve`` plays every bundled WebSocket connection to a real WebSocket
client: each turn's messages as recorded, on one connection, the close code as recorded."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from stream_harness.conformance import bundled_cassettes
from stream_harness.recordings.cassette import load_cassette
from stream_harness.server.serve import replay_server
from stream_harness.server.websocket import TERMINAL_TYPES
from stream_harness.wire import JSONLine
from stream_harness.wire.websocket import WebSocketLogDecoder

FOLDER = bundled_cassettes() / "openai-responses-websocket"
CASSETTES = sorted(FOLDER.glob("*.yaml"))


def logged(body: bytes) -> tuple[list[str], int | str | None]:
    """The server messages a turn's log holds, and its close code (None: none)."""
    decoder = WebSocketLogDecoder()
    messages = [m.raw for m in [*decoder.feed(body), *decoder.close()] if isinstance(m, JSONLine)]
    close = [json.loads(line) for line in body.decode().splitlines() if '"op": "close"' in line]
    if close:
        return messages, close[0]["code"]
    # No close frame: the turn ends at its terminal event, else the connection was lost.
    return messages, None if messages and json.loads(messages[-1])[
        "type"
    ] in TERMINAL_TYPES else "drop"


def test_there_are_twelve_or_more_websocket_cassettes() -> None:
    assert len(CASSETTES) >= 12


@pytest.mark.parametrize("path", CASSETTES, ids=[p.stem for p in CASSETTES])
def test_serve_plays_the_recorded_connection(path: Path) -> None:
    turns = load_cassette(path).interactions
    with replay_server([path]) as server:
        url = server.url.replace("http://", "ws://") + "/v1/responses"
        with connect(url, open_timeout=5, close_timeout=2) as ws:
            for turn in turns:
                want, code = logged(turn.response.body)
                ws.send(turn.request.body.decode())
                got: list[str] = []
                try:
                    for _ in want:
                        message = ws.recv(timeout=5)
                        assert isinstance(message, str)
                        got.append(message)
                    if code is not None:
                        ws.recv(timeout=5)
                        pytest.fail("the recorded close did not come")
                except ConnectionClosed as closed:
                    assert code is not None, f"closed unexpectedly: {closed!r}"
                    if code == 1006 or code == "drop":
                        assert closed.rcvd is None  # no close frame: the socket dropped
                    else:
                        assert closed.rcvd is not None and closed.rcvd.code == code
                assert got == want
        assert [hit.status for hit in server.log] == [101], "one connection for every turn"
        deadline = time.monotonic() + 10
        while server.log[0].finished is None and time.monotonic() < deadline:
            time.sleep(0.01)  # the server's side of the close may still be under way
        assert f"{len(turns)} turn(s)" in server.log[0].note
