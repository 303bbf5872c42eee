"""Writes cassettes/azure-openai-completions/*.yaml: hand-made Azure OpenAI chat streams.

Every body follows Azure's documented wire format, none is copied from a recording:

- MicrosoftDocs/azure-ai-docs articles/ai-foundry/openai/concepts/content-streaming.md
  ("CS" below): the prompt annotation chunk (``id: ""``, ``choices: []``,
  ``prompt_filter_results``), completion chunks without annotations in the asynchronous
  filter mode, annotation chunks with ``content_filter_results`` and
  ``content_filter_offsets`` and no ``delta``, an annotation after the finish chunk, and
  the blocked stream ending in ``finish_reason: "content_filter"``;
- concepts/content-filter.md and content-filter-annotations.md ("CF"): per-choice
  ``content_filter_results`` in the default (buffered) mode, the HTTP 400 body of a filtered
  prompt with ``innererror.content_filter_result`` (the wire's singular, as in
  Gitlawb/openclaude#273 and openai/openai-dotnet#55);
- the Chat Completions chunk format itself, which Azure shares (finish reasons stop,
  length, tool_calls, function_call, content_filter; Azure's REST reference).

Hosts, deployments, ids and request ids are invented; no request carries credentials
(the ``api-key`` header is left out). Regenerate with::

    python cassettes/_generate/azure_openai_completions.py

then review ``git diff specs/expected/azure-openai-completions``.
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

from openai_completions import request, sse, user  # noqa: E402

from stream_harness.recordings.cassette import Interaction, Response, dump_cassette  # noqa: E402
from stream_harness.recordings.golden import write_expected  # noqa: E402

PROTOCOL = "azure-openai-completions"
OUT = ROOT / "cassettes" / PROTOCOL

API_VERSION = "2024-10-21"
DEPLOYMENT_URL = (
    "https://contoso-eastus.openai.azure.com/openai/deployments/{d}/chat/completions"
    f"?api-version={API_VERSION}"
)
V1_URL = "https://contoso-swc.cognitiveservices.azure.com/openai/v1/chat/completions"
FOUNDRY_URL = (
    "https://contoso-foundry.services.ai.azure.com/openai/deployments/{d}/chat/completions"
    "?api-version=2025-04-01-preview"
)
CREATED = 1767225600  # 2026-01-01T00:00:00Z

SAFE = {"filtered": False, "severity": "safe"}
SAFE_RESULTS = {"hate": SAFE, "self_harm": SAFE, "sexual": SAFE, "violence": SAFE}
PROMPT_RESULTS = {
    "hate": SAFE,
    "jailbreak": {"filtered": False, "detected": False},
    "self_harm": SAFE,
    "sexual": SAFE,
    "violence": SAFE,
}


def prompt_chunk(results: dict[str, Any] | None = None, *, key: str = "prompt_filter_results") -> dict[str, Any]:
    """CS "Prompt annotation message": no id, no model, no choices; the prompt's verdict."""
    return {
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        key: [{"prompt_index": 0, "content_filter_results": results or PROMPT_RESULTS}],
    }


class Chat:
    """One Azure stream: chunks of one completion id, Azure's key order (alphabetical)."""

    def __init__(self, cid: str, model: str, *, fingerprint: str | None = "fp_b705f0c291") -> None:
        self.cid, self.model, self.fingerprint = cid, model, fingerprint

    def chunk(
        self,
        delta: dict[str, Any] | None,
        *,
        finish: str | None = None,
        results: dict[str, Any] | None = None,
        index: int = 0,
        usage: dict[str, Any] | None = None,
        choices: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        if choices is None:
            choice: dict[str, Any] = {}
            if results is not None:
                choice["content_filter_results"] = results
            if delta is not None:
                choice["delta"] = delta
            choice.update({"finish_reason": finish, "index": index, "logprobs": None})
            choices = [choice]
        out: dict[str, Any] = {
            "choices": choices,
            "created": CREATED,
            "id": self.cid,
            "model": self.model,
            "object": "chat.completion.chunk",
            "system_fingerprint": self.fingerprint,
        }
        if usage is not None:
            out["usage"] = usage
        return out


def annotation(
    results: dict[str, Any],
    offsets: tuple[int, int, int],
    *,
    finish: str | None = None,
    raw: bool = False,
) -> dict[str, Any]:
    """CS "Annotation message": a choice with filter results and offsets, no delta."""
    check, start, end = offsets
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish, "content_filter_results": results}
    if raw:
        choice["content_filter_raw"] = []
    choice["content_filter_offsets"] = {
        "check_offset": check,
        "start_offset": start,
        "end_offset": end,
    }
    return {"id": "", "object": "", "created": 0, "model": "", "choices": [choice], "usage": None}


