"""The outputs of one input call, collected in order and stamped with the host's time.

Each input is atomic (specs/agent-loop.md, "Inputs"): its outputs are gathered here while
the machine and its collaborators decide, and handed to the host in one list at the end.
The clock is read here only, and only the injected one, so the machine never asks the
system what time it is.
"""

from __future__ import annotations

from stream_harness.loop.clock import Clock
from stream_harness.loop.commands import Output


class Outbox:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._out: list[Output] = []

    def now(self) -> float:
        return self.clock.now()

    def put(self, output: Output) -> None:
        self._out.append(output)

    def drain(self) -> list[Output]:
        out, self._out = self._out, []
        return out
