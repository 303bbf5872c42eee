"""The C1-C12 checker: silent on a conformant sequence, and each rule catches its mutant."""

from __future__ import annotations

import pytest

from stream_harness.contract.events import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    Event,
    StartEvent,
    TextBlock,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    Usage,
)
from stream_harness.contract.rules import check_contract, is_prefix_value

CALL = ToolCall(id="c1", name="f", arguments={"a": "xy"})
MESSAGE = AssistantMessage(
    content=[TextBlock(content="Hi!"), CALL],
    stop_reason="tool_use",
    provider_stop_reason="tool_use",
)


def good() -> list[Event]:
    return [
        StartEvent(),
        TextStartEvent(content_index=0),
        TextDeltaEvent(content_index=0, delta="Hi"),
        ToolCallStartEvent(content_index=1, id="c1", name="f"),
        TextDeltaEvent(content_index=0, delta="!"),
        TextEndEvent(content_index=0, content="Hi!"),
        ToolCallDeltaEvent(content_index=1, delta='{"a": "x', arguments={"a": "x"}),
        ToolCallDeltaEvent(content_index=1, delta='y"}', arguments={"a": "xy"}),
        ToolCallEndEvent(content_index=1, tool_call=CALL, raw_arguments='{"a": "xy"}', strict=True),
        DoneEvent(reason="tool_use", message=MESSAGE),
    ]


def test_a_conformant_sequence_with_overlapping_blocks_passes() -> None:
    assert check_contract(good()) == []


def rules(events: list[Event]) -> set[str]:
    return {v.rule for v in check_contract(events)}


def _replace(i: int, e: Event) -> list[Event]:
    ev = good()
    ev[i] = e
    return ev


MUTANTS: dict[str, list[Event]] = {
    "C1": good()[1:],
    "C2": good()[:-1],
    "C2-after": [*good(), TextDeltaEvent(content_index=0, delta="late")],
    "C3": _replace(4, TextDeltaEvent(content_index=7, delta="!")),
    "C3-kind": _replace(6, TextDeltaEvent(content_index=1, delta='{"a": "x')),
    "C4": _replace(3, ToolCallStartEvent(content_index=2, id="c1", name="f")),
    "C5": [e for e in good() if e.type != "toolcall_end"],
    "C6": _replace(5, TextEndEvent(content_index=0, content="Hi?")),
    "C7": _replace(8, ToolCallEndEvent(content_index=1, tool_call=ToolCall(id="c1", name="f", arguments={"a": "x"}))),
    "C7-raw": _replace(8, ToolCallEndEvent(content_index=1, tool_call=CALL, raw_arguments='{"a": "xz"}', strict=True)),
    "C7-strict": _replace(8, ToolCallEndEvent(content_index=1, tool_call=CALL, raw_arguments='{"a": "xy"}', strict=False)),
    "C8": _replace(9, DoneEvent(reason="tool_use", message=MESSAGE.model_copy(update={"content": [TextBlock(content="Hi!")]}))),
    "C9": _replace(7, ToolCallDeltaEvent(content_index=1, delta='y"}', arguments={"b": 1})),
    "C10": _replace(3, ToolCallStartEvent(content_index=1, id="other", name="f")),
    "C11": _replace(9, DoneEvent(reason="stop", message=MESSAGE)),
    "C12": _replace(9, DoneEvent(reason="tool_use", message=MESSAGE.model_copy(update={"usage": Usage.model_construct(input=-1, output=0, cache_read=0, cache_write=0, total=0)}))),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_rule_catches_its_mutant(name: str) -> None:
    rule = name.split("-")[0]
    assert rule in rules(MUTANTS[name])


def test_error_terminal_rules() -> None:
    msg = AssistantMessage(stop_reason="error", error_message="boom")
    ok: list[Event] = [StartEvent(), ErrorEvent(reason="error", error_message="boom", message=msg)]
    assert check_contract(ok) == []
    mismatch: list[Event] = [
        StartEvent(),
        ErrorEvent(reason="aborted", error_message="boom", message=msg),
    ]
    assert "C11" in rules(mismatch)


def test_empty_sequence_is_reported_not_raised() -> None:
    assert [v.rule for v in check_contract([])] == ["C1"]


@pytest.mark.parametrize(
    ("live", "final", "expected"),
    [
        ({}, {"a": 1}, True),
        ({"a": "he"}, {"a": "hello", "b": 2}, True),
        ({"a": "hello", "b": 2}, {"a": "hello", "b": 2}, True),
        ({"b": 2}, {"a": 1, "b": 2}, False),  # keys out of order
        ({"a": "hex"}, {"a": "hello"}, False),  # string not a prefix
        ({"a": 12}, {"a": 123}, False),  # numbers appear only when complete
        ({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "xy", "c": None}]}, True),
        ({"a": [2]}, {"a": [1, 2]}, False),
        ({"a": True}, {"a": 1}, False),  # bool is not int here
    ],
)
def test_prefix_relation(live: object, final: object, expected: bool) -> None:
    assert is_prefix_value(live, final) is expected
