"""Writes the bundled openai-responses-websocket cassettes: Responses WebSocket-mode sessions.

Run from the repo root: ``python cassettes/_generate/openai_responses_websocket.py``, then
refresh specs/expected/openai-responses-websocket/ with
``stream_harness.recordings.golden.write_expected`` and review the diff.

One cassette is one connection, one interaction one turn (the recorded form of
specs/protocols/openai-responses-websocket.md): the request is the WebSocket handshake with
the turn's ``response.create`` client event as its body, the response a 101 whose body is the
turn's frame log. The server events are built by the openai-responses generator's ``Stream``
(the documented event shapes, sequence numbers included), sent one a text message, as the
WebSocket-mode guide describes; the connection-level errors have the shape the guide and the
gateways implementing it show (``{"type": "error", "status": ..., "error": {type, code,
message, param}}``, no sequence number). Ids are made up; no keys.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from openai_responses import (
    GPT41,
    GPT41_MINI,
    WEATHER_TOOL,
    Stream,
    compact,
    hexid,
    usage,
    user,
)

from stream_harness.recordings.cassette import Interaction, Request, Response, dump_cassette

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "cassettes" / "openai-responses-websocket"
URI = "wss://api.openai.com/v1/responses"


class Turn(Stream):
    """A Responses stream whose events are kept as objects, to be sent one a message."""

    def __init__(self, label: str, model: str, **kwargs: Any) -> None:
        super().__init__(label, model, **kwargs)
        self.events: list[dict[str, Any]] = []

    def emit(self, etype: str, **fields: Any) -> None:
        self.events.append({"type": etype, **fields, "sequence_number": self.seq})
        self.seq += 1


def text_frame(payload: Any, **extra: Any) -> dict[str, Any]:
    return {"op": "text", **extra, "data": compact(payload)}


def fragments(payload: Any, cuts: list[int]) -> list[dict[str, Any]]:
    """One message as a text frame and continuation frames, cut at these byte offsets.

    A fragment that is not valid UTF-8 on its own (a cut inside a character) is written as
    base64, as the frame log allows.
    """
    raw = compact(payload).encode("utf-8")
    bounds = [0, *sorted(cuts), len(raw)]
    frames = []
    for i in range(len(bounds) - 1):
        piece = raw[bounds[i] : bounds[i + 1]]
        frame: dict[str, Any] = {"op": "text" if i == 0 else "continuation"}
        if i < len(bounds) - 2:
            frame["fin"] = False
        try:
            frame["data"] = piece.decode("utf-8")
        except UnicodeDecodeError:
            frame["base64"] = base64.b64encode(piece).decode()
        frames.append(frame)
    return frames


def close(code: int, reason: str = "") -> dict[str, Any]:
    return {"op": "close", "code": code, "reason": reason}


def log(frames: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(f, ensure_ascii=False) + "\n" for f in frames).encode("utf-8")


def create(body: dict[str, Any]) -> dict[str, Any]:
    """A ``response.create`` client event: the create body without stream/background."""
    return {"type": "response.create", **body}


def turn(index: int, label: str, client: dict[str, Any], frames: list[dict[str, Any]]) -> Interaction:
    key = hexid(f"{label}:key", 22) + "=="
    return Interaction(
        index=index,
        request=Request(
            method="GET",
            uri=URI,
            headers={
                "host": ["api.openai.com"],
                "upgrade": ["websocket"],
                "connection": ["Upgrade"],
                "sec-websocket-key": [key],
                "sec-websocket-version": ["13"],
                "user-agent": ["OpenAI/Python 3.54.0"],
            },
            body=compact(client).encode("utf-8"),
        ),
        response=Response(
            status=101,
            reason="Switching Protocols",
            headers={
                "upgrade": ["websocket"],
                "connection": ["Upgrade"],
                "sec-websocket-accept": [hexid(f"{label}:accept", 27) + "="],
                "x-request-id": ["req_" + hexid(f"{label}:req", 32)],
            },
            body=log(frames),
        ),
    )


def connection_error(status: int, code: str, message: str, param: str | None = None) -> dict[str, Any]:
    return {
        "type": "error",
        "status": status,
        "error": {"type": "invalid_request_error", "code": code, "message": message, "param": param},
    }


def text_turn(label: str, deltas: list[str], *, previous: str | None = None) -> Turn:
    s = Turn(label, GPT41_MINI)
    s.response["previous_response_id"] = previous
    s.start()
    msg = s.message(0, deltas)
    s.end("response.completed", "completed", [msg], usage(14, 8))
    return s


def weather_turn(label: str, city: str) -> Turn:
    s = Turn(label, GPT41, tools=[WEATHER_TOOL])
    s.start()
    args = compact({"city": city})
    fc = s.function_call(0, "get_weather", ['{"', "city", '":"', city, '"}'], args)
    s.end("response.completed", "completed", [fc], usage(61, 15))
    return s


def messages(s: Turn) -> list[dict[str, Any]]:
    return [text_frame(e) for e in s.events]


# -- the cassettes ------------------------------------------------------------------------


def text_single_turn() -> list[Interaction]:
    s = text_turn("ws_text_single_turn", ["Bonjour", " !", " Ça", " va", " ?"])
    body = create({"model": "gpt-4.1-mini", "input": user("Say hello in French.")})
    return [turn(0, s.label, body, messages(s))]


def tool_call_single_turn() -> list[Interaction]:
    s = weather_turn("ws_tool_call_single_turn", "Paris")
    body = create({"model": "gpt-4.1", "input": user("Weather in Paris?"), "tools": [WEATHER_TOOL]})
    return [turn(0, s.label, body, messages(s))]


def chained_turns() -> list[Interaction]:
    """A tool call, its output sent with previous_response_id, a follow-up question."""
    first = weather_turn("ws_chained_1", "Lyon")
    call_id = "call_" + hexid("ws_chained_1:call:0", 24)
    second = text_turn(
        "ws_chained_2", ["It is", " 18 °C", " and sunny", " in Lyon."], previous=first.response["id"]
    )
    third = text_turn("ws_chained_3", ["Tomorrow", " looks", " similar."], previous=second.response["id"])
    tools = {"tools": [WEATHER_TOOL]}
    return [
        turn(0, first.label, create({"model": "gpt-4.1", "input": user("Weather in Lyon?"), **tools}), messages(first)),
        turn(
            1,
            second.label,
            create(
                {
                    "model": "gpt-4.1",
                    "previous_response_id": first.response["id"],
                    "input": [{"type": "function_call_output", "call_id": call_id, "output": '{"temp_c":18,"sky":"sunny"}'}],
                    **tools,
                }
            ),
            messages(second),
        ),
        turn(
            2,
            third.label,
            create({"model": "gpt-4.1", "previous_response_id": second.response["id"], "input": user("And tomorrow?"), **tools}),
            messages(third),
        ),
    ]


def warmup_generate_false() -> list[Interaction]:
    """``generate: false``: a completed response with no output, then a turn chained from it."""
    warm = Turn("ws_warmup", GPT41_MINI)
    warm.start()
    warm.end("response.completed", "completed", [], usage(1200, 0))
    answer = text_turn("ws_warmup_answer", ["Ready", "."], previous=warm.response["id"])
    instructions = "You are a terse assistant."
    return [
        turn(
            0,
            warm.label,
            create({"model": "gpt-4.1-mini", "instructions": instructions, "input": [], "generate": False}),
            messages(warm),
        ),
        turn(
            1,
            answer.label,
            create({"model": "gpt-4.1-mini", "previous_response_id": warm.response["id"], "input": user("Are you ready?")}),
            messages(answer),
        ),
    ]


def continuation_frames() -> list[Interaction]:
    """Every message in two or three frames; one cut falls inside a UTF-8 character."""
    s = text_turn("ws_continuation_frames", ["Grüß", " Gott", " — ", "servus!"])
    frames: list[dict[str, Any]] = []
    for event in s.events:
        raw = compact(event).encode("utf-8")
        cuts = [len(raw) // 3, 2 * len(raw) // 3]
        if event["type"] == "response.output_text.delta" and event["delta"] == "Grüß":
            at = raw.index("ü".encode()) + 1  # between the two bytes of ü
            cuts = [at]
        frames.extend(fragments(event, cuts))
    body = create({"model": "gpt-4.1-mini", "input": user("Greet me in Austrian German.")})
    return [turn(0, s.label, body, frames)]


def _cut_text_turn(label: str, stop: int) -> Turn:
    s = text_turn(label, ["The first", " three primes", " are 2,", " 3 and 5."])
    s.events = s.events[:stop]
    return s


def close_normal_mid_turn() -> list[Interaction]:
    s = _cut_text_turn("ws_close_normal", 6)
    body = create({"model": "gpt-4.1-mini", "input": user("List the first primes.")})
    return [turn(0, s.label, body, [*messages(s), close(1000, "")])]


def close_abnormal_mid_turn() -> list[Interaction]:
    """1006 is never sent on the wire (RFC 6455 7.4.1): it is what a client reports when the
    TCP connection drops; the recorder writes it as the log's close line."""
    s = _cut_text_turn("ws_close_abnormal", 5)
    body = create({"model": "gpt-4.1-mini", "input": user("List the first primes.")})
    return [turn(0, s.label, body, [*messages(s), close(1006, "")])]


