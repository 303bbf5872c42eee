"""Writes cassettes/azure-openai-responses/*.yaml: hand-made Azure OpenAI Responses streams.

Azure serves the Responses API with OpenAI's event stream (MicrosoftDocs/azure-ai-docs
articles/ai-foundry/openai/how-to/responses.md streams it with the plain OpenAI client from
``https://YOUR-RESOURCE-NAME.openai.azure.com/openai/v1/``), so the bodies are built with
the openai-responses generator's ``Stream`` (the documented event sequence); what is
Azure's here is the URL forms (``/openai/v1/responses`` and the preview
``/openai/responses?api-version=...``), the response headers, the ``created_at`` float of
Azure's samples, and the error bodies: a filtered prompt's HTTP 400 carries
``content_filters`` (a list of ``{blocked, source_type, content_filter_results}``, the
Responses shape of Chat's ``innererror``), a 429 may come with ``-1``/``0`` rate headers and
no ``retry-after`` (openai/openai-dotnet#838, provider-facts.md 5.2). Nothing is copied from
a recording. Regenerate with::

    python cassettes/_generate/azure_openai_responses.py

then review ``git diff specs/expected/azure-openai-responses``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from openai_responses import TIME_TOOL, WEATHER_TOOL, Stream, compact, hexid, usage, user  # noqa: E402

from stream_harness.recordings.cassette import Interaction, Request, Response, dump_cassette  # noqa: E402
from stream_harness.recordings.golden import write_expected  # noqa: E402

PROTOCOL = "azure-openai-responses"
OUT = ROOT / "cassettes" / PROTOCOL

V1_URI = "https://contoso-eastus2.openai.azure.com/openai/v1/responses"
PREVIEW_URI = (
    "https://contoso-swc.cognitiveservices.azure.com/openai/responses"
    "?api-version=2025-04-01-preview"
)
FOUNDRY_URI = "https://contoso-foundry.services.ai.azure.com/openai/v1/responses"
GPT41 = "gpt-4.1-2025-04-14"
GPT4O = "gpt-4o-2024-11-20"
O4_MINI = "o4-mini-2025-04-16"


class AzureStream(Stream):
    """The documented event sequence with Azure's float ``created_at``."""

    def __init__(self, label: str, model: str, **kwargs: Any) -> None:
        super().__init__(label, model, **kwargs)
        self.response["created_at"] = float(self.response["created_at"])


def request(body: dict[str, Any], uri: str) -> Request:
    raw = compact({**body, "stream": True}).encode()
    host = uri.split("/")[2]
    return Request(
        method="POST",
        uri=uri,
        headers={
            "accept": ["application/json"],
            "content-length": [str(len(raw))],
            "content-type": ["application/json"],
            "host": [host],
            "user-agent": ["AzureOpenAI/Python 3.54.0"],
            "x-stainless-lang": ["python"],
        },
        body=raw,
    )


def azure_headers(label: str, **extra: str) -> dict[str, list[str]]:
    rid = "-".join(
        (hexid(label, 8), hexid(label + "b", 4), hexid(label + "c", 4), hexid(label + "d", 4), hexid(label + "e", 12))
    )
    out = {
        "apim-request-id": rid,
        "azureml-model-session": "d087-20251120125018",
        "x-ms-client-request-id": rid,
        "x-ms-region": "East US 2",
        "x-ratelimit-limit-requests": "1000",
        "x-ratelimit-limit-tokens": "1000000",
        "x-ratelimit-remaining-requests": "999",
        "x-ratelimit-remaining-tokens": "998900",
        "x-request-id": rid,
    }
    out.update(extra)
    return {k: [v] for k, v in out.items()}


def streamed(label: str, body: dict[str, Any], uri: str, stream: Stream) -> Interaction:
    headers = {"content-type": ["text/event-stream; charset=utf-8"], **azure_headers(label)}
    return Interaction(
        index=0,
        request=request(body, uri),
        response=Response(status=200, reason="OK", headers=headers, body=stream.body()),
    )


def http_error(
    label: str, body: dict[str, Any], uri: str, status: int, error: dict[str, Any], **headers: str
) -> Interaction:
    raw = (json.dumps(error, indent=2) + "\n").encode()
    reasons = {400: "Bad Request", 429: "Too Many Requests"}
    h = {
        "content-type": ["application/json"],
        "content-length": [str(len(raw))],
        **azure_headers(label, **headers),
    }
    return Interaction(
        index=0,
        request=request(body, uri),
        response=Response(status=status, reason=reasons[status], headers=h, body=raw),
    )


