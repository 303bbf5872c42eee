"""Serving ``GET /v1/responses/{id}?stream=true&starting_after=N`` from recorded streams.

Two users: the replay server (``stream-harness serve``), which answers a resume request
from whichever recorded Responses stream carries that response id, and the resumption
check, whose :class:`CutThenResume` drops the first response after its k-th event and then
serves the resumed rest. The events and cursors are :mod:`stream_harness.recordings.resume`'s;
this module only turns them into HTTP answers.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Final
from urllib.parse import parse_qs, urlsplit

from stream_harness.recordings.resume import (
    UNKNOWN_CURSOR,
    StreamEvent,
    UnknownCursor,
    cut_after,
    response_id,
    resumed_body,
)
from stream_harness.server.loopback import Answer, Chunked, Hit, Whole

# The retrieve endpoint: /v1/responses/{id} (and /responses/{id} behind a gateway prefix).
_RETRIEVE: Final = re.compile(r"/responses/(?P<id>[^/?#]+)$")
SSE_HEADERS: Final = (("content-type", "text/event-stream; charset=utf-8"),)


@dataclass(frozen=True, slots=True)
class ResumeRequest:
    """A request to stream a response again: its id and cursor (None: from the start)."""

    response_id: str
    starting_after: int | None


def parse_resume(method: str, target: str) -> ResumeRequest | ValueError | None:
    """The resume request in ``target``, a ValueError for a malformed cursor, None when
    the request is not a resume (not a GET of a response with ``stream=true``)."""
    if method.upper() != "GET":
        return None
    parts = urlsplit(target)
    found = _RETRIEVE.search(parts.path)
    query = parse_qs(parts.query)
    if found is None or query.get("stream", [""])[-1].lower() != "true":
        return None
    raw = query.get("starting_after")
    if raw is None:
        return ResumeRequest(found["id"], None)
    try:
        return ResumeRequest(found["id"], int(raw[-1]))
    except ValueError:
        return ValueError(f"starting_after must be an integer, got {raw[-1]!r}")


def openai_error(status: int, code: str, message: str, param: str | None = None) -> Whole:
    """An error body in the shape the Responses API sends, so an SDK raises it as one."""
    data = json.dumps(
        {
            "error": {
                "type": "invalid_request_error",
                "code": code,
                "message": message,
                "param": param,
            }
        }
    ).encode()
    return Whole(
        status, [("content-type", "application/json"), ("content-length", str(len(data)))], data
    )


def resume_answer(events: Sequence[StreamEvent], request: ResumeRequest) -> Answer:
    """The answer to a resume request for the stream ``events``."""
    cursor = -1 if request.starting_after is None else request.starting_after
    try:
        body = resumed_body(list(events), cursor)
    except UnknownCursor as exc:
        return openai_error(
            404, UNKNOWN_CURSOR, f"{exc} (response {request.response_id})", "starting_after"
        )
    return Chunked(200, SSE_HEADERS, [body] if body else [])


def answer_resume(streams: Sequence[Sequence[StreamEvent]], hit: Hit) -> Answer | None:
    """A resume request answered from the first of ``streams`` with its response id; None
    when the request is no resume request."""
    request = parse_resume(hit.method, hit.target)
    if request is None:
        return None
    if isinstance(request, ValueError):
        return openai_error(400, "invalid_value", str(request), "starting_after")
    for events in streams:
        if response_id(list(events)) == request.response_id:
            hit.note = f"resumed after {request.starting_after}"
            return resume_answer(events, request)
    return openai_error(
        404, "not_found", f"No response with id '{request.response_id}' to stream.", None
    )


@dataclass
class CutThenResume:
    """The resumption check's server: the first request (a POST) gets the stream cut after
    ``k`` events (half of the next one too with ``partial``), the connection dropped (``k``
    at or past the last event: the whole stream, uncut); a resume request gets the rest. ``cursors`` logs the ``starting_after`` each resume asked."""

    events: Sequence[StreamEvent]
    k: int = 0
    partial: bool = False
    # The server no longer has the stream's events (older than the resume window): every
    # resume request is refused as an unknown cursor.
    expired: bool = False
    cursors: list[int | None] = field(default_factory=list)
    posts: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    methods: ClassVar[tuple[str, ...]] = ("GET", "POST")

    def reset(self, k: int, *, partial: bool = False, expired: bool = False) -> None:
        with self._lock:
            self.k, self.partial, self.expired, self.cursors, self.posts = (
                k,
                partial,
                expired,
                [],
                0,
            )

    def respond(self, hit: Hit) -> Answer:
        request = parse_resume(hit.method, hit.target)
        if isinstance(request, ResumeRequest):
            with self._lock:
                self.cursors.append(request.starting_after)
            if self.expired:
                return openai_error(
                    404,
                    UNKNOWN_CURSOR,
                    "This response can no longer be streamed because it is more than 5 minutes old.",
                    "starting_after",
                )
            return resume_answer(self.events, request)
        if isinstance(request, ValueError):
            return openai_error(400, "invalid_value", str(request), "starting_after")
        with self._lock:
            self.posts += 1
            first = self.posts == 1
        if not first:
            # A client that starts over instead of resuming gets the whole stream again:
            # the check then sees the events repeated, which is the failure to report.
            return Chunked(200, SSE_HEADERS, [b"".join(e.raw for e in self.events)])
        if self.k >= len(self.events):  # no cut: the run every cut run is compared with
            return Chunked(200, SSE_HEADERS, [b"".join(e.raw for e in self.events)])
        head = cut_after(list(self.events), self.k, partial=self.partial)
        return Chunked(200, SSE_HEADERS, [head] if head else [], cut="close", settle=0.0)
