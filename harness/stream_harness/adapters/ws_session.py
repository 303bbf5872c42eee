"""Several turns on one WebSocket connection: what a session-capable adapter is given, and
the client-side rules a real Responses WebSocket client follows across turns.

An adapter that declares ``sessions = True`` has ``run_session(protocol, base_url, turns)``:
it opens ONE connection to ``base_url`` (a loopback replay of a whole cassette) and sends
the :class:`SessionTurn` s in order, returning one result a turn
(specs/protocols/openai-responses-websocket.md, "Sessions"). A turn is what a user of the
client asks for: the recorded ``response.create`` (its model, options and the turn's new
input). The client chains it: a turn recorded with a ``previous_response_id`` is sent with
the id of the response the client got on the previous turn (the Responses WebSocket-mode
guide: continue with ``previous_response_id`` and only the new input items). A client that
answers ``previous_response_not_found`` itself (``recovers_previous_response = True``) sends
the turn again with the whole context it holds and ``previous_response_id: null``; the
recorded turn after the refusal is that resend, so it is no user turn of its own
(:func:`session_plan`).

The rules are in :class:`ChainState`, shared by the reference's socket client and the SDK
rows, whose code plays the user the SDK leaves them to (the openai SDK's
``lib/responses_websocket/README.md``: "Restore the full retained input and output history as
a new chain when needed").
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from stream_harness.contract.events import Event
from stream_harness.providers.reference import normalize
from stream_harness.server.websocket import TERMINAL_TYPES, frame_log, parse_log
from stream_harness.server.ws_session import input_items, parse_create

NOT_FOUND: Final = "previous_response_not_found"


@dataclass(frozen=True)
class SessionTurn:
    """One user turn of a session: the recorded ``response.create`` (without the resend a
    client makes on its own), whether it continues the previous response, and on the first
    turn the conversation its user held before the connection (what a resend must repeat)."""

    create: Mapping[str, Any]
    chained: bool = False
    context: tuple[Any, ...] = ()
    # The recorded frame log that answers the turn (the resend's, for a refused one): for
    # the harness's own reading of a reply (a stdio adapter's message is completed from the
    # reference's reading of it); never sent to a client, which reads its socket.
    recorded: bytes = field(default=b"", repr=False, compare=False)


@dataclass(frozen=True)
class SessionPlan:
    """A cassette read as a session: the user turns, and for the server every recorded
    turn's ``response.create`` and frame log; ``answered_by[i]`` is the recorded turn whose
    events end user turn i (the resend, for a refused one); ``refused`` the recorded turns
    answered by ``previous_response_not_found``; ``concurrent`` when the recording has a
    client message inside a turn (``response_already_in_flight``), not a session of one
    response at a time."""

    turns: tuple[SessionTurn, ...]
    creates: tuple[dict[str, Any], ...]
    logs: tuple[bytes, ...]
    answered_by: tuple[int, ...]
    refused: frozenset[int] = field(default_factory=frozenset)
    concurrent: bool = False


def server_messages(log: bytes) -> list[dict[str, Any]]:
    """A frame log's whole server text messages as JSON objects (fragments joined)."""
    out: list[dict[str, Any]] = []
    pending = ""
    for frame in parse_log(log):
        if frame.get("dir", "server") == "client" or frame.get("op") not in (
            "text",
            "continuation",
        ):
            continue
        data = frame.get("data")
        pending = (pending if frame.get("op") == "continuation" else "") + (
            data if isinstance(data, str) else ""
        )
        if frame.get("fin", True) is not False:
            value = parse_create(pending)
            if value:
                out.append(value)
    return out


def is_not_found(message: Mapping[str, Any] | None) -> bool:
    """An ``error`` event with code ``previous_response_not_found``."""
    if not message or message.get("type") != "error":
        return False
    error = message.get("error")
    return isinstance(error, dict) and error.get("code") == NOT_FOUND


