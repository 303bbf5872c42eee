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
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, TypeAlias

from stream_harness.errors import classify, is_context_overflow
from stream_harness.contract.events import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    ErrorInfo,
    Event,
    StopReason,
    ToolCall,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from stream_harness.loop.clock import Clock
from stream_harness.loop.events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    Compaction,
    CompactionReason,
    DoomLoop,
    EndReason,
    Fallback,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    Permission,
    Retry,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnSignal,
    TurnStart,
)
from stream_harness.loop.executor import Job, Started, ToolExecutor
from stream_harness.loop.messages import (
    Message,
    PartialAssistant,
    ToolResult,
    ToolResultKind,
    estimate_tokens,
    prompt_tokens,
    tool_calls_of,
)
from stream_harness.loop.retry import RetryPolicy, decide_delay
from stream_harness.loop.tools import (
    CANCELLED,
    DOOM_LOOP_DENIED,
    NOT_EXECUTED,
    PERMISSION_DENIED,
    PERMISSION_REJECTED,
    TOOL_RAISED,
    TRUNCATED,
    UNKNOWN_TOOL,
    DoomLoopAction,
    DoomLoopTracker,
    PermissionAction,
    PermissionAnswer,
    ToolOutcome,
    ToolSpec,
)

STREAM_ENDED = "stream ended without a terminal event"
"""error_message of a response whose body ended before its ``done``/``error`` event."""

__all__ = [
    "AgentLoop",
    "AskPermission",
    "CancelPermission",
    "CancelRequest",
    "CancelTimer",
    "CancelTool",
    "Command",
    "LoopConfig",
    "LoopState",
    "Output",
    "SendRequest",
    "StartTimer",
    "StartTool",
]


CompactionCount: TypeAlias = Literal["prompt", "input", "total"]


class LoopState(StrEnum):
    IDLE = "idle"
    STREAMING = "streaming"  # a request is open; in eager mode tools may run too
    RETRY_WAIT = "retry_wait"  # the abortable sleep before a resend
    EXECUTING = "executing"  # the response is committed; its tools run
    DONE = "done"


@dataclass(frozen=True)
class LoopConfig:
    model: str = "model"
    fallback_model: str | None = None
    fallback_after: int = 3
    """Consecutive ``overloaded`` errors before switching to ``fallback_model`` (Claude Code's
    MAX_529_RETRIES, research/seed-systems.md C.4)."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    concurrency_limit: int = 10
    """Claude Code's default cap (CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY, C.1)."""
    doom_loop: DoomLoopAction = "ask"
    """The gate's rule for the permission ``doom_loop`` (opencode's default: ask)."""
    doom_loop_threshold: int = 3
    """opencode's DOOM_LOOP_THRESHOLD (A.3)."""
    continue_on_deny: bool = False
    permissions: Mapping[str, PermissionAction] = field(default_factory=lambda: {"*": "allow"})
    """The gate's rules per tool name, ``*`` for any other tool (opencode's ruleset; its
    default agent allows every tool). ``ask`` asks the host for each call."""
    """opencode's ``continue_loop_on_deny``: a denied doom loop stops the run unless set."""
    context_window: int | None = None
    compaction_threshold: float = 0.9
    """seeds/000 ``finish``: compact when the last response's input tokens exceed
    ``limit.context * 0.9``."""
    compaction_tokens: CompactionCount = "prompt"
    """What is compared with the threshold after a response: ``prompt`` (input + cache read +
    cache write: the request's whole input, :func:`~stream_harness.loop.messages.prompt_tokens`),
    ``input`` (the contract's uncached input only) or ``total`` (every counter)."""
    pre_request_compaction: bool = True
    """Also compact before a request whose estimated input exceeds the threshold (Claude
    Code's auto-compact before streaming, seeds/003 ``O$``)."""
    estimate: Callable[[Sequence[Message]], int] = estimate_tokens
    """The estimated input of a request carrying a history (pre-request compaction)."""
    eager_tools: bool = False
    """Start a call while the response still streams, once a later event shows the call is
    complete (Claude Code's StreamingToolExecutor, C.2). Off: calls start after the stream."""
    max_turns: int = 100

    def __post_init__(self) -> None:
        if self.concurrency_limit < 1:
            raise ValueError("concurrency_limit must be at least 1")
        if self.fallback_after < 1 or self.doom_loop_threshold < 1 or self.max_turns < 1:
            raise ValueError("fallback_after, doom_loop_threshold and max_turns must be at least 1")
        if not 0 < self.compaction_threshold <= 1:
            raise ValueError("compaction_threshold must be in (0, 1]")


