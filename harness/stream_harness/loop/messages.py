"""What the loop keeps in history: user prompts, the contract's assistant messages, tool results.

The assistant message is the contract's :class:`~stream_harness.contract.events.AssistantMessage` itself, so
that what a normalizer assembled is what the loop commits, byte for byte. Tool results are
one small model with a ``kind`` that says *why* a result exists (the tool ran, or the loop
answered for it), because the loop's invariants (specs/agent-loop.md, L1) are about every
call getting exactly one result whatever the path.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict

from stream_harness.contract.events import (
    AssistantMessage,
    ContentBlock,
    Event,
    StopReason,
    TextBlock,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingBlock,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)

ToolResultKind: TypeAlias = Literal[
    "ok",  # the tool ran and returned
    "error",  # the tool ran and raised
    "invalid_arguments",  # the arguments failed the tool's JSON Schema; not run
    "unknown_tool",  # no tool of that name; not run
    "doom_loop_denied",  # the doom-loop check refused it; not run
    "permission_denied",  # a permission rule refused it; not run
    "permission_rejected",  # the user answered no when the gate asked; not run
    "truncated",  # the response hit the output limit (stop_reason length); not run
    "cancelled",  # aborted before or while running
    "not_executed",  # the response ended in error, so the call was never run
]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class UserMessage(_Model):
    role: Literal["user"] = "user"
    content: str


class ToolResult(_Model):
    role: Literal["tool_result"] = "tool_result"
    tool_call_id: str
    name: str
    content: Any = None
    is_error: bool = False
    kind: ToolResultKind = "ok"


Message: TypeAlias = UserMessage | AssistantMessage | ToolResult

ABORTED_MESSAGE = "Request was aborted"
"""error_message of a partial assistant message cut by an abort (pi, research/seed-systems.md B.5)."""


def error_result(call: ToolCall, content: str, kind: ToolResultKind) -> ToolResult:
    """The result the loop gives a call in the tool's stead (or for a tool that raised)."""
    return ToolResult(
        tool_call_id=call.id, name=call.name, content=content, is_error=True, kind=kind
    )


def tool_calls_of(message: AssistantMessage) -> list[ToolCall]:
    return [block for block in message.content if isinstance(block, ToolCall)]


def summarize(message: Message) -> str:
    """The one-line form scenarios compare history with (specs/scenarios.md, ``history``)."""
    if isinstance(message, UserMessage):
        return "user"
    if isinstance(message, ToolResult):
        return f"tool_result:{message.name}:{message.kind}"
    calls = tool_calls_of(message)
    names = f" [{', '.join(c.name for c in calls)}]" if calls else ""
    return f"assistant:{message.stop_reason}{names}"