def close_internal_error_mid_tool_call() -> list[Interaction]:
    s = weather_turn("ws_close_1011", "Nice")
    s.events = s.events[:5]  # created, in_progress, item added, two argument deltas
    body = create({"model": "gpt-4.1", "input": user("Weather in Nice?"), "tools": [WEATHER_TOOL]})
    return [turn(0, s.label, body, [*messages(s), close(1011, "internal server error")])]


def previous_response_not_found() -> list[Interaction]:
    """A chained turn refused; the client resends the full context without the id."""
    missing = "resp_" + hexid("ws_prnf:gone", 48)
    refused = connection_error(
        400,
        "previous_response_not_found",
        f"Previous response with id '{missing}' not found.",
        "previous_response_id",
    )
    again = text_turn("ws_prnf_resent", ["Your", " name", " is", " Ada."])
    history = [
        {"role": "user", "content": "My name is Ada."},
        {"role": "assistant", "content": "Nice to meet you, Ada."},
        {"role": "user", "content": "What is my name?"},
    ]
    return [
        turn(
            0,
            "ws_prnf",
            create({"model": "gpt-4.1-mini", "previous_response_id": missing, "input": user("What is my name?"), "store": False}),
            [text_frame(refused)],
        ),
        turn(
            1,
            again.label,
            create({"model": "gpt-4.1-mini", "previous_response_id": None, "input": history, "store": False}),
            messages(again),
        ),
    ]


