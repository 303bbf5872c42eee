"""Scripted model responses rendered to real wire bytes, per protocol, with their faults.

An agent scenario states a response once (text, thinking, tool calls, a fault) and is
served in several protocols, so the same conversation checks an agent on
openai-completions, openai-responses, anthropic-messages and google-generative-ai without a hand-written
stream per protocol. The bytes follow the shapes of the bundled cassettes'
generators (cassettes/_generate/), which follow each provider's documented streaming
format (research/provider-facts.md 2.1-2.3); the error bodies are those of
specs/error_bodies.yaml. This lives in the package, not in the generators, because the
agent server renders at run time from the user's own directory.

Each rendering also says what was really delivered (:class:`Served`): which calls had
their whole arguments and their block closed, whether the terminal event went out, the
text streamed, the retry hint. The agent checks judge an agent against that, not
against the script, since a fault changes what the agent could have known.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, Literal

from stream_harness.contract.events import (
    DoneEvent,
    ErrorEvent,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from stream_harness.errors import classify
from stream_harness.errors.durations import parse_http_date, seconds_until
from stream_harness.providers.registry import get_normalizer

PROTOCOLS: Final = (
    "openai-completions",
    "openai-responses",
    "anthropic-messages",
    "google-generative-ai",
)
"""The protocols a scripted response can be rendered in."""

ErrorKind = Literal["overloaded", "rate_limit", "server_error"]


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Fault:
    """What goes wrong with one response (specs/scenarios.md, "Agent scenarios")."""

    cut_at: int | None = None  # the connection drops after this many body bytes
    cut_in_tool_args: bool | int = (
        False  # ... inside the first (or the N-th, 1-based) call's arguments
    )
    http_status: int | None = None  # an HTTP error instead of a stream
    headers: Mapping[str, str] = field(default_factory=dict)
    body: str | None = None  # the error body; default: the provider's own for the status
    overflow: bool = False  # the provider's context-overflow 400
    error_event: ErrorKind | None = None  # a 200 stream that ends in an error event
    length_stop_in_tool_call: bool = False  # the output limit hits inside a call's arguments
    no_terminal_event: bool = False  # the body ends cleanly without the terminal event
    pace: float = 0.0  # seconds between chunks

    @property
    def kind(self) -> str:
        """One word for reports and reproduce commands."""
        if self.overflow:
            return "overflow"
        if self.http_status is not None:
            return f"http_{self.http_status}"
        for name in ("cut_in_tool_args", "length_stop_in_tool_call", "no_terminal_event"):
            if getattr(self, name):
                return name
        if self.cut_at is not None:
            return "cut_at"
        if self.error_event is not None:
            return f"error_event_{self.error_event}"
        return "pace" if self.pace else "none"


@dataclass(frozen=True, slots=True)
class Script:
    text: str = ""
    thinking: str | None = None  # rendered where the protocol streams it with a signature
    tool_calls: tuple[ScriptedCall, ...] = ()
    delta_size: int = 12
    input_tokens: int = 20
    output_tokens: int = 10


@dataclass(frozen=True, slots=True)
class ServedCall:
    """A tool call as served: ``delivered`` when its whole arguments and its end went out.

    ``strict`` is False when the delivered argument text (``raw``) was not valid JSON (its
    ``toolcall_end.strict``, specs/contract.md C7): ``arguments`` are then only the
    recovery cascade's guess, which no agent may run (A13)."""

    id: str
    name: str
    arguments: Mapping[str, Any]
    delivered: bool
    strict: bool = True
    raw: str | None = None