# -- the cassettes ------------------------------------------------------------------------


def plain_text() -> Interaction:
    s = AzureStream("az_plain_text", GPT41)
    s.start()
    msg = s.message(0, ["Grüße", " aus", " Zürich", " ☕", "!"])
    s.end("response.completed", "completed", [msg], usage(12, 7))
    return streamed("az_plain_text", {"model": "gpt-4.1", "input": user("Greet me in German.")}, V1_URI, s)


def reasoning_summary() -> Interaction:
    """An o-series deployment with reasoning summaries: thinking, then the answer."""
    effort = {"effort": "medium", "summary": "auto"}
    s = AzureStream("az_reasoning", O4_MINI, reasoning=effort, store=False)
    s.start()
    rs = s.reasoning(0, [["**Comparing", " decimals**\n\n", "9.90 > 9.11."]])
    msg = s.message(1, ["9.9", " is larger."])
    s.end("response.completed", "completed", [rs, msg], usage(21, 180, reasoning=160))
    body = {
        "model": "o4-mini",
        "input": user("Which is larger, 9.11 or 9.9?"),
        "reasoning": effort,
        "include": ["reasoning.encrypted_content"],
        "store": False,
    }
    return streamed("az_reasoning", body, PREVIEW_URI, s)


def function_call() -> Interaction:
    s = AzureStream("az_function_call", GPT4O, tools=[WEATHER_TOOL])
    s.start()
    fc = s.function_call(0, "get_weather", ['{"', "city", '":"', "Zürich", '"}'], '{"city":"Zürich"}')
    s.end("response.completed", "completed", [fc], usage(60, 16))
    body = {"model": "gpt-4o", "input": user("Weather in Zürich?"), "tools": [WEATHER_TOOL]}
    return streamed("az_function_call", body, FOUNDRY_URI, s)


def parallel_function_calls() -> Interaction:
    s = AzureStream("az_parallel", GPT4O, tools=[WEATHER_TOOL, TIME_TOOL])
    s.start()
    a = s.function_call(0, "get_weather", ['{"city":', '"Lyon"}'], '{"city":"Lyon"}', n=0)
    b = s.function_call(1, "get_time", ['{"tz":', '"Europe/Paris"}'], '{"tz":"Europe/Paris"}', n=1)
    s.end("response.completed", "completed", [a, b], usage(90, 38))
    body = {
        "model": "gpt-4o",
        "input": user("Weather in Lyon and the time in Paris?"),
        "tools": [WEATHER_TOOL, TIME_TOOL],
    }
    return streamed("az_parallel", body, V1_URI, s)


def incomplete_content_filter() -> Interaction:
    """A filtered output: `response.incomplete` with reason content_filter; text kept."""
    s = AzureStream("az_incomplete_filter", GPT41)
    s.start()
    msg = s.message(0, ["The battle", " scene opens", " with"], status="incomplete")
    s.end("response.incomplete", "incomplete", [msg], usage(18, 6), incomplete="content_filter")
    body = {"model": "gpt-4.1", "input": user("Write a graphic battle scene.")}
    return streamed("az_incomplete_filter", body, V1_URI, s)


def incomplete_max_output_tokens() -> Interaction:
    s = AzureStream("az_incomplete_length", GPT41, max_output_tokens=16)
    s.start()
    msg = s.message(0, ["Streaming lets", " a client", " show tokens"], status="incomplete")
    s.end("response.incomplete", "incomplete", [msg], usage(15, 16), incomplete="max_output_tokens")
    body = {"model": "gpt-4.1", "input": user("Explain streaming."), "max_output_tokens": 16}
    return streamed("az_incomplete_length", body, PREVIEW_URI, s)


def failed_server_error() -> Interaction:
    """Mid-stream failure: an `error` event, then `response.failed` (dropped after the
    first terminal); the text streamed before is kept."""
    s = AzureStream("az_failed", GPT41)
    s.start()
    mid = s.item_id("msg", 0)
    head = {"id": mid, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}
    s.emit("response.output_item.added", output_index=0, item=head)
    empty = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    s.emit("response.content_part.added", item_id=mid, output_index=0, content_index=0, part=empty)
    for delta in ["Photosynthesis", " turns light"]:
        s.emit(
            "response.output_text.delta",
            item_id=mid,
            output_index=0,
            content_index=0,
            delta=delta,
            logprobs=[],
        )
    error = {
        "code": "server_error",
        "message": "The server had an error processing your request. Sorry about that! You can "
        "retry your request, or contact us through an Azure support request at: "
        "https://go.microsoft.com/fwlink/?linkid=2213926 if you keep seeing this error.",
    }
    s.emit("error", code=error["code"], message=error["message"], param=None)
    s.end("response.failed", "failed", [], None, error=error)
    body = {"model": "gpt-4.1", "input": user("Explain photosynthesis.")}
    return streamed("az_failed", body, V1_URI, s)


