"""Issue 16: each policy's defaults against the numbers quoted from the seeds, and the rules
that the scenarios cannot pin alone (inputs that are ignored, the gate's async questions).

Quotes: seeds/000 (opencode's processor), seeds/003 (Claude Code's orchestration).
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.loop.test_loop_state import READ, Harness

from stream_harness.contract.events import AssistantMessage, TextBlock, ToolCall, Usage
from stream_harness.loop.commands import (
    AskPermission,
    CancelPermission,
    SendRequest,
    StartTimer,
    StartTool,
)
from stream_harness.loop.messages import ToolResult, UserMessage, estimate_tokens, prompt_tokens
from stream_harness.loop.retry import RetryPolicy
from stream_harness.loop.scenario import ScriptSpec, script_events
from stream_harness.loop.state import STREAM_ENDED, LoopConfig
from stream_harness.loop.tools import SafeWhen, ToolOutcome, ToolSpec

BASH = ToolSpec(
    "bash",
    {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    concurrency_safe=SafeWhen({"properties": {"command": {"pattern": "^ls"}}}),
)


# -- defaults ------------------------------------------------------------------------------


def test_loop_defaults_are_the_seeds_numbers() -> None:
    config = LoopConfig()
    # seeds/000: DOOM_LOOP_THRESHOLD = 3; doom_loop asks (PermissionNext.ask).
    assert (config.doom_loop_threshold, config.doom_loop) == (3, "ask")
    # seeds/000 finish: input > limit.context * 0.9; the seed has one more path, and Claude
    # Code compacts before streaming (seeds/003): pre-request compaction is on.
    assert (config.compaction_threshold, config.compaction_tokens) == (0.9, "prompt")
    assert config.pre_request_compaction is True
    # seeds/003: getParallelismLimit() defaults to 10.
    assert config.concurrency_limit == 10
    # seeds/000: permissions come from the agent's ruleset; opencode's default allows tools.
    assert dict(config.permissions) == {"*": "allow"}
    # seeds/000 SessionRetry: 2000 ms doubling, max 60000 ms, attempt < 5.
    assert config.retry == RetryPolicy(max_retries=5, base=2.0, factor=2.0, cap=60.0)


# -- a response that ends without a terminal event ------------------------------------------


def test_response_end_after_the_terminal_event_changes_nothing() -> None:
    h = Harness()
    h.respond(text="done")
    request = h.last(SendRequest)
    assert h.loop.response_ended(request.request_id) == []
    assert h.events[-1].reason == "completed"


def test_response_end_before_the_terminal_event_is_a_retried_error_keeping_the_partial() -> None:
    h = Harness(LoopConfig(retry=RetryPolicy(base=1.0)))
    request = h.last(SendRequest)
    events = script_events(ScriptSpec(text="partial answer", delta_size=7))
    h.feed(events[:3])  # start, text_start, "partial"
    out = h.take(h.loop.response_ended(request.request_id))
    end = next(o for o in out if getattr(o, "type", None) == "message_end")
    assert end.committed is False
    assert end.message.stop_reason == "error" and end.message.error_message == STREAM_ENDED
    assert end.message.content == [TextBlock(content="partial")]
    retry = next(o for o in out if getattr(o, "type", None) == "retry")
    assert (retry.delay, retry.error_kind) == (1.0, "transient")
    assert isinstance(out[-1], StartTimer)
    assert h.loop.response_ended(request.request_id) == []  # once is enough


def test_response_end_without_retries_commits_the_partial_message() -> None:
    h = Harness(LoopConfig(retry=RetryPolicy(max_retries=0)))
    request = h.last(SendRequest)
    h.feed(script_events(ScriptSpec(text="partial"))[:3])
    h.take(h.loop.response_ended(request.request_id))
    assert h.events[-1].reason == "error" and h.events[-1].error_message == STREAM_ENDED
    assert h.loop.history[-1].content == [TextBlock(content="partial")]  # type: ignore[union-attr]
    h.assert_consistent()


# -- retry ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "network", "retried"),
    [
        ("getaddrinfo ENOTFOUND api.example.com", True, True),  # DNS failure
        ("[Errno 104] Connection reset by peer", True, True),
        ("ReadTimeout", True, True),
        ("Request timeout", False, True),  # a message that says timeout
        ("no more scripted responses", False, False),  # not a network failure
    ],
)
def test_client_failures_follow_seed_000(message: str, network: bool, retried: bool) -> None:
    h = Harness()
    h.take(h.loop.request_failed(h.last(SendRequest).request_id, message, network=network))
    assert (h.types()[-1] == "retry") is retried
    if not retried:
        assert h.events[-1].reason == "error"


def test_retries_are_counted_per_model_request() -> None:
    # Five retries in turn 1 do not eat into turn 2's: seed 000's attempt counter is local
    # to one process() call (one request and its resends).
    h = Harness(LoopConfig(retry=RetryPolicy(base=1.0)))
    for _ in range(5):
        h.respond(error={"message": "Overloaded", "kind": "overloaded"})
        h.take(h.loop.wake(h.last(StartTimer).timer_id))
    h.respond(tool_calls=[{"id": "a", "name": "read", "arguments": {"path": "a"}}])
    h.take(h.loop.tool_finished(h.last(StartTool).key, ToolOutcome(value="x")))
    h.respond(error={"message": "Overloaded", "kind": "overloaded"})
    retries = [e for e in h.events if e.type == "retry"]
    assert [(e.turn, e.retry, e.delay) for e in retries][-2:] == [(1, 5, 16.0), (2, 1, 1.0)]


# -- compaction ----------------------------------------------------------------------------


def test_prompt_tokens_count_cached_input() -> None:
    message = AssistantMessage(usage=Usage(input=10, cache_read=800, cache_write=95, output=99))
    assert prompt_tokens(message) == 905


def test_post_response_signal_counts_input_not_output() -> None:
    below = Harness(LoopConfig(context_window=1000, pre_request_compaction=False))
    below.respond(text="x", usage={"input": 850, "output": 140})  # 990 in all
    assert below.events[-1].reason == "completed"
    cached = Harness(LoopConfig(context_window=1000))
    cached.respond(text="x", usage={"input": 100, "cache_read": 801})
    assert cached.events[-1].reason == "compact"
    total = Harness(LoopConfig(context_window=1000, compaction_tokens="total"))
    total.respond(text="x", usage={"input": 850, "output": 140})
    assert total.events[-1].reason == "compact"


def test_estimate_uses_the_last_usage_then_four_characters_a_token() -> None:
    assistant = AssistantMessage(
        content=[ToolCall(id="a", name="read", arguments={})], usage=Usage(input=100, output=20)
    )
    result = ToolResult(tool_call_id="a", name="read", content="x" * 41)
    assert estimate_tokens([UserMessage(content="y" * 8), assistant, result]) == 100 + 20 + 11
    assert estimate_tokens([UserMessage(content="y" * 9)]) == 3


def test_pre_request_compaction_without_a_compactor_ends_the_run_before_sending() -> None:
    h = Harness(LoopConfig(context_window=10))
    # The prompt "hi" is 1 token: fine. A 100-character result pushes the estimate over 9.
    h.respond(tool_calls=[{"id": "a", "name": "read", "arguments": {"path": "a"}}])
    requests = len([o for o in h.outputs if isinstance(o, SendRequest)])
    h.take(h.loop.tool_finished(h.last(StartTool).key, ToolOutcome(value="z" * 100)))
    assert len([o for o in h.outputs if isinstance(o, SendRequest)]) == requests
    assert h.types()[-4:] == ["turn_start", "compaction", "turn_end", "agent_end"]
    assert h.events[-3].reason == "pre_request" and h.events[-1].reason == "compact"
    h.assert_consistent()


def test_one_compaction_per_cause() -> None:
    calls: list[int] = []

    def compactor(history: Any) -> list[UserMessage]:
        calls.append(len(history))
        return [UserMessage(content="x" * 400)]  # still over the window: cannot shrink it

    h = Harness(LoopConfig(context_window=50), compactor=compactor)
    h.respond(text="x", usage={"input": 60})  # threshold after the response
    # The compacted history is still estimated over the threshold, but it is not compacted
    # again before its request; the request goes out.
    assert [e.reason for e in h.events if e.type == "compaction"] == ["threshold"]
    assert h.last(SendRequest).messages == (UserMessage(content="x" * 400),)
    # That request overflows: no second compaction for the same cause, the run ends in error.
    h.respond(error={"message": "prompt is too long", "kind": "overflow"})
    assert calls == [2]
    assert [e.reason for e in h.events if e.type == "compaction"] == ["threshold"]
    assert h.events[-1].reason == "error"
    h.assert_consistent()


# -- the permission gate -------------------------------------------------------------------


def test_a_call_waiting_for_permission_holds_its_slot_and_starts_when_allowed() -> None:
    h = Harness(LoopConfig(permissions={"*": "allow", "bash": "ask"}), tools=[READ, BASH])
    h.respond(
        tool_calls=[
            {"id": "b", "name": "bash", "arguments": {"command": "make"}},
            {"id": "r", "name": "read", "arguments": {"path": "a"}},
        ]
    )
    ask = h.last(AskPermission)
    assert (ask.permission, ask.tool_call_id, ask.count) == ("bash", "b", 0)
    assert not [o for o in h.outputs if isinstance(o, StartTool)]  # read waits behind bash
    h.take(h.loop.permission_answer(ask.ask_id, "allow"))
    assert [o.call.id for o in h.outputs if isinstance(o, StartTool)] == ["b"]
    assert [(e.action, e.decision) for e in h.events if e.type == "permission"] == [
        ("ask", "allow")
    ]


def test_abort_while_asking_withdraws_the_question_and_cancels_the_call() -> None:
    h = Harness(LoopConfig(permissions={"bash": "ask"}), tools=[BASH])
    h.respond(tool_calls=[{"id": "b", "name": "bash", "arguments": {"command": "make"}}])
    ask = h.last(AskPermission)
    out = h.take(h.loop.abort())
    assert CancelPermission(ask.ask_id) in out
    assert h.loop.permission_answer(ask.ask_id, "allow") == []
    assert [m.kind for m in h.loop.history if isinstance(m, ToolResult)] == ["cancelled"]
    assert not [o for o in h.outputs if isinstance(o, StartTool)]
    h.assert_consistent()


def test_rejection_blocks_unless_continue_on_deny() -> None:
    def no(request: AskPermission) -> Any:
        return "deny"

    blocked = Harness(LoopConfig(permissions={"bash": "ask"}), tools=[BASH], ask=no)
    blocked.respond(tool_calls=[{"id": "b", "name": "bash", "arguments": {"command": "x"}}])
    assert blocked.events[-1].reason == "blocked"
    goes_on = Harness(
        LoopConfig(permissions={"bash": "ask"}, continue_on_deny=True), tools=[BASH], ask=no
    )
    goes_on.respond(tool_calls=[{"id": "b", "name": "bash", "arguments": {"command": "x"}}])
    assert goes_on.events[-1].type == "turn_start"


# -- concurrency ---------------------------------------------------------------------------


def test_concurrency_safety_is_decided_per_input() -> None:
    assert BASH.is_concurrency_safe({"command": "ls -la"})
    assert not BASH.is_concurrency_safe({"command": "rm -rf /"})
    assert not BASH.is_concurrency_safe({"command": 5})  # invalid input: never safe

    def boom(arguments: Any) -> bool:
        raise RuntimeError("predicate failed")

    assert not ToolSpec("t", concurrency_safe=boom).is_concurrency_safe({})


def test_safe_calls_of_one_tool_form_one_batch() -> None:
    h = Harness(tools=[BASH])
    h.respond(
        tool_calls=[
            {"id": "a", "name": "bash", "arguments": {"command": "ls a"}},
            {"id": "b", "name": "bash", "arguments": {"command": "ls b"}},
            {"id": "c", "name": "bash", "arguments": {"command": "rm c"}},
        ]
    )
    starts = [e for e in h.events if e.type == "tool_execution_start"]
    assert [(e.tool_call_id, e.batch, e.safe) for e in starts] == [
        ("a", 0, True),
        ("b", 0, True),
    ]
