"""Writes cassettes/mistral-chat/*.yaml: hand-made Mistral chat, FIM and agents streams.

Every body follows Mistral's documented wire format and what Mistral's own code records
(sources in each entry's docstring; specs/protocols/mistral-chat.md has the mapping):

- the mistralai SDK (client-python 3.7.0, ``models/completionchunk.py``,
  ``completionresponsestreamchoice.py``, ``deltamessage.py``, ``thinkchunk.py``,
  ``toolcall.py``, ``usageinfo.py``; ``utils/eventstreaming.py`` with the ``[DONE]``
  sentinel): ``data: {CompletionChunk}`` events, ``delta.content`` a string or a list of
  typed chunks, tool calls whose ``id`` defaults to ``"null"`` and ``index`` to 0;
- Mistral's OpenAPI ``FinishReason``: stop | length | model_length | error | tool_calls;
- mistralai/mistral-vibe ``tests/backend/data/mistral.py``: devstral streaming a call's
  arguments in fragments (the name only on the first, ``name: ""`` after, ids absent or
  ``"null"``), the ``p`` padding field, a usage-only final chunk with ``choices: []``.

None is copied from the recorded corpus (/work/shared/corpus/mistral). Ids, models and
headers are plausible but invented (Mistral ids: 32 hex characters for a completion, 9
alphanumerics for a tool call), and no request carries credentials. Regenerate and
refresh the golden files with::

    python cassettes/_generate/mistral_chat.py

then review ``git diff specs/expected/mistral-chat``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

# The SSE writer, request builder and tools are the Chat Completions generator's: the
# framing is the same, only the chunks differ.
import openai_completions  # noqa: E402
from openai_completions import TIME_TOOL, WEATHER_TOOL, request, sse, user  # noqa: E402

from stream_harness.recordings.cassette import Interaction, Response, dump_cassette  # noqa: E402
from stream_harness.recordings.golden import write_expected  # noqa: E402

PROTOCOL = "mistral-chat"
OUT = ROOT / "cassettes" / PROTOCOL

CHAT_URL = "https://api.mistral.ai/v1/chat/completions"
FIM_URL = "https://codestral.mistral.ai/v1/fim/completions"
AGENTS_URL = "https://api.mistral.ai/v1/agents/completions"
CREATED = 1767225600  # 2026-01-01T00:00:00Z


def usage(prompt: int, completion: int, **extra: Any) -> dict[str, Any]:
    """Mistral's ``UsageInfo``: prompt, total, completion, in the order the API sends them."""
    return {
        "prompt_tokens": prompt,
        "total_tokens": prompt + completion,
        "completion_tokens": completion,
        **extra,
    }


def chunk(
    cid: str,
    model: str,
    delta: dict[str, Any] | None = None,
    *,
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    choices: list[dict[str, Any]] | None = None,
    logprobs: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """One ``CompletionChunk``: usage only on the last chunk, as Mistral sends it."""
    if choices is None:
        choice: dict[str, Any] = {"index": 0, "delta": delta or {}, "finish_reason": finish}
        if logprobs:
            choice["logprobs"] = None
        choices = [choice]
    out: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "choices": choices,
    }
    if usage is not None:
        out["usage"] = usage
    out.update(extra)
    return out


def think(*texts: str, **extra: Any) -> dict[str, Any]:
    """A magistral thinking delta: ``content: [{type: thinking, thinking: [text chunks]}]``."""
    part: dict[str, Any] = {
        "type": "thinking",
        "thinking": [{"type": "text", "text": t} for t in texts],
    }
    part.update(extra)
    return {"content": [part]}


def response(body: bytes, *, status: int = 200, correlation: str) -> Response:
    reasons = {200: "OK", 400: "Bad Request", 422: "Unprocessable Entity", 429: "Too Many Requests"}
    content_type = "text/event-stream; charset=utf-8" if status == 200 else "application/json"
    headers = {
        "content-type": [content_type],
        "mistral-correlation-id": [correlation],
        "x-ratelimit-limit-tokens": ["500000"],
        "x-ratelimit-remaining-tokens": ["499000" if status != 429 else "0"],
    }
    return Response(status=status, reason=reasons[status], headers=headers, body=body)


