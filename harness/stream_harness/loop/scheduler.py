"""A deterministic discrete-event scheduler, and the driver that runs the loop on it.

Choice (the lead asked for it to be documented): no asyncio, no threads. Every happening
(a response chunk arriving, a tool finishing, a retry timer firing, an injected abort) is a
callback in one heap ordered by (virtual time, insertion order), and the clock jumps to the
next one. So a 30 s backoff costs nothing, two runs of one scenario give the same event log
to the last float, and parallel tools are simply callbacks due at different times. The
machine (stream_harness.loop.state) never waits; "sleep" is the :class:`~stream_harness.loop.state.StartTimer`
command, which this driver turns into a callback.

:class:`Simulation` carries out the machine's commands: ``SendRequest`` asks the
:class:`ModelClient` for a scripted response and schedules its parts (bytes through the
protocol's normalizer, or ready-made contract events), ``StartTool`` asks the tool's
:class:`ToolBehaviour` for a plan (duration, updates, result), ``StartTimer`` schedules a
wake-up; the ``Cancel*`` commands cancel what they name.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from stream_harness.contract.events import Event
from stream_harness.loop.clock import VirtualClock
from stream_harness.loop.commands import (
    AskPermission,
    CancelPermission,
    CancelRequest,
    CancelTimer,
    CancelTool,
    Command,
    Output,
    SendRequest,
    StartTimer,
    StartTool,
)
from stream_harness.loop.events import AGENT_EVENT_TYPES, AgentEvent
from stream_harness.loop.state import AgentLoop
from stream_harness.loop.tools import PermissionAnswer, ToolOutcome
from stream_harness.providers.reference import http_error_events
from stream_harness.providers.registry import get_normalizer

PermissionScript = Callable[[AskPermission], tuple[PermissionAnswer, float]]
"""The user at the permission prompt: an answer and how many seconds it takes to give it."""


class Handle:
    __slots__ = ("cancelled",)

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class Scheduler:
    """Callbacks due at virtual times, run in (time, insertion) order."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self._heap: list[tuple[float, int, Handle, Callable[[], None]]] = []
        self._seq = itertools.count()

    def call_at(self, when: float, callback: Callable[[], None]) -> Handle:
        handle = Handle()
        # Rounded to the nanosecond so that 0.25 + 2 * 0.05 prints as 0.35 in the logs.
        due = round(max(when, self.clock.now()), 9)
        heapq.heappush(self._heap, (due, next(self._seq), handle, callback))
        return handle

    def call_later(self, delay: float, callback: Callable[[], None]) -> Handle:
        return self.call_at(self.clock.now() + max(0.0, delay), callback)

    @property
    def pending(self) -> int:
        return sum(1 for entry in self._heap if not entry[2].cancelled)

    def step(self) -> bool:
        """Run the next due callback; False when nothing is left."""
        while self._heap:
            when, _, handle, callback = heapq.heappop(self._heap)
            if handle.cancelled:
                continue
            self.clock.advance_to(when)
            callback()
            return True
        return False


# -- what the simulation asks of a scenario ----------------------------------------------


@dataclass(frozen=True)
class ModelResponse:
    """One scripted answer to one request.

    Either ``chunks`` of a body in ``protocol`` (run through its normalizer, or through
    ``http_error_events`` when ``status`` >= 400), or ready-made contract ``events``.
    ``latency`` passes before the head, ``interval`` between parts. Faults: ``cut_after``
    drops the connection after that many parts (the normalizer then reports the early EOF),
    and ``failure`` makes the client raise with that message, at once or after the cut.
    """

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    protocol: str | None = None
    chunks: Sequence[bytes] = ()
    events: Sequence[Event] | None = None
    latency: float = 0.0
    interval: float = 0.0
    cut_after: int | None = None
    failure: str | None = None
    eof_after: int | None = None
    """The body ends cleanly after that many parts: no error from the client, only the end
    of the response (a body's normalizer then reports the early EOF itself; ready-made
    events simply stop, and the loop sees the response end without a terminal event)."""


class ModelClient(Protocol):
    def respond(self, request: SendRequest) -> ModelResponse:
        """The response to one request; raising is a client failure (connection refused)."""
        ...


@dataclass(frozen=True)
class ToolPlan:
    """How one tool run goes: ``updates`` as (seconds after start, data), then ``execute``
    is called at ``duration`` and its return or exception is the outcome."""

    duration: float = 0.0
    updates: Sequence[tuple[float, Any]] = ()
    execute: Callable[[], ToolOutcome] = field(default=lambda: ToolOutcome(value=None))