def recovery_after_chained_turn() -> list[Interaction]:
    """A completed turn, a turn chained to it refused with previous_response_not_found (the
    server lost the connection-local state: store=false), then the same turn resent as a new
    chain: the first turn's input, its output items as returned, the new input, no id."""
    first = text_turn("ws_recover_1", ["Nice to meet", " you, Grace."])
    missing = first.response["id"]
    refused = connection_error(
        400,
        "previous_response_not_found",
        f"Previous response with id '{missing}' not found.",
        "previous_response_id",
    )
    again = text_turn("ws_recover_resent", ["Your name", " is Grace."])
    completed = first.events[-1]["response"]
    history = [*user("My name is Grace."), *completed["output"], *user("What is my name?")]
    return [
        turn(0, first.label, create({"model": "gpt-4.1-mini", "input": user("My name is Grace."), "store": False}), messages(first)),
        turn(
            1,
            "ws_recover_refused",
            create({"model": "gpt-4.1-mini", "previous_response_id": missing, "input": user("What is my name?"), "store": False}),
            [text_frame(refused)],
        ),
        turn(
            2,
            again.label,
            create({"model": "gpt-4.1-mini", "previous_response_id": None, "input": history, "store": False}),
            messages(again),
        ),
    ]


def response_already_in_flight() -> list[Interaction]:
    """A second response.create while the first is in flight: the error answers it, and the
    first response goes on to complete (the recorded turn is the second request's)."""
    first = text_turn("ws_in_flight", ["One", " response", " at a", " time."])
    second_create = create({"model": "gpt-4.1-mini", "input": user("And another thing?")})
    busy = connection_error(
        409,
        "response_already_in_flight",
        "A response is already in flight on this connection. Wait for it to finish before "
        "creating another.",
    )
    frames = messages(first)
    # The first turn runs to its end; the second create, sent during it, is answered by an
    # error right away: two turns, the second one's frame log is just the error.
    return [
        turn(0, first.label, create({"model": "gpt-4.1-mini", "input": user("Tell me a rule.")}), [
            *frames[:4], text_frame(second_create, dir="client"), *frames[4:]
        ]),
        turn(1, "ws_in_flight_second", second_create, [text_frame(busy)]),
    ]


def connection_limit_reached() -> list[Interaction]:
    limit = connection_error(
        400,
        "websocket_connection_limit_reached",
        "Responses websocket connection limit reached (60 minutes). Create a new websocket "
        "connection to continue.",
    )
    body = create({"model": "gpt-4.1-mini", "input": user("Continue.")})
    return [turn(0, "ws_limit", body, [text_frame(limit), close(1000, "connection limit reached")])]


def second_turn_fresh_state() -> list[Interaction]:
    """Two turns whose items reuse output index 0; the second ends without closing its
    message item (the server closes the connection): its error must keep only its own text."""
    first = text_turn("ws_fresh_1", ["First", " answer."])
    second = _cut_text_turn("ws_fresh_2", 5)
    return [
        turn(0, first.label, create({"model": "gpt-4.1-mini", "input": user("First?")}), messages(first)),
        turn(
            1,
            second.label,
            create({"model": "gpt-4.1-mini", "previous_response_id": first.response["id"], "input": user("Second?")}),
            [*messages(second), close(1001, "going away")],
        ),
    ]


def dropped_without_close() -> list[Interaction]:
    s = _cut_text_turn("ws_dropped", 7)
    body = create({"model": "gpt-4.1-mini", "input": user("List the first primes.")})
    return [turn(0, s.label, body, messages(s))]


CASSETTES = {
    "text_single_turn": text_single_turn,
    "tool_call_single_turn": tool_call_single_turn,
    "chained_turns": chained_turns,
    "warmup_generate_false": warmup_generate_false,
    "continuation_frames": continuation_frames,
    "close_normal_mid_turn": close_normal_mid_turn,
    "close_abnormal_mid_turn": close_abnormal_mid_turn,
    "close_internal_error_mid_tool_call": close_internal_error_mid_tool_call,
    "previous_response_not_found": previous_response_not_found,
    "recovery_after_chained_turn": recovery_after_chained_turn,
    "response_already_in_flight": response_already_in_flight,
    "connection_limit_reached": connection_limit_reached,
    "second_turn_fresh_state": second_turn_fresh_state,
    "dropped_without_close": dropped_without_close,
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in CASSETTES.items():
        dump_cassette(build(), OUT / f"{name}.yaml")
        print(f"wrote {OUT / name}.yaml")


if __name__ == "__main__":
    main()