@dataclass(frozen=True, slots=True)
class Served:
    """One rendered response: the bytes to send and what they tell a correct client."""

    protocol: str
    status: int
    headers: tuple[tuple[str, str], ...]
    chunks: tuple[bytes, ...]
    cut: bool  # the connection drops after the chunks (no chunked terminator)
    pace: float
    complete: bool  # a 200 that ended with its terminal event and a normal stop
    stop: str  # stop, tool_use, length, error, none (no terminal event), http
    calls: tuple[ServedCall, ...]
    text: str  # the text streamed (all of it, even when the response then failed)
    thinking_signature: str | None
    thinking: str | None
    retry_after: float | None
    fault: str
    retryable: bool  # a correct client may resend this request
    overflow: bool


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return f"{head}data: {payload}\n\n".encode()


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _signature(thinking: str) -> str:
    # Opaque to clients; a client must send it back as received (PF 3.4).
    return "sig_" + hashlib.sha256(thinking.encode()).hexdigest()[:24]


# -- HTTP errors ------------------------------------------------------------------------------

_OPENAI_TYPES: Final = {429: "rate_limit_exceeded", 500: "server_error", 503: "server_error"}
_ANTHROPIC_TYPES: Final = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


_GOOGLE_STATUS: Final = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    408: "DEADLINE_EXCEEDED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    529: "UNAVAILABLE",
}


