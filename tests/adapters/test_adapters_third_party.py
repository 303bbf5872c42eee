"""The third-party library adapters, each on one plain and one tool-call cassette per protocol.

Every adapter runs its library's real streaming code on the bundled cassette, whole and
one byte per chunk, and must give what the cassette says (values read from the cassettes
by hand and quoted here, not produced by the adapters). The libraries' pins conflict, so
no environment holds them all: a test whose library is not installed is skipped, and
``stream-harness matrix`` runs this file's adapters in their own environments. To run these
tests for one library, install its group from specs/matrix.toml (or use the matrix's cached
environment: ``~/.cache/stream-harness/matrix/<group>-*/bin/python -m pytest tests/adapters/test_adapters_third_party.py``).
"""

from __future__ import annotations

from typing import Any

import pytest

from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.protocol import Adapter, AdapterLoadError, AdapterResult
from stream_harness.adapters.registry import THIRD_PARTY, adapter_spec
from stream_harness.conformance import bundled_cassettes
from stream_harness.contract.events import TextBlock, ToolCall, Usage
from stream_harness.providers.registry import is_registered
from stream_harness.recordings.cassette import load_cassette

SPLITS = ["whole", "1byte"]

# (protocol, cassette) -> (text blocks, tool calls as (id, name, arguments), raw stop, usage)
# quoted from the cassettes (their golden files agree).
CASES: dict[
    tuple[str, str], tuple[list[str], list[tuple[str, str, dict[str, Any]]], str, Usage]
] = {
    ("anthropic-messages", "plain_text"): (
        ["Hello! How can I help you today?"],
        [],
        "end_turn",
        Usage(input=14, output=12, total=26),
    ),
    ("anthropic-messages", "tool_call"): (
        ["I'll look up the weather in Paris."],
        [("toolu_01A9xQ3mW7kP2vN8cR5tY4bZ", "get_weather", {"city": "Paris", "unit": "c"})],
        "tool_use",
        Usage(input=402, output=58, total=460),
    ),
    ("openai-completions", "text_plain"): (
        ["Bonjour ! Le café est prêt ☕."],
        [],
        "stop",
        Usage(input=12, output=9, total=21),
    ),
    ("openai-completions", "tool_call_single"): (
        [],
        [("call_Wq8rT2mXbN4kP7sZ1cV3dF6g", "get_weather", {"city": "São Paulo"})],
        "tool_calls",
        Usage(input=61, output=17, total=78),
    ),
    ("openai-responses", "plain_text"): (
        ["Bonjour ! Comment ça va ?"],
        [],
        "completed",
        Usage(input=14, output=8, total=22),
    ),
    ("openai-responses", "function_call"): (
        [],
        [("call_6c70145d66f12bd25fb9c204", "get_weather", {"city": "Paris"})],
        "completed",
        Usage(input=61, output=15, total=76),
    ),
    ("google-generative-ai", "plain_text"): (
        ["The capital of France is Paris."],
        [],
        "STOP",
        Usage(input=8, output=28, total=36),
    ),
    ("google-generative-ai", "tool_call"): (
        [],
        [("5yq0kd2m", "get_weather", {"location": "Paris", "unit": "C"})],
        "STOP",
        # 161 output tokens: candidates plus thoughts (the reference's arithmetic).
        Usage(input=61, output=161, total=222),
    ),
    ("cohere-v2-chat", "plain_text"): (
        ["A large language model (LLM) is a neural network trained on text."],
        [],
        "COMPLETE",
        # tokens, not billed_units (specs/protocols/cohere-v2-chat.md, "Usage").
        Usage(input=71, output=12, total=83),
    ),
    ("cohere-v2-chat", "tool_call_single"): (
        [],
        [("get_weather_usorn2wl4akn", "get_weather", {"location": "Toronto"})],
        "TOOL_CALL",
        Usage(input=896, output=71, total=967),
    ),
    # Issue 15's protocols (their cassettes land with the protocols: a case whose
    # cassette is not in this checkout is skipped).
    ("azure-openai-completions", "text_default_filter"): (
        ["Grüße aus Zürich! Der Kaffee ist fertig ☕ und die Sonne scheint."],
        [],
        "stop",
        Usage(input=19, output=17, total=36),
    ),
    ("azure-openai-completions", "tool_call_single"): (
        [],
        [("call_Az7kQ2mPp4Xw9Lr1", "get_weather", {"city": "Zürich"})],
        "tool_calls",
        Usage(),  # the stream carries no usage chunk
    ),
    ("azure-openai-responses", "plain_text"): (
        ["Grüße aus Zürich ☕!"],
        [],
        "completed",
        Usage(input=12, output=7, total=19),
    ),
    ("azure-openai-responses", "function_call"): (
        [],
        [("call_57a469a42e3a52c234519376", "get_weather", {"city": "Zürich"})],
        "completed",
        Usage(input=60, output=16, total=76),
    ),
    ("mistral-chat", "text_plain"): (
        ["Le café est prêt ☕ — bon appétit."],
        [],
        "stop",
        Usage(input=14, output=11, total=25),
    ),
    ("mistral-chat", "tool_call_streamed"): (
        ["Reading the file."],
        [("k3Vb8Nq1Z", "read_file", {"path": "src/main.py"})],
        "tool_calls",
        Usage(input=311, output=40, total=351),
    ),
    ("vertex-anthropic", "plain_text"): (
        ["Hello from Vertex AI!"],
        [],
        "end_turn",
        Usage(input=12, output=8, total=20),
    ),
    ("vertex-anthropic", "tool_call"): (
        ["I'll check the weather in Lisbon."],
        [("toolu_vrtx_01Wx7Yz9Ab1Cd3Ef5Gh7Ij9K", "get_weather", {"city": "Lisbon", "unit": "c"})],
        "tool_use",
        Usage(input=402, output=71, total=473),
    ),
    ("bedrock-invoke-stream", "anthropic_text"): (
        ["The capital of France is Paris."],
        [],
        "end_turn",
        Usage(input=14, output=9, total=23),
    ),
    ("bedrock-invoke-stream", "anthropic_tool_call"): (
        ["I'll check the weather in Paris."],
        [("toolu_bdrk_01BM6ON5NXEAE6T37BOM5BBN", "get_weather", {"city": "Paris"})],
        "tool_use",
        Usage(input=398, output=67, total=465),
    ),
    ("mistral-chat", "tool_call_whole"): (
        [],
        [("Qx7Lm2Pw9", "get_weather", {"city": "Lyon"})],
        "tool_calls",
        Usage(input=92, output=21, total=113),
    ),
    ("vertex-gemini", "plain_text"): (
        ["Vertex AI runs Gemini in your Google Cloud project."],
        [],
        "STOP",
        Usage(input=9, output=41, total=50),
    ),
    ("vertex-gemini", "tool_call"): (
        [],
        # No functionCall.id on the wire: the reference's synthetic id, taken by alignment.
        [("get_weather_1", "get_weather", {"location": "Zurich", "unit": "C"})],
        "STOP",
        Usage(input=58, output=137, total=195),
    ),
}

