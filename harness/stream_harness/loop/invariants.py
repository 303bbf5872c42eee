"""Checks of the loop's invariants (specs/agent-loop.md, L1-L7, L10-L11) on an event log.

Only the agent events are needed (and the final history for L1 on history), so every
scenario and every step of the stateful tests runs the same checker. Like
stream_harness.contract.rules, it never raises on a malformed log: finding them is its job.
``complete=False`` checks a prefix of a run that is still going.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from stream_harness.contract.events import TERMINAL_TYPES, AssistantMessage, Event
from stream_harness.contract.rules import Violation, check_contract
from stream_harness.loop.events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    Fallback,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    Retry,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from stream_harness.loop.messages import Message, ToolResult, tool_calls_of

__all__ = ["Violation", "check_events", "check_history"]

_Bad: TypeAlias = Callable[[str, str, int | None], None]
SafeTools: TypeAlias = Mapping[str, bool] | Callable[[str, Mapping[str, Any]], bool]
"""The checker's oracle for L3: safe tools by name, or a call's safety from its name and
input (seed 003 decides per call, ``isConcurrencySafe(parsed)``)."""


def _safe(safe_tools: SafeTools, event: ToolExecutionStart) -> bool:
    if isinstance(safe_tools, Mapping):
        return bool(safe_tools.get(event.name, False))
    return safe_tools(event.name, event.arguments)


@dataclass
class _TurnState:
    number: int
    open_message: str | None = None  # "assistant" | "tool_result"
    updates: list[Event] = field(default_factory=list)
    update_start: int = 0
    attempt_tools_started: bool = False
    last_assistant_end: MessageEnd | None = None
    committed: AssistantMessage | None = None
    results: list[ToolResult] = field(default_factory=list)
    running: dict[str, ToolExecutionStart] = field(default_factory=dict)
    started: set[str] = field(default_factory=set)
    batch: int = -1
    batch_context: dict[str, object] | None = None


def check_events(
    events: Sequence[AgentEvent],
    *,
    complete: bool = True,
    concurrency_limit: int | None = None,
    safe_tools: SafeTools | None = None,
) -> list[Violation]:
    out: list[Violation] = []

    def bad(rule: str, message: str, index: int | None) -> None:
        out.append(Violation(rule, message, index))

    started = ended = False
    turn: _TurnState | None = None
    turns = 0
    for i, event in enumerate(events):
        if ended:
            bad("L6", f"{event.type} after agent_end", i)
            continue
        if isinstance(event, AgentStart):
            if started:
                bad("L6", "second agent_start", i)
            started = True
            continue
        if not started:
            bad("L6", f"{event.type} before agent_start", i)
            started = True
        if isinstance(event, AgentEnd):
            if turn is not None:
                bad("L6", f"agent_end inside turn {turn.number} (no turn_end)", i)
            ended = True
            continue
        if isinstance(event, TurnStart):
            if turn is not None:
                bad("L6", f"turn_start inside turn {turn.number}", i)
            turns += 1
            if event.turn != turns:
                bad("L6", f"turn_start numbered {event.turn}, expected {turns}", i)
            turn = _TurnState(number=event.turn)
            continue
        if turn is None:
            bad("L6", f"{event.type} outside a turn", i)
            continue
        if isinstance(event, TurnEnd):
            _check_turn_end(turn, event, i, bad)
            turn = None
            continue
        _check_in_turn(turn, event, i, bad, concurrency_limit, safe_tools)
    if complete and started and not ended:
        bad("L6", "no agent_end", None)
    if complete and not started:
        bad("L6", "no agent_start", None)
    return out


def _check_in_turn(
    turn: _TurnState,
    event: AgentEvent,
    i: int,
    bad: _Bad,
    concurrency_limit: int | None,
    safe_tools: SafeTools | None,
) -> None:
    """One event inside an open turn (other than its turn_end)."""
    if isinstance(event, MessageStart):
        if turn.open_message is not None:
            bad("L6", f"message_start while a {turn.open_message} message is open", i)
        turn.open_message = event.role
        if event.role == "assistant":
            if turn.committed is not None:
                bad("L6", "a second assistant message after one was committed in this turn", i)
            turn.updates = []
            turn.update_start = i + 1
            turn.attempt_tools_started = False
        return
    if isinstance(event, MessageUpdate):
        if turn.open_message != "assistant":
            bad("L6", "message_update outside an assistant message", i)
        elif turn.updates and turn.updates[-1].type in TERMINAL_TYPES:
            bad("L5", f"{event.event.type} after the terminal event of the message", i)
        turn.updates.append(event.event)
        return
    if isinstance(event, MessageEnd):
        if turn.open_message != event.role:
            bad("L6", f"message_end({event.role}) without its message_start", i)
        turn.open_message = None
        if isinstance(event.message, AssistantMessage):
            _check_assistant_end(turn, event, i, bad)
        elif isinstance(event.message, ToolResult):
            _check_tool_result(turn, event.message, i, bad)
        return
    if isinstance(event, Retry | Fallback):
        last = turn.last_assistant_end
        if last is None or last.committed or turn.open_message is not None:
            bad("L7", f"{event.type} not right after a discarded (uncommitted) response", i)
        elif turn.attempt_tools_started:
            bad("L7", f"{event.type} after a tool started in the failed attempt", i)
        if isinstance(event, Retry) and event.error_kind == "overflow":
            bad("L7", "a context overflow was retried", i)
        turn.last_assistant_end = None
        return
    if isinstance(event, ToolExecutionStart):
        _check_tool_start(turn, event, i, bad, concurrency_limit, safe_tools)
        return
    if isinstance(event, ToolExecutionUpdate):
        if event.key not in turn.running:
            bad("L6", f"tool_execution_update for {event.key}, which is not running", i)
        return
    if isinstance(event, ToolExecutionEnd):
        if turn.running.pop(event.key, None) is None:
            bad("L6", f"tool_execution_end for {event.key}, which is not running", i)
        return
    # doom_loop, permission and compaction events may come anywhere in a turn.


def _check_tool_result(turn: _TurnState, result: ToolResult, i: int, bad: _Bad) -> None:
    """A tool result answers the committed message's calls in order (L1, L2)."""
    if turn.committed is None:
        bad("L1", "a tool result before its assistant message was committed", i)
    turn.results.append(result)
    calls = tool_calls_of(turn.committed) if turn.committed is not None else []
    k = len(turn.results) - 1
    if k >= len(calls):
        bad("L1", f"tool result {result.tool_call_id} for no call", i)
    elif calls[k].id != result.tool_call_id:
        bad(
            "L2",
            f"result #{k} is for {result.tool_call_id}, call #{k} is {calls[k].id}",
            i,
        )


