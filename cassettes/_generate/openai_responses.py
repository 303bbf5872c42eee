"""Writes the bundled openai-responses cassettes from the documented wire format.

Run from the repo root: ``python cassettes/_generate/openai_responses.py``, then refresh
specs/expected/openai-responses/ with ``stream_harness.recordings.golden.write_expected`` (the golden test
prints the one-liner) and review the diff.

Every stream is written by hand from the Responses streaming event reference and the facts
in /work/shared/research/provider-facts.md (2.3 event taxonomy, 3.1 statuses and
incomplete reasons, 5.2 errors and rate-limit headers, cases 28-33 of section 7); none is
copied from the recorded corpus. The shapes follow what the real API sends (as the corpus
shows them): ``event:`` equal to the JSON ``type``, compact JSON with ``type`` first and
``sequence_number`` last, a ``response`` object on every lifecycle event, encrypted
reasoning that differs between ``output_item.added`` and ``.done``. One cassette has
OpenRouter's framing instead (no ``event:`` lines, a ``: OPENROUTER PROCESSING`` comment,
``data: [DONE]`` after the terminal event).

Ids and encrypted payloads are made up (deterministic, from hashes of labels); there are
no keys, organisation or project ids, or cookies.
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

OUT = ROOT / "cassettes" / "openai-responses"
URI = "https://api.openai.com/v1/responses"
OPENROUTER_URI = "https://openrouter.ai/api/v1/responses"
GPT41 = "gpt-4.1-2025-04-14"
GPT41_MINI = "gpt-4.1-mini-2025-04-14"
GPT5 = "gpt-5-2025-08-07"
O4_MINI = "o4-mini-2025-04-16"
CREATED_AT = 1767225600  # 2026-01-01T00:00:00Z


def hexid(label: str, size: int = 48) -> str:
    """A made-up hex id of ``size`` characters, stable per label."""
    out = ""
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(f"{label}:{counter}".encode()).hexdigest()
        counter += 1
    return out[:size]


def opaque(label: str, size: int) -> str:
    """A made-up Fernet-looking blob (OpenAI's encrypted_content starts with gAAAAA)."""
    raw = b""
    counter = 0
    while len(raw) < size:
        raw += hashlib.sha256(f"{label}:{counter}".encode()).digest()
        counter += 1
    return "gAAAAAB" + base64.urlsafe_b64encode(raw[:size]).decode()


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def usage(
    input_tokens: int, output_tokens: int, *, cached: int = 0, reasoning: int = 0
) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


class Stream:
    """Builds one response body: events numbered in order, the response object kept."""

    def __init__(
        self,
        label: str,
        model: str,
        *,
        tools: list[dict[str, Any]] | None = None,
        reasoning: dict[str, Any] | None = None,
        max_output_tokens: int | None = None,
        store: bool = True,
        openrouter: bool = False,
        rotate_ids: bool = False,
    ) -> None:
        self.label = label
        self.openrouter = openrouter
        # GitHub Copilot's Responses API gives every event of one output item another
        # item id (litellm#30072, vercel/ai#18548): each emitted id is replaced by a
        # fresh opaque one, the output_index staying what it was.
        self.rotate_ids = rotate_ids
        self.seq = 0
        self.parts: list[str] = [": OPENROUTER PROCESSING\n\n"] if openrouter else []
        prefix = "gen-1767225600-" if openrouter else "resp_"
        self.response: dict[str, Any] = {
            "id": prefix + hexid(f"{label}:resp", 20 if openrouter else 48),
            "object": "response",
            "created_at": CREATED_AT,
            "status": "in_progress",
            "background": False,
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "max_output_tokens": max_output_tokens,
            "model": model,
            "output": [],
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "reasoning": reasoning or {"effort": None, "summary": None},
            "store": store,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": tools or [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": None,
            "user": None,
            "metadata": {},
        }

    def item_id(self, kind: str, n: int) -> str:
        if self.openrouter:
            return f"{kind}_tmp_{hexid(f'{self.label}:{kind}:{n}', 11)}"
        return f"{kind}_{hexid(f'{self.label}:{kind}:{n}', 50)}"

    def emit(self, etype: str, **fields: Any) -> None:
        if self.rotate_ids:
            fresh = opaque(f"{self.label}:item-id:{self.seq}", 48)
            if "item_id" in fields:
                fields["item_id"] = fresh
            if isinstance(fields.get("item"), dict):
                fields["item"] = {**fields["item"], "id": fresh}
        payload = {"type": etype, **fields, "sequence_number": self.seq}
        self.seq += 1
        line = f"data: {compact(payload)}\n\n"
        self.parts.append(line if self.openrouter else f"event: {etype}\n{line}")

    def snapshot(self, status: str) -> dict[str, Any]:
        return {**self.response, "status": status}

    def start(self) -> None:
        self.emit("response.created", response=self.snapshot("in_progress"))
        self.emit("response.in_progress", response=self.snapshot("in_progress"))

    def message(
        self,
        index: int,
        deltas: list[str],
        *,
        n: int = 0,
        annotations: list[dict[str, Any]] | None = None,
        annotate_after: int = 0,
        status: str = "completed",
        phase: str | None = None,
    ) -> dict[str, Any]:
        mid = self.item_id("msg", n)
        head: dict[str, Any] = {
            "id": mid,
            "type": "message",
            "status": "in_progress",
            "content": [],
        }
        if phase:
            head["phase"] = phase
        head["role"] = "assistant"
        self.emit("response.output_item.added", output_index=index, item=head)
        empty = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        self.emit(
            "response.content_part.added",
            item_id=mid,
            output_index=index,
            content_index=0,
            part=empty,
        )
        for i, delta in enumerate(deltas):
            self.emit(
                "response.output_text.delta",
                item_id=mid,
                output_index=index,
                content_index=0,
                delta=delta,
                logprobs=[],
            )
            if annotations and i == annotate_after:
                for k, annotation in enumerate(annotations):
                    self.emit(
                        "response.output_text.annotation.added",
                        item_id=mid,
                        output_index=index,
                        content_index=0,
                        annotation_index=k,
                        annotation=annotation,
                    )
        text = "".join(deltas)
        self.emit(
            "response.output_text.done",
            item_id=mid,
            output_index=index,
            content_index=0,
            text=text,
            logprobs=[],
        )
        part = {
            "type": "output_text",
            "annotations": annotations or [],
            "logprobs": [],
            "text": text,
        }
        self.emit(
            "response.content_part.done",
            item_id=mid,
            output_index=index,
            content_index=0,
            part=part,
        )
        item = {**head, "status": status, "content": [part]}
        self.emit("response.output_item.done", output_index=index, item=item)
        return item

    def reasoning(
        self, index: int, summary: list[list[str]], *, n: int = 0, encrypted: bool = True
    ) -> dict[str, Any]:
        rid = self.item_id("rs", n)
        head: dict[str, Any] = {"id": rid, "type": "reasoning", "summary": []}
        if encrypted:
            # The encrypted payload is re-encrypted between added and done (as the corpus
            # shows), so the two differ.
            head["encrypted_content"] = opaque(f"{self.label}:{rid}:added", 96)
        self.emit("response.output_item.added", output_index=index, item=head)
        parts = []
        for s, deltas in enumerate(summary):
            self.emit(
                "response.reasoning_summary_part.added",
                item_id=rid,
                output_index=index,
                summary_index=s,
                part={"type": "summary_text", "text": ""},
            )
            for delta in deltas:
                self.emit(
                    "response.reasoning_summary_text.delta",
                    item_id=rid,
                    output_index=index,
                    summary_index=s,
                    delta=delta,
                )
            text = "".join(deltas)
            self.emit(
                "response.reasoning_summary_text.done",
                item_id=rid,
                output_index=index,
                summary_index=s,
                text=text,
            )
            part = {"type": "summary_text", "text": text}
            self.emit(
                "response.reasoning_summary_part.done",
                item_id=rid,
                output_index=index,
                summary_index=s,
                part=part,
            )
            parts.append(part)
        item = {**head, "summary": parts}
        if encrypted:
            item["encrypted_content"] = opaque(f"{self.label}:{rid}:done", 128)
        self.emit("response.output_item.done", output_index=index, item=item)
        return item

    def function_call(
        self, index: int, name: str, deltas: list[str] | None, arguments: str, *, n: int = 0
    ) -> dict[str, Any]:
        """A call; ``deltas=None`` sends the arguments only in ``.done`` (PF 2.3)."""
        fid = self.item_id("fc", n)
        call_id = "call_" + hexid(f"{self.label}:call:{n}", 24)
        head = {
            "id": fid,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": call_id,
            "name": name,
        }
        self.emit("response.output_item.added", output_index=index, item=head)
        for delta in deltas or []:
            self.emit(
                "response.function_call_arguments.delta",
                item_id=fid,
                output_index=index,
                delta=delta,
            )
        self.emit(
            "response.function_call_arguments.done",
            item_id=fid,
            output_index=index,
            arguments=arguments,
        )
        item = {**head, "status": "completed", "arguments": arguments}
        self.emit("response.output_item.done", output_index=index, item=item)
        return item

    def end(
        self,
        etype: str,
        status: str,
        output: list[dict[str, Any]],
        u: dict[str, Any] | None,
        *,
        incomplete: str | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        final = self.snapshot(status)
        final["output"] = output
        final["usage"] = u
        if incomplete:
            final["incomplete_details"] = {"reason": incomplete}
        if error:
            final["error"] = error
        self.emit(etype, response=final)
        if self.openrouter:
            self.parts.append("data: [DONE]\n\n")

    def body(self) -> bytes:
        return "".join(self.parts).encode("utf-8")


def request(body: dict[str, Any], *, uri: str = URI, host: str = "api.openai.com") -> Request:
    raw = compact({**body, "stream": True}).encode()
    return Request(
        method="POST",
        uri=uri,
        headers={
            "accept": ["application/json"],
            "accept-encoding": ["gzip, deflate"],
            "connection": ["keep-alive"],
            "content-length": [str(len(raw))],
            "content-type": ["application/json"],
            "host": [host],
            "user-agent": ["OpenAI/Python 3.54.0"],
            "x-stainless-lang": ["python"],
        },
        body=raw,
    )


def sse_headers(label: str, *, openrouter: bool = False) -> dict[str, list[str]]:
    if openrouter:
        return {
            "access-control-allow-origin": ["*"],
            "cache-control": ["no-cache"],
            "connection": ["keep-alive"],
            "content-type": ["text/event-stream"],
            "transfer-encoding": ["chunked"],
        }
    return {
        "content-type": ["text/event-stream; charset=utf-8"],
        "transfer-encoding": ["chunked"],
        "connection": ["keep-alive"],
        "openai-processing-ms": ["212"],
        "openai-version": ["2020-10-01"],
        "x-request-id": ["req_" + hexid(f"{label}:req", 32)],
        "x-ratelimit-limit-requests": ["10000"],
        "x-ratelimit-remaining-requests": ["9999"],
        "x-ratelimit-reset-requests": ["6ms"],
        "x-ratelimit-limit-tokens": ["30000000"],
        "x-ratelimit-remaining-tokens": ["29999980"],
        "x-ratelimit-reset-tokens": ["0s"],
        "strict-transport-security": ["max-age=31536000; includeSubDomains; preload"],
    }


def streamed(req: Request, stream: Stream) -> Interaction:
    return Interaction(
        index=0,
        request=req,
        response=Response(
            status=200,
            reason="OK",
            headers=sse_headers(stream.label, openrouter=stream.openrouter),
            body=stream.body(),
        ),
    )


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Get the current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}
TIME_TOOL = {
    "type": "function",
    "name": "get_time",
    "description": "Get the current local time in an IANA time zone.",
    "parameters": {
        "type": "object",
        "properties": {"tz": {"type": "string"}},
        "required": ["tz"],
        "additionalProperties": False,
    },
    "strict": True,
}


# -- the cassettes ------------------------------------------------------------------------


def plain_text() -> Interaction:
    s = Stream("plain_text", GPT41_MINI)
    s.start()
    msg = s.message(0, ["Bonjour", " !", " Comment", " ça", " va", " ?"])
    s.end("response.completed", "completed", [msg], usage(14, 8))
    return streamed(request({"model": "gpt-4.1-mini", "input": user("Say hello in French.")}), s)


def reasoning_summary_encrypted() -> Interaction:
    """Case 33: two summary parts streamed as thinking, encrypted reasoning kept for replay."""
    effort = {"effort": "medium", "summary": "auto"}
    s = Stream("reasoning_summary_encrypted", O4_MINI, reasoning=effort, store=False)
    s.start()
    rs = s.reasoning(
        0,
        [
            ["**Comparing", " decimals**\n\n", "9.9 is 9.90,", " and 9.90 > 9.11."],
            ["**Answering", "**\n\n", "So 9.9 is", " larger."],
        ],
    )
    msg = s.message(1, ["9.9", " is larger", " than 9.11."])
    s.end("response.completed", "completed", [rs, msg], usage(21, 215, reasoning=192))
    body = {
        "model": "o4-mini",
        "input": user("Which is larger, 9.11 or 9.9?"),
        "reasoning": effort,
        "include": ["reasoning.encrypted_content"],
        "store": False,
    }
    return streamed(request(body), s)


def function_call() -> Interaction:
    """Case 29: completed with a function_call item -> tool_use."""
    s = Stream("function_call", GPT41, tools=[WEATHER_TOOL])
    s.start()
    fc = s.function_call(0, "get_weather", ['{"', "city", '":"', "Paris", '"}'], '{"city":"Paris"}')
    s.end("response.completed", "completed", [fc], usage(61, 15))
    body = {"model": "gpt-4.1", "input": user("Weather in Paris?"), "tools": [WEATHER_TOOL]}
    return streamed(request(body), s)


def parallel_function_calls() -> Interaction:
    s = Stream("parallel_function_calls", GPT41, tools=[WEATHER_TOOL, TIME_TOOL])
    s.start()
    a = s.function_call(0, "get_weather", ['{"city"', ':"To', 'kyo"}'], '{"city":"Tokyo"}', n=0)
    b = s.function_call(1, "get_time", ['{"tz":"', "Asia/", 'Tokyo"}'], '{"tz":"Asia/Tokyo"}', n=1)
    s.end("response.completed", "completed", [a, b], usage(96, 38))
    body = {
        "model": "gpt-4.1",
        "input": user("Weather and local time in Tokyo?"),
        "tools": [WEATHER_TOOL, TIME_TOOL],
        "parallel_tool_calls": True,
    }
    return streamed(request(body), s)


def done_only_arguments() -> Interaction:
    """A compatible server (OpenRouter framing) that sends arguments only in ``.done``."""
    s = Stream("done_only_arguments", "openai/gpt-4.1", tools=[WEATHER_TOOL], openrouter=True)
    s.start()
    fc = s.function_call(0, "get_weather", None, '{"city":"Zürich"}')
    s.end("response.completed", "completed", [fc], usage(60, 16))
    body = {"model": "openai/gpt-4.1", "input": user("Weather in Zürich?"), "tools": [WEATHER_TOOL]}
    return streamed(request(body, uri=OPENROUTER_URI, host="openrouter.ai"), s)


def refusal() -> Interaction:
    """A refusal part: text block, then error with the refusal as the message."""
    s = Stream("refusal", GPT41)
    s.start()
    mid = s.item_id("msg", 0)
    head = {
        "id": mid,
        "type": "message",
        "status": "in_progress",
        "content": [],
        "role": "assistant",
    }
    s.emit("response.output_item.added", output_index=0, item=head)
    s.emit(
        "response.content_part.added",
        item_id=mid,
        output_index=0,
        content_index=0,
        part={"type": "refusal", "refusal": ""},
    )
    deltas = ["I'm sorry,", " but I can't", " help with that."]
    for delta in deltas:
        s.emit("response.refusal.delta", item_id=mid, output_index=0, content_index=0, delta=delta)
    text = "".join(deltas)
    s.emit("response.refusal.done", item_id=mid, output_index=0, content_index=0, refusal=text)
    part = {"type": "refusal", "refusal": text}
    s.emit("response.content_part.done", item_id=mid, output_index=0, content_index=0, part=part)
    item = {**head, "status": "completed", "content": [part]}
    s.emit("response.output_item.done", output_index=0, item=item)
    s.end("response.completed", "completed", [item], usage(18, 10))
    return streamed(request({"model": "gpt-4.1", "input": user("How do I pick a lock?")}), s)


def incomplete_max_output_tokens() -> Interaction:
    """Case 28: response.incomplete with max_output_tokens -> length."""
    s = Stream("incomplete_max_output_tokens", GPT41_MINI, max_output_tokens=16)
    s.start()
    deltas = [
        "Streaming",
        " lets a",
        " client show",
        " tokens as",
        " they are",
        " generated,",
        " so",
    ]
    msg = s.message(0, deltas, status="incomplete")
    s.end("response.incomplete", "incomplete", [msg], usage(15, 16), incomplete="max_output_tokens")
    body = {
        "model": "gpt-4.1-mini",
        "input": user("Explain streaming in detail."),
        "max_output_tokens": 16,
    }
    return streamed(request(body), s)


def incomplete_content_filter() -> Interaction:
    """Case 28: response.incomplete with content_filter -> error, text kept."""
    s = Stream("incomplete_content_filter", GPT41_MINI)
    s.start()
    msg = s.message(0, ["Here is the", " story:", " Once"], status="incomplete")
    s.end("response.incomplete", "incomplete", [msg], usage(22, 5), incomplete="content_filter")
    return streamed(request({"model": "gpt-4.1-mini", "input": user("Write a story.")}), s)


def failed_rate_limit() -> Interaction:
    """Case 32: response.failed with rate_limit_exceeded after some text."""
    s = Stream("failed_rate_limit", GPT41)
    s.start()
    mid = s.item_id("msg", 0)
    head = {
        "id": mid,
        "type": "message",
        "status": "in_progress",
        "content": [],
        "role": "assistant",
    }
    s.emit("response.output_item.added", output_index=0, item=head)
    empty = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    s.emit("response.content_part.added", item_id=mid, output_index=0, content_index=0, part=empty)
    for delta in ["The first", " three primes", " are"]:
        s.emit(
            "response.output_text.delta",
            item_id=mid,
            output_index=0,
            content_index=0,
            delta=delta,
            logprobs=[],
        )
    error = {
        "code": "rate_limit_exceeded",
        "message": "Rate limit reached for gpt-4.1 on tokens per min (TPM): Limit 30000, "
        "Used 29800, Requested 420. Please try again in 440ms.",
    }
    s.end("response.failed", "failed", [], None, error=error)
    return streamed(request({"model": "gpt-4.1", "input": user("List the first primes.")}), s)


def error_event_top_level() -> Interaction:
    """Case 30 (documented shape): top-level code/message; the response.failed is dropped."""
    s = Stream("error_event_top_level", GPT41)
    s.start()
    mid = s.item_id("msg", 0)
    head = {
        "id": mid,
        "type": "message",
        "status": "in_progress",
        "content": [],
        "role": "assistant",
    }
    s.emit("response.output_item.added", output_index=0, item=head)
    empty = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    s.emit("response.content_part.added", item_id=mid, output_index=0, content_index=0, part=empty)
    for delta in ["Sure", ", here", " is a haiku:\n"]:
        s.emit(
            "response.output_text.delta",
            item_id=mid,
            output_index=0,
            content_index=0,
            delta=delta,
            logprobs=[],
        )
    message = (
        "The server had an error processing your request. Sorry about that! You can retry "
        "your request, or contact us through our help center if you keep seeing this error."
    )
    s.emit("error", code="server_error", message=message, param=None)
    s.end("response.failed", "failed", [], None, error={"code": "server_error", "message": message})
    return streamed(request({"model": "gpt-4.1", "input": user("Write a haiku.")}), s)


def error_event_context_length_exceeded() -> Interaction:
    """Cases 30, 31 (observed nested shape): context_length_exceeded at sequence 2."""
    s = Stream("error_event_context_length_exceeded", GPT5)
    s.start()
    error = {
        "type": "invalid_request_error",
        "code": "context_length_exceeded",
        "message": "Your input exceeds the context window of this model. Please adjust your "
        "input and try again.",
        "param": "input",
    }
    s.emit("error", error=error)
    s.end(
        "response.failed",
        "failed",
        [],
        None,
        error={"code": "context_length_exceeded", "message": error["message"]},
    )
    return streamed(request({"model": "gpt-5", "input": user("Summarise this log: ...")}), s)


def web_search_annotations() -> Interaction:
    """A web_search_call (provider block) and a url_citation annotation."""
    tools = [{"type": "web_search", "search_context_size": "medium", "user_location": None}]
    s = Stream("web_search_annotations", GPT41, tools=tools)
    s.start()
    wid = s.item_id("ws", 0)
    s.emit(
        "response.output_item.added",
        output_index=0,
        item={"id": wid, "type": "web_search_call", "status": "in_progress"},
    )
    for phase in ("in_progress", "searching", "completed"):
        s.emit(f"response.web_search_call.{phase}", item_id=wid, output_index=0)
    ws = {
        "id": wid,
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": "highest mountain in Switzerland"},
    }
    s.emit("response.output_item.done", output_index=0, item=ws)
    deltas = [
        "The highest mountain in Switzerland is the **Dufourspitze** (4,634 m).",
        " ([en.wikipedia.org](https://en.wikipedia.org/wiki/Dufourspitze?utm_source=openai))",
    ]
    text = "".join(deltas)
    cited = text[text.index("([") :]
    annotation = {
        "type": "url_citation",
        "start_index": text.index(cited),
        "end_index": text.index(cited) + len(cited),
        "title": "Dufourspitze - Wikipedia",
        "url": "https://en.wikipedia.org/wiki/Dufourspitze?utm_source=openai",
    }
    msg = s.message(1, deltas, annotations=[annotation], annotate_after=1)
    s.end("response.completed", "completed", [ws, msg], usage(311, 52))
    body = {
        "model": "gpt-4.1",
        "input": user("What is the highest mountain in Switzerland? Cite a source."),
        "tools": tools,
    }
    return streamed(request(body), s)


def cache_usage() -> Interaction:
    """Usage with cached input tokens: input excludes them (specs/contract.md, Usage)."""
    s = Stream("cache_usage", GPT41_MINI)
    s.start()
    msg = s.message(0, ["Yes", ", the", " contract", " allows", " it."])
    s.end("response.completed", "completed", [msg], usage(2006, 7, cached=1920))
    body = {
        "model": "gpt-4.1-mini",
        "instructions": "You answer questions about the attached contract. " * 40,
        "input": user("Does the contract allow subletting?"),
        "prompt_cache_key": "contract-qa",
    }
    return streamed(request(body), s)


def custom_tool_call() -> Interaction:
    """A free-form (custom) tool call: arguments {"input": <text>}."""
    tool = {"type": "custom", "name": "code_exec", "description": "Runs Python code."}
    s = Stream("custom_tool_call", GPT5, tools=[tool])
    s.start()
    cid = s.item_id("ctc", 0)
    call_id = "call_" + hexid("custom_tool_call:call:0", 24)
    head = {
        "id": cid,
        "type": "custom_tool_call",
        "status": "in_progress",
        "call_id": call_id,
        "input": "",
        "name": "code_exec",
    }
    s.emit("response.output_item.added", output_index=0, item=head)
    deltas = ["print(", '"hé', 'llo")\n', "print(2", " ** 10)"]
    for delta in deltas:
        s.emit("response.custom_tool_call_input.delta", item_id=cid, output_index=0, delta=delta)
    text = "".join(deltas)
    s.emit("response.custom_tool_call_input.done", item_id=cid, output_index=0, input=text)
    item = {**head, "status": "completed", "input": text}
    s.emit("response.output_item.done", output_index=0, item=item)
    s.end("response.completed", "completed", [item], usage(80, 30))
    body = {"model": "gpt-5", "input": user("Run a hello world and 2**10."), "tools": [tool]}
    return streamed(request(body), s)


def eof_without_terminal() -> Interaction:
    """Case 62: the body ends mid-message, with no terminal response event."""
    s = Stream("eof_without_terminal", GPT41_MINI)
    s.start()
    mid = s.item_id("msg", 0)
    head = {
        "id": mid,
        "type": "message",
        "status": "in_progress",
        "content": [],
        "role": "assistant",
    }
    s.emit("response.output_item.added", output_index=0, item=head)
    empty = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    s.emit("response.content_part.added", item_id=mid, output_index=0, content_index=0, part=empty)
    for delta in ["Once upon", " a time,", " a stream"]:
        s.emit(
            "response.output_text.delta",
            item_id=mid,
            output_index=0,
            content_index=0,
            delta=delta,
            logprobs=[],
        )
    return streamed(request({"model": "gpt-4.1-mini", "input": user("Tell me a story.")}), s)


def http_400_context_overflow() -> Interaction:
    body = {
        "error": {
            "message": "Your input exceeds the context window of this model. Please adjust your "
            "input and try again.",
            "type": "invalid_request_error",
            "param": "input",
            "code": "context_length_exceeded",
        }
    }
    raw = (json.dumps(body, indent=2) + "\n").encode()
    return Interaction(
        index=0,
        request=request({"model": "gpt-4.1", "input": user("<a very long document>")}),
        response=Response(
            status=400,
            reason="Bad Request",
            headers={
                "content-type": ["application/json"],
                "content-length": [str(len(raw))],
                "openai-version": ["2020-10-01"],
                "x-request-id": ["req_" + hexid("http_400:req", 32)],
                "openai-processing-ms": ["41"],
            },
            body=raw,
        ),
    )


def http_429_rate_limit() -> Interaction:
    body = {
        "error": {
            "message": "Rate limit reached for gpt-4.1 on tokens per min (TPM): Limit 30000, "
            "Used 28000, Requested 4000. Please try again in 4s. Visit "
            "https://platform.openai.com/account/rate-limits to learn more.",
            "type": "tokens",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
    raw = (json.dumps(body, indent=4) + "\n").encode()
    return Interaction(
        index=0,
        request=request({"model": "gpt-4.1", "input": user("Hello")}),
        response=Response(
            status=429,
            reason="Too Many Requests",
            headers={
                "content-type": ["application/json; charset=utf-8"],
                "content-length": [str(len(raw))],
                "retry-after": ["4"],
                "x-ratelimit-limit-requests": ["500"],
                "x-ratelimit-limit-tokens": ["30000"],
                "x-ratelimit-remaining-requests": ["499"],
                "x-ratelimit-remaining-tokens": ["0"],
                "x-ratelimit-reset-requests": ["120ms"],
                "x-ratelimit-reset-tokens": ["4s"],
                "x-request-id": ["req_" + hexid("http_429:req", 32)],
            },
            body=raw,
        ),
    )


def moderation_phase() -> Interaction:
    """Newer payloads (research/corpus-visible-notes.md section 6): the response object
    carries `moderation` (null while in progress, the input's moderation result at
    `response.completed`) and the message item a `phase` ("final_answer"), after a
    reasoning item whose summary streams. Neither changes the content; a strict model of
    the response object must accept them."""
    effort = {"effort": "low", "summary": "auto"}
    s = Stream("moderation_phase", GPT5, reasoning=effort)
    s.response["moderation"] = None
    s.start()
    rs = s.reasoning(0, [["**Answering directly**\n\nA short factual answer."]])
    msg = s.message(1, ["Mount", " Everest", " is 8,849", " m", " high."], phase="final_answer")
    categories = ["harassment", "hate", "illicit", "self-harm", "sexual", "violence"]
    s.response["moderation"] = {
        "input": {
            "type": "moderation_result",
            "categories": {c: False for c in categories},
            "category_applied_input_types": {c: ["text"] for c in categories},
            "category_scores": {c: 0.00021 for c in categories},
            "flagged": False,
            "model": "omni-moderation-latest",
        }
    }
    s.end("response.completed", "completed", [rs, msg], usage(19, 88, reasoning=64))
    return streamed(
        request(
            {
                "model": "gpt-5",
                "input": user("How high is Mount Everest?"),
                "reasoning": effort,
                "moderation": {"input": True},
            }
        ),
        s,
    )


def copilot_rotating_item_ids() -> Interaction:
    """GitHub Copilot's Responses API: every event of one output item carries another
    ``item_id`` (litellm#30072, vercel/ai#18548, docker/docker-agent#3846) while
    ``output_index`` stays stable. One reasoning item and one message, each once."""
    effort = {"effort": "low", "summary": "auto"}
    s = Stream(
        "copilot_rotating_item_ids", "gpt-5-mini", reasoning=effort, store=False, rotate_ids=True
    )
    s.start()
    rs = s.reasoning(0, [["**Checking units**\n\n", "A kilometre is 1,000 metres."]])
    msg = s.message(1, ["There are", " 1,000", " metres in", " a kilometre."])
    s.end("response.completed", "completed", [rs, msg], usage(24, 41, reasoning=24))
    body = {
        "model": "gpt-5-mini",
        "input": user("How many metres in a kilometre?"),
        "reasoning": effort,
        "store": False,
    }
    return streamed(
        request(body, uri="https://api.githubcopilot.com/responses", host="api.githubcopilot.com"),
        s,
    )


XAI_URI = "https://api.x.ai/v1/responses"
XAI_TOOLS = [{"type": "web_search"}, {"type": "x_search"}]


def xai_server_tool_calls() -> Interaction:
    """xAI runs its search tools itself and streams them as ``custom_tool_call`` items
    named after sub-tools the request never declared as client tools (vercel/ai#9896,
    #10523): provider blocks, not client calls, and the stop reason is the response's
    own (completed -> stop), not tool_use."""
    s = Stream("xai_server_tool_calls", "grok-4-1-fast-reasoning", tools=XAI_TOOLS, store=False)
    s.start()
    out = []
    searches = [
        ("web_search", '{"query":"Zurich population 2025","num_results":5}'),
        ("x_keyword_search", '{"query":"Zurich population","limit":5,"mode":"Latest"}'),
    ]
    for n, (name, arguments) in enumerate(searches):
        cid = s.item_id("ctc", n)
        head = {
            "id": cid,
            "type": "custom_tool_call",
            "status": "in_progress",
            "call_id": "xs_call_" + hexid(f"xai_server_tool_calls:call:{n}", 24),
            "input": "",
            "name": name,
        }
        s.emit("response.output_item.added", output_index=n, item=head)
        s.emit(
            "response.custom_tool_call_input.delta", item_id=cid, output_index=n, delta=arguments
        )
        s.emit("response.custom_tool_call_input.done", item_id=cid, output_index=n, input=arguments)
        item = {**head, "status": "completed", "input": arguments}
        s.emit("response.output_item.done", output_index=n, item=item)
        out.append(item)
    msg = s.message(2, ["Zurich has", " about 448,000", " inhabitants", " (2025)."])
    s.end("response.completed", "completed", [*out, msg], usage(1207, 96))
    body = {
        "model": "grok-4-1-fast-reasoning",
        "input": user("How many people live in Zurich?"),
        "tools": XAI_TOOLS,
        "store": False,
    }
    return streamed(request(body, uri=XAI_URI, host="api.x.ai"), s)


def xai_incomplete_max_len() -> Interaction:
    """xAI ends a response cut by max_output_tokens as incomplete with its own reason
    spelling ``REASON_MAX_LEN`` -> length (issue 14)."""
    s = Stream("xai_incomplete_max_len", "grok-4-1-fast-non-reasoning", max_output_tokens=8)
    s.start()
    msg = s.message(0, ["Zurich is", " the largest", " city of"], status="incomplete")
    s.end("response.incomplete", "incomplete", [msg], usage(14, 8), incomplete="REASON_MAX_LEN")
    body = {
        "model": "grok-4-1-fast-non-reasoning",
        "input": user("Describe Zurich."),
        "max_output_tokens": 8,
    }
    return streamed(request(body, uri=XAI_URI, host="api.x.ai"), s)


CASSETTES = {
    "plain_text": plain_text,
    "reasoning_summary_encrypted": reasoning_summary_encrypted,
    "function_call": function_call,
    "parallel_function_calls": parallel_function_calls,
    "done_only_arguments": done_only_arguments,
    "refusal": refusal,
    "incomplete_max_output_tokens": incomplete_max_output_tokens,
    "incomplete_content_filter": incomplete_content_filter,
    "failed_rate_limit": failed_rate_limit,
    "error_event_top_level": error_event_top_level,
    "error_event_context_length_exceeded": error_event_context_length_exceeded,
    "web_search_annotations": web_search_annotations,
    "cache_usage": cache_usage,
    "custom_tool_call": custom_tool_call,
    "eof_without_terminal": eof_without_terminal,
    "http_400_context_overflow": http_400_context_overflow,
    "http_429_rate_limit": http_429_rate_limit,
    "moderation_phase": moderation_phase,
    "copilot_rotating_item_ids": copilot_rotating_item_ids,
    "xai_server_tool_calls": xai_server_tool_calls,
    "xai_incomplete_max_len": xai_incomplete_max_len,
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in CASSETTES.items():
        dump_cassette([build()], OUT / f"{name}.yaml")
        print(f"wrote {OUT / name}.yaml")


if __name__ == "__main__":
    main()
