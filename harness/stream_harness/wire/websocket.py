"""A recorded WebSocket turn (framing ``websocket-json``): log bytes -> one ``JSONLine`` per
message | ``FramingError``.

A WebSocket session has no body to replay byte for byte: what a client reads is a
sequence of frames. A cassette keeps them as a *frame log*, one JSON object a line, in the
order they crossed the connection (specs/protocols/openai-responses-websocket.md)::

    {"op": "text", "data": "{\\"type\\":\\"response.created\\",...}"}
    {"op": "text", "fin": false, "data": "{\\"type\\":\\"response.output_te"}
    {"op": "continuation", "data": "xt.delta\\",...}"}
    {"op": "continuation", "fin": false, "base64": "..."}   # a fragment cutting a UTF-8 character
    {"op": "text", "dir": "client", "data": "..."}         # a client message sent mid-turn
    {"op": "close", "code": 1006, "reason": ""}

``op`` is the frame's opcode (``text``, ``binary``, ``continuation``, ``close``, ``ping``,
``pong``); ``fin`` defaults to true; a payload is ``data`` (text) or ``base64`` (bytes, for
a fragment that is not valid UTF-8 on its own); ``dir`` is ``server`` unless it says
``client``. The log is JSON lines, so any byte split of it decodes alike, and every split
check applies unchanged; the faults of a socket (continuation frames, a close mid-turn)
are rewrites of the log, not of its bytes.

The decoder reassembles messages from their fragments (RFC 6455 section 5.4) and hands on
each complete text message parsed as JSON, as the JSON-lines framing does, so the
Responses translator reads the same events it reads from SSE. What a client of the
socket would see as a failure is a ``FramingError``, and decoding stops there: a close
frame (whatever its code: the turn's terminal event has not come, or the normalizer would
not be reading any more), a binary message, a message that is not UTF-8 or not JSON, a
continuation with no message to continue, a new message inside an unfinished one, a log
that ends inside a fragmented message. Client frames and pings are passed over.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable
from typing import Any, Final, TypeAlias

from stream_harness.contract.limits import FRAME_MAX_BYTES
from stream_harness.contract.limits import loads as bounded_loads

from ._types import FramingError, JSONLine

WebSocketOutput: TypeAlias = JSONLine | FramingError

OPCODES: Final = ("text", "binary", "continuation", "close", "ping", "pong")

# RFC 6455 section 7.4.1 and the IANA registry: the names a report gives a close code.
CLOSE_CODES: Final = {
    1000: "normal closure",
    1001: "going away",
    1002: "protocol error",
    1003: "unsupported data",
    1005: "no status received",
    1006: "abnormal closure",
    1007: "invalid frame payload data",
    1008: "policy violation",
    1009: "message too big",
    1010: "mandatory extension",
    1011: "internal error",
    1012: "service restart",
    1013: "try again later",
    1014: "bad gateway",
    1015: "TLS handshake failure",
}


def close_text(code: int | None, reason: str = "") -> str:
    """How a close frame reads in an error message: the code, its name and the reason."""
    if code is None:
        head = "a close frame without a status code"
    else:
        head = f"close code {code} ({CLOSE_CODES.get(code, 'unregistered')})"
    return f"{head}: {reason}" if reason else head


def frame_payload(frame: dict[str, Any]) -> bytes | None:
    """A log line's payload bytes (``data`` as UTF-8, or ``base64``); None when unreadable."""
    data = frame.get("data")
    if isinstance(data, str):
        return data.encode("utf-8", "surrogatepass")
    encoded = frame.get("base64")
    if isinstance(encoded, str):
        try:
            return base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            return None
    if data is None and encoded is None:
        return b""
    return None


