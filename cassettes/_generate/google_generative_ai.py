"""Writes the bundled google-generative-ai cassettes from the documented wire format.

Run from the repo root: ``python cassettes/_generate/google_generative_ai.py``, then
refresh specs/expected/google-generative-ai/ with ``stream_harness.recordings.golden.write_expected`` (the
golden test prints the exact line) and review the diff.

Every stream is written by hand from the Gemini API reference (GenerateContentResponse,
Part, FunctionCall/PartialArg, UsageMetadata, FinishReason) and the facts in
/work/shared/research/provider-facts.md (1.4 the JSON-array form, 2.4 the chunk taxonomy,
3.1 finish reasons, 4.3 the overflow message, 5.3 errors and RetryInfo); none is copied
from the recorded corpus. The shapes follow what the real API sends:

- ``?alt=sse``: ``data: {...}\\r\\n\\r\\n`` with Google's JSON spacing (``": "`` after a
  key, no space after ``,``), ``content-type: text/event-stream``, no sentinel at the end;
- without ``alt=sse``: one pretty-printed JSON array, elements joined by ``\\n,\\r\\n``,
  ``content-type: application/json; charset=UTF-8`` (corpus-visible-notes.md section 4);
- errors on a streaming request: HTTP 4xx whose body is a plain JSON error object even
  though the content type says ``text/event-stream``;
- Gemini sends no ``Retry-After`` and no rate-limit headers: the delay is only in the
  body's ``RetryInfo.retryDelay`` (provider-facts.md 5.3);
- the request has no ``stream`` field: the ``:streamGenerateContent`` method is what asks
  for a stream, and the API rejects unknown fields.

Ids, response ids and thought signatures are made up (deterministic, from a label); there
are no keys (the ``x-goog-api-key`` header is left out, as llm-gemini's recordings do),
project numbers or cookies.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from stream_harness.recordings.cassette import Interaction, Request, Response, dump_cassette  # noqa: E402

OUT = ROOT / "cassettes" / "google-generative-ai"
API = "https://generativelanguage.googleapis.com/v1beta/models"
VERTEX = "https://aiplatform.googleapis.com/v1/projects/example-project/locations/global/publishers/google/models"
FLASH = "gemini-2.5-flash"
PRO = "gemini-2.5-pro"
GEMINI3 = "gemini-3-pro-preview"


def opaque(label: str, size: int) -> str:
    """A made-up base64 blob of ``size`` bytes (thought signatures)."""
    raw = b""
    counter = 0
    while len(raw) < size:
        raw += hashlib.sha256(f"{label}:{counter}".encode()).digest()
        counter += 1
    return base64.b64encode(raw[:size]).decode()


def response_id(label: str) -> str:
    """A 23-character id shaped like Gemini's responseId."""
    digest = hashlib.sha256(label.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode()[:23]


def google_json(value: Any) -> str:
    # Google's SSE chunks put a space after ":" but none after "," (seen in every
    # recorded alt=sse stream).
    return json.dumps(value, ensure_ascii=False, separators=(",", ": "))


def sse(*chunks: dict[str, Any]) -> str:
    return "".join(f"data: {google_json(c)}\r\n\r\n" for c in chunks)


def array_body(*chunks: dict[str, Any]) -> str:
    # The non-SSE form: a pretty-printed array streamed element by element.
    return "[" + "\n,\r\n".join(json.dumps(c, ensure_ascii=False, indent=2) for c in chunks) + "\n]"


def usage(
    prompt: int,
    candidates: int | None = None,
    thoughts: int | None = None,
    *,
    cached: int | None = None,
    tool_use: int | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"promptTokenCount": prompt}
    if candidates is not None:
        out["candidatesTokenCount"] = candidates
    total = prompt + (candidates or 0) + (thoughts or 0) + (tool_use or 0)
    out["totalTokenCount"] = total
    if cached is not None:
        out["cachedContentTokenCount"] = cached
    out["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
    if cached is not None:
        out["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": cached}]
    if tool_use is not None:
        out["toolUsePromptTokenCount"] = tool_use
        out["toolUsePromptTokensDetails"] = [{"modality": "TEXT", "tokenCount": tool_use}]
    if thoughts is not None:
        out["thoughtsTokenCount"] = thoughts
    return out


def chunk(
    parts: list[dict[str, Any]] | None,
    model: str,
    rid: str,
    u: dict[str, Any] | None,
    *,
    finish: str | None = None,
    **candidate_extra: Any,
) -> dict[str, Any]:
    candidate: dict[str, Any] = {}
    if parts is not None:
        candidate["content"] = {"parts": parts, "role": "model"}
    if finish is not None:
        candidate["finishReason"] = finish
    candidate["index"] = 0
    candidate.update(candidate_extra)
    out: dict[str, Any] = {"candidates": [candidate]}
    if u is not None:
        out["usageMetadata"] = u
    out["modelVersion"] = model
    out["responseId"] = rid
    return out


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


WEATHER_TOOL = {
    "functionDeclarations": [
        {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {"type": "string"},
                    "unit": {"type": "string", "enum": ["C", "F"]},
                },
                "required": ["location"],
            },
        }
    ]
}
TIME_TOOL = {
    "functionDeclarations": [
        {
            "name": "get_time",
            "description": "Current local time in an IANA time zone.",
            "parameters": {
                "type": "object",
                "properties": {"tz": {"type": "string"}},
                "required": ["tz"],
            },
        }
    ]
}


