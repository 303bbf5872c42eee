"""``record`` captures a Responses WebSocket session through its loopback proxy, from a
local fake server (no network), and ``import`` reads the same frames from a JSON-lines log."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.server import ServerConnection, serve

from stream_harness.cli.main import main
from stream_harness.providers.reference import detect_protocol, normalize
from stream_harness.recordings.cassette import load_cassette
from stream_harness.workflow.importing import import_file
from stream_harness.workflow.websocket_session import (
    SessionInputError,
    frames_from_jsonl,
    record_websocket,
    turns_from_frames,
)

KEY = "sk-proj-" + "A1b2C3d4" * 6  # what the proxy sends upstream; never in the cassette


def events(rid: str, text: str) -> list[dict[str, Any]]:
    resp = {
        "id": rid,
        "object": "response",
        "status": "in_progress",
        "model": "gpt-x",
        "output": [],
    }
    item = {
        "id": f"msg_{rid}",
        "type": "message",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    done_item = {
        **item,
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    return [
        {"type": "response.created", "sequence_number": 0, "response": resp},
        {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item},
        {"type": "response.output_text.delta", "sequence_number": 2, "item_id": item["id"], "output_index": 0, "content_index": 0, "delta": text},
        {"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": done_item},
        {"type": "response.completed", "sequence_number": 4, "response": {**resp, "status": "completed", "output": [done_item]}},
    ]  # fmt: skip


@pytest.fixture
def upstream() -> Iterator[tuple[str, list[str]]]:
    """A fake Responses WebSocket server: each response.create answered with a response, the
    first one's delta split across continuation frames; the Authorization it saw is kept."""
    seen_auth: list[str] = []

    def handler(ws: ServerConnection) -> None:
        assert ws.request is not None
        seen_auth.append(ws.request.headers.get("Authorization", ""))
        for n, message in enumerate(ws):
            assert json.loads(message)["type"] == "response.create"
            for event in events(f"resp_{n}", "Grüß Gott" if n == 0 else "Servus"):
                raw = json.dumps(event, ensure_ascii=False)
                if event["type"] == "response.output_text.delta" and n == 0:
                    ws.send([raw[:40], raw[40:]])  # one message, two frames
                else:
                    ws.send(raw)

    with serve(handler, "127.0.0.1", 0) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        yield f"ws://127.0.0.1:{server.socket.getsockname()[1]}/v1/responses", seen_auth
        server.shutdown()


def test_record_captures_a_session_through_the_proxy(
    tmp_path: Path, upstream: tuple[str, list[str]]
) -> None:
    openai = pytest.importorskip("openai")
    url, seen_auth = upstream
    out = tmp_path / "session.yaml"

    def drive(proxy: Any) -> None:
        def client() -> None:
            sdk = openai.OpenAI(
                api_key="sk-client-side",
                base_url=f"http://127.0.0.1:{proxy.port}/v1",
                max_retries=0,
            )
            with sdk.responses.connect() as connection:
                for turn, previous in ((0, None), (1, "resp_0")):
                    connection.response.create(
                        model="gpt-x", input=f"turn {turn}", previous_response_id=previous
                    )
                    for event in connection:
                        if event.type == "response.completed":
                            break

        threading.Thread(target=client, daemon=True).start()

    result = record_websocket(out, upstream=url, api_key=KEY, ready=drive, timeout=30)
    assert result.path == out and seen_auth == [f"Bearer {KEY}"]
    raw = out.read_text()
    assert KEY not in raw and "sk-client-side" not in raw
    cassette = load_cassette(out)
    assert len(cassette.interactions) == 2
    texts = []
    for turn in cassette.interactions:
        assert detect_protocol(turn) == "openai-responses-websocket"
        assert json.loads(turn.request.body)["type"] == "response.create"
        out_events = list(normalize("openai-responses-websocket", [turn.response.body]))
        assert out_events[-1].type == "done"
        texts.append(out_events[-1].message.content[0].content)  # type: ignore[union-attr]
    assert texts == ["Grüß Gott", "Servus"]
    first_log = [
        json.loads(line) for line in cassette.interactions[0].response.body.decode().splitlines()
    ]
    # The fragmented message kept its frames: websockets sends a list as a text frame,
    # continuations and an empty final one.
    ops = [(f["op"], f.get("fin", True)) for f in first_log]
    assert ("text", False) in ops and ("continuation", True) in ops
    assert json.loads(cassette.interactions[1].request.body)["previous_response_id"] == "resp_0"


FRAMES = [
    {
        "dir": "client",
        "op": "text",
        "data": json.dumps({"type": "response.create", "model": "gpt-x", "input": "hi"}),
    },
    *(
        {"dir": "server", "op": "text", "data": json.dumps(e)}
        for e in events("resp_a", "Hallo")[:3]
    ),
    {"dir": "server", "op": "close", "code": 1011, "reason": "internal error"},
]


def test_a_frame_log_becomes_one_turn_per_response_create() -> None:
    turns = turns_from_frames(FRAMES)
    assert len(turns) == 1
    last = list(normalize("openai-responses-websocket", [turns[0].response.body]))[-1]
    assert last.type == "error" and "close code 1011" in (last.error_message or "")  # type: ignore[union-attr]


def test_a_second_create_while_a_turn_is_in_flight_stays_in_that_turn() -> None:
    second = {
        "dir": "client",
        "op": "text",
        "data": json.dumps({"type": "response.create", "input": "again"}),
    }
    turns = turns_from_frames([*FRAMES[:3], second, *FRAMES[3:]])
    assert len(turns) == 1
    assert '"dir": "client"' in turns[0].response.body.decode()


def test_import_reads_a_jsonl_frame_log(tmp_path: Path) -> None:
    log = tmp_path / "frames.jsonl"
    log.write_text("".join(json.dumps(f) + "\n" for f in FRAMES))
    out = tmp_path / "imported.yaml"
    import_file(log, "openai-responses-websocket", out)
    cassette = load_cassette(out)
    assert [detect_protocol(i) for i in cassette.interactions] == ["openai-responses-websocket"]


def test_a_bad_frame_log_line_is_named() -> None:
    with pytest.raises(SessionInputError, match="line 2: not JSON"):
        frames_from_jsonl(b'{"op": "text", "data": "{}"}\nnot json\n')


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (
            ["--request", "r.json"],
            "--request: openai-responses-websocket records what your client sends",
        ),
        (["--no-auth", "--port", "70000"], "--port: 70000 is not a port number"),
        ([], "no API key: set OPENAI_API_KEY"),
    ],
)
def test_record_refuses_bad_flags_in_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    words: str,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    argv = [
        "record",
        "--protocol",
        "openai-responses-websocket",
        "--out",
        str(tmp_path / "x.yaml"),
        *extra,
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1
    assert not (tmp_path / "x.yaml").exists()
