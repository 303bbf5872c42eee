"""Which tool may start now: batches, the concurrency cap and context modifiers.

One rule serves both the batch mode (every call known when the response ends) and the eager
mode (calls arrive while the response streams): the queue is walked in call order and its
head starts when it may, and the walk stops at the first call that may not, so calls never
overtake one another (Claude Code's ``StreamingToolExecutor.processQueue``,
research/seed-systems.md C.2). A head may start when

- no batch is open, or
- it is concurrency-safe, the open batch is safe, and fewer than ``limit`` tools run.

Otherwise it waits until every member of the open batch has finished; the batch then closes
and its context modifiers are applied in call order (within a call, in the order given), and
the head opens the next batch. The batches are therefore exactly Claude Code's
``partitionToolCalls`` of the call list (maximal runs of consecutive safe calls; every other
call alone), whatever the timing; tools of one batch all see the context as it was before
the batch (L4). An unsafe batch has one member, so its modifiers apply as soon as it ends.

Calls the loop answers itself (unknown tool, invalid arguments, doom loop) are queued too,
as unsafe calls that finish the moment they start, so they split safe runs as Claude Code's
partition does (an invalid input is "not safe" there).

Sans-I/O: the executor only says which calls start; the state machine runs them.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stream_harness.loop.tools import ContextModifier


@dataclass(frozen=True)
class Job:
    key: str
    position: int
    safe: bool
    immediate: bool = False
    """True for a call the loop answers without running it (it occupies a slot in the order)."""


@dataclass(frozen=True)
class Started:
    job: Job
    batch: int
    context: dict[str, Any]


@dataclass
class _Batch:
    index: int
    safe: bool
    members: list[str] = field(default_factory=list)
    finished: set[str] = field(default_factory=set)
    modifiers: dict[str, tuple[ContextModifier, ...]] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return len(self.finished) == len(self.members)


class ToolExecutor:
    """Queue, running set and context of one turn's tool calls."""

    def __init__(self, limit: int, context: Mapping[str, Any]) -> None:
        if limit < 1:
            raise ValueError("concurrency limit must be at least 1")
        self.limit = limit
        self.context: dict[str, Any] = dict(context)
        self._queue: deque[Job] = deque()
        self._running: dict[str, Job] = {}
        self._batch: _Batch | None = None
        self._batches = 0
        self._order: dict[str, int] = {}
        self.input_closed = False

    @property
    def running(self) -> list[str]:
        return list(self._running)

    @property
    def queued(self) -> list[str]:
        return [job.key for job in self._queue]

    @property
    def idle(self) -> bool:
        """Nothing queued, nothing running, no more calls to come, last batch closed."""
        return self.input_closed and not self._queue and not self._running and self._batch is None

    def add(self, job: Job) -> list[Started]:
        self._order[job.key] = job.position
        self._queue.append(job)
        return self._pump()

    def close_input(self) -> list[Started]:
        self.input_closed = True
        return self._pump()

    def finish(self, key: str, modifiers: tuple[ContextModifier, ...] = ()) -> list[Started]:
        """A started call ended; return the calls that may start now. Unknown keys are ignored."""
        if self._running.pop(key, None) is None:
            return []
        batch = self._batch
        assert batch is not None and key in batch.members
        batch.finished.add(key)
        if modifiers:
            batch.modifiers[key] = modifiers
        return self._pump()

    def cancel(self) -> list[str]:
        """Drop the queue and the open batch (its modifiers are discarded: it never
        completed); return the keys that were running, which the caller cancels."""
        running = list(self._running)
        self._queue.clear()
        self._running.clear()
        self._batch = None
        self.input_closed = True
        return running

    def _close_batch(self) -> None:
        batch = self._batch
        assert batch is not None
        for key in sorted(batch.modifiers, key=lambda k: self._order[k]):
            for modifier in batch.modifiers[key]:
                self.context = modifier(copy.deepcopy(self.context))
        self._batch = None

    def _pump(self) -> list[Started]:
        started: list[Started] = []
        while True:
            batch = self._batch
            if (
                batch is not None
                and batch.complete
                and (
                    not batch.safe
                    or (self._queue and not self._queue[0].safe)
                    or (self.input_closed and not self._queue)
                )
            ):
                self._close_batch()
                continue
            if not self._queue:
                return started
            head = self._queue[0]
            if batch is None:
                self._batch = _Batch(index=self._batches, safe=head.safe)
                self._batches += 1
            elif not (head.safe and batch.safe and len(self._running) < self.limit):
                return started
            self._queue.popleft()
            current = self._batch
            assert current is not None
            current.members.append(head.key)
            started.append(
                Started(job=head, batch=current.index, context=copy.deepcopy(self.context))
            )
            if head.immediate:
                current.finished.add(head.key)
            else:
                self._running[head.key] = head