def request(model: str, body: dict[str, Any], *, sse_form: bool = True, base: str = API) -> Request:
    uri = f"{base}/{model}:streamGenerateContent" + ("?alt=sse" if sse_form else "")
    headers = {
        "accept": ["*/*"],
        "content-type": ["application/json"],
        "host": [uri.split("/")[2]],
        "user-agent": ["google-genai-sdk/1.20.0 gl-python/3.12.3"],
        "x-goog-api-client": ["google-genai-sdk/1.20.0 gl-python/3.12.3"],
    }
    return Request(method="POST", uri=uri, headers=headers, body=google_json(body).encode())


COMMON_HEADERS = {
    "alt-svc": ['h3=":443"; ma=2592000,h3-29=":443"; ma=2592000'],
    "date": ["Mon, 03 Nov 2025 10:15:00 GMT"],
    "server": ["scaffolding on HTTPServer2"],
    "server-timing": ["gfet4t7; dur=812"],
    "vary": ["Origin", "X-Origin", "Referer"],
    "x-content-type-options": ["nosniff"],
    "x-frame-options": ["SAMEORIGIN"],
    "x-xss-protection": ["0"],
}


def stream_response(body: str, *, sse_form: bool = True) -> Response:
    headers = dict(COMMON_HEADERS)
    if sse_form:
        headers["content-disposition"] = ["attachment"]
        headers["content-type"] = ["text/event-stream"]
    else:
        headers["content-type"] = ["application/json; charset=UTF-8"]
    headers["transfer-encoding"] = ["chunked"]
    return Response(status=200, reason="OK", headers=headers, body=body.encode())


def error_response(status: int, reason: str, error: dict[str, Any]) -> Response:
    # An error on a streaming request is one pretty-printed JSON object (not an SSE event),
    # labelled text/event-stream all the same (mirascope corpus cassettes, 400 and 404).
    body = (json.dumps({"error": error}, indent=2) + "\n").encode()
    headers = dict(COMMON_HEADERS)
    headers["content-length"] = [str(len(body))]
    headers["content-type"] = ["text/event-stream"]
    return Response(status=status, reason=reason, headers=headers, body=body)


# ---------------------------------------------------------------------------
# The cassettes
# ---------------------------------------------------------------------------