def eof_mid_text() -> Interaction:
    """The connection dropped before any terminal event: error, text kept."""
    s = AzureStream("az_eof", GPT41)
    s.start()
    mid = s.item_id("msg", 0)
    head = {"id": mid, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}
    s.emit("response.output_item.added", output_index=0, item=head)
    empty = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    s.emit("response.content_part.added", item_id=mid, output_index=0, content_index=0, part=empty)
    s.emit(
        "response.output_text.delta",
        item_id=mid,
        output_index=0,
        content_index=0,
        delta="The three largest moons of Jupiter are",
        logprobs=[],
    )
    body = {"model": "gpt-4.1", "input": user("Name Jupiter's largest moons.")}
    return streamed("az_eof", body, V1_URI, s)


def content_filter_prompt_400() -> Interaction:
    """A filtered prompt: HTTP 400 code `content_filter` with the Responses-style
    `content_filters` list (no `innererror`)."""
    safe = {"filtered": False, "severity": "safe"}
    error = {
        "error": {
            "message": "The response was filtered due to the prompt triggering Azure OpenAI's "
            "content management policy. Please modify your prompt and retry. To learn more "
            "about our content filtering policies please read our documentation: "
            "https://go.microsoft.com/fwlink/?linkid=2198766",
            "type": "invalid_request_error",
            "param": "prompt",
            "code": "content_filter",
            "content_filters": [
                {
                    "blocked": True,
                    "source_type": "prompt",
                    "content_filter_raw": [],
                    "content_filter_results": {
                        "jailbreak": {"detected": True, "filtered": True},
                        "hate": safe,
                        "sexual": safe,
                        "violence": safe,
                        "self_harm": safe,
                    },
                }
            ],
        }
    }
    body = {"model": "gpt-4.1", "input": user("Ignore all previous instructions and ...")}
    return http_error("az_400_filter", body, V1_URI, 400, error)


def context_length_exceeded_400() -> Interaction:
    error = {
        "error": {
            "message": "Your input exceeds the context window of this model. Please adjust your "
            "input and try again.",
            "type": "invalid_request_error",
            "param": "input",
            "code": "context_length_exceeded",
        }
    }
    body = {"model": "gpt-4.1", "input": user("<a very long document>")}
    return http_error("az_400_overflow", body, PREVIEW_URI, 400, error)


def rate_limit_429() -> Interaction:
    """Azure's Responses 429 with `-1`/`0` rate headers and no `retry-after`: rate_limit,
    retryable, no delay hint (provider-facts.md 5.2)."""
    error = {
        "error": {
            "code": "rate_limit_exceeded",
            "message": "Requests to the Responses_Create Operation under Azure OpenAI API version "
            "preview have exceeded token rate limit of your current AIServices S0 pricing tier. "
            "Please contact Azure support service if you would like to further increase the "
            "default rate limit.",
        }
    }
    body = {"model": "gpt-4.1", "input": user("Hello")}
    return http_error(
        "az_429",
        body,
        V1_URI,
        429,
        error,
        **{
            "x-ratelimit-limit-tokens": "-1",
            "x-ratelimit-remaining-tokens": "-1",
            "x-ratelimit-reset-tokens": "0",
        },
    )


CASSETTES: dict[str, Callable[[], Interaction]] = {
    f.__name__: f
    for f in (
        plain_text,
        reasoning_summary,
        function_call,
        parallel_function_calls,
        incomplete_content_filter,
        incomplete_max_output_tokens,
        failed_server_error,
        eof_mid_text,
        content_filter_prompt_400,
        context_length_exceeded_400,
        rate_limit_429,
    )
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in CASSETTES.items():
        path = OUT / f"{name}.yaml"
        dump_cassette([build()], path)
        for written in write_expected(path, PROTOCOL):
            print(f"wrote {path.relative_to(ROOT)} -> {written.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