# Where a library's content differs from the cassette on these basic cases, it is a
# finding (conformance_report/findings/), asserted here as what the library does, so a
# fix upstream shows as a failing test to update.
KNOWN: dict[tuple[str, str], frozenset[str]] = {
    # langchain-anthropic reads usage from message_delta only; these cassettes send the
    # input count in message_start (conformance_report/findings/langchain-anthropic-input-tokens.md).
    ("langchain", "anthropic-messages/plain_text"): frozenset({"usage"}),
    # ...and content_blocks drops the text that merging left as a bare string
    # (conformance_report/findings/langchain-content-blocks-drop-text.md).
    ("langchain", "anthropic-messages/tool_call"): frozenset({"usage", "text"}),
    # langchain-mistralai gives a streamed call's index-0 fragments fresh ids (index 0 read
    # as missing), so they do not merge: one call becomes three (langchain-ai/langchain#38677).
    ("langchain", "mistral-chat/tool_call_streamed"): frozenset({"calls"}),
    # ChatBedrock streams Claude's text as bare strings, which content_blocks drops
    # (conformance_report/findings/langchain-content-blocks-drop-text.md).
    ("langchain", "bedrock-invoke-stream/anthropic_tool_call"): frozenset({"text"}),
    # ChatCohere's stream has no usage_metadata; each call fragment is a call of its own
    # and the tool plan is text (conformance_report/findings/langchain-cohere-stream-gaps.md).
    ("langchain", "cohere-v2-chat/plain_text"): frozenset({"usage"}),
    ("langchain", "cohere-v2-chat/tool_call_single"): frozenset({"usage", "text", "calls"}),
}