def plain_text() -> Interaction:
    rid = response_id("plain_text")
    body = sse(
        chunk([{"text": "The capital"}], FLASH, rid, usage(8, thoughts=21)),
        chunk([{"text": " of France is"}], FLASH, rid, usage(8, thoughts=21)),
        chunk([{"text": " Paris."}], FLASH, rid, usage(8, 7, 21), finish="STOP"),
    )
    req = request(FLASH, {"contents": [user("What is the capital of France?")]})
    return Interaction(0, req, stream_response(body))


def thinking_signature() -> Interaction:
    # Thought summaries (thought: true), then the answer; the thoughtSignature rides on the
    # first text part only (provider-facts.md 2.4, case 35).
    rid = response_id("thinking_signature")
    sig = opaque("thinking_signature", 180)
    body = sse(
        chunk(
            [
                {
                    "text": "**Comparing the two numbers**\n\nI line up the decimals: 9.11 and 9.90.",
                    "thought": True,
                }
            ],
            PRO,
            rid,
            usage(14, thoughts=96),
        ),
        chunk(
            [{"text": " The tenths digit decides: 9 beats 1.", "thought": True}],
            PRO,
            rid,
            usage(14, thoughts=188),
        ),
        chunk([{"text": "9.9 is larger", "thoughtSignature": sig}], PRO, rid, usage(14, 4, 188)),
        chunk([{"text": " than 9.11."}], PRO, rid, usage(14, 8, 188), finish="STOP"),
    )
    req = request(
        PRO,
        {
            "contents": [user("Which is larger, 9.11 or 9.9?")],
            "generationConfig": {"thinkingConfig": {"includeThoughts": True}},
        },
    )
    return Interaction(0, req, stream_response(body))


def tool_call() -> Interaction:
    # Gemini 3: the call has an id and a thoughtSignature; the finishReason comes in a
    # last chunk with an empty text part (as in the recorded Gemini 3 streams).
    rid = response_id("tool_call")
    sig = opaque("tool_call", 240)
    body = sse(
        chunk(
            [
                {
                    "functionCall": {
                        "name": "get_weather",
                        "args": {"location": "Paris", "unit": "C"},
                        "id": "5yq0kd2m",
                    },
                    "thoughtSignature": sig,
                }
            ],
            GEMINI3,
            rid,
            usage(61, 18, 143),
        ),
        chunk([{"text": ""}], GEMINI3, rid, usage(61, 18, 143), finish="STOP"),
    )
    req = request(
        GEMINI3, {"contents": [user("Weather in Paris, in Celsius?")], "tools": [WEATHER_TOOL]}
    )
    return Interaction(0, req, stream_response(body))


def parallel_tool_calls() -> Interaction:
    # Two calls in one chunk (case 37: STOP with function calls is tool_use); only the
    # first carries the signature, and it stays on that call.
    rid = response_id("parallel_tool_calls")
    sig = opaque("parallel_tool_calls", 120)
    body = sse(
        chunk(
            [
                {
                    "functionCall": {
                        "name": "get_weather",
                        "args": {"location": "Boston"},
                        "id": "k3n9w1qa",
                    },
                    "thoughtSignature": sig,
                },
                {
                    "functionCall": {
                        "name": "get_time",
                        "args": {"tz": "America/New_York"},
                        "id": "p0x7c2vd",
                    }
                },
            ],
            GEMINI3,
            rid,
            usage(88, 31, 97),
        ),
        chunk([{"text": ""}], GEMINI3, rid, usage(88, 31, 97), finish="STOP"),
    )
    req = request(
        GEMINI3,
        {
            "contents": [user("Weather and local time in Boston?")],
            "tools": [WEATHER_TOOL, TIME_TOOL],
        },
    )
    return Interaction(0, req, stream_response(body))


