"""Stream policies: code that sits between a model's stream and the client and decides what
the client gets (seed 001, luthien-proxy's StreamProcessor; research/seed-systems.md D).

A policy sees every normalized event with a :class:`StreamState` (the blocks so far, the
block the event belongs to, the block this event completed, the finish reason) and a
:class:`PolicyContext` to ``send`` events to the client or ``terminate`` the output.
Nothing is forwarded by default, as in luthien: pass-through is the policy's choice.

What the runner guarantees (specs/agent-loop.md, L12):

- after ``terminate()`` nothing more reaches the client: later sends are dropped (counted
  in ``PolicyRunner.dropped``) and no hook runs again, though the state still aggregates the
  input for observability (luthien's design intent);
- ``on_close`` (the cleanup hook) runs exactly once, at :meth:`PolicyRunner.close`, also
  after a terminate and after a hook raised;
- a hook that raises does not escape: the runner ends the client's stream with an error
  event (:meth:`PolicyContext.fail`) and keeps the exception in ``PolicyRunner.errors``.

Differences from luthien, on purpose: blocks come from the contract's events, so one event
completes at most one block and luthien's "two completions in one chunk keep only the last"
loss cannot happen; a trailing usage-only chunk is part of the terminal event, so it is
never skipped; tool-call arguments stay the raw JSON text (``arguments``), as in the seed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeAlias

from stream_harness.contract.events import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    Event,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from stream_harness.loop.messages import PartialAssistant

__all__ = [
    "BufferingPolicy",
    "ContentStreamBlock",
    "PolicyContext",
    "PolicyRunner",
    "StreamBlock",
    "StreamPolicy",
    "StreamState",
    "ToolCallJudgePolicy",
    "ToolCallStreamBlock",
]


@dataclass
class ContentStreamBlock:
    """A text or thinking block; ``id`` is ``text_<i>`` or ``thinking_<i>``."""

    id: str
    content_index: int
    kind: Literal["text", "thinking"] = "text"
    content: str = ""
    is_complete: bool = False


@dataclass
class ToolCallStreamBlock:
    """A tool call; ``arguments`` is the raw JSON text so far (the seed keeps it unparsed),
    ``index`` its position among the tool calls (0, 1, ...), ``id`` the call id, or
    ``tool_<index>`` until one is known."""

    id: str
    content_index: int
    index: int
    name: str = ""
    arguments: str = ""
    is_complete: bool = False


StreamBlock: TypeAlias = ContentStreamBlock | ToolCallStreamBlock


@dataclass
class StreamState:
    blocks: list[StreamBlock] = field(default_factory=list)
    current_block: StreamBlock | None = None
    """The block the current event belongs to (None for start and terminal events)."""
    just_completed: StreamBlock | None = None
    """Set only while the hook runs for the ``*_end`` event that completed it."""
    finish_reason: str | None = None
    """The terminal event's reason (stop, length, tool_use, error, aborted) once it came."""
    events: list[Event] = field(default_factory=list)
    """Every event received, for recording and replay (luthien's ``raw_chunks``)."""
    _by_index: dict[int, StreamBlock] = field(default_factory=dict, repr=False)

    def block(self, content_index: int) -> StreamBlock | None:
        return self._by_index.get(content_index)

    def update(self, event: Event) -> None:
        """Fold one event into the state (sets ``current_block`` and ``just_completed``)."""
        self.events.append(event)
        self.just_completed = None
        index = getattr(event, "content_index", None)
        if isinstance(event, TextStartEvent | ThinkingStartEvent):
            kind: Literal["text", "thinking"] = (
                "text" if isinstance(event, TextStartEvent) else "thinking"
            )
            self._add(
                ContentStreamBlock(
                    id=f"{kind}_{event.content_index}", content_index=event.content_index, kind=kind
                )
            )
        elif isinstance(event, ToolCallStartEvent):
            position = sum(1 for b in self.blocks if isinstance(b, ToolCallStreamBlock))
            self._add(
                ToolCallStreamBlock(
                    id=event.id or f"tool_{position}",
                    content_index=event.content_index,
                    index=position,
                    name=event.name or "",
                )
            )
        block = self._by_index.get(index) if index is not None else None
        if isinstance(event, TextDeltaEvent | ThinkingDeltaEvent) and isinstance(
            block, ContentStreamBlock
        ):
            block.content += event.delta
        elif isinstance(event, ToolCallDeltaEvent) and isinstance(block, ToolCallStreamBlock):
            block.arguments += event.delta
        elif (
            isinstance(event, TextEndEvent | ThinkingEndEvent | ToolCallEndEvent)
            and block is not None
        ):
            if isinstance(event, ToolCallEndEvent) and isinstance(block, ToolCallStreamBlock):
                block.id = event.tool_call.id or block.id
                block.name = event.tool_call.name or block.name
            block.is_complete = True
            self.just_completed = block
        elif isinstance(event, DoneEvent | ErrorEvent):
            self.finish_reason = event.reason
        self.current_block = block

    def _add(self, block: StreamBlock) -> None:
        self.blocks.append(block)
        self._by_index[block.content_index] = block