def error_body(protocol: str, status: int, *, overflow: bool = False) -> str:
    """The provider's own error body for a status (specs/error_bodies.yaml)."""
    if protocol == "google-generative-ai":
        message = (
            "The input token count (1048600) exceeds the maximum number of tokens allowed (1048576)."
            if overflow
            else {
                429: "You exceeded your current quota, please check your plan and billing details.",
                503: "The model is overloaded. Please try again later.",
            }.get(status, f"HTTP {status} from the scripted server")
        )
        code = _GOOGLE_STATUS.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")
        return json.dumps({"error": {"code": status, "message": message, "status": code}})
    if protocol == "anthropic-messages":
        if overflow:
            message = "prompt is too long: 213462 tokens > 200000 maximum"
            kind = "invalid_request_error"
        else:
            kind = _ANTHROPIC_TYPES.get(status, "api_error")
            message = {529: "Overloaded", 429: "Rate limited"}.get(status, f"HTTP {status}")
        return json.dumps({"type": "error", "error": {"type": kind, "message": message}})
    if overflow:
        return json.dumps(
            {
                "error": {
                    "message": "This model's maximum context length is 128000 tokens. However, "
                    "your messages resulted in 130347 tokens. Please reduce the length of "
                    "the messages.",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            }
        )
    kind = _OPENAI_TYPES.get(status, "invalid_request_error" if status < 500 else "server_error")
    return json.dumps(
        {
            "error": {
                "message": f"HTTP {status} from the scripted server",
                "type": kind,
                "code": kind,
            }
        }
    )


def _retryable_status(status: int) -> bool:
    # Every reference client resends 408, 409, 429 and >= 500 (PF 5.6); 4xx else never.
    return status in (408, 409, 429) or status >= 500


def _retry_after(headers: Mapping[str, str]) -> float | None:
    for name, value in headers.items():
        if name.lower() == "retry-after":
            try:
                return float(value)
            except ValueError:
                # An HTTP-date: the seconds until it from now, when the response is served
                # (a date past is no wait; clients read a far one as a hint above any cap).
                moment = parse_http_date(value)
                until = None if moment is None else seconds_until(moment, datetime.now(UTC))
                return None if until is None else max(until, 0.0)
        if name.lower() == "retry-after-ms":
            try:
                return float(value) / 1000
            except ValueError:
                return None
    return None


# -- streams ------------------------------------------------------------------------------------


@dataclass
class _Stream:
    """Events as they are rendered, with the marks the faults cut at."""

    chunks: list[bytes] = field(default_factory=list)
    first_args: int | None = None  # index of the chunk after the first arguments piece
    call_args: list[int] = field(default_factory=list)  # the same, per call
    terminal: int | None = None  # index of the first terminal chunk
    call_ends: dict[str, int] = field(default_factory=dict)  # call id -> chunk count at its end
    text_end: int = 0  # chunk count once the text is over

    def add(self, chunk: bytes) -> None:
        self.chunks.append(chunk)

    def mark_args(self, call: int) -> None:
        """A piece of call ``call``'s arguments was just added: remember the first of each."""
        if self.first_args is None:
            self.first_args = len(self.chunks)
        if len(self.call_args) == call:
            self.call_args.append(len(self.chunks))


def _args_pieces(arguments: Mapping[str, Any], size: int) -> list[str]:
    raw = json.dumps(dict(arguments), separators=(",", ":"))
    return _pieces(raw, max(4, min(size, len(raw) // 2 or 1)))


def _openai_completions(script: Script, fault: Fault, model: str, ident: str) -> _Stream:
    s = _Stream()
    base = {
        "id": f"chatcmpl-{ident}",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        return _sse(
            None,
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra},
        )

    s.add(chunk({"role": "assistant", "content": ""}))
    for piece in _pieces(script.text, script.delta_size) if script.text else []:
        s.add(chunk({"content": piece}))
    s.text_end = len(s.chunks)
    for n, call in enumerate(script.tool_calls):
        head = {
            "index": n,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        s.add(chunk({"tool_calls": [head]}))
        pieces = _args_pieces(call.arguments, script.delta_size)
        truncated = fault.length_stop_in_tool_call and n == len(script.tool_calls) - 1
        if truncated:
            pieces = pieces[: max(1, len(pieces) // 2)]
        for piece in pieces:
            s.add(chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]}))
            s.mark_args(n)
        if not truncated:
            s.call_ends[call.id] = len(s.chunks)
    finish = (
        "length"
        if fault.length_stop_in_tool_call
        else "tool_calls"
        if script.tool_calls
        else "stop"
    )
    s.terminal = len(s.chunks)
    # The finish reason, the usage-only chunk (stream_options.include_usage), then [DONE] (PF 2.2).
    s.add(chunk({}, finish))
    usage = {"prompt_tokens": script.input_tokens, "completion_tokens": script.output_tokens}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    s.add(_sse(None, {**base, "choices": [], "usage": usage}))
    s.add(_sse(None, "[DONE]"))
    return s


def _openai_completions_error(kind: ErrorKind) -> bytes:
    # OpenAI's in-band error as openai-python's Stream reads it (PF 2.2): a chunk with "error".
    message = {"overloaded": "The server is overloaded", "rate_limit": "Rate limit reached"}.get(
        kind, "The server had an error while processing your request."
    )
    return _sse(
        None,
        {
            "error": {
                "message": message,
                "type": "server_error" if kind != "rate_limit" else "rate_limit_exceeded",
            }
        },
    )


def _anthropic(script: Script, fault: Fault, model: str, ident: str) -> _Stream:
    s = _Stream()
    usage = {"input_tokens": script.input_tokens, "output_tokens": 1}
    message: dict[str, Any] = {
        "id": f"msg_{ident}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    s.add(_sse("message_start", {"type": "message_start", "message": message}))
    index = 0
    if script.thinking:
        s.add(
            _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                },
            )
        )
        for piece in _pieces(script.thinking, script.delta_size):
            s.add(
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "thinking_delta", "thinking": piece},
                    },
                )
            )
        s.add(
            _sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "signature_delta", "signature": _signature(script.thinking)},
                },
            )
        )
        s.add(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    if script.text:
        s.add(
            _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
        )
        for piece in _pieces(script.text, script.delta_size):
            s.add(
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": piece},
                    },
                )
            )
        s.add(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    s.text_end = len(s.chunks)
    for n, call in enumerate(script.tool_calls):
        s.add(
            _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": {},
                    },
                },
            )
        )
        pieces = _args_pieces(call.arguments, script.delta_size)
        truncated = fault.length_stop_in_tool_call and n == len(script.tool_calls) - 1
        if truncated:
            pieces = pieces[: max(1, len(pieces) // 2)]
        for piece in pieces:
            s.add(
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    },
                )
            )
            s.mark_args(n)
        if not truncated:
            s.add(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
            s.call_ends[call.id] = len(s.chunks)
        index += 1
    stop = (
        "max_tokens"
        if fault.length_stop_in_tool_call
        else "tool_use"
        if script.tool_calls
        else "end_turn"
    )
    s.terminal = len(s.chunks)
    s.add(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": script.output_tokens},
            },
        )
    )
    s.add(_sse("message_stop", {"type": "message_stop"}))
    return s