def function_call_without_id() -> Interaction:
    # Gemini 2.x sends no functionCall.id (case 36): the call gets a synthetic one.
    rid = response_id("function_call_without_id")
    body = sse(
        chunk(
            [{"functionCall": {"name": "get_time", "args": {"tz": "Europe/Berlin"}}}],
            "gemini-2.0-flash",
            rid,
            usage(41, 6),
            finish="STOP",
        )
    )
    req = request(
        "gemini-2.0-flash", {"contents": [user("What time is it in Berlin?")], "tools": [TIME_TOOL]}
    )
    return Interaction(0, req, stream_response(body))


def duplicate_ids() -> Interaction:
    # Two calls sharing one id, as a proxy that numbers calls per chunk sends them
    # (case 36): the second gets a synthetic id so that ids stay unique.
    rid = response_id("duplicate_ids")
    body = sse(
        chunk(
            [
                {
                    "functionCall": {
                        "name": "get_weather",
                        "args": {"location": "Oslo"},
                        "id": "call_0",
                    }
                }
            ],
            FLASH,
            rid,
            usage(52, 9, 40),
        ),
        chunk(
            [
                {
                    "functionCall": {
                        "name": "get_weather",
                        "args": {"location": "Bergen"},
                        "id": "call_0",
                    }
                }
            ],
            FLASH,
            rid,
            usage(52, 18, 40),
            finish="STOP",
            finishMessage="Model generated function call(s).",
        ),
    )
    req = request(
        FLASH, {"contents": [user("Weather in Oslo and Bergen?")], "tools": [WEATHER_TOOL]}
    )
    return Interaction(0, req, stream_response(body))


def partial_args() -> Interaction:
    # Vertex with toolConfig.functionCallingConfig.streamFunctionCallArguments: the first
    # part names the call (willContinue), partialArgs follow, an empty functionCall ends
    # it (provider-facts.md 2.4; the shape Vercel AI's GoogleJSONAccumulator reads).
    rid = response_id("partial_args")
    sig = opaque("partial_args", 96)
    body = sse(
        chunk(
            [
                {
                    "functionCall": {
                        "name": "create_event",
                        "willContinue": True,
                        "id": "f3v8a1rt",
                    },
                    "thoughtSignature": sig,
                }
            ],
            GEMINI3,
            rid,
            usage(120, 3, 210),
        ),
        chunk(
            [
                {
                    "functionCall": {
                        "partialArgs": [
                            {"jsonPath": "$.title", "stringValue": "Team ", "willContinue": True}
                        ],
                        "willContinue": True,
                    }
                }
            ],
            GEMINI3,
            rid,
            usage(120, 7, 210),
        ),
        chunk(
            [
                {
                    "functionCall": {
                        "partialArgs": [
                            {"jsonPath": "$.title", "stringValue": "sync \u2014 Q4"},
                            {"jsonPath": "$.duration_minutes", "numberValue": 45},
                            {"jsonPath": "$.attendees[0].email", "stringValue": "ana@example.com"},
                            {"jsonPath": "$.attendees[0].optional", "boolValue": False},
                            {"jsonPath": "$.attendees[1].email", "stringValue": "li@example.com"},
                        ],
                        "willContinue": True,
                    }
                }
            ],
            GEMINI3,
            rid,
            usage(120, 29, 210),
        ),
        chunk(
            [
                {
                    "functionCall": {
                        "partialArgs": [{"jsonPath": "$.location", "nullValue": "NULL_VALUE"}],
                        "willContinue": True,
                    }
                }
            ],
            GEMINI3,
            rid,
            usage(120, 33, 210),
        ),
        chunk([{"functionCall": {}}], GEMINI3, rid, usage(120, 34, 210), finish="STOP"),
    )
    req = request(
        GEMINI3,
        {
            "contents": [
                user(
                    "Book a 45 minute Team sync \u2014 Q4 with ana@example.com and li@example.com."
                )
            ],
            "tools": [
                {
                    "functionDeclarations": [
                        {
                            "name": "create_event",
                            "description": "Create a calendar event.",
                            "parameters": {
                                "type": "object",
                                "properties": {
                                    "title": {"type": "string"},
                                    "duration_minutes": {"type": "number"},
                                    "attendees": {"type": "array", "items": {"type": "object"}},
                                    "location": {"type": "string", "nullable": True},
                                },
                            },
                        }
                    ]
                }
            ],
            "toolConfig": {
                "functionCallingConfig": {"mode": "AUTO", "streamFunctionCallArguments": True}
            },
        },
        base=VERTEX,
    )
    return Interaction(0, req, stream_response(body))


