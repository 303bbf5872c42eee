"""The Chat Completions chunk normalizers on every recorded streaming interaction of the corpus.

openai-completions and mistral-chat (its subclass, Mistral's own URLs) read the same chunks,
so their recordings are checked here together, each through the protocol detection picks.

For each interaction: the outcome read off the wire by hand (EXPECTED below), and a
comparison with the openai SDK's own accumulator (``ChatCompletionStreamState``, fed the
chunks the way ``Stream`` would); split invariance and the contract are
test_corpus_split_invariance.py's, for every protocol. Every disagreement is listed in
KNOWN_DIFFERENCES with its reason, mirrored in specs/known-differences.md (section
``## openai-completions``). Everything skips cleanly when the corpus is absent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cassette_checks import events_of
from conftest import no_corpus_reason
from corpus_streams import Recorded, blocks_text, corpus_params, corpus_streams
from stream_harness.contract.events import (
    DoneEvent,
    ErrorEvent,
    Event,
    ThinkingBlock,
    ToolCall,
    Usage,
)
from stream_harness.recordings.cassette import Interaction, load_cassette

PROTOCOL = "openai-completions"
# The chunk protocols this file checks: detection sends Mistral's recordings to mistral-chat.
PROTOCOLS = (PROTOCOL, "mistral-chat")


def _name(recorded: Recorded) -> str:
    return f"{recorded.path.stem}#{recorded.interaction.index}"


RECORDED = [r for r in corpus_streams(*PROTOCOLS) if r.interaction.response.status == 200]
INTERACTIONS = [(_name(r), r.interaction) for r in RECORDED]
PROTOCOL_OF = {_name(r): r.protocol for r in RECORDED if r.protocol is not None}
PARAMS = corpus_params(RECORDED, name=_name)
NAMES = {id(i): name for name, i in INTERACTIONS}


# -- outcomes read off the wire ---------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    terminal: str
    reason: str
    provider_stop_reason: str | None
    kinds: list[str]
    usage: Usage
    text: str | None = None  # the whole text, when short
    text_starts: str = ""
    text_ends: str = ""
    thinking_starts: str = ""
    tool_calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    error_message: str | None = None
    provider_blocks: list[str] = field(default_factory=list)


# Values read from the bodies (the deltas' content, the usage objects, the finish reasons);
# the per-file notes say where a non-obvious value comes from.
EXPECTED: dict[str, Expected] = {
    "openinference__test_synchronous_streaming_chat_completions_emits_expected_span[False]#0": Expected(
        "done", "stop", "stop", ["text"], Usage(input=26, output=4, total=30), text="France won World Cup"
    ),
    # Mistral: the whole call in one chunk, no `index`, finish reason and usage on it.
    "openinference__test_synchronous_streaming_chat_completions_with_tool_call_response_emits_expected_spans[False]#0": Expected(
        "done", "tool_use", "tool_calls", ["tool_call"], Usage(input=96, output=23, total=119),
        tool_calls=[("EscTeQY62", "get_weather", {"city": "San Francisco"})],
    ),
    # Mistral magistral: thinking as content chunks, then plain string content (case 48).
    "pydantic-ai__test_mistral_model_thinking_part_iter#0": Expected(
        "done", "stop", "stop", ["thinking", "text"], Usage(input=10, output=232, total=242),
        text_starts="To cross the street safely, follow these steps:\n\n1. Look both ways",
        text_ends="you can ensure a safe crossing.",
        thinking_starts="Okay, the user is asking how to cross the street.",
    ),
    # No usage chunk was requested: usage stays zero.
    "openinference__TestAssistantAgent.test_agent_run#0": Expected(
        "done", "tool_use", "tool_calls", ["tool_call"], Usage(),
        tool_calls=[("call_MgGVx3hRe0DbWL6BURPysHqs", "get_weather", {"city": "New York"})],
    ),
    "openinference__TestAssistantAgent.test_agent_run#1": Expected(
        "done", "stop", "stop", ["text"], Usage(), text="The weather in New York is currently 73 degrees and sunny."
    ),
    # Together: top-level usage.cached_tokens 0.
    "openinference__test_chat_stream#0": Expected(
        "done", "stop", "stop", ["text"], Usage(input=41, output=15, total=56), text="1, 2, 3, 4, 5."
    ),
    "openinference__test_records_token_counts_for_streaming_openai_llm#0": Expected(
        "done", "stop", "stop", ["text"], Usage(input=18, output=15, total=33),
        text="Why couldn't the bicycle stand up by itself? It was two tired.",
    ),
    # HF router (novita): usage-only chunk with prompt_tokens_details null.
    "pydantic-ai__test_cancel_recorded_provider_stream[huggingface]#1": Expected(
        "done", "stop", "stop", ["text"], Usage(input=40, output=2, total=42), text="Paris"
    ),
    "pydantic-ai__test_crusoe_model_streaming#0": Expected(
        "done", "stop", "stop", ["text"], Usage(input=46, output=14, total=60), text="1, 2, 3, 4, 5"
    ),
    # DeepSeek: reasoning_content, then content; completion_tokens 212 includes 198 reasoning.
    "pydantic-ai__test_deepseek_model_thinking_stream#0": Expected(
        "done", "stop", "stop", ["thinking", "text"], Usage(input=6, output=212, total=218),
        text="Hello there! 😊 How can I help you today?", thinking_starts='Hmm, the user just said "Hello".',
    ),
    # Groq compound: `reasoning`, executed_tools (twice, start and result), usage only in
    # x_groq.usage, a new chunk id every chunk (the first one is kept).
    "pydantic-ai__test_groq_model_web_search_tool_stream#0": Expected(
        "done", "stop", "stop", ["thinking", "text"], Usage(input=5003, output=359, total=5362),
        text_starts="The weather in San Francisco today is partly cloudy", text_ends="a humidity level of 90-94%.",
        thinking_starts="<think>\nTo", provider_blocks=["groq.executed_tool", "groq.executed_tool"],
    ),
    # OpenAI: the usage chunk is followed by a `moderation` chunk without usage.
    "pydantic-ai__test_openai_moderation_stream#0": Expected(
        "done", "stop", "stop", ["text"], Usage(input=13, output=11, total=24), text="Paris."
    ),
    # OpenRouter: finish_reason "length", then a chunk with a top-level error and usage,
    # then [DONE]. The wire says the request failed: error, partial reasoning kept.
    "pydantic-ai__test_openrouter_stream_error#0": Expected(
        "error", "error", "length", ["thinking"], Usage(input=43, output=10, total=53),
        thinking_starts="We need to respond to a greeting. The user", error_message="Token limit reached",
    ),
    # OpenRouter o3: an encrypted reasoning detail (id rs_..., no tool call) before the text.
    "pydantic-ai__test_openrouter_stream_with_reasoning#0": Expected(
        "done", "stop", "stop", ["thinking", "text"], Usage(input=9, output=104, total=113),
        text_starts="I’m ChatGPT, a large-language-model assistant created by OpenAI.",
        text_ends="just let me know!",
    ),
    # OpenRouter web search: five url_citation annotations.
    "pydantic-ai__test_openrouter_web_search_annotations_stream#0": Expected(
        "done", "stop", "stop", ["text"], Usage(input=2317, output=53, total=2370),
        text="The URL for Pydantic AI's GitHub repository is:  \n\nhttps://github.com/pydantic/pydantic-ai",
        provider_blocks=["openai.annotation"] * 5,
    ),
    "pydantic-ai__test_run_stream_sync_streams_real_model#0": Expected(
        "done", "tool_use", "tool_calls", ["tool_call"], Usage(input=53, output=15, total=68),
        tool_calls=[("call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital", {"country": "UK"})],
    ),
    "pydantic-ai__test_run_stream_sync_streams_real_model#1": Expected(
        "done", "stop", "stop", ["text"], Usage(input=78, output=9, total=87), text="The capital of the UK is London."
    ),
    # Snowflake Cortex: no finish_reason anywhere, [DONE] at the end -> stop (documented);
    # reasoning only as reasoning_details text.
    "pydantic-ai__test_snowflake_thinking_streaming#0": Expected(
        "done", "stop", None, ["thinking", "text"], Usage(input=45, output=73, total=118),
        text_starts="15 × 27 = **405**", text_ends="300 + 105 = **405**", thinking_starts="15 * 27 = 405",
    ),
    # z.ai GLM: reasoning_content; finish_reason only on the last chunk.
    "pydantic-ai__test_zai_thinking_stream#0": Expected(
        "done", "stop", "stop", ["thinking", "text"], Usage(input=13, output=564, total=577),
        text="4", thinking_starts="\n1.  **Analyze the User's Request:**",
    ),
}  # fmt: skip


@pytest.mark.corpus
@pytest.mark.parametrize("interaction", PARAMS)
def test_corpus_outcome_matches_the_wire(interaction: Interaction) -> None:
    name = NAMES[id(interaction)]
    assert name in EXPECTED, f"new corpus interaction {name}: read its wire and add it to EXPECTED"
    exp = EXPECTED[name]
    events = events_of(PROTOCOL_OF[name], [interaction.response.body])
    last = events[-1]
    assert isinstance(last, DoneEvent | ErrorEvent)
    msg = last.message
    assert (last.type, msg.stop_reason, msg.provider_stop_reason) == (
        exp.terminal,
        exp.reason,
        exp.provider_stop_reason,
    )
    assert [b.type for b in msg.content] == exp.kinds
    assert msg.usage == exp.usage
    text = blocks_text(msg.content)
    if exp.text is not None:
        assert text == exp.text
    assert text.startswith(exp.text_starts) and text.endswith(exp.text_ends)
    thinking = blocks_text(msg.content, ThinkingBlock)
    assert thinking.startswith(exp.thinking_starts)
    assert [
        (b.id, b.name, b.arguments) for b in msg.content if isinstance(b, ToolCall)
    ] == exp.tool_calls
    assert (last.error_message if isinstance(last, ErrorEvent) else None) == exp.error_message
    assert [p.provider_type for p in msg.provider_blocks] == exp.provider_blocks


def test_every_expected_entry_is_in_the_corpus() -> None:
    if not INTERACTIONS:
        pytest.skip(no_corpus_reason())
    assert set(EXPECTED) == {name for name, _ in INTERACTIONS}


def test_openrouter_encrypted_reasoning_is_a_redacted_thinking_block() -> None:
    found = [
        i
        for name, i in INTERACTIONS
        if name == "pydantic-ai__test_openrouter_stream_with_reasoning#0"
    ]
    if not found:
        pytest.skip(no_corpus_reason())
    block = events_of(PROTOCOL, [found[0].response.body])[-1].message.content[0]  # type: ignore[union-attr]
    assert isinstance(block, ThinkingBlock) and block.redacted and block.content == ""
    assert block.signature is not None and block.signature.startswith(
        "gAAAAABpCCSIBxdevbk-8QtJuf4C6mgqDwXaUXZG"
    )


# -- the openai SDK as an oracle (ecosystem.md section 4) ----------------------------------


def sdk_summary(body: bytes) -> dict[str, Any]:
    """What openai-python makes of a body: ``Stream``'s loop around ``ChatCompletionStreamState``.

    As ``openai._streaming.Stream`` does: stop at ``[DONE]``, raise ``APIError`` on a
    chunk with a truthy ``error`` (returned here as ``{"error": message}``); as
    ``ChatCompletionStream`` does: skip chunks whose ``object`` is not
    ``chat.completion.chunk``. Any other exception is the result (``{"crash": name}``).
    """
    from openai._models import construct_type
    from openai._streaming import SSEDecoder as OpenAISSEDecoder
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state: Any = ChatCompletionStreamState()
    fed = 0
    try:
        for sse in OpenAISSEDecoder().iter_bytes(iter([body])):
            if sse.data.startswith("[DONE]"):
                break
            data = json.loads(sse.data)
            if isinstance(data, dict) and data.get("error"):
                error = data["error"]
                message = error.get("message") if isinstance(error, dict) else None
                return {"error": message or "An error occurred during streaming"}
            chunk: Any = construct_type(type_=ChatCompletionChunk, value=data)
            if chunk.object != "chat.completion.chunk":
                continue
            state.handle_chunk(chunk)
            fed += 1
        if not fed:
            return {"error": "no chunks"}
        # The snapshot, not get_final_completion(): that one raises LengthFinishReasonError
        # / ContentFilterFinishReasonError on those finish reasons (parse_chat_completion),
        # which would hide what was accumulated.
        final = state.current_completion_snapshot
    except Exception as exc:  # the oracle's crash is a finding, not a test error
        return {"crash": type(exc).__name__}
    choice = final.choices[0]
    extra = choice.message.model_extra or {}
    reasoning = extra.get("reasoning_content") or extra.get("reasoning")
    tool_calls = []
    for call in choice.message.tool_calls or []:
        try:
            arguments: Any = json.loads(call.function.arguments or "{}")
        except ValueError:
            arguments = ("unparseable", call.function.arguments)
        tool_calls.append((call.id, call.function.name, arguments))
    usage = final.usage
    return {
        "text": choice.message.content or "",
        "thinking": reasoning if isinstance(reasoning, str) and reasoning else None,
        "tool_calls": tool_calls,
        "finish_reason": choice.finish_reason,
        "usage": None
        if usage is None
        else (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens),
    }


def our_summary(events: list[Event]) -> dict[str, Any]:
    last = events[-1]
    assert isinstance(last, DoneEvent | ErrorEvent)
    msg = last.message
    if isinstance(last, ErrorEvent):
        return {"error": last.error_message}
    u = msg.usage
    return {
        "text": blocks_text(msg.content),
        "thinking": blocks_text(msg.content, ThinkingBlock) or None,
        "tool_calls": [(b.id, b.name, b.arguments) for b in msg.content if isinstance(b, ToolCall)],
        "finish_reason": msg.provider_stop_reason,
        # prompt_tokens = input + cached; None when the stream carried no usage at all
        "usage": None
        if u == Usage()
        else (u.input + u.cache_read + u.cache_write, u.output, u.total),
    }


def disagreements(sdk: dict[str, Any], ours: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    if "crash" in sdk:
        return {"crash": (sdk["crash"], None)}
    if "error" in sdk or "error" in ours:
        return (
            {}
            if sdk.get("error") == ours.get("error")
            else {"error": (sdk.get("error"), ours.get("error"))}
        )
    keys = ("text", "thinking", "tool_calls", "finish_reason", "usage")
    return {k: (sdk[k], ours[k]) for k in keys if sdk[k] != ours[k]}


# Every disagreement with the SDK, by interaction: the fields that differ. The reasons are
# in specs/known-differences.md (## openai-completions), one entry each.
KNOWN_DIFFERENCES: dict[str, set[str]] = {
    # Mistral sends tool calls without `index`: accumulate_delta raises TypeError.
    "openinference__test_synchronous_streaming_chat_completions_with_tool_call_response_emits_expected_spans[False]#0": {
        "crash"
    },
    # Mistral thinking chunks inside `content` lists are unknown to the SDK.
    "pydantic-ai__test_mistral_model_thinking_part_iter#0": {"thinking"},
    # Groq reports usage only in x_groq.usage, which the SDK does not read.
    "pydantic-ai__test_groq_model_web_search_tool_stream#0": {"usage"},
    # The SDK overwrites usage with every chunk's value; the moderation chunk after the
    # usage chunk has none, so the SDK ends with usage None.
    "pydantic-ai__test_openai_moderation_stream#0": {"usage"},
    # OpenRouter annotations have no `index`: accumulate_delta raises RuntimeError.
    "pydantic-ai__test_openrouter_web_search_annotations_stream#0": {"crash"},
    # Snowflake's reasoning comes only as reasoning_details text, unknown to the SDK.
    "pydantic-ai__test_snowflake_thinking_streaming#0": {"thinking"},
}


@pytest.mark.corpus
@pytest.mark.filterwarnings("ignore::UserWarning")  # pydantic, on Mistral's content lists
@pytest.mark.parametrize("interaction", PARAMS)
def test_corpus_agrees_with_the_openai_sdk_except_known_differences(
    interaction: Interaction,
) -> None:
    pytest.importorskip("openai")
    name = NAMES[id(interaction)]
    body = interaction.response.body
    found = disagreements(sdk_summary(body), our_summary(events_of(PROTOCOL_OF[name], [body])))
    assert set(found) == KNOWN_DIFFERENCES.get(name, set()), found


def test_known_differences_are_documented() -> None:
    doc = (Path(__file__).resolve().parents[2] / "specs" / "known-differences.md").read_text(
        encoding="utf-8"
    )
    section = doc.split("## openai-completions", 1)[1].split("\n## ", 1)[0]
    for name in [*KNOWN_DIFFERENCES, *BUNDLED_KNOWN_DIFFERENCES]:
        assert name.split("#")[0] in section, name


# The same comparison on the bundled cassettes (no corpus needed): here the differences are
# the point, each is a case the SDK gets wrong or does not judge. Reasons in
# specs/known-differences.md.
BUNDLED_DIR = Path(__file__).resolve().parents[2] / "cassettes" / PROTOCOL
BUNDLED_KNOWN_DIFFERENCES: dict[str, set[str]] = {
    "content_filter": {"error"},  # the SDK accumulates; we end in error (stop_reasons.yaml)
    "eof_without_done": {"error"},  # the SDK does not notice the truncation (case 6, 62)
    "groq_whole_tool_call": {"usage"},  # x_groq.usage unknown to the SDK
    "mistral_thinking_array": {"text", "thinking"},  # content lists corrupt the SDK's text
    "mistral_tool_null_id": {"crash"},  # no `index`: TypeError
    "moderation_after_usage": {"usage"},  # the moderation chunk's usage: null overwrites it
    "ollama_parallel_index0": {"tool_calls"},  # the SDK merges both calls into one (bug 4)
    "known_id_after_later_call": {"tool_calls"},  # merged by index, as ollama_parallel_index0
    "openrouter_finish_error": {"error"},  # choices[0].error is not read by the SDK
    "refusal": {"error"},  # the SDK keeps message.refusal; we end in error (a decision)
}


@pytest.mark.filterwarnings("ignore::UserWarning")  # pydantic, on Mistral's content lists
@pytest.mark.parametrize("path", sorted(BUNDLED_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_bundled_cassettes_agree_with_the_openai_sdk_except_known_differences(path: Path) -> None:
    pytest.importorskip("openai")
    for interaction in load_cassette(path).interactions:
        if interaction.response.status != 200:
            continue
        body = interaction.response.body
        found = disagreements(sdk_summary(body), our_summary(events_of(PROTOCOL, [body])))
        assert set(found) == BUNDLED_KNOWN_DIFFERENCES.get(path.stem, set()), found
