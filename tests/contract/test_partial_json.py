"""stream_harness.contract.partial_json: the repair rules, every cascade step, run-together values, and
the properties that tie IncrementalJSON to json.loads and to the cascade."""

from __future__ import annotations

import itertools
import json
from typing import Any

import partial_json_parser
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_harness.contract.partial_json import (
    IncrementalJSON,
    Step,
    cascade,
    parse_partial,
    repair_json,
)

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def canon(value: Any) -> str:
    """Type-exact identity for JSON values (1 vs 1.0 vs True; NaN equals NaN)."""
    return json.dumps(value)


def same(a: Any, b: Any) -> bool:
    return canon(a) == canon(b)


def is_prefix_value(live: Any, final: Any, *, top: bool = True) -> bool:
    """The live-value rule: ``live`` is a partial rendering of ``final``.

    Keys/elements are the first ones of ``final`` in order; all but the last equal their
    final value; the last is itself a prefix; strings grow by appending; numbers and
    literals appear only complete (type-exact). At the top level ``{}`` also stands
    for "nothing known yet", whatever ``final`` is.
    """
    if top and type(live) is dict and not live:
        return True
    if isinstance(live, dict):
        if not isinstance(final, dict):
            return False
        live_keys, final_keys = list(live), list(final)
        if final_keys[: len(live_keys)] != live_keys:
            return False
        if not all(same(live[k], final[k]) for k in live_keys[:-1]):
            return False
        return not live_keys or is_prefix_value(
            live[live_keys[-1]], final[live_keys[-1]], top=False
        )
    if isinstance(live, list):
        if not isinstance(final, list) or len(live) > len(final):
            return False
        if not all(same(a, b) for a, b in zip(live[:-1], final, strict=False)):
            return False
        return not live or is_prefix_value(live[-1], final[len(live) - 1], top=False)
    if isinstance(live, str):
        return isinstance(final, str) and final.startswith(live)
    return same(live, final)


def split_at(text: str, cuts: list[int]) -> list[str]:
    points = [0, *sorted(set(cuts)), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(points) if b > a]


def feed_all(fragments: list[str]) -> tuple[IncrementalJSON, list[Any]]:
    inc = IncrementalJSON()
    return inc, [inc.feed(fragment) for fragment in fragments]


# A realistic tool call: a file write with quotes, backslashes, tabs, unicode.
TOOL_ARGS = json.dumps(
    {
        "path": "C:\\work\\src\\main.py",
        "content": 'def greet(name):\n\tprint(f"héllo {name} \\u263a 😀")\n',
        "overwrite": True,
        "mode": 420,
        "tags": ["a", "b"],
    }
)

# ---------------------------------------------------------------------------
# repair_json: one test per rule
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "repaired"),
    [
        ('"a\nb"', '"a\\nb"'),
        ('"a\tb"', '"a\\tb"'),
        ('"a\rb"', '"a\\rb"'),
        ('"a\bb"', '"a\\bb"'),
        ('"a\fb"', '"a\\fb"'),
        ('"a\x01b"', '"a\\u0001b"'),
        ('"a\x1fb"', '"a\\u001fb"'),
        ('"a\x00b"', '"a\\u0000b"'),
    ],
)
def test_repair_escapes_raw_control_characters_inside_strings(raw: str, repaired: str) -> None:
    assert repair_json(raw) == repaired


@pytest.mark.parametrize(
    ("raw", "repaired"),
    [
        ('"C:\\work\\src"', '"C:\\\\work\\\\src"'),  # \w and \s
        ('"\\p{L}"', '"\\\\p{L}"'),
        ('"\\u12zz"', '"\\\\u12zz"'),  # non-hex \u
        ('"\\u12"', '"\\\\u12"'),  # truncated \u before the closing quote
        ('"ab\\', '"ab\\\\'),  # backslash at the end of the text
        ('"\\x41"', '"\\\\x41"'),
    ],
)
def test_repair_doubles_the_backslash_of_invalid_escapes(raw: str, repaired: str) -> None:
    assert repair_json(raw) == repaired


def test_repair_resumes_after_the_doubled_backslash() -> None:
    # The character after a bad backslash is read as string content: here a raw
    # newline, which is then escaped in turn.
    assert repair_json('"a\\\nb"') == '"a\\\\\\nb"'


def test_repair_keeps_valid_escapes_and_returns_the_same_object() -> None:
    text = '{"a": "\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\uD83D\\uDE00"}'
    assert repair_json(text) is text