def max_tokens() -> Interaction:
    rid = response_id("max_tokens")
    body = sse(
        chunk(
            [{"text": "Here are the planets in order: Mercury, Venus,"}],
            FLASH,
            rid,
            usage(12, 11, 17),
        ),
        chunk([{"text": " Earth, Mars"}], FLASH, rid, usage(12, 14, 17), finish="MAX_TOKENS"),
    )
    req = request(
        FLASH,
        {
            "contents": [user("List the planets in order.")],
            "generationConfig": {"maxOutputTokens": 31},
        },
    )
    return Interaction(0, req, stream_response(body))


def safety() -> Interaction:
    # The answer is stopped by the safety filter after it started (SAFETY -> error; the
    # partial text is kept, the ratings go to a provider block).
    rid = response_id("safety")
    ratings = [
        {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True},
    ]
    body = sse(
        chunk([{"text": "To pick a lock you"}], FLASH, rid, usage(15, 5)),
        chunk(None, FLASH, rid, usage(15, 5), finish="SAFETY", safetyRatings=ratings),
    )
    req = request(FLASH, {"contents": [user("How do I pick my neighbour's lock?")]})
    return Interaction(0, req, stream_response(body))


def prompt_blocked() -> Interaction:
    # case 39: promptFeedback.blockReason and no candidates at all.
    rid = response_id("prompt_blocked")
    body = sse(
        {
            "promptFeedback": {
                "blockReason": "PROHIBITED_CONTENT",
                "safetyRatings": [
                    {
                        "category": "HARM_CATEGORY_DANGEROUS_CONTENT",
                        "probability": "HIGH",
                        "blocked": True,
                    }
                ],
            },
            "usageMetadata": {
                "promptTokenCount": 23,
                "totalTokenCount": 23,
                "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 23}],
            },
            "modelVersion": FLASH,
            "responseId": rid,
        }
    )
    req = request(FLASH, {"contents": [user("(a prompt the filter blocks)")]})
    return Interaction(0, req, stream_response(body))


def midstream_503() -> Interaction:
    # case 40: after a 200 and some text, an error object arrives as a data event.
    rid = response_id("midstream_503")
    body = sse(
        chunk([{"text": "Photosynthesis turns light"}], PRO, rid, usage(9, 4, 64)),
        chunk([{"text": " into chemical energy"}], PRO, rid, usage(9, 8, 64)),
    ) + (
        "data: "
        + google_json(
            {
                "error": {
                    "code": 503,
                    "message": "The model is overloaded. Please try again later.",
                    "status": "UNAVAILABLE",
                }
            }
        )
        + "\r\n\r\n"
    )
    req = request(PRO, {"contents": [user("Explain photosynthesis in one paragraph.")]})
    return Interaction(0, req, stream_response(body))


def http_400_context_overflow() -> Interaction:
    # provider-facts.md 4.3: the overflow message of the Gemini API.
    error = {
        "code": 400,
        "message": "The input token count (2800010) exceeds the maximum number of tokens allowed (1048575).",
        "status": "INVALID_ARGUMENT",
    }
    req = request(FLASH, {"contents": [user("(a 2.8 million token document)")]})
    return Interaction(0, req, error_response(400, "Bad Request", error))


