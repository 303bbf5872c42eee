"""Live tool arguments are built on read (events.DeferredArguments), never differently.

The accumulator stores a position in the call's ArgumentsLog on each ``toolcall_delta``
instead of a built dict. These tests pin the deferred value against the eager one it
replaces, ``IncrementalJSON.feed`` after every fragment, whatever the order and moment of
the reads, and check that nothing a consumer can observe (attribute type, equality, JSON,
pickling, repr) tells the two apart.
"""

from __future__ import annotations

import itertools
import json
import pickle
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from stream_harness.contract.events import (
    DeferredArguments,
    ToolCallDeltaEvent,
    event_from_json,
    event_to_json,
    events_from_jsonl,
)
from stream_harness.contract.partial_json import ArgumentsLog, IncrementalJSON
from stream_harness.providers.accumulator import Accumulator
from stream_harness.recordings.cassette import load_cassette
from stream_harness.recordings.golden import expected_path, interaction_events, render
from stream_harness.reporting.summary import SCENARIO_FOLDERS

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes"


def eager_values(fragments: list[str]) -> list[Any]:
    """What the accumulator used to put on each delta: the value right after feeding it."""
    parser = IncrementalJSON()
    out = []
    for fragment in fragments:
        value = parser.feed(fragment)
        out.append(value if isinstance(value, dict) else {})
    return out


def tool_deltas(fragments: list[str]) -> list[ToolCallDeltaEvent]:
    acc = Accumulator("test")
    for fragment in fragments:
        acc.tool_call("call", id="call_1", name="f", delta=fragment)
    acc.finish("tool_use")
    return [e for e in acc.drain() if isinstance(e, ToolCallDeltaEvent)]


def fragments_of(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points) if b > a]


ARGUMENTS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(
    value=st.dictionaries(st.text(max_size=4), ARGUMENTS, max_size=4),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
    order=st.randoms(use_true_random=False),
)
def test_reads_in_any_order_give_the_eager_values(
    value: dict[str, Any], cuts: list[int], order: Any
) -> None:
    text = json.dumps(value, ensure_ascii=False)
    fragments = fragments_of(text, cuts)
    events = tool_deltas(fragments)
    eager = eager_values(fragments)
    positions = list(range(len(events)))
    order.shuffle(positions)
    for i in positions:  # backwards reads restart the replay; forward ones continue it
        assert events[i].arguments == eager[i]
        assert type(events[i].arguments) is dict
    assert events[-1].arguments == value if events else True


@given(
    value=st.dictionaries(st.text(max_size=4), ARGUMENTS, max_size=4),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
    reads=st.lists(st.booleans(), max_size=12),
)
def test_reads_while_feeding_and_after_agree(
    value: dict[str, Any], cuts: list[int], reads: list[bool]
) -> None:
    """A consumer reading some deltas as they come (the newest position, the fast path)
    and the rest after the stream (the replay) sees the eager value every time."""
    text = json.dumps(value)
    fragments = fragments_of(text, cuts)
    eager = eager_values(fragments)
    acc = Accumulator("test")
    kept: list[ToolCallDeltaEvent] = []
    for i, fragment in enumerate(fragments):
        acc.tool_call("call", id="call_1", name="f", delta=fragment)
        (event,) = [e for e in acc.drain() if isinstance(e, ToolCallDeltaEvent)]
        if i < len(reads) and reads[i]:
            assert event.arguments == eager[i]
        kept.append(event)
    acc.finish("tool_use")
    assert [e.arguments for e in kept] == eager


def test_the_log_replays_forward_and_restarts_for_an_older_position() -> None:
    log = ArgumentsLog()
    positions = [log.feed(f) for f in ['{"a": "x', "yz", '", "b": [1', ", 2]}"]]
    assert positions == [1, 2, 3, 4]
    assert log.value_at(4) == {"a": "xyz", "b": [1, 2]}  # newest: the primary parser
    assert log.value_at(2) == {"a": "xyz"}  # replays two fragments
    assert log.value_at(3) == {"a": "xyz", "b": []}  # continues from 2 (1 may go on)
    assert log.value_at(1) == {"a": "x"}  # older than the replay: starts again
    assert log.value_at(0) == {}


def test_a_call_that_arrived_parsed_is_never_read_again_from_text() -> None:
    log = ArgumentsLog()
    parsed = {"path": "a.txt", "lines": [1, 2]}
    at = log.feed_whole(json.dumps(parsed), parsed)
    log.feed(" ")  # more input moves the newest position on
    assert log.value_at(at) is parsed


def test_the_event_stores_a_deferred_value_and_reads_as_a_dict() -> None:
    (first, second) = tool_deltas(['{"q": "ab', 'c"}'])
    assert isinstance(first.__dict__["arguments"], DeferredArguments)  # nothing built yet
    assert first.arguments == {"q": "ab"}
    assert type(first.arguments) is dict
    assert first.__dict__["arguments"] == {"q": "ab"}  # built once, then kept
    assert first.arguments is first.arguments
    # JSON, equality, repr and pickling of an unread event are those of the dict.
    plain = ToolCallDeltaEvent(content_index=0, delta='c"}', arguments={"q": "abc"})
    assert isinstance(second.__dict__["arguments"], DeferredArguments)
    assert event_to_json(second) == event_to_json(plain)
    assert second.model_dump() == plain.model_dump()
    assert second == plain and plain == second
    assert repr(second) == repr(plain)
    restored = pickle.loads(pickle.dumps(tool_deltas(['{"q": "ab', 'c"}'])[1]))
    assert restored.__dict__["arguments"] == {"q": "abc"}
    assert type(restored.__dict__["arguments"]) is dict
    assert event_from_json(event_to_json(second)) == plain


def test_golden_tool_streams_serialize_as_before() -> None:
    """Every bundled cassette with a toolcall_delta, normalized with its events kept until
    the end (so every read is a replay), prints its reviewed golden bytes."""
    checked = 0
    for cassette in sorted(CASSETTES.glob("*/*.yaml")):
        if cassette.parent.name in SCENARIO_FOLDERS:
            continue
        for inter in load_cassette(cassette).interactions:
            golden = expected_path(cassette, inter.index)
            text = golden.read_text(encoding="utf-8")
            if '"toolcall_delta"' not in text:
                continue
            events = interaction_events(inter, cassette.parent.name)
            assert render(events) == text, golden
            assert events == events_from_jsonl(text)
            checked += 1
    assert checked >= 20