def error_body(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def one(req_uri: str, body_json: dict[str, Any], body: bytes, correlation: str, status: int = 200) -> list[Interaction]:
    return [Interaction(0, request(req_uri, body_json), response(body, status=status, correlation=correlation))]


# ---------------------------------------------------------------------------
# One function per cassette; each returns its interactions.
# ---------------------------------------------------------------------------


def text_plain() -> list[Interaction]:
    """Plain text: a role chunk with `content: ""`, string deltas with multi-byte
    characters, the finish reason and the usage on the last chunk with `content: ""`,
    then `[DONE]` (mistralai SDK CompletionChunk; every api.mistral.ai stream)."""
    cid, model = "5f0c2a9e7b3d4c1e8a6f2b0d9c7e5a31", "mistral-small-latest"
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": ""}),
        chunk(cid, model, {"content": "Le café"}),
        chunk(cid, model, {"content": " est prêt"}),
        chunk(cid, model, {"content": " ☕ — bon appétit."}),
        chunk(cid, model, {"content": ""}, finish="stop", usage=usage(14, 11)),
    )
    req = {"model": model, "messages": user("Le café est prêt ?"), "stream": True}
    return one(CHAT_URL + "#stream", req, body, "019c3b4c-0a1b-7c2d-8e3f-4a5b6c7d8e9f")


def text_padding_usage_only() -> list[Interaction]:
    """Newer streams: a `p` padding string on chunks (mistral-vibe test data; the
    SDK keeps unknown fields), and the usage in a last chunk of its own with
    `choices: []` after the finish reason (mistral-vibe STREAMED_EMPTY_CHOICES_PARAMS),
    with `prompt_tokens_details.cached_tokens` (mistral-vibe backend _cached_tokens)."""
    cid, model = "8a1d3f5b7c9e4a2b6d8f0c1e3a5b7d9f", "mistral-medium-latest"
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": ""}),
        chunk(cid, model, {"content": "Three"}, p="abcdefghij"),
        chunk(cid, model, {"content": " words here"}, p="abcdefghijklmnopqrstuv"),
        chunk(cid, model, {"content": ""}, finish="stop", p="abc"),
        chunk(
            cid,
            model,
            choices=[],
            usage=usage(1210, 4, prompt_tokens_details={"cached_tokens": 1024}),
        ),
    )
    req = {"model": model, "messages": user("Answer in three words."), "stream": True}
    return one(CHAT_URL, req, body, "019c3b4c-1b2c-7d3e-9f4a-5b6c7d8e9fa0")


def _native(interactions: list[Interaction]) -> list[Interaction]:
    """The same interactions under Mistral's own URL (the SDK's `#stream` suffix dropped)."""
    return [
        replace(i, request=replace(i.request, uri=CHAT_URL)) for i in interactions
    ]


def thinking_array() -> list[Interaction]:
    """Magistral: `delta.content` as a list of `thinking` chunks (a nested list of text
    chunks), then `text` chunks and plain strings; a `reference` chunk stays a provider
    block (mistralai SDK ThinkChunk, ReferenceChunk; PF 2.6; case 48). The body is
    openai-completions' `mistral_thinking_array` (Mistral behind a gateway URL): the same
    bytes must give the same events under both protocols."""
    return _native(openai_completions.mistral_thinking_array())