def http_429_rate_limit() -> Interaction:
    # provider-facts.md 5.3 / case 41: no Retry-After header; RetryInfo.retryDelay in the
    # body, a per-minute quota (retryable).
    error = {
        "code": 429,
        "message": (
            "You exceeded your current quota, please check your plan and billing details. For more "
            "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. "
            "To monitor your current usage, head to: https://ai.dev/usage?tab=rate-limit. \n"
            "* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, "
            "limit: 10, model: gemini-2.5-flash\nPlease retry in 45.837906927s."
        ),
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.Help",
                "links": [
                    {
                        "description": "Learn more about Gemini API quotas",
                        "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
                    }
                ],
            },
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                        "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                        "quotaDimensions": {"location": "global", "model": "gemini-2.5-flash"},
                        "quotaValue": "10",
                    }
                ],
            },
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "45.837906927s"},
        ],
    }
    req = request(FLASH, {"contents": [user("Hello")]})
    return Interaction(0, req, error_response(429, "Too Many Requests", error))


def cache_usage() -> Interaction:
    # promptTokenCount includes cachedContentTokenCount: input = 4210 - 4096 = 114.
    rid = response_id("cache_usage")
    body = sse(
        chunk([{"text": "Section 3 covers"}], FLASH, rid, usage(4210, 4, 35, cached=4096)),
        chunk(
            [{"text": " the termination clauses."}],
            FLASH,
            rid,
            usage(4210, 9, 35, cached=4096),
            finish="STOP",
        ),
    )
    req = request(
        FLASH,
        {
            "contents": [user("Which section covers termination?")],
            "cachedContent": "cachedContents/contract-2025-q4",
        },
    )
    return Interaction(0, req, stream_response(body))


def json_array() -> Interaction:
    # The non-SSE form (no alt=sse; provider-facts.md 1.4): thought summary, answer, and a
    # last element with an empty text part carrying the thoughtSignature (Gemini 3 puts
    # the signature on the last part; it belongs to the text block before it).
    rid = response_id("json_array")
    model = "gemini-3-flash-preview"
    sig = opaque("json_array", 160)
    body = array_body(
        chunk(
            [
                {
                    "text": "**Naming a pelican**\n\nShort, friendly, a little nautical.\n\n",
                    "thought": True,
                }
            ],
            model,
            rid,
            {
                "promptTokenCount": 11,
                "totalTokenCount": 11,
                "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 11}],
            },
        ),
        chunk([{"text": "Captain Scoop"}], model, rid, usage(11, 3, 188)),
        chunk(
            [{"text": "", "thoughtSignature": sig}], model, rid, usage(11, 3, 188), finish="STOP"
        ),
    )
    req = request(model, {"contents": [user("Name a pet pelican. Just the name.")]}, sse_form=False)
    return Interaction(0, req, stream_response(body, sse_form=False))


def unknown_finish_reason() -> Interaction:
    # case 38: a FinishReason the table does not know (ESCALATION appears in one
    # third-party list, provider-facts.md 3.1) ends in error, never an exception.
    rid = response_id("unknown_finish_reason")
    body = sse(
        chunk([{"text": "I can help with part of that."}], FLASH, rid, usage(19, 8)),
        chunk(None, FLASH, rid, usage(19, 8), finish="ESCALATION"),
    )
    req = request(FLASH, {"contents": [user("Transfer me to a human agent.")]})
    return Interaction(0, req, stream_response(body))


