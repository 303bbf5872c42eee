"""Request bodies per protocol: written for the reference agent, read back for the checks.

The checks judge what an agent sends next (every executed call's result, paired to its
id, the assistant turn replayed as received, thinking signatures sent back), so a
request body must be read in each protocol's own shape; the reference agent must write
the same shapes. Both directions live here, side by side, so they cannot drift apart.
The shapes are each provider's documented request format (research/provider-facts.md
3.4 for what a next turn must carry).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from stream_harness.contract.events import TextBlock, ThinkingBlock, ToolCall
from stream_harness.loop.messages import Message, ToolResult, UserMessage

PATHS: Final = {
    "openai-completions": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic-messages": "/v1/messages",
    "google-generative-ai": "/v1beta/models/{model}:streamGenerateContent?alt=sse",
    "bedrock-converse-stream": "/model/{model}/converse-stream",
}


@dataclass(frozen=True, slots=True)
class ToolSchema:
    name: str
    description: str
    parameters: Mapping[str, Any]


def _result_text(result: ToolResult) -> str:
    content = result.content
    return content if isinstance(content, str) else json.dumps(content)


def encode_request(
    protocol: str,
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSchema],
    *,
    system: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """The path and JSON body of a streamed request carrying ``messages``."""
    if protocol == "openai-completions":
        return PATHS[protocol], _completions(model, messages, tools, system)
    if protocol == "openai-responses":
        return PATHS[protocol], _responses(model, messages, tools, system)
    if protocol == "anthropic-messages":
        return PATHS[protocol], _anthropic(model, messages, tools, system)
    if protocol == "google-generative-ai":
        return PATHS[protocol].format(model=model), _google(messages, tools, system)
    if protocol == "bedrock-converse-stream":
        return PATHS[protocol].format(model=model), _bedrock(messages, tools, system)
    raise ValueError(f"no request encoding for protocol {protocol!r}")


def _completions(
    model: str, messages: Sequence[Message], tools: Sequence[ToolSchema], system: str | None
) -> dict[str, Any]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for m in messages:
        if isinstance(m, UserMessage):
            out.append({"role": "user", "content": m.content})
        elif isinstance(m, ToolResult):
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": _result_text(m)})
        else:
            text = "".join(b.content for b in m.content if isinstance(b, TextBlock))
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            calls = [b for b in m.content if isinstance(b, ToolCall)]
            if calls:
                entry["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                    }
                    for c in calls
                ]
            out.append(entry)
    body: dict[str, Any] = {
        "model": model,
        "messages": out,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": dict(t.parameters),
                },
            }
            for t in tools
        ]
    return body


def _responses(
    model: str, messages: Sequence[Message], tools: Sequence[ToolSchema], system: str | None
) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, UserMessage):
            items.append({"role": "user", "content": m.content})
        elif isinstance(m, ToolResult):
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": m.tool_call_id,
                    "output": _result_text(m),
                }
            )
        else:
            for b in m.content:
                if isinstance(b, TextBlock) and b.content:
                    items.append(
                        {
                            "type": "message",
                            "role": "assistant",
                            "content": [{"type": "output_text", "text": b.content}],
                        }
                    )
                elif isinstance(b, ToolCall):
                    items.append(
                        {
                            "type": "function_call",
                            "call_id": b.id,
                            "name": b.name,
                            "arguments": json.dumps(b.arguments),
                        }
                    )
    body: dict[str, Any] = {"model": model, "input": items, "stream": True}
    if system:
        body["instructions"] = system
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": dict(t.parameters),
            }
            for t in tools
        ]
    return body


def _anthropic(
    model: str, messages: Sequence[Message], tools: Sequence[ToolSchema], system: str | None
) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, UserMessage):
            out.append({"role": "user", "content": m.content})
        elif isinstance(m, ToolResult):
            block = {
                "type": "tool_result",
                "tool_use_id": m.tool_call_id,
                "content": _result_text(m),
                "is_error": m.is_error,
            }
            # Every result of one turn goes in one user message (the API requires it).
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        else:
            content: list[dict[str, Any]] = []
            for b in m.content:
                if isinstance(b, ThinkingBlock):
                    content.append(
                        {"type": "thinking", "thinking": b.content, "signature": b.signature or ""}
                    )
                elif isinstance(b, TextBlock) and b.content:
                    content.append({"type": "text", "text": b.content})
                elif isinstance(b, ToolCall):
                    content.append(
                        {"type": "tool_use", "id": b.id, "name": b.name, "input": b.arguments}
                    )
            out.append({"role": "assistant", "content": content})
    body: dict[str, Any] = {"model": model, "max_tokens": 1024, "messages": out, "stream": True}
    if system:
        body["system"] = system
    if tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
            for t in tools
        ]
    return body


def _google(
    messages: Sequence[Message], tools: Sequence[ToolSchema], system: str | None
) -> dict[str, Any]:
    contents: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, UserMessage):
            contents.append({"role": "user", "parts": [{"text": m.content}]})
        elif isinstance(m, ToolResult):
            part = {
                "functionResponse": {
                    "id": m.tool_call_id,
                    "name": m.name,
                    "response": {"error" if m.is_error else "result": _result_text(m)},
                }
            }
            # Every result of one turn in one user turn, as the API pairs them with the calls.
            last = contents[-1] if contents else None
            if last and last["role"] == "user" and "functionResponse" in last["parts"][0]:
                last["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part]})
        else:
            parts: list[dict[str, Any]] = []
            for b in m.content:
                if isinstance(b, TextBlock) and b.content:
                    parts.append({"text": b.content})
                elif isinstance(b, ToolCall):
                    parts.append(
                        {"functionCall": {"id": b.id, "name": b.name, "args": b.arguments}}
                    )
            contents.append({"role": "model", "parts": parts})
    body: dict[str, Any] = {"contents": contents}
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    if tools:
        body["tools"] = [
            {
                "functionDeclarations": [
                    {"name": t.name, "description": t.description, "parameters": dict(t.parameters)}
                    for t in tools
                ]
            }
        ]
    return body


def _bedrock(
    messages: Sequence[Message], tools: Sequence[ToolSchema], system: str | None
) -> dict[str, Any]:
    # Converse JSON (the Bedrock API reference, Converse / ConverseStream): no ``stream``
    # and no model in the body, the path asks for both; results as toolResult blocks of a
    # user turn, every result of one turn in one message, as the API pairs them.
    out: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, UserMessage):
            out.append({"role": "user", "content": [{"text": m.content}]})
        elif isinstance(m, ToolResult):
            block = {
                "toolResult": {
                    "toolUseId": m.tool_call_id,
                    "content": [{"text": _result_text(m)}],
                    "status": "error" if m.is_error else "success",
                }
            }
            last = out[-1] if out else None
            if last and last["role"] == "user" and "toolResult" in last["content"][0]:
                last["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        else:
            content: list[dict[str, Any]] = []
            for b in m.content:
                if isinstance(b, TextBlock) and b.content:
                    content.append({"text": b.content})
                elif isinstance(b, ToolCall):
                    content.append(
                        {"toolUse": {"toolUseId": b.id, "name": b.name, "input": b.arguments}}
                    )
            out.append({"role": "assistant", "content": content})
    body: dict[str, Any] = {"messages": out, "inferenceConfig": {"maxTokens": 1024}}
    if system:
        body["system"] = [{"text": system}]
    if tools:
        body["toolConfig"] = {
            "tools": [
                {
                    "toolSpec": {
                        "name": t.name,
                        "description": t.description,
                        "inputSchema": {"json": dict(t.parameters)},
                    }
                }
                for t in tools
            ]
        }
    return body


# -- reading requests back -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SentCall:
    id: str
    name: str
    arguments: Any  # parsed where the wire carries a JSON string; the string when it is not JSON
    turn: int = -1
    """The index of the ``contents`` entry carrying it on google-generative-ai (-1 elsewhere):
    an id-less call pairs by name and order within its turn, never across the request."""


@dataclass(frozen=True, slots=True)
class SentResult:
    id: str  # "" where the wire carries none (Gemini pairs by name and order then)
    content: str
    name: str = ""
    turn: int = -1  # as SentCall.turn


@dataclass(frozen=True, slots=True)
class RequestView:
    """What one request carries that the checks judge; ``readable`` False when the body is
    not the protocol's JSON (then the checks that need it say so)."""

    readable: bool
    calls: tuple[SentCall, ...] = ()
    results: tuple[SentResult, ...] = ()
    thinking_signatures: tuple[str, ...] = ()
    messages: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)