def thinking_signature() -> list[Interaction]:
    """Magistral thinking ended by an empty `thinking: []` chunk (what magistral sends
    before its answer), a thinking chunk carrying a `signature` (mistralai SDK 3.x
    ThinkChunk.signature: "to replay some reasoning blocks across turns") and a
    `reference` inside the thinking list (ThinkChunk.thinking: text | reference |
    tool_reference chunks)."""
    cid, model = "c4e6a8b0d2f44a6c8e0b2d4f6a8c0e21", "magistral-small-latest"
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": ""}),
        chunk(cid, model, {"content": ""}),
        chunk(cid, model, think("Two primes")),
        chunk(cid, model, think(" sum to 10: 3+7 and 5+5.")),
        chunk(
            cid,
            model,
            {
                "content": [
                    {
                        "type": "thinking",
                        "thinking": [{"type": "reference", "reference_ids": [0]}],
                        "signature": "c2lnLW1hZ2lzdHJhbC0wMDE=",
                    }
                ]
            },
        ),
        chunk(cid, model, think()),
        chunk(cid, model, {"content": "3 + 7 and 5 + 5."}),
        chunk(cid, model, {"content": ""}, finish="stop", usage=usage(18, 61)),
    )
    req = {
        "model": model,
        "messages": user("Which pairs of primes sum to 10?"),
        "prompt_mode": "reasoning",
        "stream": True,
    }
    return one(CHAT_URL, req, body, "019c3b4c-2c3d-7e4f-8a5b-6c7d8e9fa0b1")


def tool_call_whole() -> list[Interaction]:
    """The classic Mistral tool call: the whole call in one chunk without `index`, a
    9-character id, `content: null`, finish reason `tool_calls` and the usage on the same
    chunk (mistralai SDK ToolCall: index optional; PF 2.6)."""
    cid, model = "e2a4c6e8a0b24d6f8a0c2e4a6c8e0a13", "mistral-small-latest"
    call = {
        "id": "Qx7Lm2Pw9",
        "function": {"name": "get_weather", "arguments": '{"city": "Lyon"}'},
    }
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": ""}, logprobs=True),
        chunk(
            cid,
            model,
            {"content": None, "tool_calls": [call]},
            finish="tool_calls",
            usage=usage(92, 21),
            logprobs=True,
        ),
    )
    req = {
        "model": model,
        "messages": user("Weather in Lyon?"),
        "tools": [WEATHER_TOOL],
        "tool_choice": "any",
        "stream": True,
    }
    return one(CHAT_URL + "#stream", req, body, "019c3b4c-3d4e-7f5a-9b6c-7d8e9fa0b1c2")


def tool_call_streamed() -> list[Interaction]:
    """Devstral streams a call's arguments: the first fragment has the id, the name and
    `arguments: ""` at index 0; the next ones `name: ""` and no id, or the id `"null"`
    (the SDK's default) (mistral-vibe STREAMED_TOOL_CONVERSATION_PARAMS)."""
    cid, model = "f1b3d5f7a9c14e2a8c6e0b4d2f6a8c01", "devstral-medium-latest"
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": ""}),
        chunk(cid, model, {"content": "Reading the file."}, p="abcd"),
        chunk(
            cid,
            model,
            {
                "tool_calls": [
                    {"id": "k3Vb8Nq1Z", "function": {"name": "read_file", "arguments": ""}, "index": 0}
                ]
            },
        ),
        chunk(
            cid,
            model,
            {"tool_calls": [{"function": {"name": "", "arguments": '{"path": "src/ma'}, "index": 0}]},
        ),
        chunk(
            cid,
            model,
            {
                "tool_calls": [
                    {"id": "null", "function": {"name": "", "arguments": 'in.py"}'}, "index": 0}
                ]
            },
        ),
        chunk(cid, model, {"content": ""}, finish="tool_calls", usage=usage(311, 40)),
    )
    tool = {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the workspace.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    }
    req = {"model": model, "messages": user("Open src/main.py"), "tools": [tool], "stream": True}
    return one(CHAT_URL, req, body, "019c3b4c-4e5f-7a6b-8c7d-8e9fa0b1c2d3")