def code_execution() -> Interaction:
    # Server-side code execution: executableCode and codeExecutionResult parts are kept
    # as provider blocks where they arrived; toolUsePromptTokenCount counts as input.
    rid = response_id("code_execution")
    model = "gemini-3-flash-preview"
    sig = opaque("code_execution", 120)
    body = sse(
        chunk(
            [
                {
                    "executableCode": {
                        "language": "PYTHON",
                        "code": "print(sum(range(1, 101)))",
                        "id": "x4c8m2pe",
                    },
                    "thoughtSignature": sig,
                }
            ],
            model,
            rid,
            usage(30, 22, 58),
        ),
        chunk(
            [
                {
                    "codeExecutionResult": {
                        "outcome": "OUTCOME_OK",
                        "output": "5050\n",
                        "id": "x4c8m2pe",
                    }
                }
            ],
            model,
            rid,
            None,
        ),
        chunk([{"text": "The sum of 1 to 100 is **5050**."}], model, rid, usage(30, 35, 58)),
        chunk([{"text": ""}], model, rid, usage(30, 35, 58, tool_use=73), finish="STOP"),
    )
    req = request(
        model, {"contents": [user("Sum 1..100 with code.")], "tools": [{"codeExecution": {}}]}
    )
    return Interaction(0, req, stream_response(body))


def web_search_grounding() -> Interaction:
    # Google Search grounding: groundingMetadata is {} until the last chunk, which has the
    # whole of it; it is kept as one provider block at the end.
    rid = response_id("web_search_grounding")
    grounding = {
        "searchEntryPoint": {
            "renderedContent": '<div class="container">weather in Lisbon today</div>'
        },
        "groundingChunks": [
            {
                "web": {
                    "uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC123",
                    "title": "ipma.pt",
                }
            }
        ],
        "groundingSupports": [
            {
                "segment": {
                    "startIndex": 0,
                    "endIndex": 41,
                    "text": "Lisbon is sunny today with a high of 24\u00b0C.",
                },
                "groundingChunkIndices": [0],
            }
        ],
        "webSearchQueries": ["weather in Lisbon today"],
    }
    body = sse(
        chunk(
            [{"text": "Lisbon is sunny today"}],
            PRO,
            rid,
            usage(10, 5, 230, tool_use=96),
            groundingMetadata={},
        ),
        chunk(
            [{"text": " with a high of 24\u00b0C."}],
            PRO,
            rid,
            usage(10, 14, 230, tool_use=96),
            finish="STOP",
            groundingMetadata=grounding,
        ),
    )
    req = request(
        PRO, {"contents": [user("Weather in Lisbon today?")], "tools": [{"googleSearch": {}}]}
    )
    return Interaction(0, req, stream_response(body))


def stream_cut() -> Interaction:
    # case 62: the connection ends after two chunks and no finishReason ever came: an
    # error that keeps the text.
    rid = response_id("stream_cut")
    body = sse(
        chunk([{"text": "Once upon a time, a lighthouse keeper"}], FLASH, rid, usage(7, 9, 30)),
        chunk([{"text": " found a message in a bottle"}], FLASH, rid, usage(7, 16, 30)),
    )
    req = request(FLASH, {"contents": [user("Tell me a short story.")]})
    return Interaction(0, req, stream_response(body))


CASSETTES = {
    "plain_text": plain_text,
    "thinking_signature": thinking_signature,
    "tool_call": tool_call,
    "parallel_tool_calls": parallel_tool_calls,
    "function_call_without_id": function_call_without_id,
    "duplicate_ids": duplicate_ids,
    # partial_args (Vertex-only streamed arguments) is a vertex-gemini cassette: written by
    # cassettes/_generate/vertex_gemini.py from the function above.
    "max_tokens": max_tokens,
    "safety": safety,
    "prompt_blocked": prompt_blocked,
    "midstream_503": midstream_503,
    "http_400_context_overflow": http_400_context_overflow,
    "http_429_rate_limit": http_429_rate_limit,
    "cache_usage": cache_usage,
    "json_array": json_array,
    "unknown_finish_reason": unknown_finish_reason,
    "code_execution": code_execution,
    "web_search_grounding": web_search_grounding,
    "stream_cut": stream_cut,
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in CASSETTES.items():
        dump_cassette([build()], OUT / f"{name}.yaml")
        print(f"wrote {OUT / name}.yaml")


if __name__ == "__main__":
    main()