class ToolBehaviour(Protocol):
    def plan(
        self, call_name: str, arguments: Mapping[str, Any], context: Mapping[str, Any], nth: int
    ) -> ToolPlan:
        """The plan for the ``nth`` (0-based) run of this tool in the simulation."""
        ...


@dataclass
class SimulationResult:
    events: list[AgentEvent]
    commands: list[Command]
    requests: list[SendRequest]
    end_time: float
    max_running: int
    finished: bool


class Simulation:
    """Drives an :class:`AgentLoop` with a model client and tool behaviours on virtual time."""

    def __init__(
        self,
        loop: AgentLoop,
        client: ModelClient,
        tools: Mapping[str, ToolBehaviour],
        scheduler: Scheduler,
        *,
        abort_after_event: int | None = None,
        abort_at: float | None = None,
        permissions: PermissionScript | None = None,
    ) -> None:
        self.loop = loop
        self.client = client
        self.tools = tools
        self.scheduler = scheduler
        self.abort_after_event = abort_after_event
        self.abort_at = abort_at
        self.events: list[AgentEvent] = []
        self.commands: list[Command] = []
        self.requests: list[SendRequest] = []
        self._streams: dict[int, list[Handle]] = {}
        self._tool_handles: dict[str, list[Handle]] = {}
        self._timers: dict[int, Handle] = {}
        self._runs: dict[str, int] = {}
        self._running: set[str] = set()
        self.max_running = 0
        self._abort_scheduled = False
        self.permissions = permissions
        self._asks: dict[int, Handle] = {}

    def run(self, max_steps: int = 1_000_000) -> SimulationResult:
        if self.abort_at is not None:
            self.scheduler.call_at(self.abort_at, self._abort)
        self.scheduler.call_at(self.scheduler.clock.now(), lambda: self._apply(self.loop.start()))
        steps = 0
        while steps < max_steps and self.scheduler.step():
            steps += 1
        return SimulationResult(
            events=self.events,
            commands=self.commands,
            requests=self.requests,
            end_time=self.scheduler.clock.now(),
            max_running=self.max_running,
            finished=self.loop.state.value == "done",
        )

    def _abort(self) -> None:
        self._apply(self.loop.abort())

    def _apply(self, outputs: list[Output]) -> None:
        for output in outputs:
            if isinstance(output, AGENT_EVENT_TYPES):
                self.events.append(output)
                if (
                    self.abort_after_event is not None
                    and not self._abort_scheduled
                    and len(self.events) >= self.abort_after_event
                ):
                    # Inputs are atomic: the abort is the next input, at the same instant.
                    self._abort_scheduled = True
                    self.scheduler.call_later(0.0, self._abort)
                continue
            self.commands.append(output)
            if isinstance(output, SendRequest):
                self._send(output)
            elif isinstance(output, CancelRequest):
                for handle in self._streams.pop(output.request_id, []):
                    handle.cancel()
            elif isinstance(output, StartTool):
                self._start_tool(output)
            elif isinstance(output, CancelTool):
                self._running.discard(output.key)
                for handle in self._tool_handles.pop(output.key, ()):
                    handle.cancel()
            elif isinstance(output, StartTimer):
                self._timers[output.timer_id] = self.scheduler.call_later(
                    output.delay, _waker(self.loop, self._apply, output.timer_id)
                )
            elif isinstance(output, AskPermission):
                answer, after = (
                    self.permissions(output) if self.permissions is not None else ("deny", 0.0)
                )
                self._asks[output.ask_id] = self.scheduler.call_later(
                    after, _answerer(self.loop, self._apply, output.ask_id, answer)
                )
            elif isinstance(output, CancelPermission):
                ask = self._asks.pop(output.ask_id, None)
                if ask is not None:
                    ask.cancel()
            elif isinstance(output, CancelTimer):
                timer = self._timers.pop(output.timer_id, None)
                if timer is not None:
                    timer.cancel()

    # -- model responses --------------------------------------------------------------

    def _send(self, request: SendRequest) -> None:
        self.requests.append(request)
        rid = request.request_id
        handles: list[Handle] = []
        self._streams[rid] = handles

        def later(delay: float, callback: Callable[[], list[Output]]) -> None:
            handles.append(self.scheduler.call_later(delay, lambda: self._apply(callback())))

        try:
            response = self.client.respond(request)
        except Exception as exc:  # a client failure is an input, not a crash
            message = str(exc) or type(exc).__name__
            # OSError covers ConnectionError and TimeoutError: the network failures seed 000
            # retries. Anything else (a script that ran out) is not one.
            network = isinstance(exc, OSError)
            later(0.0, lambda: self.loop.request_failed(rid, message, network=network))
            return
        t, step = response.latency, response.interval
        cut = response.cut_after if response.cut_after is not None else response.eof_after
        if response.failure is not None and cut is None:
            failure = response.failure
            later(t, lambda: self.loop.request_failed(rid, failure))
            return
        error_body = b"".join(response.chunks) if response.status >= 400 else None
        head = dict(response.headers)
        later(t, lambda: self.loop.response_head(rid, response.status, head, error_body))
        # One callback per part, at latency + i * interval; the end (EOF, cut or failure)
        # comes with the last part, at the same instant.
        feeds: list[Callable[[], list[Output]]] = []
        if response.events is not None:
            events = list(response.events)
            feeds = [
                _feeder(self.loop, rid, [e]) for e in (events if cut is None else events[:cut])
            ]
            closing: Callable[[], list[Output]] | None = None
        elif response.status >= 400:
            assert error_body is not None
            feeds = [
                _feeder(
                    self.loop,
                    rid,
                    http_error_events(_protocol(response), response.status, error_body, head),
                )
            ]
            closing = None
        else:
            normalizer = get_normalizer(_protocol(response))
            chunks = list(response.chunks)
            feeds = [
                _chunk_feeder(self.loop, rid, normalizer.feed, c)
                for c in (chunks if cut is None else chunks[:cut])
            ]
            closing = lambda: _feed_all(self.loop, rid, normalizer.close())  # noqa: E731
        for i, feed in enumerate(feeds):
            later(t + i * step, feed)
        end = t + max(0, len(feeds) - 1) * step
        if response.cut_after is not None and (response.failure is not None or closing is None):
            failure = (
                response.failure or "ECONNRESET: the connection closed before the response ended"
            )
            later(end, lambda: self.loop.request_failed(rid, failure))
            return
        if closing is not None:
            later(end, closing)
        # Every response ends: EOF is an input of its own (after the terminal event it changes
        # nothing; without one, the turn ends in error instead of waiting forever).
        later(end, lambda: self.loop.response_ended(rid))

    # -- tools ------------------------------------------------------------------------------

    def _start_tool(self, command: StartTool) -> None:
        key, call = command.key, command.call
        behaviour = self.tools.get(call.name)
        nth = self._runs.get(call.name, 0)
        self._runs[call.name] = nth + 1
        plan = (
            behaviour.plan(call.name, call.arguments, command.context, nth)
            if behaviour
            else ToolPlan()
        )
        self._running.add(key)
        self.max_running = max(self.max_running, len(self._running))
        handles: list[Handle] = []
        self._tool_handles[key] = handles
        for after, data in plan.updates:
            if after < plan.duration:
                handles.append(
                    self.scheduler.call_later(after, _updater(self.loop, self._apply, key, data))
                )

        def finish() -> None:
            self._running.discard(key)
            self._tool_handles.pop(key, None)
            try:
                outcome = plan.execute()
            except Exception as exc:  # a tool that raises is an error result, not a crash
                outcome = ToolOutcome.raised(exc)
            self._apply(self.loop.tool_finished(key, outcome))

        handles.append(self.scheduler.call_later(plan.duration, finish))


