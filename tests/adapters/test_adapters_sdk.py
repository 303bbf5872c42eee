"""The built-in SDK adapters: anthropic-sdk (and its beta variant) and openai-sdk.

Each adapter runs the real SDK on bundled cassettes, whole and one byte per chunk; the
expected values are read from the cassettes by hand (quoted in comments), not produced by
the adapters. The missing-SDK path is simulated by hiding the packages from the import
system. The last tests run the conformance engine with the expectation files.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.protocol import Adapter, AdapterLoadError, AdapterResult
from stream_harness.adapters.sdk_support import (
    RAW_ARGUMENTS_KEY,
    SDKMissingError,
    error_message,
    exception_summary,
    serve,
    tool_arguments,
)
from stream_harness.conformance import bundled_cassettes, run_conformance
from stream_harness.conformance.expectations import (
    adapter_from_file_name,
    expectation_file_name,
    expectations_dir,
    expectations_for,
)
from stream_harness.contract.events import TextBlock, ThinkingBlock, ToolCall, Usage
from stream_harness.recordings.cassette import load_cassette

ROOT = Path(__file__).resolve().parents[2]
SPLITS = ["whole", "1byte"]


def _chunks(body: bytes, split: str) -> list[bytes]:
    return [body] if split == "whole" else [body[i : i + 1] for i in range(len(body))]


def _run(adapter: Adapter, protocol: str, name: str, split: str) -> AdapterResult:
    inter = load_cassette(bundled_cassettes() / protocol / f"{name}.yaml").interactions[0]
    response = inter.response
    return adapter.run(
        protocol, _chunks(response.body, split), status=response.status, headers=response.headers
    )


@pytest.fixture(scope="module")
def anthropic_adapter() -> Adapter:
    pytest.importorskip("anthropic")
    pytest.importorskip("httpx2")
    from stream_harness.adapters.sdks.anthropic_sdk import AnthropicSDKAdapter

    return AnthropicSDKAdapter()


@pytest.fixture(scope="module")
def openai_adapter() -> Adapter:
    pytest.importorskip("openai")
    pytest.importorskip("httpx2")
    from stream_harness.adapters.sdks.openai_sdk import OpenAISDKAdapter

    return OpenAISDKAdapter()


# -- the convention helpers ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("   ", {}),
        (None, {}),
        ('{"city": "Paris"}', {"city": "Paris"}),
        # Two objects run together (ollama index 0): kept as the string the user got.
        ('{"a":1}{"b":2}', {RAW_ARGUMENTS_KEY: '{"a":1}{"b":2}'}),
        ("[1, 2]", {RAW_ARGUMENTS_KEY: "[1, 2]"}),
        ('{"city": "Pa', {RAW_ARGUMENTS_KEY: '{"city": "Pa'}),
    ],
)
def test_tool_arguments(text: str | None, expected: dict[str, object]) -> None:
    assert tool_arguments(text) == expected


def test_exception_summary_is_one_line() -> None:
    assert exception_summary(ValueError("a\n  b")) == "ValueError: a b"
    assert exception_summary(AssertionError()) == "AssertionError"


def test_error_message_prefers_the_providers_message() -> None:
    class FakeError(Exception):
        def __init__(self, body: object, message: str) -> None:
            super().__init__(message)
            self.body = body
            self.message = message

    nested = FakeError({"error": {"message": "Overloaded"}}, "Error code: 529 - {...}")
    flat = FakeError({"message": "Rate limit reached", "code": "rate_limit"}, "Error code: 429")
    no_body = FakeError(None, "Connection error.")
    assert error_message(nested) == "Overloaded"
    assert error_message(flat) == "Rate limit reached"
    assert error_message(no_body) == "Connection error."
    assert error_message(RuntimeError("Didn't receive a `response.completed` event.")) == (
        "Didn't receive a `response.completed` event."
    )
    assert error_message(AssertionError()) == "AssertionError"


def test_serve_replays_the_chunks_exactly() -> None:
    httpx2 = pytest.importorskip("httpx2")
    transport = serve(httpx2, [b'data: {"a"', b":1}\n\n"], status=200, headers={"X-Id": ["1"]})
    response = transport.handle_request(httpx2.Request("POST", "http://harness.invalid/v1/x"))
    assert list(response.stream) == [b'data: {"a"', b":1}\n\n"]
    # A stream recorded without a content type gets text/event-stream; others are kept.
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["x-id"] == "1"


# -- the missing-SDK path -----------------------------------------------------------------


def test_a_missing_sdk_is_a_one_line_load_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # `import anthropic` now fails
    with pytest.raises(AdapterLoadError) as raised:
        load_adapter("anthropic-sdk")
    assert str(raised.value) == (
        "adapter 'anthropic-sdk' needs the anthropic package: pip install 'stream-harness[sdk]'"
    )
    assert isinstance(raised.value, ImportError)  # what code constructing it directly expects

    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(SDKMissingError, match=r"^adapter 'openai-sdk' needs the openai package"):
        load_adapter("openai-sdk")


def test_the_adapter_modules_import_without_the_sdks() -> None:
    # A fresh interpreter, so that no test's earlier import of the SDKs can hide a
    # top-level import in the adapter modules.
    script = textwrap.dedent(
        """
        import sys
        for name in ("anthropic", "openai", "httpx2"):
            sys.modules[name] = None
        import stream_harness.adapters.sdks.anthropic_sdk, stream_harness.adapters.sdks.openai_sdk
        from stream_harness.adapters.protocol import AdapterLoadError
        from stream_harness.adapters.loading import available_adapters, load_adapter
        for name in ("anthropic-sdk", "openai-sdk"):
            try:
                load_adapter(name)
            except AdapterLoadError as exc:
                print(exc)
        print(" ".join(available_adapters()))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[:2] == [
        "adapter 'anthropic-sdk' needs the anthropic package: pip install 'stream-harness[sdk]'",
        "adapter 'openai-sdk' needs the openai package: pip install 'stream-harness[sdk]'",
    ]
    available = out[2].split()
    assert "reference" in available
    assert "anthropic-sdk" not in available and "openai-sdk" not in available