def parallel_tool_calls() -> list[Interaction]:
    """Parallel calls, each whole, in one chunk's list, without `index`, the same function
    twice and another: each entry is a call of its own by its id (mistralai SDK ToolCall;
    `parallel_tool_calls` defaults to true)."""
    cid, model = "a7c9e1b3d5f74a9c2e4b6d8f0a2c4e65", "mistral-large-latest"
    calls = [
        {"id": "Rt4Ys8Ux1", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
        {"id": "Hb6Kc2Lz7", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
        {"id": "Pn3Wd9Fq5", "function": {"name": "get_time", "arguments": '{"tz": "Europe/Oslo"}'}},
    ]
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": ""}),
        chunk(cid, model, {"content": None, "tool_calls": calls}, finish="tool_calls", usage=usage(160, 64)),
    )
    req = {
        "model": model,
        "messages": user("Weather in Paris and Oslo, and the time in Oslo?"),
        "tools": [WEATHER_TOOL, TIME_TOOL],
        "parallel_tool_calls": True,
        "stream": True,
    }
    return one(CHAT_URL, req, body, "019c3b4c-5f6a-7b7c-9d8e-9fa0b1c2d3e4")


def parallel_null_ids() -> list[Interaction]:
    """Two whole calls of the same function, both with the id `"null"` and no `index`, in
    two chunks: Mistral names a function once per call, so the second named fragment is a
    second call, never more arguments for the first (mistral-vibe test data: continuations
    carry `name: ""`; pi treats "null" as no id, PF 2.6, case 49)."""
    cid, model = "b8d0f2a4c6e84b0d2f4a6c8e0b2d4f76", "mistral-small-latest"

    def call(city: str) -> dict[str, Any]:
        return {"id": "null", "function": {"name": "get_weather", "arguments": {"city": city}}}

    body = sse(
        chunk(cid, model, {"role": "assistant", "content": ""}),
        chunk(cid, model, {"content": None, "tool_calls": [call("Nice")]}),
        chunk(cid, model, {"content": None, "tool_calls": [call("Brest")]}),
        chunk(cid, model, {"content": ""}, finish="tool_calls", usage=usage(95, 44)),
    )
    req = {
        "model": model,
        "messages": user("Weather in Nice and in Brest?"),
        "tools": [WEATHER_TOOL],
        "stream": True,
    }
    return one(CHAT_URL, req, body, "019c3b4c-6a7b-7c8d-8e9f-a0b1c2d3e4f5")


def tool_null_id() -> list[Interaction]:
    """A whole call without `index`, `id` the literal string "null" and `arguments` as an
    object (mistralai SDK ToolCall id default "null", FunctionCall.arguments Dict | str;
    PF 2.6; case 49); the body of openai-completions' `mistral_tool_null_id`."""
    return _native(openai_completions.mistral_tool_null_id())


def _finish_with(reason: str, cid: str, model: str, texts: list[str], u: dict[str, Any]) -> bytes:
    return sse(
        chunk(cid, model, {"role": "assistant", "content": ""}),
        *(chunk(cid, model, {"content": t}) for t in texts),
        chunk(cid, model, {"content": ""}, finish=reason, usage=u),
    )


def length_stop() -> list[Interaction]:
    """`max_tokens` reached: finish reason `length` (mistralai SDK FinishReason)."""
    cid, model = "d9f1b3d5f7a94c1e3a5c7e9b1d3f5a87", "mistral-small-latest"
    body = _finish_with("length", cid, model, ["Once upon", " a time, in"], usage(12, 4))
    req = {"model": model, "messages": user("Tell a story."), "max_tokens": 4, "stream": True}
    return one(CHAT_URL, req, body, "019c3b4c-7b8c-7d9e-9fa0-b1c2d3e4f5a6")


def model_length_stop() -> list[Interaction]:
    """The context window filled during generation: finish reason `model_length`, with
    prompt + completion equal to the model's context length (Mistral OpenAPI FinishReason;
    a voxtral response recorded so in third-party tests, index id 68429219406)."""
    cid, model = "e0a2c4e6a8b04d2f4b6d8f0a2c4e6b98", "open-mistral-nemo"
    body = _finish_with(
        "model_length", cid, model, ["…and so the", " summary continues"], usage(131060, 12)
    )
    req = {"model": model, "messages": user("Summarise the attached log."), "stream": True}
    return one(CHAT_URL, req, body, "019c3b4c-8c9d-7eaf-8a0b-c2d3e4f5a6b7")


def finish_error() -> list[Interaction]:
    """The server ends the choice with finish reason `error` after some text and no error
    object (mistralai SDK FinishReason; mistralai/client-python#74, where the old SDK
    rejected the value)."""
    cid, model = "f1b3d5f7a9c15e3a5c7e9b1d3f5a7ca9", "mistral-medium-latest"
    body = _finish_with("error", cid, model, ["Here is the first", " part"], usage(40, 6))
    req = {"model": model, "messages": user("Write a long answer."), "stream": True}
    return one(CHAT_URL, req, body, "019c3b4c-9dae-7fb0-9b1c-d3e4f5a6b7c8")


def error_mid_stream() -> list[Interaction]:
    """An error after HTTP 200: one data event holding Mistral's error object
    (`{"object":"error", message, type, param, code}`, the body its API answers errors
    with) after some text, and no [DONE]. UNVERIFIED in a recording: Mistral documents no
    in-band error, and this is the shape its servers give errors; the text before it
    must be kept."""
    cid, model = "a2c4e6a8b0d26f4b6d8f0a2c4e6b8dba", "mistral-large-latest"
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": ""}),
        chunk(cid, model, {"content": "The three laws"}),
        {
            "object": "error",
            "message": "Internal server error",
            "type": "internal_server_error",
            "param": None,
            "code": "1000",
        },
        done=False,
    )
    req = {"model": model, "messages": user("List the three laws of motion."), "stream": True}
    return one(CHAT_URL, req, body, "019c3b4c-aebf-70c1-8c2d-e4f5a6b7c8d9")


