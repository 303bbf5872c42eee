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

import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Final, Literal

from stream_harness.agents.scenario.faults import (
    WHOLE_CALLS,
    ByteAt,
    Ending,
    ErrorKind,
    FaultSpec,
    InCall,
    Place,
    Resolved,
    compact,
    normalize,
    piece_size,
    place_offset,
    unexpressible,
)
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
from stream_harness.wire.eventstream import encode_message

PROTOCOLS: Final = (
    "openai-completions",
    "openai-responses",
    "anthropic-messages",
    "google-generative-ai",
    "bedrock-converse-stream",
)
"""The protocols a scripted response can be rendered in."""

_CONTENT_TYPES: Final = {"bedrock-converse-stream": "application/vnd.amazon.eventstream"}
"""A 200 stream's content type where it is not ``text/event-stream``."""


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
    # The model of agents/scenario/faults.py: the sugar above maps onto it (faults.normalize).
    place: ByteAt | InCall | Literal["after_text"] | None = None
    ending: Ending | None = None
    error_kind: ErrorKind | None = None
    label: str | None = None  # the fault's word when the call was served wrong on purpose

    def resolved(self, calls: int) -> Resolved | None:
        """The stream fault in the new model, for a script of ``calls`` calls."""
        spec = FaultSpec.model_construct(
            place=self.place,
            ending=self.ending,
            kind=self.error_kind,
            cut_at=self.cut_at,
            cut_in_tool_args=self.cut_in_tool_args,
            error_event_after_200=self.error_event,
            length_stop_in_tool_call=self.length_stop_in_tool_call,
            no_terminal_event=self.no_terminal_event,
        )
        return normalize(spec, calls)

    @property
    def kind(self) -> str:
        """One word for reports and reproduce commands."""
        if self.ending is not None:
            return _word(Resolved(self.place, self.ending, self.error_kind))
        if self.label is not None:
            return self.label
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


def _word(fault: Resolved) -> str:
    """``length_in_call_1_last_value``, ``rst_at_byte_120``, ``error_event_overloaded``."""
    head = f"{fault.ending}_{fault.kind}" if fault.kind else fault.ending
    place = fault.place
    if isinstance(place, ByteAt):
        return f"{head}_at_byte_{place.byte}"
    if isinstance(place, InCall):
        return f"{head}_in_call_{place.call}_{place.at}"
    return f"{head}_after_text" if place == "after_text" else head


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
    reset: bool = False  # the drop is an RST, not a FIN


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


_BEDROCK_EXCEPTIONS: Final = {
    400: "ValidationException",
    401: "AccessDeniedException",
    403: "AccessDeniedException",
    408: "ModelTimeoutException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
    529: "ServiceUnavailableException",
}


def _bedrock_error_headers(status: int) -> dict[str, str]:
    """Bedrock names the exception in ``x-amzn-errortype`` (cassettes/_generate/
    bedrock_converse_stream.py); a status it has no exception for gets none."""
    name = _BEDROCK_EXCEPTIONS.get(status)
    return (
        {"x-amzn-errortype": f"{name}:http://internal.amazon.com/coral/com.amazon.bedrock/"}
        if name
        else {}
    )


def error_body(protocol: str, status: int, *, overflow: bool = False) -> str:
    """The provider's own error body for a status (specs/error_bodies.yaml)."""
    if protocol == "bedrock-converse-stream":
        message = (
            "Input is too long for requested model."
            if overflow
            else {
                429: "Too many requests, please wait before trying again.",
                503: "Model is getting throttled. Try your request again.",
            }.get(status, f"HTTP {status} from the scripted server")
        )
        return json.dumps({"message": message})
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
    mark: int | None = None  # chunk count at the place inside a call's arguments
    started: set[int] = field(default_factory=set)  # calls some of whose arguments went out
    terminal: int | None = None  # index of the first terminal chunk
    call_ends: dict[int, int] = field(default_factory=dict)  # call -> chunk count at its end
    text_end: int = 0  # chunk count once the text is over

    def add(self, chunk: bytes) -> None:
        self.chunks.append(chunk)


