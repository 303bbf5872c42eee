"""The google-generative-ai reference normalizer on hand-written bodies and bundled cassettes.

Unit tests cite the conformance case (provider-facts.md section 7) or the ecosystem bug
(ecosystem.md section 6) they pin. Expected values are read off the wire text written in
each test (texts, ids, token counts), never produced by running the normalizer.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cassette_checks import Translate, terminal, text_block_opening
from stream_harness.contract.events import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    Event,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    Usage,
)
from stream_harness.providers.google_generative_ai import (
    ArgsWriter,
    Normalizer,
    PartialArgsError,
    parse_json_path,
)

PROTOCOL = "google-generative-ai"


# -- helpers --------------------------------------------------------------------------


def sse(*chunks: dict[str, Any] | str) -> bytes:
    """An ``alt=sse`` body: one ``data:`` event per chunk, ``\\r\\n\\r\\n`` separators."""
    out = ""
    for c in chunks:
        out += f"data: {c if isinstance(c, str) else json.dumps(c)}\r\n\r\n"
    return out.encode()


def array(*chunks: dict[str, Any]) -> bytes:
    """The non-SSE body: a pretty-printed array, elements joined by ``\\n,\\r\\n``."""
    return ("[" + "\n,\r\n".join(json.dumps(c, indent=2) for c in chunks) + "\n]").encode()


def parts(*p: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    """One chunk whose first candidate holds these parts."""
    candidate: dict[str, Any] = {"content": {"parts": list(p), "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    candidate.update(extra)
    return {"candidates": [candidate]}


def finish(reason: str = "STOP", **extra: Any) -> dict[str, Any]:
    return {"candidates": [{"finishReason": reason, "index": 0, **extra}]}


def call(name: str | None = None, args: Any = None, **extra: Any) -> dict[str, Any]:
    fc: dict[str, Any] = {}
    if name is not None:
        fc["name"] = name
    if args is not None:
        fc["args"] = args
    sig = extra.pop("sig", None)
    fc.update(extra)
    part: dict[str, Any] = {"functionCall": fc}
    if sig is not None:
        part["thoughtSignature"] = sig
    return part


TRANSLATE = Translate(PROTOCOL)
run = TRANSLATE.run
done = TRANSLATE.done
failed = TRANSLATE.failed


def tool_deltas(events: list[Event]) -> list[str]:
    return [e.delta for e in events if isinstance(e, ToolCallDeltaEvent)]


# -- the basics -------------------------------------------------------------------------


def test_plain_text_exact_events() -> None:
    body = sse(
        {
            **parts({"text": "Hello"}),
            "usageMetadata": {"promptTokenCount": 5, "totalTokenCount": 5},
            "modelVersion": "gemini-2.5-flash",
            "responseId": "resp-1",
        },
        {
            **parts({"text": " world"}, finish="STOP"),
            "usageMetadata": {
                "promptTokenCount": 5,
                "candidatesTokenCount": 2,
                "totalTokenCount": 7,
            },
            "modelVersion": "gemini-2.5-flash",
            "responseId": "resp-1",
        },
    )
    message_text = TextBlock(content="Hello world")
    assert run(body) == [
        *text_block_opening("Hello", " world"),
        DoneEvent(
            reason="stop",
            message=AssistantMessage(
                content=[message_text],
                stop_reason="stop",
                provider_stop_reason="STOP",
                usage=Usage(input=5, output=2, total=7),
                model="gemini-2.5-flash",
                response_id="resp-1",
            ),
        ),
    ]


def test_consecutive_text_parts_across_chunks_continue_one_block() -> None:
    t = done(
        sse(
            parts({"text": "a"}),
            parts({"text": "b"}, {"text": "c"}),
            parts({"text": "d"}, finish="STOP"),
        )
    )
    assert t.message.content == [TextBlock(content="abcd")]


def test_seed002_kind_changes_close_the_block() -> None:
    # thought -> text -> thought -> text: four blocks in wire order.
    events = run(
        sse(
            parts({"text": "t1", "thought": True}),
            parts({"text": "a1"}),
            parts({"text": "t2", "thought": True}, {"text": "a2"}, finish="STOP"),
        )
    )
    t = terminal(events)
    assert t.message.content == [
        ThinkingBlock(content="t1"),
        TextBlock(content="a1"),
        ThinkingBlock(content="t2"),
        TextBlock(content="a2"),
    ]
    assert [type(e).__name__ for e in events[1:4]] == [
        "ThinkingStartEvent",
        "ThinkingDeltaEvent",
        "ThinkingEndEvent",
    ]


def test_thought_must_be_true_not_truthy() -> None:
    # provider-facts.md 2.4: only thought === true marks thinking.
    t = done(sse(parts({"text": "x", "thought": "yes"}, finish="STOP")))
    assert t.message.content == [TextBlock(content="x")]


def test_empty_text_parts_open_and_close_nothing() -> None:
    events = run(
        sse(
            parts({"text": "a", "thought": True}),
            parts({"text": ""}),
            parts({"text": "b", "thought": True}, finish="STOP"),
        )
    )
    assert terminal(events).message.content == [ThinkingBlock(content="ab")]


# -- signatures (case 35) -------------------------------------------------------------------


def test_case35_signature_on_the_first_text_delta_is_retained() -> None:
    t = done(
        sse(
            parts({"text": "thinking", "thought": True}),
            parts({"text": "Answer", "thoughtSignature": "U0lHMQ=="}),
            parts({"text": " continues"}, finish="STOP"),
        )
    )
    assert t.message.content == [
        ThinkingBlock(content="thinking"),
        TextBlock(content="Answer continues", signature="U0lHMQ=="),
    ]


def test_case35_signature_on_a_thought_part_stays_on_the_thinking_block() -> None:
    t = done(
        sse(
            parts({"text": "t1", "thought": True, "thoughtSignature": "VEhJTks="}),
            parts({"text": "t2", "thought": True}),
            parts({"text": "done"}, finish="STOP"),
        )
    )
    assert t.message.content == [
        ThinkingBlock(content="t1t2", signature="VEhJTks="),
        TextBlock(content="done"),
    ]


def test_trailing_empty_part_signature_belongs_to_the_text_before_it() -> None:
    # Gemini 3 (llm-gemini corpus): "Scoop", then {"text": "", "thoughtSignature": ...}.
    t = done(
        sse(
            parts({"text": "Scoop"}),
            parts({"text": "", "thoughtSignature": "TEFTVA=="}, finish="STOP"),
        )
    )
    assert t.message.content == [TextBlock(content="Scoop", signature="TEFTVA==")]


def test_a_second_signature_starts_a_new_block_never_merged() -> None:
    t = done(
        sse(
            parts({"text": "one", "thoughtSignature": "QQ=="}),
            parts({"text": "two", "thoughtSignature": "Qg=="}, finish="STOP"),
        )
    )
    assert t.message.content == [
        TextBlock(content="one", signature="QQ=="),
        TextBlock(content="two", signature="Qg=="),
    ]


def test_the_same_signature_again_continues_the_block() -> None:
    t = done(
        sse(
            parts({"text": "a", "thoughtSignature": "QQ=="}),
            parts({"text": "b", "thoughtSignature": "QQ=="}, finish="STOP"),
        )
    )
    assert t.message.content == [TextBlock(content="ab", signature="QQ==")]


def test_signature_only_thought_part_is_a_thinking_block() -> None:
    t = done(
        sse(
            parts({"text": "", "thought": True, "thoughtSignature": "T05MWQ=="}),
            parts({"text": "hi"}, finish="STOP"),
        )
    )
    assert t.message.content == [
        ThinkingBlock(content="", signature="T05MWQ=="),
        TextBlock(content="hi"),
    ]


def test_signature_on_an_empty_text_part_with_no_text_block_is_kept_verbatim() -> None:
    part = {"text": "", "thoughtSignature": "TE9ORQ=="}
    t = done(sse(parts({"text": "t", "thought": True}), parts(part, finish="STOP")))
    assert t.message.content == [ThinkingBlock(content="t")]
    assert t.message.provider_blocks == [ProviderBlock(provider_type="text", position=1, data=part)]


def test_case35_signature_on_a_function_call_stays_on_that_call() -> None:
    t = done(
        sse(
            parts(
                {"text": "Let me check."},
                call("get_weather", {"location": "Boston"}, id="c1", sig="RkNTSUc="),
                call("get_time", {"tz": "UTC"}, id="c2"),
                finish="STOP",
            )
        )
    )
    assert t.message.content == [
        TextBlock(content="Let me check."),
        ToolCall(
            id="c1", name="get_weather", arguments={"location": "Boston"}, signature="RkNTSUc="
        ),
        ToolCall(id="c2", name="get_time", arguments={"tz": "UTC"}),
    ]


# -- function calls -----------------------------------------------------------------------


def test_seed002_whole_call_is_start_one_delta_end() -> None:
    events = run(sse(parts(call("get_capital", {"country": "France"}, id="fc-1"), finish="STOP")))
    assert events[1:4] == [
        ToolCallStartEvent(content_index=0, id="fc-1", name="get_capital"),
        ToolCallDeltaEvent(
            content_index=0, delta='{"country":"France"}', arguments={"country": "France"}
        ),
        ToolCallEndEvent(
            content_index=0,
            tool_call=ToolCall(id="fc-1", name="get_capital", arguments={"country": "France"}),
            raw_arguments='{"country":"France"}',
            strict=True,
        ),
    ]


def test_call_without_args_has_empty_object_arguments() -> None:
    events = run(sse(parts(call("get_country"), finish="STOP")))
    assert tool_deltas(events) == ["{}"]
    assert terminal(events).message.content == [ToolCall(id="get_country_1", name="get_country")]


def test_case36_missing_ids_get_deterministic_synthetic_ids() -> None:
    t = done(sse(parts(call("f", {"a": 1}), call("f", {"a": 2}), call("g", {}), finish="STOP")))
    assert [c.id for c in t.message.content if isinstance(c, ToolCall)] == ["f_1", "f_2", "g_3"]


def test_case36_a_duplicate_id_is_replaced() -> None:
    t = done(
        sse(
            parts(call("f", {"a": 1}, id="dup")),
            parts(call("f", {"a": 2}, id="dup"), finish="STOP"),
        )
    )
    assert [c.id for c in t.message.content if isinstance(c, ToolCall)] == ["dup", "f_1"]


def test_synthetic_ids_never_collide_with_wire_ids() -> None:
    t = done(sse(parts(call("f", {}, id="f_1"), call("f", {}), finish="STOP")))
    assert [c.id for c in t.message.content if isinstance(c, ToolCall)] == ["f_1", "f_2"]


def test_case37_stop_with_function_calls_is_tool_use() -> None:
    t = done(
        sse(parts(call("f", {}), finish="STOP", finishMessage="Model generated function call(s)."))
    )
    assert (t.reason, t.message.provider_stop_reason) == ("tool_use", "STOP")
    assert t.message.error_message is None  # finishMessage only enters error messages


def test_max_tokens_with_a_call_stays_length() -> None:
    assert done(sse(parts(call("f", {}), finish="MAX_TOKENS"))).reason == "length"


def test_call_args_given_as_a_json_string_are_taken_as_text() -> None:
    t = done(sse(parts(call("f", '{"x": 1}'), finish="STOP")))
    assert t.message.content == [ToolCall(id="f_1", name="f", arguments={"x": 1})]


def test_call_args_that_are_not_an_object_fail_and_keep_what_came_before() -> None:
    t = failed(sse(parts({"text": "ok"}), parts(call("f", [1, 2]), finish="STOP")))
    assert t.message.content == [TextBlock(content="ok")]
    assert "functionCall 'f' has args that are not an object" in t.error_message


def test_a_lone_empty_function_call_is_ignored() -> None:
    t = done(sse(parts({"functionCall": {}}), parts({"text": "x"}, finish="STOP")))
    assert t.message.content == [TextBlock(content="x")]


# -- streamed arguments (partialArgs) --------------------------------------------------------


def test_partial_args_vercel_shape_exact_fragments() -> None:
    # The shape Vercel AI reads (provider-facts.md 2.4): name + willContinue, then
    # partialArgs without a name, then an empty functionCall that ends the call.
    body = sse(
        parts(call("get_weather", id="w1", willContinue=True, sig="UFNJRw==")),
        parts(
            call(
                partialArgs=[
                    {"jsonPath": "$.location", "stringValue": "New ", "willContinue": True}
                ],
                willContinue=True,
            )
        ),
        parts(
            call(
                partialArgs=[
                    {"jsonPath": "$.location", "stringValue": "York"},
                    {"jsonPath": "$.unit", "stringValue": "C"},
                ],
                willContinue=True,
            )
        ),
        parts({"functionCall": {}}, finish="STOP"),
    )
    events = run(body)
    assert tool_deltas(events) == ['{"location":"New ', 'York","unit":"C"', "}"]
    t = terminal(events)
    assert t.message.content == [
        ToolCall(
            id="w1",
            name="get_weather",
            arguments={"location": "New York", "unit": "C"},
            signature="UFNJRw==",
        )
    ]
    assert t.reason == "tool_use"


def test_partial_args_with_id_and_name_on_every_part() -> None:
    body = sse(
        parts(
            call(
                "controlLight",
                id="call-1",
                partialArgs=[{"jsonPath": "$.brightness", "numberValue": 50}],
                willContinue=True,
            )
        ),
        parts(
            call(
                "controlLight",
                id="call-1",
                partialArgs=[
                    {"jsonPath": "$.colorTemperature", "stringValue": "wa", "willContinue": True}
                ],
                willContinue=True,
            )
        ),
        parts(
            call(
                "controlLight",
                id="call-1",
                partialArgs=[{"jsonPath": "$.colorTemperature", "stringValue": "rm"}],
                willContinue=False,
            ),
            finish="STOP",
        ),
    )
    events = run(body)
    assert tool_deltas(events) == ['{"brightness":50', ',"colorTemperature":"wa', 'rm"', "}"]
    assert terminal(events).message.content == [
        ToolCall(
            id="call-1",
            name="controlLight",
            arguments={"brightness": 50, "colorTemperature": "warm"},
        )
    ]


def test_partial_args_call_without_will_continue_ends_with_its_part() -> None:
    # Two calls of one function streamed back to back: the first ends with its part.
    body = sse(
        parts(call("f", partialArgs=[{"jsonPath": "$.city", "stringValue": "San"}])),
        parts(
            call("f", partialArgs=[{"jsonPath": "$.city", "stringValue": "Jose"}]), finish="STOP"
        ),
    )
    t = done(body)
    assert t.message.content == [
        ToolCall(id="f_1", name="f", arguments={"city": "San"}),
        ToolCall(id="f_2", name="f", arguments={"city": "Jose"}),
    ]


def test_partial_args_nested_paths_arrays_and_literals() -> None:
    body = sse(
        parts(
            call(
                "book",
                partialArgs=[
                    {"jsonPath": "$.recipe.name", "stringValue": "Lasagna"},
                    {"jsonPath": "$.recipe.ingredients[0].name", "stringValue": "Noodles"},
                    {"jsonPath": "$.recipe.ingredients[0].qty", "numberValue": 2.5},
                    {"jsonPath": "$.recipe.ingredients[1].name", "stringValue": "Cheese"},
                    {"jsonPath": "$.vegan", "boolValue": False},
                    {"jsonPath": "$['odd key']", "nullValue": "NULL_VALUE"},
                    {"jsonPath": "$.matrix[0][0]", "numberValue": 1},
                    {"jsonPath": "$.matrix[0][1]", "numberValue": 2},
                    {"jsonPath": "$.matrix[1][0]", "numberValue": 3},
                ],
                willContinue=True,
            )
        ),
        parts({"functionCall": {}}, finish="STOP"),
    )
    events = run(body)
    assert "".join(tool_deltas(events)) == (
        '{"recipe":{"name":"Lasagna","ingredients":[{"name":"Noodles","qty":2.5},{"name":"Cheese"}]},'
        '"vegan":false,"odd key":null,"matrix":[[1,2],[3]]}'
    )


def test_partial_args_string_escapes_and_split_surrogates() -> None:
    # A quote, a newline and an emoji whose UTF-16 halves arrive in two fragments (the
    # wire escapes them as \\ud83d and \\ude00): the text stays valid UTF-8 and joins.
    body = sse(
        parts(
            call(
                "say",
                partialArgs=[
                    {"jsonPath": "$.t", "stringValue": 'a"b\n\ud83d', "willContinue": True}
                ],
                willContinue=True,
            )
        ),
        parts(call(partialArgs=[{"jsonPath": "$.t", "stringValue": "\ude00!"}]), finish="STOP"),
    )
    events = run(body)
    assert tool_deltas(events) == ['{"t":"a\\"b\\n\\ud83d', '\\ude00!"', "}"]
    assert terminal(events).message.content == [
        ToolCall(id="say_1", name="say", arguments={"t": 'a"b\n\U0001f600!'})
    ]
    for e in events:
        e.model_dump_json()  # no lone surrogate reaches an event


def test_partial_args_with_an_args_object_on_the_first_part() -> None:
    body = sse(
        parts(
            call("f", {"kept": "yes"}, partialArgs=[{"jsonPath": "$.added", "stringValue": "new"}])
        ),
        finish(),
    )
    assert done(body).message.content == [
        ToolCall(id="f_1", name="f", arguments={"kept": "yes", "added": "new"})
    ]


def test_partial_args_call_with_no_arguments_gets_empty_object() -> None:
    events = run(
        sse(parts(call("ping", willContinue=True)), parts({"functionCall": {}}, finish="STOP"))
    )
    assert tool_deltas(events) == ["{}"]


def test_streamed_call_is_closed_by_a_text_part() -> None:
    t = done(
        sse(
            parts(
                call("f", partialArgs=[{"jsonPath": "$.a", "numberValue": 1}], willContinue=True)
            ),
            parts({"text": "then text"}, finish="STOP"),
        )
    )
    assert t.message.content == [
        ToolCall(id="f_1", name="f", arguments={"a": 1}),
        TextBlock(content="then text"),
    ]


def test_streamed_call_still_open_at_finish_is_closed_with_its_brackets() -> None:
    events = run(
        sse(
            parts(
                call(
                    "f",
                    partialArgs=[{"jsonPath": "$.a.b", "stringValue": "x", "willContinue": True}],
                    willContinue=True,
                ),
                finish="STOP",
            )
        )
    )
    assert tool_deltas(events) == ['{"a":{"b":"x', '"}}']
    assert terminal(events).message.content == [
        ToolCall(id="f_1", name="f", arguments={"a": {"b": "x"}})
    ]


def test_case62_streamed_call_cut_by_eof_keeps_its_partial_arguments() -> None:
    # The string ends in a space: the call is closed by the writer, so the final value is
    # exactly what arrived (a partial parse of '{"a":"par ' would drop the space, and the
    # live value already showed it: contract C9).
    events = run(
        sse(
            parts(
                call(
                    "f",
                    partialArgs=[{"jsonPath": "$.a", "stringValue": "par ", "willContinue": True}],
                    willContinue=True,
                )
            )
        )
    )
    assert tool_deltas(events) == ['{"a":"par ', '"}']
    t = terminal(events)
    assert isinstance(t, ErrorEvent)
    assert t.message.content == [ToolCall(id="f_1", name="f", arguments={"a": "par "})]
    assert t.error_message == "stream ended without finishReason"


def test_another_name_ends_the_streamed_call() -> None:
    t = done(
        sse(
            parts(
                call("f", willContinue=True, partialArgs=[{"jsonPath": "$.a", "numberValue": 1}])
            ),
            parts(call("g", {"b": 2}), finish="STOP"),
        )
    )
    assert t.message.content == [
        ToolCall(id="f_1", name="f", arguments={"a": 1}),
        ToolCall(id="g_2", name="g", arguments={"b": 2}),
    ]


def test_revisiting_a_finished_path_fails_keeping_what_fitted() -> None:
    body = sse(
        parts(
            call(
                "f",
                partialArgs=[
                    {"jsonPath": "$.a.x", "numberValue": 1},
                    {"jsonPath": "$.b", "numberValue": 2},
                    {"jsonPath": "$.a.y", "numberValue": 3},
                ],
            ),
            finish="STOP",
        )
    )
    events = run(body)
    # The entries that fitted, then the writer closes the call with what it received.
    assert tool_deltas(events) == ['{"a":{"x":1},"b":2', "}"]
    t = terminal(events)
    assert isinstance(t, ErrorEvent)
    assert t.error_message == "functionCall 'f': $.a was already written"
    assert t.message.content == [ToolCall(id="f_1", name="f", arguments={"a": {"x": 1}, "b": 2})]


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (
            [{"jsonPath": "$.t[1]", "numberValue": 1}],
            "array index 1 arrived out of order (expected 0)",
        ),
        (
            [{"jsonPath": "$.a", "numberValue": 1}, {"jsonPath": "$.a", "numberValue": 2}],
            "$.a was already written",
        ),
        (
            [{"jsonPath": "$.a", "numberValue": 1}, {"jsonPath": "$.a.b", "numberValue": 2}],
            "$.a was already written",
        ),
        (
            [{"jsonPath": "$.a[0]", "numberValue": 1}, {"jsonPath": "$.a.b", "numberValue": 2}],
            "does not fit an array",
        ),
        ([{"jsonPath": "$", "numberValue": 1}], "names no argument"),
        ([{"jsonPath": "$.a[*]", "numberValue": 1}], "unsupported jsonPath"),
        ([{"stringValue": "no path"}], "partialArgs entry without a jsonPath"),
    ],
)
def test_partial_args_that_cannot_be_written_fail(
    entries: list[dict[str, Any]], message: str
) -> None:
    t = failed(sse(parts(call("f", partialArgs=entries)), finish()))
    assert message in t.error_message


def test_partial_arg_without_a_value_is_skipped() -> None:
    t = done(
        sse(
            parts(
                call(
                    "f",
                    partialArgs=[
                        {"jsonPath": "$.a"},
                        {"jsonPath": "$.b", "numberValue": "x"},
                        {"jsonPath": "$.c", "numberValue": 3},
                    ],
                )
            ),
            finish(),
        )
    )
    assert t.message.content == [ToolCall(id="f_1", name="f", arguments={"c": 3})]


@pytest.mark.parametrize(
    ("path", "segments"),
    [
        ("$.a", ("a",)),
        ("$.foo.bar[0].data", ("foo", "bar", 0, "data")),
        ("$['a b'][\"c\"]", ("a b", "c")),
        ("$['it\\'s']", ("it's",)),
        ("$.m[0][12]", ("m", 0, 12)),
        ("city", ("city",)),
    ],
)
def test_parse_json_path(path: str, segments: tuple[Any, ...]) -> None:
    assert parse_json_path(path) == segments


@pytest.mark.parametrize(
    "path", ["$", "", "$..a", "$.a[-1]", "$.a[*]", "$a", "$.a[" + "9" * 5000 + "]"]
)
def test_parse_json_path_rejects(path: str) -> None:
    with pytest.raises(PartialArgsError):
        parse_json_path(path)


def _leaves(value: Any, path: str = "$") -> list[tuple[str, Any]]:
    """(jsonPath, leaf) in serialization order; the oracle for the writer property."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, f"{path}['{k}']")]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, f"{path}[{i}]")]
    return [(path, value)]