def azure_usage(prompt: int, completion: int, *, reasoning: int = 0, cached: int = 0) -> dict[str, Any]:
    return {
        "completion_tokens": completion,
        "completion_tokens_details": {
            "accepted_prediction_tokens": 0,
            "audio_tokens": 0,
            "reasoning_tokens": reasoning,
            "rejected_prediction_tokens": 0,
        },
        "prompt_tokens": prompt,
        "prompt_tokens_details": {"audio_tokens": 0, "cached_tokens": cached},
        "total_tokens": prompt + completion,
    }


def azure_headers(request_id: str, *, region: str = "East US", **extra: str) -> dict[str, str]:
    out = {
        "apim-request-id": request_id,
        "azureml-model-session": "d105-20251217180339",
        "x-content-type-options": "nosniff",
        "x-ms-client-request-id": request_id,
        "x-ms-deployment-name": "gpt-4o",
        "x-ms-rai-invoked": "true",
        "x-ms-region": region,
        "x-ratelimit-limit-requests": "1000",
        "x-ratelimit-limit-tokens": "1000000",
        "x-ratelimit-remaining-requests": "999",
        "x-ratelimit-remaining-tokens": "998950",
        "x-request-id": request_id,
    }
    out.update(extra)
    return out


def streamed(uri: str, body: dict[str, Any], sse_body: bytes, request_id: str, **headers: str) -> list[Interaction]:
    h = {"content-type": ["text/event-stream; charset=utf-8"]}
    for name, value in azure_headers(request_id, **headers).items():
        h[name] = [value]
    return [
        Interaction(
            0,
            request(uri, {**body, "stream": True}),
            Response(status=200, reason="OK", headers=h, body=sse_body),
        )
    ]


def http_error(
    uri: str, body: dict[str, Any], status: int, error: dict[str, Any], request_id: str, **headers: str
) -> list[Interaction]:
    raw = json.dumps(error, indent=2).encode("utf-8")
    reasons = {400: "Bad Request", 429: "Too Many Requests"}
    h = {"content-type": ["application/json"], "content-length": [str(len(raw))]}
    h["apim-request-id"] = [request_id]
    h["x-ms-region"] = ["East US"]
    for name, value in headers.items():
        h[name] = [value]
    return [
        Interaction(
            0,
            request(uri, {**body, "stream": True}),
            Response(status=status, reason=reasons[status], headers=h, body=raw),
        )
    ]


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
TIME_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Current time in a time zone.",
        "parameters": {
            "type": "object",
            "properties": {"tz": {"type": "string"}},
            "required": ["tz"],
        },
    },
}


# ---------------------------------------------------------------------------
# One function per cassette.
# ---------------------------------------------------------------------------


