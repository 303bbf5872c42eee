"""The official mistralai SDK as a conformance subject, for Mistral's chat stream.

What its users get: ``Mistral(...).chat.stream(...)`` yields one parsed ``CompletionEvent``
per SSE event (its own SSE reader, ``utils/eventstreaming.py``, stopping at ``[DONE]``) and
offers no accumulator. The adapter accumulates as Mistral's own client built on this SDK
does (mistralai/mistral-vibe: ``vibe/core/llm/backend/mistral.py`` reads each delta's
``content`` string, ``TextChunk`` and ``ThinkChunk`` text; ``vibe/core/types.py``
``LLMMessage.__add__`` joins text and reasoning, and merges tool calls by the SDK's
``ToolCall.index``: the first fragment's id, the name set once, the arguments appended).
The last non-null ``finish_reason`` and ``usage`` win. What is tested is the SDK's own
code: its SSE reading, its parsing of every chunk into its models, its error classes, and
its defaults (``ToolCall.id = "null"``, ``ToolCall.index = 0`` when the wire has none).
The conventions are in ``specs/adapter_conventions.yaml``, section ``mistral-sdk``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from stream_harness.adapters.conventions import Collected, LibraryUsage
from stream_harness.adapters.library import BASE_URL, PROMPT, YieldingSDKAdapter, as_int, dump
from stream_harness.adapters.sdk_support import tool_arguments
from stream_harness.contract.events import (
    ContentBlock,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)

PROTOCOL: Final = "mistral-chat"


@dataclass
class _Call:
    """One entry of the index-keyed map mistral-vibe merges tool-call fragments into."""

    id: str | None
    name: str
    arguments: str
    position: int  # content blocks before it, for the block order


@dataclass
class _Joined:
    """What the chunks add up to, in arrival order."""

    content: list[ContentBlock] = field(default_factory=list)
    provider: list[ProviderBlock] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)


def _append(joined: _Joined, kind: type[TextBlock | ThinkingBlock], text: str) -> None:
    """Text of one kind goes on the last block when it is of that kind, else starts one."""
    if not text:
        return
    last = joined.content[-1] if joined.content else None
    if isinstance(last, kind):
        joined.content[-1] = last.model_copy(update={"content": last.content + text})
    else:
        joined.content.append(kind(content=text))


def _sign(joined: _Joined, signature: str) -> None:
    last = joined.content[-1] if joined.content else None
    if isinstance(last, ThinkingBlock):
        joined.content[-1] = last.model_copy(
            update={"signature": (last.signature or "") + signature}
        )
    else:
        joined.content.append(ThinkingBlock(content="", signature=signature))


def _part(joined: _Joined, part: Any) -> None:
    kind = getattr(part, "type", None)
    if kind == "text":
        _append(joined, TextBlock, getattr(part, "text", "") or "")
    elif kind == "thinking":
        for inner in getattr(part, "thinking", None) or []:
            if getattr(inner, "type", None) == "text":
                _append(joined, ThinkingBlock, getattr(inner, "text", "") or "")
            else:
                _provider(joined, inner)
        signature = getattr(part, "signature", None)
        if isinstance(signature, str) and signature:
            _sign(joined, signature)
    else:
        _provider(joined, part)


def _provider(joined: _Joined, part: Any) -> None:
    data = dump(part)
    if isinstance(data, dict) and data.get("is_unknown"):  # the SDK's UnknownContentChunk
        data = data.get("raw")
    kind = data.get("type") if isinstance(data, dict) else None
    name = f"mistral.{kind}" if isinstance(kind, str) else "mistral.part"
    joined.provider.append(
        ProviderBlock(
            provider_type=name,
            position=len(joined.content) + len(joined.calls),
            data=data if isinstance(data, dict) else {"value": data},
        )
    )


def _tool_call(joined: _Joined, call: Any) -> None:
    index = call.index if isinstance(call.index, int) else 0
    function = call.function
    arguments = function.arguments
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    found = joined.calls.get(index)
    if found is None:
        joined.calls[index] = _Call(
            id=call.id, name=function.name or "", arguments=text, position=len(joined.content)
        )
        return
    if function.name and not found.name:
        found.name = function.name
    found.arguments += text


def accumulate(events: Sequence[Any]) -> Collected:
    """Every ``CompletionEvent``'s first choice, joined as mistral-vibe joins them."""
    joined = _Joined()
    stop: str | None = None
    usage: Any = None
    model = response_id = None
    for event in events:
        data = event.data
        model = model or getattr(data, "model", None)
        response_id = response_id or getattr(data, "id", None)
        usage = getattr(data, "usage", None) or usage
        choices = [c for c in data.choices or [] if c.index == 0]
        for choice in choices[:1]:
            if choice.finish_reason is not None:
                stop = str(choice.finish_reason)
            delta = choice.delta
            content = delta.content
            if isinstance(content, str):
                _append(joined, TextBlock, content)
            elif isinstance(content, list):
                for part in content:
                    _part(joined, part)
            for call in delta.tool_calls or []:
                _tool_call(joined, call)
    content = list(joined.content)
    # Tool calls after the text and thinking that preceded their first fragment.
    for offset, call in enumerate(sorted(joined.calls.values(), key=lambda c: c.position)):
        content.insert(
            call.position + offset,
            ToolCall(
                id=call.id or f"toolcall_{call.position + offset}",
                name=call.name,
                arguments=tool_arguments(call.arguments),
            ),
        )
    return Collected(
        content=content,
        stop=stop,
        usage=mistral_usage(usage),
        model=model,
        response_id=response_id,
        provider_blocks=joined.provider,
    )


def mistral_usage(usage: Any) -> LibraryUsage | None:
    """``UsageInfo``: prompt_tokens includes ``prompt_tokens_details.cached_tokens``, an
    extra field the SDK keeps untyped (mistral-vibe ``_cached_tokens`` reads it so)."""
    if usage is None:
        return None
    extra = getattr(usage, "additional_properties", None) or {}
    details = extra.get("prompt_tokens_details") if isinstance(extra, Mapping) else None
    cached = as_int(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
    total = usage.total_tokens
    return LibraryUsage(
        input=as_int(usage.prompt_tokens),
        output=as_int(usage.completion_tokens),
        cache_read=cached,
        total=total if isinstance(total, int) and not isinstance(total, bool) else None,
    )


class MistralSDKAdapter(YieldingSDKAdapter):
    """``Mistral(...).chat.stream(...)`` over an httpx2 client serving the recorded body."""

    name = "mistral-sdk"
    distribution = "mistralai"
    modules = ("mistralai.client", "httpx2")
    http = "httpx2"
    protocols = frozenset({PROTOCOL})

    def build_client(self, http: Any, transport: Any) -> Any:
        return self.module("mistralai.client").Mistral(
            api_key="test",
            server_url=BASE_URL,
            client=http.Client(transport=transport),
            # Unused, but the SDK builds a default one, loading the certificate store:
            # 80 ms, most of a run's time.
            async_client=http.AsyncClient(verify=False),
        )

    def stream(self, client: Any) -> Iterator[Any]:
        with client.chat.stream(model="mistral-harness", messages=PROMPT) as events:
            yield from events

    def collect(self, protocol: str, value: Any) -> Collected:
        return accumulate(value)
