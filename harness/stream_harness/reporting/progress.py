"""Progress lines for logs: a long run without a terminal says every so often that it is alive.

On a terminal ``check`` and ``report`` draw rich progress bars; in a CI log those are
off (they would be hundreds of redrawn lines), and a run of many minutes printed nothing
until its summary, which looks like a hang and gets jobs cancelled. So without a terminal
a line goes to stderr every :data:`DEFAULT_EVERY` seconds (``STREAM_HARNESS_PROGRESS_EVERY``
sets the interval, 0 turns the lines off): how far the run is and how long it has taken.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Final, TextIO

ENV: Final = "STREAM_HARNESS_PROGRESS_EVERY"
# Often enough for a CI job's "no output for N minutes" watchdogs and for a person watching
# the log, rare enough that a 10-minute matrix run adds 60 lines.
DEFAULT_EVERY: Final = 10.0


def progress_every() -> float:
    """The interval from the environment; ValueError with a one-line message when it is bad."""
    raw = os.environ.get(ENV)
    if raw is None or not raw.strip():
        return DEFAULT_EVERY
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(
            f"{ENV} must be a number of seconds >= 0 (0: no progress lines), got {raw!r}"
        )
    return value


class Heartbeat:
    """A line from ``line()`` every ``every`` seconds on ``stream`` while the block runs.

    ``line`` is called from a daemon thread: it reads counters, it does not compute. An
    interval of 0 prints nothing."""

    def __init__(
        self, line: Callable[[float], str], every: float, stream: TextIO | None = None
    ) -> None:
        self.line = line
        self.every = every
        self.stream = stream
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = 0.0

    def __enter__(self) -> Heartbeat:
        self._started = time.monotonic()
        if self.every > 0:
            self._thread = threading.Thread(
                target=self._beat, name="stream-harness progress", daemon=True
            )
            self._thread.start()
        return self

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            stream = self.stream or sys.stderr
            try:
                print(self.line(time.monotonic() - self._started), file=stream, flush=True)
            except (OSError, ValueError):  # the stream went away (a closed pipe): no more lines
                return

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