class WebSocketLogDecoder:
    """Incremental frame-log parser: any chunking of the log gives the same outputs."""

    def __init__(self, max_message_bytes: int = FRAME_MAX_BYTES) -> None:
        self.max_message_bytes = max_message_bytes
        self._buffer = bytearray()
        self._offset = 0  # log offset of the first byte in _buffer
        self._line_no = 0
        self._message: bytearray | None = None  # a fragmented message being assembled
        self._message_op = ""
        self._messages = 0
        self._done = False

    def feed(self, chunk: bytes) -> list[WebSocketOutput]:
        if self._done:
            return []
        self._buffer += chunk
        out: list[WebSocketOutput] = []
        while not self._done:
            end = self._buffer.find(b"\n")
            if end < 0:
                if len(self._buffer) > self.max_message_bytes * 2 + 1024:
                    out.append(self._fail(f"log line {self._line_no + 1} is too long"))
                break
            line = bytes(self._buffer[:end])
            start = self._offset
            del self._buffer[: end + 1]
            self._offset += end + 1
            self._line(line, start, out)
        return out

    def close(self) -> list[WebSocketOutput]:
        if self._done:
            return []
        out: list[WebSocketOutput] = []
        if self._buffer:
            line, self._buffer = bytes(self._buffer), bytearray()
            self._line(line, self._offset, out)
        if not self._done and self._message is not None:
            out.append(
                self._fail(
                    f"the connection ended inside fragmented message {self._messages + 1} "
                    f"(no frame with fin after {len(self._message)} bytes)"
                )
            )
        self._done = True
        return out

    # -- internals ---------------------------------------------------------------

    def _fail(self, message: str, offset: int | None = None) -> FramingError:
        self._done = True
        self._buffer = bytearray()
        return FramingError(message, self._offset if offset is None else offset)

    def _line(self, line: bytes, start: int, out: list[WebSocketOutput]) -> None:
        self._line_no += 1
        text = line.rstrip(b"\r").strip()
        if not text:
            return
        try:
            frame = bounded_loads(text)
        except (ValueError, RecursionError) as exc:
            out.append(self._fail(f"frame log line {self._line_no} is not JSON ({exc})", start))
            return
        op = frame.get("op") if isinstance(frame, dict) else None
        if op not in OPCODES:
            out.append(
                self._fail(
                    f"frame log line {self._line_no}: no known op (one of {', '.join(OPCODES)})",
                    start,
                )
            )
            return
        assert isinstance(frame, dict)
        if frame.get("dir", "server") == "client" or op in ("ping", "pong"):
            return
        if op == "close":
            code = frame.get("code")
            reason = frame.get("reason")
            out.append(
                self._fail(
                    "connection closed before the end of the turn ("
                    + close_text(
                        code if isinstance(code, int) else None,
                        reason if isinstance(reason, str) else "",
                    )
                    + ")",
                    start,
                )
            )
            return
        payload = frame_payload(frame)
        if payload is None:
            out.append(self._fail(f"frame log line {self._line_no}: unreadable payload", start))
            return
        fin = frame.get("fin", True) is not False
        if op == "continuation":
            if self._message is None:
                out.append(
                    self._fail(
                        f"a continuation frame with no message to continue (frame log line {self._line_no})",
                        start,
                    )
                )
                return
            self._message += payload
        else:
            if self._message is not None:
                out.append(
                    self._fail(
                        f"a new {op} message while message {self._messages + 1} is still "
                        f"unfinished (frame log line {self._line_no})",
                        start,
                    )
                )
                return
            self._message = bytearray(payload)
            self._message_op = op
        if len(self._message) > self.max_message_bytes:
            out.append(
                self._fail(
                    f"message {self._messages + 1} is longer than {self.max_message_bytes} bytes",
                    start,
                )
            )
            return
        if fin:
            message, self._message = bytes(self._message), None
            self._messages += 1
            self._complete(message, start, out)

    def _complete(self, message: bytes, start: int, out: list[WebSocketOutput]) -> None:
        n = self._messages
        if self._message_op == "binary":
            out.append(
                self._fail(
                    f"message {n} is binary ({len(message)} bytes); the server sends text messages",
                    start,
                )
            )
            return
        try:
            text = message.decode("utf-8")
        except UnicodeDecodeError as exc:
            out.append(
                self._fail(
                    f"message {n} is not valid UTF-8 at byte {exc.start} ({exc.reason})", start
                )
            )
            return
        try:
            value = bounded_loads(text)
        except (ValueError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            out.append(self._fail(f"message {n} is not JSON ({reason}): {text[:60]!r}", start))
            return
        out.append(JSONLine(value, text))


def fragment_frames(
    payload: bytes, cuts: list[int], *, opcode: str = "text"
) -> list[dict[str, Any]]:
    """One message as frames cut at ``cuts`` (byte offsets into ``payload``): the first
    with ``opcode``, the rest continuations, ``fin`` only on the last. A piece that is not
    valid UTF-8 alone (a cut inside a character) is written as ``base64``."""
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(payload)}), len(payload)]
    frames: list[dict[str, Any]] = []
    for i in range(len(bounds) - 1):
        piece = payload[bounds[i] : bounds[i + 1]]
        frame: dict[str, Any] = {"op": opcode if i == 0 else "continuation"}
        if i < len(bounds) - 2:
            frame["fin"] = False
        try:
            frame["data"] = piece.decode("utf-8")
        except UnicodeDecodeError:
            frame["base64"] = base64.b64encode(piece).decode("ascii")
        frames.append(frame)
    return frames


def refragment_log(body: bytes, cuts_for: Callable[[int, bytes], Iterable[int]]) -> bytes:
    """The frame log with every whole server text message re-sent as fragments.

    ``cuts_for(n, payload)`` gives the byte offsets at which message ``n`` (counting from
    0) is cut. Frames that are already fragments, client frames, control frames and lines
    that do not parse are kept as they are: only message boundaries move, so a client that
    reassembles messages correctly reads the same events (the socket's analogue of a
    re-chunked byte stream).
    """
    out: list[str] = []
    n = 0
    for line in body.decode("utf-8", "surrogateescape").split("\n"):
        if not line.strip():
            continue
        try:
            frame = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if (
            isinstance(frame, dict)
            and frame.get("op") == "text"
            and frame.get("fin", True) is not False
            and frame.get("dir", "server") != "client"
        ):
            payload = frame_payload(frame)
            if payload is not None:
                cuts = list(cuts_for(n, payload))
                n += 1
                out.extend(
                    json.dumps(f, ensure_ascii=False) for f in fragment_frames(payload, cuts)
                )
                continue
        out.append(line)
    return ("\n".join(out) + "\n").encode("utf-8", "surrogateescape") if out else b""
