"""Adapters: the implementations under test, behind one small protocol.

An adapter takes a wire protocol name and a response body as a sequence of byte chunks
(with status and headers) and gives either the unified events (``level = "event"``) or
only the final assistant message (``level = "message"``, for libraries that expose
nothing else). A crash is a result too: the adapter runner catches it and records it, so
one broken library never stops a report.

How an adapter is found by name (built-in, entry point, ``module:object``, ``cmd:``, a
gateway row) is :mod:`stream_harness.adapters.loading`, kept apart because it imports
every kind of adapter, and every kind of adapter imports this module.
"""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from stream_harness.contract.events import AssistantMessage, DoneEvent, ErrorEvent, Event
from stream_harness.contract.facts import origin
from stream_harness.providers.reference import normalize
from stream_harness.providers.registry import protocol_ids

AdapterLevel = Literal["event", "message"]
# The recorded response headers a run is given: name -> values, as the cassette holds them.
Headers = Mapping[str, Sequence[str]] | None

# The id of the case a run is for (``Case.id``, as reports name it), while the checks run
# it. Not a parameter of ``Adapter.run``: no in-process adapter needs it, and every one
# would have to take it. A stdio adapter sends it in its ``run`` message so that the
# process's own logs can say which case they are about (specs/adapter-protocol.md).
CURRENT_CASE: ContextVar[str | None] = ContextVar("stream_harness_current_case", default=None)


@contextlib.contextmanager
def running_case(case: str | None) -> Iterator[None]:
    """Within the block, :data:`CURRENT_CASE` is ``case``."""
    token = CURRENT_CASE.set(case)
    try:
        yield
    finally:
        CURRENT_CASE.reset(token)


@dataclass(frozen=True, slots=True)
class AdapterResult:
    """What an adapter made of one body.

    ``events`` is set by event-level adapters; ``message`` always (for event-level
    adapters it is the terminal event's message). ``raised`` holds the exception summary
    when the library raised instead of returning (``message`` may still hold what it had
    assembled). ``crashed`` is set by the runner when the adapter itself failed.
    """

    message: AssistantMessage | None
    events: list[Event] | None = None
    raised: str | None = None
    crashed: str | None = None
    # The library's own view, for reports ("what the library returned against the reference").
    raw: Mapping[str, object] = field(default_factory=dict)

    @property
    def terminal(self) -> Literal["done", "error", "raised", "none"]:
        if self.events:
            last = self.events[-1]
            if isinstance(last, DoneEvent):
                return "done"
            if isinstance(last, ErrorEvent):
                return "error"
        if self.raised or self.crashed:
            return "raised"
        if self.message is None:
            return "none"
        return "error" if self.message.stop_reason in ("error", "aborted") else "done"


@runtime_checkable
class Adapter(Protocol):
    """The protocol every implementation under test satisfies."""

    name: str
    level: AdapterLevel
    protocols: frozenset[str]

    def version(self) -> str:
        """The library version that ran (reports record it)."""

    def run(
        self, protocol: str, chunks: Sequence[bytes], *, status: int = 200, headers: Headers = None
    ) -> AdapterResult:
        """Feed ``chunks`` through the implementation; never called concurrently."""


class ReferenceAdapter:
    """Our own normalizers: the reference every other adapter is compared with."""

    name = "reference"
    level: AdapterLevel = "event"

    def __init__(self) -> None:
        self.protocols = frozenset(protocol_ids())

    def version(self) -> str:
        return origin().version

    def run(
        self, protocol: str, chunks: Sequence[bytes], *, status: int = 200, headers: Headers = None
    ) -> AdapterResult:
        hdrs = {k: list(v) for k, v in (headers or {}).items()}
        events = list(normalize(protocol, chunks, status=status, headers=hdrs))
        last = events[-1] if events else None
        message = last.message if isinstance(last, DoneEvent | ErrorEvent) else None
        return AdapterResult(message=message, events=events)


def safe_run(
    adapter: Adapter,
    protocol: str,
    chunks: Sequence[bytes],
    *,
    status: int = 200,
    headers: Mapping[str, Sequence[str]] | None = None,
    case: str | None = None,
) -> AdapterResult:
    """Run an adapter, turning anything it raises into a recorded crash; ``case`` is the
    id of the case the run is for (:data:`CURRENT_CASE`), when there is one."""
    try:
        with running_case(case):
            return adapter.run(protocol, chunks, status=status, headers=headers)
    except Exception as exc:
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return AdapterResult(message=None, crashed=tb)


class AdapterLoadError(ValueError):
    pass