_LOADED: dict[str, Adapter | str] = {}


def _adapter(name: str) -> Adapter:
    if name not in _LOADED:
        try:
            _LOADED[name] = load_adapter(adapter_spec(name))
        except AdapterLoadError as exc:
            _LOADED[name] = str(exc)
    found = _LOADED[name]
    if isinstance(found, str):
        pytest.skip(found)
    return found


def _run(adapter: Adapter, protocol: str, cassette: str, split: str) -> AdapterResult:
    path = bundled_cassettes() / protocol / f"{cassette}.yaml"
    if not (is_registered(protocol) and path.exists()):
        pytest.skip(f"{protocol} is not in this checkout (issue 15 lands it)")
    response = load_cassette(path).interactions[0].response
    body = response.body
    chunks = [body] if split == "whole" else [body[i : i + 1] for i in range(len(body))]
    return adapter.run(protocol, chunks, status=response.status, headers=response.headers)


PROTOCOLS: dict[str, tuple[str, ...]] = {
    "openai-sdk-create": ("openai-completions",),
    "openai-sdk-websocket": ("openai-responses-websocket",),
    "google-genai": ("google-generative-ai",),
    "cohere": ("cohere-v2-chat",),
    "google-genai-vertex": ("vertex-gemini",),
    # LiteLLM also speaks cohere-v2-chat, but fails every Cohere v2 stream (asserted below,
    # test_litellm_fails_every_cohere_v2_stream_on_its_first_sse_line).
    "litellm": ("anthropic-messages", "openai-completions", "google-generative-ai"),
    "pydantic-ai": (
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "google-generative-ai",
        "azure-openai-completions",
        "azure-openai-responses",
        "mistral-chat",
        "vertex-anthropic",
        "vertex-gemini",
        "cohere-v2-chat",
        "bedrock-invoke-stream",
    ),
    "langchain": (
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "google-generative-ai",
        "azure-openai-completions",
        "azure-openai-responses",
        "mistral-chat",
        "bedrock-invoke-stream",
        "cohere-v2-chat",
    ),
    "any-llm": ("anthropic-messages", "openai-completions", "google-generative-ai"),
    "aisuite": ("anthropic-messages", "openai-completions"),
    "llm": ("openai-completions",),
    "mistral-sdk": ("mistral-chat",),
}
# Issue 15, Vertex AI: ChatGoogleGenerativeAI(vertexai=True) and ChatAnthropicVertex.
PROTOCOLS["langchain"] += ("vertex-anthropic", "vertex-gemini")

PARAMS = [
    pytest.param(name, protocol, cassette, split, id=f"{name}-{protocol}-{cassette}-{split}")
    for name, protocols in PROTOCOLS.items()
    for (protocol, cassette) in CASES
    if protocol in protocols
    for split in SPLITS
]


def test_every_registered_adapter_is_tested() -> None:
    # The JS adapters (js-*, through the stdio protocol) are tested in test_js_adapters.py.
    assert set(PROTOCOLS) == {n for n in THIRD_PARTY if not n.startswith("js-")}


