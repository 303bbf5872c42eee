"""The agent loop as a sans-I/O state machine.

The machine performs no I/O and never waits. Its host calls one method per thing that
happened (:meth:`AgentLoop.start`, :meth:`~AgentLoop.model_event`,
:meth:`~AgentLoop.request_failed`, :meth:`~AgentLoop.response_ended`,
:meth:`~AgentLoop.tool_finished`, :meth:`~AgentLoop.wake`,
:meth:`~AgentLoop.permission_answer`, :meth:`~AgentLoop.abort`, ...) and gets back a list of
outputs: agent events to show, and commands to carry out (:class:`SendRequest`,
:class:`StartTool`, :class:`StartTimer`, :class:`AskPermission`, and their cancellations).
Every way a response can end is an input, so no run waits forever (issue 16).
Each call is atomic: its outputs are decided before the host sees any of them, so an abort
delivered "after event K" takes effect at the next call (specs/agent-loop.md, "Inputs").

Why this shape rather than an async function: every interleaving the host can produce
(which tool finishes first, an abort between any two events, a timer firing) is one method
call, so a hypothesis state machine can drive all of them directly and check the
invariants after each, and a discrete-event scheduler (stream_harness.loop.scheduler) can drive
it on virtual time. States, transitions and invariant ids are in specs/agent-loop.md.

This module holds the turn flow (requests, responses, the end of turns and of the run); the
rest is delegated, each to a module named for it: tool-call bookkeeping
(:mod:`~stream_harness.loop.calls`) with its permission gate (:mod:`~stream_harness.loop.gate`),
what a failed response leads to (:mod:`~stream_harness.loop.recovery`), when to compact
(:mod:`~stream_harness.loop.compaction`), and the outputs of one call
(:mod:`~stream_harness.loop.outbox`, the only reader of the injected clock's ``now``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from stream_harness.contract.events import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    ErrorInfo,
    Event,
    StopReason,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from stream_harness.errors import classify
from stream_harness.loop.calls import ToolCalls
from stream_harness.loop.clock import Clock
from stream_harness.loop.commands import (
    AskFn,
    CancelRequest,
    CancelTimer,
    Output,
    SendRequest,
    StartTimer,
    StartTool,
)
from stream_harness.loop.compaction import compaction_after, compaction_event, pre_request_estimate
from stream_harness.loop.config import Compactor, LoopConfig, LoopState
from stream_harness.loop.events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    Compaction,
    CompactionReason,
    EndReason,
    Fallback,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    Retry,
    TurnEnd,
    TurnSignal,
    TurnStart,
)
from stream_harness.loop.executor import ToolExecutor
from stream_harness.loop.messages import Message, ToolResultKind, tool_calls_of
from stream_harness.loop.outbox import Outbox
from stream_harness.loop.recovery import recovery_for
from stream_harness.loop.retry import decide_delay
from stream_harness.loop.tools import PermissionAnswer, ToolOutcome, ToolSpec
from stream_harness.loop.turns import Attempt, Turn, turn_ending

STREAM_ENDED = "stream ended without a terminal event"
"""error_message of a response whose body ended before its ``done``/``error`` event."""

# The configuration and the commands a host needs first are importable from here too;
# every command is in stream_harness.loop.commands.
__all__ = ["AgentLoop", "LoopConfig", "LoopState", "Output", "SendRequest", "StartTool"]


class AgentLoop:
    """One agent run: turns of model request, tool execution and commit, until a stop."""

    def __init__(
        self,
        config: LoopConfig,
        tools: Sequence[ToolSpec],
        history: Sequence[Message],
        *,
        clock: Clock,
        context: Mapping[str, Any] | None = None,
        ask: AskFn | None = None,
        compactor: Compactor | None = None,
    ) -> None:
        self.config = config
        self.tools = {spec.name: spec for spec in tools}
        self.history: list[Message] = list(history)
        self.clock = clock
        self.context: dict[str, Any] = dict(context or {})
        self.state = LoopState.IDLE
        self.turn = 0
        self.model = config.model
        self.aborted = False
        self._compactor = compactor
        self._compacted = False
        """A compaction happened and no response has been committed since: the next request
        is not checked again, and an overflow error then ends the run (never twice for one
        cause)."""
        self._overloads = 0
        self._request_id = 0
        self._timer_id = 0
        self._attempt: Attempt | None = None
        self._turn: Turn | None = None
        self._out = Outbox(clock)
        self._calls = ToolCalls(config, self.tools, ask, self._out)

    # -- inputs ---------------------------------------------------------------------------

    def start(self) -> list[Output]:
        if self.state is LoopState.IDLE:
            self._emit(AgentStart(time=self._now()))
            self._begin_turn()
        return self._drain()

    def response_head(
        self,
        request_id: int,
        status: int,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
    ) -> list[Output]:
        """The HTTP status and headers of a response (and its body when it is an error body),
        kept to read the server's retry hint with the loop's clock."""
        attempt = self._current(request_id)
        if attempt is not None:
            attempt.status = status
            attempt.headers = {k.lower(): v for k, v in (headers or {}).items()}
            attempt.body = body
        return self._drain()

    def model_event(self, request_id: int, event: Event) -> list[Output]:
        attempt = self._current(request_id)
        if attempt is None:
            return self._drain()
        self._ensure_message_started(attempt)
        self._emit(MessageUpdate(time=self._now(), turn=self.turn, event=event))
        attempt.partial.feed(event)
        if isinstance(event, ToolCallStartEvent):
            attempt.tool_indices.append(event.content_index)
        if isinstance(event, ToolCallEndEvent) and event.strict is False:
            position = sum(1 for i in attempt.tool_indices if i < event.content_index)
            attempt.malformed[position] = event.raw_arguments or ""
        if isinstance(event, DoneEvent):
            # Calls still held (eager mode) are queued by _on_done after the commit, like
            # every call in batch mode.
            attempt.finished = True
            self._on_done(attempt, event)
        elif isinstance(event, ErrorEvent):
            attempt.finished = True
            self._on_error(attempt, event)
        elif self.config.eager_tools:
            if isinstance(event, ToolCallEndEvent):
                position = sum(1 for i in attempt.tool_indices if i < event.content_index)
                attempt.held[position] = event.tool_call
            elif not event.type.endswith("_end"):
                assert self._turn is not None
                self._calls.release(self._turn, attempt)
        return self._drain()

    def request_failed(
        self, request_id: int, message: str, *, network: bool = True
    ) -> list[Output]:
        """The client raised instead of giving (more) events. ``network``: it is a network
        failure (connection refused or reset, DNS failure, a read timeout), which seed 000
        retries whatever the message says; False for any other client exception."""
        attempt = self._current(request_id)
        if attempt is None:
            return self._drain()
        self._fail_attempt(attempt, message, classify(message=message), network=network)
        return self._drain()

    def response_ended(self, request_id: int) -> list[Output]:
        """The response body is over (EOF). After the terminal event this is the normal end
        and changes nothing; before it, the connection closed mid-response: the turn ends as
        an error that keeps what arrived (the partial message), then the retry rules apply
        as to any network failure. Without this input a response that simply stops would
        leave the run waiting forever (pi's ``result()`` never settles, seed 004)."""
        attempt = self._current(request_id)
        if attempt is None:
            return self._drain()
        info = ErrorInfo(kind="transient", retryable=True, origin="stream")
        self._fail_attempt(attempt, STREAM_ENDED, info, network=True)
        return self._drain()

    def tool_update(self, key: str, data: Any = None) -> list[Output]:
        turn = self._live_turn()
        if turn is not None:
            self._calls.update(turn, key, data)
        return self._drain()

    def tool_finished(self, key: str, outcome: ToolOutcome) -> list[Output]:
        """A started tool ended. Ignored for a key that is not running (cancelled, unknown,
        already finished): after an abort nothing can add a result (L11)."""
        turn = self._live_turn()
        if turn is None or key not in turn.running:
            return self._drain()
        self._calls.finished(turn, key, outcome)
        self._advance(turn)
        return self._drain()

    def permission_answer(self, ask_id: int, answer: PermissionAnswer) -> list[Output]:
        """The host's answer to an :class:`AskPermission`. Ignored when the question is moot
        (unknown id, an abort, a discarded attempt, the end of the run)."""
        turn = self._live_turn()
        if turn is not None and self._calls.answer(turn, ask_id, answer):
            self._advance(turn)
        return self._drain()

    def wake(self, timer_id: int) -> list[Output]:
        """The retry sleep requested by :class:`StartTimer` is over."""
        if self.state is LoopState.RETRY_WAIT and timer_id == self._timer_id:
            self._send_request()
        return self._drain()

    def abort(self) -> list[Output]:
        """Stop the run now. Idempotent: a second abort, or one after the end, does nothing."""
        if self.aborted or self.state is LoopState.DONE:
            return self._drain()
        self.aborted = True
        turn = self._turn
        if self.state is LoopState.IDLE:
            self._emit(AgentStart(time=self._now()))
            self._end_agent("aborted")
        elif self.state is LoopState.RETRY_WAIT:
            self._out.put(CancelTimer(self._timer_id))
            assert turn is not None
            self._end_turn(turn, "stop", "aborted")
        elif self.state is LoopState.STREAMING:
            attempt = self._attempt
            assert attempt is not None and turn is not None
            self._out.put(CancelRequest(attempt.request_id))
            attempt.finished = True
            self._ensure_message_started(attempt)
            self._close_turn(turn, attempt.partial.aborted(), "cancelled", "aborted")
        else:
            assert turn is not None
            self._calls.cancel_running(turn)
            self._calls.fill_results(turn, "cancelled")
            self._advance(turn, end_reason="aborted")
        return self._drain()

    # -- requests and responses -----------------------------------------------------------

    def _begin_turn(self) -> None:
        self.turn += 1
        turn = self._turn = Turn(
            index=self.turn, executor=ToolExecutor(self.config.concurrency_limit, self.context)
        )
        self._emit(TurnStart(time=self._now(), turn=self.turn, model=self.model))
        estimate = pre_request_estimate(self.config, self.history, compacted=self._compacted)
        if estimate is not None:
            # Pre-request compaction: the request would not fit, so compact before it.
            self._emit(self._compaction_event("pre_request", estimate))
            if self._compactor is None:
                self._end_turn(turn, "compact", "compact")
                return
            self.history = list(self._compactor(self.history))
            self._compacted = True
        self._send_request()

    def _send_request(self) -> None:
        turn = self._turn
        assert turn is not None
        turn.attempts += 1
        self._request_id += 1
        self._attempt = Attempt(
            request_id=self._request_id,
            number=turn.attempts,
            model=self.model,
            doom_snapshot=copy.copy(self._calls.doom),
        )
        self.state = LoopState.STREAMING
        self._out.put(
            SendRequest(
                request_id=self._request_id,
                model=self.model,
                messages=tuple(self.history),
                tools=tuple(self.tools.values()),
            )
        )

    def _fail_attempt(
        self, attempt: Attempt, message: str, info: ErrorInfo, *, network: bool
    ) -> None:
        self._ensure_message_started(attempt)
        attempt.finished = True
        partial = attempt.partial.snapshot("error", message)
        event = ErrorEvent(reason="error", error_message=message, message=partial, error=info)
        self._on_error(attempt, event, network=network)

    def _on_done(self, attempt: Attempt, event: DoneEvent) -> None:
        turn = self._turn
        assert turn is not None
        self._overloads = 0
        message = event.message
        self._commit_message(turn, message)
        self._calls.queue_rest(turn, attempt, truncated=event.reason == "length")
        turn.compaction = compaction_after(self.config, message, time=self._now(), turn=self.turn)
        self.state = LoopState.EXECUTING
        self._calls.run(turn, turn.executor.close_input())
        self._advance(turn)

    def _on_error(self, attempt: Attempt, event: ErrorEvent, *, network: bool = False) -> None:
        turn = self._turn
        assert turn is not None
        if event.reason == "aborted":
            # The provider (or its client) says the request was aborted: the same end as ours.
            self.aborted = True
            self._close_turn(turn, event.message, "cancelled", "aborted")
            return
        info = event.error or classify(message=event.error_message)
        self._overloads = self._overloads + 1 if info.kind == "overloaded" else 0
        recovery = recovery_for(
            self.config,
            info,
            event.error_message,
            network=network,
            turn=turn,
            compacted=self._compacted,
            overloads=self._overloads,
            model=self.model,
        )
        if recovery.action != "close":
            self._discard(attempt, event.message)
        if recovery.overflow:
            turn.compaction = self._compaction_event("overflow", None)
        if recovery.action == "close":
            self._close_turn(
                turn, event.message, "not_executed", "error", error=event.error_message
            )
        elif recovery.action == "compact":
            self._end_turn(turn, "compact", "compact", error=event.error_message)
        elif recovery.action == "fallback":
            self._fall_back(turn)
        else:
            self._retry(turn, attempt, event, info)

    def _fall_back(self, turn: Turn) -> None:
        fallback = self.config.fallback_model
        assert fallback is not None
        self._emit(
            Fallback(
                time=self._now(),
                turn=self.turn,
                from_model=self.model,
                to_model=fallback,
                overloads=self._overloads,
            )
        )
        self.model = fallback
        self._overloads = 0
        turn.retries = 0
        self._send_request()

    def _retry(self, turn: Turn, attempt: Attempt, event: ErrorEvent, info: ErrorInfo) -> None:
        turn.retries += 1
        error_response = attempt.status >= 400
        decision = decide_delay(
            self.config.retry,
            turn.retries,
            info,
            headers=attempt.headers if error_response else None,
            body=attempt.body if error_response else None,
            now=self.clock.utcnow(),
        )
        now = self._now()
        self._timer_id += 1
        self._emit(
            Retry(
                time=now,
                turn=self.turn,
                retry=turn.retries,
                delay=decision.delay,
                hinted=decision.hinted,
                next_time=now + decision.delay,
                error_kind=info.kind,
                status=info.status,
                error_message=event.error_message,
            )
        )
        self._out.put(StartTimer(self._timer_id, decision.delay))
        self.state = LoopState.RETRY_WAIT

    def _discard(self, attempt: Attempt, message: AssistantMessage) -> None:
        """End a failed attempt without a trace in history (L7): its message is shown as not
        committed, and what it queued is forgotten."""
        turn = self._turn
        assert turn is not None
        self._emit_message_end(message, committed=False)
        self._calls.forget(turn, attempt, self.context)

    # -- the end of turns ---------------------------------------------------------------------

    def _close_turn(
        self,
        turn: Turn,
        message: AssistantMessage,
        fill: ToolResultKind,
        reason: EndReason,
        *,
        error: str | None = None,
    ) -> None:
        """Commit a response that ended the turn (aborted, or failed for good), give every call
        in it a result, and end the run."""
        self._commit_message(turn, message)
        self._calls.cancel_running(turn)
        self._calls.fill_results(turn, fill, error=error)
        self.state = LoopState.EXECUTING
        self._advance(turn, end_reason=reason)

    def _commit_message(self, turn: Turn, message: AssistantMessage) -> None:
        self._emit_message_end(message, committed=True)
        self.history.append(message)
        turn.message = message
        turn.calls = tool_calls_of(message)
        self._compacted = False

    def _advance(self, turn: Turn, end_reason: EndReason | None = None) -> None:
        """Commit the results that are next in call order, and end the turn once all are in."""
        if turn.message is None or turn.ended:
            return
        while turn.committed < len(turn.calls) and turn.committed in turn.results:
            result = turn.results[turn.committed]
            now = self._now()
            self._emit(MessageStart(time=now, turn=self.turn, role="tool_result"))
            self._emit(MessageEnd(time=now, turn=self.turn, role="tool_result", message=result))
            self.history.append(result)
            turn.committed += 1
        if turn.committed < len(turn.calls) or not (turn.executor.idle or end_reason):
            return
        self._end_turn(
            turn, *turn_ending(turn, end_reason, continue_on_deny=self.config.continue_on_deny)
        )

    def _end_turn(
        self,
        turn: Turn,
        signal: TurnSignal,
        reason: EndReason | None,
        *,
        error: str | None = None,
    ) -> None:
        """``error``: the provider's error that ended the run when no message carries it (an
        overflow with no compactor): the outcome says what happened (agent check A12)."""
        turn.ended = True
        if turn.compaction is not None:
            self._emit(turn.compaction.model_copy(update={"time": self._now()}))
        stop: StopReason | None = turn.message.stop_reason if turn.message is not None else None
        self._emit(
            TurnEnd(
                time=self._now(),
                turn=self.turn,
                signal=signal,
                stop_reason=stop,
                tool_results=turn.committed,
            )
        )
        self.context = turn.executor.context
        self._turn = None
        self._attempt = None
        if signal == "continue" or (
            signal == "compact" and self._compactor is not None and not self.aborted
        ):
            if signal == "compact":
                assert self._compactor is not None
                self.history = list(self._compactor(self.history))
                self._compacted = True
            if self.turn >= self.config.max_turns:
                self._end_agent("max_turns")
            else:
                self._begin_turn()
            return
        assert reason is not None
        if error is None and reason == "error" and turn.message is not None:
            error = turn.message.error_message
        self._end_agent(reason, error)

    def _end_agent(self, reason: EndReason, error: str | None = None) -> None:
        self.state = LoopState.DONE
        self._emit(AgentEnd(time=self._now(), reason=reason, turns=self.turn, error_message=error))

    # -- helpers ------------------------------------------------------------------------------

    def _current(self, request_id: int) -> Attempt | None:
        attempt = self._attempt
        if (
            self.state is not LoopState.STREAMING
            or attempt is None
            or attempt.request_id != request_id
            or attempt.finished
        ):
            return None
        return attempt

    def _live_turn(self) -> Turn | None:
        """The turn tool inputs refer to; None once the run is over."""
        return None if self.state is LoopState.DONE else self._turn

    def _ensure_message_started(self, attempt: Attempt) -> None:
        if not attempt.message_started:
            attempt.message_started = True
            self._emit(
                MessageStart(
                    time=self._now(), turn=self.turn, role="assistant", attempt=attempt.number
                )
            )

    def _emit_message_end(self, message: AssistantMessage, *, committed: bool) -> None:
        self._emit(
            MessageEnd(
                time=self._now(),
                turn=self.turn,
                role="assistant",
                message=message,
                committed=committed,
            )
        )

    def _compaction_event(self, reason: CompactionReason, used: int | None) -> Compaction:
        return compaction_event(self.config, reason, used, time=self._now(), turn=self.turn)

    def _now(self) -> float:
        return self._out.now()

    def _emit(self, event: AgentEvent) -> None:
        self._out.put(event)

    def _drain(self) -> list[Output]:
        return self._out.drain()