# -- commands -------------------------------------------------------------------------


@dataclass(frozen=True)
class SendRequest:
    request_id: int
    model: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]


@dataclass(frozen=True)
class CancelRequest:
    request_id: int


@dataclass(frozen=True)
class StartTool:
    key: str
    call: ToolCall
    context: dict[str, Any]


@dataclass(frozen=True)
class CancelTool:
    key: str


@dataclass(frozen=True)
class StartTimer:
    timer_id: int
    delay: float


@dataclass(frozen=True)
class CancelTimer:
    timer_id: int


@dataclass(frozen=True)
class AskPermission:
    """Ask the user whether a call may run (seed 000's ``PermissionNext.ask``); the host
    answers with :meth:`AgentLoop.permission_answer`. ``permission`` is ``doom_loop`` or the
    tool's name; ``count`` is the doom-loop streak (0 for a tool permission)."""

    ask_id: int
    key: str
    permission: str
    tool_call_id: str
    name: str
    arguments: dict[str, Any]
    count: int = 0


@dataclass(frozen=True)
class CancelPermission:
    """The question is moot (abort, or its attempt was discarded); any answer is ignored."""

    ask_id: int


Command: TypeAlias = (
    SendRequest
    | CancelRequest
    | StartTool
    | CancelTool
    | StartTimer
    | CancelTimer
    | AskPermission
    | CancelPermission
)
Output: TypeAlias = AgentEvent | Command
AskFn: TypeAlias = Callable[[AskPermission], PermissionAnswer]
"""A host that answers at once; without one the loop emits :class:`AskPermission` and waits."""
Compactor: TypeAlias = Callable[[Sequence[Message]], Sequence[Message]]


# -- per-attempt and per-turn bookkeeping -------------------------------------------------


@dataclass
class _Attempt:
    request_id: int
    number: int
    model: str
    partial: PartialAssistant = field(default_factory=PartialAssistant)
    message_started: bool = False
    finished: bool = False
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    tool_indices: list[int] = field(default_factory=list)
    held: dict[int, ToolCall] = field(default_factory=dict)
    released: int = 0
    started_tools: bool = False
    doom_snapshot: DoomLoopTracker = field(default_factory=DoomLoopTracker)


@dataclass
class _Gate:
    """A started call on its way through the permission gate: the doom-loop question first
    (when its streak reached the threshold), then the tool's own rule."""

    key: str
    position: int
    call: ToolCall
    context: dict[str, Any]
    batch: int
    safe: bool
    doom: int
    ask_id: int | None = None
    stage: Literal["doom_loop", "tool", "run"] = "doom_loop"


