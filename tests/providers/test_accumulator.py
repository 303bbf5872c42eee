"""The shared block bookkeeping every normalizer drives."""

from __future__ import annotations

import pytest

from stream_harness.contract.events import (
    DoneEvent,
    ErrorEvent,
    ErrorInfo,
    Event,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolCallEndEvent,
)
from stream_harness.contract.rules import check_contract
from stream_harness.providers.accumulator import Accumulator


def types(events: list[Event]) -> list[str]:
    return [e.type for e in events]


def test_text_then_tool_call_gives_the_contract_sequence_and_message() -> None:
    acc = Accumulator("anthropic-messages")
    acc.start(model="m", response_id="r1")
    acc.text(0, "Hel")
    acc.text(0, "lo")
    acc.end(0)
    acc.tool_call(1, id="call_1", name="get_weather")
    acc.tool_call(1, delta='{"city": "Pa')
    acc.tool_call(1, delta='ris"}')
    acc.set_usage(input=10, output=5, cache_read=3)
    acc.finish("tool_use", provider_stop_reason="tool_use")
    events = acc.drain()
    assert types(events) == [
        "start", "text_start", "text_delta", "text_delta", "text_end",
        "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_end", "done",
    ]  # fmt: skip
    assert check_contract(events) == []
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.content == [
        TextBlock(content="Hello"),
        ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"}),
    ]
    assert done.message.model == "m" and done.message.response_id == "r1"
    assert done.message.usage.total == 18
    # live arguments: the string grows, never shrinks
    assert events[6].arguments == {"city": "Pa"}  # type: ignore[union-attr]
    assert events[7].arguments == {"city": "Paris"}  # type: ignore[union-attr]


def test_empty_deltas_open_no_block() -> None:
    acc = Accumulator("openai-completions")
    acc.text("text", "")
    acc.thinking("think", "")
    acc.finish("stop")
    assert types(acc.drain()) == ["start", "done"]


def test_interleaved_tool_calls_keep_their_own_arguments_and_opening_order() -> None:
    acc = Accumulator("openai-completions")
    acc.tool_call(("tool", 0), id="a", name="f")
    acc.tool_call(("tool", 1), id="b", name="g")
    acc.tool_call(("tool", 0), delta='{"x":')
    acc.tool_call(("tool", 1), delta='{"y":')
    acc.tool_call(("tool", 0), delta="1}")
    acc.tool_call(("tool", 1), delta="2}")
    acc.finish("tool_use")
    events = acc.drain()
    assert check_contract(events) == []
    msg = events[-1].message  # type: ignore[union-attr]
    assert [(b.id, b.arguments) for b in msg.content] == [("a", {"x": 1}), ("b", {"y": 2})]


def test_repeated_id_and_name_are_not_appended_and_a_late_name_is_kept() -> None:
    # ecosystem.md bug 7 (llama.cpp repeats the full name per delta) and case 10 (late name)
    acc = Accumulator("openai-completions")
    acc.tool_call(0, id="call_a")
    acc.tool_call(0, id="call_a", name="final_result", delta="{")
    acc.tool_call(0, id="call_a", name="final_result", delta="}")
    acc.finish("tool_use")
    call = acc.drain()[-1].message.content[0]  # type: ignore[union-attr]
    assert call == ToolCall(id="call_a", name="final_result", arguments={})


def test_fail_keeps_and_closes_what_was_received() -> None:
    acc = Accumulator("anthropic-messages")
    acc.thinking(0, "hmm")
    acc.signature(0, "sig-part-1")
    acc.signature(0, "-part-2")
    acc.text(1, "partial answ")
    info = ErrorInfo(kind="overloaded", status=529, retryable=True)
    acc.fail("Overloaded", error=info)
    events = acc.drain()
    assert types(events)[-3:] == ["thinking_end", "text_end", "error"]
    assert check_contract(events) == []
    err = events[-1]
    assert isinstance(err, ErrorEvent)
    assert err.error == info
    assert err.message.stop_reason == "error"
    assert err.message.content == [
        ThinkingBlock(content="hmm", signature="sig-part-1-part-2"),
        TextBlock(content="partial answ"),
    ]


def test_nothing_after_the_terminal_event() -> None:
    acc = Accumulator("anthropic-messages")
    acc.finish("stop")
    acc.text(0, "late")
    acc.fail("late error")
    acc.finish("length")
    assert types(acc.drain()) == ["start", "done"]


def test_tool_call_done_reconciles_a_final_copy() -> None:
    acc = Accumulator("openai-responses")
    acc.tool_call("item_1", id="call_1", name="f")  # no deltas at all (done-only provider)
    acc.tool_call_done("item_1", '{"q": "x"}')
    acc.tool_call("item_2", id="call_2", name="f", delta='{"q": "y')
    acc.tool_call_done("item_2", '{"q": "yz"}')  # extends what streamed
    acc.tool_call("item_3", id="call_3", name="f", delta='{"q": 1}')
    acc.tool_call_done("item_3", '{"q": 2}')  # contradicts: the streamed deltas win
    acc.finish("tool_use")
    events = acc.drain()
    assert check_contract(events) == []
    args = [b.arguments for b in events[-1].message.content]  # type: ignore[union-attr]
    assert args == [{"q": "x"}, {"q": "yz"}, {"q": 1}]


