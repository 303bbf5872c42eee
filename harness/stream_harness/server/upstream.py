"""The upstream a gateway under test calls: recorded responses on 127.0.0.1, by protocol.

``stream-harness serve`` (harness/stream_harness/server/serve.py) matches a request the way vcrpy does, by
method, path and query. A gateway cannot be matched so: it rewrites the request (model
alias, its own ``max_tokens``, auth) and may call another endpoint than its client did
(LiteLLM answers a ``/v1/messages`` client from an OpenAI model through ``/v1/responses``).
So this server answers whatever the test has put in place (:meth:`ProxyUpstream.answer`)
when the request's path is of the same wire protocol (the registrations' URL rules decide),
and a 599 naming both protocols otherwise, which the adapter reports as a crashed run:
"the gateway called X, the cassette has Y".

The reply goes out in the chunks it was given, one HTTP/1.1 chunk each, with Nagle off
and a pause between them; ``cut`` ends it without the chunked terminator (a transport
error for the gateway: ``close``) or with it (a clean end of a body that stops early:
``clean``). Each request is logged with the time of its arrival and of every chunk sent,
in ``time.monotonic()`` (shared with the client on Linux), for the streaming check.

Gemini's two framings follow the request: ``alt=sse`` gets SSE, anything else the JSON
array, whichever the cassette recorded (LiteLLM asks for SSE, Portkey for the array).
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final, Literal
from urllib.parse import parse_qsl, urlsplit

from stream_harness.wire._types import JSONLine
from stream_harness.wire.framing import SSEOrJSONArrayDecoder
from stream_harness.wire.sse import SSEEvent

HOST: Final = "127.0.0.1"
MISMATCH_STATUS: Final = 599
GOOGLE: Final = "google-generative-ai"
CutMode = Literal["none", "close", "clean"]
_SECRET_HEADERS: Final = {"authorization", "x-api-key", "x-goog-api-key", "api-key"}
_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def protocol_of_path(path: str) -> str | None:
    """The wire protocol whose URL rules match a request path, or None."""
    from stream_harness.providers.registry import registered

    url = f"http://{HOST}{path}"
    for p in registered():
        if p.detect.by_url(url):
            return p.id
    return None


def event_frames(body: bytes) -> list[bytes]:
    """``body`` cut after every SSE event (blank line) or, for other framings, every line.

    The realistic network shape (one event per read) and the unit the pacing counts in.
    """
    if body.lstrip()[:1] == b"[":
        sep = re.compile(rb",\r\n" if b",\r\n" in body else rb"\n")  # Gemini's array: by element
    else:
        sep = _EVENT_END if _EVENT_END.search(body) else re.compile(rb"\n")
    out, start = [], 0
    for m in sep.finditer(body):
        out.append(body[start : m.end()])
        start = m.end()
    if start < len(body):
        out.append(body[start:])
    return [f for f in out if f]


def gemini_values(body: bytes) -> list[Any] | None:
    """The JSON values of a Gemini body in either framing; None when it does not parse."""
    decoder = SSEOrJSONArrayDecoder()
    frames = [*decoder.feed(body), *decoder.close()]
    values: list[Any] = []
    for f in frames:
        if isinstance(f, SSEEvent):
            try:
                values.append(json.loads(f.data))
            except ValueError:
                return None
        elif isinstance(f, JSONLine):
            values.append(f.value)
        else:
            return None
    return values


def gemini_reframed(body: bytes, *, sse: bool) -> bytes | None:
    """A Gemini body in the framing asked for (None: it is already in it, or is no stream)."""
    is_sse = body.lstrip()[:1] not in (b"[", b"{")
    if is_sse == sse:
        return None
    values = gemini_values(body)
    if values is None:
        return None
    if sse:
        items = [json.dumps(v, ensure_ascii=False).encode() for v in values]
        return b"".join(b"data: " + i + b"\r\n\r\n" for i in items)
    # As Gemini writes it (recorded in the corpus): each element pretty-printed, "\n,\r\n"
    # between them, "\n]" at the end. Clients split on those bytes (Portkey on "\r\n").
    items = [json.dumps(v, ensure_ascii=False, indent=2).encode() for v in values]
    return b"[" + b"\n,\r\n".join(items) + b"\n]"


@dataclass
class Reply:
    """What the next matching request gets."""

    protocol: str
    status: int = 200
    headers: Sequence[tuple[str, str]] = ()
    chunks: Sequence[bytes] = ()
    delay: float = 0.0  # seconds before every chunk after the first
    cut: CutMode = "none"


@dataclass
class Hit:
    """One request the gateway sent upstream, and what it got."""

    method: str
    path: str
    protocol: str | None
    headers: dict[str, str]
    body: bytes
    arrived: float
    status: int = 0
    sent: list[float] = field(default_factory=list)  # monotonic time of each chunk written
    finished: float | None = None
    note: str = ""


class ProxyUpstream:
    """The server; ``with ProxyUpstream() as up: up.answer(Reply(...)); ... up.hits``."""

    def __init__(self) -> None:
        self.reply: Reply | None = None
        self.hits: list[Hit] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self.port = 0

    def start(self) -> ProxyUpstream:
        handler = type("Handler", (_Handler,), {"upstream": self})
        self._httpd = ThreadingHTTPServer((HOST, 0), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ProxyUpstream:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def answer(self, reply: Reply) -> None:
        """Put ``reply`` in place for the requests to come, and forget earlier hits."""
        with self._lock:
            self.reply = reply
            self.hits = []

    def record(self, hit: Hit) -> None:
        with self._lock:
            self.hits.append(hit)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    upstream: ProxyUpstream

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self) -> None:
        arrived = time.monotonic()
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        protocol = protocol_of_path(parts.path)
        headers = {
            k.lower(): ("<scrubbed>" if k.lower() in _SECRET_HEADERS else v)
            for k, v in self.headers.items()
        }
        hit = Hit(self.command, parts.path, protocol, headers, body, arrived)
        self.upstream.record(hit)
        reply = self.upstream.reply
        if protocol is None and self.command == "GET":
            # A side request (LiteLLM looks a Gemini model up on /v1/models): not the
            # stream, so not a mismatch; answered 404 as a provider without the route would.
            self._plain(hit, 404, f"no route {parts.path}")
            return
        if reply is None or protocol != reply.protocol:
            have = reply.protocol if reply else "nothing"
            hit.note = f"the gateway called {parts.path} ({protocol or 'no known protocol'}), the cassette has {have}"
            self._plain(hit, MISMATCH_STATUS, hit.note)
            return
        chunks = list(reply.chunks)
        if reply.protocol == GOOGLE and reply.status < 400:
            query = dict(parse_qsl(parts.query))
            reframed = gemini_reframed(b"".join(chunks), sse=query.get("alt") == "sse")
            if reframed is not None:
                chunks = event_frames(reframed)
        hit.status = reply.status
        self.send_response(reply.status)
        names = {k.lower() for k, _ in reply.headers}
        for k, v in reply.headers:
            self.send_header(k, v)
        if "content-type" not in names:
            sse = reply.protocol != GOOGLE or b"".join(chunks).lstrip()[:1] not in (b"[", b"{")
            kind = "text/event-stream" if reply.status < 400 and sse else "application/json"
            self.send_header("content-type", kind)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            for i, chunk in enumerate(c for c in chunks if c):
                if i and reply.delay:
                    time.sleep(reply.delay)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
                hit.sent.append(time.monotonic())
            if reply.cut == "close":
                # Inside the chunked body: the gateway sees the connection drop mid-message.
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
            else:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        hit.finished = time.monotonic()

    def _plain(self, hit: Hit, status: int, message: str) -> None:
        hit.status = status
        data = json.dumps({"error": {"type": "stream_harness_unmatched", "message": message}}).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        hit.finished = time.monotonic()

    do_GET = do_POST = _handle
