"""The invariant checker finds each kind of broken log (so that its silence means something)."""

from __future__ import annotations

from stream_harness.contract.events import AssistantMessage, TextBlock, ToolCall
from stream_harness.loop.events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    MessageEnd,
    MessageStart,
    Retry,
    ToolExecutionEnd,
    ToolExecutionStart,
    TurnEnd,
    TurnStart,
)
from stream_harness.loop.invariants import check_events, check_history
from stream_harness.loop.messages import ToolResult, UserMessage

A = ToolCall(id="a", name="read")
B = ToolCall(id="b", name="read")
CALLS = AssistantMessage(content=[A, B], stop_reason="tool_use")


def result(call: ToolCall) -> ToolResult:
    return ToolResult(tool_call_id=call.id, name=call.name, content="x")


def assistant(message: AssistantMessage, committed: bool = True) -> list[AgentEvent]:
    return [
        MessageStart(turn=1, role="assistant", attempt=1),
        MessageEnd(turn=1, role="assistant", message=message, committed=committed),
    ]


def tool_result(r: ToolResult) -> list[AgentEvent]:
    return [
        MessageStart(turn=1, role="tool_result"),
        MessageEnd(turn=1, role="tool_result", message=r),
    ]


def start(
    key: str, batch: int, name: str = "read", context: dict | None = None
) -> ToolExecutionStart:  # type: ignore[type-arg]
    return ToolExecutionStart(
        turn=1,
        key=key,
        tool_call_id=key,
        name=name,
        arguments={},
        context=context or {},
        batch=batch,
    )


def end(key: str) -> ToolExecutionEnd:
    return ToolExecutionEnd(turn=1, key=key, tool_call_id=key, name="read", outcome="ok")


def run(*middle: AgentEvent) -> list[AgentEvent]:
    return [
        AgentStart(),
        TurnStart(turn=1, model="m"),
        *middle,
        TurnEnd(turn=1, signal="continue"),
        AgentEnd(reason="completed", turns=1),
    ]


def both_ran(*tools: AgentEvent) -> list[AgentEvent]:
    """A run whose two calls went through ``tools`` (their start and end events) and got
    their results in call order: only the tool events differ between these logs."""
    return run(*assistant(CALLS), *tools, *tool_result(result(A)), *tool_result(result(B)))


def at_once(batch_b: int, context_b: dict[str, object] | None = None) -> list[AgentEvent]:
    """Both calls running at the same time, ``a`` in batch 0 with an empty context."""
    return both_ran(start("a", 0), start("b", batch_b, context=context_b), end("a"), end("b"))


def rules(events: list[AgentEvent], **kwargs: object) -> list[str]:
    return [v.rule for v in check_events(events, **kwargs)]  # type: ignore[arg-type]


GOOD = both_ran(
    start("a", 0),
    start("b", 0),
    end("b"),
    end("a"),
)


def test_a_good_log_passes() -> None:
    assert check_events(GOOD, concurrency_limit=2, safe_tools={"read": True}) == []


def test_missing_result_is_l1() -> None:
    assert rules(run(*assistant(CALLS), *tool_result(result(A)))) == ["L1"]


def test_results_out_of_order_are_l2() -> None:
    assert rules(run(*assistant(CALLS), *tool_result(result(B)), *tool_result(result(A)))) == [
        "L2",
        "L2",
    ]


def test_result_for_no_call_is_l1() -> None:
    extra = ToolResult(tool_call_id="z", name="read")
    assert "L1" in rules(
        run(
            *assistant(CALLS), *tool_result(result(A)), *tool_result(result(B)), *tool_result(extra)
        )
    )


def test_concurrency_limit_and_unsafe_overlap_are_l3() -> None:
    log = at_once(0)
    assert rules(log, concurrency_limit=1) == ["L3"]
    assert rules(log, safe_tools={"read": False}) == ["L3"]


def test_batches_overlapping_or_going_back_are_l3() -> None:
    assert rules(at_once(1)) == ["L3"]
    back = both_ran(
        start("a", 1),
        end("a"),
        start("b", 0),
        end("b"),
    )
    assert rules(back) == ["L3"]


def test_one_batch_two_contexts_is_l4() -> None:
    assert rules(at_once(0, context_b={"x": 1})) == ["L4"]


def test_retry_rules_are_l7() -> None:
    failed = AssistantMessage(stop_reason="error", error_message="x")
    retry = Retry(turn=1, retry=1, delay=1.0, hinted=False, next_time=1.0, error_kind="overloaded")
    ok = AssistantMessage(content=[TextBlock(content="hi")])
    assert rules(run(*assistant(failed, committed=False), retry, *assistant(ok))) == []
    # A retry after a committed message, and an overflow retried.
    assert rules(run(*assistant(ok), retry)) == ["L7"]
    overflow = retry.model_copy(update={"error_kind": "overflow"})
    assert rules(run(*assistant(failed, committed=False), overflow, *assistant(ok))) == ["L7"]
    # A retry after a tool started inside the failed attempt (eager mode).
    eager = [
        MessageStart(turn=1, role="assistant", attempt=1),
        start("a", 0),
        end("a"),
        MessageEnd(turn=1, role="assistant", message=failed, committed=False),
        retry,
        *assistant(ok),
    ]
    assert rules(run(*eager)) == ["L7"]


def test_grammar_breaks_are_l6() -> None:
    assert rules([*GOOD, AgentStart()]) == ["L6"]
    assert rules(GOOD[1:]) == ["L6"]  # no agent_start
    assert rules(GOOD[:-1]) == ["L6"]  # no agent_end
    assert rules(GOOD[:-1], complete=False) == []  # ...which is fine for a run in progress
    assert rules(
        [
            AgentStart(),
            TurnStart(turn=2, model="m"),
            TurnEnd(turn=2, signal="stop"),
            AgentEnd(reason="completed", turns=1),
        ]
    ) == ["L6"]
    assert rules(run(end("a"))) == ["L6"]  # tool end without start
    assert rules(run(*assistant(CALLS)[:1])) == ["L6"]  # message never ended


def test_history_rules() -> None:
    good = [UserMessage(content="hi"), CALLS, result(A), result(B)]
    assert check_history(good) == []
    assert [v.rule for v in check_history(good[:3])] == ["L1"]
    assert check_history(good[:3], complete=False) == []
    assert [v.rule for v in check_history([good[0], CALLS, result(B), result(A)])] == ["L2", "L2"]
    assert [v.rule for v in check_history([good[0], result(A)])] == ["L1"]