def stream_cut() -> list[Interaction]:
    """The connection dropped in the middle of a streamed tool call: text, the call's
    first fragments (devstral style), then nothing: no finish reason, no [DONE]. The text
    and the partial call are kept; the arguments are cut (conformance case 6, 62)."""
    cid, model = "b3d5f7a9c1e37a5c7e9b1d3f5a7c9ecb", "devstral-small-latest"
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": ""}),
        chunk(cid, model, {"content": "Listing the directory."}),
        chunk(
            cid,
            model,
            {
                "tool_calls": [
                    {"id": "Mv5Tr7Ka2", "function": {"name": "list_dir", "arguments": ""}, "index": 0}
                ]
            },
        ),
        chunk(
            cid,
            model,
            {"tool_calls": [{"function": {"name": "", "arguments": '{"path": "do'}, "index": 0}]},
        ),
        done=False,
    )
    req = {"model": model, "messages": user("What is in docs/?"), "stream": True}
    return one(CHAT_URL, req, body, "019c3b4c-bfc0-71d2-9d3e-f5a6b7c8d9ea")


def fim_stream() -> list[Interaction]:
    """Codestral fill-in-the-middle streams the same CompletionChunk events
    (mistralai SDK fim.stream -> EventStream[CompletionEvent], codestral.mistral.ai)."""
    cid, model = "c4e6a8b0d2f48b6d8f0a2c4e6b8dafdc", "codestral-latest"
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": ""}),
        chunk(cid, model, {"content": "    return a"}),
        chunk(cid, model, {"content": " + b\n"}),
        chunk(cid, model, {"content": ""}, finish="stop", usage=usage(19, 8)),
    )
    req = {
        "model": model,
        "prompt": "def add(a: int, b: int) -> int:\n",
        "suffix": "\n\nprint(add(1, 2))\n",
        "stream": True,
    }
    return one(FIM_URL + "#stream", req, body, "019c3b4c-c0d1-72e3-8e4f-a6b7c8d9eafb")


