"""A replayed WebSocket session that also checks the client's side of each turn.

The session checks (``session-turns``, ``session-chaining``, ``previous-response-recovery``,
specs/checks.md) play a cassette's turns on one connection, as
harness/stream_harness/server/websocket.py does, and compare every ``response.create`` the
client sends with the recorded one, on the fields that decide what the model sees
(specs/protocols/openai-responses-websocket.md, "Sessions"): ``previous_response_id`` (the
recorded id, or none where the recording has none or ``null``) and the input items (only the
new ones on a chained turn, the whole context after ``previous_response_not_found``). The
recorded server events are served whatever the client sent, so a wrong request is reported
and the session goes on.

:func:`create_differences` is pure (the tests call it directly); :class:`CheckedSession` is a
loopback strategy.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from stream_harness.server.loopback import Answer, Hit, json_error


def input_items(value: object) -> list[object]:
    """A create body's ``input`` as a list of items (a bare string is one user message)."""
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    if isinstance(value, list):
        return list(value)
    return []


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def item_key(item: object) -> tuple[object, ...]:
    """What of an input item reaches the model: a message's role and text, a tool call's id,
    name and arguments, a tool output's id and text. An output item resent as input (the
    ``message`` a response returned) has the same key as the short form of the same message."""
    if isinstance(item, str):
        return ("message", "user", item)
    if not isinstance(item, dict):
        return ("?", repr(item))
    kind = item.get("type", "message")
    if kind == "message":
        return ("message", item.get("role"), _text(item.get("content")))
    if kind == "function_call":
        return (kind, item.get("call_id"), item.get("name"), item.get("arguments"))
    if kind == "function_call_output":
        return (kind, item.get("call_id"), _text(item.get("output")))
    return (kind, item.get("id"), item.get("call_id"))


def create_differences(recorded: Mapping[str, Any], sent: Mapping[str, Any]) -> list[str]:
    """How a client's ``response.create`` differs from the recorded one, in the fields that
    decide what the model sees; empty when they agree."""
    out: list[str] = []
    if sent.get("type") != "response.create":
        out.append(f"sent a {sent.get('type')!r} message, recorded a response.create")
    want, got = recorded.get("previous_response_id"), sent.get("previous_response_id")
    if want != got:
        if want is None:
            out.append(
                f"sent previous_response_id {got!r}, recorded none (the full context, a new chain)"
            )
        elif got is None:
            out.append(f"sent no previous_response_id, recorded {want!r}")
        else:
            out.append(f"sent previous_response_id {got!r}, recorded {want!r}")
    want_items = [item_key(i) for i in input_items(recorded.get("input"))]
    got_items = [item_key(i) for i in input_items(sent.get("input"))]
    if want_items != got_items:
        if len(want_items) != len(got_items):
            out.append(f"sent {len(got_items)} input item(s), recorded {len(want_items)}")
        else:
            k = next(
                i for i, (a, b) in enumerate(zip(want_items, got_items, strict=True)) if a != b
            )
            out.append(f"input item {k} differs: sent {got_items[k]!r}, recorded {want_items[k]!r}")
    return out


def parse_create(text: str | bytes) -> dict[str, Any]:
    """A client message as a JSON object ({} when it is none)."""
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


@dataclass
class OneSession:
    """A loopback strategy holding one WebSocket session: ``turns`` (frame logs) played on
    the first upgrade; anything else is a 404."""

    turns: list[bytes]
    methods: ClassVar[tuple[str, ...]] = ("GET",)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _played: bool = False

    def websocket_turns(self, hit: Hit) -> list[bytes] | None:
        with self._lock:
            if self._played:
                return None
            self._played = True
        return self.turns

    def respond(self, hit: Hit) -> Answer:
        return json_error(404, "not_found", f"no session for {hit.method} {hit.target}")


@dataclass
class CheckedSession:
    """One WebSocket session (``logs``, the turns' frame logs) played on the first upgrade,
    each client message that opens turn i compared with ``creates[i]``, the recorded one:
    ``sent`` keeps what the client sent, ``differences`` what differed, by turn."""

    logs: list[bytes]
    creates: list[dict[str, Any]]
    methods: ClassVar[tuple[str, ...]] = ("GET",)
    sent: list[dict[str, Any]] = field(default_factory=list)
    differences: dict[int, list[str]] = field(default_factory=dict)
    _session: OneSession = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._session = OneSession(self.logs)

    def websocket_turns(self, hit: Hit) -> list[bytes] | None:
        return self._session.websocket_turns(hit)

    def websocket_message(self, index: int, message: str) -> None:
        sent = parse_create(message)
        self.sent.append(sent)
        found = create_differences(self.creates[index], sent) if index < len(self.creates) else []
        if found:
            self.differences[index] = found

    def respond(self, hit: Hit) -> Answer:
        return self._session.respond(hit)


def recorded_creates(bodies: Sequence[bytes]) -> list[dict[str, Any]]:
    """The recorded turns' opening client messages (the interactions' request bodies)."""
    return [parse_create(b) for b in bodies]