def _check_assistant_end(turn: _TurnState, event: MessageEnd, i: int, bad: _Bad) -> None:
    message = event.message
    assert isinstance(message, AssistantMessage)
    updates = turn.updates
    if updates and updates[-1].type in TERMINAL_TYPES:
        # L5: the loop passes the normalizer's stream through; the message it ends with is
        # the terminal event's, unchanged, and that stream keeps the contract.
        for violation in check_contract(updates):
            bad("L5", f"message stream: {violation}", turn.update_start + (violation.index or 0))
        terminal_message = getattr(updates[-1], "message", None)
        if terminal_message != message:
            bad("L5", "message_end differs from the terminal event's message", i)
    if event.committed:
        turn.committed = message
        turn.last_assistant_end = None
    else:
        turn.last_assistant_end = event


def _check_turn_end(turn: _TurnState, event: TurnEnd, i: int, bad: _Bad) -> None:
    if event.turn != turn.number:
        bad("L6", f"turn_end numbered {event.turn} inside turn {turn.number}", i)
    if turn.open_message is not None:
        bad("L6", f"turn_end with a {turn.open_message} message open", i)
    if turn.running:
        bad("L6", f"turn_end while tools run: {sorted(turn.running)}", i)
    if turn.committed is not None:
        calls = tool_calls_of(turn.committed)
        if len(turn.results) != len(calls):
            bad(
                "L1",
                f"{len(calls)} tool calls but {len(turn.results)} results in turn {turn.number}",
                i,
            )
    elif turn.results:
        bad("L1", "tool results in a turn with no committed assistant message", i)


def _check_tool_start(
    turn: _TurnState,
    event: ToolExecutionStart,
    i: int,
    bad: _Bad,
    limit: int | None,
    safe_tools: SafeTools | None,
) -> None:
    if event.key in turn.started:
        bad("L1", f"tool {event.key} started twice", i)
    turn.started.add(event.key)
    if turn.open_message == "assistant":
        turn.attempt_tools_started = True
    if event.batch < turn.batch:
        bad("L3", f"batch {event.batch} started after batch {turn.batch}", i)
    elif event.batch > turn.batch:
        if turn.running:
            bad(
                "L3",
                f"batch {event.batch} started while batch {turn.batch} runs: {sorted(turn.running)}",
                i,
            )
        turn.batch = event.batch
        turn.batch_context = event.context
    elif event.context != turn.batch_context:
        bad("L4", f"tools of batch {event.batch} saw different contexts", i)
    turn.running[event.key] = event
    if limit is not None and len(turn.running) > limit:
        bad("L3", f"{len(turn.running)} tools run at once, limit {limit}", i)
    if safe_tools is not None and len(turn.running) > 1:
        unsafe = [e.name for e in turn.running.values() if not _safe(safe_tools, e)]
        if unsafe:
            bad("L3", f"unsafe tool {unsafe[0]} overlaps another tool", i)


def check_history(history: Sequence[Message], *, complete: bool = True) -> list[Violation]:
    """L1 and L2 on history: each assistant message with tool calls is followed by exactly one
    result per call, in call order, and no result stands anywhere else. ``complete=False``
    allows the last message's results to be still coming."""
    out: list[Violation] = []
    i = 0
    while i < len(history):
        entry = history[i]
        if isinstance(entry, ToolResult):
            out.append(Violation("L1", f"tool result {entry.tool_call_id} follows no call", i))
            i += 1
            continue
        i += 1
        if not isinstance(entry, AssistantMessage):
            continue
        for k, call in enumerate(tool_calls_of(entry)):
            if i >= len(history):
                if complete:
                    out.append(Violation("L1", f"call {call.id} ({call.name}) has no result", None))
                break
            result = history[i]
            if not isinstance(result, ToolResult):
                out.append(Violation("L1", f"call {call.id} ({call.name}) has no result", i))
                break
            if result.tool_call_id != call.id:
                out.append(
                    Violation(
                        "L2", f"result #{k} is for {result.tool_call_id}, call #{k} is {call.id}", i
                    )
                )
            i += 1
    return out