def _parse_args(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return json.dumps(content)


def read_request(protocol: str, body: Any) -> RequestView:
    """The calls, results and signatures a request body carries, in ``protocol``'s shape."""
    if not isinstance(body, dict):
        return RequestView(False)
    if protocol == "openai-responses":
        return _read_responses(body)
    if protocol == "google-generative-ai":
        return _read_google(body)
    messages = body.get("messages")
    if not isinstance(messages, list):
        return RequestView(False)
    calls: list[SentCall] = []
    results: list[SentResult] = []
    signatures: list[str] = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        if protocol == "bedrock-converse-stream":
            _read_bedrock_content(content, calls, results)
        elif protocol == "openai-completions":
            _read_completions_message(m, calls, results)
        elif isinstance(content, list):  # anthropic-messages
            _read_anthropic_content(content, calls, results, signatures)
    return RequestView(True, tuple(calls), tuple(results), tuple(signatures), len(messages))


def _read_responses(body: dict[str, Any]) -> RequestView:
    """openai-responses: the ``input`` items (a string is one user message)."""
    items = body.get("input")
    if isinstance(items, str):
        return RequestView(True, messages=1)
    if not isinstance(items, list):
        return RequestView(False)
    calls: list[SentCall] = []
    results: list[SentResult] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            calls.append(
                SentCall(
                    str(item.get("call_id")),
                    str(item.get("name")),
                    _parse_args(item.get("arguments")),
                )
            )
        elif item.get("type") == "function_call_output":
            results.append(SentResult(str(item.get("call_id")), _text(item.get("output"))))
    return RequestView(True, tuple(calls), tuple(results), (), len(items))


def _read_google(body: dict[str, Any]) -> RequestView:
    """google-generative-ai: the ``contents`` turns' functionCall and functionResponse parts,
    each with the index of its turn."""
    contents = body.get("contents")
    if not isinstance(contents, list):
        return RequestView(False)
    calls: list[SentCall] = []
    results: list[SentResult] = []
    for t, turn in enumerate(contents):
        parts = turn.get("parts") if isinstance(turn, dict) else None
        for part in parts if isinstance(parts, list) else []:
            if not isinstance(part, dict):
                continue
            call, answer = part.get("functionCall"), part.get("functionResponse")
            if isinstance(call, dict):
                calls.append(
                    SentCall(str(call.get("id") or ""), str(call.get("name")), call.get("args"), t)
                )
            elif isinstance(answer, dict):
                results.append(
                    SentResult(
                        str(answer.get("id") or ""),
                        json.dumps(answer.get("response")),
                        str(answer.get("name") or ""),
                        t,
                    )
                )
    return RequestView(True, tuple(calls), tuple(results), (), len(contents))


def _read_bedrock_content(content: Any, calls: list[SentCall], results: list[SentResult]) -> None:
    """bedrock-converse-stream: a message's toolUse and toolResult blocks."""
    for b in content if isinstance(content, list) else []:
        use = b.get("toolUse") if isinstance(b, dict) else None
        answer = b.get("toolResult") if isinstance(b, dict) else None
        if isinstance(use, dict):
            calls.append(
                SentCall(str(use.get("toolUseId")), str(use.get("name")), use.get("input"))
            )
        elif isinstance(answer, dict):
            results.append(SentResult(str(answer.get("toolUseId")), _text(answer.get("content"))))


def _read_completions_message(
    m: dict[str, Any], calls: list[SentCall], results: list[SentResult]
) -> None:
    """openai-completions: an assistant message's tool_calls, a tool message's result."""
    if m.get("role") == "assistant":
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            calls.append(
                SentCall(str(c.get("id")), str(fn.get("name")), _parse_args(fn.get("arguments")))
            )
    elif m.get("role") == "tool":
        results.append(SentResult(str(m.get("tool_call_id")), _text(m.get("content"))))


def _read_anthropic_content(
    content: list[Any], calls: list[SentCall], results: list[SentResult], signatures: list[str]
) -> None:
    """anthropic-messages: a message's tool_use, tool_result and thinking blocks."""
    for b in content:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "tool_use":
            calls.append(SentCall(str(b.get("id")), str(b.get("name")), b.get("input")))
        elif b.get("type") == "tool_result":
            results.append(SentResult(str(b.get("tool_use_id")), _text(b.get("content"))))
        elif b.get("type") == "thinking":
            signatures.append(str(b.get("signature")))
