"""Per-attempt and per-turn bookkeeping: the records the machine and its collaborators share.

A turn is one model response and its tool calls; an attempt is one request for that
response (a retry or fallback is a new attempt of the same turn). Keeping both as plain
records lets a discarded attempt be forgotten by clearing its turn, without tracing which
collaborator touched what.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from stream_harness.contract.events import AssistantMessage, ToolCall
from stream_harness.loop.events import Compaction, EndReason, TurnSignal
from stream_harness.loop.executor import ToolExecutor
from stream_harness.loop.messages import PartialAssistant, ToolResult
from stream_harness.loop.tools import DoomLoopTracker


@dataclass
class Attempt:
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
    malformed: dict[int, str] = field(default_factory=dict)
    """Call position -> argument text, for calls whose ``toolcall_end`` said the text did not
    parse strictly: they are answered, never run (A13)."""
    doom_snapshot: DoomLoopTracker = field(default_factory=DoomLoopTracker)


@dataclass
class Gate:
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
class Turn:
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
    started_tools: bool = False
    """A tool of this turn started (eager mode: while the response streams). Its response can
    then no longer be discarded: resending would run the tool twice (opencode's
    ProviderRetryUnsafeError). Only the current attempt can start tools, since a discard
    forgets the calls of the attempt it ends."""
    compaction: Compaction | None = None
    doom: dict[str, int] = field(default_factory=dict)
    """key -> doom-loop streak, for calls the doom-loop question applies to."""
    gates: dict[str, Gate] = field(default_factory=dict)
    """Calls the executor started that wait for a permission answer."""
    ended: bool = False

    def calls_by_key(self, key: str) -> ToolCall:
        return self.calls_by_position[self.keys[key]]


def turn_ending(
    turn: Turn, end_reason: EndReason | None, *, continue_on_deny: bool
) -> tuple[TurnSignal, EndReason | None]:
    """How a turn whose results are all in ends: its signal, and the run's end reason when the
    run ends with it. ``end_reason`` is set when the turn was cut (abort, a response failed
    for good); a requested compaction still wins over an error, as in seed 000."""
    if end_reason is not None:
        if turn.compaction is not None and end_reason == "error":
            return "compact", "compact"
        return "stop", end_reason
    if turn.compaction is not None:
        return "compact", "compact"
    if turn.blocked and not continue_on_deny:
        return "stop", "blocked"
    if turn.calls:
        return "continue", None
    return "stop", "completed"
