"""The client side of a gateway exchange: a small HTTP/1.1 reader that says how the transfer ended.

Why not ``http.client``: the question the cut check asks is not "what bytes came" but
"did the message end well", and ``http.client`` answers it only in part. Its chunked
decoder does raise ``IncompleteRead`` on a FIN before the zero-length chunk or inside a
chunk, but ``read1`` returns ``b""`` silently when a content-length body stops short, a
reset surfaces as a bare ``OSError`` indistinguishable from our own timeout handling, and
nothing records which framing the gateway chose. Reading the socket ourselves is about a
hundred lines and makes each ending explicit (:class:`Transfer`): the terminating chunk
seen, the content length satisfied, the end of a close-delimited body (complete by
definition: a client cannot tell it from a cut, RFC 9112 6.3), or an EOF between chunks,
an EOF inside a chunk, a reset, a timeout, a malformed chunk size. It also times every
``recv`` that delivered body bytes, which the streaming check needs.

The request is sent with ``connection: close`` (one request per connection, as before),
interim 1xx responses are skipped, and trailers after the last chunk are read and dropped.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

Framing = Literal["none", "chunked", "content-length", "close-delimited"]
TransferEnd = Literal[
    "complete",  # the terminating chunk, the content length, or a close-delimited body's EOF
    "eof",  # the connection closed (FIN) before the message was complete
    "eof-inside-chunk",  # the connection closed inside a chunk's data
    "reset",  # the connection was reset (RST)
    "timeout",  # no byte for the read timeout
    "malformed",  # a chunk size or framing that does not parse
    "error",  # another socket error
]
MAX_HEAD: Final = 65536  # bytes of status line and headers read before giving up


@dataclass
class Transfer:
    """How the response's transfer went: its framing, and how it ended."""

    framing: Framing = "none"
    end: TransferEnd | None = None  # None while reading
    detail: str = ""

    @property
    def complete(self) -> bool:
        return self.end == "complete"

    def describe(self) -> str:
        text = f"{self.end or 'unfinished'} ({self.framing})"
        return f"{text}: {self.detail}" if self.detail else text


@dataclass
class RawResponse:
    status: int = 0
    headers: dict[str, list[str]] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)  # body data as each recv delivered it
    times: list[float] = field(default_factory=list)  # monotonic time of each recv that did
    transfer: Transfer = field(default_factory=Transfer)
    sent: float = 0.0  # when the request was sent

    def problem(self) -> str | None:
        """A transfer that did not complete, as text (None when it did)."""
        return (
            None
            if self.transfer.complete
            else f"the gateway's response did not complete: {self.transfer.describe()}"
        )


class _Malformed(Exception):
    """Bytes that are no HTTP/1.1 framing."""