# -- a tool call, whole and one byte per chunk, on each SDK and API ------------------------

# (adapter fixture, protocol, cassette) -> (content, (stop, raw stop), usage, model, id);
# a model of None is not compared.
TOOL_CALLS: dict[
    tuple[str, str, str], tuple[list[Any], tuple[str, str], Usage, str | None, str]
] = {
    ("anthropic_adapter", "anthropic-messages", "tool_call"): (
        [
            TextBlock(content="I'll look up the weather in Paris."),
            ToolCall(
                id="toolu_01A9xQ3mW7kP2vN8cR5tY4bZ",
                name="get_weather",
                arguments={"city": "Paris", "unit": "c"},
            ),
        ],
        ("tool_use", "tool_use"),
        # message_start: input 402, cache 0/0; message_delta: output 58.
        Usage(input=402, output=58, total=460),
        "claude-sonnet-4-5-20250929",
        "msg_01Tc5Gh7Jk9Lm2Np4Qr6St8U",
    ),
    # One byte per chunk also splits the UTF-8 of "São".
    ("openai_adapter", "openai-completions", "tool_call_single"): (
        [
            ToolCall(
                id="call_Wq8rT2mXbN4kP7sZ1cV3dF6g",
                name="get_weather",
                arguments={"city": "São Paulo"},
            )
        ],
        ("tool_use", "tool_calls"),
        Usage(input=61, output=17, total=78),
        "gpt-4o-mini-2024-07-18",
        "chatcmpl-Fq2Lx0pToolSingle1",
    ),
    ("openai_adapter", "openai-responses", "function_call"): (
        [
            ToolCall(
                id="call_6c70145d66f12bd25fb9c204",
                name="get_weather",
                arguments={"city": "Paris"},
                signature='{"v":1,"id":"fc_9e9e9032797a5b9159eb9c250b57e7324abb99a7402b12463f"}',
            )
        ],
        # status completed with a function call: the table's tool-call override.
        ("tool_use", "completed"),
        Usage(input=61, output=15, total=76),
        None,
        "resp_1c3db366c42cd741521c037d49da45982328fa270677a63c",
    ),
}


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize(
    ("fixture", "protocol", "cassette"), list(TOOL_CALLS), ids=["/".join(k) for k in TOOL_CALLS]
)
def test_a_tool_call_is_the_cassettes_message(
    fixture: str, protocol: str, cassette: str, split: str, request: pytest.FixtureRequest
) -> None:
    content, stop, usage, model, response_id = TOOL_CALLS[(fixture, protocol, cassette)]
    result = _run(request.getfixturevalue(fixture), protocol, cassette, split)
    msg = result.message
    assert result.raised is None and result.terminal == "done"
    assert msg is not None
    assert msg.content == content
    assert (msg.stop_reason, msg.provider_stop_reason) == stop
    assert msg.usage == usage
    assert msg.response_id == response_id
    if model is not None:
        assert msg.model == model


