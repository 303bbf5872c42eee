"""Writes the bundled cohere-v2-chat cassettes from the documented wire format.

Run from the repo root: ``python cassettes/_generate/cohere_v2_chat.py``, then refresh
specs/expected/cohere-v2-chat/ with ``stream-harness bless cassettes/cohere-v2-chat`` and
review the diff event by event.

Every stream is written by hand from Cohere's docs (v2/docs/streaming, the event list;
v2/docs/tool-use-streaming, the example streams of a tool-calling step and of a response
step with citations; v2/docs/reasoning, thinking content blocks; reference/errors, the
error bodies and their messages) and the cohere-python SDK's models
(``V2ChatStreamResponse`` and the ``*EventDelta`` types, ``ChatFinishReason``, ``Usage``);
none is copied from the recorded corpus (which has no Cohere stream). The shapes follow
what the API sends:

- SSE with ``event:`` equal to the JSON ``type``, compact JSON, ``\\n\\n`` separators, and a
  bare ``data: [DONE]`` after ``message-end``;
- ``message-start`` carries the response id and an empty message skeleton
  (``role``, ``content: []``, ``tool_plan: ""``, ``tool_calls: []``, ``citations: []``);
- content blocks and tool calls are numbered by ``index`` apart from each other, each
  from 0; ``tool-plan-delta`` has no index; in ``tool-call-start`` the call is an object
  under ``tool_calls``; argument fragments come as the docs show them (``{\\n    "``,
  ``location``, ``":``, ...);
- ``message-end`` has no id, and ``usage`` with ``billed_units`` and ``tokens`` (integers;
  the SDK's models read them as floats) and, when the prompt cache was hit,
  ``cached_tokens``; a failed generation says ``finish_reason: ERROR`` and ``error``;
- an error before the stream is an HTTP status with ``{"id": ..., "message": ...}``.

Ids are made up (deterministic); there are no keys, organisation ids or cookies.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from stream_harness.recordings.cassette import Interaction, Request, Response, dump_cassette  # noqa: E402

OUT = ROOT / "cassettes" / "cohere-v2-chat"
URI = "https://api.cohere.com/v2/chat"
COMMAND_A = "command-a-03-2025"
REASONING = "command-a-reasoning-08-2025"
R7B = "command-r7b-12-2024"
DATE = "Wed, 05 Nov 2025 14:00:00 GMT"


def made_up_uuid(label: str) -> str:
    h = hashlib.sha256(label.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def call_id(name: str, label: str) -> str:
    # Cohere's ids are the tool name and 12 lower-case alphanumerics (get_weather_p1t92w7gfgq7).
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    digest = hashlib.sha256(label.encode()).digest()
    return f"{name}_" + "".join(alphabet[b % 36] for b in digest[:12])


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def event(payload: dict[str, Any]) -> str:
    return f"event: {payload['type']}\ndata: {compact(payload)}\n\n"


DONE = "data: [DONE]\n\n"


def message_start(label: str) -> str:
    skeleton = {
        "role": "assistant",
        "content": [],
        "tool_plan": "",
        "tool_calls": [],
        "citations": [],
    }
    return event(
        {"id": made_up_uuid(label), "type": "message-start", "delta": {"message": skeleton}}
    )


def content_block(index: int, kind: str, parts: list[str], *, end: bool = True) -> str:
    out = event(
        {
            "type": "content-start",
            "index": index,
            "delta": {"message": {"content": {"type": kind, kind: ""}}},
        }
    )
    for part in parts:
        out += event(
            {
                "type": "content-delta",
                "index": index,
                "delta": {"message": {"content": {kind: part}}},
            }
        )
    if end:
        out += event({"type": "content-end", "index": index})
    return out


def tool_plan(parts: list[str]) -> str:
    return "".join(
        event({"type": "tool-plan-delta", "delta": {"message": {"tool_plan": p}}}) for p in parts
    )


def tool_call(index: int, tool_id: str, name: str, fragments: list[str]) -> str:
    out = event(
        {
            "type": "tool-call-start",
            "index": index,
            "delta": {
                "message": {
                    "tool_calls": {
                        "id": tool_id,
                        "type": "function",
                        "function": {"name": name, "arguments": ""},
                    }
                }
            },
        }
    )
    for fragment in fragments:
        out += event(
            {
                "type": "tool-call-delta",
                "index": index,
                "delta": {"message": {"tool_calls": {"function": {"arguments": fragment}}}},
            }
        )
    return out + event({"type": "tool-call-end", "index": index})


def citation(index: int, cited: dict[str, Any]) -> str:
    return event(
        {"type": "citation-start", "index": index, "delta": {"message": {"citations": cited}}}
    ) + event({"type": "citation-end", "index": index})


def usage(
    billed_in: int, billed_out: int, tokens_in: int, tokens_out: int, cached: int | None = None
) -> dict[str, Any]:
    u: dict[str, Any] = {
        "billed_units": {"input_tokens": billed_in, "output_tokens": billed_out},
        "tokens": {"input_tokens": tokens_in, "output_tokens": tokens_out},
    }
    if cached is not None:
        u["cached_tokens"] = cached
    return u


def message_end(reason: str, u: dict[str, Any] | None, error: str | None = None) -> str:
    delta: dict[str, Any] = {"finish_reason": reason}
    if error is not None:
        delta["error"] = error
    if u is not None:
        delta["usage"] = u
    return event({"type": "message-end", "delta": delta})


def arguments_fragments(city: str) -> list[str]:
    # As the tool-use-streaming guide shows them: pretty-printed JSON, a token at a time.
    half = max(1, len(city) // 2)
    return ['{\n    "', "location", '":', ' "', city[:half], city[half:], '"', "\n", "}"]


# --- requests and responses -----------------------------------------------------------

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "gets the weather of a given location",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {
                    "type": "string",
                    "description": "the location to get the weather, example: San Francisco.",
                }
            },
            "required": ["location"],
        },
    },
}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def request(body: dict[str, Any]) -> Request:
    headers = {
        "accept": ["text/event-stream"],
        "content-type": ["application/json"],
        "host": ["api.cohere.com"],
        "user-agent": ["cohere/7.3.1"],
        "x-fern-language": ["Python"],
        "x-fern-sdk-name": ["cohere"],
        "x-fern-sdk-version": ["7.3.1"],
    }
    return Request(
        method="POST",
        uri=URI,
        headers=headers,
        body=json.dumps({**body, "stream": True}, ensure_ascii=False).encode(),
    )


def trace_id(label: str) -> str:
    return hashlib.sha256(f"trace:{label}".encode()).hexdigest()[:32]


def stream_response(label: str, body: str) -> Response:
    headers = {
        "access-control-expose-headers": ["X-Debug-Trace-ID"],
        "cache-control": ["no-cache, no-store, no-transform, must-revalidate, private, max-age=0"],
        "content-type": ["text/event-stream"],
        "date": [DATE],
        "transfer-encoding": ["chunked"],
        "vary": ["Origin"],
        "x-debug-trace-id": [trace_id(label)],
    }
    return Response(status=200, reason="OK", headers=headers, body=body.encode("utf-8"))


def error_response(label: str, status: int, reason: str, message: str) -> Response:
    body = compact({"id": made_up_uuid(label), "message": message}).encode()
    headers = {
        "access-control-expose-headers": ["X-Debug-Trace-ID"],
        "content-length": [str(len(body))],
        "content-type": ["application/json"],
        "date": [DATE],
        "vary": ["Origin"],
        "x-debug-trace-id": [trace_id(label)],
    }
    return Response(status=status, reason=reason, headers=headers, body=body)


# ---------------------------------------------------------------------------
# The cassettes
# ---------------------------------------------------------------------------


def plain_text() -> Interaction:
    body = (
        message_start("plain_text")
        + content_block(
            0,
            "text",
            [
                "A",
                " large",
                " language",
                " model",
                " (LLM)",
                " is a",
                " neural",
                " network",
                " trained",
                " on",
                " text",
                ".",
            ],
        )
        + message_end("COMPLETE", usage(5, 12, 71, 12))
        + DONE
    )
    req = request({"model": COMMAND_A, "messages": [user("What is an LLM?")]})
    return Interaction(0, req, stream_response("plain_text", body))


def thinking() -> Interaction:
    # v2/docs/reasoning: a thinking content block, then the text block, each its own index.
    body = (
        message_start("thinking")
        + content_block(
            0,
            "thinking",
            ["Alice", " has 2 sisters;", " her brother", " has Alice", " and both", " sisters."],
        )
        + content_block(1, "text", ["Alice's", " brother", " has 3", " sisters."])
        + message_end("COMPLETE", usage(29, 31, 612, 31, cached=512))
        + DONE
    )
    req = request(
        {
            "model": REASONING,
            "messages": [
                user(
                    "Alice has 3 brothers and 2 sisters. How many sisters does Alice's brother have?"
                )
            ],
            "thinking": {"type": "enabled", "token_budget": 2000},
        }
    )
    return Interaction(0, req, stream_response("thinking", body))


def tool_call_single() -> Interaction:
    # The tool-calling step: the plan, one call, TOOL_CALL.
    body = (
        message_start("tool_call_single")
        + tool_plan(["I", " will", " look", " up", " the", " weather", " in", " Toronto", "."])
        + tool_call(
            0, call_id("get_weather", "toronto"), "get_weather", arguments_fragments("Toronto")
        )
        + message_end("TOOL_CALL", usage(34, 25, 896, 71))
        + DONE
    )
    req = request(
        {
            "model": COMMAND_A,
            "messages": [user("What's the weather in Toronto?")],
            "tools": [WEATHER_TOOL],
        }
    )
    return Interaction(0, req, stream_response("tool_call_single", body))


def parallel_tool_calls() -> Interaction:
    # The guide's example: the plan, then two calls (index 0 and 1) one after the other.
    body = (
        message_start("parallel_tool_calls")
        + tool_plan(
            [
                "I",
                " will",
                " search",
                " for",
                " the",
                " weather",
                " in",
                " Madrid",
                " and",
                " Brasilia",
                ".",
            ]
        )
        + tool_call(
            0, call_id("get_weather", "madrid"), "get_weather", arguments_fragments("Madrid")
        )
        + tool_call(
            1, call_id("get_weather", "brasilia"), "get_weather", arguments_fragments("Brasilia")
        )
        + message_end("TOOL_CALL", usage(37, 28, 913, 83))
        + DONE
    )
    req = request(
        {
            "model": COMMAND_A,
            "messages": [user("What's the weather in Madrid and Brasilia?")],
            "tools": [WEATHER_TOOL],
        }
    )
    return Interaction(0, req, stream_response("parallel_tool_calls", body))


def citations() -> Interaction:
    # The response step after the tool results: text, then citation-start/-end pairs
    # (tool sources), then content-end.
    madrid = call_id("get_weather", "madrid")
    brasilia = call_id("get_weather", "brasilia")
    text = [
        "It",
        " is",
        " currently",
        " 2",
        "4",
        "°",
        "C in",
        " Madrid",
        " and",
        " 2",
        "8",
        "°",
        "C in",
        " Brasilia",
        ".",
    ]
    body = (
        message_start("citations")
        + content_block(0, "text", text, end=False)
        + citation(
            0,
            {
                "start": 16,
                "end": 20,
                "text": "24°C",
                "sources": [
                    {
                        "type": "tool",
                        "id": f"{madrid}:0",
                        "tool_output": {"temperature": '{"madrid":"24°C"}'},
                    }
                ],
                "type": "TEXT_CONTENT",
            },
        )
        + citation(
            1,
            {
                "start": 35,
                "end": 39,
                "text": "28°C",
                "sources": [
                    {
                        "type": "tool",
                        "id": f"{brasilia}:0",
                        "tool_output": {"temperature": '{"brasilia":"28°C"}'},
                    }
                ],
                "type": "TEXT_CONTENT",
            },
        )
        + event({"type": "content-end", "index": 0})
        + message_end("COMPLETE", usage(87, 19, 1061, 85))
        + DONE
    )
    messages = [
        user("What's the weather in Madrid and Brasilia?"),
        {
            "role": "assistant",
            "tool_plan": "I will search for the weather in Madrid and Brasilia.",
            "tool_calls": [
                {
                    "id": madrid,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location":"Madrid"}'},
                },
                {
                    "id": brasilia,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location":"Brasilia"}'},
                },
            ],
        },
        {
            "role": "tool",
            "tool_call_id": madrid,
            "content": [
                {"type": "document", "document": {"data": '{"temperature": {"madrid": "24°C"}}'}}
            ],
        },
        {
            "role": "tool",
            "tool_call_id": brasilia,
            "content": [
                {"type": "document", "document": {"data": '{"temperature": {"brasilia": "28°C"}}'}}
            ],
        },
    ]
    req = request({"model": COMMAND_A, "messages": messages, "tools": [WEATHER_TOOL]})
    return Interaction(0, req, stream_response("citations", body))


def stop_sequence() -> Interaction:
    # STOP_SEQUENCE: the matched sequence is not in the text. This one ends at message-end
    # without the trailing [DONE] (message-end is the end marker; [DONE] is a courtesy).
    body = (
        message_start("stop_sequence")
        + content_block(0, "text", ["Amsterdam", "\n", "Utrecht", "\n", "Rotterdam", "\n"])
        + message_end("STOP_SEQUENCE", usage(24, 11, 90, 11))
    )
    req = request(
        {
            "model": R7B,
            "messages": [user("List three Dutch cities, one per line, then write END.")],
            "stop_sequences": ["END"],
        }
    )
    return Interaction(0, req, stream_response("stop_sequence", body))


def max_tokens() -> Interaction:
    body = (
        message_start("max_tokens")
        + content_block(
            0, "text", ["Once", " upon", " a", " time", ",", " a", " lighthouse", " keeper"]
        )
        + message_end("MAX_TOKENS", usage(6, 8, 72, 8))
        + DONE
    )
    req = request({"model": R7B, "messages": [user("Tell me a long story.")], "max_tokens": 8})
    return Interaction(0, req, stream_response("max_tokens", body))


def error_midstream() -> Interaction:
    # A failed generation: the text so far, then message-end with ERROR and its message.
    body = (
        message_start("error_midstream")
        + content_block(
            0, "text", ["Event", " sourcing", " stores", " every", " change"], end=False
        )
        + message_end("ERROR", None, error="internal server error, please try again later")
        + DONE
    )
    req = request({"model": COMMAND_A, "messages": [user("Explain event sourcing.")]})
    return Interaction(0, req, stream_response("error_midstream", body))


def timeout() -> Interaction:
    body = (
        message_start("timeout")
        + content_block(0, "thinking", ["Let", " me", " enumerate", " the", " cases"], end=False)
        + message_end("TIMEOUT", usage(40, 5, 120, 5))
        + DONE
    )
    req = request({"model": REASONING, "messages": [user("Prove the four colour theorem.")]})
    return Interaction(0, req, stream_response("timeout", body))


def eof_without_message_end() -> Interaction:
    # The connection dropped mid-call: no message-end. What came is kept, as an error.
    body = (
        message_start("eof_without_message_end")
        + tool_plan(["I", " will", " check", " Oslo", "."])
        + event(
            {
                "type": "tool-call-start",
                "index": 0,
                "delta": {
                    "message": {
                        "tool_calls": {
                            "id": call_id("get_weather", "oslo"),
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": ""},
                        }
                    }
                },
            }
        )
        + "".join(
            event(
                {
                    "type": "tool-call-delta",
                    "index": 0,
                    "delta": {"message": {"tool_calls": {"function": {"arguments": f}}}},
                }
            )
            for f in ['{\n    "', "location", '":', ' "', "Os"]
        )
    )
    req = request(
        {"model": COMMAND_A, "messages": [user("Weather in Oslo?")], "tools": [WEATHER_TOOL]}
    )
    return Interaction(0, req, stream_response("eof_without_message_end", body))


def http_400_context_overflow() -> Interaction:
    # reference/errors, 400: "too many tokens: size limit exceeded by N tokens. Try using
    # shorter or fewer inputs, ..." (the v2 form names the model's limit).
    req = request({"model": R7B, "messages": [user("word " * 40)]})
    resp = error_response(
        "http_400_context_overflow",
        400,
        "Bad Request",
        "too many tokens: size limit exceeded by 4821 tokens. Try using shorter or fewer inputs. "
        "The limit for this model is 132000 tokens.",
    )
    return Interaction(0, req, resp)


def http_400_max_tokens_too_large() -> Interaction:
    # reference/errors, 400: a max_tokens above the model's output limit. "too many tokens"
    # too, but a parameter error: shrinking the context does not fix it (not overflow).
    req = request({"model": R7B, "messages": [user("hello")], "max_tokens": 8192})
    resp = error_response(
        "http_400_max_tokens_too_large",
        400,
        "Bad Request",
        "too many tokens: max tokens must be less than or equal to 4096, the maximum output "
        "for this model - received 8192.",
    )
    return Interaction(0, req, resp)


def http_429_rate_limit() -> Interaction:
    # reference/errors, 429; Cohere documents no retry-after or rate-limit headers.
    req = request({"model": COMMAND_A, "messages": [user("hello")]})
    resp = error_response(
        "http_429_rate_limit",
        429,
        "Too Many Requests",
        "You are past the per minute request limit, please wait and try again later.",
    )
    return Interaction(0, req, resp)


def http_500_server_error() -> Interaction:
    req = request({"model": COMMAND_A, "messages": [user("hello")]})
    resp = error_response(
        "http_500_server_error", 500, "Internal Server Error", "internal server error"
    )
    return Interaction(0, req, resp)


CASSETTES = {
    "plain_text": plain_text,
    "thinking": thinking,
    "tool_call_single": tool_call_single,
    "parallel_tool_calls": parallel_tool_calls,
    "citations": citations,
    "stop_sequence": stop_sequence,
    "max_tokens": max_tokens,
    "error_midstream": error_midstream,
    "timeout": timeout,
    "eof_without_message_end": eof_without_message_end,
    "http_400_context_overflow": http_400_context_overflow,
    "http_400_max_tokens_too_large": http_400_max_tokens_too_large,
    "http_429_rate_limit": http_429_rate_limit,
    "http_500_server_error": http_500_server_error,
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in CASSETTES.items():
        dump_cassette([build()], OUT / f"{name}.yaml")
        print(f"wrote {OUT / name}.yaml")


if __name__ == "__main__":
    main()