def agents_stream() -> list[Interaction]:
    """An agent (`agent_id` instead of `model`) streams the same chunks: text, then a
    whole tool call (mistralai SDK agents.stream -> EventStream[CompletionEvent])."""
    cid, model = "d5f7a9c1e3b59c7e9b1d3f5a7c9ebf0e", "mistral-medium-2508"
    call = {"id": "Zq1Xw3Ev5", "function": {"name": "get_time", "arguments": '{"tz": "Asia/Tokyo"}'}, "index": 0}
    body = sse(
        chunk(cid, model, {"role": "assistant", "content": ""}),
        chunk(cid, model, {"content": "Checking the clock."}),
        chunk(cid, model, {"content": None, "tool_calls": [call]}),
        chunk(cid, model, {"content": ""}, finish="tool_calls", usage=usage(204, 30)),
    )
    req = {
        "agent_id": "ag_0197f3c2a1b47e6d9c8b7a6f5e4d3c2b",
        "messages": user("What time is it in Tokyo?"),
        "stream": True,
    }
    return one(AGENTS_URL + "#stream", req, body, "019c3b4c-d1e2-73f4-9f5a-b7c8d9eafb0c")


def context_overflow_400() -> list[Interaction]:
    """HTTP 400 before the stream: Mistral's error object with the overflow message
    ("Prompt contains N tokens ... too large for model with M maximum context length",
    pi overflow pattern 18; the corpus shows the same shape with other numbers)."""
    body = error_body(
        {
            "object": "error",
            "message": "Prompt contains 40120 tokens and 0 draft tokens, too large for model with 32768 maximum context length",
            "type": "invalid_request_invalid_args",
            "param": None,
            "code": "3051",
        }
    )
    req = {"model": "open-mistral-7b", "messages": user("…"), "stream": True}
    return one(CHAT_URL, req, body, "019c3b4c-e2f3-7405-8a6b-c8d9eafb0c1d", status=400)


def rate_limit_429() -> list[Interaction]:
    """HTTP 429 with Mistral's error object, type `rate_limited`, code "1300" and
    `raw_status_code` (raycast/extensions#31107, cline/cline#9085)."""
    body = error_body(
        {
            "object": "error",
            "message": "Rate limit exceeded",
            "type": "rate_limited",
            "param": None,
            "code": "1300",
            "raw_status_code": 429,
        }
    )
    req = {"model": "mistral-small-latest", "messages": user("Hello"), "stream": True}
    return one(CHAT_URL, req, body, "019c3b4c-f304-7516-9b7c-d9eafb0c1d2e", status=429)


def rate_limit_429_gateway() -> list[Interaction]:
    """HTTP 429 from Mistral's API gateway: a bare `{"message": ...}` body
    (pydantic/pydantic-ai#1885, dnakov/anon-kode#53)."""
    body = error_body({"message": "Requests rate limit exceeded"})
    req = {"model": "mistral-medium-latest", "messages": user("Hello"), "stream": True}
    return one(CHAT_URL, req, body, "019c3b4c-0415-7627-8c8d-eafb0c1d2e3f", status=429)


def validation_422() -> list[Interaction]:
    """HTTP 422: FastAPI's `{"detail": [{type, loc, msg, input}]}` (the mistralai SDK's
    HTTPValidationError for status 422; two error body shapes, Mistral's API)."""
    body = error_body(
        {
            "detail": [
                {
                    "type": "missing",
                    "loc": ["body", "messages"],
                    "msg": "Field required",
                    "input": {"model": "mistral-small-latest", "stream": True},
                }
            ]
        }
    )
    req = {"model": "mistral-small-latest", "stream": True}
    return one(CHAT_URL, req, body, "019c3b4c-1526-7738-9d9e-fb0c1d2e3f40", status=422)


CASSETTES: dict[str, Callable[[], list[Interaction]]] = {
    f.__name__: f
    for f in (
        text_plain,
        text_padding_usage_only,
        thinking_array,
        thinking_signature,
        tool_call_whole,
        tool_call_streamed,
        parallel_tool_calls,
        parallel_null_ids,
        tool_null_id,
        length_stop,
        model_length_stop,
        finish_error,
        error_mid_stream,
        stream_cut,
        fim_stream,
        agents_stream,
        context_overflow_400,
        rate_limit_429,
        rate_limit_429_gateway,
        validation_422,
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