def test_repair_leaves_text_outside_strings_alone() -> None:
    text = '{"a":\n\t1, "b": [\x01]}'
    assert repair_json(text) is text


def test_repair_tracks_strings_by_quotes() -> None:
    # The escaped quote does not close the string, so the later \w is still inside.
    assert repair_json('["x\\"y", "\\w"]') == '["x\\"y", "\\\\w"]'


# ---------------------------------------------------------------------------
# The cascade: one test per step
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_empty_or_whitespace_is_an_empty_object(text: str) -> None:
    assert cascade(text) == ({}, Step.EMPTY)


def test_step_strict() -> None:
    assert cascade('{"a": [1, 2.5, null]}') == ({"a": [1, 2.5, None]}, Step.STRICT)
    # A strict null stays None: only the partial steps turn None into {}.
    assert cascade("null") == (None, Step.STRICT)


def test_step_repaired_raw_newlines_and_tabs() -> None:
    assert cascade('{"code": "if x:\n\treturn 1"}') == (
        {"code": "if x:\n\treturn 1"},
        Step.REPAIRED,
    )


def test_step_repaired_windows_path() -> None:
    assert cascade('{"path": "C:\\work\\src"}') == ({"path": "C:\\work\\src"}, Step.REPAIRED)


def test_step_partial_truncated() -> None:
    assert cascade('{"a": "hel') == ({"a": "hel"}, Step.PARTIAL)
    assert cascade('{"a": [1, 2') == ({"a": [1, 2]}, Step.PARTIAL)


def test_step_partial_none_becomes_empty_object() -> None:
    assert cascade("nul") == ({}, Step.PARTIAL)


def test_step_repaired_partial() -> None:
    # Truncated *and* holding a raw newline: the partial parser rejects the control
    # character until the text is repaired.
    assert cascade('{"a": "x\ny') == ({"a": "x\ny"}, Step.REPAIRED_PARTIAL)


@pytest.mark.parametrize("text", ["]]]", '{"a": 1,, "b": 2}', "@@"])
def test_step_failed(text: str) -> None:
    assert cascade(text) == ({}, Step.FAILED)


def test_partial_parser_raising_anything_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> object:
        raise AssertionError("partial-json-parser internal assert")

    monkeypatch.setattr(partial_json_parser, "loads", boom)
    assert cascade('{"a": "hel') == ({}, Step.FAILED)


def test_parse_partial_is_the_cascade_value() -> None:
    assert parse_partial('{"a": "x\ny') == {"a": "x\ny"}
    assert parse_partial("") == {}


def test_deep_nesting_does_not_raise() -> None:
    text = "[" * 100_000 + "]" * 100_000
    assert isinstance(cascade(text).step, Step)


# ---------------------------------------------------------------------------
# Run-together values (step 3)
# ---------------------------------------------------------------------------


def test_run_together_equal_values_give_one() -> None:
    text = '{ "city": "Berlin" }{ "city": "Berlin" }'
    assert cascade(text) == ({"city": "Berlin"}, Step.RUN_TOGETHER)


def test_run_together_objects_merge_in_order() -> None:
    value, step = cascade('{"a": 1, "b": 2}\n{"c": 3}  {"d": 4}')
    assert step is Step.RUN_TOGETHER
    assert list(value.items()) == [("a", 1), ("b", 2), ("c", 3), ("d", 4)]


def test_run_together_later_key_wins_in_the_earlier_place() -> None:
    value = parse_partial('{"a": 1, "b": 2}{"a": 3, "c": 4}')
    assert list(value.items()) == [("a", 3), ("b", 2), ("c", 4)]


def test_run_together_squashed_parallel_calls_keep_the_last_value() -> None:
    # litellm#7621: three parallel calls squashed into one call's arguments.
    text = '{"location": "San Francisco"}{"location": "Tokyo"}{"location": "Paris"}'
    assert parse_partial(text) == {"location": "Paris"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [('[1]{"a": 1}', [1]), ("1 2", 1), ('"x""y"', "x"), ("[1][2]", [1])],
)
def test_run_together_mixed_values_give_the_first(text: str, expected: Any) -> None:
    assert cascade(text) == (expected, Step.RUN_TOGETHER)


def test_run_together_drops_an_incomplete_rest() -> None:
    assert cascade('{"a": 1}{"b": "tru') == ({"a": 1}, Step.RUN_TOGETHER)
    assert cascade('{"a": 1}]') == ({"a": 1}, Step.RUN_TOGETHER)


def test_run_together_after_repair() -> None:
    assert parse_partial('{"a": "x\ny"}{"b": "C:\\w"}') == {"a": "x\ny", "b": "C:\\w"}


