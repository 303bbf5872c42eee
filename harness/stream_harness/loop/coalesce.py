"""Delta coalescing: fewer, bigger deltas for a UI, on the injected clock (seed 002).

oh-my-pi's ``AssistantMessageEventStream`` (research/seed-systems.md B.2) buffers delta
events and delivers them at most once per window (50 ms, "20 updates/sec"), merging
*adjacent* buffered deltas of the same type and content_index (the text concatenated, the
latest live arguments kept). Any other event first flushes the buffer, so deltas never
overtake or trail the events around them, and the terminal event resolves the stream's
result exactly once. Upstream pi has no throttling; this follows the fork.

Sans-I/O: :meth:`CoalescingStream.push` returns what is delivered now, :attr:`deadline` says
when :meth:`poll` must be called for a timed flush, and :meth:`end` flushes what is left.
The first delta is delivered at once (the last flush is "long ago").

Choices where the fork is silent: a push after the terminal event (or after ``end``) is
ignored, as pi's ``EventStream.push`` is; ``end`` without a terminal event resolves the result
to an error message ("Stream ended without a final result", oh-my-pi's fix for pi's
never-settling ``result()``).
"""

from __future__ import annotations

from collections.abc import Callable

from stream_harness.contract.events import (
    DELTA_TYPES,
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    Event,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallDeltaEvent,
)
from stream_harness.loop.clock import Clock

NO_RESULT = "Stream ended without a final result"
DeltaEvent = TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent


def merge(first: DeltaEvent, second: DeltaEvent) -> DeltaEvent:
    """Two adjacent deltas of one block as one: text concatenated, latest arguments kept."""
    return second.model_copy(update={"delta": first.delta + second.delta})


class CoalescingStream:
    def __init__(self, clock: Clock, window: float = 0.05) -> None:
        if window < 0:
            raise ValueError("window must be >= 0")
        self.clock = clock
        self.window = window
        self.done = False
        self._buffer: list[DeltaEvent] = []
        self._last_flush = float("-inf")
        self._deadline: float | None = None
        self._result: AssistantMessage | None = None
        self._resolutions = 0
        self._callbacks: list[Callable[[AssistantMessage], None]] = []

    # -- result -------------------------------------------------------------------------

    @property
    def result(self) -> AssistantMessage | None:
        """The terminal event's message once resolved (None before)."""
        return self._result

    @property
    def resolutions(self) -> int:
        """How many times the result was resolved: 0, then 1 forever."""
        return self._resolutions

    def on_result(self, callback: Callable[[AssistantMessage], None]) -> None:
        """Call ``callback`` once with the result (now, if it is already resolved)."""
        if self._result is not None:
            callback(self._result)
        else:
            self._callbacks.append(callback)

    def _resolve(self, message: AssistantMessage) -> None:
        if self._resolutions:
            return
        self._resolutions = 1
        self._result = message
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(message)

    # -- input --------------------------------------------------------------------------

    @property
    def deadline(self) -> float | None:
        """When buffered deltas are due; call :meth:`poll` then."""
        return self._deadline

    def push(self, event: Event) -> list[Event]:
        if self.done:
            return []
        if event.type in DELTA_TYPES:
            assert isinstance(event, TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent)
            self._buffer.append(event)
            if self.clock.now() - self._last_flush >= self.window:
                return self._flush()
            if self._deadline is None:
                self._deadline = self._last_flush + self.window
            return []
        out = self._flush()
        out.append(event)
        if isinstance(event, DoneEvent | ErrorEvent):
            self.done = True
            self._resolve(event.message)
        return out

    def poll(self) -> list[Event]:
        """Deliver the buffered deltas if their deadline has come."""
        if self._deadline is not None and self.clock.now() >= self._deadline:
            return self._flush()
        return []

    def end(self) -> list[Event]:
        out = self._flush()
        self.done = True
        self._resolve(AssistantMessage(stop_reason="error", error_message=NO_RESULT))
        return out

    def _flush(self) -> list[Event]:
        self._deadline = None
        if not self._buffer:
            return []
        merged: list[DeltaEvent] = []
        for delta in self._buffer:
            last = merged[-1] if merged else None
            if (
                last is not None
                and last.type == delta.type
                and last.content_index == delta.content_index
            ):
                merged[-1] = merge(last, delta)
            else:
                merged.append(delta)
        self._buffer = []
        self._last_flush = self.clock.now()
        return list(merged)