def _anthropic_error(kind: ErrorKind) -> bytes:
    wire = {
        "overloaded": ("overloaded_error", "Overloaded"),
        "rate_limit": ("rate_limit_error", "Rate limited"),
    }
    etype, message = wire.get(kind, ("api_error", "Internal server error"))
    return _sse("error", {"type": "error", "error": {"type": etype, "message": message}})


def _responses(script: Script, fault: Fault, model: str, ident: str) -> _Stream:
    s = _Stream()
    seq = iter(range(10**6))
    response: dict[str, Any] = {
        "id": f"resp_{ident}",
        "object": "response",
        "created_at": 1767225600,
        "status": "in_progress",
        "model": model,
        "output": [],
    }

    def ev(etype: str, **data: Any) -> bytes:
        return _sse(etype, {"type": etype, **data, "sequence_number": next(seq)})

    s.add(ev("response.created", response=response))
    output: list[dict[str, Any]] = []
    if script.text:
        item = {
            "id": f"msg_{ident}",
            "type": "message",
            "status": "in_progress",
            "role": "assistant",
            "content": [],
        }
        n = len(output)
        s.add(ev("response.output_item.added", output_index=n, item=item))
        s.add(
            ev(
                "response.content_part.added",
                item_id=f"msg_{ident}",
                output_index=n,
                content_index=0,
                part={"type": "output_text", "text": "", "annotations": []},
            )
        )
        for piece in _pieces(script.text, script.delta_size):
            s.add(
                ev(
                    "response.output_text.delta",
                    item_id=f"msg_{ident}",
                    output_index=n,
                    content_index=0,
                    delta=piece,
                )
            )
        s.add(
            ev(
                "response.output_text.done",
                item_id=f"msg_{ident}",
                output_index=n,
                content_index=0,
                text=script.text,
            )
        )
        part = {"type": "output_text", "text": script.text, "annotations": []}
        s.add(
            ev(
                "response.content_part.done",
                item_id=f"msg_{ident}",
                output_index=n,
                content_index=0,
                part=part,
            )
        )
        done = {**item, "status": "completed", "content": [part]}
        s.add(ev("response.output_item.done", output_index=n, item=done))
        output.append(done)
    s.text_end = len(s.chunks)
    for k, call in enumerate(script.tool_calls):
        n = len(output)
        item_id = f"fc_{call.id}"
        item = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": call.id,
            "name": call.name,
        }
        s.add(ev("response.output_item.added", output_index=n, item=item))
        pieces = _args_pieces(call.arguments, script.delta_size)
        truncated = fault.length_stop_in_tool_call and k == len(script.tool_calls) - 1
        if truncated:
            pieces = pieces[: max(1, len(pieces) // 2)]
        for piece in pieces:
            s.add(
                ev(
                    "response.function_call_arguments.delta",
                    item_id=item_id,
                    output_index=n,
                    delta=piece,
                )
            )
            s.mark_args(k)
        if not truncated:
            raw = "".join(pieces)
            s.add(
                ev(
                    "response.function_call_arguments.done",
                    item_id=item_id,
                    output_index=n,
                    arguments=raw,
                )
            )
            done = {**item, "status": "completed", "arguments": raw}
            s.add(ev("response.output_item.done", output_index=n, item=done))
            output.append(done)
            s.call_ends[call.id] = len(s.chunks)
    usage = {
        "input_tokens": script.input_tokens,
        "output_tokens": script.output_tokens,
        "total_tokens": script.input_tokens + script.output_tokens,
    }
    s.terminal = len(s.chunks)
    if fault.length_stop_in_tool_call:
        final = {
            **response,
            "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
            "output": output,
            "usage": usage,
        }
        s.add(ev("response.incomplete", response=final))
    else:
        final = {**response, "status": "completed", "output": output, "usage": usage}
        s.add(ev("response.completed", response=final))
    return s


def _responses_error(kind: ErrorKind) -> bytes:
    code = {"overloaded": "server_is_overloaded", "rate_limit": "rate_limit_exceeded"}.get(
        kind, "server_error"
    )
    message = {"overloaded": "The server is overloaded", "rate_limit": "Rate limit reached"}.get(
        kind, "The server had an error while processing your request."
    )
    return _sse(
        "error",
        {"type": "error", "code": code, "message": message, "param": None, "sequence_number": 999},
    )


def _google(script: Script, fault: Fault, model: str, ident: str) -> _Stream:
    # Gemini with alt=sse: each data line a whole GenerateContentResponse; a functionCall
    # part comes whole (args as an object, with the id the API sets, PF 2.4), so a cut
    # inside its arguments is a cut inside that chunk; the finishReason is the only end.
    s = _Stream()

    def chunk(parts: list[dict[str, Any]], finish: str | None = None) -> bytes:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        data: dict[str, Any] = {
            "candidates": [candidate],
            "modelVersion": model,
            "responseId": ident,
        }
        if finish:
            data["usageMetadata"] = {
                "promptTokenCount": script.input_tokens,
                "candidatesTokenCount": script.output_tokens,
                "totalTokenCount": script.input_tokens + script.output_tokens,
            }
        return _sse(None, data)

    for piece in _pieces(script.text, script.delta_size) if script.text else []:
        s.add(chunk([{"text": piece}]))
    s.text_end = len(s.chunks)
    for n, call in enumerate(script.tool_calls):
        truncated = fault.length_stop_in_tool_call and n == len(script.tool_calls) - 1
        if truncated:
            break  # the limit hit inside it: Gemini sends no part for it at all
        whole = chunk(
            [{"functionCall": {"id": call.id, "name": call.name, "args": dict(call.arguments)}}]
        )
        at = whole.index(b'"args":') + len(b'"args":') + 3
        s.add(whole[:at])
        s.mark_args(n)
        s.add(whole[at:])
        s.call_ends[call.id] = len(s.chunks)
    s.terminal = len(s.chunks)
    finish = "MAX_TOKENS" if fault.length_stop_in_tool_call else "STOP"
    s.add(chunk([{"text": ""}], finish))
    return s


def _google_error(kind: ErrorKind) -> bytes:
    code, status, message = {
        "overloaded": (503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
        "rate_limit": (429, "RESOURCE_EXHAUSTED", "You exceeded your current quota."),
    }.get(kind, (500, "INTERNAL", "An internal error has occurred."))
    return _sse(None, {"error": {"code": code, "message": message, "status": status}})


_STREAMS: Final = {
    "openai-completions": (_openai_completions, _openai_completions_error),
    "openai-responses": (_responses, _responses_error),
    "anthropic-messages": (_anthropic, _anthropic_error),
    "google-generative-ai": (_google, _google_error),
}


def render(
    protocol: str, script: Script, fault: Fault, *, model: str = "model", ident: str = "sh"
) -> Served:
    """The response ``script`` with ``fault``, as ``protocol`` sends it.

    ``ident`` names the response (``chatcmpl-``, ``resp_``, ``msg_`` ids, Gemini's
    ``responseId``): each response of a scenario gets its own, as the providers give,
    because frameworks key messages by them (LangGraph's ``add_messages`` replaces a
    message whose id it has seen: with one id for every response, the final answer
    overwrote the turn that asked for the tool)."""
    if protocol not in _STREAMS:
        raise ValueError(f"cannot render protocol {protocol!r} (known: {', '.join(PROTOCOLS)})")
    if fault.http_status is not None or fault.overflow:
        status = fault.http_status or 400
        body = (
            fault.body
            if fault.body is not None
            else error_body(protocol, status, overflow=fault.overflow)
        )
        headers = {"content-type": "application/json", **fault.headers}
        return Served(
            protocol,
            status,
            tuple(headers.items()),
            (body.encode(),),
            False,
            fault.pace,
            False,
            "http",
            (),
            "",
            None,
            None,
            _retry_after(fault.headers),
            fault.kind,
            _retryable_status(status) and not fault.overflow,
            fault.overflow,
        )
    build, error = _STREAMS[protocol]
    s = build(script, fault, model, ident)
    thinking = script.thinking if protocol == "anthropic-messages" else None
    chunks = list(s.chunks)
    cut = False
    stop = (
        "length" if fault.length_stop_in_tool_call else "tool_use" if script.tool_calls else "stop"
    )
    sent_text = script.text
    if fault.error_event is not None:
        # The content so far (the text, up to the calls), then the error instead of the end.
        keep = s.text_end if s.text_end else 1
        chunks = [*chunks[:keep], error(fault.error_event)]
        stop = "error"
    elif fault.no_terminal_event:
        assert s.terminal is not None
        chunks = chunks[: s.terminal]
        stop = "none"
    elif fault.cut_in_tool_args:
        which = 1 if fault.cut_in_tool_args is True else int(fault.cut_in_tool_args)
        if not 1 <= which <= len(s.call_args):
            raise ValueError(f"cut_in_tool_args: the response has no tool call {which}")
        chunks = chunks[: s.call_args[which - 1]]
        cut, stop = True, "none"
    elif fault.cut_at is not None:
        if fault.cut_at < sum(len(c) for c in chunks):
            chunks = _cut_at(chunks, fault.cut_at)
            cut, stop = True, "none"
    sent = sum(len(c) for c in chunks)
    ends = _ends(s.chunks)
    as_read = _arguments_as_read(protocol, chunks)
    calls = tuple(
        ServedCall(
            c.id,
            c.name,
            c.arguments,
            c.id in s.call_ends and ends[s.call_ends[c.id] - 1] <= sent,
            *as_read.get(c.id, (True, None)),
        )
        for c in script.tool_calls
        if c.id in s.call_ends or c.id in _started(s, script, c)
    )
    if stop in ("none", "error") and s.text_end:
        sent_text = _text_sent(script.text, ends[s.text_end - 1], sent)
    return Served(
        protocol,
        200,
        (("content-type", "text/event-stream"),),
        tuple(chunks),
        cut,
        fault.pace,
        stop in ("stop", "tool_use"),
        stop,
        calls,
        sent_text,
        _signature(thinking) if thinking else None,
        thinking,
        None,
        fault.kind,
        stop in ("none", "error"),
        False,
    )


def _arguments_as_read(protocol: str, chunks: Sequence[bytes]) -> dict[str, tuple[bool, str]]:
    """Call id -> (whether its argument text parsed strictly, that text), as our normalizer
    reads the bytes really sent: a fault that leaves a call's arguments not valid JSON is
    then known to the checks (A13) however the bytes were made."""
    normalizer = get_normalizer(protocol)
    events = normalizer.feed(b"".join(chunks)) + normalizer.close()
    return {
        e.tool_call.id: (e.strict is not False, e.raw_arguments or "")
        for e in events
        if isinstance(e, ToolCallEndEvent)
    }


def _started(s: _Stream, script: Script, call: ScriptedCall) -> set[str]:
    """{call.id} when some of the call went out on the wire (Gemini sends nothing of a call
    the output limit cut), else the empty set."""
    n = script.tool_calls.index(call)
    return {call.id} if n < len(s.call_args) else set()


def _cut_at(chunks: Sequence[bytes], offset: int) -> list[bytes]:
    """The chunks up to ``offset`` bytes, the last one split there: boundaries kept."""
    out: list[bytes] = []
    left = offset
    for c in chunks:
        if left <= 0:
            break
        out.append(c[:left])
        left -= len(c)
    return out


def _ends(chunks: Sequence[bytes]) -> list[int]:
    out, total = [], 0
    for c in chunks:
        total += len(c)
        out.append(total)
    return out


def _text_sent(text: str, text_end: int, sent: int) -> str:
    # A cut before the text is over: only an approximate prefix is known; the checks use
    # the text only when all of it went out.
    return text if sent >= text_end else ""


# -- recorded responses ---------------------------------------------------------------------


def served_from_bytes(
    protocol: str,
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    cut_at: int | None = None,
    cut: bool = False,
    pace: float = 0.0,
    fault: str = "recorded",
) -> Served:
    """A recorded response as served, what it delivered read by our own normalizer.

    A rendered response knows what it delivered by construction; a recording is read the
    way a correct client reads it: the calls whose ``toolcall_end`` came, the terminal
    event or the error it ended in, the error's classification (specs/retry.yaml,
    specs/overflow.yaml) for an HTTP error.
    """
    head = tuple((k, v) for k, v in headers.items() if k.lower() not in _HOP_HEADERS)
    if status >= 400:
        info = classify(status=status, body=body, headers=dict(headers), protocol=protocol)
        return Served(
            protocol, status, head, (body,), False, pace, False, "http", (), "", None, None,
            _retry_after(headers), fault, bool(info.retryable) or _retryable_status(status),
            info.kind == "overflow",
        )  # fmt: skip
    # ``cut``: the connection drops after ``body`` (the client sees a network failure, not
    # the end of the body); ``cut_at`` cuts a recording there.
    if cut_at is not None and cut_at < len(body):
        body, cut = body[:cut_at], True
    sent = body
    normalizer = get_normalizer(protocol)
    fed = normalizer.feed(sent)
    events = fed + normalizer.close()
    # A call ended by the bytes themselves; the ends close() adds at an early EOF only keep
    # the contract's grammar (specs/contract.md) and deliver nothing.
    ended = {e.tool_call.id: e.tool_call for e in fed if isinstance(e, ToolCallEndEvent)}
    ends = {e.tool_call.id: e for e in events if isinstance(e, ToolCallEndEvent)}
    closed = {k: e.tool_call for k, e in ends.items()}
    started = [e for e in events if isinstance(e, ToolCallStartEvent)]
    last = events[-1] if events else None
    complete = isinstance(last, DoneEvent)
    stop: str
    if isinstance(last, DoneEvent):
        stop = last.reason
    else:
        stop = "none" if cut or (isinstance(last, ErrorEvent) and last.error is None) else "error"
    calls = tuple(
        ServedCall(
            c.id,
            c.name,
            c.arguments,
            complete or c.id in ended,
            c.id not in ends or ends[c.id].strict is not False,
            ends[c.id].raw_arguments if c.id in ends else None,
        )
        for c in (
            closed.get(s.id or "") or ToolCall(id=s.id or "", name=s.name or "") for s in started
        )
    )
    if stop == "length" and calls:
        # The output limit cut the last call: whatever the normalizer closed, its
        # arguments are not the model's (specs/agent-contract.md, A6).
        calls = (*calls[:-1], dataclasses.replace(calls[-1], delivered=False))
    message = last.message if isinstance(last, DoneEvent | ErrorEvent) else None
    blocks = list(message.content) if message is not None else []
    text = "".join(b.content for b in blocks if isinstance(b, TextBlock))
    thinking = next((b for b in blocks if isinstance(b, ThinkingBlock) and b.signature), None)
    retryable = not complete and (
        stop == "none"
        or (isinstance(last, ErrorEvent) and last.error is not None and last.error.retryable)
    )
    content_type = dict((k.lower(), v) for k, v in head).get("content-type", "text/event-stream")
    return Served(
        protocol, 200, (("content-type", content_type),), (sent,), cut, pace, complete and stop != "length",
        stop, calls, text, thinking.signature if thinking else None, thinking.content if thinking else None,
        None, fault, retryable, False,
    )  # fmt: skip


_HOP_HEADERS: Final = frozenset(
    {"content-length", "transfer-encoding", "connection", "content-encoding"}
)