# ---------------------------------------------------------------------------
# Research cases
# ---------------------------------------------------------------------------


def test_every_truncation_of_a_tool_call_gives_a_dict() -> None:
    for end in range(len(TOOL_ARGS) + 1):
        prefix = TOOL_ARGS[:end]
        assert isinstance(parse_partial(prefix), dict), prefix
        inc, lives = feed_all(split_at(prefix, list(range(0, end, 3))))
        assert isinstance(inc.close(), dict), prefix
        assert same(inc.close(), parse_partial(prefix)), prefix
        assert all(is_prefix_value(live, json.loads(TOOL_ARGS)) for live in lives), prefix
    assert parse_partial(TOOL_ARGS) == json.loads(TOOL_ARGS)


def test_is_prefix_value_rejects_what_the_rule_forbids() -> None:
    final = {"a": "hello", "b": [1, 2], "c": 3}
    assert is_prefix_value({"a": "he"}, final)
    assert is_prefix_value({"a": "hello", "b": [1]}, final)
    assert not is_prefix_value({"b": [1, 2]}, final)  # keys out of order
    assert not is_prefix_value({"a": "he", "b": []}, final)  # earlier value incomplete
    assert not is_prefix_value({"a": "hx"}, final)
    assert not is_prefix_value({"a": "hello", "b": [1, 2], "c": 3.0}, final)  # type-exact
    assert not is_prefix_value([], final)
    assert is_prefix_value({}, [1])  # the "nothing yet" placeholder
    assert not is_prefix_value({"x": {}}, {"x": [1]})


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------

# Lone high surrogates only: a generated high+low pair would load back as one
# character and could make two distinct keys collide.
_text = st.text(
    st.characters(categories=["L", "N", "P", "S", "Z", "Cc"])
    | st.characters(categories=["Cs"], max_codepoint=0xDBFF),
    max_size=12,
)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False)
    | _text
)
json_values = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(_text, children, max_size=5),
    max_leaves=25,
)
dump_options = st.sampled_from(
    [
        {},
        {"indent": 2},
        {"ensure_ascii": False},
        {"indent": 1, "ensure_ascii": False},
        {"separators": (",", ":")},
    ]
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values, options=dump_options, data=st.data())
def test_any_split_of_any_json_value(
    value: Any, options: dict[str, Any], data: st.DataObject
) -> None:
    text = json.dumps(value, **options)
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=max(1, len(text) // 2)))
    inc, lives = feed_all(split_at(text, cuts))
    final = inc.close()
    assert same(final, json.loads(text))
    assert same(final, parse_partial(text))
    assert inc.text == text
    snapshots = [canon(live) for live in lives]
    previous: Any = {}
    for live in lives:
        assert is_prefix_value(live, final), (live, final)
        assert is_prefix_value(previous, live), (previous, live)
        previous = live
    # Live values handed out earlier were not changed by later feeding.
    assert [canon(live) for live in lives] == snapshots


_noise = st.text(alphabet='{}[]",:\\ \n\t\x010123456789.-eE+truefalsnNIyu', max_size=40)


@st.composite
def messy_texts(draw: st.DrawFn) -> str:
    """JSON, truncated, edited, repeated, or noise: what the cascade must survive."""
    kind = draw(st.sampled_from(["noise", "edited", "doubled"]))
    if kind == "noise":
        return draw(_noise)
    text = json.dumps(draw(json_values), ensure_ascii=draw(st.booleans()))
    if kind == "doubled":
        text = text + draw(st.sampled_from(["", " ", "\n"])) + text
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(_noise) + text[at:]
    return text[: draw(st.integers(0, len(text)))]


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(text=messy_texts(), data=st.data())
def test_close_equals_the_cascade_for_any_text(text: str, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=10))
    inc, _ = feed_all(split_at(text, cuts))
    assert same(inc.close(), parse_partial(text))
    assert inc.text == text


@settings(max_examples=200)
@given(value=json_values, data=st.data())
def test_truncated_json_close_equals_the_cascade(value: Any, data: st.DataObject) -> None:
    text = json.dumps(value)
    prefix = text[: data.draw(st.integers(0, len(text)))]
    inc, lives = feed_all(split_at(prefix, data.draw(st.lists(st.integers(0, len(prefix))))))
    assert same(inc.close(), parse_partial(prefix))
    # The live values are prefixes of the value the whole text would have given.
    whole = json.loads(text)
    assert all(is_prefix_value(live, whole) for live in lives)