@pytest.mark.parametrize(("name", "protocol", "cassette", "split"), PARAMS)
def test_adapter_gives_the_cassettes_message(
    name: str, protocol: str, cassette: str, split: str
) -> None:
    adapter = _adapter(name)
    assert protocol in adapter.protocols
    texts, calls, raw_stop, usage = CASES[(protocol, cassette)]
    result = _run(adapter, protocol, cassette, split)
    assert result.crashed is None
    msg = result.message
    assert msg is not None, result.raised
    known = KNOWN.get((name, f"{protocol}/{cassette}"), frozenset())
    if "text" not in known:
        assert [b.content for b in msg.content if isinstance(b, TextBlock)] == texts
    got = [(c.id, c.name, c.arguments) for c in msg.content if isinstance(c, ToolCall)]
    if "calls" in known:
        assert got != calls and len(got) > len(calls)
    else:
        assert got == calls
    assert msg.provider_stop_reason == raw_stop
    assert msg.stop_reason == ("tool_use" if calls else "stop")
    if "usage" not in known:
        assert msg.usage == usage
    # A library version is what the report records; it must be a real one.
    assert adapter.version()[:1].isalnum()


def test_pydantic_ai_is_event_level_and_its_events_close_every_block() -> None:
    adapter = _adapter("pydantic-ai")
    assert adapter.level == "event"
    result = _run(adapter, "anthropic-messages", "tool_call", "1byte")
    assert result.events is not None
    kinds = [e.type for e in result.events]
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert kinds.count("text_start") == kinds.count("text_end") == 1
    assert kinds.count("toolcall_start") == kinds.count("toolcall_end") == 1


@pytest.mark.parametrize("split", ["whole", "1byte"])
def test_litellm_turns_a_server_tool_use_into_a_client_tool_call(split: str) -> None:
    """conformance_report/findings/litellm-server-tool-use-as-tool-call.md, asserted as
    what LiteLLM does (a fix upstream shows here as a failure to update)."""
    adapter = _adapter("litellm")
    result = _run(adapter, "anthropic-messages", "web_search_citations", split)
    msg = result.message
    assert msg is not None, result.raised
    calls = [(c.id, c.name, c.arguments) for c in msg.content if isinstance(c, ToolCall)]
    assert calls == [
        ("srvtoolu_01W3eB5sE7aR9cH1tO3oL5kS", "web_search", {"query": "Paris weather today"})
    ]
    assert msg.provider_stop_reason == "end_turn"
    # The reference keeps the server tool use out of the content.
    reference = _run(load_adapter("reference"), "anthropic-messages", "web_search_citations", split)
    assert reference.message is not None
    assert not [c for c in reference.message.content if isinstance(c, ToolCall)]


@pytest.mark.parametrize("split", SPLITS)
def test_litellm_fails_every_cohere_v2_stream_on_its_first_sse_line(split: str) -> None:
    """conformance_report/findings/litellm-cohere-v2-stream-unparsed.md, asserted as what
    LiteLLM does (a fix upstream shows here as a failure to update): its cohere_chat/ parser
    runs json.loads on the SSE line ``event: message-start`` and raises, keeping nothing."""
    adapter = _adapter("litellm")
    assert "cohere-v2-chat" in adapter.protocols
    result = _run(adapter, "cohere-v2-chat", "tool_call_single", split)
    assert result.crashed is None
    assert result.raised is not None and "Error parsing chunk" in result.raised
    assert "event: message-start" in result.raised
    assert result.message is not None and result.message.content == []


def test_litellm_declares_the_protocols_of_its_routes() -> None:
    """Issue 15: LiteLLM's real code on the new protocols, one route each."""
    adapter = _adapter("litellm")
    assert {
        "cohere-v2-chat",
        "azure-openai-completions",
        "azure-openai-responses",
        "mistral-chat",
        "bedrock-invoke-stream",
        "vertex-anthropic",
        "vertex-gemini",
    } <= adapter.protocols