def completed_response(messages: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The ``response`` of a turn's ``response.completed`` event, if it has one."""
    for m in messages:
        if m.get("type") == "response.completed" and isinstance(m.get("response"), dict):
            return m["response"]  # type: ignore[no-any-return]
    return None


class ChainState:
    """What a client holds across turns: the last response id to chain from, and the whole
    conversation (its context, every turn's input, every response's output items) to resend
    when the server has lost the chain."""

    def __init__(self, context: Sequence[Any] = ()) -> None:
        self.history: list[Any] = list(context)
        self.last_id: str | None = None

    def request(self, turn: SessionTurn) -> dict[str, Any]:
        """The turn's ``response.create``: chained to this connection's last response."""
        event = {"type": "response.create", **dict(turn.create)}
        if turn.chained and self.last_id is not None:
            event["previous_response_id"] = self.last_id
        return event

    def recovery(self, turn: SessionTurn) -> dict[str, Any]:
        """The turn again after ``previous_response_not_found``: the whole conversation as
        input, no ``previous_response_id`` (a new chain)."""
        event = {"type": "response.create", **dict(turn.create)}
        event["previous_response_id"] = None
        event["input"] = [*self.history, *input_items(turn.create.get("input"))]
        return event

    def answered(self, turn: SessionTurn, response: Mapping[str, Any] | None) -> None:
        """A turn ended: a completed response is the next chain link, and its input and
        output join the history."""
        if response is None or not isinstance(response.get("id"), str):
            return
        self.last_id = response["id"]
        self.history.extend(input_items(turn.create.get("input")))
        output = response.get("output")
        self.history.extend(output if isinstance(output, list) else [])


def session_plan(creates: Sequence[Mapping[str, Any]], logs: Sequence[bytes]) -> SessionPlan:
    """A connection's recorded turns as user turns (see the module docstring)."""
    turns: list[SessionTurn] = []
    answered_by: list[int] = []
    refused: set[int] = set()
    concurrent = any(f.get("dir") == "client" for log in logs for f in parse_log(log))
    history = ChainState()
    context: tuple[Any, ...] = ()
    for i, (create, log) in enumerate(zip(creates, logs, strict=True)):
        body = {k: v for k, v in create.items() if k != "type"}
        messages = server_messages(log)
        if i - 1 in refused and turns:
            # The client's resend: the whole context it held is the recorded input minus
            # what this connection added and the refused turn's own input.
            answered_by[-1] = i
            resent = input_items(body.get("input"))
            own = len(history.history) + len(input_items(turns[-1].create.get("input")))
            if len(resent) > own and not context:
                context = tuple(resent[: len(resent) - own])
            history.answered(turns[-1], completed_response(messages))
            continue
        turn = SessionTurn(create=body, chained=body.get("previous_response_id") is not None)
        turns.append(turn)
        answered_by.append(i)
        if messages and is_not_found(messages[-1]):
            refused.add(i)
        else:
            history.answered(turn, completed_response(messages))
    turns = [
        SessionTurn(t.create, t.chained, context if i == 0 else (), recorded=logs[answered_by[i]])
        for i, t in enumerate(turns)
    ]
    return SessionPlan(
        turns=tuple(turns),
        creates=tuple(dict(c) for c in creates),
        logs=tuple(logs),
        answered_by=tuple(answered_by),
        refused=frozenset(refused),
        concurrent=concurrent,
    )


# -- the reference client: our normalizer over a real socket ---------------------------


def websocket_url(base_url: str) -> str:
    """``http://host:port`` -> ``ws://host:port/v1/responses``."""
    scheme, _, rest = base_url.partition("://")
    return ("wss" if scheme == "https" else "ws") + "://" + rest.rstrip("/") + "/v1/responses"


def exchange(ws: Any, event: Mapping[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    """Send one ``response.create`` and read its turn: the frames received (a close as a
    close line, 1006 when the connection dropped without one, as recordings write it) and
    whether the connection ended."""
    from websockets.exceptions import ConnectionClosed

    frames: list[dict[str, Any]] = []
    try:
        ws.send(json.dumps(event))
        while True:
            message = ws.recv()
            text = message if isinstance(message, str) else message.decode("utf-8", "replace")
            frames.append({"op": "text", "data": text})
            if parse_create(text).get("type") in TERMINAL_TYPES:
                return frames, False
    except ConnectionClosed as exc:
        rcvd = exc.rcvd
        if rcvd is not None:
            frames.append({"op": "close", "code": int(rcvd.code), "reason": rcvd.reason})
        else:
            frames.append({"op": "close", "code": 1006, "reason": ""})
        return frames, True


def reference_session(
    protocol: str,
    base_url: str,
    turns: Sequence[SessionTurn],
    *,
    chain: ChainState | None = None,
    recover: bool = True,
) -> list[list[Event]]:
    """The reference client: one connection, each turn's frames read by a fresh
    normalizer (nothing of one turn reaches the next); chained by ``chain``; a
    ``previous_response_not_found`` answered by the full context when ``recover``."""
    from websockets.sync.client import connect

    chain = chain if chain is not None else ChainState(turns[0].context if turns else ())
    out: list[list[Event]] = []
    with connect(websocket_url(base_url), max_size=None, open_timeout=10, close_timeout=2) as ws:
        for turn in turns:
            frames, closed = exchange(ws, chain.request(turn))
            last = server_messages(frame_log(frames))
            if recover and not closed and last and is_not_found(last[-1]):
                frames, closed = exchange(ws, chain.recovery(turn))
            chain.answered(turn, completed_response(server_messages(frame_log(frames))))
            out.append(list(normalize(protocol, [frame_log(frames)], status=101)))
            if closed:
                break
    return out
