"""Time as a parameter: the loop reads a :class:`Clock` and never the system's.

Two readings are needed: a monotonic ``now()`` in seconds for delays and event times, and a
wall-clock ``utcnow()`` only to convert an HTTP-date ``retry-after`` into seconds. A
:class:`VirtualClock` ties both to one number that the discrete-event scheduler advances,
so a scenario that waits 30 s of backoff runs in microseconds and ends at the same virtual
time on every run.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Monotonic seconds."""
        ...

    def utcnow(self) -> datetime:
        """Aware UTC wall time."""
        ...


class SystemClock:
    """The real clocks, for a host that drives the loop with real I/O."""

    def now(self) -> float:
        return time.monotonic()

    def utcnow(self) -> datetime:
        return datetime.now(UTC)


DEFAULT_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class VirtualClock:
    """Virtual seconds since ``epoch``; only :meth:`advance_to` moves it, never backwards."""

    def __init__(self, epoch: datetime = DEFAULT_EPOCH, start: float = 0.0) -> None:
        self.epoch = epoch if epoch.tzinfo is not None else epoch.replace(tzinfo=UTC)
        self._now = start

    def now(self) -> float:
        return self._now

    def utcnow(self) -> datetime:
        return self.epoch + timedelta(seconds=self._now)

    def advance_to(self, when: float) -> None:
        if when < self._now:
            raise ValueError(f"virtual time cannot go back from {self._now} to {when}")
        self._now = when
