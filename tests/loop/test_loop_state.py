"""The agent-loop machine on hand-picked paths whose expected outputs are written out here."""

from __future__ import annotations

from typing import Any

import pytest

from stream_harness.contract.events import Event, ToolCall
from stream_harness.loop.clock import VirtualClock
from stream_harness.loop.commands import (
    AskPermission,
    CancelRequest,
    CancelTimer,
    CancelTool,
    Output,
    SendRequest,
    StartTimer,
    StartTool,
)
from stream_harness.loop.events import AGENT_EVENT_TYPES, AgentEvent
from stream_harness.loop.invariants import check_events, check_history
from stream_harness.loop.messages import UserMessage
from stream_harness.loop.retry import RetryPolicy
from stream_harness.loop.scenario import ScriptCall, ScriptError, ScriptSpec, script_events
from stream_harness.loop.state import AgentLoop, LoopConfig, LoopState
from stream_harness.loop.tools import ToolOutcome, ToolSpec
from stream_harness.providers.accumulator import Accumulator

READ = ToolSpec(
    "read", {"type": "object", "properties": {"path": {"type": "string"}}}, concurrency_safe=True
)


class Harness:
    def __init__(
        self, config: LoopConfig | None = None, tools: list[ToolSpec] | None = None, **kwargs: Any
    ) -> None:
        self.clock = VirtualClock()
        self.loop = AgentLoop(
            config or LoopConfig(),
            tools or [READ],
            [UserMessage(content="hi")],
            clock=self.clock,
            **kwargs,
        )
        self.outputs: list[Output] = []
        self.take(self.loop.start())

    def take(self, outputs: list[Output]) -> list[Output]:
        self.outputs.extend(outputs)
        return outputs

    @property
    def events(self) -> list[AgentEvent]:
        return [o for o in self.outputs if isinstance(o, AGENT_EVENT_TYPES)]

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def last(self, kind: type) -> Any:
        return [o for o in self.outputs if isinstance(o, kind)][-1]

    def feed(self, events: list[Event]) -> list[Output]:
        request = self.last(SendRequest)
        out: list[Output] = []
        for event in events:
            out += self.take(self.loop.model_event(request.request_id, event))
        return out

    def respond(self, **script: Any) -> list[Output]:
        calls = [ScriptCall(**c) for c in script.pop("tool_calls", [])]
        error = script.pop("error", None)
        return self.feed(
            script_events(
                ScriptSpec(
                    tool_calls=calls, error=ScriptError(**error) if error else None, **script
                )
            )
        )

    def assert_consistent(self) -> None:
        complete = self.loop.state is LoopState.DONE
        assert check_events(self.events, complete=complete) == []
        assert check_history(self.loop.history, complete=complete) == []


def test_abort_before_start_gives_a_complete_empty_run() -> None:
    loop = AgentLoop(LoopConfig(), [], [UserMessage(content="hi")], clock=VirtualClock())
    out = loop.abort()
    assert [o.type for o in out if isinstance(o, AGENT_EVENT_TYPES)] == ["agent_start", "agent_end"]
    assert out[-1].reason == "aborted" and out[-1].turns == 0
    assert loop.start() == [] and loop.abort() == []


def test_start_is_idempotent() -> None:
    h = Harness()
    assert h.loop.start() == []
    assert h.types() == ["agent_start", "turn_start"]


def test_stale_request_ids_and_timers_are_ignored() -> None:
    h = Harness(LoopConfig(retry=RetryPolicy(base=1.0)))
    first = h.last(SendRequest)
    h.respond(error={"message": "Overloaded", "kind": "overloaded"})
    timer = h.last(StartTimer)
    assert h.loop.wake(timer.timer_id + 1) == []  # not our timer
    h.take(h.loop.wake(timer.timer_id))
    second = h.last(SendRequest)
    assert second.request_id == first.request_id + 1
    # Events for the abandoned request change nothing.
    assert h.loop.model_event(first.request_id, script_events(ScriptSpec(text="late"))[0]) == []
    assert h.loop.request_failed(first.request_id, "late") == []
    h.respond(text="ok")
    assert h.loop.history[-1].content[0].content == "ok"  # type: ignore[union-attr]
    h.assert_consistent()


