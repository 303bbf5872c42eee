"""``stream-harness serve``: recorded responses on 127.0.0.1, for clients in any language.

A client that cannot take a custom transport (or is not Python) is tested black-box:
point its base URL at this server and it answers each request with the recorded status,
headers and body, in the chunks and at the pace asked for. Requests are matched the way
vcrpy matches them (its default ``match_on`` minus scheme, host and port, which are this
server's own): method, path and query, with the query compared as a sorted list of
pairs; ``body`` can be added. As in vcrpy, each recorded interaction is played once, in
recorded order among those that match, unless playback repeats are allowed.

Each body chunk goes out as one HTTP/1.1 chunk (``Transfer-Encoding: chunked``), written
and flushed on its own with Nagle off; the chunked framing keeps the boundaries visible
to a client that reads it, while a client reading the decoded body through TCP may see
neighbouring chunks merged (what the network does too). The pacing is a delay before
every chunk after the first.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qsl, urlsplit

from stream_harness.recordings.cassette import CassetteError, Interaction, load_cassette
from stream_harness.recordings.chunking import SplitSpecError, apply_split
from stream_harness.recordings.transport import response_headers

MATCHERS: Final = ("method", "path", "query", "body")
DEFAULT_MATCH_ON: Final = ("method", "path", "query")
HOST: Final = "127.0.0.1"


class ServeError(ValueError):
    """A problem with what was asked (no cassettes, a bad split); one line."""


@dataclass(frozen=True, slots=True)
class Recorded:
    """One interaction the server can play, with where it came from."""

    source: str
    interaction: Interaction

    def key(self, match_on: Sequence[str]) -> tuple[object, ...]:
        request = self.interaction.request
        return request_key(request.method, request.uri, request.body, match_on)


def request_key(method: str, uri: str, body: bytes, match_on: Sequence[str]) -> tuple[object, ...]:
    parts = urlsplit(uri)
    values: dict[str, object] = {
        "method": method.upper(),
        "path": parts.path or "/",
        "query": tuple(sorted(parse_qsl(parts.query, keep_blank_values=True))),
        "body": body,
    }
    return tuple(values[m] for m in match_on)


def load_recorded(paths: Sequence[Path]) -> list[Recorded]:
    """Every interaction of the cassettes under ``paths``, in file order."""
    out: list[Recorded] = []
    for root in paths:
        if not root.exists():
            raise ServeError(f"{root}: no such cassette folder or file")
        files = sorted(p for p in root.rglob("*.yaml")) if root.is_dir() else [root]
        for path in files:
            try:
                cassette = load_cassette(path)
            except CassetteError as exc:
                if root.is_dir():
                    continue  # a folder may hold other YAML (scenarios); a named file may not
                raise ServeError(str(exc)) from None
            out.extend(Recorded(str(path), i) for i in cassette.interactions)
    if not out:
        raise ServeError(f"no recorded interactions under {', '.join(map(str, paths))}")
    return out


@dataclass
class Served:
    """What the server did with one request (for tests and the log)."""

    method: str
    path: str
    source: str | None
    status: int


@dataclass
class ReplayServer:
    """The replay server; ``with ReplayServer(...) as server: server.url``."""

    recorded: Sequence[Recorded]
    split: str = "whole"
    delay: float = 0.0
    match_on: Sequence[str] = DEFAULT_MATCH_ON
    allow_playback_repeats: bool = False
    port: int = 0
    log: list[Served] = field(default_factory=list)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.match_on) - set(MATCHERS))
        if unknown:
            raise ServeError(f"unknown matcher(s) {unknown} (known: {', '.join(MATCHERS)})")
        if self.delay < 0:
            raise ServeError(f"the delay must be >= 0, got {self.delay}")
        try:
            apply_split(self.split, b"probe")
        except SplitSpecError as exc:
            raise ServeError(str(exc)) from None
        self._played: set[int] = set()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> ReplayServer:
        handler = type("Handler", (_Handler,), {"replay": self})
        self._httpd = ThreadingHTTPServer((HOST, self.port), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    # -- matching ----------------------------------------------------------------------

    def match(self, method: str, target: str, body: bytes) -> Recorded | None:
        """The first unplayed recorded interaction matching the request (vcrpy's order)."""
        key = request_key(method, target, body, self.match_on)
        with self._lock:
            candidates = [i for i, r in enumerate(self.recorded) if r.key(self.match_on) == key]
            for i in candidates:
                if i not in self._played:
                    self._played.add(i)
                    return self.recorded[i]
            if candidates and self.allow_playback_repeats:
                return self.recorded[candidates[-1]]
        return None

    def chunks(self, body: bytes) -> list[bytes]:
        return [c for c in apply_split(self.split, body) if c]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    replay: ReplayServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the server's log is ReplayServer.log, not stderr noise

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        found = self.replay.match(self.command, self.path, body)
        if found is None:
            self._unmatched()
            return
        response = found.interaction.response
        self.replay.log.append(Served(self.command, self.path, found.source, response.status))
        self.send_response(response.status, response.reason or None)
        headers = response_headers(response)
        if response.status < 400 and not any(k.lower() == "content-type" for k, _ in headers):
            headers.append(("content-type", "text/event-stream"))
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            for i, chunk in enumerate(self.replay.chunks(response.body)):
                if i and self.replay.delay:
                    time.sleep(self.replay.delay)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away mid-stream: its choice

    def _unmatched(self) -> None:
        self.replay.log.append(Served(self.command, self.path, None, 404))
        message = (
            f"stream-harness serve: no recorded interaction matches {self.command} {self.path}"
        )
        data = json.dumps({"error": {"type": "not_found", "message": message}}).encode()
        self.send_response(404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("x-stream-harness", "unmatched")
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle


@contextlib.contextmanager
def replay_server(
    cassettes: Sequence[str | Path],
    *,
    split: str = "whole",
    delay: float = 0.0,
    match_on: Sequence[str] = DEFAULT_MATCH_ON,
    allow_playback_repeats: bool = False,
) -> Iterator[ReplayServer]:
    """A running server over ``cassettes`` (files or folders), stopped on exit."""
    recorded = load_recorded([Path(c) for c in cassettes])
    server = ReplayServer(
        recorded,
        split=split,
        delay=delay,
        match_on=match_on,
        allow_playback_repeats=allow_playback_repeats,
    )
    with server:
        yield server


# ---------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------


def add_serve_parser(sub: Any) -> None:
    p = sub.add_parser(
        "serve", help="answer recorded requests on 127.0.0.1 with their recorded responses"
    )
    p.add_argument("cassettes", nargs="+", help="cassette files or folders")
    p.add_argument("--port", type=int, default=0, help="port (default: a free one, printed)")
    p.add_argument(
        "--split", default="whole", help="body chunks: whole, bytes:N, random:SEED, cuts:A,B,..."
    )
    p.add_argument("--delay", type=float, default=0.0, help="seconds before each later chunk")
    p.add_argument(
        "--match-on",
        default=",".join(DEFAULT_MATCH_ON),
        help=f"request matchers, comma-separated, of {', '.join(MATCHERS)} (default: method,path,query)",
    )
    p.add_argument(
        "--allow-playback-repeats",
        action="store_true",
        help="answer a request again once its interactions are played (vcrpy's option)",
    )
    p.set_defaults(func=serve_command)


def serve_command(args: argparse.Namespace) -> int:
    try:
        recorded = load_recorded([Path(c) for c in args.cassettes])
        server = ReplayServer(
            recorded,
            split=args.split,
            delay=args.delay,
            match_on=[m.strip() for m in args.match_on.split(",") if m.strip()],
            allow_playback_repeats=args.allow_playback_repeats,
            port=args.port,
        )
        server.start()
    except (ServeError, OSError) as exc:
        print(f"stream-harness: {exc}", file=sys.stderr)
        return 2
    print(f"serving {len(recorded)} interactions on {server.url} (Ctrl-C stops)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