@pytest.mark.parametrize(
    "path",
    sorted((bundled_cassettes() / "bedrock-invoke-stream").glob("*.yaml")),
    ids=lambda p: p.stem,
)
def test_the_bedrock_family_read_from_the_body_is_the_recorded_models(path: Any) -> None:
    """The model LiteLLM is asked for is chosen from the body (the adapter is not given the
    URL); on every bundled stream it is of the family of the model id the request was
    recorded with. Runs without litellm: the choice is the adapter's own code."""
    from urllib.parse import unquote

    from stream_harness.adapters.libraries.litellm import bedrock_family

    # The model ids' family marks (Bedrock's model catalogue), most specific first.
    marks = [
        ("anthropic.claude-v2", "claude-text"),
        ("anthropic.claude", "anthropic"),
        ("cohere.command-r", "cohere-r"),
        ("cohere.command", "cohere"),
        ("meta.llama", "llama"),
        ("mistral.", "mistral"),
        ("amazon.nova", "nova"),
        ("amazon.titan", "titan"),
    ]

    interaction = load_cassette(path).interactions[0]
    recorded = unquote(interaction.request.uri).split("/model/")[1].split("/")[0]
    body = interaction.response.body
    family = bedrock_family([body[i : i + 7] for i in range(0, len(body), 7)])
    if interaction.response.status != 200 or b"chunk" not in body:
        assert family == "anthropic"  # nothing to read: the default
    else:
        assert family == next(fam for mark, fam in marks if mark in recorded), recorded


def test_litellm_reads_a_cohere_http_error_through_the_replayed_transport() -> None:
    """The cohere_chat/ route takes its HTTP client from LiteLLM's client cache, not from
    ``client=``: the adapter puts the replaying one there. Were the request to go anywhere
    else, LiteLLM would report a connection error, not the provider's message."""
    result = _run(_adapter("litellm"), "cohere-v2-chat", "http_429_rate_limit", "whole")
    assert result.message is not None and result.raised is not None
    assert "You are past the per minute request limit" in (result.message.error_message or "")


def test_llm_drops_a_tool_name_that_arrives_late() -> None:
    """conformance_report/findings/llm-late-tool-name-lost.md, asserted as what llm does."""
    adapter = _adapter("llm")
    for split in ("whole", "1byte"):
        result = _run(adapter, "openai-completions", "late_tool_name", split)
        assert result.message is not None, result.raised
        calls = [c for c in result.message.content if isinstance(c, ToolCall)]
        assert [c.name for c in calls] == [""]  # the wire's name arrives in the second delta
        reference = _run(load_adapter("reference"), "openai-completions", "late_tool_name", split)
        assert reference.message is not None
        assert [c.name for c in reference.message.content if isinstance(c, ToolCall)] != [""]


# Where a library keeps what the wire said in a place of its own (the triage of issue 13):
# the adapter reads it there. Values quoted from the cassettes.
GEMINI_CALL_SIGNATURE = "67XhpZ6rRbjGMJgq1is7lUDTSbBhfn8sLu+FMhms75Me"


@pytest.mark.parametrize("name", ["langchain", "pydantic-ai"])
def test_a_gemini_function_calls_thought_signature_is_kept(name: str) -> None:
    result = _run(_adapter(name), "google-generative-ai", "tool_call", "whole")
    assert result.message is not None, result.raised
    (call,) = [c for c in result.message.content if isinstance(c, ToolCall)]
    assert (call.signature or "").startswith(GEMINI_CALL_SIGNATURE)


@pytest.mark.parametrize("name", ["langchain", "pydantic-ai"])
def test_a_blocked_gemini_prompt_reports_its_block_reason(name: str) -> None:
    result = _run(_adapter(name), "google-generative-ai", "prompt_blocked", "whole")
    assert result.message is not None, result.raised
    assert result.message.provider_stop_reason == "PROHIBITED_CONTENT"
    assert result.message.error_message == "prompt blocked: PROHIBITED_CONTENT"


