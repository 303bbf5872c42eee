"""Stream policies: block aggregation, send/terminate, cleanup exactly once, and the two
example policies (buffering, per-tool-call judging)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import REPO_ROOT

from stream_harness.contract.events import Event
from stream_harness.contract.rules import check_contract
from stream_harness.loop.policies import (
    BufferingPolicy,
    ContentStreamBlock,
    PolicyContext,
    PolicyRunner,
    StreamState,
    ToolCallJudgePolicy,
    ToolCallStreamBlock,
)
from stream_harness.loop.scenario import ScriptCall, ScriptError, ScriptSpec, script_events
from stream_harness.providers.reference import normalize
from stream_harness.recordings.cassette import load_cassette


def cassette_events(relative: str) -> list[Event]:
    interaction = load_cassette(REPO_ROOT / "cassettes" / relative).interactions[0]
    return list(normalize(relative.split("/")[0], [interaction.response.body]))


PARALLEL = cassette_events("anthropic-messages/parallel_tool_calls.yaml")
INTERLEAVED = cassette_events("openai-completions/parallel_tool_calls_interleaved.yaml")


class Recorder:
    """A pass-through policy that records what each hook saw."""

    def __init__(self) -> None:
        self.completed: list[str] = []
        self.current: list[str | None] = []
        self.cleanups = 0

    def on_event(self, event: Event, state: StreamState, ctx: PolicyContext) -> None:
        if state.just_completed is not None:
            self.completed.append(state.just_completed.id)
        self.current.append(state.current_block.id if state.current_block else None)
        ctx.send(event)

    def on_close(self, state: StreamState, ctx: PolicyContext) -> None:
        self.cleanups += 1


def run(policy: Any, events: list[Event]) -> tuple[PolicyRunner, list[Event]]:
    runner = PolicyRunner(policy)
    out: list[Event] = []
    for event in events:
        out += runner.feed(event)
    out += runner.close()
    return runner, out


def test_state_aggregates_blocks_like_the_seed() -> None:
    recorder = Recorder()
    runner, out = run(recorder, PARALLEL)
    state = runner.state
    assert out == PARALLEL  # pass-through delivers the stream unchanged
    assert [(type(b).__name__, b.id) for b in state.blocks] == [
        ("ContentStreamBlock", "text_0"),
        ("ToolCallStreamBlock", "toolu_01B2cD3eF4gH5iJ6kL7mN8oP"),
        ("ToolCallStreamBlock", "toolu_01Q9rS8tU7vW6xY5zA4bC3dE"),
    ]
    text, weather, time = state.blocks
    assert isinstance(text, ContentStreamBlock) and text.content == "Checking both at once."
    assert isinstance(weather, ToolCallStreamBlock) and isinstance(time, ToolCallStreamBlock)
    # Raw JSON text, not parsed (seed 001, "Arguments Format").
    assert (weather.index, weather.name, weather.arguments) == (
        0,
        "get_weather",
        '{"city": "Tokyo"}',
    )
    assert (time.index, time.name, time.arguments) == (1, "get_time", '{"tz": "Asia/Tokyo"}')
    assert all(b.is_complete for b in state.blocks)
    assert state.finish_reason == "tool_use"
    # One completion per block, content before tools, each seen exactly once.
    assert recorder.completed == [
        "text_0",
        "toolu_01B2cD3eF4gH5iJ6kL7mN8oP",
        "toolu_01Q9rS8tU7vW6xY5zA4bC3dE",
    ]
    assert recorder.current == [None, "text_0", "text_0", "text_0"] + [
        "toolu_01B2cD3eF4gH5iJ6kL7mN8oP"
    ] * 4 + ["toolu_01Q9rS8tU7vW6xY5zA4bC3dE"] * 4 + [None]
    assert state.just_completed is None  # cleared after the hook
    assert state.events == PARALLEL


def test_tool_id_is_index_based_until_known() -> None:
    events = script_events(ScriptSpec(tool_calls=[ScriptCall(id="call_9", name="f", arguments={})]))
    start = events[1].model_copy(update={"id": None})
    state = StreamState()
    for event in [events[0], start]:
        state.update(event)
    assert state.blocks[0].id == "tool_0"
    for event in events[2:]:
        state.update(event)
    assert state.blocks[0].id == "call_9"  # the final call's id, once it came


class Terminator:
    def __init__(
        self, after: int, raise_in_close: bool = False, send_in_close: bool = True
    ) -> None:
        self.after = after
        self.send_in_close = send_in_close
        self.seen = 0
        self.cleanups = 0
        self.sent_after_terminate: list[bool] = []
        self.raise_in_close = raise_in_close

    def on_event(self, event: Event, state: StreamState, ctx: PolicyContext) -> None:
        self.seen += 1
        ctx.send(event)
        if self.seen == self.after:
            ctx.terminate()
            self.sent_after_terminate.append(ctx.send(event))

    def on_close(self, state: StreamState, ctx: PolicyContext) -> None:
        self.cleanups += 1
        if self.send_in_close:
            ctx.send(state.events[-1])
        if self.raise_in_close:
            raise RuntimeError("cleanup failed")


def test_nothing_reaches_the_client_after_terminate_and_cleanup_runs_once() -> None:
    policy = Terminator(after=3)
    runner, out = run(policy, PARALLEL)
    assert out == PARALLEL[:3]
    assert policy.seen == 3  # no hook after terminate
    assert policy.sent_after_terminate == [False]
    assert policy.cleanups == 1
    assert len(runner.dropped) == 2  # the send after terminate, the send in cleanup
    assert runner.state.events == PARALLEL  # input still aggregated
    assert runner.close() == [] and policy.cleanups == 1
    assert runner.feed(PARALLEL[0]) == []


def test_cleanup_runs_once_even_when_it_raises() -> None:
    policy = Terminator(after=99, raise_in_close=True, send_in_close=False)
    runner, out = run(policy, PARALLEL[:4])
    assert policy.cleanups == 1
    assert [type(e).__name__ for e in runner.errors] == ["RuntimeError"]
    # The client had start + a text block; the failure closed it grammatically.
    assert check_contract(out) == []
    assert out[-1].type == "error" and "cleanup failed" in out[-1].error_message  # type: ignore[union-attr]


def test_a_raising_hook_fails_the_client_stream_cleanly() -> None:
    class Broken:
        cleanups = 0

        def on_event(self, event: Event, state: StreamState, ctx: PolicyContext) -> None:
            ctx.send(event)
            if event.type == "toolcall_delta":
                raise ValueError("judge unavailable")

        def on_close(self, state: StreamState, ctx: PolicyContext) -> None:
            self.cleanups += 1

    policy = Broken()
    _, out = run(policy, PARALLEL)
    assert policy.cleanups == 1
    assert check_contract(out) == []
    assert out[-1].type == "error"
    assert out[-1].error_message == "stream policy failed: ValueError: judge unavailable"  # type: ignore[union-attr]
    # The open tool call was closed with what the client had seen of it.
    assert out[-2].type == "toolcall_end" and out[-2].tool_call.arguments == {}  # type: ignore[union-attr]


def test_buffering_policy_releases_an_approved_response_unchanged() -> None:
    policy = BufferingPolicy(judge=lambda message: None)
    runner = PolicyRunner(policy)
    delivered = [runner.feed(e) for e in PARALLEL]
    assert all(d == [] for d in delivered[:-1])  # nothing before the end
    assert delivered[-1] == PARALLEL
    assert runner.close() == [] and policy.cleanups == 1


def test_buffering_policy_refuses_a_response() -> None:
    policy = BufferingPolicy(judge=lambda message: "refused: mentions Tokyo")
    _, out = run(policy, PARALLEL)
    assert [e.type for e in out] == ["start", "error"]
    assert out[-1].error_message == "refused: mentions Tokyo"  # type: ignore[union-attr]
    assert out[-1].message.content == []  # type: ignore[union-attr]


def test_buffering_policy_fails_a_stream_that_never_ended() -> None:
    policy = BufferingPolicy(judge=lambda message: None)
    _, out = run(policy, PARALLEL[:5])
    assert [e.type for e in out] == ["start", "error"]
    assert policy.cleanups == 1


def test_judge_passes_text_at_once_and_holds_each_call_until_judged() -> None:
    judged: list[str] = []

    def approve(call: ToolCallStreamBlock) -> None:
        judged.append(call.arguments)

    policy = ToolCallJudgePolicy(judge=approve)
    runner = PolicyRunner(policy)
    per_event = [runner.feed(e) for e in PARALLEL]
    assert per_event[1] == [PARALLEL[1]]  # text_start goes through at once
    assert per_event[4] == []  # toolcall_start is held
    assert per_event[7] == PARALLEL[4:8]  # released at toolcall_end, after the judge
    assert [e for chunk in per_event for e in chunk] == PARALLEL
    assert judged == ['{"city": "Tokyo"}', '{"tz": "Asia/Tokyo"}']


def test_judge_blocks_the_second_call() -> None:
    policy = ToolCallJudgePolicy(
        judge=lambda call: "get_time is not allowed" if call.name == "get_time" else None
    )
    _, out = run(policy, PARALLEL)
    assert check_contract(out) == []
    assert out[:8] == PARALLEL[:8]  # text and the approved call, unchanged
    assert [e.type for e in out[8:]] == ["error"]  # the refused call never reaches the client
    final = out[-1].message  # type: ignore[union-attr]
    assert final.content == PARALLEL[-1].message.content[:2]  # type: ignore[union-attr]
    assert (final.stop_reason, final.error_message) == ("error", "get_time is not allowed")
    assert policy.cleanups == 1 and len(out) == 9


def test_judge_keeps_order_for_interleaved_calls() -> None:
    # Chat Completions interleaves two calls; a call is released only when every earlier
    # event is, so the client sees the original order.
    policy = ToolCallJudgePolicy(judge=lambda call: None)
    _, out = run(policy, INTERLEAVED)
    assert out == INTERLEAVED
    refuse_first = ToolCallJudgePolicy(judge=lambda call: "no" if call.index == 0 else None)
    _, out = run(refuse_first, INTERLEAVED)
    assert [e.type for e in out] == ["start", "error"]


streams = st.builds(
    lambda text, calls, fail: script_events(
        ScriptSpec(
            text=text,
            tool_calls=[
                ScriptCall(id=f"c{i}", name=name, arguments={"n": i})
                for i, name in enumerate(calls)
            ],
            error=ScriptError(message="cut", kind="transient") if fail else None,
            delta_size=3,
        )
    ),
    st.sampled_from([None, "hello world"]),
    st.lists(st.sampled_from(["ok", "bad"]), max_size=4),
    st.booleans(),
)


@settings(max_examples=150, deadline=None)  # no wall-clock limits in unit tests
@given(events=streams, cut=st.integers(0, 40))
def test_judge_policy_output_is_always_a_valid_stream_prefix(events: list[Event], cut: int) -> None:
    """Whatever is refused and wherever the input stops, the client gets a contract-valid
    stream (or a prefix of the input when it simply stopped), cleanup runs once, and nothing
    follows a terminal event."""
    policy = ToolCallJudgePolicy(judge=lambda call: "refused" if call.name == "bad" else None)
    runner, out = run(policy, events[:cut] if cut else events)
    assert policy.cleanups == 1
    terminals = [i for i, e in enumerate(out) if e.type in ("done", "error")]
    assert len(terminals) <= 1 and (not terminals or terminals[0] == len(out) - 1)
    if terminals:
        assert check_contract(out) == []
    refused = any(
        b.name == "bad" and b.is_complete
        for b in runner.state.blocks
        if isinstance(b, ToolCallStreamBlock)
    )
    if not refused and (not cut or cut >= len(events)):
        assert out == events
