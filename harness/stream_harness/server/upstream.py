"""The upstream a gateway under test calls: recorded responses on 127.0.0.1, by protocol.

``stream-harness serve`` (harness/stream_harness/server/serve.py) matches a request the way vcrpy does, by
method, path and query. A gateway cannot be matched so: it rewrites the request (model
alias, its own ``max_tokens``, auth) and may call another endpoint than its client did
(LiteLLM answers a ``/v1/messages`` client from an OpenAI model through ``/v1/responses``).
So this server answers whatever the test has put in place (:meth:`ProxyUpstream.answer`)
when the request's path is of the same wire protocol (the registrations' URL rules decide),
and a 599 naming both protocols otherwise, which the adapter reports as a crashed run:
"the gateway called X, the cassette has Y".

The reply goes out through the one loopback server (:mod:`stream_harness.server.loopback`),
in the chunks it was given or in small byte-level pieces (``pacing``), with a pause
between them, and ends as ``cut`` says; the server logs each request with the time of its
arrival and of every chunk sent, and this strategy adds where each event of the body ends,
for the streaming check. This module is the choosing of the reply (:class:`ProtocolReplies`).

Gemini's two framings follow the request: ``alt=sse`` gets SSE, anything else the JSON
array, whichever the cassette recorded (LiteLLM asks for SSE, Portkey for the array).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final
from urllib.parse import parse_qsl, urlsplit

from stream_harness.providers.registry import registered
from stream_harness.recordings.chunking import SSE_EVENT_END, cut_after
from stream_harness.server.loopback import (
    HOST,
    Answer,
    Chunked,
    CutMode,
    Hit,
    LoopbackServer,
    Pacing,
    json_error,
)
from stream_harness.wire._types import JSONLine
from stream_harness.wire.framing import SSEOrJSONArrayDecoder
from stream_harness.wire.sse import SSEEvent

MISMATCH_STATUS: Final = 599
GOOGLE: Final = "google-generative-ai"


def protocol_of_path(path: str) -> str | None:
    """The wire protocol whose URL rules match a request path, or None."""
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
        sep = SSE_EVENT_END if SSE_EVENT_END.search(body) else re.compile(rb"\n")
    return [f for f in cut_after(body, sep) if f]


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
    delay: float = 0.0  # seconds before every write after the first
    cut: CutMode = "none"
    pacing: Pacing = "chunks"  # "bytes": written 3 to 7 bytes at a time (server.loopback)


class ProtocolReplies:
    """The gateway strategy: whatever reply is in place, to a request of its protocol."""

    methods: ClassVar[tuple[str, ...]] = ("GET", "POST")

    def __init__(self) -> None:
        self.reply: Reply | None = None

    def respond(self, hit: Hit) -> Answer:
        parts = urlsplit(hit.target)
        protocol = hit.protocol = protocol_of_path(parts.path)
        reply = self.reply
        if protocol is None and hit.method == "GET":
            # A side request (LiteLLM looks a Gemini model up on /v1/models): not the
            # stream, so not a mismatch; answered 404 as a provider without the route would.
            return json_error(404, "stream_harness_unmatched", f"no route {parts.path}")
        if reply is None or protocol != reply.protocol:
            have = reply.protocol if reply else "nothing"
            hit.note = f"the gateway called {parts.path} ({protocol or 'no known protocol'}), the cassette has {have}"
            return json_error(MISMATCH_STATUS, "stream_harness_unmatched", hit.note)
        chunks = list(reply.chunks)
        if reply.protocol == GOOGLE and reply.status < 400:
            query = dict(parse_qsl(parts.query))
            reframed = gemini_reframed(b"".join(chunks), sse=query.get("alt") == "sse")
            if reframed is not None:
                chunks = event_frames(reframed)
        headers = list(reply.headers)
        if "content-type" not in {k.lower() for k, _ in headers}:
            sse = reply.protocol != GOOGLE or b"".join(chunks).lstrip()[:1] not in (b"[", b"{")
            kind = "text/event-stream" if reply.status < 400 and sse else "application/json"
            headers.append(("content-type", kind))
        if reply.status < 400:
            # Counted on the body as served (after any reframing), for the held-head bound.
            ends, at = [], 0
            for frame in event_frames(b"".join(chunks)):
                at += len(frame)
                ends.append(at)
            hit.event_ends = ends
        return Chunked(
            reply.status, headers, chunks, delay=reply.delay, cut=reply.cut, pacing=reply.pacing
        )


class ProxyUpstream(LoopbackServer):
    """The server; ``with ProxyUpstream() as up: up.answer(Reply(...)); ... up.hits``."""

    def __init__(self) -> None:
        self.by_protocol = ProtocolReplies()
        super().__init__(self.by_protocol)

    @property
    def reply(self) -> Reply | None:
        return self.by_protocol.reply

    @property
    def hits(self) -> list[Hit]:
        return self.log

    def answer(self, reply: Reply) -> None:
        """Put ``reply`` in place for the requests to come, and forget earlier hits."""
        self.by_protocol.reply = reply
        self.forget()