def test_a_mid_stream_error_ignores_the_success_headers() -> None:
    # Headers of a 200 response carry rate-limit resets on every success; a mid-stream error
    # must back off, not wait for them.
    h = Harness(LoopConfig(retry=RetryPolicy(base=1.0)))
    request = h.last(SendRequest)
    h.take(
        h.loop.response_head(
            request.request_id,
            200,
            {"retry-after": "30", "anthropic-ratelimit-requests-reset": "2026-01-01T00:05:00Z"},
        )
    )
    h.respond(text="partial", error={"message": "Overloaded", "kind": "overloaded"})
    retry = h.events[-1]
    assert retry.type == "retry" and retry.delay == 1.0 and not retry.hinted


def test_error_headers_give_the_hint_on_the_virtual_clock() -> None:
    h = Harness()
    request = h.last(SendRequest)
    h.clock.advance_to(2.0)
    # The epoch is 2026-01-01T00:00:00Z, so now is 00:00:02 and the date is 8 s ahead.
    h.take(
        h.loop.response_head(
            request.request_id, 429, {"Retry-After": "Thu, 01 Jan 2026 00:00:10 GMT"}, b""
        )
    )
    h.respond(error={"message": "rate limited", "kind": "rate_limit"})
    retry = h.events[-1]
    assert (retry.delay, retry.hinted, retry.next_time) == (8.0, True, 10.0)


def test_client_failure_is_classified_and_retried() -> None:
    h = Harness(LoopConfig(retry=RetryPolicy(max_retries=1)))
    request = h.last(SendRequest)
    h.take(h.loop.request_failed(request.request_id, "read ECONNRESET"))
    assert h.types()[-3:] == ["message_start", "message_end", "retry"]
    assert h.events[-2].committed is False and h.events[-1].error_kind == "transient"
    h.take(h.loop.wake(h.last(StartTimer).timer_id))
    h.take(h.loop.request_failed(h.last(SendRequest).request_id, "read ECONNRESET"))
    assert h.events[-1].type == "agent_end" and h.events[-1].reason == "error"
    assert h.events[-1].error_message == "read ECONNRESET"
    assert [m.stop_reason for m in h.loop.history[1:]] == ["error"]  # type: ignore[union-attr]
    h.assert_consistent()


def test_provider_reported_abort_ends_like_an_abort() -> None:
    h = Harness()
    events = script_events(
        ScriptSpec(
            text="Let me", tool_calls=[ScriptCall(id="r", name="read", arguments={"path": "a"})]
        )
    )
    terminal = events[-1]
    message = terminal.message.model_copy(
        update={"stop_reason": "aborted", "error_message": "Request was aborted"}
    )  # type: ignore[union-attr]
    from stream_harness.contract.events import ErrorEvent

    h.feed(
        [
            *events[:-1],
            ErrorEvent(reason="aborted", error_message="Request was aborted", message=message),
        ]
    )
    assert h.events[-1].reason == "aborted"
    assert h.loop.history[-1].kind == "cancelled"  # type: ignore[union-attr]
    assert h.loop.abort() == []
    h.assert_consistent()


def test_abort_while_streaming_keeps_the_partial_message() -> None:
    h = Harness()
    events = script_events(
        ScriptSpec(
            text="Hello there",
            tool_calls=[ScriptCall(id="r", name="read", arguments={"path": "abc"})],
            delta_size=4,
        )
    )
    cut = next(i for i, e in enumerate(events) if e.type == "toolcall_delta") + 1
    h.feed(events[:cut])
    request = h.last(SendRequest)
    out = h.take(h.loop.abort())
    assert out[0] == CancelRequest(request.request_id)
    partial = h.loop.history[1]
    assert partial.stop_reason == "aborted" and partial.error_message == "Request was aborted"  # type: ignore[union-attr]
    assert partial.content[0].content == "Hello there"  # type: ignore[union-attr]
    assert partial.content[1] == ToolCall(
        id="r", name="read", arguments={}
    )  # live arguments of '{"pa'
    assert [m.kind for m in h.loop.history[2:]] == ["cancelled"]  # type: ignore[union-attr]
    assert h.loop.abort() == []
    h.assert_consistent()


