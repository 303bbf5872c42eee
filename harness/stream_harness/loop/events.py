"""Agent events: what the loop tells its host, one small typed object each.

The names are pi's ``AgentEvent`` (research/seed-systems.md B.3) plus ``retry``,
``fallback``, ``doom_loop`` and ``compaction`` for the decisions pi takes outside its loop.
Every event carries the virtual ``time`` it was emitted at, so that a scenario's log shows
when things happened without a wall clock. The grammar (which event may follow which) is in
specs/agent-loop.md and checked by :mod:`stream_harness.loop.invariants`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from stream_harness.contract.events import AssistantMessage, ErrorKind, Event, StopReason, ToolCall
from stream_harness.loop.messages import ToolResult

TurnSignal: TypeAlias = Literal["continue", "stop", "compact"]
EndReason: TypeAlias = Literal["completed", "error", "aborted", "compact", "blocked", "max_turns"]
CompactionReason: TypeAlias = Literal["threshold", "pre_request", "overflow"]
"""Seed 000's three paths: the last response's input above the threshold, a request whose
estimated input would be (before sending it), a context-overflow error."""
ExecutionOutcome: TypeAlias = Literal["ok", "error", "cancelled"]


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    time: float = 0.0


class _TurnEvent(_Event):
    """An event inside a turn says which. ``type`` is declared here, ahead of ``turn``, so
    that every event's JSON line starts ``time``, ``type`` (each event narrows it)."""

    type: str
    turn: int


class _CallEvent(_TurnEvent):
    """An event about one tool call names it the same way (:func:`call_fields`)."""

    key: str
    tool_call_id: str
    name: str


class AgentStart(_Event):
    type: Literal["agent_start"] = "agent_start"


class AgentEnd(_Event):
    type: Literal["agent_end"] = "agent_end"
    reason: EndReason
    turns: int
    error_message: str | None = None


class TurnStart(_TurnEvent):
    type: Literal["turn_start"] = "turn_start"
    model: str


class TurnEnd(_TurnEvent):
    type: Literal["turn_end"] = "turn_end"
    signal: TurnSignal
    stop_reason: StopReason | None = None
    """Of the assistant message committed in this turn; None when none was (a retry wait or
    an overflow was interrupted)."""
    tool_results: int = 0


class MessageStart(_TurnEvent):
    type: Literal["message_start"] = "message_start"
    role: Literal["assistant", "tool_result"]
    attempt: int | None = None
    """For assistant messages: 1 for the first request of the turn, +1 per retry or fallback."""


class MessageUpdate(_TurnEvent):
    type: Literal["message_update"] = "message_update"
    event: Event


class MessageEnd(_TurnEvent):
    type: Literal["message_end"] = "message_end"
    role: Literal["assistant", "tool_result"]
    message: AssistantMessage | ToolResult
    committed: bool = True
    """False for the message of a failed attempt that the loop discards (retry, fallback,
    overflow): it was shown, it is not history (L7)."""


class ToolExecutionStart(_CallEvent):
    type: Literal["tool_execution_start"] = "tool_execution_start"
    arguments: dict[str, Any]
    context: dict[str, Any]
    batch: int
    """The tool's batch, numbered per turn from 0 (L3, L4)."""
    safe: bool = False
    """Whether this call was judged concurrency-safe (from its parsed input, seed 003)."""


class ToolExecutionUpdate(_TurnEvent):
    type: Literal["tool_execution_update"] = "tool_execution_update"
    key: str
    tool_call_id: str
    data: Any = None


class ToolExecutionEnd(_CallEvent):
    type: Literal["tool_execution_end"] = "tool_execution_end"
    outcome: ExecutionOutcome


class Retry(_TurnEvent):
    type: Literal["retry"] = "retry"
    retry: int
    """1 for the first retry of this turn's request."""
    delay: float
    hinted: bool
    """True when the delay is the server's (retry-after-ms, retry-after, ...), False for backoff."""
    next_time: float
    error_kind: ErrorKind
    status: int | None = None
    error_message: str = ""


class Fallback(_TurnEvent):
    type: Literal["fallback"] = "fallback"
    from_model: str
    to_model: str
    overloads: int


class DoomLoop(_CallEvent):
    type: Literal["doom_loop"] = "doom_loop"
    count: int
    action: Literal["ask", "deny", "allow"]
    decision: Literal["allow", "deny", "always"]


class Permission(_CallEvent):
    """The permission gate decided on a call whose rule is not ``allow`` (seed 000:
    ``PermissionNext.ask``). ``deny`` after ``ask`` is the user's rejection, which blocks the
    run; ``deny`` by rule is a refusal the model can work around."""

    type: Literal["permission"] = "permission"
    action: Literal["ask", "deny", "allow"]
    decision: Literal["allow", "deny", "always"]


class Compaction(_TurnEvent):
    type: Literal["compaction"] = "compaction"
    reason: CompactionReason
    used: int | None = None
    context_window: int | None = None
    threshold: float | None = None


AgentEvent: TypeAlias = Annotated[
    AgentStart
    | AgentEnd
    | TurnStart
    | TurnEnd
    | MessageStart
    | MessageUpdate
    | MessageEnd
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
    | Retry
    | Fallback
    | DoomLoop
    | Permission
    | Compaction,
    Field(discriminator="type"),
]

AGENT_EVENT_TYPES = (
    AgentStart,
    AgentEnd,
    TurnStart,
    TurnEnd,
    MessageStart,
    MessageUpdate,
    MessageEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    ToolExecutionEnd,
    Retry,
    Fallback,
    DoomLoop,
    Permission,
    Compaction,
)

AGENT_EVENT_ADAPTER: TypeAdapter[AgentEvent] = TypeAdapter(AgentEvent)


def call_fields(time: float, turn: int, key: str, call: ToolCall) -> dict[str, Any]:
    """The fields every event about one tool call carries (its tool execution events, the
    gate's ``doom_loop`` and ``permission``), so that they name a call the same way."""
    return {"time": time, "turn": turn, "key": key, "tool_call_id": call.id, "name": call.name}


def agent_event_to_json(event: AgentEvent) -> str:
    """One compact JSON line, as `stream-harness loop` prints it."""
    return event.model_dump_json()


def agent_event_from_json(line: str | bytes) -> AgentEvent:
    return AGENT_EVENT_ADAPTER.validate_json(line)