# -- anthropic-sdk ------------------------------------------------------------------------


@pytest.mark.parametrize("split", SPLITS)
def test_anthropic_redacted_thinking(anthropic_adapter: Adapter, split: str) -> None:
    result = _run(anthropic_adapter, "anthropic-messages", "redacted_thinking", split)
    msg = result.message
    assert msg is not None
    thinking, text = msg.content
    assert isinstance(thinking, ThinkingBlock) and thinking.redacted and thinking.content == ""
    assert thinking.signature is not None and thinking.signature.startswith(
        "N9/iAb0ZRXLXWU01adu2jT48"
    )
    assert text == TextBlock(content="I can't share my internal reasoning, but the answer is yes.")
    assert (msg.stop_reason, msg.provider_stop_reason, msg.usage.output) == ("stop", "end_turn", 87)


@pytest.mark.parametrize("split", SPLITS)
def test_anthropic_refusal_takes_the_explanation(anthropic_adapter: Adapter, split: str) -> None:
    result = _run(anthropic_adapter, "anthropic-messages", "refusal", split)
    msg = result.message
    assert msg is not None and result.raised is None
    assert msg.content == [TextBlock(content="I can't help with")]
    assert (msg.stop_reason, msg.provider_stop_reason) == ("error", "refusal")
    # stop_details.explanation of the message_delta.
    assert msg.error_message == "This request could enable the development of malware."


@pytest.mark.parametrize("split", SPLITS)
def test_anthropic_midstream_error_keeps_the_snapshot(
    anthropic_adapter: Adapter, split: str
) -> None:
    result = _run(anthropic_adapter, "anthropic-messages", "overloaded_midstream", split)
    msg = result.message
    assert result.raised is not None and result.raised.startswith("APIStatusError:")
    assert result.terminal == "raised"
    assert msg is not None
    assert msg.content == [
        TextBlock(content="The three largest moons of Jupiter are Ganymede, Callisto")
    ]
    assert (msg.stop_reason, msg.error_message) == ("error", "Overloaded")
    assert (msg.usage.input, msg.usage.output) == (120, 1)  # message_start's counts


def test_anthropic_http_error(anthropic_adapter: Adapter) -> None:
    result = _run(anthropic_adapter, "anthropic-messages", "http_429_rate_limit", "whole")
    assert result.raised is not None and result.raised.startswith("RateLimitError: Error code: 429")
    assert result.message is not None and result.message.content == []
    assert result.message.error_message == (
        "This request would exceed the rate limit of 50 requests per minute. Please reduce the "
        "prompt length or the maximum tokens requested, or try again later."
    )


def test_anthropic_truncated_body_ends_done(anthropic_adapter: Adapter) -> None:
    # The finding the expectation file records: cut after the text delta, before
    # message_delta and message_stop, the SDK returns the partial message as final.
    body = (
        load_cassette(bundled_cassettes() / "anthropic-messages" / "plain_text.yaml")
        .interactions[0]
        .response.body
    )
    cut = body.index(b"event: content_block_stop")
    result = anthropic_adapter.run("anthropic-messages", [body[:cut]])
    assert result.raised is None and result.terminal == "done"
    assert result.message is not None and result.message.provider_stop_reason is None
    assert result.message.content == [TextBlock(content="Hello! How can I help you today?")]