@dataclass(frozen=True, slots=True)
class _Planned:
    """One call as a renderer streams it: ``raw`` its arguments' text (cut short by a
    length or finish ending), ``split`` the offset the stream marks (a cut ending's
    place), ``closed`` whether its end goes out."""

    call: ScriptedCall
    raw: str
    size: int
    split: int | None = None
    closed: bool = True

    def pieces(self) -> list[tuple[str, bool]]:
        """The argument pieces, each with whether the place mark follows it."""
        if self.split is None:
            return [(p, False) for p in _pieces(self.raw, self.size)]
        head = _pieces(self.raw[: self.split], self.size)
        tail = _pieces(self.raw[self.split :], self.size) if self.split < len(self.raw) else []
        return [(p, i == len(head) - 1) for i, p in enumerate(head)] + [(p, False) for p in tail]


@dataclass(frozen=True, slots=True)
class _Plan:
    calls: tuple[_Planned, ...]
    length: bool  # the output limit ends the response (length, max_tokens, incomplete)
    cut_args: int | None = None  # the call (0-based) whose arguments a finish cut short


def _plan(script: Script, fault: Resolved | None, protocol: str) -> _Plan:
    """What each renderer streams for ``fault``: the calls in full, or cut at the place."""
    calls = [
        _Planned(c, compact(c.arguments), piece_size(compact(c.arguments), script.delta_size))
        for c in script.tool_calls
    ]
    if fault is None:
        return _Plan(tuple(calls), False)
    place = fault.place
    if isinstance(place, ByteAt) and fault.ending in ("length", "finish"):
        raise ValueError(f"a byte place cannot end in {fault.ending}")
    if place == "after_text" and fault.ending == "length":
        return _Plan((), True)  # the limit hits once the text is over: no call at all
    if not isinstance(place, InCall):
        return _Plan(tuple(calls), fault.ending == "length" and place is None)
    n = place.call - 1
    if n >= len(calls):
        raise ValueError(f"the response has no tool call {place.call}")
    at = place_offset(
        calls[n].call.arguments, place.at, script.delta_size, whole=protocol in WHOLE_CALLS
    )
    if at is None:
        raise ValueError(f"call {place.call}'s arguments have no place {place.at!r}")
    planned = calls[n]
    if fault.ending == "length":
        cut = _Planned(planned.call, planned.raw[:at], planned.size, closed=False)
        return _Plan((*calls[:n], cut), True)
    if fault.ending == "finish":
        cut = _Planned(planned.call, planned.raw[:at], planned.size)
        return _Plan((*calls[:n], cut), False, cut_args=n)
    calls[n] = _Planned(planned.call, planned.raw, planned.size, split=at)
    return _Plan(tuple(calls), False)


def _head_id(call: ScriptedCall, key: str) -> dict[str, str]:
    """The call's id under ``key``, none at all for a call served without one."""
    return {key: call.id} if call.id else {}


def _openai_completions(script: Script, plan: _Plan, model: str, ident: str) -> _Stream:
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
    for n, planned in enumerate(plan.calls):
        call = planned.call
        head = {
            "index": n,
            **_head_id(call, "id"),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        s.add(chunk({"tool_calls": [head]}))
        for piece, mark in planned.pieces():
            s.add(chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]}))
            s.started.add(n)
            if mark:
                s.mark = len(s.chunks)
        if planned.closed:
            s.call_ends[n] = len(s.chunks)
    finish = "length" if plan.length else "tool_calls" if plan.calls else "stop"
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


def _anthropic(script: Script, plan: _Plan, model: str, ident: str) -> _Stream:
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
        _anthropic_thinking(s, index, script.thinking, script.delta_size)
        index += 1
    if script.text:
        _anthropic_text(s, index, script.text, script.delta_size)
        index += 1
    s.text_end = len(s.chunks)
    _anthropic_calls(s, index, plan)
    stop = "max_tokens" if plan.length else "tool_use" if plan.calls else "end_turn"
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