class _Reader:
    """Buffered reads from a socket, remembering when the last bytes arrived."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""
        self.arrived = 0.0
        self.eof = False

    def fill(self) -> bool:
        """One recv into the buffer; False at EOF."""
        if self.eof:
            return False
        data = self.sock.recv(65536)
        if not data:
            self.eof = True
            return False
        self.arrived = time.monotonic()
        self.buf += data
        return True

    def line(self, limit: int = MAX_HEAD) -> bytes | None:
        """The next line without its CRLF (or bare LF); None at EOF before a line ends."""
        while b"\n" not in self.buf:
            if len(self.buf) > limit:
                raise _Malformed(f"no line end within {limit} bytes: {self.buf[:40]!r}")
            if not self.fill():
                return None
        line, _, self.buf = self.buf.partition(b"\n")
        return line.rstrip(b"\r")

    def take(self, n: int) -> bytes:
        """Up to ``n`` bytes, reading once if the buffer is empty; b"" at EOF."""
        if not self.buf and not self.fill():
            return b""
        out, self.buf = self.buf[:n], self.buf[n:]
        return out


def request(
    host: str,
    port: int,
    method: str,
    path: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    timeout: float,
) -> RawResponse:
    """Send one request and read the response to its end, however it ends.

    Raises OSError only when the connection cannot be made or the request not sent; a
    response that goes wrong is reported in ``transfer``.
    """
    out = RawResponse()
    sock = socket.create_connection((host, port), timeout=timeout)
    try:
        head = [f"{method} {path} HTTP/1.1", f"host: {host}:{port}", f"content-length: {len(body)}"]
        head += [
            f"{k}: {v}" for k, v in headers.items() if k.lower() not in ("host", "content-length")
        ]
        out.sent = time.monotonic()
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        reader = _Reader(sock)
        try:
            _read_response(reader, out)
        except _Malformed as exc:
            out.transfer.end, out.transfer.detail = "malformed", str(exc)
        except ConnectionResetError as exc:
            out.transfer.end, out.transfer.detail = "reset", str(exc)
        except TimeoutError:
            out.transfer.end, out.transfer.detail = "timeout", f"no byte for {timeout:g} s"
        except OSError as exc:
            out.transfer.end, out.transfer.detail = "error", f"{type(exc).__name__}: {exc}"
    finally:
        sock.close()
    return out


def _read_response(reader: _Reader, out: RawResponse) -> None:
    t = out.transfer
    while True:  # skip interim responses (100 Continue, 103 Early Hints)
        status_line = reader.line()
        if status_line is None:
            t.end, t.detail = "eof", "before a status line"
            return
        parts = status_line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
            t.end, t.detail = "malformed", f"status line {status_line[:80]!r}"
            return
        out.status = int(parts[1])
        out.headers = {}
        while True:
            line = reader.line()
            if line is None:
                t.end, t.detail = "eof", "inside the headers"
                return
            if not line:
                break
            name, _, value = line.decode("latin-1").partition(":")
            out.headers.setdefault(name.strip().lower(), []).append(value.strip())
        if not 100 <= out.status < 200 or out.status == 101:
            break
    codings = ",".join(out.headers.get("transfer-encoding", [])).lower()
    length = out.headers.get("content-length")
    if out.status in (204, 304) or 100 <= out.status < 200:
        t.framing, t.end = "none", "complete"
    elif codings.rstrip().endswith("chunked"):
        t.framing = "chunked"
        _read_chunked(reader, out)
    elif length:
        t.framing = "content-length"
        try:
            left = int(length[0])
        except ValueError:
            t.end, t.detail = "malformed", f"content-length {length[0]!r}"
            return
        while left > 0:
            data = reader.take(left)
            if not data:
                t.end, t.detail = "eof", f"{left} of {length[0]} bytes missing"
                return
            _body(reader, out, data)
            left -= len(data)
        t.end = "complete"
    else:
        t.framing = "close-delimited"
        while data := reader.take(65536):
            _body(reader, out, data)
        t.end, t.detail = "complete", "the connection's end ends a close-delimited body"


def _read_chunked(reader: _Reader, out: RawResponse) -> None:
    t = out.transfer
    while True:
        line = reader.line()
        if line is None:
            t.end, t.detail = "eof", "no terminating zero-length chunk"
            return
        try:
            size = int(line.split(b";")[0].strip(), 16)
        except ValueError:
            t.end, t.detail = "malformed", f"chunk size {line[:40]!r}"
            return
        if size == 0:
            while (trailer := reader.line()) is not None and trailer:
                pass  # trailers (and a missing final CRLF) change nothing
            t.end = "complete"
            return
        left = size
        while left > 0:
            data = reader.take(left)
            if not data:
                t.end, t.detail = "eof-inside-chunk", f"{left} of a {size}-byte chunk missing"
                return
            _body(reader, out, data)
            left -= len(data)
        crlf = reader.line(limit=2)
        if crlf is None:
            t.end, t.detail = "eof-inside-chunk", "before the CRLF ending a chunk"
            return
        if crlf:
            raise _Malformed(f"{len(crlf)} bytes after a {size}-byte chunk")


def _body(reader: _Reader, out: RawResponse, data: bytes) -> None:
    """Body bytes from the current recv: a new read, or more of the one just recorded."""
    if out.times and out.times[-1] == reader.arrived:
        out.chunks[-1] += data
    else:
        out.chunks.append(data)
        out.times.append(reader.arrived)
