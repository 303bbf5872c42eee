"""Replaying a recorded WebSocket session on a loopback socket (Responses WebSocket mode).

A WebSocket cassette is one connection, its interactions the turns
(specs/protocols/openai-responses-websocket.md). After the handshake the server plays the
turns in order: it waits for the client's message that opens a turn, then sends the turn's
frame log frame by frame, exactly as recorded (continuation frames stay continuation
frames, a close frame is sent with its code; 1005, 1006 and 1015 are never sent on the wire,
RFC 6455 7.4.1, so those drop the TCP connection instead). A log that stops before the
turn's terminal event without a close frame drops the connection there, as it was lost when
recorded; ``dir: client`` lines are what the recorded client sent and are not awaited. After
the last turn it answers the client's close.

The frames are made and parsed by the sans-I/O protocol of the ``websockets`` library (the
library the openai SDK's ``responses.connect()`` runs on); this module only does the socket
reads and writes, and :func:`accept` the handshake's answer.
"""

from __future__ import annotations

import base64
import contextlib
import json
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from websockets.frames import Frame, Opcode
from websockets.protocol import Protocol, Side, State
from websockets.utils import accept_key

from stream_harness.wire.websocket import frame_payload

# Close codes an endpoint must not send in a close frame (RFC 6455 7.4.1): a recorded one
# means the connection ended without a close frame, so the replay drops it.
UNSENDABLE_CLOSE: Final = frozenset({1005, 1006, 1015})
READ_TIMEOUT: Final = 15.0  # seconds a turn waits for the client's message
GUARD: Final = 64 * 1024


# The server messages that end a Responses turn: after one, the connection stays open for
# the next turn; a log that stops before one (and without a close frame) is a lost connection.
TERMINAL_TYPES: Final = frozenset(
    {"response.completed", "response.incomplete", "response.failed", "response.cancelled", "error"}
)


def ends_turn(message: bytes) -> bool:
    """Whether a turn's last server message ends the turn (its JSON ``type``)."""
    try:
        value = json.loads(message)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("type") in TERMINAL_TYPES


def accept(key: str) -> str:
    """The ``Sec-WebSocket-Accept`` answering a client's ``Sec-WebSocket-Key``."""
    return accept_key(key)


def is_upgrade(headers: dict[str, str]) -> bool:
    """A WebSocket handshake (RFC 6455 4.1): ``Upgrade: websocket`` and a key."""
    return headers.get("upgrade", "").lower() == "websocket" and bool(
        headers.get("sec-websocket-key")
    )


@dataclass
class SessionLog:
    """What happened on one replayed connection: the client's messages, in order, and how
    it ended (``closed_by``: ``client``, ``server``, ``drop``, ``timeout`` or ``eof``)."""

    received: list[str] = field(default_factory=list)
    closed_by: str = ""
    turns_played: int = 0


def parse_log(body: bytes) -> list[dict[str, Any]]:
    """A turn's frame log as frame objects (lines that do not parse are skipped: the
    reference reports them; the replay sends what it can)."""
    frames: list[dict[str, Any]] = []
    for line in body.decode("utf-8", "replace").splitlines():
        if not line.strip():
            continue
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                frames.append(value)
    return frames


