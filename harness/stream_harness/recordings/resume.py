"""Resumable Responses streams, sans I/O: what a server sends for ``starting_after=N``, and
what a client keeps to resume.

A background Responses stream can be streamed again with
``GET /v1/responses/{id}?stream=true&starting_after=N``: the events whose ``sequence_number``
is greater than N (specs/protocols/openai-responses-websocket.md, "Resumable background
streams"). The replay server answers that from a recorded stream (:func:`resumed_body`), and
the resumption check cuts a recorded stream after its k-th event (:func:`cut_after`). Both
work on :func:`stream_events`: the body cut into its SSE events, each with its sequence
number, re-encoded as ``event:``/``data:`` blocks (a resumed stream is a new HTTP response;
comments and ``id:`` lines of the recording are not part of what it resends).

:class:`ResumingReader` is the client side: bytes of the first response and then of the
resumed one go in, whole events come out, and it keeps the cursor (the last
``sequence_number`` of a whole event); the bytes of an event cut by the drop are dropped,
since the server sends that event again.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Final

from stream_harness.wire import FramingError, SSEDecoder, SSEEvent

# What a server says for a cursor it does not have: never a silent restart.
UNKNOWN_CURSOR: Final = "cursor_not_found"


class UnknownCursor(ValueError):
    """``starting_after`` names no event of the stream (nor -1, "from the start")."""


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """One event of a recorded stream, as a resumed stream would send it again."""

    raw: bytes
    sequence_number: int | None
    type: str | None
    response_id: str | None


def encode_event(event: SSEEvent) -> bytes:
    """An SSE event as one ``event:``/``data:`` block (multi-line data kept line by line)."""
    lines = [] if event.event == "message" else [f"event: {event.event}"]
    lines += [f"data: {line}" for line in event.data.split("\n")]
    return ("\n".join(lines) + "\n\n").encode("utf-8")


def _fields(data: str) -> tuple[int | None, str | None, str | None]:
    try:
        value = json.loads(data)
    except ValueError:
        return None, None, None
    if not isinstance(value, dict):
        return None, None, None
    seq = value.get("sequence_number")
    seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else None
    etype = value.get("type") if isinstance(value.get("type"), str) else None
    response = value.get("response")
    rid = response.get("id") if isinstance(response, dict) else None
    return seq, etype, rid if isinstance(rid, str) else None


def stream_events(body: bytes) -> list[StreamEvent]:
    """The SSE events of a recorded body, in order; an undecodable body gives none."""
    decoder = SSEDecoder()
    out: list[StreamEvent] = []
    for item in [*decoder.feed(body), *decoder.close()]:
        if isinstance(item, FramingError):
            return []
        seq, etype, rid = _fields(item.data)
        out.append(StreamEvent(encode_event(item), seq, etype, rid))
    return out


def response_id(events: list[StreamEvent]) -> str | None:
    """The id of the response a stream carries (its first lifecycle event's)."""
    return next((e.response_id for e in events if e.response_id), None)


def is_resumable(events: list[StreamEvent]) -> bool:
    """A stream a cursor can resume: a response id, and sequence numbers that increase."""
    numbers = [e.sequence_number for e in events if e.sequence_number is not None]
    return (
        response_id(events) is not None
        and len(numbers) >= 2
        and all(a < b for a, b in itertools.pairwise(numbers))
    )


def resumed_body(events: list[StreamEvent], starting_after: int) -> bytes:
    """What ``starting_after=N`` streams: every event after the one numbered N.

    -1 means before the first event (the whole stream). An event without a sequence number
    is sent when the numbered event before it is sent (it belongs with what precedes it),
    so resuming after N never resends it. A cursor the stream does not have is
    :class:`UnknownCursor`, never a restart from the beginning.
    """
    if starting_after == -1:
        return b"".join(e.raw for e in events)
    for i, event in enumerate(events):
        if event.sequence_number == starting_after:
            rest = events[i + 1 :]
            # Unnumbered events right after N went out with N.
            while rest and rest[0].sequence_number is None:
                rest = rest[1:]
            return b"".join(e.raw for e in rest)
    raise UnknownCursor(f"no event with sequence_number {starting_after} in this stream")


def cut_after(events: list[StreamEvent], k: int, *, partial: bool = False) -> bytes:
    """The first ``k`` events, and with ``partial`` half of the next one: what a client has
    read when the connection drops there."""
    head = b"".join(e.raw for e in events[:k])
    if partial and k < len(events):
        nxt = events[k].raw
        head += nxt[: max(1, len(nxt) // 2)]
    return head


class ResumingReader:
    """A client's side of resuming: whole events out, the cursor kept, cut events dropped.

    ``feed`` the first response's bytes, then, after :meth:`resume`, the resumed response's;
    each returns the whole events it completes, re-encoded (what a normalizer is fed). The
    cursor is the ``sequence_number`` of the last whole event that had one; an event without
    one does not move it.
    """

    def __init__(self) -> None:
        self._decoder = SSEDecoder()
        self.cursor: int | None = None
        self.unnumbered = 0  # whole events seen without a sequence number

    def feed(self, chunk: bytes) -> list[bytes]:
        return self._take(self._decoder.feed(chunk))

    def resume(self) -> None:
        """The connection dropped: what is half read is gone (the server resends it)."""
        self._decoder = SSEDecoder()

    def close(self) -> list[bytes]:
        return self._take(self._decoder.close())

    def _take(self, items: list[SSEEvent | FramingError]) -> list[bytes]:
        out: list[bytes] = []
        for item in items:
            if isinstance(item, FramingError):
                break
            seq, _, _ = _fields(item.data)
            if seq is None:
                self.unnumbered += 1
            else:
                self.cursor = seq
            out.append(encode_event(item))
        return out
