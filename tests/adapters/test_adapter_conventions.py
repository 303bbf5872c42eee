"""The per-adapter conventions (specs/adapter_conventions.yaml) and how they are applied.

Expected values are worked out by hand from the rules' definitions; each alignment rule is
tested both where it applies (the content agrees) and where it must not (the content
differs, which stays a difference).
"""

from __future__ import annotations

from typing import Any

import pytest

from stream_harness.adapters.conventions import (
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
from stream_harness.adapters.libraries.litellm import split_thought_id
from stream_harness.adapters.registry import THIRD_PARTY
from stream_harness.contract.events import (
    AssistantMessage,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    Usage,
)


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
    from stream_harness.adapters.libraries.litellm import (
        LiteLLMAdapter,  # no litellm import at class level
    )

    assert set(table["litellm"].protocols) == set(LiteLLMAdapter.protocols)
    assert {"anthropic-messages", "openai-completions", "cohere-v2-chat"} <= set(
        LiteLLMAdapter.protocols
    )


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
    from stream_harness.adapters.conventions import finish

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


def test_thinking_parts_are_merged_only_when_they_join_to_the_references_block() -> None:
    ref = _msg(
        ThinkingBlock(content="**A**\n\nfirst.\n\n**B**\n\nsecond.", signature="s"),
        TextBlock(content="t"),
    )
    parts = _msg(
        ThinkingBlock(content="**A**\n\nfirst.", signature="enc"),
        ThinkingBlock(content="**B**\n\nsecond."),
        TextBlock(content="t"),
    )
    out = align(parts, ref, frozenset({"thinking_parts"}))
    assert [type(b).__name__ for b in out.content] == ["ThinkingBlock", "TextBlock"]
    assert out.content[0] == ThinkingBlock(content=ref.content[0].content, signature="enc")
    # With signatures too, the merged block takes the reference's token, as any agreeing block.
    assert align(parts, ref, frozenset({"thinking_parts", "signatures"})).content == ref.content
    # A part lost or changed: nothing merged, the difference stays.
    changed = _msg(
        ThinkingBlock(content="**A**\n\nfirst."),
        ThinkingBlock(content="**B**\n\nother."),
        TextBlock(content="t"),
    )
    assert align(changed, ref, frozenset({"thinking_parts"})) == changed


def test_litellms_raised_finish_reason_is_read_from_its_exception_only() -> None:
    from stream_harness.adapters.libraries.litellm import raised_finish_reason

    exc = RuntimeError(
        "litellm.MidStreamFallbackError: litellm.APIConnectionError: OpenAIException - openai raised "
        "a streaming error - finish_reason: error, no content string given. Received Chunk={...}"
    )
    assert raised_finish_reason(exc) == "error"
    assert raised_finish_reason(RuntimeError("AnthropicError - Overloaded")) is None


class _Raising:
    """A LibraryAdapter whose library raised, with a partial whose stop and usage are fill-ins."""

    @staticmethod
    def run(driven_kwargs: dict[str, Any]) -> AssistantMessage:
        from stream_harness.adapters.library import Driven, LibraryAdapter

        class Fake(LibraryAdapter):
            name = "litellm"
            distribution = "litellm"

            def __init__(self) -> None:  # no library to import
                pass

            def collect(self, protocol: str, value: Any) -> Collected:
                return Collected(
                    content=[TextBlock(content="partial")],
                    stop="stop",
                    usage=LibraryUsage(input=8, output=13),
                )

        ref = _msg(TextBlock(content="partial"), usage=Usage(input=120, output=1, total=121))
        driven = Driven(raised=RuntimeError("boom"), partial=object(), **driven_kwargs)
        result = Fake().result("openai-completions", driven, ref)
        assert result.message is not None
        return result.message


def test_a_raise_can_override_the_partials_stop_and_drop_its_filled_in_usage() -> None:
    kept = _Raising.run({})
    assert (kept.provider_stop_reason, kept.usage.input) == ("stop", 8)
    dropped = _Raising.run({"override_stop": True, "raised_stop": None, "drop_usage": True})
    assert (dropped.provider_stop_reason, dropped.usage) == (None, Usage())
    assert dropped.stop_reason == "error" and dropped.error_message == "boom"
    raised = _Raising.run({"override_stop": True, "raised_stop": "error"})
    assert raised.provider_stop_reason == "error"


def test_the_provider_message_is_taken_from_a_wrapped_sdk_error() -> None:
    from stream_harness.adapters.sdk_support import error_message

    class ClientError(Exception):
        def __init__(self) -> None:
            super().__init__("429 RESOURCE_EXHAUSTED. {'error': {'message': 'quota\\n* exceeded'}}")
            self.message = "quota\n* exceeded"

    try:
        try:
            raise ClientError()
        except ClientError as inner:
            raise ValueError(f"Error calling model: {inner}") from inner
    except ValueError as outer:
        assert error_message(outer) == "quota\n* exceeded"
    # Without a cause, the exception's own text.
    assert error_message(ValueError("plain  text")) == "plain text"


def test_langchain_reads_block_reasons_custom_calls_and_drops_invented_ids() -> None:
    from stream_harness.adapters.libraries.langchain import (
        _block_reason,
        _custom_call,
        _custom_tool_call,
    )
    from stream_harness.adapters.libraries.langchain import _made_up as _invented

    meta = {"prompt_feedback": {"block_reason": "PROHIBITED_CONTENT", "block_reason_message": None}}
    assert _block_reason(meta) == ("PROHIBITED_CONTENT", None)
    assert _block_reason({"finish_reason": "STOP"}) is None
    block = {
        "type": "non_standard",
        "value": {
            "type": "custom_tool_call",
            "call_id": "call_1",
            "name": "code_exec",
            "input": "print(1)",
        },
    }
    value = _custom_tool_call(block)
    assert value is not None
    parsed = {"call_1": {"name": "code_exec", "args": {"__arg1": "print(1)"}, "id": "call_1"}}
    assert _custom_call(value, parsed) == ToolCall(
        id="call_1", name="code_exec", arguments={"input": "print(1)"}
    )
    assert (
        _custom_tool_call({"type": "non_standard", "value": {"type": "server_tool_call"}}) is None
    )
    assert _invented("4db49312-f59a-4416-8824-b5cec186c749")
    assert not _invented("5yq0kd2m")


def test_pydantic_ai_closes_a_failed_runs_cut_call_as_its_fragments_parse() -> None:
    from stream_harness.adapters.libraries.pydantic_ai import _close_cut_calls

    cut = AssistantMessage(
        content=[
            ToolCall(id="c", name="f", arguments={"_raw": '{"city":"To'}),
            ToolCall(id="d", name="g", arguments={"a": 1}),
        ],
        stop_reason="error",
        error_message="cut",
    )
    closed = _close_cut_calls(cut)
    assert [b.arguments for b in closed.content if isinstance(b, ToolCall)] == [
        {"city": "To"},
        {"a": 1},
    ]
