"""Writes the bundled ollama cassettes from the documented wire format.

Run from the repo root: ``python cassettes/_generate/ollama.py``, then refresh
specs/expected/ollama/ with ``stream_harness.recordings.golden.write_expected`` (the golden test prints the
exact line) and review the diff.

Every stream is written by hand from Ollama's API docs (https://docs.ollama.com/api,
"Streaming"; the streaming tool-calling post https://ollama.com/blog/streaming-tool) and
``api/types.go`` (ChatResponse, Message, ToolCall, Metrics) plus the facts in
/work/shared/research/provider-facts.md (1.3 NDJSON, 3.1 done reasons, 4.3 the overflow
message); none is copied from the recorded corpus. The shapes follow what the server
sends:

- ``application/x-ndjson``, one compact JSON object per line, ``\\n`` after each (Go's
  ``json.Encoder``), ``created_at`` with nanosecond-ish precision;
- ``message.content`` is ``""`` on every line that carries only thinking or tool calls;
- the last line has ``done: true``, ``done_reason``, ``total_duration``,
  ``load_duration``, ``prompt_eval_count``, ``prompt_eval_duration``, ``eval_count``,
  ``eval_duration`` (counts and durations are omitted when 0: ``omitempty``);
- tool calls arrive whole; servers before tool-call ids send ``{"function": {"name",
  "arguments"}}``, newer ones add ``"id"`` and ``function.index``;
- errors before streaming are HTTP 4xx/5xx with ``{"error": "..."}``; an error after
  the stream started is one more line ``{"error": "..."}``.

Ollama has no prompt caching counters, no refusal or content-filter stop reason and (run
locally) no rate limits, so the common list's cache-usage, refusal and 429 cases have
no Ollama form; ``http_503_server_busy`` (the queue-full reply) stands in for the
retryable capacity error. There are no keys, hosts other than localhost, or cookies.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from stream_harness.recordings.cassette import Interaction, Request, Response, dump_cassette  # noqa: E402

OUT = ROOT / "cassettes" / "ollama"
URI = "http://localhost:11434/api/chat"
LLAMA = "llama3.2:3b"
QWEN = "qwen3:8b"
DATE = "Wed, 05 Nov 2025 14:00:00 GMT"


def compact(value: Any) -> str:
    # Go's encoding/json: compact, non-ASCII kept, but <, > and & escaped as \u003c etc.
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class Lines:
    """Builds one NDJSON body; created_at advances by a fixed step per line."""

    def __init__(self, model: str, second: int = 0) -> None:
        self.model = model
        self.lines: list[str] = []
        self.micro = second * 1_000_000

    def _stamp(self) -> str:
        self.micro += 19_873
        seconds, micro = divmod(self.micro, 1_000_000)
        return f"2025-11-05T14:00:{seconds:02d}.{micro:06d}Z"

    def line(self, message: dict[str, Any], **extra: Any) -> Lines:
        obj: dict[str, Any] = {"model": self.model, "created_at": self._stamp()}
        obj["message"] = {"role": "assistant", "content": "", **message}
        obj["done"] = False
        obj.update(extra)
        self.lines.append(compact(obj))
        return self

    def content(self, *pieces: str) -> Lines:
        for piece in pieces:
            self.line({"content": piece})
        return self

    def thinking(self, *pieces: str) -> Lines:
        for piece in pieces:
            self.line({"thinking": piece})
        return self

    def tool_calls(self, *calls: dict[str, Any]) -> Lines:
        return self.line({"tool_calls": list(calls)})

    def done(self, reason: str | None, prompt: int, generated: int) -> Lines:
        obj: dict[str, Any] = {
            "model": self.model,
            "created_at": self._stamp(),
            "message": {"role": "assistant", "content": ""},
            "done": True,
        }
        if reason is not None:
            obj["done_reason"] = reason
        obj["total_duration"] = 1_000_000 * (400 + 20 * generated)
        obj["load_duration"] = 21_804_333
        if prompt:
            obj["prompt_eval_count"] = prompt
            obj["prompt_eval_duration"] = 1_000_000 * (10 + prompt // 10)
        if generated:
            obj["eval_count"] = generated
            obj["eval_duration"] = 1_000_000 * 20 * generated
        self.lines.append(compact(obj))
        return self

    def error(self, message: str) -> Lines:
        self.lines.append(compact({"error": message}))
        return self

    def body(self) -> bytes:
        return "".join(line + "\n" for line in self.lines).encode()


def call(
    name: str, arguments: dict[str, Any], *, call_id: str | None = None, index: int | None = None
) -> dict[str, Any]:
    function: dict[str, Any] = {}
    if index is not None:
        function["index"] = index
    function["name"] = name
    function["arguments"] = arguments
    out: dict[str, Any] = {}
    if call_id is not None:
        out["id"] = call_id
    out["function"] = function
    return out


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
TIME_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Current local time in an IANA time zone.",
        "parameters": {
            "type": "object",
            "properties": {"tz": {"type": "string"}},
            "required": ["tz"],
        },
    },
}


def request(body: dict[str, Any]) -> Request:
    headers = {
        "accept": ["application/json"],
        "content-type": ["application/json"],
        "host": ["localhost:11434"],
        "user-agent": ["ollama-python/0.6.0 (x86_64 linux) Python/3.12.3"],
    }
    return Request(
        method="POST", uri=URI, headers=headers, body=json.dumps({**body, "stream": True}).encode()
    )


def stream_response(lines: Lines) -> Response:
    headers = {
        "content-type": ["application/x-ndjson"],
        "date": [DATE],
        "transfer-encoding": ["chunked"],
    }
    return Response(status=200, reason="OK", headers=headers, body=lines.body())


def error_response(status: int, reason: str, message: str) -> Response:
    body = compact({"error": message}).encode()
    headers = {
        "content-length": [str(len(body))],
        "content-type": ["application/json; charset=utf-8"],
        "date": [DATE],
    }
    return Response(status=status, reason=reason, headers=headers, body=body)


# ---------------------------------------------------------------------------
# The cassettes
# ---------------------------------------------------------------------------


def plain_text() -> Interaction:
    lines = (
        Lines(LLAMA).content("The", " capital", " of France", " is Paris", ".").done("stop", 32, 8)
    )
    req = request({"model": LLAMA, "messages": [user("What is the capital of France?")]})
    return Interaction(0, req, stream_response(lines))


def thinking() -> Interaction:
    # PF 1.3: with "think": true the reasoning streams in message.thinking (content ""),
    # then the answer in message.content.
    lines = Lines(QWEN).thinking("Okay,", " compare", " 9.11 and 9.9:", " the tenths", " decide.")
    lines.content("9.9", " is larger", " than 9.11.").done("stop", 24, 41)
    req = request(
        {"model": QWEN, "messages": [user("Which is larger, 9.11 or 9.9?")], "think": True}
    )
    return Interaction(0, req, stream_response(lines))


def tool_call() -> Interaction:
    # The blog post's shape: thinking, then one line with a whole call and no id; the
    # done line says "stop" even though the model called a tool (-> tool_use).
    lines = Lines(QWEN).thinking("The user wants", " the weather in Toronto.")
    lines.tool_calls(call("get_weather", {"city": "Toronto", "unit": "celsius"})).done(
        "stop", 188, 37
    )
    req = request(
        {
            "model": QWEN,
            "messages": [user("What is the weather today in Toronto?")],
            "tools": [WEATHER_TOOL],
        }
    )
    return Interaction(0, req, stream_response(lines))


def parallel_tool_calls() -> Interaction:
    # Newer servers: ids and function.index; two calls on two lines.
    lines = Lines(QWEN).content("Checking both.")
    lines.tool_calls(call("get_weather", {"city": "Tokyo"}, call_id="call_k3x9q2ab", index=0))
    lines.tool_calls(call("get_time", {"tz": "Asia/Tokyo"}, call_id="call_7mfp1zde", index=1))
    lines.done("stop", 251, 52)
    req = request(
        {
            "model": QWEN,
            "messages": [user("Weather and local time in Tokyo?")],
            "tools": [WEATHER_TOOL, TIME_TOOL],
            "think": False,
        }
    )
    return Interaction(0, req, stream_response(lines))


def length_stop() -> Interaction:
    lines = (
        Lines(LLAMA)
        .content("Once upon", " a time,", " a lighthouse", " keeper")
        .done("length", 15, 8)
    )
    req = request(
        {"model": LLAMA, "messages": [user("Tell me a long story.")], "options": {"num_predict": 8}}
    )
    return Interaction(0, req, stream_response(lines))


def error_midstream() -> Interaction:
    # An error after the 200 response started arrives as one more NDJSON line.
    lines = Lines(LLAMA).content("Event sourcing stores", " every change as")
    lines.error("an error was encountered while running the model: unexpected EOF")
    req = request({"model": LLAMA, "messages": [user("Explain event sourcing.")]})
    return Interaction(0, req, stream_response(lines))


def eof_without_done() -> Interaction:
    # The connection dropped: no done line. The text is kept, the stream is an error.
    lines = Lines(LLAMA).content("Step one:", " preheat the oven.", " Step two:")
    req = request({"model": LLAMA, "messages": [user("How do I bake bread?")]})
    return Interaction(0, req, stream_response(lines))


def load() -> Interaction:
    # An empty messages list only loads the model: done at once with done_reason "load".
    lines = Lines(LLAMA).done("load", 0, 0)
    req = request({"model": LLAMA, "messages": []})
    return Interaction(0, req, stream_response(lines))


def http_400_context_overflow() -> Interaction:
    # provider-facts.md 4.3 (pi overflow.ts pattern 21).
    req = request(
        {
            "model": LLAMA,
            "messages": [user("word " * 40)],
            "options": {"num_ctx": 2048},
            "truncate": False,
        }
    )
    resp = error_response(
        400, "Bad Request", "prompt too long; exceeded max context length by 1350 tokens"
    )
    return Interaction(0, req, resp)


def http_404_model_not_found() -> Interaction:
    req = request({"model": "llama3.3", "messages": [user("hello")]})
    resp = error_response(404, "Not Found", 'model "llama3.3" not found, try pulling it first')
    return Interaction(0, req, resp)


def http_503_server_busy() -> Interaction:
    # The request queue is full (OLLAMA_MAX_QUEUE): retry later.
    req = request({"model": LLAMA, "messages": [user("hello")]})
    resp = error_response(
        503,
        "Service Unavailable",
        "server busy, please try again.  maximum pending requests exceeded",
    )
    return Interaction(0, req, resp)


CASSETTES = {
    "plain_text": plain_text,
    "thinking": thinking,
    "tool_call": tool_call,
    "parallel_tool_calls": parallel_tool_calls,
    "length_stop": length_stop,
    "error_midstream": error_midstream,
    "eof_without_done": eof_without_done,
    "load": load,
    "http_400_context_overflow": http_400_context_overflow,
    "http_404_model_not_found": http_404_model_not_found,
    "http_503_server_busy": http_503_server_busy,
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in CASSETTES.items():
        dump_cassette([build()], OUT / f"{name}.yaml")
        print(f"wrote {OUT / name}.yaml")


if __name__ == "__main__":
    main()
