"""The per-adapter conventions (specs/adapter_conventions.yaml) and how they are applied.

Expected values are worked out by hand from the rules' definitions; each alignment rule is
tested both where it applies (the content agrees) and where it must not (the content
differs, which stays a difference).
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.adapters.conventions import (
    Collected,
    ConventionsError,
    LibraryUsage,
    UsageRule,
    align,
    all_conventions,
    contract_usage,
    parse_conventions,
    wire_stop,
)
from harness.adapters.litellm import split_thought_id
from harness.adapters.registry import THIRD_PARTY
from harness.events import AssistantMessage, TextBlock, ThinkingBlock, ToolCall, Usage


def _table(**protocol: Any) -> dict[str, Any]:
    return {
        "adapters": {
            "lib": {
                "library": "lib",
                "protocols": {"anthropic-messages": {"source": "s", **protocol}},
            }
        }
    }


def test_every_third_party_adapter_has_conventions_with_sources() -> None:
    table = all_conventions()
    # (stdio-default: the defaults of stdio adapters without an entry, specs/adapter-protocol.md;
    # js-anthropic-sdk needs none, the SDK keeps the raw values.)
    assert set(table) - {"stdio-default"} == set(THIRD_PARTY) - {"js-anthropic-sdk"}
    # parse_conventions refuses a protocol entry without a source, so loading is the check;
    # the protocols listed are the ones the adapter speaks.
    assert set(table["litellm"].protocols) == {
        "anthropic-messages",
        "openai-completions",
        "google-generative-ai",
    }


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"source": None, "stop_reasons": {"stop": 1}}, "stop_reasons must map"),
        ({"source": "s", "usage": {"missing": "sometimes"}}, "zero, none or estimate"),
        ({"source": "s", "align": ["guess"]}, "unknown alignment"),
    ],
)
def test_malformed_entries_are_refused(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ConventionsError, match=message):
        parse_conventions({"adapters": {"lib": {"protocols": {"p": entry}}}})
    with pytest.raises(ConventionsError, match="needs a source"):
        parse_conventions({"adapters": {"lib": {"protocols": {"p": {}}}}})


def test_stop_values_map_to_the_wire_and_unlisted_ones_pass_through() -> None:
    conv = parse_conventions(_table(stop_reasons={"tool_calls": "tool_use"}))["lib"].for_protocol(
        "anthropic-messages"
    )
    assert wire_stop(conv, "tool_calls") == "tool_use"
    assert wire_stop(conv, "end_turn") == "end_turn"
    assert wire_stop(conv, None) is None


def test_usage_arithmetic_is_undone() -> None:
    # LangChain-style: input 12 + 20480 cache reads + 1830 cache writes = 22322 reported.
    lib = LibraryUsage(input=22322, output=11, cache_read=20480, cache_write=1830)
    assert contract_usage(lib, UsageRule(input_includes_cache=True)) == Usage(
        input=12, output=11, cache_read=20480, cache_write=1830, total=22333
    )
    # Gemini-style: 28 candidate tokens, 133 thinking tokens reported apart, total sent.
    gemini = LibraryUsage(input=61, output=28, thinking=133, total=222)
    assert contract_usage(gemini, UsageRule(output_excludes_thinking=True)) == Usage(
        input=61, output=161, total=222
    )
    assert contract_usage(None, UsageRule()) == Usage()


def _msg(*blocks: Any, usage: Usage | None = None) -> AssistantMessage:
    return AssistantMessage(content=list(blocks), usage=usage or Usage())


def test_text_joined_cuts_at_the_references_boundaries_only_when_the_characters_agree() -> None:
    ref = _msg(TextBlock(content="Hello "), ToolCall(id="t", name="f"), TextBlock(content="world"))
    joined = _msg(TextBlock(content="Hello world"), ToolCall(id="t", name="f"))
    out = align(joined, ref, frozenset({"text_joined"}))
    assert [b.content for b in out.content if isinstance(b, TextBlock)] == ["Hello ", "world"]
    lost = _msg(TextBlock(content="Hello"), ToolCall(id="t", name="f"))
    assert align(lost, ref, frozenset({"text_joined"})) == lost


def test_block_order_takes_the_references_order_for_the_same_blocks() -> None:
    ref = _msg(TextBlock(content="a"), ToolCall(id="t", name="f"), TextBlock(content="b"))
    fixed_order = _msg(TextBlock(content="a"), TextBlock(content="b"), ToolCall(id="t", name="f"))
    assert align(fixed_order, ref, frozenset({"block_order"})).content == ref.content
    different = _msg(TextBlock(content="a"), TextBlock(content="c"), ToolCall(id="t", name="f"))
    assert align(different, ref, frozenset({"block_order"})) == different


def test_signatures_and_ids_are_taken_only_for_blocks_that_agree() -> None:
    ref = _msg(
        ThinkingBlock(content="why", signature="sig"),
        ToolCall(id="get_1", name="f", arguments={"a": 1}),
    )
    mine = _msg(ThinkingBlock(content="why"), ToolCall(id="lib-uuid", name="f", arguments={"a": 1}))
    out = align(mine, ref, frozenset({"signatures", "tool_call_ids"}))
    assert out.content == ref.content
    wrong = _msg(
        ThinkingBlock(content="who"), ToolCall(id="lib-uuid", name="f", arguments={"a": 2})
    )
    assert align(wrong, ref, frozenset({"signatures", "tool_call_ids"})) == wrong
    # Without the rule nothing is taken.
    assert align(mine, ref, frozenset()) == mine


def test_litellms_thought_signature_is_split_from_the_call_id() -> None:
    assert split_thought_id("5yq0kd2m__thought__c2lnbmF0dXJl") == ("5yq0kd2m", "c2lnbmF0dXJl")
    assert split_thought_id("call_1") == ("call_1", None)


def test_an_estimated_usage_is_zero_when_the_wire_had_none() -> None:
    from harness.adapters.conventions import finish

    # litellm's convention for anthropic-messages is `missing: estimate`.
    estimated = Collected(
        content=[TextBlock(content="hi")], stop="stop", usage=LibraryUsage(input=3, output=1)
    )
    no_usage_ref = _msg(TextBlock(content="hi"))
    assert finish("litellm", "anthropic-messages", estimated, no_usage_ref).usage == Usage()
    counted_ref = _msg(TextBlock(content="hi"), usage=Usage(input=3, output=1, total=4))
    assert finish("litellm", "anthropic-messages", estimated, counted_ref).usage == Usage(
        input=3, output=1, total=4
    )
    # And the stop vocabulary: litellm's `stop` is Anthropic's `end_turn`.
    assert (
        finish("litellm", "anthropic-messages", estimated, counted_ref).provider_stop_reason
        == "end_turn"
    )