_leaf = st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=8)
_keys = st.text(alphabet="abcxyz _-", min_size=1, max_size=4)
_nonempty: Any = st.recursive(
    _leaf,
    lambda inner: (
        st.lists(inner, min_size=1, max_size=3)
        | st.dictionaries(_keys, inner, min_size=1, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(args=st.dictionaries(_keys, _nonempty, min_size=1, max_size=4), data=st.data())
def test_writer_fragments_concatenate_to_the_arguments(
    args: dict[str, Any], data: st.DataObject
) -> None:
    # Every leaf becomes a partialArgs entry (strings cut into willContinue pieces), the
    # entries are spread over parts, and the call's final arguments must be the object.
    entries: list[dict[str, Any]] = []
    for path, value in _leaves(args):
        if isinstance(value, str) and value:
            cuts = data.draw(st.lists(st.integers(1, max(1, len(value) - 1)), max_size=3))
            pieces = [value[a:b] for a, b in _bounds(value, cuts)]
            for i, piece in enumerate(pieces):
                entries.append(
                    {"jsonPath": path, "stringValue": piece, "willContinue": i < len(pieces) - 1}
                )
        elif value is None:
            entries.append({"jsonPath": path, "nullValue": "NULL_VALUE"})
        elif isinstance(value, bool):
            entries.append({"jsonPath": path, "boolValue": value})
        elif isinstance(value, int):
            entries.append({"jsonPath": path, "numberValue": value})
        else:
            entries.append({"jsonPath": path, "stringValue": value})
    groups = data.draw(st.lists(st.integers(0, len(entries)), max_size=4))
    bounds = [0, *sorted(set(groups)), len(entries)]
    chunks = [parts(call("f", willContinue=True))]
    for a, b in itertools.pairwise(bounds):
        if b > a:
            chunks.append(parts(call(partialArgs=entries[a:b], willContinue=True)))
    chunks.append(parts({"functionCall": {}}, finish="STOP"))
    events = run(sse(*chunks))
    t = terminal(events)
    assert isinstance(t, DoneEvent), t
    assert t.message.content == [ToolCall(id="f_1", name="f", arguments=args)]
    assert json.loads("".join(tool_deltas(events))) == args


def _bounds(value: str, cuts: list[int]) -> list[tuple[int, int]]:
    points = [0, *sorted({c for c in cuts if 0 < c < len(value)}), len(value)]
    return list(itertools.pairwise(points))


def test_args_writer_finish_is_idempotent() -> None:
    w = ArgsWriter()
    assert w.write({"jsonPath": "$.a", "stringValue": "x", "willContinue": True}) == '{"a":"x'
    assert w.finish() == '"}'
    assert w.finish() == ""


# -- finish reasons (cases 37, 38) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason", "message"),
    [
        # The table rows (specs/stop_reasons.yaml), read off provider-facts.md 3.1/3.4.
        ("STOP", "stop", None),
        ("MAX_TOKENS", "length", None),
        ("CONTINUATION", "stop", None),
        ("SAFETY", "error", "Provider stopped with: SAFETY"),
        ("RECITATION", "error", "Provider stopped with: RECITATION"),
        ("MALFORMED_FUNCTION_CALL", "error", "Provider stopped with: MALFORMED_FUNCTION_CALL"),
        ("TOO_MANY_TOOL_CALLS", "error", "Provider stopped with: TOO_MANY_TOOL_CALLS"),
        ("MISSING_THOUGHT_SIGNATURE", "error", "Provider stopped with: MISSING_THOUGHT_SIGNATURE"),
        ("MALFORMED_RESPONSE", "error", "Provider stopped with: MALFORMED_RESPONSE"),
        # case 38: a value no table knows ends in error, never an exception.
        ("ESCALATION", "error", "unrecognized stop reason 'ESCALATION'"),
        ("stop", "error", "unrecognized stop reason 'stop'"),
    ],
)
def test_case38_every_finish_reason_maps_without_raising(
    raw: str, reason: str, message: str | None
) -> None:
    t = terminal(run(sse(parts({"text": "partial"}, finish=raw))))
    assert t.message.stop_reason == reason
    assert t.message.provider_stop_reason == raw
    assert t.message.error_message == message
    assert t.message.content == [TextBlock(content="partial")]


def test_finish_message_is_added_to_an_error_message() -> None:
    t = failed(
        sse(
            parts(
                {"text": "x"},
                finish="MALFORMED_FUNCTION_CALL",
                finishMessage="Malformed function call: print(",
            )
        )
    )
    assert (
        t.error_message
        == "Provider stopped with: MALFORMED_FUNCTION_CALL: Malformed function call: print("
    )


def test_the_last_finish_reason_wins() -> None:
    # bug 16 (ecosystem.md): some stacks repeat a finish reason on every chunk.
    t = done(sse(parts({"text": "a"}, finish="STOP"), parts({"text": "b"}, finish="MAX_TOKENS")))
    assert (t.reason, t.message.content) == ("length", [TextBlock(content="ab")])


def test_finish_happens_at_close_so_later_usage_is_kept() -> None:
    body = sse(
        parts({"text": "a"}, finish="STOP"),
        {"usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 1, "totalTokenCount": 5}},
    )
    n = Normalizer()
    first = n.feed(body)
    assert not any(isinstance(e, DoneEvent) for e in first)
    t = terminal(first + n.close())
    assert t.message.usage == Usage(input=4, output=1, total=5)


# -- usage, empty candidates, metadata --------------------------------------------------------


def test_case34_empty_candidates_are_skipped_and_usage_captured() -> None:
    body = sse(
        parts({"text": "x"}),
        {
            "candidates": [],
            "usageMetadata": {
                "promptTokenCount": 3,
                "candidatesTokenCount": 1,
                "totalTokenCount": 4,
            },
        },
        {"candidates": None},
        finish(),
    )
    t = done(body)
    assert t.message.content == [TextBlock(content="x")]
    assert t.message.usage == Usage(input=3, output=1, total=4)


def test_usage_arithmetic_cache_thoughts_and_tool_use_prompt() -> None:
    # prompt 4210 includes 4096 cached; output = candidates + thoughts; the tool-use prompt
    # (search results, code output) is input the model read: 4210-4096+73 = 187.
    usage = {
        "promptTokenCount": 4210,
        "cachedContentTokenCount": 4096,
        "candidatesTokenCount": 35,
        "thoughtsTokenCount": 58,
        "toolUsePromptTokenCount": 73,
        "totalTokenCount": 4376,
    }
    t = done(sse({**parts({"text": "x"}, finish="STOP"), "usageMetadata": usage}))
    assert t.message.usage == Usage(input=187, output=93, cache_read=4096, total=4376)


def test_usage_fields_overwrite_one_by_one() -> None:
    body = sse(
        {
            **parts({"text": "x"}),
            "usageMetadata": {"promptTokenCount": 10, "thoughtsTokenCount": 7},
        },
        {
            **finish(),
            "usageMetadata": {
                "promptTokenCount": 12,
                "candidatesTokenCount": 2,
                "thoughtsTokenCount": True,
            },
        },
    )
    # thoughtsTokenCount true is not a count: the earlier 7 stays; no total -> the sum.
    assert done(body).message.usage == Usage(input=12, output=9, total=21)


def test_model_and_response_id_come_from_the_chunks() -> None:
    t = done(
        sse({**parts({"text": "x"}), "modelVersion": "gemini-x", "responseId": "r1"}, finish())
    )
    assert (t.message.model, t.message.response_id) == ("gemini-x", "r1")


def test_other_parts_are_provider_blocks_where_they_arrived() -> None:
    code = {
        "executableCode": {"language": "PYTHON", "code": "print(1)", "id": "e1"},
        "thoughtSignature": "Q09ERQ==",
    }
    result = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n", "id": "e1"}}
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    future = {"somethingNew": {"x": 1}}
    t = done(
        sse(
            parts({"text": "before"}, code),
            parts(result, {"text": "after"}, image, future, finish="STOP"),
        )
    )
    assert t.message.content == [TextBlock(content="before"), TextBlock(content="after")]
    assert t.message.provider_blocks == [
        ProviderBlock(provider_type="executableCode", position=1, data=code),
        ProviderBlock(provider_type="codeExecutionResult", position=1, data=result),
        ProviderBlock(provider_type="inlineData", position=2, data=image),
        ProviderBlock(provider_type="somethingNew", position=2, data=future),
    ]


def test_grounding_citations_and_safety_are_kept_at_the_end() -> None:
    grounding = {
        "webSearchQueries": ["q"],
        "groundingChunks": [{"web": {"uri": "https://example.com", "title": "ex"}}],
    }
    source_a = {"startIndex": 0, "endIndex": 5, "uri": "https://a.example"}
    source_b = {"startIndex": 6, "endIndex": 9, "uri": "https://b.example"}
    ratings = [{"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"}]
    body = sse(
        parts(
            {"text": "a"}, groundingMetadata={}, citationMetadata={"citationSources": [source_a]}
        ),
        parts(
            {"text": "b"},
            citationMetadata={"citations": [source_a, source_b]},
            safetyRatings=ratings,
        ),
        parts({"text": "c"}, finish="STOP", groundingMetadata=grounding),
    )
    t = done(body)
    assert t.message.provider_blocks == [
        ProviderBlock(provider_type="groundingMetadata", position=1, data=grounding),
        ProviderBlock(
            provider_type="citationMetadata",
            position=1,
            data={"citationSources": [source_a, source_b]},
        ),
        ProviderBlock(provider_type="safetyRatings", position=1, data={"safetyRatings": ratings}),
    ]


def test_extra_candidates_are_kept_not_merged() -> None:
    second = {"content": {"parts": [{"text": "other"}]}, "index": 1}
    t = done(
        sse(
            {
                "candidates": [
                    {"content": {"parts": [{"text": "main"}]}, "finishReason": "STOP"},
                    second,
                ]
            }
        )
    )
    assert t.message.content == [TextBlock(content="main")]
    assert t.message.provider_blocks == [
        ProviderBlock(provider_type="candidate", position=1, data=second)
    ]


# -- errors and the end of the stream (cases 39, 40, 62) ---------------------------------------


def test_case39_prompt_blocked_is_an_error_with_the_reason() -> None:
    feedback = {"blockReason": "SAFETY", "blockReasonMessage": "The prompt was blocked."}
    t = failed(
        sse(
            {
                "promptFeedback": feedback,
                "usageMetadata": {"promptTokenCount": 7, "totalTokenCount": 7},
            }
        )
    )
    assert t.error_message == "prompt blocked: SAFETY: The prompt was blocked."
    assert t.message.provider_stop_reason == "SAFETY"
    assert t.message.usage == Usage(input=7, total=7)
    assert t.message.provider_blocks == [
        ProviderBlock(provider_type="promptFeedback", position=0, data=feedback)
    ]


def test_prompt_feedback_without_block_reason_is_not_an_error() -> None:
    t = done(sse({"promptFeedback": {"safetyRatings": []}}, parts({"text": "x"}, finish="STOP")))
    assert t.message.provider_blocks == []


@pytest.mark.parametrize("framing", ["sse", "array"])
def test_case40_in_stream_error_object_keeps_text_and_is_retryable(framing: str) -> None:
    error = {
        "error": {
            "code": 503,
            "message": "The model is overloaded. Please try again later.",
            "status": "UNAVAILABLE",
        }
    }
    chunks = [parts({"text": "partial"}), error, parts({"text": "never"}, finish="STOP")]
    body = sse(*chunks) if framing == "sse" else array(*chunks)
    t = failed(body)
    assert t.error_message == "The model is overloaded. Please try again later."
    assert t.message.content == [TextBlock(content="partial")]
    assert t.error is not None
    assert (t.error.status, t.error.retryable, t.error.provider_type) == (503, True, "UNAVAILABLE")


def test_error_object_without_message_uses_its_status() -> None:
    assert failed(sse({"error": {"code": 500, "status": "INTERNAL"}})).error_message == "INTERNAL"


def test_case62_eof_without_finish_reason_is_an_error_keeping_content() -> None:
    t = failed(sse(parts({"text": "thinking", "thought": True}), parts({"text": "cut"})))
    assert t.error_message == "stream ended without finishReason"
    assert t.message.provider_stop_reason is None
    assert t.message.content == [ThinkingBlock(content="thinking"), TextBlock(content="cut")]


@pytest.mark.parametrize("body", [b"", b"   \r\n", b"\xef\xbb\xbf"])
def test_empty_body_is_an_error(body: bytes) -> None:
    assert failed(body).error_message == "stream ended without finishReason (no chunks received)"


def test_malformed_json_fails_and_keeps_the_text() -> None:
    t = failed(sse(parts({"text": "ok"}), "{not json", finish()))
    assert t.message.content == [TextBlock(content="ok")]
    assert t.error_message.startswith("malformed JSON in chunk #2: ")


@pytest.mark.parametrize("data", ["[1, 2]", "null", '"text"', "42"])
def test_a_chunk_that_is_not_an_object_fails(data: str) -> None:
    assert failed(sse(parts({"text": "ok"}), data)).error_message.startswith(
        "chunk #2 is not a JSON object"
    )


def test_data_less_events_and_comments_are_skipped() -> None:
    t = done(b": keep-alive\r\n\r\ndata: \r\n\r\n" + sse(parts({"text": "x"}, finish="STOP")))
    assert t.message.content == [TextBlock(content="x")]


@pytest.mark.parametrize(
    "bad",
    [
        {"candidates": "nope"},
        {"candidates": [None, 3]},
        {"candidates": [{"content": {"parts": None}}]},
        {"candidates": [{"content": "text"}]},
        {"candidates": [{"finishReason": 7}]},
        {"usageMetadata": [1]},
        {"promptFeedback": {"blockReason": 3}},
    ],
)
def test_fields_of_the_wrong_type_are_passed_over(bad: dict[str, Any]) -> None:
    t = done(sse(parts({"text": "x"}), bad, finish()))
    assert t.message.content == [TextBlock(content="x")]


def test_a_part_that_is_not_an_object_is_kept_verbatim() -> None:
    t = done(sse(parts("loose", finish="STOP")))  # type: ignore[arg-type]
    assert t.message.provider_blocks == [
        ProviderBlock(provider_type="part", position=0, data={"value": "loose"})
    ]


def test_events_after_the_error_are_dropped() -> None:
    # case 61: nothing follows the terminal event, not even at close().
    n = Normalizer()
    events = n.feed(sse({"error": {"code": 429, "message": "slow down"}}))
    assert isinstance(events[-1], ErrorEvent)
    assert n.feed(sse(parts({"text": "late"}, finish="STOP"))) == []
    assert n.close() == []


# -- framing --------------------------------------------------------------------------------


def test_json_array_form_gives_the_same_events_as_sse() -> None:
    chunks = [
        {**parts({"text": "think", "thought": True}), "modelVersion": "m", "responseId": "r"},
        parts({"text": "Scoop"}),
        {
            **parts({"text": "", "thoughtSignature": "U0lH"}, finish="STOP"),
            "usageMetadata": {
                "promptTokenCount": 1,
                "totalTokenCount": 2,
                "candidatesTokenCount": 1,
            },
        },
    ]
    reference = run(sse(*chunks))
    assert run(array(*chunks)) == reference
    assert run(b"\xef\xbb\xbf \r\n" + array(*chunks)) == reference
    assert isinstance(reference[-1], DoneEvent)


def test_a_body_that_is_one_json_object_is_one_chunk() -> None:
    t = done(json.dumps(parts({"text": "whole"}, finish="STOP"), indent=2).encode())
    assert t.message.content == [TextBlock(content="whole")]


def test_framing_is_chosen_after_a_split_bom_and_whitespace() -> None:
    body = b"\xef\xbb\xbf\n" + array(parts({"text": "x"}, finish="STOP"))
    assert run(body, [1, 2, 3, 4]) == run(body)
    n = Normalizer()
    n.feed(b"\xef")
    assert n.framing is None
    n.feed(b"\xbb\xbf  [")
    assert n.framing == "jsonarray"


def test_array_framing_error_fails_and_keeps_content() -> None:
    body = b"[" + json.dumps(parts({"text": "ok"})).encode() + b" oops ]"
    t = failed(body)
    assert t.message.content == [TextBlock(content="ok")]
    assert t.error_message.startswith("framing error at byte ")


def test_unterminated_array_is_an_error() -> None:
    body = array(parts({"text": "ok"}, finish="STOP"))[:-1]
    t = failed(body)
    assert t.error_message.startswith("framing error at byte ")
    assert t.message.content == [TextBlock(content="ok")]


def test_invalid_utf8_in_sse_is_a_framing_error() -> None:
    t = failed(sse(parts({"text": "ok"})) + b"data: \xff\r\n\r\n")
    assert t.error_message.startswith("framing error at byte ")


# -- more cases ---------------------------------------------------------------------------


def test_thinking_event_types_are_the_thinking_ones() -> None:
    events = run(sse(parts({"text": "t", "thought": True}, finish="STOP")))
    assert events[1:4] == [
        ThinkingStartEvent(content_index=0),
        ThinkingDeltaEvent(content_index=0, delta="t"),
        ThinkingEndEvent(content_index=0, content="t"),
    ]