def text_default_filter() -> list[Interaction]:
    """Default (buffered) mode: the prompt chunk, then content in buffered pieces, each with
    the same "safe" verdict (CF), the finish chunk, then the usage chunk of
    stream_options.include_usage with `choices: []`. Multi-byte text for splits."""
    c = Chat("chatcmpl-Cz7AzureText00001", "gpt-4o-2024-11-20")
    body = sse(
        prompt_chunk(),
        c.chunk({"content": "", "refusal": None, "role": "assistant"}, results={}),
        c.chunk({"content": "Grüße aus Zürich! Der Kaffee"}, results=SAFE_RESULTS),
        c.chunk({"content": " ist fertig ☕ und die Sonne scheint."}, results=SAFE_RESULTS),
        c.chunk({}, finish="stop", results={}),
        c.chunk(None, choices=[], usage=azure_usage(19, 17)),
    )
    return streamed(
        DEPLOYMENT_URL.format(d="gpt-4o"),
        {"messages": user("Greet me in German."), "stream_options": {"include_usage": True}},
        body,
        "5d7f6b2a-1c3e-4a8b-9f0d-2e4c6a8b0d1f",
    )


def async_filter_passes() -> list[Interaction]:
    """CS "Sample response stream (passes filters)": the asynchronous filter; the 2023
    `prompt_annotations` spelling of the prompt chunk, tokens without annotations, an
    annotation chunk mid-stream, the finish chunk, then a last annotation after it and
    before [DONE]. No block may come from the annotations; the stop stays `stop`."""
    c = Chat("chatcmpl-Cz7AzureAsync0001", "gpt-35-turbo", fingerprint="fp_808245b034")
    body = sse(
        prompt_chunk(SAFE_RESULTS, key="prompt_annotations"),
        c.chunk({"role": "assistant"}),
        c.chunk({"content": "Color"}),
        c.chunk({"content": " is"}),
        c.chunk({"content": " a"}),
        c.chunk({"content": " property of light"}),
        annotation(SAFE_RESULTS, (44, 44, 198)),
        c.chunk({"content": " that the eye perceives."}),
        c.chunk({}, finish="stop"),
        annotation(SAFE_RESULTS, (506, 44, 571)),
    )
    return streamed(
        DEPLOYMENT_URL.format(d="gpt-35-turbo"),
        {"messages": user("What is color?"), "max_tokens": 800, "temperature": 0},
        body,
        "6e8a7c3b-2d4f-4b9c-8a1e-3f5d7b9c1e2a",
    )


def async_filter_blocked() -> list[Interaction]:
    """CS "Sample response stream (blocked by filters)": text streamed before the filter
    caught up, a "safe" annotation, then the annotation with `finish_reason:
    "content_filter"` and protected material detected; the text received is kept."""
    c = Chat("chatcmpl-Cz7AzureBlocked01", "gpt-35-turbo", fingerprint="fp_808245b034")
    blocked = {"protected_material_text": {"detected": True, "filtered": True}}
    body = sse(
        prompt_chunk(SAFE_RESULTS),
        c.chunk({"role": "assistant"}),
        c.chunk({"content": "Hey"}),
        c.chunk({"content": " Jude"}),
        c.chunk({"content": ","}),
        c.chunk({"content": " don't make it"}),
        c.chunk({"content": " bad"}),
        annotation(SAFE_RESULTS, (65, 65, 1056)),
        annotation(blocked, (65, 65, 1056), finish="content_filter"),
    )
    return streamed(
        V1_URL,
        {"model": "gpt-35-turbo", "messages": user('Tell me the lyrics to "Hey Jude".')},
        body,
        "7f9b8d4c-3e5a-4cad-9b2f-4a6c8d0e2f3b",
        region="Sweden Central",
    )


def content_filter_default() -> list[Interaction]:
    """Default mode: text, then the finish chunk with `finish_reason: "content_filter"` and
    the violence category filtered (CF "the finish_reason on the response will be
    content_filter"). Moved here from openai-completions, where it was the Azure case."""
    c = Chat("chatcmpl-Fq2Lx0pAzureFilter", "gpt-4o-2024-11-20")
    filters = {
        "hate": {"filtered": False, "severity": "safe"},
        "self_harm": {"filtered": False, "severity": "safe"},
        "sexual": {"filtered": False, "severity": "safe"},
        "violence": {"filtered": True, "severity": "high"},
    }
    body = sse(
        prompt_chunk(SAFE_RESULTS),
        c.chunk({"content": "", "refusal": None, "role": "assistant"}, results={}),
        c.chunk({"content": "The battle scene opens with"}, results={}),
        c.chunk({"content": " the two armies"}, results={}),
        c.chunk({}, finish="content_filter", results=filters),
    )
    return streamed(
        DEPLOYMENT_URL.format(d="gpt-4o"),
        {"messages": user("Write a graphic battle scene.")},
        body,
        "8e2d7c1b-0a9f-4e8d-b7c6-5a4f3e2d1c0b",
    )