@dataclass
class _Turn:
    index: int
    executor: ToolExecutor
    attempts: int = 0
    retries: int = 0
    message: AssistantMessage | None = None
    calls: list[ToolCall] = field(default_factory=list)
    keys: dict[str, int] = field(default_factory=dict)
    calls_by_position: dict[int, ToolCall] = field(default_factory=dict)
    immediate: dict[str, ToolResult] = field(default_factory=dict)
    running: dict[str, int] = field(default_factory=dict)
    results: dict[int, ToolResult] = field(default_factory=dict)
    committed: int = 0
    blocked: bool = False
    compaction: Compaction | None = None
    doom: dict[str, int] = field(default_factory=dict)
    """key -> doom-loop streak, for calls the doom-loop question applies to."""
    gates: dict[str, _Gate] = field(default_factory=dict)
    """Calls the executor started that wait for a permission answer."""
    ended: bool = False

    def calls_by_key(self, key: str) -> ToolCall:
        return self.calls_by_position[self.keys[key]]


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
        self._ask = ask
        self._compactor = compactor
        self._always: set[str] = set()
        self._always_tools: set[str] = set()
        self._ask_id = 0
        self._compacted = False
        """A compaction happened and no response has been committed since: the next request
        is not checked again, and an overflow error then ends the run (never twice for one
        cause)."""
        self._doom = DoomLoopTracker()
        self._overloads = 0
        self._request_id = 0
        self._timer_id = 0
        self._attempt: _Attempt | None = None
        self._turn: _Turn | None = None
        self._out: list[Output] = []

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
                self._release(attempt)
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
        turn = self._turn
        if self.state is not LoopState.DONE and turn is not None and key in turn.running:
            call = turn.calls_by_key(key)
            self._emit(
                ToolExecutionUpdate(
                    time=self._now(), turn=self.turn, key=key, tool_call_id=call.id, data=data
                )
            )
        return self._drain()

    def tool_finished(self, key: str, outcome: ToolOutcome) -> list[Output]:
        """A started tool ended. Ignored for a key that is not running (cancelled, unknown,
        already finished): after an abort nothing can add a result (L11)."""
        turn = self._turn
        if self.state is LoopState.DONE or turn is None or key not in turn.running:
            return self._drain()
        position = turn.running.pop(key)
        call = turn.calls_by_key(key)
        if outcome.failed:
            text = TOOL_RAISED.format(type=outcome.error_type, message=outcome.error_message)
            result = ToolResult(
                tool_call_id=call.id, name=call.name, content=text, is_error=True, kind="error"
            )
        else:
            result = ToolResult(tool_call_id=call.id, name=call.name, content=outcome.value)
        self._emit(
            ToolExecutionEnd(
                time=self._now(),
                turn=self.turn,
                key=key,
                tool_call_id=call.id,
                name=call.name,
                outcome="error" if outcome.failed else "ok",
            )
        )
        self._record(turn, position, result)
        modifiers = () if outcome.failed else outcome.modifiers
        self._run(turn, turn.executor.finish(key, modifiers))
        self._advance(turn)
        return self._drain()

    def _fail_attempt(
        self, attempt: _Attempt, message: str, info: ErrorInfo, *, network: bool
    ) -> None:
        self._ensure_message_started(attempt)
        attempt.finished = True
        partial = attempt.partial.snapshot("error", message)
        event = ErrorEvent(reason="error", error_message=message, message=partial, error=info)
        self._on_error(attempt, event, network=network)

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
            self._out.append(CancelTimer(self._timer_id))
            assert turn is not None
            self._end_turn(turn, "stop", "aborted")
        elif self.state is LoopState.STREAMING:
            attempt = self._attempt
            assert attempt is not None and turn is not None
            self._out.append(CancelRequest(attempt.request_id))
            attempt.finished = True
            self._ensure_message_started(attempt)
            self._close_turn(turn, attempt.partial.aborted(), "cancelled", "aborted")
        else:
            assert turn is not None
            self._cancel_running(turn)
            self._fill_results(turn, "cancelled")
            self._advance(turn, end_reason="aborted")
        return self._drain()

    # -- turn flow ------------------------------------------------------------------------

    def _begin_turn(self) -> None:
        self.turn += 1
        turn = self._turn = _Turn(
            index=self.turn, executor=ToolExecutor(self.config.concurrency_limit, self.context)
        )
        self._emit(TurnStart(time=self._now(), turn=self.turn, model=self.model))
        window = self.config.context_window
        if window and self.config.pre_request_compaction and not self._compacted:
            estimate = self.config.estimate(self.history)
            if estimate > self.config.compaction_threshold * window:
                # Pre-request compaction: the request would not fit, so compact before it.
                # Once per cause: right after a compaction no request is checked again (the
                # compactor's output is what the host chose to send).
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
        self._attempt = _Attempt(
            request_id=self._request_id,
            number=turn.attempts,
            model=self.model,
            doom_snapshot=copy.copy(self._doom),
        )
        self.state = LoopState.STREAMING
        self._out.append(
            SendRequest(
                request_id=self._request_id,
                model=self.model,
                messages=tuple(self.history),
                tools=tuple(self.tools.values()),
            )
        )

    def _on_done(self, attempt: _Attempt, event: DoneEvent) -> None:
        turn = self._turn
        assert turn is not None
        self._overloads = 0
        message = event.message
        self._commit_message(turn, message)
        if event.reason == "length" and turn.calls:
            for position in range(attempt.released, len(turn.calls)):
                call = turn.calls[position]
                text = TRUNCATED.format(name=call.name)
                self._record(
                    turn,
                    position,
                    ToolResult(
                        tool_call_id=call.id,
                        name=call.name,
                        content=text,
                        is_error=True,
                        kind="truncated",
                    ),
                )
        else:
            for position in range(attempt.released, len(turn.calls)):
                self._enqueue(turn, attempt, position, turn.calls[position])
        turn.compaction = self._compaction_for(message)
        self.state = LoopState.EXECUTING
        self._run(turn, turn.executor.close_input())
        self._advance(turn)

    def _on_error(self, attempt: _Attempt, event: ErrorEvent, *, network: bool = False) -> None:
        turn = self._turn
        assert turn is not None
        if event.reason == "aborted":
            # The provider (or its client) says the request was aborted: the same end as ours.
            self.aborted = True
            self._close_turn(turn, event.message, "cancelled", "aborted")
            return
        info = event.error or classify(message=event.error_message)
        self._overloads = self._overloads + 1 if info.kind == "overloaded" else 0
        if attempt.started_tools:
            # A tool already runs (eager mode): resending would run it twice (opencode's
            # ProviderRetryUnsafeError). The response is history, with its error.
            if info.kind == "overflow":
                turn.compaction = self._compaction_event("overflow", None)
            self._close_turn(
                turn, event.message, "not_executed", "error", error=event.error_message
            )
            return
        if info.kind == "overflow" and not self._compacted:
            self._discard(attempt, event.message)
            turn.compaction = self._compaction_event("overflow", None)
            self._end_turn(turn, "compact", "compact")
            return
        if info.kind == "overflow":
            # The request right after a compaction overflows too: compacting again would
            # compact for the same cause (and loop forever with a compactor that cannot
            # shrink the context). The run ends in error, as Claude Code's prompt_too_long.
            self._close_turn(
                turn, event.message, "not_executed", "error", error=event.error_message
            )
            return
        fallback = self.config.fallback_model
        if (
            info.kind == "overloaded"
            and fallback
            and fallback != self.model
            and self._overloads >= self.config.fallback_after
        ):
            self._discard(attempt, event.message)
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
            return
        policy = self.config.retry
        if (
            policy.retryable(info, event.error_message, network=network)
            and turn.retries < policy.max_retries
        ):
            self._retry(turn, attempt, event, info)
            return
        self._close_turn(turn, event.message, "not_executed", "error", error=event.error_message)

    def _retry(self, turn: _Turn, attempt: _Attempt, event: ErrorEvent, info: ErrorInfo) -> None:
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
        self._discard(attempt, event.message)
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
        self._out.append(StartTimer(self._timer_id, decision.delay))
        self.state = LoopState.RETRY_WAIT

    def _discard(self, attempt: _Attempt, message: AssistantMessage) -> None:
        """End a failed attempt without a trace in history (L7): its message is shown as not
        committed, and whatever it queued (only calls the loop answered itself, since a
        started tool forbids a discard) is forgotten, doom-loop streaks included."""
        turn = self._turn
        assert turn is not None
        self._emit(
            MessageEnd(
                time=self._now(), turn=self.turn, role="assistant", message=message, committed=False
            )
        )
        self._doom = attempt.doom_snapshot
        for gate in turn.gates.values():
            assert gate.ask_id is not None
            self._out.append(CancelPermission(gate.ask_id))
        turn.gates.clear()
        turn.doom.clear()
        turn.executor = ToolExecutor(self.config.concurrency_limit, self.context)
        turn.keys.clear()
        turn.calls_by_position.clear()
        turn.immediate.clear()
        turn.results.clear()
        turn.blocked = False

    def _close_turn(
        self,
        turn: _Turn,
        message: AssistantMessage,
        fill: ToolResultKind,
        reason: EndReason,
        *,
        error: str | None = None,
    ) -> None:
        """Commit a response that ended the turn (aborted, or failed for good), give every call
        in it a result, and end the run."""
        self._commit_message(turn, message)
        self._cancel_running(turn)
        self._fill_results(turn, fill, error=error)
        self.state = LoopState.EXECUTING
        self._advance(turn, end_reason=reason)

    def _commit_message(self, turn: _Turn, message: AssistantMessage) -> None:
        self._emit(
            MessageEnd(
                time=self._now(), turn=self.turn, role="assistant", message=message, committed=True
            )
        )
        self.history.append(message)
        turn.message = message
        turn.calls = tool_calls_of(message)
        self._compacted = False

    def _advance(self, turn: _Turn, end_reason: EndReason | None = None) -> None:
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
        if end_reason is not None:
            signal: TurnSignal = (
                "compact" if turn.compaction is not None and end_reason == "error" else "stop"
            )
            self._end_turn(turn, signal, "compact" if signal == "compact" else end_reason)
        elif turn.compaction is not None:
            self._end_turn(turn, "compact", "compact")
        elif turn.blocked and not self.config.continue_on_deny:
            self._end_turn(turn, "stop", "blocked")
        elif turn.calls:
            self._end_turn(turn, "continue", None)
        else:
            self._end_turn(turn, "stop", "completed")

    def _end_turn(self, turn: _Turn, signal: TurnSignal, reason: EndReason | None) -> None:
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
        error = (
            turn.message.error_message if reason == "error" and turn.message is not None else None
        )
        self._end_agent(reason, error)

    def _end_agent(self, reason: EndReason, error: str | None = None) -> None:
        self.state = LoopState.DONE
        self._emit(AgentEnd(time=self._now(), reason=reason, turns=self.turn, error_message=error))

    # -- tool calls ---------------------------------------------------------------------------

    def _release(self, attempt: _Attempt) -> None:
        """Eager mode: queue the held calls that are next in call order."""
        turn = self._turn
        assert turn is not None
        while attempt.released in attempt.held:
            call = attempt.held.pop(attempt.released)
            self._enqueue(turn, attempt, attempt.released, call)
            attempt.released += 1

    def _enqueue(self, turn: _Turn, attempt: _Attempt, position: int, call: ToolCall) -> None:
        key = f"{turn.index}.{attempt.number}.{position}"
        turn.keys[key] = position
        turn.calls_by_position[position] = call
        job = self._prepare(turn, key, call, position)
        self._run(turn, turn.executor.add(job))

    def _prepare(self, turn: _Turn, key: str, call: ToolCall, position: int) -> Job:
        """Lookup and schema, in that order (research/seed-systems.md E.2); a call that fails
        either is answered at once. Every call counts toward doom-loop streaks (in call
        order); the doom-loop question itself is the permission gate's, asked when the call
        would start (seed 000 asks it at ``tool-call``, before the tool runs)."""
        streak = self._doom.observe(call.name, call.arguments)
        spec = self.tools.get(call.name)
        problem: ToolResult | None = None
        if spec is None:
            text = UNKNOWN_TOOL.format(name=call.name)
            problem = ToolResult(
                tool_call_id=call.id,
                name=call.name,
                content=text,
                is_error=True,
                kind="unknown_tool",
            )
        elif (invalid := spec.validate(call.arguments)) is not None:
            problem = ToolResult(
                tool_call_id=call.id,
                name=call.name,
                content=invalid,
                is_error=True,
                kind="invalid_arguments",
            )
        if problem is not None:
            turn.immediate[key] = problem
            return Job(key=key, position=position, safe=False, immediate=True)
        assert spec is not None
        if streak >= self.config.doom_loop_threshold:
            turn.doom[key] = streak
        return Job(key=key, position=position, safe=spec.is_concurrency_safe(call.arguments))

    # -- the permission gate --------------------------------------------------------------

    def _rule(self, name: str) -> PermissionAction:
        rules = self.config.permissions
        return rules.get(name, rules.get("*", "allow"))

    def _gate(self, turn: _Turn, gate: _Gate) -> list[Started]:
        """Take ``gate`` as far as it goes: start the tool, refuse it (its executor slot is
        then free, and the calls that may start now are returned), or stop at a question
        the host answers later with :meth:`permission_answer`."""
        call = gate.call
        while True:
            if gate.stage == "doom_loop":
                if not gate.doom:
                    gate.stage = "tool"
                    continue
                action = self.config.doom_loop
                if action == "allow" or call.name in self._always:
                    self._emit_doom(gate, action, "allow")
                    gate.stage = "tool"
                    continue
                if action == "deny":
                    return self._refuse_doom(turn, gate, action, "deny")
                answer = self._question(turn, gate, "doom_loop", gate.doom)
            elif gate.stage == "tool":
                rule = self._rule(call.name)
                if rule == "allow" or call.name in self._always_tools:
                    gate.stage = "run"
                    continue
                if rule == "deny":
                    return self._refuse_tool(turn, gate, rule, "deny")
                answer = self._question(turn, gate, call.name, 0)
            else:
                self._start(turn, gate)
                return []
            if answer is None:
                return []
            refused = self._apply_answer(turn, gate, answer)
            if refused is not None:
                return refused

    def _question(
        self, turn: _Turn, gate: _Gate, permission: str, count: int
    ) -> PermissionAnswer | None:
        """Ask: the host's ``ask`` function answers at once; without one the loop emits
        :class:`AskPermission` and returns None (it waits for :meth:`permission_answer`)."""
        self._ask_id += 1
        call = gate.call
        request = AskPermission(
            ask_id=self._ask_id,
            key=gate.key,
            permission=permission,
            tool_call_id=call.id,
            name=call.name,
            arguments=copy.deepcopy(call.arguments),
            count=count,
        )
        if self._ask is not None:
            return self._ask(request)
        gate.ask_id = self._ask_id
        turn.gates[gate.key] = gate
        self._out.append(request)
        return None

    def permission_answer(self, ask_id: int, answer: PermissionAnswer) -> list[Output]:
        """The host's answer to an :class:`AskPermission`. Ignored when the question is moot
        (unknown id, an abort, a discarded attempt, the end of the run)."""
        turn = self._turn
        if self.state is LoopState.DONE or turn is None:
            return self._drain()
        gate = next((g for g in turn.gates.values() if g.ask_id == ask_id), None)
        if gate is None:
            return self._drain()
        gate.ask_id = None
        del turn.gates[gate.key]
        refused = self._apply_answer(turn, gate, answer)
        self._run(turn, refused if refused is not None else self._gate(turn, gate))
        self._advance(turn)
        return self._drain()

    def _apply_answer(
        self, turn: _Turn, gate: _Gate, answer: PermissionAnswer
    ) -> list[Started] | None:
        """Apply the user's answer to the gate's current question: None when the call passes
        this stage, else the refusal's freed slots."""
        name = gate.call.name
        if gate.stage == "doom_loop":
            if answer == "deny":
                return self._refuse_doom(turn, gate, "ask", answer)
            if answer == "always":
                self._always.add(name)
            self._emit_doom(gate, "ask", answer)
            gate.stage = "tool"
            return None
        if answer == "deny":
            return self._refuse_tool(turn, gate, "ask", answer)
        if answer == "always":
            self._always_tools.add(name)
        self._emit_permission(gate, "ask", answer)
        gate.stage = "run"
        return None

    def _emit_doom(self, gate: _Gate, action: DoomLoopAction, decision: PermissionAnswer) -> None:
        call = gate.call
        self._emit(
            DoomLoop(
                time=self._now(),
                turn=self.turn,
                key=gate.key,
                tool_call_id=call.id,
                name=call.name,
                count=gate.doom,
                action=action,
                decision=decision,
            )
        )

    def _emit_permission(
        self, gate: _Gate, action: PermissionAction, decision: PermissionAnswer
    ) -> None:
        call = gate.call
        self._emit(
            Permission(
                time=self._now(),
                turn=self.turn,
                key=gate.key,
                tool_call_id=call.id,
                name=call.name,
                action=action,
                decision=decision,
            )
        )

    def _refuse_doom(
        self, turn: _Turn, gate: _Gate, action: DoomLoopAction, decision: PermissionAnswer
    ) -> list[Started]:
        # seed 000: a refused doom-loop question throws out of the stream handler, the
        # message gets an error and the loop stops (research/seed-systems.md A.3).
        self._emit_doom(gate, action, decision)
        turn.blocked = True
        text = DOOM_LOOP_DENIED.format(name=gate.call.name, count=gate.doom)
        return self._refuse(turn, gate, text, "doom_loop_denied")

    def _refuse_tool(
        self, turn: _Turn, gate: _Gate, action: PermissionAction, decision: PermissionAnswer
    ) -> list[Started]:
        self._emit_permission(gate, action, decision)
        if action == "ask":
            # seed 000 tool-error: a PermissionNext.RejectedError sets ``blocked`` (the loop
            # returns "stop"); a rule's DeniedError does not (research/seed-systems.md A.1).
            turn.blocked = True
            return self._refuse(turn, gate, PERMISSION_REJECTED, "permission_rejected")
        return self._refuse(turn, gate, PERMISSION_DENIED, "permission_denied")

    def _refuse(self, turn: _Turn, gate: _Gate, text: str, kind: ToolResultKind) -> list[Started]:
        call = gate.call
        result = ToolResult(
            tool_call_id=call.id, name=call.name, content=text, is_error=True, kind=kind
        )
        self._record(turn, gate.position, result)
        return turn.executor.finish(gate.key)

    def _start(self, turn: _Turn, gate: _Gate) -> None:
        key, call = gate.key, gate.call
        turn.running[key] = gate.position
        if self.state is LoopState.STREAMING and self._attempt is not None:
            self._attempt.started_tools = True
        self._emit(
            ToolExecutionStart(
                time=self._now(),
                turn=self.turn,
                key=key,
                tool_call_id=call.id,
                name=call.name,
                arguments=call.arguments,
                context=gate.context,
                batch=gate.batch,
                safe=gate.safe,
            )
        )
        # Copies: a tool that mutates what it was given must not change history or the
        # context the next batch sees.
        self._out.append(
            StartTool(key=key, call=call.model_copy(deep=True), context=copy.deepcopy(gate.context))
        )

    def _run(self, turn: _Turn, started: list[Started]) -> None:
        """Carry out what the executor started, in order; a call the gate refuses frees its
        slot at once, and what that lets start is carried out in the same pass."""
        work = list(started)
        while work:
            item = work.pop(0)
            key = item.job.key
            position = turn.keys[key]
            if item.job.immediate:
                self._record(turn, position, turn.immediate.pop(key))
                continue
            gate = _Gate(
                key=key,
                position=position,
                call=turn.calls_by_position[position],
                context=item.context,
                batch=item.batch,
                safe=item.job.safe,
                doom=turn.doom.get(key, 0),
            )
            work.extend(self._gate(turn, gate))

    def _record(self, turn: _Turn, position: int, result: ToolResult) -> None:
        if position in turn.results:  # pragma: no cover - guarded by the callers
            raise AssertionError(f"second result for call {position}")
        turn.results[position] = result

    def _cancel_running(self, turn: _Turn) -> None:
        """Cancel every started call: running tools, and calls waiting for a permission
        answer (they never ran, so no tool event; their question is withdrawn)."""
        for key in turn.executor.cancel():
            gate = turn.gates.pop(key, None)
            if gate is not None:
                assert gate.ask_id is not None
                self._out.append(CancelPermission(gate.ask_id))
                result = ToolResult(
                    tool_call_id=gate.call.id,
                    name=gate.call.name,
                    content=CANCELLED,
                    is_error=True,
                    kind="cancelled",
                )
                self._record(turn, gate.position, result)
                continue
            position = turn.running.pop(key)
            call = turn.calls_by_position[position]
            self._out.append(CancelTool(key))
            self._emit(
                ToolExecutionEnd(
                    time=self._now(),
                    turn=self.turn,
                    key=key,
                    tool_call_id=call.id,
                    name=call.name,
                    outcome="cancelled",
                )
            )
            self._record(
                turn,
                position,
                ToolResult(
                    tool_call_id=call.id,
                    name=call.name,
                    content=CANCELLED,
                    is_error=True,
                    kind="cancelled",
                ),
            )

    def _fill_results(self, turn: _Turn, kind: ToolResultKind, *, error: str | None = None) -> None:
        """Give every call of the committed message that has no result one (L1)."""
        for position, call in enumerate(turn.calls):
            if position in turn.results:
                continue
            if kind == "cancelled":
                text = CANCELLED
            else:
                text = NOT_EXECUTED.format(name=call.name, error=error or "error")
            self._record(
                turn,
                position,
                ToolResult(
                    tool_call_id=call.id, name=call.name, content=text, is_error=True, kind=kind
                ),
            )

    # -- compaction -------------------------------------------------------------------------

    def _compaction_for(self, message: AssistantMessage) -> Compaction | None:
        """Threshold first (usage above ``compaction_threshold`` of the window), then what the
        provider reports (an overflow stop reason, pi's silent and truncation overflow)."""
        window = self.config.context_window
        usage = message.usage
        count = self.config.compaction_tokens
        if count == "prompt":
            used = prompt_tokens(message)
        elif count == "input":
            used = usage.input
        else:
            used = usage.total or usage.input + usage.output + usage.cache_read + usage.cache_write
        if window and used > self.config.compaction_threshold * window:
            return self._compaction_event("threshold", used)
        if is_context_overflow(message, window):
            return self._compaction_event("overflow", used)
        return None

    def _compaction_event(self, reason: CompactionReason, used: int | None) -> Compaction:
        return Compaction(
            time=self._now(),
            turn=self.turn,
            reason=reason,
            used=used,
            context_window=self.config.context_window,
            threshold=self.config.compaction_threshold,
        )

    # -- helpers ------------------------------------------------------------------------------

    def _current(self, request_id: int) -> _Attempt | None:
        attempt = self._attempt
        if (
            self.state is not LoopState.STREAMING
            or attempt is None
            or attempt.request_id != request_id
            or attempt.finished
        ):
            return None
        return attempt

    def _ensure_message_started(self, attempt: _Attempt) -> None:
        if not attempt.message_started:
            attempt.message_started = True
            self._emit(
                MessageStart(
                    time=self._now(), turn=self.turn, role="assistant", attempt=attempt.number
                )
            )

    def _now(self) -> float:
        return self.clock.now()

    def _emit(self, event: AgentEvent) -> None:
        self._out.append(event)

    def _drain(self) -> list[Output]:
        out, self._out = self._out, []
        return out
