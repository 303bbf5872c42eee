"""The official anthropic SDK (2.x) as a conformance subject.

What users of the SDK get: ``client.messages.stream(...)`` iterated to the end, then
``get_final_message()``. :class:`AnthropicSDKAdapter` runs exactly that;
:class:`AnthropicBetaSDKAdapter` runs ``client.beta.messages.stream(...)``, whose
accumulator also assembles ``mcp_tool_use`` input and applies ``compaction_delta``
(specs/known-differences.md, anthropic-messages 5), so that a report can tell the two
apart. :class:`AnthropicVertexSDKAdapter` runs the same stream through the SDK's
``AnthropicVertex`` client (Claude on Vertex AI, protocol vertex-anthropic). The mapping of
the final ``Message`` to an ``AssistantMessage`` is specs/adapters.md, section anthropic-sdk.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from stream_harness.adapters.in_process import Replay, SDKAdapter
from stream_harness.adapters.library import BASE_URL
from stream_harness.adapters.protocol import AdapterResult
from stream_harness.adapters.sdk_support import (
    final_message,
    raised_result,
    require,
    serve,
    tool_arguments,
)
from stream_harness.adapters.services import VERTEX_PROJECT
from stream_harness.contract.events import (
    AssistantMessage,
    ContentBlock,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    Usage,
)
from stream_harness.providers.coerce import as_int

PROTOCOL = "anthropic-messages"

# The request is never checked (every request gets the recorded body), but the SDK
# validates its arguments, so they must be well formed.
_REQUEST: dict[str, Any] = {
    "model": "claude-harness",
    "max_tokens": 1024,
    "messages": [{"role": "user", "content": "hi"}],
}


class AnthropicSDKAdapter(SDKAdapter):
    """``anthropic.Anthropic().messages.stream(...)`` -> ``get_final_message()``."""

    name = "anthropic-sdk"
    protocols: frozenset[str] = frozenset({PROTOCOL})
    beta = False

    def __init__(self) -> None:
        self._anthropic, self._httpx2 = require(self.name, "anthropic", "httpx2")

    def version(self) -> str:
        return str(self._anthropic.__version__)

    def drive(self, protocol: str, replay: Replay) -> AdapterResult:
        replay = self._served(replay)
        transport = serve(self._httpx2, replay.chunks, status=replay.status, headers=replay.headers)
        client = self._client(self._httpx2.Client(transport=transport))
        messages = client.beta.messages if self.beta else client.messages
        stream = None
        try:
            with messages.stream(**{**_REQUEST, "model": self.model}) as stream:
                for _ in stream:
                    pass
                final = stream.get_final_message()
        except Exception as exc:
            # The SDK raises for an HTTP error status (APIStatusError, before any event),
            # for an `event: error` in the stream (APIStatusError with status 200), and
            # on protocol violations (RuntimeError, AssertionError, ValueError from its
            # accumulator). What it had assembled stays readable on the stream.
            snapshot = _snapshot(stream)
            base = to_message(snapshot, self.stop_protocol) if snapshot is not None else None
            return raised_result(exc, base, {"snapshot": _dump(snapshot)})
        finally:
            client.close()
        return AdapterResult(
            message=to_message(final, self.stop_protocol), raw={"message": _dump(final)}
        )

    stop_protocol = PROTOCOL
    model = "claude-harness"
    # The SDK client the stream goes through (a class of the anthropic module) and how it
    # authenticates; every one gets no retries and the in-memory transport.
    client_class: ClassVar[str] = "Anthropic"
    client_options: ClassVar[Mapping[str, str]] = {"api_key": "test", "base_url": BASE_URL}

    def _served(self, replay: Replay) -> Replay:
        """The recorded response as the transport serves it (a subclass may complete it)."""
        return replay

    def _client(self, http_client: Any) -> Any:
        client_class = getattr(self._anthropic, self.client_class)
        return client_class(**self.client_options, max_retries=0, http_client=http_client)


class AnthropicBetaSDKAdapter(AnthropicSDKAdapter):
    """``client.beta.messages.stream(...)``: the accumulator that knows beta block types."""

    name = "anthropic-sdk-beta"
    beta = True


class AnthropicVertexSDKAdapter(AnthropicSDKAdapter):
    """``anthropic.AnthropicVertex(...).messages.stream(...)``: Claude on Vertex AI.

    The client gets an access token, a region and a project, so it never loads Google
    credentials (no google-auth, no network); it sends ``POST .../publishers/anthropic/
    models/{model}:streamRawPredict`` with ``anthropic_version`` in the body, which the
    in-memory transport answers with the recorded bytes whatever the URL.
    """

    name = "anthropic-sdk-vertex"
    protocols: frozenset[str] = frozenset({"vertex-anthropic"})
    stop_protocol = "vertex-anthropic"
    client_class = "AnthropicVertex"
    client_options: ClassVar[Mapping[str, str]] = {
        "region": "us-east5",
        "project_id": VERTEX_PROJECT,
        "access_token": "test",
    }


def _snapshot(stream: Any) -> Any:
    # ``current_message_snapshot`` asserts that a message_start arrived; before that the
    # library has nothing to offer.
    if stream is None:
        return None
    try:
        return stream.current_message_snapshot
    except AssertionError:
        return None


def _dump(obj: Any) -> Any:
    return obj.to_dict(warnings=False) if obj is not None else None


def to_message(message: Any, protocol: str = PROTOCOL) -> AssistantMessage:
    """The SDK's ``Message`` (or ``BetaMessage``) in the contract's terms (specs/adapters.md)."""
    content: list[ContentBlock] = []
    provider: list[ProviderBlock] = []
    for block in message.content:
        kind = block.type
        if kind == "text":
            # The contract never has an empty text block (the SDK keeps `text: ""` for a
            # block that received no text, e.g. around server tool calls).
            if block.text:
                content.append(TextBlock(content=block.text))
            if getattr(block, "citations", None):
                citations = [c.to_dict(warnings=False) for c in block.citations]
                data = {"content_index": len(content) - 1, "citations": citations}
                provider.append(
                    ProviderBlock(provider_type="citations", position=len(content), data=data)
                )
        elif kind == "thinking":
            content.append(ThinkingBlock(content=block.thinking, signature=block.signature or None))
        elif kind == "redacted_thinking":
            content.append(ThinkingBlock(content="", signature=block.data, redacted=True))
        elif kind == "tool_use":
            arguments = (
                block.input if isinstance(block.input, dict) else tool_arguments(str(block.input))
            )
            content.append(ToolCall(id=block.id, name=block.name, arguments=arguments))
        else:
            provider.append(
                ProviderBlock(
                    provider_type=kind if isinstance(kind, str) else "unknown",  # as the reference
                    position=len(content),
                    data=block.to_dict(warnings=False),
                )
            )
    details = getattr(message.stop_details, "explanation", None) if message.stop_details else None
    return final_message(
        protocol,
        content,
        message.stop_reason,
        message,
        usage=_usage(message.usage),
        provider_blocks=provider,
        details=details,
    )


def _usage(usage: Any) -> Usage:
    """Anthropic's ``input_tokens`` already excludes cache reads and writes."""
    if usage is None:
        return Usage()
    # The SDK's models let a wire NaN or Infinity through as a float; the contract's
    # counts are ints (found by `stream-harness fuzz --adapter anthropic-sdk`).
    counts = {
        "input": as_int(usage.input_tokens) or 0,
        "output": as_int(usage.output_tokens) or 0,
        "cache_read": as_int(usage.cache_read_input_tokens) or 0,
        "cache_write": as_int(usage.cache_creation_input_tokens) or 0,
    }
    return Usage(**counts, total=sum(counts.values()))