def _block_start(index: int, block: Mapping[str, Any]) -> bytes:
    return _sse(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
    )


def _block_delta(index: int, delta: Mapping[str, Any]) -> bytes:
    return _sse(
        "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    )


def _block_stop(index: int) -> bytes:
    return _sse("content_block_stop", {"type": "content_block_stop", "index": index})


def _anthropic_thinking(s: _Stream, index: int, thinking: str, size: int) -> None:
    """The thinking block, its signature in a last delta before the stop (PF 3.4)."""
    s.add(_block_start(index, {"type": "thinking", "thinking": "", "signature": ""}))
    for piece in _pieces(thinking, size):
        s.add(_block_delta(index, {"type": "thinking_delta", "thinking": piece}))
    s.add(_block_delta(index, {"type": "signature_delta", "signature": _signature(thinking)}))
    s.add(_block_stop(index))


def _anthropic_text(s: _Stream, index: int, text: str, size: int) -> None:
    s.add(_block_start(index, {"type": "text", "text": ""}))
    for piece in _pieces(text, size):
        s.add(_block_delta(index, {"type": "text_delta", "text": piece}))
    s.add(_block_stop(index))


def _anthropic_calls(s: _Stream, index: int, plan: _Plan) -> None:
    """One tool_use block per call from block ``index`` on, marked where the faults cut."""
    for n, planned in enumerate(plan.calls):
        call = planned.call
        head = {"type": "tool_use", **_head_id(call, "id"), "name": call.name, "input": {}}
        s.add(_block_start(index, head))
        for piece, mark in planned.pieces():
            s.add(_block_delta(index, {"type": "input_json_delta", "partial_json": piece}))
            s.started.add(n)
            if mark:
                s.mark = len(s.chunks)
        if planned.closed:
            s.add(_block_stop(index))
            s.call_ends[n] = len(s.chunks)
        index += 1


def _anthropic_error(kind: ErrorKind) -> bytes:
    wire = {
        "overloaded": ("overloaded_error", "Overloaded"),
        "rate_limit": ("rate_limit_error", "Rate limited"),
    }
    etype, message = wire.get(kind, ("api_error", "Internal server error"))
    return _sse("error", {"type": "error", "error": {"type": etype, "message": message}})


class _ResponsesEvents:
    """The Responses API's events, each numbered by its ``sequence_number`` in send order."""

    def __init__(self) -> None:
        self._seq = iter(range(10**6))

    def __call__(self, etype: str, **data: Any) -> bytes:
        return _sse(etype, {"type": etype, **data, "sequence_number": next(self._seq)})


def _responses(script: Script, plan: _Plan, model: str, ident: str) -> _Stream:
    s = _Stream()
    ev = _ResponsesEvents()
    response: dict[str, Any] = {
        "id": f"resp_{ident}",
        "object": "response",
        "created_at": 1767225600,
        "status": "in_progress",
        "model": model,
        "output": [],
    }
    s.add(ev("response.created", response=response))
    output: list[dict[str, Any]] = []
    if script.text:
        output.append(_responses_message(s, ev, script, f"msg_{ident}"))
    s.text_end = len(s.chunks)
    _responses_calls(s, ev, plan, output)
    usage = {
        "input_tokens": script.input_tokens,
        "output_tokens": script.output_tokens,
        "total_tokens": script.input_tokens + script.output_tokens,
    }
    s.terminal = len(s.chunks)
    if plan.length:
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


def _responses_message(
    s: _Stream, ev: _ResponsesEvents, script: Script, item_id: str
) -> dict[str, Any]:
    """The text as the first output item (a message of one output_text part); returns the
    item as done, for the final response's ``output``."""
    item = {
        "id": item_id,
        "type": "message",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    where: dict[str, Any] = {"item_id": item_id, "output_index": 0, "content_index": 0}
    s.add(ev("response.output_item.added", output_index=0, item=item))
    empty = {"type": "output_text", "text": "", "annotations": []}
    s.add(ev("response.content_part.added", **where, part=empty))
    for piece in _pieces(script.text, script.delta_size):
        s.add(ev("response.output_text.delta", **where, delta=piece))
    s.add(ev("response.output_text.done", **where, text=script.text))
    part = {"type": "output_text", "text": script.text, "annotations": []}
    s.add(ev("response.content_part.done", **where, part=part))
    done = {**item, "status": "completed", "content": [part]}
    s.add(ev("response.output_item.done", output_index=0, item=done))
    return done


def _responses_calls(
    s: _Stream, ev: _ResponsesEvents, plan: _Plan, output: list[dict[str, Any]]
) -> None:
    """One function_call item per call, after the items in ``output``; each call whose end
    goes out joins ``output``. Item ids are unique within the response, as every Responses
    server makes them, even when two calls share a ``call_id`` (``mutate: {id: reused}``)."""
    item_ids = _item_ids([p.call.id for p in plan.calls])
    for k, planned in enumerate(plan.calls):
        call = planned.call
        n = len(output)
        item_id = item_ids[k]
        item = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            **_head_id(call, "call_id"),
            "name": call.name,
        }
        s.add(ev("response.output_item.added", output_index=n, item=item))
        for piece, mark in planned.pieces():
            s.add(
                ev(
                    "response.function_call_arguments.delta",
                    item_id=item_id,
                    output_index=n,
                    delta=piece,
                )
            )
            s.started.add(k)
            if mark:
                s.mark = len(s.chunks)
        if planned.closed:
            raw = planned.raw
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
            s.call_ends[k] = len(s.chunks)


def _item_ids(call_ids: Sequence[str]) -> list[str]:
    """``fc_<call id>`` (``fc_<position>`` without one), ``_<position>`` added to an id an
    earlier item of the response took: distinct call ids keep the bytes they always had."""
    out: list[str] = []
    for k, ident in enumerate(call_ids):
        item_id = f"fc_{ident or k}"
        while item_id in out:
            item_id += f"_{k}"
        out.append(item_id)
    return out


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


def _google(script: Script, plan: _Plan, model: str, ident: str) -> _Stream:
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
    for n, planned in enumerate(plan.calls):
        call = planned.call
        if not planned.closed:
            break  # the limit hit inside it: Gemini sends no part for it at all
        assert plan.cut_args != n, "Gemini sends whole calls (faults.unexpressible)"
        whole = chunk(
            [
                {
                    "functionCall": {
                        **_head_id(call, "id"),
                        "name": call.name,
                        "args": dict(call.arguments),
                    }
                }
            ]
        )
        # The args object is the compact JSON text (ASCII): a place is a byte offset in it.
        at = whole.index(b'"args":') + len(b'"args":') + (planned.split or 3)
        s.add(whole[:at])
        s.started.add(n)
        if planned.split is not None:
            s.mark = len(s.chunks)
        s.add(whole[at:])
        s.call_ends[n] = len(s.chunks)
    s.terminal = len(s.chunks)
    finish = "MAX_TOKENS" if plan.length else "STOP"
    s.add(chunk([{"text": ""}], finish))
    return s


def _google_error(kind: ErrorKind) -> bytes:
    code, status, message = {
        "overloaded": (503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
        "rate_limit": (429, "RESOURCE_EXHAUSTED", "You exceeded your current quota."),
    }.get(kind, (500, "INTERNAL", "An internal error has occurred."))
    return _sse(None, {"error": {"code": code, "message": message, "status": status}})


def _bedrock(script: Script, plan: _Plan, model: str, ident: str) -> _Stream:
    # ConverseStream: AWS event-stream frames, one JSON payload each, named by
    # :event-type (cassettes/_generate/bedrock_converse_stream.py, PF 1.2 and 2.5): text
    # blocks get no contentBlockStart, a toolUse block does, its input streams as text;
    # messageStop carries the stop reason, metadata the usage. Thinking is not rendered.
    s = _Stream()
    s.add(_frame("messageStart", {"role": "assistant"}))
    index = 0
    if script.text:
        for piece in _pieces(script.text, script.delta_size):
            s.add(
                _frame("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": piece}})
            )
        s.add(_frame("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    s.text_end = len(s.chunks)
    for n, planned in enumerate(plan.calls):
        call = planned.call
        start = {"name": call.name, **_head_id(call, "toolUseId")}
        s.add(
            _frame("contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": start}})
        )
        for piece, mark in planned.pieces():
            delta = {"toolUse": {"input": piece}}
            s.add(_frame("contentBlockDelta", {"contentBlockIndex": index, "delta": delta}))
            s.started.add(n)
            if mark:
                s.mark = len(s.chunks)
        if planned.closed:
            s.add(_frame("contentBlockStop", {"contentBlockIndex": index}))
            s.call_ends[n] = len(s.chunks)
        index += 1
    stop = "max_tokens" if plan.length else "tool_use" if plan.calls else "end_turn"
    s.terminal = len(s.chunks)
    s.add(_frame("messageStop", {"stopReason": stop}))
    usage = {
        "inputTokens": script.input_tokens,
        "outputTokens": script.output_tokens,
        "totalTokens": script.input_tokens + script.output_tokens,
    }
    s.add(_frame("metadata", {"metrics": {"latencyMs": 100}, "usage": usage}))
    return s