def test_anthropic_beta_variant_runs_the_beta_stream() -> None:
    pytest.importorskip("anthropic")
    from stream_harness.adapters.sdks.anthropic_sdk import AnthropicBetaSDKAdapter

    adapter = AnthropicBetaSDKAdapter()
    result = _run(adapter, "anthropic-messages", "tool_call", "whole")
    assert adapter.name == "anthropic-sdk-beta"
    assert result.raw["message"]["content"][1]["input"] == {"city": "Paris", "unit": "c"}  # type: ignore[index]


# -- openai-sdk: chat completions ---------------------------------------------------------


@pytest.mark.parametrize("split", SPLITS)
def test_openai_chat_reasoning_and_cache(openai_adapter: Adapter, split: str) -> None:
    result = _run(openai_adapter, "openai-completions", "deepseek_reasoning_cache", split)
    msg = result.message
    assert msg is not None
    # reasoning_content is an extra field of the SDK's message, read as thinking.
    assert msg.content == [
        ThinkingBlock(content="The user asks 17 × 3. 17 × 3 = 51."),
        TextBlock(content="17 × 3 = 51."),
    ]
    # prompt 64 of which cached 48; completion 40; total 104.
    assert msg.usage == Usage(input=16, output=40, cache_read=48, total=104)


@pytest.mark.parametrize("split", SPLITS)
def test_openai_chat_length_raise_is_recorded_and_mapped(
    openai_adapter: Adapter, split: str
) -> None:
    result = _run(openai_adapter, "openai-completions", "length_stop", split)
    msg = result.message
    assert result.raised is not None and result.raised.startswith("LengthFinishReasonError")
    assert msg is not None
    assert msg.content == [
        TextBlock(content="Once upon a time, in a valley between two rivers, there lived")
    ]
    assert (msg.stop_reason, msg.provider_stop_reason, msg.error_message) == (
        "length",
        "length",
        None,
    )
    assert msg.usage == Usage(input=14, output=16, total=30)


def test_openai_chat_refusal_is_an_error(openai_adapter: Adapter) -> None:
    result = _run(openai_adapter, "openai-completions", "refusal", "whole")
    msg = result.message
    assert msg is not None
    assert msg.content == [TextBlock(content="I'm sorry, but I can't help with that.")]
    assert (msg.stop_reason, msg.provider_stop_reason) == ("error", "stop")
    assert msg.error_message == "I'm sorry, but I can't help with that."


def test_openai_chat_merged_calls_keep_the_raw_arguments(openai_adapter: Adapter) -> None:
    # Ollama: two calls at index 0; the SDK merges them by index (a known failure).
    result = _run(openai_adapter, "openai-completions", "ollama_parallel_index0", "whole")
    assert result.message is not None
    [call] = result.message.content
    assert isinstance(call, ToolCall)
    assert (call.id, call.name) == ("call_7x1qz3rtcall_9b4kd2wn", "get_weatherget_time")
    assert call.arguments == {RAW_ARGUMENTS_KEY: '{"city":"Lyon"}{"tz":"Europe/Paris"}'}


def test_openai_chat_http_error(openai_adapter: Adapter) -> None:
    result = _run(openai_adapter, "openai-completions", "rate_limit_429", "whole")
    assert result.raised is not None and result.raised.startswith("RateLimitError")
    assert result.message is not None
    assert result.message.stop_reason == "error"
    assert result.message.error_message is not None
    assert result.message.error_message.startswith(
        "Rate limit reached for gpt-4o on tokens per min"
    )


# -- openai-sdk: responses ----------------------------------------------------------------


