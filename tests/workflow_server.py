"""A local HTTP server on 127.0.0.1 that streams a known body with chunked transfer encoding.

``record`` is tested against it instead of a provider: the bytes are known, so the test can
check that the cassette replays them byte for byte. It can also gzip the body, echo
planted secrets in response headers, and die in the middle of the body (no terminating
chunk), which is what a dropped connection looks like to httpx.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class StreamSpec:
    chunks: Sequence[bytes]
    status: int = 200
    headers: Sequence[tuple[str, str]] = (("Content-Type", "text/event-stream; charset=utf-8"),)
    gzip: bool = False
    die_after: int | None = None
    """Close the connection after this many chunks, without the terminating chunk."""
    received: list[Received] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    spec: StreamSpec  # set on the per-server subclass
    timeout = 10  # seconds per socket operation: a test never hangs on the server

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        self.spec.received.append(
            Received("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        )
        chunks = list(self.spec.chunks)
        if self.spec.gzip:
            packed = gzip.compress(b"".join(chunks))
            step = max(1, len(packed) // 3)
            chunks = [packed[i : i + step] for i in range(0, len(packed), step)]
        self.send_response(self.spec.status)
        for name, value in self.spec.headers:
            self.send_header(name, value)
        if self.spec.gzip:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for i, chunk in enumerate(chunks):
            if self.spec.die_after is not None and i >= self.spec.die_after:
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        self.close_connection = True


class StreamServer:
    """``with StreamServer(spec) as server:`` then POST to ``server.url + path``."""

    def __init__(self, spec: StreamSpec) -> None:
        handler = type("Handler", (_Handler,), {"spec": spec})
        self.spec = spec
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> StreamServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
