"""Writes the bundled anthropic-messages cassettes from the documented wire format.

Run from the repo root: ``python cassettes/_generate/anthropic_messages.py`` (then
``python -c "from stream_harness.recordings.golden import write_expected; ..."`` or the golden test's
regeneration hint to refresh specs/expected/anthropic-messages/).

Every stream is written by hand from the Messages streaming docs and the facts in
/work/shared/research/provider-facts.md (2.1 event taxonomy, 3.1 stop reasons, 5.1 errors
and rate-limit headers); none is copied from the recorded corpus. The shapes follow what
the real API sends: compact JSON, ``event:`` equal to the JSON ``type``, ``ping`` with
``{"type": "ping"}`` (with the space), ``\\n\\n`` separators, and in one cassette the
trailing-space padding seen in real recordings (corpus-visible-notes.md section 4).

Ids, signatures and encrypted payloads are made up (deterministic, from a counter); there
are no keys, organisation ids or cookies.
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

OUT = ROOT / "cassettes" / "anthropic-messages"
URI = "https://api.anthropic.com/v1/messages"
SONNET = "claude-sonnet-4-5-20250929"
HAIKU = "claude-haiku-4-5-20251001"
OPUS = "claude-opus-4-1-20250805"


def opaque(label: str, size: int) -> str:
    """A made-up base64 blob of ``size`` bytes (signatures, encrypted content)."""
    raw = b""
    counter = 0
    while len(raw) < size:
        raw += hashlib.sha256(f"{label}:{counter}".encode()).digest()
        counter += 1
    return base64.b64encode(raw[:size]).decode()


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def event(payload: dict[str, Any], pad: int = 0) -> str:
    return f"event: {payload['type']}\ndata: {compact(payload)}{' ' * pad}\n\n"


PING = 'event: ping\ndata: {"type": "ping"}\n\n'


def usage(
    input_tokens: int,
    output_tokens: int,
    *,
    cache_write: int = 0,
    cache_read: int = 0,
) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": cache_write,
            "ephemeral_1h_input_tokens": 0,
        },
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


def message_start(msg_id: str, model: str, u: dict[str, Any]) -> str:
    return event(
        {
            "type": "message_start",
            "message": {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": u,
            },
        }
    )


def block_start(index: int, block: dict[str, Any]) -> str:
    return event({"type": "content_block_start", "index": index, "content_block": block})


def delta(index: int, d: dict[str, Any]) -> str:
    return event({"type": "content_block_delta", "index": index, "delta": d})


def text_deltas(index: int, parts: list[str]) -> str:
    return "".join(delta(index, {"type": "text_delta", "text": p}) for p in parts)


def block_stop(index: int) -> str:
    return event({"type": "content_block_stop", "index": index})


def message_delta(stop_reason: str | None, u: dict[str, Any], **extra: Any) -> str:
    d: dict[str, Any] = {"stop_reason": stop_reason, "stop_sequence": None}
    d.update(extra)
    return event({"type": "message_delta", "delta": d, "usage": u})


MESSAGE_STOP = event({"type": "message_stop"})


def text_block(index: int, parts: list[str]) -> str:
    return (
        block_start(index, {"type": "text", "text": ""})
        + text_deltas(index, parts)
        + block_stop(index)
    )


def tool_block(index: int, tool_id: str, name: str, fragments: list[str]) -> str:
    out = block_start(index, {"type": "tool_use", "id": tool_id, "name": name, "input": {}})
    for fragment in fragments:
        out += delta(index, {"type": "input_json_delta", "partial_json": fragment})
    return out + block_stop(index)


# --- requests and responses -----------------------------------------------------------

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city"],
    },
}
TIME_TOOL = {
    "name": "get_time",
    "description": "Current local time in an IANA time zone.",
    "input_schema": {
        "type": "object",
        "properties": {"tz": {"type": "string"}},
        "required": ["tz"],
    },
}
NOW_TOOL = {
    "name": "get_server_time",
    "description": "The server's clock; takes no parameters.",
    "input_schema": {"type": "object", "properties": {}},
}


def request(body: dict[str, Any], *, beta: str | None = None) -> Request:
    headers = {
        "accept": ["application/json"],
        "anthropic-version": ["2023-06-01"],
        "content-type": ["application/json"],
        "host": ["api.anthropic.com"],
        "user-agent": ["stream-harness-fixtures/0.1"],
    }
    if beta:
        headers["anthropic-beta"] = [beta]
    payload = {"stream": True, **body}
    return Request(method="POST", uri=URI, headers=headers, body=compact(payload).encode())


def sse_response(body: str, request_id: str) -> Response:
    return Response(
        status=200,
        reason="OK",
        headers={
            "cache-control": ["no-cache"],
            "connection": ["keep-alive"],
            "content-type": ["text/event-stream; charset=utf-8"],
            "request-id": [request_id],
            "transfer-encoding": ["chunked"],
            "x-robots-tag": ["none"],
        },
        body=body.encode(),
    )


def error_response(
    status: int,
    reason: str,
    error_type: str,
    message: str,
    request_id: str,
    extra_headers: dict[str, list[str]] | None = None,
) -> Response:
    body = compact(
        {
            "type": "error",
            "error": {"type": error_type, "message": message},
            "request_id": request_id,
        }
    ).encode()
    headers = {
        "connection": ["keep-alive"],
        "content-length": [str(len(body))],
        "content-type": ["application/json"],
        "request-id": [request_id],
        "x-should-retry": ["true" if status in (408, 409, 429) or status >= 500 else "false"],
    }
    headers.update(extra_headers or {})
    return Response(status=status, reason=reason, headers=headers, body=body)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


# --- the cassettes ----------------------------------------------------------------------


def plain_text() -> Interaction:
    # Plain text; ping right after the block start and again between deltas (case 19).
    body = (
        message_start("msg_01H8kQ3vZp2Lw7xNcR4tYb6A", HAIKU, usage(14, 1))
        + block_start(0, {"type": "text", "text": ""})
        + PING
        + text_deltas(0, ["Hello", "! How can I"])
        + PING
        + text_deltas(0, [" help you today?"])
        + block_stop(0)
        + message_delta("end_turn", {"output_tokens": 12})
        + MESSAGE_STOP
    )
    req = request({"model": HAIKU, "max_tokens": 256, "messages": [user("Hi there")]})
    return Interaction(0, req, sse_response(body, "req_011CPlainText0001"))


def thinking_signature() -> Interaction:
    # Extended thinking: thinking_delta x3, one signature_delta, then the answer (2.1).
    sig = opaque("thinking-signature", 240)
    body = (
        message_start("msg_01Tq7Wm3Nd5Kc8Vh2Jx9Pf4S", SONNET, usage(46, 4))
        + block_start(0, {"type": "thinking", "thinking": "", "signature": ""})
        + PING
        + delta(0, {"type": "thinking_delta", "thinking": "The user asks for 17 * 24."})
        + delta(0, {"type": "thinking_delta", "thinking": " 17 * 24 = 17 * 20 + 17 * 4"})
        + delta(0, {"type": "thinking_delta", "thinking": " = 340 + 68 = 408."})
        + delta(0, {"type": "signature_delta", "signature": sig})
        + block_stop(0)
        + text_block(1, ["17 × 24 = ", "**408**."])
        + message_delta("end_turn", {"output_tokens": 61})
        + MESSAGE_STOP
    )
    req = request(
        {
            "model": SONNET,
            "max_tokens": 2048,
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "messages": [user("What is 17 * 24?")],
        }
    )
    return Interaction(0, req, sse_response(body, "req_011CThinking00002"))


def redacted_thinking() -> Interaction:
    # redacted_thinking arrives whole in content_block_start, no deltas (case 21).
    data = opaque("redacted-thinking", 300)
    body = (
        message_start("msg_01Rd4Xh8Lk2Nw6Qp9Ts3Vc7M", SONNET, usage(92, 3))
        + block_start(0, {"type": "redacted_thinking", "data": data})
        + block_stop(0)
        + PING
        + text_block(1, ["I can't share my internal reasoning,", " but the answer is yes."])
        + message_delta("end_turn", {"output_tokens": 87})
        + MESSAGE_STOP
    )
    req = request(
        {
            "model": SONNET,
            "max_tokens": 2048,
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "messages": [user("Is 97 prime? Show your reasoning.")],
        }
    )
    return Interaction(0, req, sse_response(body, "req_011CRedacted00003"))


def tool_call() -> Interaction:
    # One client tool call; the first input_json_delta is empty, as the API sends (case 22).
    body = (
        message_start("msg_01Tc5Gh7Jk9Lm2Np4Qr6St8U", SONNET, usage(402, 2))
        + text_block(0, ["I'll look up the weather in Paris."])
        + block_start(
            1,
            {
                "type": "tool_use",
                "id": "toolu_01A9xQ3mW7kP2vN8cR5tY4bZ",
                "name": "get_weather",
                "input": {},
            },
        )
        + PING
        + delta(1, {"type": "input_json_delta", "partial_json": ""})
        + delta(1, {"type": "input_json_delta", "partial_json": '{"city": "Pa'})
        + delta(1, {"type": "input_json_delta", "partial_json": 'ris", "unit'})
        + delta(1, {"type": "input_json_delta", "partial_json": '": "c"}'})
        + block_stop(1)
        + message_delta("tool_use", {"output_tokens": 58})
        + MESSAGE_STOP
    )
    req = request(
        {
            "model": SONNET,
            "max_tokens": 1024,
            "tools": [WEATHER_TOOL],
            "messages": [user("What's the weather in Paris, in Celsius?")],
        }
    )
    return Interaction(0, req, sse_response(body, "req_011CToolCall00004"))


def parallel_tool_calls() -> Interaction:
    # Two tool_use blocks in one message (Anthropic streams them one after the other).
    body = (
        message_start("msg_01Pa3Rb5Sc7Td9Ue2Vf4Wg6X", SONNET, usage(515, 3))
        + text_block(0, ["Checking both at once."])
        + tool_block(
            1, "toolu_01B2cD3eF4gH5iJ6kL7mN8oP", "get_weather", ["", '{"city":', ' "Tokyo"}']
        )
        + tool_block(
            2, "toolu_01Q9rS8tU7vW6xY5zA4bC3dE", "get_time", ["", '{"tz": "Asia/', 'Tokyo"}']
        )
        + message_delta("tool_use", {"output_tokens": 112})
        + MESSAGE_STOP
    )
    req = request(
        {
            "model": SONNET,
            "max_tokens": 1024,
            "tools": [WEATHER_TOOL, TIME_TOOL],
            "messages": [user("Weather and local time in Tokyo?")],
        }
    )
    return Interaction(0, req, sse_response(body, "req_011CParallel00005"))


def tool_use_empty_input() -> Interaction:
    # A parameterless tool: input {} in the start and no input_json_delta at all.
    body = (
        message_start("msg_01Em7Pt9Yi2Np4Ut6Ww8Xx0Z", HAIKU, usage(233, 1))
        + block_start(
            0,
            {
                "type": "tool_use",
                "id": "toolu_01Z8yX7wV6uT5sR4qP3oN2mL",
                "name": "get_server_time",
                "input": {},
            },
        )
        + block_stop(0)
        + message_delta("tool_use", {"output_tokens": 31})
        + MESSAGE_STOP
    )
    req = request(
        {
            "model": HAIKU,
            "max_tokens": 512,
            "tools": [NOW_TOOL],
            "tool_choice": {"type": "any"},
            "messages": [user("What time is it on the server?")],
        }
    )
    return Interaction(0, req, sse_response(body, "req_011CEmptyInput0006"))


def max_tokens() -> Interaction:
    # A length stop: the text is cut where max_tokens ran out.
    body = (
        message_start("msg_01Mx2Tk4Ns6Lp8Rq0St2Uv4W", HAIKU, usage(18, 1))
        + text_block(0, ["Once upon a time, in a village", " at the edge of a great forest, there"])
        + message_delta("max_tokens", {"output_tokens": 16})
        + MESSAGE_STOP
    )
    req = request({"model": HAIKU, "max_tokens": 16, "messages": [user("Tell me a long story.")]})
    return Interaction(0, req, sse_response(body, "req_011CMaxTokens0007"))


def refusal() -> Interaction:
    # stop_reason refusal with stop_details (provider-facts 2.1, 3.1; case 26).
    body = (
        message_start("msg_01Rf8Us0Wt2Xv4Yx6Za8Bc0D", SONNET, usage(31, 1))
        + text_block(0, ["I can't help with"])
        + message_delta(
            "refusal",
            {"output_tokens": 9},
            stop_details={
                "type": "refusal",
                "category": "cyber",
                "explanation": "This request could enable the development of malware.",
            },
        )
        + MESSAGE_STOP
    )
    req = request(
        {
            "model": SONNET,
            "max_tokens": 1024,
            "messages": [user("Write ransomware that encrypts a hospital network.")],
        }
    )
    return Interaction(0, req, sse_response(body, "req_011CRefusal000008"))


def overloaded_midstream() -> Interaction:
    # event: error after some text (case 25, ecosystem bug 30): the stream stops there.
    body = (
        message_start("msg_01Ov3Ld5Md7Ne9Pf1Qg3Rh5S", OPUS, usage(120, 1))
        + block_start(0, {"type": "text", "text": ""})
        + text_deltas(0, ["The three largest moons of Jupiter are", " Ganymede, Callisto"])
        + event({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    )
    req = request(
        {"model": OPUS, "max_tokens": 1024, "messages": [user("Name Jupiter's largest moons.")]}
    )
    return Interaction(0, req, sse_response(body, "req_011COverloaded009"))


def error_first_event() -> Interaction:
    # event: error before anything else: what a 529 would have been (case 24).
    body = event({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    req = request({"model": OPUS, "max_tokens": 1024, "messages": [user("Hello")]})
    return Interaction(0, req, sse_response(body, "req_011CErrorFirst0010"))


def http_400_context_overflow() -> Interaction:
    req = request(
        {
            "model": SONNET,
            "max_tokens": 4096,
            "messages": [user("<a very long document> Summarise it.")],
        }
    )
    resp = error_response(
        400,
        "Bad Request",
        "invalid_request_error",
        "prompt is too long: 208310 tokens > 200000 maximum",
        "req_011COverflow00011",
    )
    return Interaction(0, req, resp)


def http_429_rate_limit() -> Interaction:
    req = request({"model": SONNET, "max_tokens": 1024, "messages": [user("Hello again")]})
    resp = error_response(
        429,
        "Too Many Requests",
        "rate_limit_error",
        "This request would exceed the rate limit of 50 requests per minute. "
        "Please reduce the prompt length or the maximum tokens requested, or try again later.",
        "req_011CRateLimit0012",
        {
            "retry-after": ["17"],
            "anthropic-ratelimit-requests-limit": ["50"],
            "anthropic-ratelimit-requests-remaining": ["0"],
            "anthropic-ratelimit-requests-reset": ["2026-03-02T10:15:17Z"],
            "anthropic-ratelimit-tokens-limit": ["80000"],
            "anthropic-ratelimit-tokens-remaining": ["71200"],
            "anthropic-ratelimit-tokens-reset": ["2026-03-02T10:15:05Z"],
            "anthropic-ratelimit-input-tokens-limit": ["40000"],
            "anthropic-ratelimit-input-tokens-remaining": ["38000"],
            "anthropic-ratelimit-input-tokens-reset": ["2026-03-02T10:15:03Z"],
            "anthropic-ratelimit-output-tokens-limit": ["16000"],
            "anthropic-ratelimit-output-tokens-remaining": ["16000"],
            "anthropic-ratelimit-output-tokens-reset": ["2026-03-02T10:15:00Z"],
        },
    )
    return Interaction(0, req, resp)


def http_529_overloaded() -> Interaction:
    req = request({"model": OPUS, "max_tokens": 1024, "messages": [user("Hello")]})
    resp = error_response(
        529, "Site Overloaded", "overloaded_error", "Overloaded", "req_011COverload00013"
    )
    return Interaction(0, req, resp)


def http_413_request_too_large() -> Interaction:
    req = request(
        {"model": SONNET, "max_tokens": 1024, "messages": [user("<40 MB of pasted logs>")]}
    )
    resp = error_response(
        413,
        "Payload Too Large",
        "request_too_large",
        "Request exceeds the maximum allowed number of bytes.",
        "req_011CTooLarge00014",
    )
    return Interaction(0, req, resp)


def cache_usage() -> Interaction:
    # Prompt caching: message_start reports cache write and read; message_delta repeats
    # only output_tokens, so the start's input and cache counts must survive (case 23).
    body = (
        message_start(
            "msg_01Ch4Cr6Cw8Dx0Ey2Fz4Ga6H", SONNET, usage(12, 1, cache_write=1830, cache_read=20480)
        )
        + text_block(0, ["Section 4.2 covers the retry policy."])
        + message_delta("end_turn", {"output_tokens": 11})
        + MESSAGE_STOP
    )
    req = request(
        {
            "model": SONNET,
            "max_tokens": 512,
            "system": [
                {
                    "type": "text",
                    "text": "<the whole handbook>",
                    "cache_control": {"type": "ephemeral"},
                }
            ],
            "messages": [user("Which section covers retries?")],
        }
    )
    return Interaction(0, req, sse_response(body, "req_011CCacheUsage0015"))


SEARCH_RESULT_URL = "https://weather.example.org/paris/today"


def web_search_citations() -> Interaction:
    # Server tool: server_tool_use (input via input_json_delta) + web_search_tool_result,
    # then text blocks, one with a citations_delta (provider-facts 2.1).
    srv = "srvtoolu_01W3eB5sE7aR9cH1tO3oL5kS"
    citation = {
        "type": "web_search_result_location",
        "cited_text": "Paris today: sunny, high of 24°C, low of 15°C.",
        "url": SEARCH_RESULT_URL,
        "title": "Paris weather today",
        "encrypted_index": opaque("citation-index", 48),
    }
    body = (
        message_start("msg_01Ws2Sr4Ch6Ct8Ci0Tn2Ss4T", SONNET, usage(2170, 8))
        + text_block(0, ["Let me search for that."])
        + block_start(1, {"type": "server_tool_use", "id": srv, "name": "web_search", "input": {}})
        + delta(1, {"type": "input_json_delta", "partial_json": ""})
        + delta(1, {"type": "input_json_delta", "partial_json": '{"query": "Paris'})
        + delta(1, {"type": "input_json_delta", "partial_json": ' weather today"}'})
        + block_stop(1)
        + block_start(
            2,
            {
                "type": "web_search_tool_result",
                "tool_use_id": srv,
                "content": [
                    {
                        "type": "web_search_result",
                        "title": "Paris weather today",
                        "url": SEARCH_RESULT_URL,
                        "encrypted_content": opaque("search-result", 96),
                        "page_age": "1 hour ago",
                    }
                ],
            },
        )
        + block_stop(2)
        + text_block(3, ["According to the forecast, "])
        + block_start(4, {"citations": [], "type": "text", "text": ""})
        + delta(4, {"type": "citations_delta", "citation": citation})
        + text_deltas(4, ["it is sunny in Paris with a high of 24°C"])
        + block_stop(4)
        + text_block(5, ["."])
        + message_delta(
            "end_turn",
            {
                "input_tokens": 9120,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 143,
                "server_tool_use": {"web_search_requests": 1},
            },
        )
        + MESSAGE_STOP
    )
    req = request(
        {
            "model": SONNET,
            "max_tokens": 1024,
            "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}],
            "messages": [user("What's the weather in Paris today?")],
        }
    )
    return Interaction(0, req, sse_response(body, "req_011CWebSearch00016"))


def pause_turn() -> Interaction:
    # pause_turn: the server paused a long server-tool turn; the client resubmits (3.1).
    srv = "srvtoolu_01P7aU9sE1tU3rN5pA7uS9eD"
    body = (
        message_start("msg_01Pt5Au7Se9Tr1Nn3Pp5Aa7U", SONNET, usage(3010, 6))
        + text_block(0, ["I'll search a few sources."])
        + block_start(1, {"type": "server_tool_use", "id": srv, "name": "web_search", "input": {}})
        + delta(
            1,
            {
                "type": "input_json_delta",
                "partial_json": '{"query": "history of the metric system"}',
            },
        )
        + block_stop(1)
        + message_delta(
            "pause_turn",
            {
                "input_tokens": 3010,
                "output_tokens": 47,
                "server_tool_use": {"web_search_requests": 0},
            },
        )
        + MESSAGE_STOP
    )
    req = request(
        {
            "model": SONNET,
            "max_tokens": 4096,
            "tools": [{"type": "web_search_20250305", "name": "web_search"}],
            "messages": [user("Research the history of the metric system.")],
        }
    )
    return Interaction(0, req, sse_response(body, "req_011CPauseTurn00017"))


def context_window_exceeded() -> Interaction:
    # stop_reason model_context_window_exceeded: valid content cut by the window (case 27).
    body = (
        message_start("msg_01Cw9Ex1Ce3Ed5Ee7Dd9Ww1X", SONNET, usage(199_940, 1))
        + text_block(0, ["Summary of chapter 12: the expedition", " reaches the"])
        + message_delta("model_context_window_exceeded", {"output_tokens": 60})
        + MESSAGE_STOP
    )
    req = request(
        {
            "model": SONNET,
            "max_tokens": 8192,
            "messages": [user("<a book> Summarise every chapter.")],
        },
        beta="model-context-window-exceeded-2025-08-26",
    )
    return Interaction(0, req, sse_response(body, "req_011CWindowFull0018"))


def padded_json() -> Interaction:
    # Real recordings pad data lines with trailing spaces after the JSON (corpus notes 4).
    pads = iter([8, 15, 3, 12, 0, 6, 9, 4, 11])

    def padded(payload: dict[str, Any]) -> str:
        return event(payload, next(pads))

    body = (
        padded(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_01Pd7Js9On1Sp3Ac5Ee7Pp9D",
                    "type": "message",
                    "role": "assistant",
                    "model": HAIKU,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage(25, 1),
                },
            }
        )
        + padded(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            }
        )
        + PING
        + padded(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Padded"},
            }
        )
        + padded(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": " JSON is "},
            }
        )
        + padded(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "still JSON."},
            }
        )
        + padded({"type": "content_block_stop", "index": 0})
        + padded(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {
                    "input_tokens": 25,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 9,
                },
            }
        )
        + padded({"type": "message_stop"})
    )
    req = request(
        {"model": HAIKU, "max_tokens": 64, "messages": [user("Say something about JSON.")]}
    )
    return Interaction(0, req, sse_response(body, "req_011CPaddedJson0019"))


def compaction_context_management() -> Interaction:
    # Newer payloads (research/provider-facts.md 2.1; corpus-visible-notes.md section 6):
    # server-side compaction streams a `compaction` block whose summary arrives whole in
    # one `compaction_delta`; `message_start` carries `stop_details` and `inference_geo`;
    # `message_delta` carries `usage.iterations` (one entry per model pass) and
    # `context_management.applied_edits` (tool results cleared by the server). Usage in
    # `message_delta` is cumulative and names the final pass: its input_tokens replace
    # message_start's. The turn ends in a client tool call.
    start_usage = usage(96, 5, cache_read=48_210)
    start_usage["inference_geo"] = "global"
    start = message_start("msg_01Cm3Pc5Tx7Mg9Mt1Ct3Ma5N", SONNET, start_usage).replace(
        '"stop_sequence":null,', '"stop_sequence":null,"stop_details":null,', 1
    )
    summary = (
        "The user is planning a trip to Lyon; earlier turns compared train times "
        "(TGV, 2 h) and hotels near Part-Dieu.\n\nNext step: check the weather."
    )
    final_usage = {
        "input_tokens": 212,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 61,
        "iterations": [
            {
                "type": "compaction",
                "input_tokens": 96,
                "output_tokens": 74,
                "cache_read_input_tokens": 48_210,
                "cache_creation_input_tokens": 0,
            },
            {
                "type": "message",
                "input_tokens": 212,
                "output_tokens": 61,
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            },
        ],
    }
    body = (
        start
        + block_start(0, {"type": "compaction", "content": None})
        + PING
        + delta(0, {"type": "compaction_delta", "content": summary})
        + block_stop(0)
        + text_block(1, ["Checking the forecast for Lyon."])
        + tool_block(2, "toolu_01Lc7Mp9Ct1Xm3Gn5Tw7Ea9R", "get_weather", ['{"city": "Ly', 'on"}'])
        + event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None, "stop_details": None},
                "usage": final_usage,
                "context_management": {
                    "applied_edits": [
                        {
                            "type": "clear_tool_uses_20250919",
                            "cleared_tool_uses": 4,
                            "cleared_input_tokens": 18_340,
                        }
                    ]
                },
            }
        )
        + MESSAGE_STOP
    )
    req = request(
        {
            "model": SONNET,
            "max_tokens": 2048,
            "tools": [WEATHER_TOOL],
            "context_management": {
                "edits": [
                    {"type": "clear_tool_uses_20250919"},
                    {"type": "compact_20260112"},
                ]
            },
            "messages": [user("<a long trip-planning conversation> What's the weather there?")],
        },
        beta="context-management-2025-06-27,compact-2026-01-12",
    )
    return Interaction(0, req, sse_response(body, "req_011CCompaction0020"))


def server_tool_index_reuse() -> Interaction:
    """After a server-tool result, ``content_block_start`` repeats the previous index while
    the deltas and the stop that follow carry index + 1 (anthropic-sdk-typescript#879,
    vercel/ai#11771; fixed on the API side since, still in recorded traffic and behind
    gateways). Every block and its text are recovered, the anomaly is a warning."""
    srv = "srvtoolu_01Ix3Re5Us7Ed9In1De3Xx5R"
    body = (
        message_start("msg_01Ir2Ue4Se6Ix8Re0Us2Ex4D", HAIKU, usage(1840, 6))
        + block_start(0, {"type": "server_tool_use", "id": srv, "name": "web_search", "input": {}})
        + delta(0, {"type": "input_json_delta", "partial_json": '{"query": "population'})
        + delta(0, {"type": "input_json_delta", "partial_json": ' of Spain"}'})
        + block_stop(0)
        + block_start(
            1,
            {
                "type": "web_search_tool_result",
                "tool_use_id": srv,
                "content": [
                    {
                        "type": "web_search_result",
                        "title": "Spain population",
                        "url": "https://www.ine.es/en/",
                        "encrypted_content": opaque("index-reuse-result", 96),
                        "page_age": "2 days ago",
                    }
                ],
            },
        )
        + block_stop(1)
        + block_start(1, {"type": "text", "text": ""})  # the reused index
        + text_deltas(2, ["Spain has about", " 49 million", " inhabitants."])
        + block_stop(2)
        + message_delta(
            "end_turn",
            {
                "input_tokens": 6210,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 61,
                "server_tool_use": {"web_search_requests": 1},
            },
        )
        + MESSAGE_STOP
    )
    req = request(
        {
            "model": HAIKU,
            "max_tokens": 1024,
            "tools": [{"type": "web_search_20250305", "name": "web_search"}],
            "messages": [user("Population of Spain?")],
        },
        beta="web-search-2025-03-05",
    )
    return Interaction(0, req, sse_response(body, "req_011CIndexReuse00021"))


def prepopulated_message_start() -> Interaction:
    """A replay or gateway sends the whole message in ``message_start.message.content``
    (a server tool call, its result, a client tool_use) with ``stop_reason`` set, then only
    ``message_stop``: no block events and no ``message_delta``. The blocks come from the
    content, the stop reason from message_start."""
    srv = "srvtoolu_01Pp3Re5Po7Pu9La1Te3Dd5M"
    content = [
        {"type": "text", "text": "I'll look that up and then check the weather."},
        {
            "type": "server_tool_use",
            "id": srv,
            "name": "web_search",
            "input": {"query": "capital of Australia"},
        },
        {
            "type": "web_search_tool_result",
            "tool_use_id": srv,
            "content": [
                {
                    "type": "web_search_result",
                    "title": "Canberra - Wikipedia",
                    "url": "https://en.wikipedia.org/wiki/Canberra",
                    "encrypted_content": opaque("prepopulated-result", 96),
                    "page_age": None,
                }
            ],
        },
        {
            "type": "tool_use",
            "id": "toolu_01Pp5Re7Po9Pu1La3Te5Dd7W",
            "name": "get_weather",
            "input": {"city": "Canberra"},
        },
    ]
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_01Pp2Re4Po6Pu8La0Te2Dd4S",
            "type": "message",
            "role": "assistant",
            "model": SONNET,
            "content": content,
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": usage(2410, 118),
        },
    }
    body = event(start) + MESSAGE_STOP
    req = request(
        {
            "model": SONNET,
            "max_tokens": 1024,
            "tools": [
                {"type": "web_search_20250305", "name": "web_search"},
                {
                    "name": "get_weather",
                    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
            ],
            "messages": [user("What's the weather in the capital of Australia?")],
        }
    )
    return Interaction(0, req, sse_response(body, "req_011CPrepopulated022"))


CASSETTES = {
    "plain_text": plain_text,
    "thinking_signature": thinking_signature,
    "redacted_thinking": redacted_thinking,
    "tool_call": tool_call,
    "parallel_tool_calls": parallel_tool_calls,
    "tool_use_empty_input": tool_use_empty_input,
    "max_tokens": max_tokens,
    "refusal": refusal,
    "overloaded_midstream": overloaded_midstream,
    "error_first_event": error_first_event,
    "http_400_context_overflow": http_400_context_overflow,
    "http_429_rate_limit": http_429_rate_limit,
    "http_529_overloaded": http_529_overloaded,
    "http_413_request_too_large": http_413_request_too_large,
    "cache_usage": cache_usage,
    "web_search_citations": web_search_citations,
    "pause_turn": pause_turn,
    "context_window_exceeded": context_window_exceeded,
    "padded_json": padded_json,
    "compaction_context_management": compaction_context_management,
    "server_tool_index_reuse": server_tool_index_reuse,
    "prepopulated_message_start": prepopulated_message_start,
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in CASSETTES.items():
        dump_cassette([build()], OUT / f"{name}.yaml")
        print(f"wrote {OUT / name}.yaml")


if __name__ == "__main__":
    main()
