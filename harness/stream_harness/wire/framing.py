"""The framings a protocol can be registered with: how its bytes become frames.

A protocol's registration (harness/stream_harness/providers/registry.py) names one of these, and the normalizer
is handed a fresh decoder made by it: the translator reads frames and never picks or
owns a decoder, so the same translator can be registered again over another framing
(Anthropic events inside AWS event-stream frames, say) without a line changed in it.

``units`` says how the fuzzer (harness/stream_harness/conformance/mutations.py) cuts a body of this framing into
the units it drops, duplicates and reorders.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from stream_harness.wire._types import FramingError, JSONLine
from stream_harness.wire.eventstream import EventStreamDecoder
from stream_harness.wire.jsonarray import JSONArrayDecoder
from stream_harness.wire.jsonlines import JSONLinesDecoder
from stream_harness.wire.payloadpart import PayloadPartDecoder
from stream_harness.wire.sse import SSEDecoder, SSEEvent
from stream_harness.wire.websocket import WebSocketLogDecoder

Units = Literal["sse", "lines", "eventstream"]


class FrameDecoder(Protocol):
    """``feed`` / ``close`` over bytes, frames (or FramingErrors) out; never raises."""

    def feed(self, chunk: bytes) -> Sequence[Any]: ...

    def close(self) -> Sequence[Any]: ...


@dataclass(frozen=True, slots=True)
class Framing:
    """A named way of cutting a body into frames."""

    name: str
    decoder: Callable[[], FrameDecoder]
    units: Callable[[bytes], Units]
    description: str


_BOM = b"\xef\xbb\xbf"
_WHITESPACE = b" \t\r\n"


class SSEOrJSONArrayDecoder:
    """SSE, or a streamed JSON array: told from the body's first significant byte.

    Gemini's ``streamGenerateContent`` answers in SSE with ``alt=sse`` and as one JSON
    array without it; a recorded or imported body may have lost the URL that said which,
    so the body decides (``[`` or ``{``: the array; anything else: SSE). Bytes are held
    until that byte (past a BOM and whitespace) has arrived.
    """

    def __init__(self) -> None:
        self._head = bytearray()
        self._decoder: SSEDecoder | JSONArrayDecoder | None = None
        self.framing: Literal["sse", "jsonarray"] | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent | JSONLine | FramingError]:
        if self._decoder is None:
            self._head += chunk
            if not self._pick(final=False):
                return []
            data, self._head = bytes(self._head), bytearray()
            assert self._decoder is not None
            return list(self._decoder.feed(data))
        return list(self._decoder.feed(chunk))

    def close(self) -> list[SSEEvent | JSONLine | FramingError]:
        out: list[SSEEvent | JSONLine | FramingError] = []
        if self._decoder is None:
            self._pick(final=True)
            data, self._head = bytes(self._head), bytearray()
            assert self._decoder is not None
            out.extend(self._decoder.feed(data))
        out.extend(self._decoder.close())
        return out

    def _pick(self, *, final: bool) -> bool:
        """Choose the decoder from the first significant byte; False while undecided."""
        head = bytes(self._head)
        start = 0
        if head.startswith(_BOM):
            start = len(_BOM)
        elif _BOM.startswith(head) and head and not final:
            return False  # maybe the start of a BOM
        significant = head[start:].lstrip(_WHITESPACE)
        if not significant and not final:
            return False
        if significant[:1] in (b"[", b"{"):
            self.framing, self._decoder = "jsonarray", JSONArrayDecoder()
        else:
            self.framing, self._decoder = "sse", SSEDecoder()
        return True


def _array_or_sse_units(body: bytes) -> Units:
    # The JSON-array form goes by lines (one element a line, as Gemini writes it).
    return "lines" if body.lstrip()[:1] in (b"[", b"{") else "sse"


SSE = Framing("sse", SSEDecoder, lambda _body: "sse", "server-sent events")
EVENTSTREAM = Framing(
    "eventstream", EventStreamDecoder, lambda _body: "eventstream", "AWS event-stream frames"
)
# Bedrock InvokeModelWithResponseStream: the same frames, each ``chunk`` unwrapped to the
# model's JSON (harness/stream_harness/wire/payloadpart.py); the fuzzer cuts the body by frames.
EVENTSTREAM_CHUNKS = Framing(
    "eventstream-chunks",
    PayloadPartDecoder,
    lambda _body: "eventstream",
    "AWS event-stream frames whose chunk events carry base64 JSON",
)
JSON_LINES = Framing("jsonlines", JSONLinesDecoder, lambda _body: "lines", "JSON lines (NDJSON)")
JSON_ARRAY = Framing(
    "jsonarray", JSONArrayDecoder, lambda _body: "lines", "a streamed top-level JSON array"
)
SSE_OR_JSON_ARRAY = Framing(
    "sse-or-jsonarray",
    SSEOrJSONArrayDecoder,
    _array_or_sse_units,
    "server-sent events, or a streamed JSON array (told from the first byte)",
)
# The Responses API's WebSocket mode: a recorded turn is a log of WebSocket frames, one
# JSON object a line (harness/stream_harness/wire/websocket.py); the fuzzer drops, repeats and
# reorders whole frames.
WEBSOCKET_JSON = Framing(
    "websocket-json",
    WebSocketLogDecoder,
    lambda _body: "lines",
    "WebSocket messages, one JSON object each (a recorded frame log)",
)

__all__ = [
    "EVENTSTREAM",
    "EVENTSTREAM_CHUNKS",
    "JSON_ARRAY",
    "JSON_LINES",
    "SSE",
    "SSE_OR_JSON_ARRAY",
    "WEBSOCKET_JSON",
    "FrameDecoder",
    "Framing",
    "SSEOrJSONArrayDecoder",
    "Units",
]