def test_whole_tool_call_and_redacted_thinking() -> None:
    acc = Accumulator("google-generative-ai")
    acc.redacted_thinking("r", "ENCRYPTED")
    acc.whole_tool_call("c", id=None, name="lookup", arguments={"q": "é"}, signature="sig")
    acc.finish("tool_use")
    events = acc.drain()
    assert check_contract(events) == []
    thinking, call = events[-1].message.content  # type: ignore[union-attr]
    assert thinking == ThinkingBlock(content="", signature="ENCRYPTED", redacted=True)
    assert call == ToolCall(id="toolcall_1", name="lookup", arguments={"q": "é"}, signature="sig")


def test_usage_overwrites_field_by_field_and_total_defaults_to_the_sum() -> None:
    acc = Accumulator("anthropic-messages")
    acc.set_usage(input=100, output=1, cache_read=20, cache_write=5)
    acc.set_usage(output=42)  # cumulative report: only output changes
    assert acc.usage().model_dump() == {
        "input": 100,
        "output": 42,
        "cache_read": 20,
        "cache_write": 5,
        "total": 167,
    }
    acc.set_usage(total=999)
    assert acc.usage().total == 999


def test_finish_with_error_reason_ends_in_an_error_event() -> None:
    acc = Accumulator("anthropic-messages")
    acc.text(0, "I can't")
    acc.finish(
        "error",
        provider_stop_reason="refusal",
        error_message="The model refused",
        error=ErrorInfo(),
    )
    err = acc.drain()[-1]
    assert isinstance(err, ErrorEvent)
    assert err.reason == "error" and err.error_message == "The model refused"
    assert err.message.provider_stop_reason == "refusal"
    assert err.message.content == [TextBlock(content="I can't")]


def test_error_origin_tells_provider_errors_from_stream_faults() -> None:
    cut = Accumulator("openai-completions")
    cut.text("t", "partial")
    cut.fail("stream ended without finish_reason")  # the normalizer's own finding
    e = cut.drain()[-1]
    assert isinstance(e, ErrorEvent) and e.error is not None and e.error.origin == "stream"

    spoke = Accumulator("anthropic-messages")
    spoke.fail(
        "Overloaded",
        body={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    )
    e = spoke.drain()[-1]
    assert isinstance(e, ErrorEvent) and e.error is not None
    assert (e.error.origin, e.error.kind) == ("provider", "overloaded")

    filtered = Accumulator("google-generative-ai")
    filtered.finish(
        "error", provider_stop_reason="SAFETY", error_message="Provider stopped with: SAFETY"
    )
    e = filtered.drain()[-1]
    assert isinstance(e, ErrorEvent) and e.error is not None and e.error.origin == "provider"


@pytest.mark.parametrize(
    ("fragments", "strict", "arguments"),
    [
        (['{"city": "Pa', 'ris"}'], True, {"city": "Paris"}),
        ([], True, {}),  # no text: a tool without parameters (Anthropic sends no fragment)
        (['{"city": "Pa'], False, {"city": "Pa"}),  # truncated: the repair is a preview
        (['{"a": 1}{"b": 2}'], False, {"a": 1, "b": 2}),  # run together
        (['{"path": "C:\\dir"}'], False, {"path": "C:\\dir"}),  # an invalid escape, repaired
        (["[1, 2]"], False, {}),  # valid JSON, but not an object
    ],
)
def test_toolcall_end_keeps_the_raw_text_and_whether_it_parsed_strictly(
    fragments: list[str], strict: bool, arguments: dict[str, object]
) -> None:
    acc = Accumulator("openai-completions")
    acc.tool_call(0, id="call_1", name="f")
    for fragment in fragments:
        acc.tool_call(0, delta=fragment)
    acc.finish("tool_use")
    events = acc.drain()
    end = next(e for e in events if isinstance(e, ToolCallEndEvent))
    assert (end.raw_arguments, end.strict) == ("".join(fragments), strict)
    assert end.tool_call.arguments == arguments
    assert check_contract(events) == []


def test_a_whole_call_given_parsed_is_strict() -> None:
    acc = Accumulator("google-generative-ai")
    acc.whole_tool_call(0, id="c", name="f", arguments={"q": [1, 2]})
    acc.finish("tool_use")
    end = next(e for e in acc.drain() if isinstance(e, ToolCallEndEvent))
    assert (end.raw_arguments, end.strict) == ('{"q":[1,2]}', True)