def _frame(event_type: str, payload: Mapping[str, Any]) -> bytes:
    headers = {
        ":event-type": event_type,
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return encode_message(
        headers, json.dumps({**payload, "p": "abcdefgh"}, separators=(",", ":")).encode()
    )


def _stream_headers(protocol: str, ident: str) -> tuple[tuple[str, str], ...]:
    """A 200 stream's headers: its content type, and Bedrock's request id (its stream
    names no message; the request id in ``x-amzn-requestid`` is the response's id)."""
    head: tuple[tuple[str, str], ...] = (
        ("content-type", _CONTENT_TYPES.get(protocol, "text/event-stream")),
    )
    if protocol == "bedrock-converse-stream":
        rid = str(uuid.UUID(bytes=hashlib.sha256(ident.encode()).digest()[:16], version=4))
        head += (("x-amzn-requestid", rid),)
    return head


def _bedrock_error(kind: ErrorKind) -> bytes:
    # An exception frame after the 200 (PF 2.5, 5.4), named by :exception-type.
    name, message = {
        "overloaded": ("serviceUnavailableException", "Bedrock is unable to process your request."),
        "rate_limit": ("throttlingException", "Too many tokens, please wait before trying again."),
    }.get(kind, ("modelStreamErrorException", "A streaming error occurred. Retry your request."))
    headers = {
        ":exception-type": name,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_message(headers, json.dumps({"message": message}).encode())


_STREAMS: Final = {
    "openai-completions": (_openai_completions, _openai_completions_error),
    "openai-responses": (_responses, _responses_error),
    "anthropic-messages": (_anthropic, _anthropic_error),
    "google-generative-ai": (_google, _google_error),
    "bedrock-converse-stream": (_bedrock, _bedrock_error),
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
        return _http_error(protocol, fault)
    resolved = fault.resolved(len(script.tool_calls))
    if resolved is not None and (why := unexpressible(resolved, protocol)) is not None:
        raise ValueError(why)
    plan = _plan(script, resolved, protocol)
    build, error = _STREAMS[protocol]
    s = build(script, plan, model, ident)
    chunks = list(s.chunks)
    cut = reset = False
    stop = "length" if plan.length else "tool_use" if plan.calls else "stop"
    if resolved is not None and resolved.ending not in ("length", "finish"):
        place = resolved.place
        chunks, ended = _chunks_before(s, place)
        if resolved.ending == "error_event":
            assert resolved.kind is not None
            chunks.append(error(resolved.kind))
            stop = "error"
        elif ended:
            stop = "none"
            cut = resolved.ending in ("fin", "rst")
            reset = resolved.ending == "rst"
        if ended and isinstance(place, ByteAt) and resolved.ending == "clean_eof":
            # The body ends cleanly, maybe inside an event, which the close dispatches
            # (wire/sse.py): what it delivered is what a correct client reads, as for a
            # recording (a malformed last event is a failure not required to be retried).
            read = served_from_bytes(
                protocol, 200, {}, b"".join(chunks), pace=fault.pace, fault=fault.kind
            )
            return replace(read, chunks=tuple(chunks))
    return _stream_served(protocol, script, fault, ident, plan, s, chunks, stop, cut, reset)


def _http_error(protocol: str, fault: Fault) -> Served:
    """An HTTP error instead of a stream: the fault's body, or the provider's own."""
    status = fault.http_status or 400
    body = (
        fault.body
        if fault.body is not None
        else error_body(protocol, status, overflow=fault.overflow)
    )
    headers = {"content-type": "application/json", **fault.headers}
    if protocol == "bedrock-converse-stream" and fault.body is None:
        headers = {**_bedrock_error_headers(status), **headers}
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


def _chunks_before(s: _Stream, place: Place | None) -> tuple[list[bytes], bool]:
    """The chunks sent before an early end at ``place``, and whether the place falls
    inside the body (a byte past its end ends nothing)."""
    chunks = list(s.chunks)
    if isinstance(place, ByteAt):
        ended = place.byte < sum(len(c) for c in chunks)
        return (_cut_at(chunks, place.byte) if ended else chunks), ended
    if isinstance(place, InCall):
        assert s.mark is not None
        return chunks[: s.mark], True
    if place == "after_text":
        # The content so far (the text, up to the calls).
        return chunks[: s.text_end or 1], True
    assert s.terminal is not None
    return chunks[: s.terminal], True


def _stream_served(
    protocol: str,
    script: Script,
    fault: Fault,
    ident: str,
    plan: _Plan,
    s: _Stream,
    chunks: list[bytes],
    stop: str,
    cut: bool,
    reset: bool,
) -> Served:
    """A 200 stream as served: the ``chunks`` really sent, and what they delivered of the
    calls and the text (a call whose end went out, the text when all of it did)."""
    thinking = script.thinking if protocol == "anthropic-messages" else None
    sent = sum(len(c) for c in chunks)
    ends = _ends(s.chunks)
    as_read = _arguments_as_read(protocol, chunks)
    calls = tuple(
        ServedCall(
            p.call.id,
            p.call.name,
            p.call.arguments,
            n in s.call_ends and ends[s.call_ends[n] - 1] <= sent,
            *as_read.get(p.call.id, (True, None)),
        )
        for n, p in enumerate(plan.calls)
        if n in s.call_ends or n in s.started
    )
    sent_text = script.text
    if stop in ("none", "error") and s.text_end:
        sent_text = _text_sent(script.text, ends[s.text_end - 1], sent)
    return Served(
        protocol,
        200,
        _stream_headers(protocol, ident),
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
        reset,
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
            # A call whose text is not JSON was delivered only by a response that ended
            # normally (A13 judges it); the end the normalizer gave it at a failure is none.
            complete or (c.id in ended and ends[c.id].strict is not False),
            c.id not in ends or ends[c.id].strict is not False,
            ends[c.id].raw_arguments if c.id in ends else None,
        )
        for c in (
            closed.get(s.id or "") or ToolCall(id=s.id or "", name=s.name or "") for s in started
        )
    )
    if stop == "length":
        # The output limit cut what it stopped inside: a call whose argument text is not
        # JSON is not the model's (A6); one complete before the limit was delivered.
        calls = tuple(c if c.strict else replace(c, delivered=False) for c in calls)
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