def test_abort_while_tools_run_cancels_them_and_starts_nothing() -> None:
    write = ToolSpec("write", {"type": "object"})
    h = Harness(LoopConfig(concurrency_limit=1), tools=[READ, write])
    h.respond(
        tool_calls=[
            {"id": "a", "name": "read", "arguments": {"path": "a"}},
            {"id": "b", "name": "read", "arguments": {"path": "b"}},
            {"id": "c", "name": "write", "arguments": {}},
        ]
    )
    first = h.last(StartTool)
    assert first.call.id == "a"
    out = h.take(h.loop.abort())
    assert CancelTool(first.key) in out
    assert not any(isinstance(o, StartTool | SendRequest | StartTimer) for o in out)
    assert [m.kind for m in h.loop.history[2:]] == ["cancelled"] * 3  # type: ignore[union-attr]
    assert h.loop.tool_finished(first.key, ToolOutcome(value="late")) == []
    h.assert_consistent()


def test_abort_during_the_retry_wait_cancels_the_timer() -> None:
    h = Harness()
    h.respond(error={"message": "Overloaded", "kind": "overloaded"})
    timer = h.last(StartTimer)
    out = h.take(h.loop.abort())
    assert out[0] == CancelTimer(timer.timer_id)
    assert h.loop.wake(timer.timer_id) == []
    assert h.loop.history == [UserMessage(content="hi")]
    assert [o for o in h.outputs if isinstance(o, SendRequest)].__len__() == 1
    h.assert_consistent()


def test_fatal_error_commits_the_message_and_answers_its_calls() -> None:
    h = Harness()
    h.respond(
        tool_calls=[{"id": "r", "name": "read", "arguments": {"path": "a"}}],
        error={"message": "invalid key", "kind": "fatal"},
    )
    assert h.loop.state is LoopState.DONE
    result = h.loop.history[-1]
    assert result.kind == "not_executed"  # type: ignore[union-attr]
    assert (
        result.content
        == 'Tool call "read" was not executed: the model response ended in error (invalid key).'
    )  # type: ignore[union-attr]
    assert h.events[-1].reason == "error" and h.events[-1].error_message == "invalid key"
    h.assert_consistent()


def test_overloads_count_only_when_consecutive() -> None:
    h = Harness(LoopConfig(fallback_model="backup", fallback_after=2, retry=RetryPolicy(base=1.0)))
    for kind in ("overloaded", "transient", "overloaded"):
        h.respond(error={"message": "x", "kind": kind})
        h.take(h.loop.wake(h.last(StartTimer).timer_id))
    assert h.loop.model == "model"  # overloaded, transient, overloaded: never two in a row
    h.respond(error={"message": "x", "kind": "overloaded"})
    assert h.types()[-1] != "retry" and h.loop.model == "backup"
    assert h.last(SendRequest).model == "backup"
    assert [e.type for e in h.events if e.type in ("retry", "fallback")] == ["retry"] * 3 + [
        "fallback"
    ]


def test_a_success_resets_the_overload_count() -> None:
    h = Harness(LoopConfig(fallback_model="backup", fallback_after=2, retry=RetryPolicy(base=1.0)))
    h.respond(error={"message": "x", "kind": "overloaded"})
    h.take(h.loop.wake(h.last(StartTimer).timer_id))
    h.respond(tool_calls=[{"id": "a", "name": "read", "arguments": {"path": "a"}}])
    h.take(h.loop.tool_finished(h.last(StartTool).key, ToolOutcome(value="x")))
    h.respond(error={"message": "x", "kind": "overloaded"})  # first of a new run of overloads
    assert h.types()[-1] == "retry" and h.loop.model == "model"


def test_fallback_is_skipped_when_already_on_the_fallback_model() -> None:
    h = Harness(
        LoopConfig(
            model="backup",
            fallback_model="backup",
            fallback_after=1,
            retry=RetryPolicy(max_retries=1),
        )
    )
    h.respond(error={"message": "x", "kind": "overloaded"})
    assert h.types()[-1] == "retry"