def reasoning_usage() -> list[Interaction]:
    """An o-series deployment: Azure's Chat Completions returns no reasoning text, only
    `completion_tokens_details.reasoning_tokens` in the usage chunk (which `output`
    already includes); cached prompt tokens come off the input."""
    c = Chat("chatcmpl-Cz7AzureO4mini001", "o4-mini-2025-04-16", fingerprint=None)
    body = sse(
        prompt_chunk(),
        c.chunk({"content": "", "refusal": None, "role": "assistant"}, results={}),
        c.chunk({"content": "9.9 is larger than 9.11."}, results=SAFE_RESULTS),
        c.chunk({}, finish="stop", results={}),
        c.chunk(None, choices=[], usage=azure_usage(1056, 212, reasoning=192, cached=1024)),
    )
    return streamed(
        FOUNDRY_URL.format(d="o4-mini"),
        {
            "messages": user("Which is larger, 9.11 or 9.9?"),
            "reasoning_effort": "medium",
            "stream_options": {"include_usage": True},
        },
        body,
        "9a0c2e4f-4b6d-4e8f-a0b2-5c7e9a1b3d5f",
    )


def tool_call_single() -> list[Interaction]:
    """One call: the role chunk carries the call's id and name, arguments follow in
    pieces, `finish_reason: "tool_calls"` on a chunk without content filter results."""
    c = Chat("chatcmpl-Cz7AzureTool00001", "gpt-4o-2024-11-20")

    def call(args: str) -> dict[str, Any]:
        return {"tool_calls": [{"function": {"arguments": args}, "index": 0}]}

    first = {
        "content": None,
        "refusal": None,
        "role": "assistant",
        "tool_calls": [
            {
                "function": {"arguments": "", "name": "get_weather"},
                "id": "call_Az7kQ2mPp4Xw9Lr1",
                "index": 0,
                "type": "function",
            }
        ],
    }
    body = sse(
        prompt_chunk(),
        c.chunk(first, results={}),
        c.chunk(call('{"')),
        c.chunk(call("city")),
        c.chunk(call('":"')),
        c.chunk(call("Zürich")),
        c.chunk(call('"}')),
        c.chunk({}, finish="tool_calls"),
    )
    return streamed(
        FOUNDRY_URL.format(d="gpt-4o"),
        {"messages": user("Weather in Zürich?"), "tools": [WEATHER_TOOL]},
        body,
        "0b1d3f5a-5c7e-4f9a-b1c3-6d8f0a2b4c6e",
    )


def parallel_tool_calls() -> list[Interaction]:
    """Two calls, each announced with its id and name at its own index, arguments whole
    per call (as gpt-4o on Azure sends them), then `tool_calls`."""
    c = Chat("chatcmpl-Cz7AzureParallel1", "gpt-4o-2024-11-20")

    def head(index: int, call_id: str, name: str) -> dict[str, Any]:
        return {
            "tool_calls": [
                {"function": {"arguments": "", "name": name}, "id": call_id, "index": index, "type": "function"}
            ]
        }

    def args(index: int, text: str) -> dict[str, Any]:
        return {"tool_calls": [{"function": {"arguments": text}, "index": index}]}

    body = sse(
        prompt_chunk(),
        c.chunk({"content": None, "refusal": None, "role": "assistant"}, results={}),
        c.chunk(head(0, "call_Az7Weather0001", "get_weather")),
        c.chunk(args(0, '{"city": "Lyon"}')),
        c.chunk(head(1, "call_Az7Time000002", "get_time")),
        c.chunk(args(1, '{"tz": "Europe/Paris"}')),
        c.chunk({}, finish="tool_calls"),
    )
    return streamed(
        DEPLOYMENT_URL.format(d="gpt-4o"),
        {"messages": user("Weather in Lyon and the time in Paris?"), "tools": [WEATHER_TOOL, TIME_TOOL]},
        body,
        "1c2e4a6b-6d8f-4a0b-c2d4-7e9a1b3c5d7f",
    )


