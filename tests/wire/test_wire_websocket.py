"""The ``websocket-json`` frame-log decoder: messages reassembled from their frames, a close
or a broken message an error, and any byte split of the log decoding alike."""

from __future__ import annotations

import base64
import itertools
import json
from typing import Any

import pytest

from stream_harness.wire import FramingError, JSONLine
from stream_harness.wire.websocket import WebSocketLogDecoder, close_text


def log(*frames: dict[str, Any]) -> bytes:
    return "".join(json.dumps(f) + "\n" for f in frames).encode()


def decode(body: bytes, cuts: list[int] | None = None) -> list[JSONLine | FramingError]:
    decoder = WebSocketLogDecoder()
    out: list[JSONLine | FramingError] = []
    bounds = [0, *(cuts or []), len(body)]
    for a, b in itertools.pairwise(bounds):
        out.extend(decoder.feed(body[a:b]))
    out.extend(decoder.close())
    return out


EVENT = {"type": "response.output_text.delta", "delta": "Grüß", "sequence_number": 4}
RAW = json.dumps(EVENT, ensure_ascii=False, separators=(",", ":")).encode()


def test_whole_messages_are_their_json_values() -> None:
    out = decode(
        log({"op": "text", "data": RAW.decode()}, {"op": "ping"}, {"op": "text", "data": "{}"})
    )
    assert out == [JSONLine(EVENT, RAW.decode()), JSONLine({}, "{}")]


def test_continuation_frames_make_one_message_even_across_a_utf8_character() -> None:
    cut = RAW.index("ü".encode()) + 1  # between the two bytes of ü
    frames = log(
        {"op": "text", "fin": False, "base64": base64.b64encode(RAW[:cut]).decode()},
        {
            "op": "continuation",
            "fin": False,
            "base64": base64.b64encode(RAW[cut : cut + 3]).decode(),
        },
        {"op": "continuation", "data": RAW[cut + 3 :].decode()},
    )
    assert decode(frames) == [JSONLine(EVENT, RAW.decode())]


def test_client_frames_and_control_frames_are_passed_over() -> None:
    out = decode(
        log(
            {"op": "text", "dir": "client", "data": "not json"},
            {"op": "pong"},
            {"op": "text", "data": "[1]"},
        )
    )
    assert out == [JSONLine([1], "[1]")]


@pytest.mark.parametrize(
    ("frames", "words"),
    [
        (
            [{"op": "close", "code": 1006, "reason": ""}],
            "connection closed before the end of the turn (close code 1006 (abnormal closure))",
        ),
        ([{"op": "close", "code": 1000, "reason": "bye"}], "close code 1000 (normal closure): bye"),
        ([{"op": "binary", "base64": "AAE="}], "message 2 is binary"),
        ([{"op": "text", "data": "not json"}], "message 2 is not JSON"),
        (
            [{"op": "text", "base64": base64.b64encode(b"\xff").decode()}],
            "message 2 is not valid UTF-8",
        ),
        (
            [{"op": "continuation", "data": "{}"}],
            "a continuation frame with no message to continue",
        ),
        (
            [{"op": "text", "fin": False, "data": "{"}, {"op": "text", "data": "{}"}],
            "a new text message while message 2 is still unfinished",
        ),
        ([{"op": "frame"}], "no known op"),
    ],
)
def test_what_a_client_sees_as_a_failure_is_a_framing_error(
    frames: list[dict[str, Any]], words: str
) -> None:
    out = decode(log({"op": "text", "data": "{}"}, *frames, {"op": "text", "data": "{}"}))
    assert out[0] == JSONLine({}, "{}")
    assert isinstance(out[1], FramingError) and words in out[1].message
    assert len(out) == 2, "decoding stops at the first failure"


def test_a_log_ending_inside_a_fragmented_message_is_an_error() -> None:
    out = decode(log({"op": "text", "data": "{}"}, {"op": "text", "fin": False, "data": "{"}))
    assert out[0] == JSONLine({}, "{}")
    assert isinstance(out[1], FramingError)
    assert "the connection ended inside fragmented message 2" in out[1].message


def test_any_byte_split_of_the_log_decodes_alike() -> None:
    cut = RAW.index("ü".encode()) + 1
    body = log(
        {"op": "text", "data": RAW.decode()},
        {"op": "text", "fin": False, "base64": base64.b64encode(RAW[:cut]).decode()},
        {"op": "continuation", "base64": base64.b64encode(RAW[cut:]).decode()},
        {"op": "close", "code": 1011, "reason": "internal error"},
    )
    whole = decode(body)
    assert len(whole) == 3 and isinstance(whole[2], FramingError)
    for k in range(1, len(body)):
        assert decode(body, [k]) == whole, k
    assert decode(body, list(range(1, len(body)))) == whole


def test_close_text_names_unregistered_codes() -> None:
    assert close_text(4001, "x") == "close code 4001 (unregistered): x"
    assert close_text(None) == "a close frame without a status code"
