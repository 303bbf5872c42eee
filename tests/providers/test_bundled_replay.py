"""vcrpy itself replays every bundled cassette of every protocol (``protocols()``): the
files are real vcrpy cassettes, a user's recorder can read them, and the request each
holds is the streaming request its API expects.

One parametrized test instead of a copy per provider module; what a protocol's request
must look like is its row of REQUEST_CHECKS (a protocol without one is replayed only).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cassette_checks import replay_with_vcrpy
from stream_harness.providers import protocols
from stream_harness.recordings.cassette import Interaction

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes"
CASES = [
    (protocol, path)
    for protocol in protocols()
    for path in sorted((CASSETTES / protocol).glob("*.yaml"))
]


def _asks_for_a_stream(inter: Interaction, response: Any) -> None:
    assert json.loads(inter.request.body)["stream"] is True


def _ollama_chat(inter: Interaction, response: Any) -> None:
    assert inter.request.uri.endswith("/api/chat")
    _asks_for_a_stream(inter, response)


def _converse_stream(inter: Interaction, response: Any) -> None:
    assert inter.request.uri.endswith("/converse-stream")
    assert isinstance(json.loads(inter.request.body)["messages"], list)
    if inter.response.status < 400:
        assert response.headers["content-type"] == "application/vnd.amazon.eventstream"


def _stream_generate_content(inter: Interaction, response: Any) -> None:
    assert ":streamGenerateContent" in inter.request.uri
    assert isinstance(json.loads(inter.request.body)["contents"], list)


def _websocket_turn(inter: Interaction, response: Any) -> None:
    # The handshake's GET carrying the turn's response.create, which has no stream or
    # background field (specs/protocols/openai-responses-websocket.md).
    assert inter.request.method == "GET" and inter.request.uri.startswith("wss://")
    assert inter.request.header("upgrade") == "websocket"
    client_event = json.loads(inter.request.body)
    assert client_event["type"] == "response.create"
    assert "stream" not in client_event and "background" not in client_event


REQUEST_CHECKS: dict[str, Callable[[Interaction, Any], None]] = {
    "anthropic-messages": _asks_for_a_stream,
    "bedrock-converse-stream": _converse_stream,
    "google-generative-ai": _stream_generate_content,
    "ollama": _ollama_chat,
    "openai-responses": _asks_for_a_stream,
    "openai-responses-websocket": _websocket_turn,
}


def test_every_request_check_names_a_protocol() -> None:
    assert set(REQUEST_CHECKS) <= set(protocols())


@pytest.mark.parametrize(("protocol", "path"), CASES, ids=[f"{p}/{path.stem}" for p, path in CASES])
def test_bundled_cassette_replays_with_vcrpy(protocol: str, path: Path) -> None:
    inter, response = replay_with_vcrpy(path)
    check = REQUEST_CHECKS.get(protocol)
    if check is not None:
        check(inter, response)