def _feed_all(loop: AgentLoop, rid: int, events: list[Event]) -> list[Output]:
    out: list[Output] = []
    for event in events:
        out.extend(loop.model_event(rid, event))
    return out


def _protocol(response: ModelResponse) -> str:
    if response.protocol is None:
        raise ValueError("a byte response needs a protocol")
    return response.protocol


def _chunk_feeder(
    loop: AgentLoop, rid: int, feed: Callable[[bytes], list[Event]], chunk: bytes
) -> Callable[[], list[Output]]:
    return lambda: _feed_all(loop, rid, feed(chunk))


def _feeder(loop: AgentLoop, rid: int, events: list[Event]) -> Callable[[], list[Output]]:
    return lambda: _feed_all(loop, rid, events)


def _waker(
    loop: AgentLoop, apply: Callable[[list[Output]], None], timer_id: int
) -> Callable[[], None]:
    return lambda: apply(loop.wake(timer_id))


def _updater(
    loop: AgentLoop, apply: Callable[[list[Output]], None], key: str, data: Any
) -> Callable[[], None]:
    return lambda: apply(loop.tool_update(key, data))


def _answerer(
    loop: AgentLoop, apply: Callable[[list[Output]], None], ask_id: int, answer: PermissionAnswer
) -> Callable[[], None]:
    return lambda: apply(loop.permission_answer(ask_id, answer))