class _Socket:
    """The raw connection and the protocol state machine over it."""

    def __init__(self, sock: socket.socket, pending: bytes, log: SessionLog) -> None:
        self.sock = sock
        self.proto = Protocol(Side.SERVER, state=State.OPEN, max_size=None)
        self.log = log
        self._message: list[bytes] = []
        self._messages: list[str] = []
        if pending:
            self.proto.receive_data(pending)

    def flush(self) -> None:
        data = b"".join(self.proto.data_to_send())
        if data:
            self.sock.sendall(data)

    def next_message(self) -> str | None:
        """The client's next complete message; None when it closed or went away."""
        while True:
            self._drain_events()
            if self._messages:
                message = self._messages.pop(0)
                self.log.received.append(message)
                return message
            if self.proto.state is not State.OPEN:
                self.log.closed_by = self.log.closed_by or "client"
                self.flush()  # the close frame websockets queued in answer
                return None
            try:
                data = self.sock.recv(GUARD)
            except TimeoutError:
                self.log.closed_by = "timeout"
                return None
            except OSError:
                self.log.closed_by = "eof"
                return None
            if data:
                self.proto.receive_data(data)
            else:
                self.proto.receive_eof()
                self.log.closed_by = self.log.closed_by or "eof"
                self._drain_events()
                return self._messages.pop(0) if self._messages else None

    def _drain_events(self) -> None:
        for event in self.proto.events_received():
            if not isinstance(event, Frame):
                continue
            if event.opcode in (Opcode.TEXT, Opcode.BINARY, Opcode.CONT):
                self._message.append(bytes(event.data))
                if event.fin:
                    self._messages.append(b"".join(self._message).decode("utf-8", "replace"))
                    self._message = []
        self.flush()  # pongs and close answers

    def send(self, frame: dict[str, Any]) -> bool:
        """Send one recorded frame; False when the connection ends with it."""
        op = frame.get("op")
        if op == "close":
            code = frame.get("code")
            reason = frame.get("reason") if isinstance(frame.get("reason"), str) else ""
            if not isinstance(code, int) or code in UNSENDABLE_CLOSE:
                self.drop()
                self.log.closed_by = "drop"
                return False
            with contextlib.suppress(Exception):
                self.proto.send_close(code, reason or "")
                self.flush()
            self.log.closed_by = "server"
            # Read the client's answering close frame, then end the TCP connection (the
            # server closes it first, RFC 6455 7.1.1), so neither side waits for the other.
            with contextlib.suppress(OSError):
                self.sock.settimeout(2.0)
                while not self._close_received():
                    data = self.sock.recv(GUARD)
                    if not data:
                        break
                    self.proto.receive_data(data)
            self.drop()
            return False
        payload = frame_payload(frame) or b""
        fin = frame.get("fin", True) is not False
        if op == "text":
            self.proto.send_text(payload, fin=fin)
        elif op == "binary":
            self.proto.send_binary(payload, fin=fin)
        elif op == "continuation":
            self.proto.send_continuation(payload, fin=fin)
        elif op == "ping":
            self.proto.send_ping(payload)
        self.flush()
        return True

    def _close_received(self) -> bool:
        return any(
            isinstance(e, Frame) and e.opcode is Opcode.CLOSE for e in self.proto.events_received()
        )

    def drop(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)


def play_session(
    sock: socket.socket,
    turns: Sequence[bytes],
    *,
    pending: bytes = b"",
    log: SessionLog | None = None,
    on_turn: Callable[[int, str], None] | None = None,
) -> SessionLog:
    """Play ``turns`` (each a frame log) on an upgraded connection; return what happened.

    ``pending`` is what the HTTP layer read past the handshake. Each turn starts when the
    client's next message arrives (``on_turn(i, message)`` sees it); a client that closes
    or stays silent for :data:`READ_TIMEOUT` seconds ends the session.
    """
    log = log if log is not None else SessionLog()
    sock.settimeout(READ_TIMEOUT)
    conn = _Socket(sock, pending, log)
    for i, body in enumerate(turns):
        message = conn.next_message()
        if message is None:
            return log
        if on_turn is not None:
            on_turn(i, message)
        log.turns_played = i + 1
        last = b""  # the last server message, reassembled
        for frame in parse_log(body):
            if frame.get("dir", "server") == "client":
                continue  # what the recorded client sent mid-turn: a note, not awaited
            if not conn.send(frame):
                return log
            if frame.get("op") in ("text", "continuation"):
                piece = frame_payload(frame) or b""
                last = last + piece if frame.get("op") == "continuation" else piece
        if not ends_turn(last):
            # The log stops before the turn's terminal event and without a close frame: the
            # recorded connection was lost there, so the replay drops it too.
            conn.drop()
            log.closed_by = "drop"
            return log
    # Every turn played: wait for the client to close (or leave), answering its close.
    while conn.next_message() is not None:
        pass
    return log


def frame_log(frames: Sequence[dict[str, Any]]) -> bytes:
    """Frames as a frame log (one JSON object a line), as cassettes hold them."""
    return "".join(json.dumps(f, ensure_ascii=False) + "\n" for f in frames).encode("utf-8")


def text_frames(messages: Sequence[str | bytes]) -> list[dict[str, Any]]:
    """Whole text messages as frame-log lines (bytes that are not UTF-8 as base64)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        raw = message.encode("utf-8") if isinstance(message, str) else message
        try:
            out.append({"op": "text", "data": raw.decode("utf-8")})
        except UnicodeDecodeError:
            out.append({"op": "text", "base64": base64.b64encode(raw).decode("ascii")})
    return out
