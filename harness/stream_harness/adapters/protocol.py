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
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

import httpx

from stream_harness.adapters.crash import crash_text
from stream_harness.adapters.ws_session import SessionTurn, reference_session
from stream_harness.contract.events import AssistantMessage, DoneEvent, ErrorEvent, Event
from stream_harness.contract.facts import origin
from stream_harness.errors import error_details_from_body
from stream_harness.providers.reference import normalize
from stream_harness.providers.registry import get_normalizer, protocol_ids
from stream_harness.recordings.resume import ResumingReader

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
    # The crash was a hang (a stdio adapter's reply did not come within its timeout): the
    # result is then labelled ``timeout``, not ``crashed`` (conformance/outcomes.py).
    hung: bool = False

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
    # The yardstick, bounded by its input limits: runs on the caller's thread (--run-timeout).
    bounds_own_runs = True

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

    # -- resuming a dropped Responses stream (the resumption check) --------------------

    resumes = True
    _http: httpx.Client | None = None

    def _http_client(self) -> httpx.Client:
        if self._http is None:
            self._http = httpx.Client(timeout=30.0)
        return self._http

    def run_resumable(self, protocol: str, base_url: str, *, request_body: bytes) -> AdapterResult:
        """Stream a Responses request from ``base_url``; when it ends before the terminal
        event, resume once with ``GET /v1/responses/{id}?stream=true&starting_after=N``, N
        the last ``sequence_number`` of a whole event, and read on.

        The normalizer is fed whole events only (:class:`~stream_harness.recordings.resume.ResumingReader`):
        the half of an event the drop cut off is sent again by the server. A refused resume
        (an unknown cursor) ends the stream in an error with the server's message.
        """
        normalizer = get_normalizer(protocol)
        reader = ResumingReader()
        events: list[Event] = []

        def read(response: httpx.Response) -> None:
            try:
                for chunk in response.iter_raw():
                    for whole in reader.feed(chunk):
                        events.extend(normalizer.feed(whole))
            except httpx.TransportError:
                pass  # the connection dropped: what was whole is kept, the rest resumed

        client = self._http_client()  # one for every run: making one builds an SSL context (~50 ms)
        with client.stream("POST", f"{base_url}/v1/responses", content=request_body) as response:
            read(response)
        response_id = normalizer.acc.response_id
        if not normalizer.acc.terminated and response_id is not None and reader.cursor is not None:
            reader.resume()
            target = f"/v1/responses/{response_id}?stream=true&starting_after={reader.cursor}"
            with client.stream("GET", base_url + target) as response:
                if response.status_code >= 400:
                    body = response.read()
                    details = error_details_from_body(body)
                    normalizer.acc.fail(
                        details.message or f"HTTP {response.status_code}",
                        status=response.status_code,
                        body=body.decode("utf-8", "replace"),
                    )
                else:
                    read(response)
        for whole in reader.close():
            events.extend(normalizer.feed(whole))
        events.extend(normalizer.close())
        last = events[-1] if events else None
        message = last.message if isinstance(last, DoneEvent | ErrorEvent) else None
        return AdapterResult(message=message, events=events)

    # -- several turns on one WebSocket connection (the session checks) ----------------

    sessions = True
    recovers_previous_response = True

    def run_session(
        self, protocol: str, base_url: str, turns: Sequence[SessionTurn]
    ) -> list[AdapterResult]:
        """Play ``turns`` on one WebSocket connection to ``base_url``, chained and
        recovering as a real client does (:mod:`stream_harness.adapters.ws_session`); one
        result a turn, each from a fresh normalizer."""
        out = []
        for events in reference_session(protocol, base_url, turns):
            last = events[-1] if events else None
            message = last.message if isinstance(last, DoneEvent | ErrorEvent) else None
            out.append(AdapterResult(message=message, events=events))
        return out


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
        # With the file and line of the user's code it happened in (adapters/crash.py).
        return AdapterResult(message=None, crashed=crash_text(exc))


class AdapterLoadError(ValueError):
    pass
