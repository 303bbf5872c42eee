"""IncrementalJSON: the live-value rule, fragment by fragment, with expected values
written out by hand."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from stream_harness.contract._incremental_json import MAX_DEPTH, MAX_PENDING_SCALAR
from stream_harness.contract.partial_json import IncrementalJSON, Step, cascade, parse_partial


def lives(*fragments: str) -> list[Any]:
    inc = IncrementalJSON()
    return [inc.feed(fragment) for fragment in fragments]


# (fragments, live value after each), per rule in the module docstring.
CASES: list[tuple[list[str], list[Any]]] = [
    # Nothing started yet, or only a key: {}.
    (["  ", '{"ke', 'y"', ":", " "], [{}, {}, {}, {}, {}]),
    # A number appears when a delimiter follows it.
    (
        ['{"a": 1', "2", ".5", ",", ' "b": -', "3e", "2", "}"],
        [{}, {}, {}, {"a": 12.5}] + [{"a": 12.5}] * 3 + [{"a": 12.5, "b": -3e2}],
    ),
    (["[1", "0", " ", "]"], [[], [], [10], [10]]),
    # A literal appears when its last character arrives.
    (['{"a": t', "ru", "e", "}"], [{}, {}, {"a": True}, {"a": True}]),
    (["[nu", "ll", ",fal", "se,Infinity]"], [[], [None], [None], [None, False, float("inf")]]),
    # A key whose value is a string appears as soon as the string opens; strings only grow.
    (['{"a": "', "he", "llo", '"}'], [{"a": ""}, {"a": "he"}, {"a": "hello"}, {"a": "hello"}]),
    # Containers appear as soon as they open.
    (
        ['{"a": [', "{", '"b": [', "]}]}"],
        [{"a": []}, {"a": [{}]}, {"a": [{"b": []}]}, {"a": [{"b": []}]}],
    ),
    # Never half an escape.
    (['["a\\', 'n"]'], [["a"], ["a\n"]]),
    (['["a\\u00', "e9", '"]'], [["a"], ["aé"], ["aé"]]),
    # Never half a surrogate pair, even with the whole high surrogate there.
    (['["\\ud83d', "\\u", "de00", '"]'], [[""], [""], ["😀"], ["😀"]]),
    # A high surrogate not followed by a low one stands alone, as in json.loads.
    (['["\\ud83d', 'x"]'], [[""], ["\ud83dx"]]),
    # A top-level string grows; a top-level scalar shows {} until close.
    (['"ab', 'c"'], ["ab", "abc"]),
    (["12"], [{}]),
]


@pytest.mark.parametrize(("fragments", "expected"), CASES)
def test_live_value_rule(fragments: list[str], expected: list[Any]) -> None:
    assert lives(*fragments) == expected


def test_close_completes_a_top_level_number() -> None:
    inc = IncrementalJSON()
    assert inc.feed("-12") == {}
    assert inc.close() == -12
    assert inc.feed(".5e1") == {}
    assert inc.close() == -125.0


def test_close_does_not_change_state() -> None:
    inc = IncrementalJSON()
    inc.feed('{"a": [1')
    assert inc.close() == {"a": [1]}  # the cascade's partial step
    assert inc.feed(", 2]}") == {"a": [1, 2]}
    assert inc.close() == {"a": [1, 2]}
    assert inc.text == '{"a": [1, 2]}'


def test_empty_fragments_change_nothing() -> None:
    inc = IncrementalJSON()
    assert inc.feed("") == {}
    assert inc.feed('{"a": "x') == {"a": "x"}
    assert inc.feed("") == {"a": "x"}
    assert inc.close() == {"a": "x"}


def test_close_of_nothing_is_an_empty_object() -> None:
    assert IncrementalJSON().close() == {}
    inc = IncrementalJSON()
    inc.feed(" \n")
    assert inc.close() == {}


def test_finished_children_are_built_once_and_shared() -> None:
    inc = IncrementalJSON()
    first = inc.feed('{"done": {"x": [1, 2]}, "open": [')
    second = inc.feed('"s", ')
    final = inc.feed("3]}")
    assert first is not second  # the spine is rebuilt ...
    assert first["done"] is second["done"] is final["done"]  # ... its finished children are not
    assert first == {"done": {"x": [1, 2]}, "open": []}  # and earlier live values stay as they were
    assert inc.close() is final


def test_pending_text_stays_small_inside_a_long_string() -> None:
    # Feeding must not keep (or re-read) the prefix: only half an escape may wait.
    inc = IncrementalJSON()
    body = json.dumps({"content": 'line \\ "q" \u00e9\n\t😀 ' * 2000}, ensure_ascii=True)
    for i in range(0, len(body), 7):
        inc.push(body[i : i + 7])
        assert len(inc._parser._pending) <= 12
    assert inc.close() == json.loads(body)


# -- not JSON: repairs on the fly, failures freeze ---------------------------------


def test_raw_control_characters_stay_live_and_close_repairs() -> None:
    inc = IncrementalJSON()
    assert inc.feed('{"code": "if x:\n\t') == {"code": "if x:\n\t"}
    assert inc.feed('return"}') == {"code": "if x:\n\treturn"}
    assert inc.close() == {"code": "if x:\n\treturn"} == cascade(inc.text).value
    assert cascade(inc.text).step is Step.REPAIRED


def test_invalid_escapes_show_as_written() -> None:
    inc = IncrementalJSON()
    assert inc.feed('{"path": "C:\\') == {"path": "C:"}
    assert inc.feed("work\\src") == {"path": "C:\\work\\src"}
    assert inc.feed("\\u12") == {"path": "C:\\work\\src"}  # could still become \u12ab
    assert inc.feed('zz"}') == {"path": "C:\\work\\src\\u12zz"}
    assert inc.close() == parse_partial(inc.text) == {"path": "C:\\work\\src\\u12zz"}


def test_a_failure_freezes_the_live_value() -> None:
    inc = IncrementalJSON()
    assert inc.feed('{"a": 1, "b": [2') == {"a": 1, "b": []}
    assert inc.feed(",, 3]") == {"a": 1, "b": [2]}
    assert inc.failure is not None and "offset 17" in inc.failure
    assert inc.feed(', "c": 4}') == {"a": 1, "b": [2]}
    assert inc.close() == parse_partial(inc.text) == {}


def test_an_overlong_number_stops_the_parser_but_not_close() -> None:
    text = "[0." + "1" * (MAX_PENDING_SCALAR + 10) + "]"
    inc = IncrementalJSON()
    for i in range(0, len(text), 100):
        inc.feed(text[i : i + 100])
    assert inc.failure is not None
    assert inc.value == []
    assert inc.close() == json.loads(text)


@pytest.mark.parametrize("depth", [150, MAX_DEPTH + 1, 50_000])
def test_deep_nesting_closes_like_the_cascade(depth: int) -> None:
    text = "[" * depth + "]" * depth
    inc = IncrementalJSON()
    for i in range(0, len(text), 1000):
        inc.feed(text[i : i + 1000])
    assert (inc.failure is not None) == (depth > MAX_DEPTH)
    assert inc.close() == parse_partial(text)


# -- run-together values -----------------------------------------------------------


def test_run_together_values_stream() -> None:
    inc = IncrementalJSON()
    assert inc.feed('{"a": 1}') == {"a": 1}
    assert inc.feed('{"b": "lo') == {"a": 1}  # the next value shows once complete
    assert inc.feed('ng"}') == {"a": 1, "b": "long"}
    assert inc.close() == {"a": 1, "b": "long"}
    assert cascade(inc.text).step is Step.RUN_TOGETHER


def test_run_together_repeated_arguments_stream() -> None:
    # async-openai#329: arguments streamed twice.
    inc = IncrementalJSON()
    for fragment in ['{ "city": ', '"Berlin" }', '{ "city": ', '"Berlin" }']:
        assert inc.feed(fragment) in ({}, {"city": "Berlin"})
    assert inc.close() == {"city": "Berlin"}


def test_truncated_run_together_keeps_the_complete_value() -> None:
    inc = IncrementalJSON()
    inc.feed('{"a": 1}{"b": ')
    assert inc.value == {"a": 1}
    assert inc.close() == {"a": 1}


def test_an_int_past_the_digit_limit_never_raises() -> None:
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(1000)
    try:
        for text in ["1" * 2000, "[" + "1" * 2000 + "]"]:
            inc = IncrementalJSON()
            for i in range(0, len(text), 100):
                inc.feed(text[i : i + 100])
            assert inc.close() == parse_partial(text) == {}
    finally:
        sys.set_int_max_str_digits(limit)