class PartialAssistant:
    """The assistant message as far as the events received so far tell it.

    The loop needs this only when it cuts a stream itself (an abort): the normalizer's
    terminal event never comes, so the loop closes the message from what it saw. Closed
    blocks are taken from their ``*_end`` events; open ones from their deltas, and an open
    tool call keeps the live arguments of its last delta (specs/contract.md, C9).
    """

    def __init__(self) -> None:
        self._closed: dict[int, ContentBlock] = {}
        self._text: dict[int, list[str]] = {}
        self._kind: dict[int, Literal["text", "thinking", "tool_call"]] = {}
        self._tool: dict[int, ToolCall] = {}

    def feed(self, event: Event) -> None:
        i = getattr(event, "content_index", None)
        if i is None:
            return
        if isinstance(event, TextStartEvent):
            self._kind[i], self._text[i] = "text", []
        elif isinstance(event, ThinkingStartEvent):
            self._kind[i], self._text[i] = "thinking", []
        elif isinstance(event, ToolCallStartEvent):
            self._kind[i] = "tool_call"
            self._tool[i] = ToolCall(id=event.id or f"toolcall_{i}", name=event.name or "")
        elif isinstance(event, TextDeltaEvent | ThinkingDeltaEvent):
            self._text.setdefault(i, []).append(event.delta)
        elif isinstance(event, ToolCallDeltaEvent) and i in self._tool:
            self._tool[i] = self._tool[i].model_copy(update={"arguments": event.arguments})
        elif isinstance(event, TextEndEvent):
            self._closed[i] = TextBlock(content=event.content, signature=event.signature)
        elif isinstance(event, ThinkingEndEvent):
            self._closed[i] = ThinkingBlock(
                content=event.content, signature=event.signature, redacted=event.redacted
            )
        elif isinstance(event, ToolCallEndEvent):
            self._closed[i] = event.tool_call

    def open_indices(self) -> list[int]:
        """Blocks started and not ended, in content_index order."""
        return sorted(set(self._kind) - set(self._closed))

    def block(self, i: int) -> ContentBlock:
        """Block ``i`` as it stands: final when ended, else built from its deltas."""
        if i in self._closed:
            return self._closed[i]
        kind = self._kind.get(i)
        if kind == "tool_call":
            return self._tool[i]
        text = "".join(self._text.get(i, []))
        return ThinkingBlock(content=text) if kind == "thinking" else TextBlock(content=text)

    def closing_events(self) -> list[Event]:
        """The ``*_end`` events that close every open block, in content_index order: what a
        stream cut short still owes its reader to keep the contract's grammar."""
        out: list[Event] = []
        for i in self.open_indices():
            block = self.block(i)
            if isinstance(block, ToolCall):
                out.append(ToolCallEndEvent(content_index=i, tool_call=block))
            elif isinstance(block, ThinkingBlock):
                out.append(ThinkingEndEvent(content_index=i, content=block.content))
            else:
                out.append(TextEndEvent(content_index=i, content=block.content))
        return out

    def snapshot(self, stop_reason: StopReason, error_message: str | None) -> AssistantMessage:
        indices = sorted(set(self._closed) | set(self._kind))
        return AssistantMessage(
            content=[self.block(i) for i in indices],
            stop_reason=stop_reason,
            error_message=error_message,
        )

    def aborted(self) -> AssistantMessage:
        return self.snapshot("aborted", ABORTED_MESSAGE)


def prompt_tokens(message: AssistantMessage) -> int:
    """The input tokens of the request that produced ``message``: ``input + cache_read +
    cache_write``, since the contract's ``input`` excludes cached tokens (specs/contract.md,
    Usage) while what fills the context window is the whole prompt (Anthropic reports the
    three apart; OpenAI's ``prompt_tokens`` already includes cached ones,
    research/provider-facts.md 2.7)."""
    usage = message.usage
    return usage.input + usage.cache_read + usage.cache_write


def _chars(message: Message) -> int:
    if isinstance(message, UserMessage):
        return len(message.content)
    if isinstance(message, ToolResult):
        content = message.content
        return len(content) if isinstance(content, str) else len(json.dumps(content, default=str))
    total = 0
    for block in message.content:
        if isinstance(block, ToolCall):
            total += len(block.name) + len(json.dumps(block.arguments, default=str))
        elif isinstance(block, TextBlock | ThinkingBlock):
            total += len(block.content)
    return total


def estimate_tokens(history: Sequence[Message]) -> int:
    """The input a request carrying ``history`` would have, in tokens, before sending it.

    Claude Code's way (``tokenCountWithEstimation``): the provider's count for the last
    response that reported usage (its prompt plus its output, both now in history), plus an
    estimate of every message after it at 4 characters per token (pi's faux provider and
    Claude Code's rough estimate, research/seed-systems.md B.7); with no usage yet, the
    estimate of the whole history.
    """
    base, start = 0, 0
    for i in range(len(history) - 1, -1, -1):
        entry = history[i]
        if isinstance(entry, AssistantMessage) and (entry.usage.input or entry.usage.output):
            base, start = prompt_tokens(entry) + entry.usage.output, i + 1
            break
    return base + math.ceil(sum(_chars(m) for m in history[start:]) / 4)
