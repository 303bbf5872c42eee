"""Framing decoders: provider byte streams -> framed messages, sans I/O.

Each decoder has ``feed(chunk) -> list[...]`` and ``close() -> list[...]``; any split of
the input gives the same outputs, and problems come back as ``FramingError`` values.
"""

from ._types import FramingError, JSONLine
from .sse import SSEDecoder, SSEEvent

__all__ = [
    "FramingError",
    "JSONLine",
    "SSEDecoder",
    "SSEEvent",
]
