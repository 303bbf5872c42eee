"""``stream-harness serve``: recorded responses on 127.0.0.1, for clients in any language.

A client that cannot take a custom transport (or is not Python) is tested black-box:
point its base URL at this server and it answers each request with the recorded status,
headers and body, in the chunks and at the pace asked for. Requests are matched the way
vcrpy matches them (its default ``match_on`` minus scheme, host and port, which are this
server's own): method, path and query, with the query compared as a sorted list of
pairs; ``body`` can be added. As in vcrpy, each recorded interaction is played once, in
recorded order among those that match, unless playback repeats are allowed.

The bodies go out in the chunks of the ``--split`` asked for, ``--delay`` apart, through
the one loopback server (:mod:`stream_harness.server.loopback`); this module is only the
choosing of the reply (:class:`RecordedReplies`) and the command line.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final
from urllib.parse import parse_qsl, urlsplit

from stream_harness.recordings.cassette import CassetteError, Interaction, load_cassette
from stream_harness.recordings.chunking import SplitSpecError, apply_split
from stream_harness.recordings.resume import StreamEvent, is_resumable, stream_events
from stream_harness.recordings.transport import response_headers
from stream_harness.server.loopback import Answer, Chunked, Hit, LoopbackServer, json_error
from stream_harness.server.resume import answer_resume

MATCHERS: Final = ("method", "path", "query", "body")
DEFAULT_MATCH_ON: Final = ("method", "path", "query")


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
class RecordedReplies:
    """The replay strategy: a request gets the first unplayed recording that matches it."""

    recorded: Sequence[Recorded]
    split: str = "whole"
    delay: float = 0.0
    match_on: Sequence[str] = DEFAULT_MATCH_ON
    allow_playback_repeats: bool = False
    methods: ClassVar[tuple[str, ...]] = ("GET", "POST", "PUT", "PATCH", "DELETE")

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
        self._streams: list[list[StreamEvent]] | None = None

    def resumable_streams(self) -> list[list[StreamEvent]]:
        """The recorded Responses streams a resume request can be answered from (those
        with a response id and sequence numbers), read on the first resume request."""
        with self._lock:
            if self._streams is None:
                found = (
                    stream_events(r.interaction.response.body)
                    for r in self.recorded
                    if r.interaction.response.status < 400
                )
                self._streams = [events for events in found if is_resumable(events)]
            return self._streams

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

    def websocket_turns(self, hit: Hit) -> list[bytes] | None:
        """A WebSocket handshake matching a recorded connection: the frame logs of its turns.

        A WebSocket cassette is one connection (specs/protocols/openai-responses-websocket.md):
        the handshake matches its first unplayed turn as any request does, and that turn and
        the ones after it in the same cassette are the session, all played on this one
        connection. None when no recorded WebSocket turn matches.
        """
        found = self.match(hit.method, hit.target, hit.body)
        if found is None or found.interaction.response.status != 101:
            return None
        hit.source = found.source
        with self._lock:
            session = []
            for i, r in enumerate(self.recorded):
                if r.source == found.source and r.interaction.index >= found.interaction.index:
                    self._played.add(i)
                    session.append(r.interaction.response.body)
        return session

    def chunks(self, body: bytes) -> list[bytes]:
        return [c for c in apply_split(self.split, body) if c]

    def respond(self, hit: Hit) -> Answer:
        found = self.match(hit.method, hit.target, hit.body)
        if found is None:
            # GET /v1/responses/{id}?stream=true&starting_after=N: a background stream resumed
            # (specs/protocols/openai-responses-websocket.md), served from the recording.
            resumed = answer_resume(self.resumable_streams(), hit)
            if resumed is not None:
                return resumed
            message = (
                f"stream-harness serve: no recorded interaction matches {hit.method} {hit.target}"
            )
            return json_error(404, "not_found", message, ("x-stream-harness", "unmatched"))
        hit.source = found.source
        response = found.interaction.response
        headers = response_headers(response)
        if response.status < 400 and not any(k.lower() == "content-type" for k, _ in headers):
            headers.append(("content-type", "text/event-stream"))
        chunks = self.chunks(response.body)
        return Chunked(response.status, headers, chunks, response.reason or None, self.delay)


class ReplayServer(LoopbackServer):
    """The replay server; ``with ReplayServer(recorded) as server: server.url``."""

    def __init__(
        self,
        recorded: Sequence[Recorded],
        split: str = "whole",
        delay: float = 0.0,
        match_on: Sequence[str] = DEFAULT_MATCH_ON,
        allow_playback_repeats: bool = False,
        port: int = 0,
    ) -> None:
        self.matcher = RecordedReplies(recorded, split, delay, match_on, allow_playback_repeats)
        super().__init__(self.matcher, port=port)

    @property
    def recorded(self) -> Sequence[Recorded]:
        return self.matcher.recorded


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
    try:
        # Inside the try: a Ctrl-C right after the line (what a script waiting for it sends)
        # is the documented stop too.
        print(f"serving {len(recorded)} interactions on {server.url} (Ctrl-C stops)", flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt as exc:
        if type(exc) is not KeyboardInterrupt:
            raise  # SIGTERM, which the CLI raises as a KeyboardInterrupt subclass: exit 143
    finally:
        server.stop()
    return 0