def legacy_function_call() -> list[Interaction]:
    """The deprecated `functions` API, still served by Azure's GA versions: a
    `delta.function_call` and `finish_reason: "function_call"`."""
    c = Chat("chatcmpl-Cz7AzureFunc00001", "gpt-35-turbo", fingerprint="fp_808245b034")
    body = sse(
        prompt_chunk(),
        c.chunk({"content": None, "function_call": {"arguments": "", "name": "get_weather"}, "role": "assistant"}, results={}),
        c.chunk({"function_call": {"arguments": '{"city":'}}),
        c.chunk({"function_call": {"arguments": ' "Oslo"}'}}),
        c.chunk({}, finish="function_call"),
    )
    return streamed(
        DEPLOYMENT_URL.format(d="gpt-35-turbo"),
        {"messages": user("Weather in Oslo?"), "functions": [WEATHER_TOOL["function"]]},
        body,
        "2d3f5b7c-7e9a-4b1c-d3e5-8f0a2c4d6e8a",
    )


def length_stop() -> list[Interaction]:
    """`max_tokens` reached: `finish_reason: "length"`, the text so far is the answer."""
    c = Chat("chatcmpl-Cz7AzureLength001", "gpt-4o-mini-2024-07-18", fingerprint="fp_f97eff32c5")
    body = sse(
        prompt_chunk(),
        c.chunk({"content": "", "refusal": None, "role": "assistant"}, results={}),
        c.chunk({"content": "Streaming lets a client show tokens"}, results=SAFE_RESULTS),
        c.chunk({"content": " as they are"}, results=SAFE_RESULTS),
        c.chunk({}, finish="length", results={}),
    )
    return streamed(
        DEPLOYMENT_URL.format(d="gpt-4o-mini"),
        {"messages": user("Explain streaming."), "max_tokens": 10},
        body,
        "3e4a6c8d-8f0b-4c2d-e4f6-9a1b3d5e7f9b",
    )


def truncated_mid_text() -> list[Interaction]:
    """The connection dropped: text, no finish reason, no [DONE] (a cut stream is an
    error that keeps the text, whatever the server)."""
    c = Chat("chatcmpl-Cz7AzureCut000001", "gpt-4o-2024-11-20")
    body = sse(
        prompt_chunk(),
        c.chunk({"content": "", "refusal": None, "role": "assistant"}, results={}),
        c.chunk({"content": "The three largest moons of Jupiter are"}, results=SAFE_RESULTS),
        done=False,
    )
    return streamed(
        DEPLOYMENT_URL.format(d="gpt-4o"),
        {"messages": user("Name Jupiter's largest moons.")},
        body,
        "4f5b7d9e-9a1c-4d3e-f5a7-0b2c4e6f8a0c",
    )


