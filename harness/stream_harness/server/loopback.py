"""One loopback HTTP server, for every way stream-harness answers over HTTP.

``stream-harness serve`` (:mod:`stream_harness.server.serve`) and the upstream a gateway
under test calls (:mod:`stream_harness.server.upstream`) are the same server and differ
only in how they choose a reply. So the server is written once, here, and each way of
choosing is a small :class:`Replies` strategy on top: what the checks rely on (one
HTTP/1.1 chunk per write with Nagle off, the pause between chunks, a cut inside the
chunked body, the time of each chunk) then means the same thing wherever it is served,
and a new way of answering (another reply strategy, an endpoint that reports the log) is
a strategy, not a third server.

The server listens on 127.0.0.1 only (it replays recordings; nothing outside the machine
has a reason to reach it), on a port the OS picks unless one is asked for. Every request
is logged as a :class:`Hit` as it arrives, secrets scrubbed from its headers, and the hit
is then completed with the status answered, the ``time.monotonic()`` of every chunk sent
(shared with the client on Linux, so a check can tell a streaming gateway from a
buffering one) and when the reply ended.

A chunked reply writes and flushes each non-empty chunk on its own: the chunked framing
keeps the boundaries visible to a client that reads it, while a client reading the
decoded body through TCP may see neighbouring chunks merged (what the network does too).
``pacing="bytes"`` writes the body instead in pieces of 3 to 7 bytes (:data:`BYTE_PIECES`,
the first :data:`BYTE_HEAD_LIMIT` bytes; the rest as given), each its own HTTP chunk,
``delay`` apart: an event line then reaches the client over several transport reads, the
way a slow or congested upstream delivers it, and a client that decides per read (holds
a read until it has "enough") is seen holding the stream.

``cut`` ends the body early. Without the chunked terminator, so that the message is
incomplete for the client (RFC 9112, 7.1: no zero-length chunk), in the three ways a
connection really drops (:data:`TRANSPORT_CUTS`): ``close`` (a FIN after a complete
chunk), ``reset`` (an RST: ``SO_LINGER`` 0 and close, the peer's next read fails with
ECONNRESET) and ``inside-chunk`` (the last chunk's size is announced, half its bytes
written, then a FIN). Each comes :data:`CUT_SETTLE` seconds after the last write, so the
bytes before it have been read (an RST arriving with unread data may discard it, which
is another test). Or with the terminator (``clean``): a body that stops early but ends
well, a complete HTTP message.
"""

from __future__ import annotations

import contextlib
import json
import random
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Final, Literal, Protocol, Self
from urllib.parse import urlsplit

from stream_harness.server.websocket import accept, is_upgrade, play_session

HOST: Final = "127.0.0.1"
CutMode = Literal["none", "close", "reset", "inside-chunk", "clean"]
# The cuts that drop the connection inside the chunked body (no terminating chunk).
TRANSPORT_CUTS: Final[tuple[CutMode, ...]] = ("close", "reset", "inside-chunk")
Pacing = Literal["chunks", "bytes"]
BYTE_PIECES: Final = (3, 7)  # bytes per write under byte pacing, drawn from a seeded PRNG
BYTE_HEAD_LIMIT: Final = 4096  # bytes written in small pieces; the rest goes out as given
CUT_SETTLE: Final = 0.05  # seconds between the last write and a cut
_SECRET_HEADERS: Final = {"authorization", "x-api-key", "x-goog-api-key", "api-key"}


@dataclass
class Hit:
    """One request the server received, and what it answered (the server's log entry)."""

    method: str
    path: str  # without the query
    protocol: str | None  # the wire protocol of the path, where the strategy asks
    headers: dict[str, str]  # lower-case names, secrets scrubbed
    body: bytes
    arrived: float
    status: int = 0
    sent: list[float] = field(default_factory=list)  # monotonic time of each chunk written
    sent_ends: list[int] = field(default_factory=list)  # body bytes written by then, per chunk
    # Where each event of the reply's body ends (byte offsets), where the strategy knows
    # its events: with ``sent`` and ``sent_ends`` it tells how many events had gone out
    # at any moment (the held head of a gateway, in events).
    event_ends: list[int] = field(default_factory=list)
    finished: float | None = None
    # When the reply's last write began: no client can have read the whole reply before
    # it, while ``finished`` may come long after the client read it (the server's thread
    # waiting for the CPU). A wait the client owes after a reply is measured from here.
    last_write: float | None = None
    note: str = ""  # why the strategy answered so, where it is not the obvious reply
    # When each chunk's write began: the peer cannot have the chunk before it, while
    # ``sent`` (taken after the write) may come after the peer has read and passed it on
    # (the server's thread waiting for the CPU on a loaded machine).
    began: list[float] = field(default_factory=list)
    source: str | None = None  # the recording the reply came from, where there is one
    target: str = ""  # the request target as sent: path and query