@pytest.mark.parametrize("split", SPLITS)
def test_openai_responses_reasoning(openai_adapter: Adapter, split: str) -> None:
    result = _run(openai_adapter, "openai-responses", "reasoning_summary_encrypted", split)
    msg = result.message
    assert msg is not None
    thinking, text = msg.content
    assert isinstance(thinking, ThinkingBlock) and isinstance(text, TextBlock)
    # Two summary parts joined by a blank line.
    assert thinking.content == (
        "**Comparing decimals**\n\n9.9 is 9.90, and 9.90 > 9.11.\n\n**Answering**\n\nSo 9.9 is larger."
    )
    # The signature is the output_item.done item, byte for byte as OpenAI sent it.
    wire = (
        '{"id":"rs_e6e6d92ef667fb8ca6f22515cdc1bac6b298e29910b5dbf118","type":"reasoning","summary":'
        '[{"type":"summary_text","text":"**Comparing decimals**\\n\\n9.9 is 9.90, and 9.90 > 9.11."},'
        '{"type":"summary_text","text":"**Answering**\\n\\nSo 9.9 is larger."}],"encrypted_content":'
        '"gAAAAABe1zBfCTQOnTgl_43uCur9WB4jsJiiufT4uTSdVNvyFIbUJBKVg9D64qUbujQc0h2_CLkRx2tMepJ_BkwdPMSint'
        '3jM4pUocnNkH3nKkd7iAOvHYHIn0mofZ2A9eCTANQAlvAssjNNNhDoAHySrfJSAmcfHqfZyrXbeJ81mH7ujk="}'
    )
    assert thinking.signature == wire
    assert text.content == "9.9 is larger than 9.11."
    assert msg.usage == Usage(input=21, output=215, total=236)


@pytest.mark.parametrize("split", SPLITS)
def test_openai_responses_incomplete_maps_the_terminal_event(
    openai_adapter: Adapter, split: str
) -> None:
    result = _run(openai_adapter, "openai-responses", "incomplete_max_output_tokens", split)
    msg = result.message
    # get_final_response() raises without response.completed; the response.incomplete
    # event the stream yielded is the final object.
    assert result.raised == "RuntimeError: Didn't receive a `response.completed` event."
    assert msg is not None
    assert [b.content for b in msg.content if isinstance(b, TextBlock)] == [
        "Streaming lets a client show tokens as they are generated, so"
    ]
    assert (msg.stop_reason, msg.provider_stop_reason) == ("length", "incomplete/max_output_tokens")
    assert msg.usage == Usage(input=15, output=16, total=31)


def test_openai_responses_error_event_ends_in_error(openai_adapter: Adapter) -> None:
    result = _run(openai_adapter, "openai-responses", "error_event_top_level", "whole")
    msg = result.message
    assert msg is not None and msg.stop_reason == "error"
    assert msg.error_message is not None
    assert msg.error_message.startswith("The server had an error processing your request.")
    # The response.failed after the error event is after the terminal one (C2).
    assert msg.provider_stop_reason is None


# -- openai-sdk / openai-sdk-create on Azure OpenAI (the AzureOpenAI client) ---------------


def _azure_requests(adapter: Adapter, protocol: str, name: str) -> list[str]:
    """The URLs the AzureOpenAI client requested while replaying one cassette."""
    import stream_harness.adapters.sdk_support as adapters

    seen: list[str] = []
    real = adapters.serve

    def spy(httpx_module: object, chunks: object, **kw: object) -> object:
        transport = real(httpx_module, chunks, **kw)  # type: ignore[arg-type]
        handle = transport.handle_request

        def record(request: object) -> object:
            seen.append(str(request.url))  # type: ignore[attr-defined]
            return handle(request)

        transport.handle_request = record
        return transport

    module = sys.modules[type(adapter).__module__]
    module.serve = spy  # type: ignore[attr-defined]
    try:
        _run(adapter, protocol, name, "whole")
    finally:
        module.serve = real  # type: ignore[attr-defined]
    return seen


def test_azure_client_builds_azure_urls(openai_adapter: Adapter) -> None:
    chat = _azure_requests(openai_adapter, "azure-openai-completions", "text_default_filter")
    responses = _azure_requests(openai_adapter, "azure-openai-responses", "plain_text")
    assert chat == [
        "https://harness.openai.azure.com/openai/deployments/gpt-harness/chat/completions"
        "?api-version=2024-10-21"
    ]
    assert responses == ["https://harness.openai.azure.com/openai/responses?api-version=2024-10-21"]


