"""Framing decoders: provider byte streams -> framed messages, sans I/O.

Each decoder has ``feed(chunk) -> list[...]`` and ``close() -> list[...]``; any split of
the input gives the same outputs, and problems come back as ``FramingError`` values,
never as exceptions. Module docstrings give each decoder's decisions.
"""

from ._types import FramingError, JSONLine
from .eventstream import EventStreamDecoder, EventStreamMessage, HeaderValue, encode_message
from .jsonarray import JSONArrayDecoder
from .jsonlines import JSONLinesDecoder
from .sse import SSEDecoder, SSEEvent

__all__ = [
    "EventStreamDecoder",
    "EventStreamMessage",
    "FramingError",
    "HeaderValue",
    "JSONArrayDecoder",
    "JSONLine",
    "JSONLinesDecoder",
    "SSEDecoder",
    "SSEEvent",
    "encode_message",
]