@dataclass(frozen=True)
class Chunked:
    """A streamed reply: ``chunks`` one HTTP/1.1 chunk each, ``delay`` seconds apart."""

    status: int
    headers: Sequence[tuple[str, str]]
    chunks: Sequence[bytes]
    reason: str | None = None
    delay: float = 0.0  # seconds before every write after the first
    cut: CutMode = "none"
    pacing: Pacing = "chunks"
    # Seconds between the last write and a cut. A FIN (``close``) loses nothing the peer
    # has not read, so a strategy that cuts hundreds of times may pass 0 there.
    settle: float = CUT_SETTLE

    def writes(self) -> Iterator[bytes]:
        """The body as the writes it goes out in (one HTTP chunk each).

        ``chunks`` as given; under byte pacing the first :data:`BYTE_HEAD_LIMIT` bytes in
        pieces of :data:`BYTE_PIECES` bytes (the same pieces for the same body on every
        run), the rest of each chunk after them in one write.
        """
        chunks = [c for c in self.chunks if c]
        if self.pacing == "chunks":
            yield from chunks
            return
        rng = random.Random(0)
        budget = BYTE_HEAD_LIMIT
        for chunk in chunks:
            at = 0
            while at < len(chunk) and budget > 0:
                n = min(rng.randint(*BYTE_PIECES), len(chunk) - at, budget)
                yield chunk[at : at + n]
                at += n
                budget -= n
            if at < len(chunk):
                yield chunk[at:]


@dataclass(frozen=True)
class Whole:
    """A reply in one piece; ``headers`` are sent as given (a content-length among them)."""

    status: int
    headers: Sequence[tuple[str, str]]
    body: bytes


Answer = Chunked | Whole


def json_error(status: int, kind: str, message: str, *extra: tuple[str, str]) -> Whole:
    """An error body shaped as the providers send theirs, so a client reports it as one."""
    data = json.dumps({"error": {"type": kind, "message": message}}).encode()
    headers = [("content-type", "application/json"), ("content-length", str(len(data))), *extra]
    return Whole(status, headers, data)


class Replies(Protocol):
    """A way of choosing the reply to each request: all that one server differs in.

    ``respond`` runs on the request's own thread, once the hit is logged; it may fill in
    the hit's ``protocol``, ``note`` and ``source``. ``methods`` are the HTTP methods it
    answers (others get the standard 501). An endpoint of its own (one that reports the
    server's log, say) is a strategy that answers its path and hands every other request
    to the strategy it wraps.
    """

    methods: ClassVar[tuple[str, ...]]

    def respond(self, hit: Hit) -> Answer: ...


class _QuietServer(ThreadingHTTPServer):
    """A client that resets its kept-alive connection (an SDK closing its pool) is not an
    error of the server's: the stdlib would print its traceback to stderr.

    It stops without polling: ``serve_forever`` looks for a shutdown every poll interval,
    and a check that starts and stops a server for every run (the WebSocket adapter's ~1,000
    runs in the main job) waited half that interval on each stop, 45 ms on average at
    50 ms. Here the accept loop blocks, and :meth:`stop` wakes it with a connection of its
    own, which :meth:`verify_request` refuses."""

    stopping = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def verify_request(self, request: Any, client_address: Any) -> bool:
        return not self.stopping

    def serve(self) -> None:
        while not self.stopping:
            try:
                self.handle_request()  # blocks until a connection arrives (timeout None)
            except (OSError, ValueError):
                if self.stopping:
                    return  # the socket closed under a stop whose wake-up did not connect
                raise

    def stop(self, thread: threading.Thread) -> None:
        self.stopping = True
        with (
            contextlib.suppress(OSError),
            socket.create_connection((HOST, self.server_address[1]), timeout=1.0),
        ):
            pass
        thread.join(timeout=1.0)
        self.server_close()