def test_compaction_threshold_is_strictly_above() -> None:
    at = Harness(LoopConfig(context_window=1000))
    at.respond(text="x", usage={"input": 900})
    assert at.events[-1].reason == "completed"
    above = Harness(LoopConfig(context_window=1000))
    above.respond(text="x", usage={"input": 901})
    assert above.events[-1].reason == "compact"
    assert [e.type for e in above.events][-3:] == ["compaction", "turn_end", "agent_end"]


def test_overflow_stop_reason_compacts() -> None:
    # model_context_window_exceeded ends the stream as `length` but the turn overflowed.
    h = Harness(LoopConfig())
    events = script_events(ScriptSpec(text="x", stop="length"))
    done = events[-1]
    message = done.message.model_copy(
        update={"provider_stop_reason": "model_context_window_exceeded"}
    )  # type: ignore[union-attr]
    h.feed([*events[:-1], done.model_copy(update={"message": message})])
    assert h.events[-1].reason == "compact"
    assert [e.reason for e in h.events if e.type == "compaction"] == ["overflow"]


def test_compactor_continues_the_run() -> None:
    h = Harness(
        LoopConfig(context_window=1000), compactor=lambda history: [UserMessage(content="summary")]
    )
    h.respond(text="x", usage={"input": 950})
    assert h.loop.history == [UserMessage(content="summary")]
    assert h.last(SendRequest).messages == (UserMessage(content="summary"),)
    assert h.types()[-3:] == ["compaction", "turn_end", "turn_start"]
    assert [e.signal for e in h.events if e.type == "turn_end"] == ["compact"]


def test_doom_loop_ask_always_stops_asking_for_that_tool() -> None:
    asked: list[tuple[str, int]] = []

    def ask(request: AskPermission) -> Any:
        asked.append((request.name, request.count))
        return "always"

    h = Harness(LoopConfig(doom_loop="ask"), ask=ask)
    h.respond(
        tool_calls=[{"id": f"c{i}", "name": "read", "arguments": {"path": "a"}} for i in range(5)]
    )
    assert asked == [("read", 3)]
    assert [e.decision for e in h.events if e.type == "doom_loop"] == ["always", "allow", "allow"]
    assert len([o for o in h.outputs if isinstance(o, StartTool)]) == 5


def test_doom_loop_ask_without_an_ask_function_waits_for_the_host() -> None:
    h = Harness(LoopConfig(doom_loop="ask", continue_on_deny=True))
    h.respond(
        tool_calls=[{"id": f"c{i}", "name": "read", "arguments": {"path": "a"}} for i in range(3)]
    )
    question = h.last(AskPermission)
    assert (question.permission, question.name, question.count) == ("doom_loop", "read", 3)
    assert not [e for e in h.events if e.type == "doom_loop"]  # not decided yet
    h.take(h.loop.permission_answer(question.ask_id, "deny"))
    assert [e.decision for e in h.events if e.type == "doom_loop"] == ["deny"]
    assert h.loop.permission_answer(question.ask_id, "allow") == []  # answered already
    for start in [o for o in h.outputs if isinstance(o, StartTool)]:
        h.take(h.loop.tool_finished(start.key, ToolOutcome(value=1)))
    assert h.events[-1].type == "turn_start"  # continue_on_deny: the run goes on
    assert [m.kind for m in h.loop.history[2:5]] == ["ok", "ok", "doom_loop_denied"]  # type: ignore[union-attr]


def test_every_call_counts_for_doom_even_invalid_ones() -> None:
    h = Harness(
        LoopConfig(doom_loop="deny"),
        tools=[ToolSpec("read", {"type": "object", "required": ["path"]}, True)],
    )
    h.respond(
        tool_calls=[
            {"id": "a", "name": "read", "arguments": {}},
            {"id": "b", "name": "read", "arguments": {}},
            {"id": "c", "name": "read", "arguments": {}},
        ]
    )
    # The third identical call is invalid anyway: it gets the validation error, not a doom-loop one.
    assert [m.kind for m in h.loop.history[2:]] == ["invalid_arguments"] * 3  # type: ignore[union-attr]
    assert not [e for e in h.events if e.type == "doom_loop"]