class PolicyContext:
    """What a policy may do: send events to the client, terminate the output, or fail it."""

    def __init__(self) -> None:
        self.terminated = False
        self.delivered: list[Event] = []
        self.dropped: list[Event] = []
        self._sent = PartialAssistant()
        self._started = False
        self._ended = False

    def send(self, event: Event) -> bool:
        """Deliver ``event`` to the client; False (and nothing delivered) once terminated."""
        if self.terminated:
            self.dropped.append(event)
            return False
        self.delivered.append(event)
        self._sent.feed(event)
        self._started = self._started or isinstance(event, StartEvent)
        self._ended = self._ended or isinstance(event, DoneEvent | ErrorEvent)
        return True

    def terminate(self) -> None:
        """Nothing more reaches the client after this (luthien's ``terminate()``)."""
        self.terminated = True

    def fail(self, error_message: str) -> None:
        """End the client's stream with an error, keeping its grammar: close every block the
        client saw open, send an ``error`` event whose message holds what the client got,
        then terminate. Does nothing but terminate when the client already had its end."""
        if not self.terminated and not self._ended:
            if not self._started:
                self.send(StartEvent())
            for event in self._sent.closing_events():
                self.send(event)
            message = self._sent.snapshot("error", error_message)
            self.send(ErrorEvent(reason="error", error_message=error_message, message=message))
        self.terminate()


class StreamPolicy(Protocol):
    def on_event(self, event: Event, state: StreamState, ctx: PolicyContext) -> None: ...

    def on_close(self, state: StreamState, ctx: PolicyContext) -> None:
        """Cleanup; runs exactly once, when the stream closes."""
        ...


class PolicyRunner:
    """Feed normalized events through a policy; ``feed`` and ``close`` return what reaches
    the client (the harness's feed/close shape, so any split of the input gives the same
    client stream)."""

    def __init__(self, policy: StreamPolicy) -> None:
        self.policy = policy
        self.state = StreamState()
        self.ctx = PolicyContext()
        self.errors: list[BaseException] = []
        self.closed = False
        self._emitted = 0

    @property
    def dropped(self) -> list[Event]:
        return self.ctx.dropped

    def feed(self, event: Event) -> list[Event]:
        if self.closed:
            return []
        self.state.update(event)
        if not self.ctx.terminated:
            self._call(lambda: self.policy.on_event(event, self.state, self.ctx))
        self.state.just_completed = None
        return self._new()

    def close(self) -> list[Event]:
        if self.closed:
            return []
        self.closed = True
        self._call(lambda: self.policy.on_close(self.state, self.ctx))
        self.ctx.terminate()
        return self._new()

    def _call(self, hook: Callable[[], None]) -> None:
        try:
            hook()
        except Exception as exc:  # a policy bug ends the client's stream, never the caller
            self.errors.append(exc)
            self.ctx.fail(f"stream policy failed: {type(exc).__name__}: {exc}")

    def _new(self) -> list[Event]:
        out = self.ctx.delivered[self._emitted :]
        self._emitted = len(self.ctx.delivered)
        return out


# -- example policies -----------------------------------------------------------------------


Judge: TypeAlias = Callable[[AssistantMessage], str | None]
ToolJudge: TypeAlias = Callable[[ToolCallStreamBlock], str | None]


class BufferingPolicy:
    """Hold the whole response, judge the finished message, then release it or refuse it.

    ``judge`` returns None to approve, or the reason to refuse; a refused response reaches
    the client as ``start`` + ``error`` (its content withheld). A stream that closes without a
    terminal event is failed, since its message cannot be judged.
    """

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.buffer: list[Event] = []
        self.cleanups = 0

    def on_event(self, event: Event, state: StreamState, ctx: PolicyContext) -> None:
        self.buffer.append(event)
        if isinstance(event, DoneEvent | ErrorEvent):
            reason = self.judge(event.message)
            if reason is None:
                for buffered in self.buffer:
                    ctx.send(buffered)
                self.buffer.clear()
                ctx.terminate()
            else:
                ctx.fail(reason)

    def on_close(self, state: StreamState, ctx: PolicyContext) -> None:
        self.cleanups += 1
        if self.buffer:
            self.buffer.clear()
            ctx.fail("stream closed before the response could be judged")


class ToolCallJudgePolicy:
    """Pass text through at once; hold each tool call until it is complete and judged.

    Events keep their order: once a tool call is held, everything after it waits in one
    queue, and the queue drains from the front as calls are approved, so the client sees
    the original stream minus nothing (all approved) or a prefix of it closed by an error
    (a call refused). This is seed 001's per-tool-call buffering with the ordering the
    contract needs (content_index in opening order, C4).
    """

    def __init__(self, judge: ToolJudge) -> None:
        self.judge = judge
        self.queue: deque[Event] = deque()
        self.approved: set[int] = set()
        self.judged: list[tuple[str, str | None]] = []
        self.cleanups = 0

    def _held(self, event: Event) -> bool:
        if not isinstance(event, ToolCallStartEvent | ToolCallDeltaEvent | ToolCallEndEvent):
            return False
        return event.content_index not in self.approved

    def on_event(self, event: Event, state: StreamState, ctx: PolicyContext) -> None:
        self.queue.append(event)
        done = state.just_completed
        if isinstance(done, ToolCallStreamBlock):
            reason = self.judge(done)
            self.judged.append((done.id, reason))
            if reason is not None:
                self.queue.clear()
                ctx.fail(reason)
                return
            self.approved.add(done.content_index)
        while self.queue and not self._held(self.queue[0]):
            ctx.send(self.queue.popleft())

    def on_close(self, state: StreamState, ctx: PolicyContext) -> None:
        self.cleanups += 1
        if self.queue:
            self.queue.clear()
            ctx.fail("stream closed while a tool call was still being judged")