class LoopbackServer:
    """``with LoopbackServer(replies) as server: server.url ... server.log``."""

    def __init__(self, replies: Replies, *, port: int = 0) -> None:
        self.replies = replies
        self.port = port
        self.log: list[Hit] = []
        self._lock = threading.Lock()
        self._httpd: _QuietServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        answered = {f"do_{m}": _Handler.handle_any for m in self.replies.methods}
        handler = type("Handler", (_Handler,), {"loopback": self, **answered})
        self._httpd = _QuietServer((HOST, self.port), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve, name=f"stream-harness loopback {self.port}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None and self._thread is not None:
            self._httpd.stop(self._thread)
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def record(self, hit: Hit) -> None:
        with self._lock:
            self.log.append(hit)

    def forget(self) -> None:
        """Start a new log (the hits so far stay with whoever holds them)."""
        with self._lock:
            self.log = []


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    loopback: LoopbackServer  # set on the per-server subclass

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the server's log is LoopbackServer.log, not stderr noise

    def handle_any(self) -> None:
        arrived = time.monotonic()
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {
            k.lower(): ("<scrubbed>" if k.lower() in _SECRET_HEADERS else v)
            for k, v in self.headers.items()
        }
        hit = Hit(
            self.command, urlsplit(self.path).path, None, headers, body, arrived, target=self.path
        )
        self.loopback.record(hit)
        if is_upgrade(headers):
            # A WebSocket handshake: a strategy that holds sessions plays one
            # (harness/stream_harness/server/websocket.py); the others answer it as any request.
            sessions = getattr(self.loopback.replies, "websocket_turns", None)
            turns = sessions(hit) if sessions is not None else None
            if turns is not None:
                self._websocket(hit, turns)
                hit.finished = time.monotonic()
                return
        answer = self.loopback.replies.respond(hit)
        hit.status = answer.status
        if isinstance(answer, Whole):
            self._whole(answer, hit)
        else:
            self._chunked(answer, hit)
        hit.finished = time.monotonic()

    def _websocket(self, hit: Hit, turns: Sequence[bytes]) -> None:
        hit.status = 101
        self.send_response(101, "Switching Protocols")
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept(hit.headers["sec-websocket-key"]))
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        with contextlib.suppress(OSError, socket.timeout):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        hit.note = "websocket session"
        # A strategy that checks the client's side of each turn sees every message that
        # opens one (harness/stream_harness/server/ws_session.py).
        on_turn = getattr(self.loopback.replies, "websocket_message", None)
        session = play_session(self.connection, turns, on_turn=on_turn)
        hit.note = f"websocket session: {session.turns_played} turn(s), closed by {session.closed_by or 'nobody'}"

    def _head(
        self, status: int, headers: Sequence[tuple[str, str]], reason: str | None = None
    ) -> None:
        self.send_response(status, reason)
        for name, value in headers:
            self.send_header(name, value)

    def _whole(self, answer: Whole, hit: Hit) -> None:
        self._head(answer.status, answer.headers)
        hit.last_write = time.monotonic()
        self.end_headers()
        self.wfile.write(answer.body)

    def _chunked(self, answer: Chunked, hit: Hit) -> None:
        self._head(answer.status, answer.headers, answer.reason)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            writes = list(answer.writes())
            written = 0
            for i, chunk in enumerate(writes):
                if i and answer.delay:
                    time.sleep(answer.delay)
                hit.last_write = time.monotonic()
                hit.began.append(hit.last_write)
                if answer.cut == "inside-chunk" and i == len(writes) - 1:
                    # The size of the whole chunk announced, half of it written.
                    part = chunk[: max(1, len(chunk) // 2)]
                    self.wfile.write(b"%x\r\n%s" % (len(chunk), part))
                else:
                    part = chunk
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
                written += len(part)
                hit.sent.append(time.monotonic())
                hit.sent_ends.append(written)
            if answer.cut in TRANSPORT_CUTS:
                time.sleep(answer.settle)
                hit.last_write = time.monotonic()
                self._cut(answer.cut)
            else:
                hit.last_write = time.monotonic()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away mid-stream: its choice

    def _cut(self, how: CutMode) -> None:
        """Drop the connection inside the chunked body: a FIN, or an RST for ``reset``."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            if how == "reset":
                # Linger on, timeout 0: close() discards the send queue and sends an RST.
                # The reader holds a reference to the socket, so it is closed first, or
                # close() would leave the connection open until the handler returns.
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.rfile.close()
                self.connection.close()
            else:
                self.connection.shutdown(socket.SHUT_RDWR)
