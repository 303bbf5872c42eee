"""LangChain's ChatBedrock (InvokeModel) and ChatCohere (v2) as the langchain adapter drives them.

The libraries are not in the test extra: the tests that run them skip cleanly without
langchain-aws / langchain-cohere (the matrix's langchain environment has them). The
adapter's own readings of what they hand over (the made-up call ids, the reasoning summary
parts) are pure functions, tested everywhere.
"""

from __future__ import annotations

import pytest

from stream_harness.adapters.libraries.langchain import LangChainAdapter, _made_up, _summary_text
from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.protocol import AdapterLoadError, AdapterResult
from stream_harness.adapters.registry import adapter_spec
from stream_harness.conformance import bundled_cassettes
from stream_harness.contract.events import TextBlock, ThinkingBlock, ToolCall
from stream_harness.recordings.cassette import load_cassette


def test_a_uuid4_is_a_made_up_id_and_a_cohere_call_id_is_not() -> None:
    assert _made_up("d092d2c4-d667-4077-84c9-efff02d6892b")
    assert _made_up("d092d2c4d667407784c9efff02d6892b")  # uuid4().hex
    assert not _made_up("get_weather_usorn2wl4akn")
    assert not _made_up("")


def test_chatcoheres_reasoning_summary_parts_are_its_text() -> None:
    block = {
        "type": "reasoning",
        "summary": [{"text": "Alice has ", "index": 0}, {"text": "2 sisters."}],
    }
    assert _summary_text(block) == "Alice has 2 sisters."
    assert _summary_text({"type": "reasoning"}) == ""


def _langchain(module: str) -> LangChainAdapter:
    pytest.importorskip(module)
    try:
        adapter = load_adapter(adapter_spec("langchain"))
    except AdapterLoadError as exc:
        pytest.skip(str(exc))
    assert isinstance(adapter, LangChainAdapter)
    return adapter


def _run(adapter: LangChainAdapter, protocol: str, cassette: str, step: int = 0) -> AdapterResult:
    response = (
        load_cassette(bundled_cassettes() / protocol / f"{cassette}.yaml").interactions[0].response
    )
    body = response.body
    chunks = [body] if not step else [body[i : i + step] for i in range(0, len(body), step)]
    return adapter.run(protocol, chunks, status=response.status, headers=response.headers)


@pytest.mark.parametrize(
    ("cassette", "text", "stop"),
    [
        ("titan_text", '\nA hello world program prints the text "Hello, World!".', "FINISH"),
        ("llama_text", None, "stop"),
        ("anthropic_text", "The capital of France is Paris.", "end_turn"),
    ],
)
def test_chatbedrock_reads_each_claimed_family_from_its_model_id(
    cassette: str, text: str | None, stop: str
) -> None:
    """The model id given is the body's family's, so ChatBedrock parses the body as that
    family: the text comes out (an id of another family gives nothing or raises) and the
    raw stop value is the family's own field."""
    result = _run(_langchain("langchain_aws"), "bedrock-invoke-stream", cassette, step=7)
    assert result.raised is None and result.message is not None
    texts = [b.content for b in result.message.content if isinstance(b, TextBlock)]
    assert len(texts) == 1 and texts[0]
    if text is not None:
        assert texts[0] == text
    assert result.message.provider_stop_reason == stop
    # ChatBedrock's model_name is the id the adapter gave it, not reported as the wire's.
    assert result.message.model is None


def test_chatbedrock_is_not_claimed_for_nova_and_answers_offline() -> None:
    """For amazon.nova-* ChatBedrock switches to ConverseStream; the client answers every
    operation with the recorded bytes (nothing leaves the process), and Converse's reading
    of an InvokeModel body fails: the `not a failure in use` rows."""
    result = _run(_langchain("langchain_aws"), "bedrock-invoke-stream", "nova_text")
    assert result.raised is not None and "messageStop" in result.raised


def test_chatbedrock_raises_the_services_error() -> None:
    result = _run(_langchain("langchain_aws"), "bedrock-invoke-stream", "http_429_throttling")
    assert result.raised is not None and "ThrottlingException" in result.raised
    assert result.message is not None and result.message.stop_reason == "error"


def test_chatcohere_streams_the_v2_api_and_its_reasoning_is_read() -> None:
    result = _run(_langchain("langchain_cohere"), "cohere-v2-chat", "thinking", step=5)
    assert result.message is not None, result.raised
    thinking = [b.content for b in result.message.content if isinstance(b, ThinkingBlock)]
    assert thinking == ["Alice has 2 sisters; her brother has Alice and both sisters."]
    assert result.message.provider_stop_reason == "COMPLETE"


def test_chatcoheres_made_up_call_ids_are_dropped_so_runs_agree() -> None:
    """Each call fragment gets a fresh uuid4 from langchain-cohere; dropped, two runs (and
    two splits) give the same message, and the one call the wire named keeps its id."""
    adapter = _langchain("langchain_cohere")
    first = _run(adapter, "cohere-v2-chat", "tool_call_single")
    second = _run(adapter, "cohere-v2-chat", "tool_call_single", step=3)
    assert first.message is not None and second.message is not None
    assert first.message == second.message
    ids = [b.id for b in first.message.content if isinstance(b, ToolCall)]
    assert "get_weather_usorn2wl4akn" in ids
    assert not any(_made_up(i) for i in ids)
