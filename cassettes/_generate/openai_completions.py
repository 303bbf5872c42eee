"""Writes cassettes/openai-completions/*.yaml: hand-made Chat Completions streams.

Every body follows the documented wire format (sources in each entry's ``why``); none is
copied from the recorded corpus. Ids, models and headers are plausible but invented, and
no request carries credentials. Regenerate and refresh the golden files with::

    python cassettes/_generate/openai_completions.py

then review ``git diff specs/expected/openai-completions``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from stream_harness.recordings.cassette import Interaction, Request, Response, dump_cassette  # noqa: E402
from stream_harness.recordings.golden import write_expected  # noqa: E402

PROTOCOL = "openai-completions"
OUT = ROOT / "cassettes" / PROTOCOL

OPENAI_URL = "https://api.openai.com/v1/chat/completions"
CREATED = 1767225600  # 2026-01-01T00:00:00Z
# Mistral's bytes behind an OpenAI-compatible gateway URL (a proxy, an OpenAI client pointed
# at Mistral): detection says openai-completions, whose translator must read Mistral's
# typed chunks too. cassettes/mistral-chat/ has the same bodies under Mistral's own URL.
MISTRAL_VIA_GATEWAY = "https://llm-gateway.internal/v1/chat/completions"


def sse(*events: dict[str, Any] | str, done: bool = True) -> bytes:
    """``data: <json>`` events separated by blank lines, as OpenAI sends them."""
    parts = []
    for event in events:
        if isinstance(event, str):  # a raw line: a comment or an already-encoded event
            parts.append(event + "\n\n")
        else:
            parts.append(
                "data: " + json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n\n"
            )
    if done:
        parts.append("data: [DONE]\n\n")
    return "".join(parts).encode("utf-8")


def chunk(
    cid: str,
    model: str,
    delta: dict[str, Any] | None = None,
    *,
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    choices: list[dict[str, Any]] | None = None,
    openai_style: bool = True,
    **extra: Any,
) -> dict[str, Any]:
    if choices is None:
        choice: dict[str, Any] = {"index": 0, "delta": delta or {}}
        if openai_style:
            choice["logprobs"] = None
        choice["finish_reason"] = finish
        choices = [choice]
    out: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
    }
    if openai_style:
        out["service_tier"] = "default"
        out["system_fingerprint"] = "fp_5d2b8a1c0e"
    out["choices"] = choices
    out.update(extra)
    if openai_style or usage is not None:
        out["usage"] = usage
    return out


def openai_usage(
    prompt: int, completion: int, *, cached: int = 0, reasoning: int = 0
) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": reasoning,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def request(
    uri: str, body: dict[str, Any], *, host_headers: dict[str, str] | None = None
) -> Request:
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    headers = {
        "accept": ["application/json"],
        "content-type": ["application/json"],
        "content-length": [str(len(data))],
        "user-agent": ["stream-harness-fixtures/0.1"],
    }
    for name, value in (host_headers or {}).items():
        headers[name] = [value]
    return Request(method="POST", uri=uri, headers=headers, body=data)


def response(body: bytes, *, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    reasons = {200: "OK", 400: "Bad Request", 429: "Too Many Requests"}
    h = {"content-type": ["text/event-stream; charset=utf-8"]} if status == 200 else {}
    for name, value in (headers or {}).items():
        h[name] = [value]
    return Response(status=status, reason=reasons[status], headers=h, body=body)


def openai_headers(request_id: str, **extra: str) -> dict[str, str]:
    out = {
        "x-request-id": request_id,
        "openai-processing-ms": "212",
        "x-ratelimit-limit-requests": "10000",
        "x-ratelimit-remaining-requests": "9999",
        "x-ratelimit-reset-requests": "6ms",
        "x-ratelimit-limit-tokens": "30000000",
        "x-ratelimit-remaining-tokens": "29999950",
        "x-ratelimit-reset-tokens": "0s",
    }
    out.update(extra)
    return out


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


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
CLOCK_TOOL = {
    "type": "function",
    "function": {
        "name": "get_current_time",
        "description": "The current UTC time; takes no parameters.",
        "parameters": {"type": "object", "properties": {}},
    },
}
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search_docs",
        "description": "Full-text search over the product docs.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
        },
    },
}


# ---------------------------------------------------------------------------
# One function per cassette; each returns its interactions.
# ---------------------------------------------------------------------------


def text_plain() -> list[Interaction]:
    """Plain text with stream_options.include_usage: the last chunk has `choices: []`
    (PF 2.2; case 7). Multi-byte characters so that splits land inside them."""
    cid, model = "chatcmpl-Fq2Lx0pTextPlain01", "gpt-4o-mini-2024-07-18"
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": "", "refusal": None}, obfuscation="aB3"),
        chunk(cid, model, {"content": "Bonjour"}, obfuscation="x9Q1"),
        chunk(cid, model, {"content": " ! Le café"}, obfuscation="p"),
        chunk(cid, model, {"content": " est prêt ☕."}, obfuscation="Zz0y"),
        chunk(cid, model, {}, finish="stop", obfuscation="kk"),
        chunk(cid, model, choices=[], usage=openai_usage(12, 9), obfuscation="Qm2P"),
    )
    req = request(
        OPENAI_URL,
        {
            "model": "gpt-4o-mini",
            "messages": user("Say good morning in French."),
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    return [
        Interaction(
            0, req, response(body, headers=openai_headers("req_7c1e0a52b9d44f0f8e7d1a2b3c4d5e6f"))
        )
    ]


def cache_usage() -> list[Interaction]:
    """Prompt caching: prompt_tokens includes prompt_tokens_details.cached_tokens (PF 2.7)."""
    cid, model = "chatcmpl-Fq2Lx0pCacheUsage1", "gpt-4o-2024-08-06"
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": "", "refusal": None}),
        chunk(cid, model, {"content": "Section 4.2 covers"}),
        chunk(cid, model, {"content": " refunds."}),
        chunk(cid, model, {}, finish="stop"),
        chunk(cid, model, choices=[], usage=openai_usage(2006, 6, cached=1920)),
    )
    req = request(
        OPENAI_URL,
        {
            "model": "gpt-4o",
            "messages": [
                {
                    "role": "system",
                    "content": "You answer questions about the attached 40-page policy. (policy text elided)",
                },
                {"role": "user", "content": "Which section covers refunds?"},
            ],
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    return [
        Interaction(
            0, req, response(body, headers=openai_headers("req_0b9e2f4d6a8c4e1f9a7b5c3d1e2f4a6b"))
        )
    ]


def deepseek_reasoning_cache() -> list[Interaction]:
    """DeepSeek: `reasoning_content` deltas, then `content`; cache hits as the flat
    `prompt_cache_hit_tokens` next to prompt_tokens_details (PF 2.7; case 16)."""
    cid, model = "5d0c7c3e-7f2a-4b1d-9a61-2f0d3c1e8b44", "deepseek-reasoner"
    fp = "fp_8802369eaa_prod0623_fp8_kvcache"

    def ds(
        delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "system_fingerprint": fp,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            "usage": usage,
        }

    body = sse(
        ds({"role": "assistant", "content": None, "reasoning_content": ""}),
        ds({"content": None, "reasoning_content": "The user asks 17 × 3."}),
        ds({"content": None, "reasoning_content": " 17 × 3 = 51."}),
        ds({"content": "17 × 3", "reasoning_content": None}),
        ds({"content": " = 51.", "reasoning_content": None}),
        ds(
            {"content": "", "reasoning_content": None},
            finish="stop",
            usage={
                "prompt_tokens": 64,
                "completion_tokens": 40,
                "total_tokens": 104,
                "prompt_tokens_details": {"cached_tokens": 48},
                "completion_tokens_details": {"reasoning_tokens": 28},
                "prompt_cache_hit_tokens": 48,
                "prompt_cache_miss_tokens": 16,
            },
        ),
    )
    req = request(
        "https://api.deepseek.com/chat/completions",
        {"model": "deepseek-reasoner", "messages": user("What is 17 times 3?"), "stream": True},
    )
    return [
        Interaction(
            0, req, response(body, headers={"x-ds-trace-id": "3f1b6c0d2e9a4b7c8d5e6f7a8b9c0d1e"})
        )
    ]


def vllm_reasoning() -> list[Interaction]:
    """vLLM >= Nov 2025 streams reasoning as `delta.reasoning` (PF 2.7, vllm PR #27752)."""
    cid, model = "chatcmpl-9e1f2a3b4c5d6e7f", "Qwen/Qwen3-8B"

    def v(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }

    body = sse(
        v({"role": "assistant", "content": ""}),
        v({"reasoning": "Capital of Australia:"}),
        v({"reasoning": " Canberra, not Sydney."}),
        v({"content": "Canberra."}),
        v({}, finish="stop"),
        {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": [],
            "usage": {
                "prompt_tokens": 15,
                "total_tokens": 31,
                "completion_tokens": 16,
                "prompt_tokens_details": None,
            },
        },
    )
    req = request(
        "http://vllm.internal:8000/v1/chat/completions",
        {
            "model": model,
            "messages": user("What is the capital of Australia?"),
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    return [Interaction(0, req, response(body))]


def tool_call_single() -> list[Interaction]:
    """One call: id, type and name on the first delta, then `index` + argument fragments
    (PF 2.2; case 8)."""
    cid, model = "chatcmpl-Fq2Lx0pToolSingle1", "gpt-4o-mini-2024-07-18"
    first = {
        "index": 0,
        "id": "call_Wq8rT2mXbN4kP7sZ1cV3dF6g",
        "type": "function",
        "function": {"name": "get_weather", "arguments": ""},
    }
    frags = ['{"', "city", '":"', "São", " Paulo", '"}']
    body = sse(
        chunk(
            cid,
            model,
            {"role": "assistant", "content": None, "tool_calls": [first], "refusal": None},
        ),
        *[
            chunk(cid, model, {"tool_calls": [{"index": 0, "function": {"arguments": f}}]})
            for f in frags
        ],
        chunk(cid, model, {}, finish="tool_calls"),
        chunk(cid, model, choices=[], usage=openai_usage(61, 17)),
    )
    req = request(
        OPENAI_URL,
        {
            "model": "gpt-4o-mini",
            "messages": user("Weather in São Paulo?"),
            "tools": [WEATHER_TOOL],
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    return [
        Interaction(
            0, req, response(body, headers=openai_headers("req_5e6f7a8b9c0d4e1f2a3b4c5d6e7f8a9b"))
        )
    ]


def parallel_tool_calls_interleaved() -> list[Interaction]:
    """Two calls whose argument deltas alternate between index 0 and 1; ids and names
    only on each call's first delta (case 9; ecosystem.md section 4 measured shape)."""
    cid, model = "chatcmpl-Fq2Lx0pParallel001", "gpt-4.1-2025-04-14"
    a = {
        "index": 0,
        "id": "call_A1b2C3d4E5f6G7h8I9j0K1l2",
        "type": "function",
        "function": {"name": "get_weather", "arguments": ""},
    }
    b = {
        "index": 1,
        "id": "call_M3n4O5p6Q7r8S9t0U1v2W3x4",
        "type": "function",
        "function": {"name": "get_time", "arguments": ""},
    }

    def args(i: int, text: str) -> dict[str, Any]:
        return chunk(cid, model, {"tool_calls": [{"index": i, "function": {"arguments": text}}]})

    body = sse(
        chunk(
            cid, model, {"role": "assistant", "content": None, "tool_calls": [a], "refusal": None}
        ),
        args(0, '{"city"'),
        chunk(cid, model, {"tool_calls": [b]}),
        args(1, '{"tz"'),
        args(0, ': "Paris"}'),
        args(1, ': "Europe/Paris"}'),
        chunk(cid, model, {}, finish="tool_calls"),
        chunk(cid, model, choices=[], usage=openai_usage(88, 41)),
    )
    req = request(
        OPENAI_URL,
        {
            "model": "gpt-4.1",
            "messages": user("Weather and local time in Paris?"),
            "tools": [WEATHER_TOOL, TIME_TOOL],
            "parallel_tool_calls": True,
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    return [
        Interaction(
            0, req, response(body, headers=openai_headers("req_1a2b3c4d5e6f4a7b8c9d0e1f2a3b4c5d"))
        )
    ]


def groq_whole_tool_call() -> list[Interaction]:
    """Groq sends the whole call in one chunk, then `finish_reason: "tool_calls"` in a
    chunk with an empty delta, usage in `x_groq.usage` (PF 2.7; case 11)."""
    cid, model = "chatcmpl-6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f", "llama-3.3-70b-versatile"

    def g(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        out = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "system_fingerprint": "fp_3f3b593e33",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        out.update(extra)
        return out

    call = {
        "id": "call_k2m4",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
        "index": 0,
    }
    body = sse(
        g({"role": "assistant", "content": None}, x_groq={"id": "req_01jz8w3q5re4t6y7u8i9o0p1a2"}),
        g({"tool_calls": [call]}),
        g(
            {},
            finish="tool_calls",
            x_groq={
                "id": "req_01jz8w3q5re4t6y7u8i9o0p1a2",
                "usage": {
                    "queue_time": 0.071,
                    "prompt_tokens": 236,
                    "prompt_time": 0.012,
                    "completion_tokens": 18,
                    "completion_time": 0.033,
                    "total_tokens": 254,
                    "total_time": 0.045,
                },
            },
        ),
    )
    req = request(
        "https://api.groq.com/openai/v1/chat/completions",
        {
            "model": model,
            "messages": user("Weather in Oslo?"),
            "tools": [WEATHER_TOOL],
            "stream": True,
        },
    )
    return [
        Interaction(
            0,
            req,
            response(
                body,
                headers={
                    "x-request-id": "req_01jz8w3q5re4t6y7u8i9o0p1a2",
                    "x-groq-region": "us-east-1",
                },
            ),
        )
    ]


def ollama_parallel_index0() -> list[Interaction]:
    """Ollama /v1 sends every parallel call with `index: 0`, each with its own id and
    arguments whole (bug 4: ollama/ollama#15457, vercel/ai#14277)."""
    cid, model = "chatcmpl-412", "qwen3:8b"

    def o(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "system_fingerprint": "fp_ollama",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    first = {
        "id": "call_7x1qz3rt",
        "index": 0,
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Lyon"}'},
    }
    second = {
        "id": "call_9b4kd2wn",
        "index": 0,
        "type": "function",
        "function": {"name": "get_time", "arguments": '{"tz":"Europe/Paris"}'},
    }
    body = sse(
        o({"role": "assistant", "content": "", "tool_calls": [first]}),
        o({"role": "assistant", "content": "", "tool_calls": [second]}),
        o({"role": "assistant", "content": ""}, finish="tool_calls"),
        {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "system_fingerprint": "fp_ollama",
            "choices": [],
            "usage": {"prompt_tokens": 204, "completion_tokens": 47, "total_tokens": 251},
        },
    )
    req = request(
        "http://localhost:11434/v1/chat/completions",
        {
            "model": model,
            "messages": user("Weather and time in Lyon?"),
            "tools": [WEATHER_TOOL, TIME_TOOL],
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    return [Interaction(0, req, response(body, headers={"content-type": "text/event-stream"}))]


def late_tool_name() -> list[Interaction]:
    """The first tool-call delta has an id but no `function.name`; the name comes in the
    next delta (case 10; VAI openai-compatible buffers until the name shows up)."""
    cid, model = "chatcmpl-b7c8d9e0f1a2b3c4", "meta-llama/Llama-3.3-70B-Instruct"

    def v(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }

    body = sse(
        v({"role": "assistant", "content": None}),
        v(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "chatcmpl-tool-5f0e1d2c3b4a",
                        "type": "function",
                        "function": {"arguments": ""},
                    }
                ]
            }
        ),
        v({"tool_calls": [{"index": 0, "function": {"name": "search_docs"}}]}),
        v({"tool_calls": [{"index": 0, "function": {"arguments": '{"query": "rate limits", '}}]}),
        v({"tool_calls": [{"index": 0, "function": {"arguments": '"limit": 3}'}}]}),
        v({}, finish="tool_calls"),
    )
    req = request(
        "https://llm-gateway.example.com/v1/chat/completions",
        {
            "model": model,
            "messages": user("Find the docs on rate limits."),
            "tools": [SEARCH_TOOL],
            "stream": True,
        },
    )
    return [Interaction(0, req, response(body))]


def trailing_empty_args() -> list[Interaction]:
    """vLLM repeats the call with `arguments: ""` in the chunk that carries the finish
    reason; it must not become a second call (bug 9: vercel/ai#3953)."""
    cid, model = "chatcmpl-c0d1e2f3a4b5c6d7", "mistralai/Mistral-Small-3.2-24B-Instruct-2506"

    def v(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }

    body = sse(
        v({"role": "assistant", "content": ""}),
        v(
            {
                "tool_calls": [
                    {
                        "id": "chatcmpl-tool-a1b2c3d4e5f6",
                        "type": "function",
                        "index": 0,
                        "function": {"name": "get_weather", "arguments": ""},
                    }
                ]
            }
        ),
        v({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "'}}]}),
        v({"tool_calls": [{"index": 0, "function": {"arguments": 'Kyoto"}'}}]}),
        v({"tool_calls": [{"index": 0, "function": {"arguments": ""}}]}, finish="tool_calls"),
    )
    req = request(
        "http://vllm.internal:8000/v1/chat/completions",
        {
            "model": model,
            "messages": user("Weather in Kyoto?"),
            "tools": [WEATHER_TOOL],
            "tool_choice": "auto",
            "stream": True,
        },
    )
    return [Interaction(0, req, response(body))]


def empty_args_tool() -> list[Interaction]:
    """A tool without parameters streamed with `arguments: ""` only: the call's
    arguments are {} (bugs 10, 11: vercel/ai#6687, #2103)."""
    cid, model = "chatcmpl-Fq2Lx0pEmptyArgs01", "gpt-4o-mini-2024-07-18"
    call = {
        "index": 0,
        "id": "call_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2",
        "type": "function",
        "function": {"name": "get_current_time", "arguments": ""},
    }
    body = sse(
        chunk(
            cid,
            model,
            {"role": "assistant", "content": None, "tool_calls": [call], "refusal": None},
        ),
        chunk(cid, model, {}, finish="tool_calls"),
        chunk(cid, model, choices=[], usage=openai_usage(48, 11)),
    )
    req = request(
        OPENAI_URL,
        {
            "model": "gpt-4o-mini",
            "messages": user("What time is it?"),
            "tools": [CLOCK_TOOL],
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    return [
        Interaction(
            0, req, response(body, headers=openai_headers("req_9f8e7d6c5b4a4c3d2e1f0a9b8c7d6e5f"))
        )
    ]


def length_stop() -> list[Interaction]:
    """`finish_reason: "length"` when max_completion_tokens is reached (PF 3.1)."""
    cid, model = "chatcmpl-Fq2Lx0pLengthStop1", "gpt-4o-mini-2024-07-18"
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": "", "refusal": None}),
        chunk(cid, model, {"content": "Once upon a time, in a valley"}),
        chunk(cid, model, {"content": " between two rivers, there lived"}),
        chunk(cid, model, {}, finish="length"),
        chunk(cid, model, choices=[], usage=openai_usage(14, 16)),
    )
    req = request(
        OPENAI_URL,
        {
            "model": "gpt-4o-mini",
            "messages": user("Tell me a long story."),
            "max_completion_tokens": 16,
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    return [
        Interaction(
            0, req, response(body, headers=openai_headers("req_2c3d4e5f6a7b4c8d9e0f1a2b3c4d5e6f"))
        )
    ]


def refusal() -> list[Interaction]:
    """Structured outputs: the model refuses through `delta.refusal`, finish "stop"
    (OAI-PY ChoiceDelta.refusal, PF 2.2)."""
    cid, model = "chatcmpl-Fq2Lx0pRefusal0001", "gpt-4o-2024-08-06"
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": None, "refusal": ""}),
        chunk(cid, model, {"refusal": "I'm sorry,"}),
        chunk(cid, model, {"refusal": " but I can't help with that."}),
        chunk(cid, model, {}, finish="stop"),
        chunk(cid, model, choices=[], usage=openai_usage(97, 10)),
    )
    req = request(
        OPENAI_URL,
        {
            "model": "gpt-4o",
            "messages": user("Give step-by-step instructions to pick a neighbour's door lock."),
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": "steps",
                    "strict": True,
                    "schema": {
                        "type": "object",
                        "properties": {"steps": {"type": "array", "items": {"type": "string"}}},
                        "required": ["steps"],
                        "additionalProperties": False,
                    },
                },
            },
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    return [
        Interaction(
            0, req, response(body, headers=openai_headers("req_3d4e5f6a7b8c4d9e0f1a2b3c4d5e6f7a"))
        )
    ]


def error_in_band_after_text() -> list[Interaction]:
    """After HTTP 200 and some text, a `data:` line holding only an error object, then the
    connection closes (PF 2.2, coder aibridge stream_error fixture; case 51)."""
    cid, model = "chatcmpl-Fq2Lx0pInBandErr01", "gpt-4o-mini-2024-07-18"
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": "", "refusal": None}),
        chunk(cid, model, {"content": "The three largest moons of Jupiter are"}),
        chunk(cid, model, {"content": " Ganymede, Callisto"}),
        {
            "error": {
                "message": "The server had an error while processing your request. Sorry about that!",
                "type": "server_error",
                "param": None,
                "code": None,
            }
        },
        done=False,
    )
    req = request(
        OPENAI_URL,
        {
            "model": "gpt-4o-mini",
            "messages": user("Name the three largest moons of Jupiter."),
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    return [
        Interaction(
            0, req, response(body, headers=openai_headers("req_4e5f6a7b8c9d4e0f1a2b3c4d5e6f7a8b"))
        )
    ]


def openrouter_finish_error() -> list[Interaction]:
    """OpenRouter: keep-alive comments, reasoning, text, then a chunk with
    `finish_reason: "error"` and `choices[0].error{code, message}` (PF 2.7, 5.5; case 3, 50)."""
    cid, model = "gen-1767225600-Qz7Xw3Lp9Vb2Nk5Rt8Ym", "google/gemini-2.5-flash"

    def r(delta: dict[str, Any], finish: str | None = None, **choice_extra: Any) -> dict[str, Any]:
        choice = {
            "index": 0,
            "delta": delta,
            "finish_reason": finish,
            "native_finish_reason": finish,
            "logprobs": None,
        }
        choice.update(choice_extra)
        return {
            "id": cid,
            "provider": "Google",
            "model": model,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "choices": [choice],
        }

    body = sse(
        ": OPENROUTER PROCESSING",
        ": OPENROUTER PROCESSING",
        r(
            {
                "role": "assistant",
                "content": "",
                "reasoning": "Summarising the article's three claims.",
            }
        ),
        r({"role": "assistant", "content": "The article argues"}),
        r({"role": "assistant", "content": " that"}),
        r(
            {"role": "assistant", "content": ""},
            finish="error",
            error={
                "code": 502,
                "message": "Provider returned error",
                "metadata": {
                    "provider_name": "Google",
                    "raw": "upstream connect error or disconnect/reset before headers",
                },
            },
        ),
    )
    req = request(
        "https://openrouter.ai/api/v1/chat/completions",
        {
            "model": model,
            "messages": user("Summarise this article in two sentences."),
            "reasoning": {"effort": "low"},
            "stream": True,
        },
        host_headers={"http-referer": "https://example.com", "x-title": "stream-harness"},
    )
    return [
        Interaction(
            0,
            req,
            response(body, headers={"content-type": "text/event-stream", "x-generation-id": cid}),
        )
    ]


def eof_without_done() -> list[Interaction]:
    """The connection closes after some text: no finish_reason, no [DONE] (case 6, 62;
    bug 31 transport truncation). The partial text must survive in the error."""
    cid, model = "o3Kx9Lm-2Npq7R-8f1e2d3c4b5a6978", "meta-llama/Llama-3.3-70B-Instruct-Turbo"

    def t(delta: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}],
            "model": model,
            "usage": None,
        }

    body = sse(
        t({"role": "assistant", "content": "Step 1: preheat"}),
        t({"role": "assistant", "content": " the oven to 180 °C."}),
        t({"role": "assistant", "content": " Step 2:"}),
        done=False,
    )
    req = request(
        "https://api.together.xyz/v1/chat/completions",
        {"model": model, "messages": user("How do I bake bread?"), "stream": True},
    )
    return [Interaction(0, req, response(body))]


def finish_without_done() -> list[Interaction]:
    """A finish reason, then EOF without [DONE]: the message is complete (many
    compatibles omit [DONE], PF 2.7)."""
    cid, model = "chatcmpl-d4e5f6a7b8c9d0e1", "gemma-3-12b-it"

    def lm(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    body = sse(
        lm({"role": "assistant", "content": "Ja"}),
        lm({"content": ", gerne."}),
        lm({}, finish="stop"),
        done=False,
    )
    req = request(
        "http://127.0.0.1:1234/v1/chat/completions",
        {"model": model, "messages": user("Kannst du mir helfen?"), "stream": True},
    )
    return [Interaction(0, req, response(body, headers={"content-type": "text/event-stream"}))]


def context_length_exceeded_400() -> list[Interaction]:
    """HTTP 400 before any stream: OpenAI's context_length_exceeded body (PF 4.3)."""
    body = json.dumps(
        {
            "error": {
                "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
        indent=2,
    ).encode("utf-8")
    req = request(
        OPENAI_URL,
        {"model": "gpt-4o", "messages": user("(a very long transcript, elided)"), "stream": True},
    )
    headers = {
        "content-type": "application/json",
        "x-request-id": "req_6a7b8c9d0e1f4a2b3c4d5e6f7a8b9c0d",
    }
    return [Interaction(0, req, response(body, status=400, headers=headers))]


def rate_limit_429() -> list[Interaction]:
    """HTTP 429 with retry-after and OpenAI's x-ratelimit-* headers (PF 5.2)."""
    body = json.dumps(
        {
            "error": {
                "message": "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 28000, Requested 4000. Please try again in 4s. Visit https://platform.openai.com/account/rate-limits to learn more.",
                "type": "tokens",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        },
        indent=2,
    ).encode("utf-8")
    req = request(OPENAI_URL, {"model": "gpt-4o", "messages": user("Hello"), "stream": True})
    headers = {
        "content-type": "application/json",
        "retry-after": "4",
        "x-request-id": "req_7b8c9d0e1f2a4b3c4d5e6f7a8b9c0d1e",
        "x-ratelimit-limit-requests": "500",
        "x-ratelimit-remaining-requests": "499",
        "x-ratelimit-reset-requests": "120ms",
        "x-ratelimit-limit-tokens": "30000",
        "x-ratelimit-remaining-tokens": "2000",
        "x-ratelimit-reset-tokens": "4s",
    }
    return [Interaction(0, req, response(body, status=429, headers=headers))]


def mistral_thinking_array() -> list[Interaction]:
    """Mistral (magistral) through an OpenAI-compatible gateway: `delta.content` as a list
    of `thinking` and `text` chunks, then plain strings; a `reference` chunk stays a
    provider block (PF 2.6; case 48)."""
    cid, model = "3b9c1e7a2d4f4a6b8c0d2e4f6a8b0c1d", "magistral-medium-2509"

    def m(
        delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if usage is not None:
            out["usage"] = usage
        return out

    def think(text: str) -> dict[str, Any]:
        return {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": text}]}]}

    body = sse(
        m({"role": "assistant", "content": ""}),
        m(think("Les ponts de Paris :")),
        m(think(" le plus ancien est le Pont Neuf.")),
        m({"content": [{"type": "text", "text": "Le Pont Neuf"}]}),
        m({"content": [{"type": "reference", "reference_ids": [1]}]}),
        m({"content": ", achevé en 1607."}),
        m(
            {"content": ""},
            finish="stop",
            usage={"prompt_tokens": 21, "total_tokens": 69, "completion_tokens": 48},
        ),
    )
    req = request(
        MISTRAL_VIA_GATEWAY,
        {
            "model": "magistral-medium-latest",
            "messages": user("Quel est le plus ancien pont de Paris ?"),
            "stream": True,
        },
    )
    return [
        Interaction(
            0,
            req,
            response(
                body, headers={"mistral-correlation-id": "019c2a3b-4c5d-7e6f-8a9b-0c1d2e3f4a5b"}
            ),
        )
    ]


def mistral_tool_null_id() -> list[Interaction]:
    """Mistral through an OpenAI-compatible gateway: a whole call without `index`, `id`
    the literal string "null" and `arguments` as an object (PF 2.6; case 49)."""
    cid, model = "7e1d3c5b9a2f4e6d8c0b1a3f5e7d9c2b", "mistral-small-latest"
    body = sse(
        {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "content": ""},
                    "finish_reason": None,
                    "logprobs": None,
                }
            ],
        },
        {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "null",
                                "function": {
                                    "name": "get_weather",
                                    "arguments": {"city": "Marseille"},
                                },
                            }
                        ],
                    },
                    "finish_reason": "tool_calls",
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": 90, "total_tokens": 112, "completion_tokens": 22},
        },
    )
    req = request(
        MISTRAL_VIA_GATEWAY,
        {
            "model": model,
            "messages": user("Weather in Marseille?"),
            "tools": [WEATHER_TOOL],
            "stream": True,
        },
    )
    return [
        Interaction(
            0,
            req,
            response(
                body, headers={"mistral-correlation-id": "019c2a3b-5d6e-7f80-9a1b-2c3d4e5f6a7b"}
            ),
        )
    ]


def moderation_after_usage() -> list[Interaction]:
    """Newer OpenAI payloads: after the usage-only chunk comes one more `choices: []` chunk
    whose only news is a top-level `moderation` object (input moderation results) and
    `usage: null`, results for the input and for the output (OpenAI Python
    `types/chat/chat_completion_chunk.py` `moderation`;
    research/corpus-visible-notes.md section 6). A consumer that takes the usage of the
    *last* chunk loses the token counts; one that expects `choices[0]` crashes."""
    cid, model = "chatcmpl-Fq2Lx0pModeration01", "gpt-5-2025-08-07"
    categories = ["harassment", "hate", "illicit", "self-harm", "sexual", "violence"]

    def results(score: float) -> dict[str, Any]:
        return {
            "type": "moderation_results",
            "model": "omni-moderation-latest",
            "results": [
                {
                    "type": "moderation_result",
                    "model": "omni-moderation-latest",
                    "flagged": False,
                    "categories": {c: False for c in categories},
                    "category_scores": {c: score for c in categories},
                    "category_applied_input_types": {c: ["text"] for c in categories},
                }
            ],
        }

    # Both halves, as the recorded stream has them: the input's results and the output's.
    moderation = {"input": results(0.00012), "output": results(0.00003)}
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": "", "refusal": None}, obfuscation="q1"),
        chunk(cid, model, {"content": "Lyon est"}, obfuscation="w2e"),
        chunk(cid, model, {"content": " à 465 km de Paris."}, obfuscation="r"),
        chunk(cid, model, {}, finish="stop", obfuscation="t5y6"),
        chunk(cid, model, choices=[], usage=openai_usage(21, 14, reasoning=0), obfuscation="u7"),
        chunk(cid, model, choices=[], usage=None, moderation=moderation, obfuscation="i8o9p"),
    )
    req = request(
        OPENAI_URL,
        {
            "model": "gpt-5",
            "messages": user("How far is Lyon from Paris?"),
            "stream": True,
            "stream_options": {"include_usage": True},
            "moderation": {"input": True, "output": True},
        },
    )
    return [
        Interaction(
            0, req, response(body, headers=openai_headers("req_2b8e4f6a1c3d4e5f8a9b0c1d2e3f4a5b"))
        )
    ]


def no_usage_tool_call() -> list[Interaction]:
    """A stream requested without `stream_options.include_usage`: no chunk ever carries
    usage (`usage` is absent, not null, as compatible servers send it), and the call
    ends with `finish_reason: "tool_calls"` then [DONE] (OpenAI Python
    `chat_completion_chunk.py`: usage "only present if include_usage"). The reference
    reports zero counts (events.Usage defaults); what a library reports instead (None, an
    estimate) is its convention, `usage.missing` in specs/adapter_conventions.yaml."""
    cid, model = "chatcmpl-Fq2Lx0pNoUsage0001", "gpt-4.1-mini-2025-04-14"
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": None}, openai_style=False),
        chunk(
            cid,
            model,
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_NoUsage7Hq2Lm4Xc",
                        "type": "function",
                        "function": {"name": "search_docs", "arguments": ""},
                    }
                ]
            },
            openai_style=False,
        ),
        chunk(
            cid,
            model,
            {"tool_calls": [{"index": 0, "function": {"arguments": '{"query":"stre'}}]},
            openai_style=False,
        ),
        chunk(
            cid,
            model,
            {"tool_calls": [{"index": 0, "function": {"arguments": 'aming","limit":3}'}}]},
            openai_style=False,
        ),
        chunk(cid, model, {}, finish="tool_calls", openai_style=False),
    )
    req = request(
        OPENAI_URL,
        {
            "model": "gpt-4.1-mini",
            "messages": user("Find the docs about streaming."),
            "tools": [SEARCH_TOOL],
            "stream": True,
        },
    )
    return [
        Interaction(
            0, req, response(body, headers=openai_headers("req_9d0c1b2a3f4e5d6c7b8a9f0e1d2c3b4a"))
        )
    ]


def forced_tool_choice_stop() -> list[Interaction]:
    """A forced tool choice (``tool_choice: {"type": "function", ...}``): OpenAI and Azure
    end it with ``finish_reason: "stop"`` while the message carries the call. The tool-call
    override of specs/stop_reasons.md makes it tool_use (issue 14)."""
    cid, model = "chatcmpl-Fc4Ed0TcForcedStop1", "gpt-4o-2024-08-06"
    first = {
        "index": 0,
        "id": "call_Fz3nR8qLc1Vt6YwK2hJ9sD4p",
        "type": "function",
        "function": {"name": "get_weather", "arguments": ""},
    }
    frags = ['{"', 'city":"', "Oslo", '"}']
    body = sse(
        chunk(
            cid,
            model,
            {"role": "assistant", "content": None, "tool_calls": [first], "refusal": None},
        ),
        *[
            chunk(cid, model, {"tool_calls": [{"index": 0, "function": {"arguments": f}}]})
            for f in frags
        ],
        chunk(cid, model, {}, finish="stop"),
        chunk(cid, model, choices=[], usage=openai_usage(74, 6)),
    )
    req = request(
        OPENAI_URL,
        {
            "model": "gpt-4o",
            "messages": user("Weather in Oslo?"),
            "tools": [WEATHER_TOOL],
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    return [
        Interaction(
            0, req, response(body, headers=openai_headers("req_0f1e2d3c4b5a49687766554433221100"))
        )
    ]


def known_id_after_later_call() -> list[Interaction]:
    """A fragment carrying an earlier call's id after a later call has started, at the
    later call's index (every call at index 0, as Ollama's compatible server sends them):
    the id continues its own call; a new call would repeat the id (contract C10)."""
    cid, model = "chatcmpl-733", "llama3.1:8b"

    def o(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "system_fingerprint": "fp_ollama",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def call(call_id: str, name: str | None, arguments: str) -> dict[str, Any]:
        function: dict[str, Any] = {"arguments": arguments}
        if name is not None:
            function = {"name": name, **function}
        return {"id": call_id, "index": 0, "type": "function", "function": function}

    body = sse(
        o(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("call_k3m9", "get_weather", '{"city":')],
            }
        ),
        o(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("call_p7v2", "get_time", '{"tz":')],
            }
        ),
        o(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("call_k3m9", None, '"Bergen"}')],
            }
        ),
        o(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("call_p7v2", None, '"Europe/Oslo"}')],
            }
        ),
        o({"role": "assistant", "content": ""}, finish="tool_calls"),
    )
    req = request(
        "http://localhost:11434/v1/chat/completions",
        {
            "model": model,
            "messages": user("Weather and time in Bergen?"),
            "tools": [WEATHER_TOOL, TIME_TOOL],
            "stream": True,
        },
    )
    return [Interaction(0, req, response(body, headers={"content-type": "text/event-stream"}))]


CASSETTES: dict[str, Callable[[], list[Interaction]]] = {
    f.__name__: f
    for f in (
        text_plain,
        cache_usage,
        deepseek_reasoning_cache,
        vllm_reasoning,
        tool_call_single,
        parallel_tool_calls_interleaved,
        groq_whole_tool_call,
        ollama_parallel_index0,
        late_tool_name,
        trailing_empty_args,
        empty_args_tool,
        length_stop,
        refusal,
        error_in_band_after_text,
        openrouter_finish_error,
        eof_without_done,
        finish_without_done,
        context_length_exceeded_400,
        rate_limit_429,
        mistral_thinking_array,
        mistral_tool_null_id,
        moderation_after_usage,
        no_usage_tool_call,
        forced_tool_choice_stop,
        known_id_after_later_call,
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