@pytest.mark.parametrize("name", ["langchain", "pydantic-ai"])
def test_a_failed_responses_stream_reports_the_raw_status_failed(name: str) -> None:
    result = _run(_adapter(name), "openai-responses", "failed_rate_limit", "whole")
    assert result.message is not None
    assert result.message.provider_stop_reason == "failed"
    assert "Rate limit reached for gpt-4.1" in (result.message.error_message or "")


def test_pydantic_ai_marks_redacted_thinking() -> None:
    result = _run(_adapter("pydantic-ai"), "anthropic-messages", "redacted_thinking", "whole")
    assert result.message is not None
    thinking = [b for b in result.message.content if b.type == "thinking"]
    assert [getattr(b, "redacted", None) for b in thinking] == [True]


def test_langchain_keeps_a_responses_custom_tool_call() -> None:
    result = _run(_adapter("langchain"), "openai-responses", "custom_tool_call", "whole")
    assert result.message is not None
    calls = [(c.id, c.name, c.arguments) for c in result.message.content if isinstance(c, ToolCall)]
    assert calls == [
        ("call_06f1d302ce1ddb9e3812821c", "code_exec", {"input": 'print("héllo")\nprint(2 ** 10)'})
    ]


def test_litellm_drops_its_builders_fill_ins_when_the_stream_raised() -> None:
    adapter = _adapter("litellm")
    result = _run(adapter, "openai-completions", "error_in_band_after_text", "whole")
    assert result.raised is not None and result.message is not None
    assert result.message.provider_stop_reason is None  # not stream_chunk_builder's "stop"
    openrouter = _run(adapter, "openai-completions", "openrouter_finish_error", "whole")
    assert openrouter.message is not None
    assert openrouter.message.provider_stop_reason == "error"  # named in LiteLLM's raise


def test_any_llm_keeps_gemini_signatures_and_reasoning_where_it_puts_them() -> None:
    """any-llm carries Gemini's thoughtSignature in ``extra_content["google"]`` and its
    reasoning as ``delta.reasoning.content``: read there, they match the cassette."""
    adapter = _adapter("any-llm")
    result = _run(adapter, "google-generative-ai", "tool_call", "whole")
    assert result.message is not None
    (call,) = [c for c in result.message.content if isinstance(c, ToolCall)]
    assert (call.signature or "").startswith(GEMINI_CALL_SIGNATURE)
    thinking = _run(adapter, "google-generative-ai", "thinking_signature", "whole")
    assert thinking.message is not None
    assert [b.type for b in thinking.message.content] == ["thinking", "text"]
    assert thinking.message.content[0].content.startswith("**Comparing the two numbers**")


def test_langchain_reads_a_responses_refusal_block() -> None:
    result = _run(_adapter("langchain"), "openai-responses", "refusal", "whole")
    assert result.message is not None
    assert result.message.stop_reason == "error"
    assert result.message.error_message == "I'm sorry, but I can't help with that."
    assert [b.content for b in result.message.content if isinstance(b, TextBlock)] == [
        "I'm sorry, but I can't help with that."
    ]


def test_pydantic_ai_summary_parts_are_one_thinking_block_in_events_and_message() -> None:
    """pydantic-ai keeps each Responses summary part as a ThinkingPart; the message joins
    them (thinking_parts) and the events must say the same: one thinking block whose
    deltas add up to its end (C6)."""
    from stream_harness.contract.rules import check_contract

    result = _run(
        _adapter("pydantic-ai"), "openai-responses", "reasoning_summary_encrypted", "whole"
    )
    assert result.message is not None and result.events is not None
    assert [b.type for b in result.message.content] == ["thinking", "text"]
    assert [e.type for e in result.events].count("thinking_start") == 1
    assert check_contract(result.events) == []
