"""The openai SDK's WebSocket client (``responses.connect()``) on recorded turns, and the
openai-sdk row's background-stream resume, against a loopback server (no network)."""

from __future__ import annotations

import pytest

from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.protocol import Adapter, AdapterLoadError, AdapterResult
from stream_harness.adapters.registry import adapter_spec
from stream_harness.conformance import bundled_cassettes, load_cases
from stream_harness.conformance.checks import CHECKS_BY_ID
from stream_harness.conformance.checks.engine import CheckContext
from stream_harness.contract.events import TextBlock, ToolCall
from stream_harness.recordings.cassette import load_cassette

WEBSOCKET = "openai-responses-websocket"


def _adapter(name: str) -> Adapter:
    try:
        return load_adapter(adapter_spec(name))
    except AdapterLoadError as exc:
        pytest.skip(str(exc))


def _turn(cassette: str, index: int = 0) -> AdapterResult:
    response = (
        load_cassette(bundled_cassettes() / WEBSOCKET / f"{cassette}.yaml")
        .interactions[index]
        .response
    )
    return _adapter("openai-sdk-websocket").run(
        WEBSOCKET, [response.body], status=response.status, headers=response.headers
    )


@pytest.mark.parametrize(
    ("cassette", "text"),
    [("text_single_turn", "Bonjour ! Ça va ?"), ("continuation_frames", "Grüß Gott — servus!")],
)
def test_a_turn_read_through_responses_connect(cassette: str, text: str) -> None:
    result = _turn(cassette)
    assert result.message is not None, result.raised
    assert [b.content for b in result.message.content if isinstance(b, TextBlock)] == [text]
    assert (result.message.stop_reason, result.message.provider_stop_reason) == (
        "stop",
        "completed",
    )


def test_a_tool_call_turn() -> None:
    result = _turn("tool_call_single_turn")
    assert result.message is not None, result.raised
    calls = [(c.name, c.arguments) for c in result.message.content if isinstance(c, ToolCall)]
    assert calls == [("get_weather", {"city": "Paris"})]
    assert result.message.stop_reason == "tool_use"


def test_a_connection_level_error_event_is_the_error() -> None:
    result = _turn("previous_response_not_found")
    assert result.message is not None and result.message.stop_reason == "error"
    assert "not found" in (result.message.error_message or "")


def test_a_normal_close_mid_turn_ends_quietly() -> None:
    """conformance_report/findings/openai-python-websocket-normal-close-mid-turn.md, asserted
    as what the SDK does (a fix upstream shows here as a failure to update)."""
    result = _turn("close_normal_mid_turn")
    assert result.message is None and result.raised is None
    assert result.raw["events"] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
    ]


def test_an_abnormal_close_raises() -> None:
    result = _turn("close_abnormal_mid_turn")
    assert result.raised is not None and "ConnectionClosedError" in result.raised
    assert result.message is not None and result.message.stop_reason == "error"


def test_the_openai_sdk_row_resumes_a_background_stream() -> None:
    adapter = _adapter("openai-sdk")
    assert getattr(adapter, "resumes", False)
    cases, _ = load_cases([bundled_cassettes() / "openai-responses" / "function_call.yaml"])
    assert CHECKS_BY_ID["resumption"].run(CheckContext(cases[0], adapter, examples=5)) == []