def test_tool_updates_only_while_running() -> None:
    h = Harness()
    h.respond(tool_calls=[{"id": "a", "name": "read", "arguments": {"path": "a"}}])
    start = h.last(StartTool)
    assert [o.type for o in h.loop.tool_update(start.key, 1)] == ["tool_execution_update"]  # type: ignore[union-attr]
    h.take(h.loop.tool_finished(start.key, ToolOutcome(value="x")))
    assert h.loop.tool_update(start.key, 2) == []
    assert h.loop.tool_update("no.such.key", 3) == []


def test_max_turns_is_checked_before_a_new_turn() -> None:
    h = Harness(LoopConfig(max_turns=1))
    h.respond(tool_calls=[{"id": "a", "name": "read", "arguments": {"path": "a"}}])
    h.take(h.loop.tool_finished(h.last(StartTool).key, ToolOutcome(value="x")))
    assert h.events[-1].type == "agent_end" and h.events[-1].reason == "max_turns"
    assert len([o for o in h.outputs if isinstance(o, SendRequest)]) == 1
    h.assert_consistent()


def test_a_discarded_eager_attempt_leaves_no_result_behind() -> None:
    # Eager mode answers an unknown call at once, before the stream fails; the retry's calls
    # must not inherit that answer.
    h = Harness(LoopConfig(eager_tools=True, retry=RetryPolicy(base=1.0)))
    events = script_events(
        ScriptSpec(
            tool_calls=[
                ScriptCall(id="x", name="nope", arguments={}),
                ScriptCall(id="y", name="read", arguments={"path": "a"}),
            ],
            error=ScriptError(message="Overloaded", kind="overloaded"),
        )
    )
    h.feed(events)
    assert h.types()[-2:] == ["message_end", "retry"]
    assert not [o for o in h.outputs if isinstance(o, StartTool)]  # y was never released
    h.take(h.loop.wake(h.last(StartTimer).timer_id))
    h.respond(
        tool_calls=[
            {"id": "z", "name": "nope", "arguments": {}},
            {"id": "w", "name": "read", "arguments": {"path": "a"}},
        ]
    )
    h.take(h.loop.tool_finished(h.last(StartTool).key, ToolOutcome(value="fine")))
    results = h.loop.history[2:4]
    assert [(r.tool_call_id, r.kind) for r in results] == [("z", "unknown_tool"), ("w", "ok")]  # type: ignore[union-attr]
    h.assert_consistent()


def test_a_tool_mutating_its_inputs_changes_nothing_else() -> None:
    h = Harness(LoopConfig(), context={"seen": ["x"]})
    h.respond(
        tool_calls=[{"id": "a", "name": "read", "arguments": {"path": "a", "opts": {"deep": [1]}}}]
    )
    start = h.last(StartTool)
    start.call.arguments["opts"]["deep"].append(2)
    start.context["seen"].append("y")
    assert h.loop.history[1].content[0].arguments == {"path": "a", "opts": {"deep": [1]}}  # type: ignore[union-attr]
    h.take(h.loop.tool_finished(start.key, ToolOutcome(value=1)))
    assert h.loop.context == {"seen": ["x"]}


@pytest.mark.parametrize("eager", [False, True])
def test_a_call_whose_arguments_did_not_parse_strictly_never_runs(eager: bool) -> None:
    # A13: the cascade repairs '{"path": "a' to {"path": "a"} for display (C7); running the
    # tool on that guess is what the reference loop must not do, in batch or eager mode.
    h = Harness(LoopConfig(eager_tools=eager))
    acc = Accumulator("openai-completions")
    acc.tool_call(0, id="bad", name="read", delta='{"path": "a')
    acc.tool_call(1, id="good", name="read", delta='{"path": "b"}')
    acc.finish("tool_use")
    h.feed(acc.drain())
    started = [o.call for o in h.outputs if isinstance(o, StartTool)]
    assert [(c.id, c.arguments) for c in started] == [("good", {"path": "b"})]
    bad = h.loop.history[2]
    assert (bad.tool_call_id, bad.kind, bad.is_error) == ("bad", "invalid_arguments", True)  # type: ignore[union-attr]
    assert '{"path": "a' in bad.content  # type: ignore[union-attr]
