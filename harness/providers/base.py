"""What every normalizer is: a sans-I/O ``feed`` / ``close`` state machine over bytes.

A normalizer owns a framing decoder (harness/wire/) and an
:class:`~harness.accumulator.Accumulator`; its only job is to translate the protocol's
wire events into accumulator calls. It never raises: framing faults, malformed JSON and
an early EOF all end the stream in an ``error`` event that keeps what was received.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from harness.accumulator import Accumulator
from harness.events import Event
from harness.wire import FramingError, SSEDecoder, SSEEvent


class Normalizer(ABC):
    """Feed response-body bytes, get unified events; ``close`` gives the terminal event."""

    protocol: ClassVar[str]

    def __init__(self) -> None:
        self.acc = Accumulator(self.protocol)

    @abstractmethod
    def feed(self, chunk: bytes) -> list[Event]:
        """Consume the next piece of the body; return the events it completes."""

    @abstractmethod
    def close(self) -> list[Event]:
        """The body has ended: return the remaining events, always ending in a terminal one."""


def excerpt(text: str, limit: int = 80) -> str:
    """A short, single-line rendering of wire text for error messages."""
    flat = text.replace("\r", "\\r").replace("\n", "\\n")
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


class SSENormalizer(Normalizer):
    """Base for the SSE protocols: framing, JSON decoding and the EOF rule live here."""

    def __init__(self) -> None:
        super().__init__()
        self._sse = SSEDecoder()
        self.events_seen = 0

    def feed(self, chunk: bytes) -> list[Event]:
        if self.acc.terminated:
            return []
        for item in self._sse.feed(chunk):
            self._dispatch(item)
            if self.acc.terminated:
                break
        return self.acc.drain()

    def close(self) -> list[Event]:
        if not self.acc.terminated:
            for item in self._sse.close():
                self._dispatch(item)
                if self.acc.terminated:
                    break
        if not self.acc.terminated:
            self.on_eof()
        if not self.acc.terminated:  # a subclass's on_eof must end the stream
            self.acc.fail("stream ended without a terminal event")
        return self.acc.drain()

    def _dispatch(self, item: SSEEvent | FramingError) -> None:
        if isinstance(item, FramingError):
            self.acc.fail(f"framing error at byte {item.offset}: {item.message}")
            return
        self.events_seen += 1
        self.on_event(item)

    def load_json(self, event: SSEEvent) -> Any:
        """Parse an event's data; on failure end the stream in an error and return None."""
        try:
            return json.loads(event.data)
        except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
            self.acc.fail(
                f"malformed JSON in SSE event #{self.events_seen} ({event.event}): "
                f"{exc}: {excerpt(event.data)}"
            )
            return None

    @abstractmethod
    def on_event(self, event: SSEEvent) -> None:
        """Translate one SSE event into accumulator calls."""

    def on_eof(self) -> None:
        """The body ended before the protocol's terminal signal (default: an error)."""
        self.acc.fail("stream ended without a terminal event")