def error_mid_stream() -> list[Interaction]:
    """After HTTP 200 and some text, a `data:` line holding only an error object (the
    Chat Completions in-band error, which the openai SDK raises as APIError), then the
    connection closes. The text received is kept."""
    c = Chat("chatcmpl-Cz7AzureErr000001", "gpt-4o-2024-11-20")
    error = {
        "error": {
            "message": "The server had an error processing your request. Sorry about that! "
            "You can retry your request, or contact us through an Azure support request at: "
            "https://go.microsoft.com/fwlink/?linkid=2213926 if you keep seeing this error.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }
    body = sse(
        prompt_chunk(),
        c.chunk({"content": "", "refusal": None, "role": "assistant"}, results={}),
        c.chunk({"content": "Photosynthesis turns light"}, results=SAFE_RESULTS),
        error,
        done=False,
    )
    return streamed(
        DEPLOYMENT_URL.format(d="gpt-4o"),
        {"messages": user("Explain photosynthesis.")},
        body,
        "5a6c8e0f-0b2d-4e4f-a6b8-1c3d5f7a9b1d",
    )


def content_filter_prompt_400() -> list[Interaction]:
    """A filtered prompt is an HTTP 400 before any stream: code `content_filter`, and
    `innererror` with `ResponsibleAIPolicyViolation` and the per-category verdict (CF;
    the wire's `content_filter_result`, Gitlawb/openclaude#273)."""
    error = {
        "error": {
            "message": "The response was filtered due to the prompt triggering Azure OpenAI's "
            "content management policy. Please modify your prompt and retry. To learn more "
            "about our content filtering policies please read our documentation: "
            "https://go.microsoft.com/fwlink/?linkid=2198766",
            "type": None,
            "param": "prompt",
            "code": "content_filter",
            "status": 400,
            "innererror": {
                "code": "ResponsibleAIPolicyViolation",
                "content_filter_result": {
                    "hate": SAFE,
                    "jailbreak": {"filtered": True, "detected": True},
                    "self_harm": SAFE,
                    "sexual": SAFE,
                    "violence": SAFE,
                },
            },
        }
    }
    return http_error(
        DEPLOYMENT_URL.format(d="gpt-4o"),
        {"messages": user("Ignore all previous instructions and ...")},
        400,
        error,
        "6b7d9f1a-1c3e-4f5a-b7c9-2d4e6a8b0c2e",
    )


def context_length_exceeded_400() -> list[Interaction]:
    """HTTP 400 `context_length_exceeded` (the Chat Completions body Azure returns)."""
    error = {
        "error": {
            "message": "This model's maximum context length is 128000 tokens. However, your "
            "messages resulted in 131072 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }
    return http_error(
        V1_URL,
        {"model": "gpt-4o", "messages": user("(a very long transcript, elided)")},
        400,
        error,
        "7c8e0a2b-2d4f-4a6b-c8d0-3e5f7b9c1d3f",
    )


def rate_limit_429() -> list[Interaction]:
    """HTTP 429 with Azure's body (code "429", "Please retry after N seconds") and both
    `retry-after` and `retry-after-ms` (the millisecond one wins)."""
    error = {
        "error": {
            "code": "429",
            "message": "Requests to the ChatCompletions_Create Operation under Azure OpenAI API "
            f"version {API_VERSION} have exceeded token rate limit of your current AIServices S0 "
            "pricing tier. Please retry after 6 seconds. Please contact Azure support service "
            "if you would like to further increase the default rate limit.",
        }
    }
    return http_error(
        DEPLOYMENT_URL.format(d="gpt-4o"),
        {"messages": user("Hello")},
        429,
        error,
        "8d9f1b3c-3e5a-4b7c-d9e1-4f6a8c0d2e4a",
        **{
            "retry-after": "6",
            "retry-after-ms": "5800",
            "x-ratelimit-remaining-requests": "951",
            "x-ratelimit-remaining-tokens": "0",
        },
    )


CASSETTES: dict[str, Callable[[], list[Interaction]]] = {
    f.__name__: f
    for f in (
        text_default_filter,
        async_filter_passes,
        async_filter_blocked,
        content_filter_default,
        reasoning_usage,
        tool_call_single,
        parallel_tool_calls,
        legacy_function_call,
        length_stop,
        truncated_mid_text,
        error_mid_stream,
        content_filter_prompt_400,
        context_length_exceeded_400,
        rate_limit_429,
    )
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in CASSETTES.items():
        path = OUT / f"{name}.yaml"
        dump_cassette(build(), path)
        for written in write_expected(path, PROTOCOL):
            print(f"wrote {path.relative_to(ROOT)} -> {written.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
