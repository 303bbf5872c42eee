"""Bedrock ``InvokeModelWithResponseStream`` bodies: event-stream frames -> model JSON chunks.

The body is AWS event-stream frames (:mod:`stream_harness.wire.eventstream`). Each ``chunk``
event's payload is a ``PayloadPart``, the JSON object ``{"bytes": <base64>, "p": <padding>}``
(AWS API reference, ``API_runtime_PayloadPart``; ``p`` is the random padding every Bedrock
payload carries). The base64 decodes to one JSON object written by the model's own API
(Anthropic Messages events, Nova's Converse-shaped events, Titan / Llama / Cohere / Mistral
chunks): that object is what a translator wants, so this decoder hands it over as a
:class:`~stream_harness.wire.JSONLine` (``raw`` the decoded text), and the translator never sees
base64.

Decisions:

* Exception and error frames (``:message-type`` ``exception`` / ``error``) are passed on
  as the :class:`~stream_harness.wire.EventStreamMessage` they are: their type is in the headers,
  which the translator needs to classify the error.
* Other event types than ``chunk`` are passed over (the ``ResponseStream`` union may grow;
  an SDK skips members it does not know).
* A ``chunk`` whose payload cannot be unwrapped (not JSON, no ``bytes``, bad base64, not
  UTF-8, not JSON inside) becomes a :class:`BadChunk` naming what was wrong, so the stream
  ends in an error that keeps everything before it. Not a ``FramingError``: the frames
  themselves are sound, and the error must not claim a byte offset it cannot know for
  every split of the body.
* Framing errors of the event stream come through unchanged.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Final, TypeAlias

from stream_harness.contract.limits import loads as bounded_loads

from ._types import FramingError, JSONLine
from .eventstream import EventStreamDecoder, EventStreamMessage

_CHUNK: Final = "chunk"


@dataclass(frozen=True, slots=True)
class BadChunk:
    """A ``chunk`` frame whose PayloadPart could not be unwrapped; ``message`` says why."""

    message: str


PayloadPartOutput: TypeAlias = JSONLine | EventStreamMessage | BadChunk | FramingError


def unwrap(payload: bytes) -> JSONLine | BadChunk:
    """The model chunk inside one ``chunk`` frame's PayloadPart payload."""
    try:
        part = bounded_loads(payload)
    except (ValueError, RecursionError) as exc:
        return BadChunk(f"the PayloadPart is not JSON: {exc}")
    if not isinstance(part, dict):
        return BadChunk("the PayloadPart is not a JSON object")
    data = part.get("bytes")
    if not isinstance(data, str):
        return BadChunk("the PayloadPart has no base64 'bytes' string")
    try:
        raw = base64.b64decode(data, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        # UnicodeDecodeError is a ValueError too.
        return BadChunk("'bytes' is not base64 of UTF-8 text")
    try:
        value = bounded_loads(raw)
    except (ValueError, RecursionError) as exc:
        return BadChunk(f"the decoded chunk is not JSON: {exc}: {raw[:80]!r}")
    return JSONLine(value, raw)


class PayloadPartDecoder:
    """Incremental: any chunking of the body gives the same outputs (the event-stream
    decoder's guarantee; unwrapping is per frame)."""

    def __init__(self) -> None:
        self._frames = EventStreamDecoder()

    def feed(self, chunk: bytes) -> list[PayloadPartOutput]:
        return self._convert(self._frames.feed(chunk))

    def close(self) -> list[PayloadPartOutput]:
        return self._convert(self._frames.close())

    @staticmethod
    def _convert(items: list[EventStreamMessage | FramingError]) -> list[PayloadPartOutput]:
        out: list[PayloadPartOutput] = []
        for item in items:
            if isinstance(item, FramingError):
                out.append(item)
            elif item.message_type in ("exception", "error"):
                out.append(item)
            elif item.event_type == _CHUNK:
                out.append(unwrap(item.payload))
        return out


__all__ = ["BadChunk", "PayloadPartDecoder", "PayloadPartOutput", "unwrap"]
