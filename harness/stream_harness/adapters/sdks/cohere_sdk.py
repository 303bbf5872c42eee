"""cohere (the official Cohere SDK) as a conformance subject: ``ClientV2().chat_stream``.

What its users get: ``client.chat_stream(...)`` reads the SSE body with the SDK's own
decoder (``cohere/core/http_sse``), stops at ``data: [DONE]``, and yields one parsed
``V2ChatStreamResponse`` per event; there is no accumulator, so users join the events
themselves, as the streaming guides show (``content-delta`` text by block, ``tool-plan-delta``
into the plan, ``tool-call-start`` / ``-delta`` into calls, ``citation-start`` collected,
``message-end`` for the finish reason and usage). The adapter does exactly that, with the
reference's reading of each field (specs/protocols/cohere-v2-chat.md: the plan is a
thinking block, ``input`` excludes ``cached_tokens``), so that what is compared is the
SDK's own code: its SSE reading, its ``[DONE]`` handling, its parsing of every event into
its models and what it does with an event it cannot parse (it logs and skips it). HTTP
errors are the SDK's exceptions (``TooManyRequestsError`` ...), read back through their
``body``. The client is built with ``max_retries=0`` and an ``httpx.Client`` whose
transport serves the recorded body in the chosen chunks.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from stream_harness.adapters.conventions import Collected, LibraryUsage
from stream_harness.adapters.library import BASE_URL, PROMPT, YieldingSDKAdapter
from stream_harness.adapters.sdk_support import tool_arguments
from stream_harness.contract.events import (
    ContentBlock,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from stream_harness.providers.coerce import as_int
from stream_harness.providers.stop_reasons import map_stop_reason

PROTOCOL: Final = "cohere-v2-chat"


@dataclass
class _Block:
    kind: str  # "text", "thinking" (content or plan) or "tool"
    parts: list[str] = field(default_factory=list)
    id: str | None = None
    name: str | None = None


def _message(event: Any) -> Any:
    delta = getattr(event, "delta", None)
    return getattr(delta, "message", None) if delta is not None else None


def _data(obj: Any) -> Any:
    return obj.model_dump(mode="json", exclude_none=True) if hasattr(obj, "model_dump") else obj


@dataclass
class _Joined:
    """The stream so far, as a user's loop over ``chat_stream`` holds it."""

    blocks: list[_Block] = field(default_factory=list)
    by_key: dict[tuple[str, int], _Block] = field(default_factory=dict)
    plan: _Block | None = None
    citations: list[Any] = field(default_factory=list)
    stop: str | None = None
    error: str | None = None
    usage: Any = None
    response_id: str | None = None
    calls: int = 0
    last_call: _Block | None = None

    def add(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "message-start":
            self.response_id = getattr(event, "id", None) or self.response_id
        elif kind in ("content-start", "content-delta"):
            self._content(event)
        elif kind == "content-end":
            self.by_key.pop(("content", getattr(event, "index", None) or 0), None)
        elif kind == "tool-plan-delta":
            piece = getattr(_message(event), "tool_plan", None)
            if isinstance(piece, str) and piece:
                if self.plan is None:
                    self.plan = _Block("thinking")
                    self.blocks.append(self.plan)
                self.plan.parts.append(piece)
        elif kind == "tool-call-start":
            self._call_start(event)
        elif kind == "tool-call-delta":
            call = getattr(_message(event), "tool_calls", None)
            arguments = getattr(getattr(call, "function", None), "arguments", None)
            index = getattr(event, "index", None)
            target = self.by_key.get(("tool", index)) if index is not None else self.last_call
            if target is not None and isinstance(arguments, str):
                target.parts.append(arguments)
        elif kind == "citation-start":
            cited = getattr(_message(event), "citations", None)
            if cited is not None:
                self.citations.append(_data(cited))
        elif kind == "message-end":
            delta = getattr(event, "delta", None)
            self.stop = getattr(delta, "finish_reason", None)
            self.error = getattr(delta, "error", None) or None
            self.usage = getattr(delta, "usage", None) or self.usage

    def _content(self, event: Any) -> None:
        """A content block's text or thinking (its kind declared, else read from the part)."""
        part = getattr(_message(event), "content", None)
        index = getattr(event, "index", None) or 0
        declared = getattr(part, "type", None)
        thinking = getattr(part, "thinking", None)
        text = getattr(part, "text", None)
        block = self.by_key.get(("content", index))
        if block is None:
            is_thinking = declared == "thinking" or (declared is None and thinking is not None)
            block = _Block("thinking" if is_thinking else "text")
            self.by_key[("content", index)] = block
            self.blocks.append(block)
        piece = thinking if block.kind == "thinking" else text
        if isinstance(piece, str):
            block.parts.append(piece)

    def _call_start(self, event: Any) -> None:
        """A new call; the plan before it is over (a later plan delta starts another)."""
        call = getattr(_message(event), "tool_calls", None)
        function = getattr(call, "function", None)
        index = getattr(event, "index", None)
        block = _Block("tool", id=getattr(call, "id", None), name=getattr(function, "name", None))
        arguments = getattr(function, "arguments", None)
        if isinstance(arguments, str):
            block.parts.append(arguments)
        self.by_key[("tool", index if index is not None else self.calls)] = block
        self.calls += 1
        self.blocks.append(block)
        self.last_call = block
        self.plan = None


def join_events(events: Sequence[Any]) -> Collected:
    """The events of one stream joined as a user of ``chat_stream`` joins them."""
    joined = _Joined()
    for event in events:
        joined.add(event)
    content = _joined_content(joined.blocks)
    citations = joined.citations
    provider = (
        [
            ProviderBlock(
                provider_type="citations", position=len(content), data={"citations": citations}
            )
        ]
        if citations
        else []
    )
    stop, error = joined.stop, joined.error
    return Collected(
        content=content,
        stop=stop if isinstance(stop, str) else None,
        usage=cohere_usage(joined.usage),
        response_id=joined.response_id,
        provider_blocks=provider,
        error=error if isinstance(error, str) and _failed(stop) else None,
    )


def _joined_content(blocks: Sequence[_Block]) -> list[ContentBlock]:
    """The blocks as the contract's content: calls with their arguments parsed, empty
    text and thinking left out."""
    content: list[ContentBlock] = []
    for block in blocks:
        joined = "".join(block.parts)
        if block.kind == "tool":
            content.append(
                ToolCall(
                    id=block.id or f"{block.name or 'call'}_{len(content)}",
                    name=block.name or "",
                    arguments=tool_arguments(joined),
                )
            )
        elif joined:
            content.append(
                (ThinkingBlock if block.kind == "thinking" else TextBlock)(content=joined)
            )
    return content


def _failed(stop: Any) -> bool:
    """Whether ``message-end``'s ``error`` is the run's message: no finish reason, or one
    the table maps to error (as the reference reads it)."""
    if not isinstance(stop, str):
        return True
    return map_stop_reason(PROTOCOL, stop, has_tool_calls=False).reason == "error"


def cohere_usage(usage: Any) -> LibraryUsage | None:
    """``message-end`` usage as specs/protocols/cohere-v2-chat.md reads it.

    The SDK types the counters as floats; ``tokens`` are the model's counts (``billed_units``
    only when they are absent) and ``cached_tokens`` is a part of the input.
    """
    if usage is None:
        return None
    counts = getattr(usage, "tokens", None) or getattr(usage, "billed_units", None)
    cached = as_int(getattr(usage, "cached_tokens", None)) or 0
    prompt = as_int(getattr(counts, "input_tokens", None)) or 0
    return LibraryUsage(
        input=max(0, prompt - cached),
        output=as_int(getattr(counts, "output_tokens", None)) or 0,
        cache_read=cached,
    )


class CohereSDKAdapter(YieldingSDKAdapter):
    """``cohere.ClientV2().chat_stream(...)``, the yielded events joined by hand."""

    name = "cohere"
    distribution = "cohere"
    modules = ("cohere", "httpx")
    http = "httpx"
    protocols = frozenset({PROTOCOL})

    def build_client(self, http: Any, transport: Any) -> Any:
        return self.module("cohere").ClientV2(
            api_key="test",
            base_url=BASE_URL,
            max_retries=0,
            httpx_client=http.Client(transport=transport),
        )

    def stream(self, client: Any) -> Iterator[Any]:
        yield from client.chat_stream(model="command-a-03-2025", messages=PROMPT)

    def collect(self, protocol: str, value: Any) -> Collected:
        return join_events(value)
