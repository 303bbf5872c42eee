"""Azure OpenAI specifics that the bundled cassettes do not pin on their own: which URLs are
Azure's, the Responses ``content_filters`` verdict, and that repeated verdicts are kept once.
The registry-wide suites (goldens, robustness, conformance) cover the rest."""

from __future__ import annotations

import json

import pytest

from stream_harness.contract.events import DoneEvent, ErrorEvent, Event
from stream_harness.providers.reference import detect_protocol, normalize
from stream_harness.recordings.cassette import Interaction, Request, Response


def _interaction(uri: str, body: bytes = b"") -> Interaction:
    return Interaction(
        0,
        Request(method="POST", uri=uri, headers={}, body=b"{}"),
        Response(status=200, reason="OK", headers={}, body=body),
    )


@pytest.mark.parametrize(
    ("uri", "protocol"),
    [
        (
            "https://r.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
            "azure-openai-completions",
        ),
        (
            "https://r.cognitiveservices.azure.com/openai/v1/chat/completions",
            "azure-openai-completions",
        ),
        ("https://r.services.ai.azure.com/openai/v1/chat/completions", "azure-openai-completions"),
        (
            "https://gateway.example.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
            "azure-openai-completions",
        ),
        (
            "https://r.openai.azure.com/openai/responses?api-version=2025-04-01-preview",
            "azure-openai-responses",
        ),
        ("https://r.openai.azure.com/openai/v1/responses", "azure-openai-responses"),
        # Not Azure: the generic protocols keep them.
        ("https://api.openai.com/v1/chat/completions", "openai-completions"),
        ("https://example.com/openai/v1/chat/completions", "openai-completions"),
        ("https://api.openai.com/v1/responses", "openai-responses"),
        ("https://example.com/openai/v1/responses", "openai-responses"),
    ],
)
def test_azure_urls_are_detected_as_azure(uri: str, protocol: str) -> None:
    assert detect_protocol(_interaction(uri)) == protocol


def test_a_prompt_filter_chunk_alone_names_azure() -> None:
    body = b'data: {"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[]}\n\n'
    assert detect_protocol(_interaction("", body)) == "azure-openai-completions"


def _sse(*chunks: dict[str, object], done: bool = True) -> bytes:
    text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks)
    return (text + ("data: [DONE]\n\n" if done else "")).encode()


def _terminal(protocol: str, body: bytes) -> DoneEvent | ErrorEvent:
    events: list[Event] = list(normalize(protocol, [body]))
    last = events[-1]
    assert isinstance(last, DoneEvent | ErrorEvent)
    return last


def test_repeated_verdicts_are_kept_once_and_a_change_is_kept() -> None:
    safe = {"hate": {"filtered": False, "severity": "safe"}}
    low = {"hate": {"filtered": False, "severity": "low"}}

    def chunk(text: str, results: dict[str, object]) -> dict[str, object]:
        choice = {"index": 0, "delta": {"content": text}, "finish_reason": None,
                  "content_filter_results": results}  # fmt: skip
        return {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}

    end = {"id": "c", "object": "chat.completion.chunk", "model": "m",
           "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}  # fmt: skip
    body = _sse(chunk("a", safe), chunk("b", safe), chunk("c", low), chunk("d", safe), end)
    last = _terminal("azure-openai-completions", body)
    verdicts = [b.data["content_filter_results"] for b in last.message.provider_blocks]
    assert verdicts == [safe, low, safe]
    assert last.message.content[0].content == "abcd"  # type: ignore[union-attr]


def test_responses_error_with_content_filters_is_kept() -> None:
    created = {"type": "response.created", "sequence_number": 0,
               "response": {"id": "resp_1", "model": "gpt-4.1", "status": "in_progress"}}  # fmt: skip
    filters = [{"blocked": True, "source_type": "completion",
                "content_filter_results": {"violence": {"filtered": True, "severity": "high"}}}]  # fmt: skip
    error = {"type": "error", "sequence_number": 1,
             "error": {"code": "content_filter", "message": "filtered", "content_filters": filters}}  # fmt: skip
    body = "".join(
        f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in (created, error)
    ).encode()
    last = _terminal("azure-openai-responses", body)
    assert isinstance(last, ErrorEvent) and last.error_message == "filtered"
    assert [(b.provider_type, b.data) for b in last.message.provider_blocks] == [
        ("azure.content_filters", {"content_filters": filters})
    ]
    # openai-responses itself keeps no such block: the Azure subclass adds it.
    assert _terminal("openai-responses", body).message.provider_blocks == []