@pytest.mark.parametrize("split", SPLITS)
def test_azure_async_annotations_after_finish(openai_adapter: Adapter, split: str) -> None:
    # Annotation chunks (object "", no delta) mid-stream and after the finish chunk: the
    # text is "Color is a property of light that the eye perceives.", finish_reason stop.
    result = _run(openai_adapter, "azure-openai-completions", "async_filter_passes", split)
    msg = result.message
    assert result.raised is None and msg is not None
    assert msg.content == [
        TextBlock(content="Color is a property of light that the eye perceives.")
    ]
    assert (msg.stop_reason, msg.provider_stop_reason) == ("stop", "stop")
    assert (msg.model, msg.response_id) == ("gpt-35-turbo", "chatcmpl-Cz7AzureAsync0001")


def test_azure_create_keeps_the_async_filter_stop() -> None:
    pytest.importorskip("openai")
    pytest.importorskip("httpx2")
    from stream_harness.adapters.sdks.openai_create import OpenAICreateAdapter

    # The raw iterator yields the annotation chunk with finish_reason "content_filter"
    # (the stream helper drops it: findings/openai-python-azure-async-filter-stop.md).
    result = _run(
        OpenAICreateAdapter(), "azure-openai-completions", "async_filter_blocked", "whole"
    )
    msg = result.message
    assert msg is not None
    assert msg.content == [TextBlock(content="Hey Jude, don't make it bad")]
    assert (msg.stop_reason, msg.provider_stop_reason) == ("error", "content_filter")
    assert (
        msg.error_message
        == "Azure content filter stopped the completion (finish_reason content_filter)"
    )


def test_azure_legacy_function_call(openai_adapter: Adapter) -> None:
    # delta.function_call {"name": "get_weather"} then arguments '{"city":' ' "Oslo"}'.
    msg = _run(openai_adapter, "azure-openai-completions", "legacy_function_call", "whole").message
    assert msg is not None
    assert msg.content == [
        ToolCall(id="toolcall_0", name="get_weather", arguments={"city": "Oslo"})
    ]
    assert (msg.stop_reason, msg.provider_stop_reason) == ("tool_use", "function_call")


# -- the engine with the expectation files ------------------------------------------------

ENGINE_CHECKS = ["expected", "stop-reason", "error-surfacing", "truncation"]


@pytest.mark.parametrize(
    ("spec", "known_count", "sample"),
    [
        ("anthropic-sdk", 12, ("truncation", "anthropic-messages/plain_text.yaml#0")),
        (
            "stream_harness.adapters.sdks.anthropic_sdk:AnthropicBetaSDKAdapter",
            12,
            ("truncation", "anthropic-messages/tool_call.yaml#0"),
        ),
        ("openai-sdk", 59, ("expected", "openai-completions/ollama_parallel_index0.yaml#0")),
    ],
)
def test_conformance_passes_with_the_expectation_files(
    spec: str, known_count: int, sample: tuple[str, str]
) -> None:
    pytest.importorskip("openai" if spec == "openai-sdk" else "anthropic")
    run = run_conformance(load_adapter(spec), checks=ENGINE_CHECKS, examples=1)
    outcomes = {(r.check, r.case): r.outcome for r in run.results}
    # Every expectation entry matches a failure that still happens: none is "fixed".
    assert "fixed" not in outcomes.values()
    known = {key for key, outcome in outcomes.items() if outcome == "known_failure"}
    assert sample in known
    assert len(known) == known_count


@pytest.mark.parametrize("path", sorted(expectations_dir().glob("*.yaml")), ids=lambda p: p.stem)
def test_expectation_files_are_well_formed(path: Path) -> None:
    adapter = adapter_from_file_name(path.name)
    # The file is found from the adapter name it declares (a proxy row's "->" is "--to--").
    assert expectation_file_name(adapter) == path.name
    exp = expectations_for(adapter)
    assert exp.known, f"{path.name} lists no known failure"
    assert yaml.safe_load(path.read_text(encoding="utf-8"))["adapter"] == adapter
    root = Path(__file__).resolve().parents[2]
    for entry in exp.known:
        # The upstream report, or our write-up of the bug when none exists upstream.
        if entry.issue.startswith("conformance_report/findings/"):
            assert (root / entry.issue).is_file(), entry
        else:
            # An upstream thread, or a documentation page for a documented design choice
            # (tests/conformance/test_expectation_links.py says which hosts each adapter may cite).
            assert entry.issue.startswith("https://"), entry
        assert entry.reason, entry
