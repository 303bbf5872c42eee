"""Delta coalescing on the injected clock: what is merged, when it is delivered, and the
properties that must hold for any stream and any timing (L8)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from stream_harness.contract.events import (
    DELTA_TYPES,
    AssistantMessage,
    Event,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallDeltaEvent,
)
from stream_harness.loop.clock import VirtualClock
from stream_harness.loop.coalesce import NO_RESULT, CoalescingStream
from stream_harness.loop.scenario import ScriptCall, ScriptError, ScriptSpec, script_events


def text(delta: str, index: int = 0) -> TextDeltaEvent:
    return TextDeltaEvent(content_index=index, delta=delta)


def test_first_delta_at_once_then_one_delivery_per_window() -> None:
    clock = VirtualClock()
    stream = CoalescingStream(clock, window=0.05)
    assert stream.push(text("a")) == [text("a")]  # the last flush is "long ago"
    clock.advance_to(0.01)
    assert stream.push(text("b")) == []
    clock.advance_to(0.02)
    assert stream.push(text("c")) == []
    assert stream.deadline == 0.05
    clock.advance_to(0.04)
    assert stream.poll() == []  # not due yet
    clock.advance_to(0.05)
    assert stream.poll() == [text("bc")]
    assert stream.deadline is None
    clock.advance_to(0.2)
    assert stream.push(text("d")) == [text("d")]  # a window has passed: at once


def test_only_adjacent_deltas_of_one_block_and_type_merge() -> None:
    clock = VirtualClock()
    stream = CoalescingStream(clock)
    stream.push(text("x"))  # flushed at once; the rest is buffered
    for event in [
        text("a"),
        text("b"),
        text("c", index=1),
        text("d"),
        ToolCallDeltaEvent(content_index=0, delta="{", arguments={}),
    ]:
        assert stream.push(event) == []
    clock.advance_to(1.0)
    assert stream.poll() == [
        text("ab"),
        text("c", index=1),
        text("d"),
        ToolCallDeltaEvent(content_index=0, delta="{", arguments={}),
    ]


def test_merged_tool_delta_keeps_the_latest_arguments() -> None:
    clock = VirtualClock()
    stream = CoalescingStream(clock)
    stream.push(text("x"))
    stream.push(ToolCallDeltaEvent(content_index=1, delta='{"a"', arguments={}))
    stream.push(ToolCallDeltaEvent(content_index=1, delta=": 1}", arguments={"a": 1}))
    clock.advance_to(1.0)
    assert stream.poll() == [
        ToolCallDeltaEvent(content_index=1, delta='{"a": 1}', arguments={"a": 1})
    ]


def test_a_non_delta_flushes_first_and_the_terminal_resolves_once() -> None:
    events = script_events(ScriptSpec(text="hello world", delta_size=2))
    clock = VirtualClock()
    stream = CoalescingStream(clock)
    results: list[AssistantMessage] = []
    stream.on_result(results.append)
    out: list[Event] = []
    for event in events:  # all at t=0: only the first delta goes at once
        out += stream.push(event)
    assert [e.type for e in out] == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert [e.delta for e in out if isinstance(e, TextDeltaEvent)] == ["he", "llo world"]
    assert results == [events[-1].message]  # type: ignore[union-attr]
    assert stream.push(events[-1]) == [] and stream.push(text("late")) == []
    assert stream.end() == []
    assert stream.resolutions == 1 and results == [events[-1].message]  # type: ignore[union-attr]
    late: list[AssistantMessage] = []
    stream.on_result(late.append)
    assert late == results


def test_end_without_a_terminal_event_resolves_to_an_error() -> None:
    clock = VirtualClock()
    stream = CoalescingStream(clock)
    stream.push(text("a"))
    stream.push(text("b"))
    assert stream.end() == [text("b")]
    assert stream.result == AssistantMessage(stop_reason="error", error_message=NO_RESULT)
    assert stream.resolutions == 1


streams = st.builds(
    lambda thinking, body, calls, fail, size: script_events(
        ScriptSpec(
            thinking=thinking,
            text=body,
            tool_calls=[
                ScriptCall(id=f"c{i}", name="f", arguments={"v": "x" * n})
                for i, n in enumerate(calls)
            ],
            error=ScriptError(message="boom") if fail else None,
            delta_size=size,
        )
    ),
    st.sampled_from([None, "let me think about it"]),
    st.sampled_from([None, "a", "the answer is 42, as usual"]),
    st.lists(st.integers(0, 12), max_size=3),
    st.booleans(),
    st.integers(1, 5),
)


@settings(max_examples=300, deadline=None)  # no wall-clock limits in unit tests
@given(
    events=streams,
    gaps=st.lists(st.sampled_from([0.0, 0.001, 0.02, 0.049, 0.05, 0.2]), min_size=60, max_size=60),
    polls=st.lists(st.booleans(), min_size=60, max_size=60),
    window=st.sampled_from([0.0, 0.05, 0.1]),
    end=st.booleans(),
)
def test_coalescing_properties(
    events: list[Event], gaps: list[float], polls: list[bool], window: float, end: bool
) -> None:
    clock = VirtualClock()
    stream = CoalescingStream(clock, window=window)
    resolved: list[AssistantMessage] = []
    stream.on_result(resolved.append)
    delivered: list[tuple[float, Event]] = []
    for i, event in enumerate(events):
        clock.advance_to(clock.now() + gaps[i % len(gaps)])
        if polls[i % len(polls)] and stream.deadline is not None and clock.now() >= stream.deadline:
            delivered += [(clock.now(), e) for e in stream.poll()]
        delivered += [(clock.now(), e) for e in stream.push(event)]
    if end:
        delivered += [(clock.now(), e) for e in stream.end()]
    out_events = [e for _, e in delivered]

    # Non-delta events: the same, in the same order.
    out_others = [i for i, e in enumerate(out_events) if e.type not in DELTA_TYPES]
    in_others = [i for i, e in enumerate(events) if e.type not in DELTA_TYPES]
    assert [out_events[i] for i in out_others] == [events[i] for i in in_others]
    # Deltas: per (type, block), the delivered text concatenates to the pushed text.
    assert _joined(out_events) == _joined(events)
    # Flushed before any non-delta: what was delivered before it is exactly what was pushed
    # before it, delta text included.
    for out_i, in_i in zip(out_others, in_others, strict=True):
        assert _joined(out_events[:out_i]) == _joined(events[:in_i])
    # Nothing after the terminal event; the result resolved exactly once, to its message.
    assert out_events[-1].type in ("done", "error")
    assert stream.resolutions == 1 and resolved == [events[-1].message]  # type: ignore[union-attr]
    # Timed deliveries of deltas are at least a window apart, unless a non-delta forced them.
    times = [t for t, e in delivered if e.type in DELTA_TYPES]
    forced = {t for t, e in delivered if e.type not in DELTA_TYPES}
    for earlier, later in itertools.pairwise(times):
        assert later == earlier or later - earlier >= window - 1e-9 or later in forced


class CoalescingMachine(RuleBasedStateMachine):
    """Push, let time pass, poll at the deadline (or not), end: L8 after every step."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = VirtualClock()
        self.stream = CoalescingStream(self.clock, window=0.05)
        self.pushed: list[Event] = []
        self.delivered: list[Event] = []
        self.ended = False

    @initialize(events=streams)
    def script(self, events: list[Event]) -> None:
        self.todo = list(events)

    @precondition(lambda self: bool(self.todo) and not self.ended)
    @rule()
    def push_next(self) -> None:
        event = self.todo.pop(0)
        out = self.stream.push(event)
        self.pushed.append(event)
        if event.type not in DELTA_TYPES:
            # Everything pushed so far is out, this event last.
            assert out and out[-1] == event
            self.delivered += out
            assert _joined(self.delivered) == _joined(self.pushed)
        else:
            self.delivered += out

    @rule(seconds=st.sampled_from([0.0, 0.01, 0.049, 0.05, 0.3]))
    def time_passes(self, seconds: float) -> None:
        deadline = self.stream.deadline
        self.clock.advance_to(self.clock.now() + seconds)
        out = self.stream.poll()
        if deadline is None or self.clock.now() < deadline:
            assert out == []
        else:
            assert out and self.stream.deadline is None
        self.delivered += out

    @precondition(lambda self: not self.ended)
    @rule()
    def end(self) -> None:
        self.ended = True
        self.delivered += self.stream.end()
        assert _joined(self.delivered) == _joined(self.pushed)

    @invariant()
    def nothing_lost_reordered_or_late(self) -> None:
        others = [e for e in self.delivered if e.type not in DELTA_TYPES]
        assert others == [e for e in self.pushed if e.type not in DELTA_TYPES]
        delivered, pushed = _joined(self.delivered), _joined(self.pushed)
        for key, text in delivered.items():
            assert pushed[key].startswith(text)  # a prefix: the rest may still be buffered
        terminal = [i for i, e in enumerate(self.delivered) if e.type in ("done", "error")]
        assert not terminal or terminal == [len(self.delivered) - 1]
        assert self.stream.resolutions == (1 if terminal or self.ended else 0)


def _joined(seq: list[Event]) -> dict[tuple[str, int], str]:
    """The text of each (delta type, block): what coalescing must keep whatever it merges."""
    acc: dict[tuple[str, int], str] = {}
    for e in seq:
        if isinstance(e, TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent):
            acc[(e.type, e.content_index)] = acc.get((e.type, e.content_index), "") + e.delta
    return acc


TestCoalescingMachine = CoalescingMachine.TestCase
TestCoalescingMachine.settings = settings(max_examples=100, stateful_step_count=60, deadline=None)
