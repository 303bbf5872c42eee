"""Amazon Bedrock ``ConverseStream`` (``POST /model/{id}/converse-stream``) -> unified events.

The wire (provider-facts.md 1.2, 2.5): AWS event-stream frames
(``application/vnd.amazon.eventstream``), one JSON payload per frame, named by the
``:event-type`` header: ``messageStart``, then per content block ``contentBlockStart``
(tool use only) / ``contentBlockDelta``* / ``contentBlockStop`` addressed by
``contentBlockIndex``, then ``messageStop`` (the stop reason) and ``metadata`` (usage),
in either order. A frame with ``:message-type: exception`` is an error after the 200
response started (``throttlingException``, ``modelStreamErrorException``, ...). Every
payload carries a random ``p`` padding field, which is ignored.

The frames come from the registered framing, :class:`stream_harness.wire.EventStreamDecoder` (CRC checks, case 42;
leftover bytes at the end, case 43). The full mapping, the keys, the usage arithmetic,
what is kept as provider blocks and the decisions where the protocol is silent are in
specs/protocols/bedrock-converse-stream.md ("spec:" below); comments cite the research
(provider-facts.md sections, conformance case numbers of its section 7).

Keys for the accumulator are the wire ``contentBlockIndex`` (an ``int``): Bedrock streams
one block at a time and an index names one block of the final message.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any, Final

from stream_harness.contract.limits import loads as bounded_loads
from stream_harness.contract.partial_json import parse_partial
from stream_harness.providers.base import JSONFrameNormalizer, excerpt
from stream_harness.providers.coerce import as_str, is_int
from stream_harness.providers.registry import Detect, Protocol, register
from stream_harness.wire import EventStreamMessage
from stream_harness.wire.framing import EVENTSTREAM, FrameDecoder

# metadata.usage -> Accumulator.set_usage keywords. Bedrock reports inputTokens without the
# cached tokens (cacheRead/cacheWrite are separate counters) and outputTokens with the
# reasoning tokens, the Anthropic arithmetic, so no subtraction is needed (spec: "Usage").
_USAGE_FIELDS: Final = (
    ("input", "inputTokens"),
    ("output", "outputTokens"),
    ("cache_read", "cacheReadInputTokens"),
    ("cache_write", "cacheWriteInputTokens"),
    ("total", "totalTokens"),
)

# The random padding field of every payload (corpus-visible-notes.md section 4).
_PADDING: Final = "p"

# toolUse.type of a tool the service runs itself (Nova's code interpreter in the corpus):
# not a call for the client to execute, so it is kept as a provider block.
_SERVER_TOOL_TYPE: Final = "server_tool_use"


def _without_padding(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k != _PADDING}


@dataclass(slots=True)
class _ProviderBlock:
    """A block the contract does not model, assembled until its ``contentBlockStop``."""

    provider_type: str
    position: int
    data: dict[str, Any]
    input_parts: list[str] = field(default_factory=list)

    def final(self) -> dict[str, Any]:
        data = dict(self.data)
        if self.input_parts:
            # The Converse message holds the tool input as an object, as a client tool's.
            data["input"] = parse_partial("".join(self.input_parts))
        return data


@dataclass(slots=True)
class _Index:
    """What the wire said about one ``contentBlockIndex`` (the accumulator knows the rest)."""

    stopped: bool = False
    provider: _ProviderBlock | None = None
    # case 45: redactedContent fragments (decoded bytes), joined at the block's end.
    redacted: list[bytes] | None = None
    citations: list[Any] = field(default_factory=list)


class BedrockConverseStreamNormalizer(JSONFrameNormalizer):
    """The frames are event-stream messages, each payload JSON: :meth:`on_frame` reads them."""

    protocol = "bedrock-converse-stream"

    def __init__(self, frames: FrameDecoder | None = None) -> None:
        super().__init__(frames)
        self._indexes: dict[int, _Index] = {}
        self._tool_ids: set[str] = set()
        self._message_stopped = False
        self._stop_reason: str | None = None
        self._additional_fields: Any = None
        self._metadata: dict[str, Any] | None = None
        self._flushed = False

    # -- one frame ------------------------------------------------------------------

    def on_frame(self, frame: EventStreamMessage) -> None:
        self.frames_seen += 1
        message_type = frame.message_type
        if message_type == "exception":
            self._on_exception(frame)
            return
        if message_type == "error":
            self._on_error_frame(frame)
            return
        if message_type not in ("event", None):
            return  # an unknown message type: passed over, as VAI does (PF 1.2)
        event_type = frame.event_type
        handler = _HANDLERS.get(event_type or "")
        if handler is None:
            return  # unknown event types are passed over (the union may grow)
        payload = self._payload(frame, event_type or "")
        if payload is not None:
            handler(self, payload)

    def _payload(self, frame: EventStreamMessage, what: str) -> dict[str, Any] | None:
        try:
            value = bounded_loads(frame.payload)
        except (ValueError, RecursionError) as exc:
            text = frame.payload.decode("utf-8", "replace")
            self.fail(
                f"malformed JSON in frame #{self.frames_seen} ({what}): {exc}: {excerpt(text)}"
            )
            return None
        if not isinstance(value, dict):
            self.malformed(f"{what} payload is not a JSON object")
            return None
        return value

    def _on_message_start(self, payload: dict[str, Any]) -> None:
        # Bedrock's stream names neither the model (it is in the URL) nor a response id
        # (it is in the x-amzn-requestid header), so start() gets no metadata. The role
        # is always "assistant"; another role is not checked (spec: "Decisions").
        self.acc.start()

    def _on_block_start(self, payload: dict[str, Any]) -> None:
        found = self._indexed_member(payload, "contentBlockStart", "start")
        if found is None:
            return
        index, start = found
        wire = self._indexes.get(index)
        if wire is not None and not wire.stopped:
            self._stop(index)  # a second start replaces whatever was open under the index
        wire = self._indexes[index] = _Index()
        tool = start.get("toolUse")
        if isinstance(tool, dict):
            tool_id = as_str(tool.get("toolUseId"))
            name = as_str(tool.get("name"))
            if tool.get("type") == _SERVER_TOOL_TYPE:
                wire.provider = _ProviderBlock(_SERVER_TOOL_TYPE, self.acc.block_count, dict(tool))
                return
            if tool_id is not None and tool_id in self._tool_ids:
                # Ids must be unique in a message (contract C10): a repeated id is a
                # replayed or corrupted stream, not a new call.
                self.malformed(f"toolUse at index {index} repeats the id {tool_id!r}")
                return
            if tool_id is not None:
                self._tool_ids.add(tool_id)
            self.acc.tool_call(index, id=tool_id, name=name)
            return
        # toolResult (a server tool's result), image, and any future start member: kept
        # whole as a provider block named after the member (spec: "Provider blocks").
        kind = next(iter(start), "unknown")
        member = start.get(kind)
        data = dict(member) if isinstance(member, dict) else {"value": member}
        wire.provider = _ProviderBlock(kind, self.acc.block_count, data)

    def _on_block_delta(self, payload: dict[str, Any]) -> None:
        found = self._indexed_member(payload, "contentBlockDelta", "delta")
        if found is None:
            return
        index, delta = found
        wire = self._indexes.setdefault(index, _Index())
        if wire.stopped:
            # Appending would invent a block the wire already closed.
            self.malformed(f"contentBlockDelta for index {index} after its contentBlockStop")
            return
        if self._message_stopped:
            self.malformed(f"contentBlockDelta for index {index} after messageStop")
            return
        if wire.provider is not None:
            self._provider_delta(index, wire.provider, delta)
            return
        if "text" in delta:
            text = delta["text"]
            if not isinstance(text, str):
                self.malformed(f"text delta at index {index} is not a string")
                return
            self._flush_redacted(index, wire)
            self.acc.text(index, text)  # "" opens nothing (corpus empty_text_delta)
        elif "reasoningContent" in delta:
            self._reasoning_delta(index, wire, delta["reasoningContent"])
        elif "toolUse" in delta:
            tool = delta["toolUse"]
            fragment = tool.get("input") if isinstance(tool, dict) else None
            if not isinstance(fragment, str):
                self.malformed(f"toolUse delta at index {index}: 'input' is not a string")
                return
            if self.acc.open_kind(index) != "tool_call":
                # Without its contentBlockStart the call has no id and no name: handing
                # it to a consumer would make it run a call it cannot answer.
                self.malformed(
                    f"toolUse delta at index {index} without a toolUse contentBlockStart"
                )
                return
            self.acc.tool_call(index, delta=fragment)
        elif "citation" in delta:
            wire.citations.append(delta["citation"])
        # Other delta members (image, future ones) are passed over (spec: "Decisions").

    def _reasoning_delta(self, index: int, wire: _Index, reasoning: Any) -> None:
        if not isinstance(reasoning, dict):
            self.malformed(f"reasoningContent delta at index {index} is not an object")
            return
        for name, value in reasoning.items():
            if name == "text":
                if not isinstance(value, str):
                    self.malformed(f"reasoningContent.text at index {index} is not a string")
                    return
                self.acc.thinking(index, value)
            elif name == "signature":
                if not isinstance(value, str):
                    self.malformed(f"reasoningContent.signature at index {index} is not a string")
                    return
                if value:
                    if self.acc.open_kind(index) != "thinking":
                        self.acc.open_thinking(index)
                    self.acc.signature(index, value)
            elif name in ("redactedContent", "data"):
                # case 45: a blob (base64 in JSON), possibly in several deltas; the pieces
                # are joined as bytes at the block's end. "data" is the legacy name (PF 2.5).
                try:
                    piece = (
                        base64.b64decode(value, validate=True) if isinstance(value, str) else None
                    )
                except (binascii.Error, ValueError):
                    piece = None
                if piece is None:
                    self.malformed(f"reasoningContent.{name} at index {index} is not base64")
                    return
                if wire.redacted is None:
                    wire.redacted = []
                    # Opened now so that the block keeps its place among the blocks.
                    if self.acc.open_kind(index) != "thinking":
                        self.acc.open_thinking(index)
                wire.redacted.append(piece)

    def _provider_delta(self, index: int, block: _ProviderBlock, delta: dict[str, Any]) -> None:
        tool = delta.get("toolUse")
        if isinstance(tool, dict) and isinstance(tool.get("input"), str):
            block.input_parts.append(tool["input"])
            return
        result = delta.get("toolResult")
        if isinstance(result, list):
            content = block.data.setdefault("content", [])
            if isinstance(content, list):
                content.extend(result)
            return
        block.data.setdefault("deltas", []).append(delta)

    def _on_block_stop(self, payload: dict[str, Any]) -> None:
        index = self._block_index(payload, "contentBlockStop")
        if index is None:
            return
        wire = self._indexes.setdefault(index, _Index())
        if not wire.stopped:
            self._stop(index)

    def _on_message_stop(self, payload: dict[str, Any]) -> None:
        reason = payload.get("stopReason")
        if reason is not None and not isinstance(reason, str):
            self.malformed(f"messageStop stopReason is not a string: {excerpt(repr(reason))}")
            return
        self._message_stopped = True
        self._stop_reason = reason
        # Kept on the accumulator at once, so an exception before the end is classified
        # with it (an error after messageStop still reports the reason the wire gave).
        self.acc.set_provider_stop_reason(reason)
        fields = payload.get("additionalModelResponseFields")
        if fields is not None:
            self._additional_fields = fields
        # Not finished here: metadata (usage) may still follow (case 46); close() ends it.

    def _on_metadata(self, payload: dict[str, Any]) -> None:
        # case 46: usage may come before or after messageStop; either way it counts.
        usage = payload.get("usage")
        if isinstance(usage, dict):
            counts = {name: usage[key] for name, key in _USAGE_FIELDS if is_int(usage.get(key))}
            if counts:
                self.acc.set_usage(**counts)
        self._metadata = _without_padding(payload)

    def _on_exception(self, frame: EventStreamMessage) -> None:
        # case 44, PF 2.5 / 5.4: the exception name is in :exception-type; stream_harness.errors
        # classifies by it (throttlingException -> rate_limit), and its veto keeps the
        # throttling text "Too many tokens, please wait ..." from reading as an overflow.
        message, headers, body = frame_error(frame)
        self.fail(message, headers=headers, body=body)

    def _on_error_frame(self, frame: EventStreamMessage) -> None:
        # ":message-type: error" carries :error-code / :error-message headers (AWS
        # event-stream). VAI drops these silently (PF 1.2); a lost error is a silent
        # success, so it ends the stream like an exception (spec: "Errors").
        message, headers, body = frame_error(frame)
        self.fail(message, headers=headers, body=body)

    # -- ending ---------------------------------------------------------------------

    def on_eof(self) -> None:
        if not self._message_stopped:
            # EOF without messageStop: the stream was cut; keep what came (bugs 27-29).
            self.fail(f"stream ended without messageStop{self.none_received}")
            return
        self._flush()
        self.acc.finish_provider(self._stop_reason)

    def _stop(self, index: int) -> None:
        wire = self._indexes[index]
        wire.stopped = True
        if wire.provider is not None:
            block, wire.provider = wire.provider, None
            self.acc.provider_block(block.provider_type, block.final(), position=block.position)
            return
        self._flush_redacted(index, wire)
        content_index = self.acc.content_index(index)
        self.acc.end(index)
        if wire.citations:
            self.acc.provider_block(
                "citations", {"content_index": content_index, "citations": list(wire.citations)}
            )
            wire.citations.clear()

    def _flush_redacted(self, index: int, wire: _Index) -> None:
        if wire.redacted is None:
            return
        data = base64.b64encode(b"".join(wire.redacted)).decode("ascii")
        wire.redacted = None
        self.acc.redacted_thinking(index, data)

    def _flush(self) -> None:
        """Hand over everything still pending, in wire order, before the terminal event."""
        if self._flushed or self.acc.terminated:
            return
        self._flushed = True
        for index, wire in list(self._indexes.items()):
            if not wire.stopped:
                self._stop(index)
        if self._additional_fields is not None:
            fields = self._additional_fields
            data = fields if isinstance(fields, dict) else {"value": fields}
            self.acc.provider_block("additionalModelResponseFields", data)
        if self._metadata:
            self.acc.provider_block("metadata", self._metadata)

    def before_terminal(self) -> None:
        self._flush()

    def _block_index(self, payload: dict[str, Any], what: str) -> int | None:
        index = payload.get("contentBlockIndex")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            self.malformed(f"{what} without a contentBlockIndex: {excerpt(repr(index))}")
            return None
        return index

    def _indexed_member(
        self, payload: dict[str, Any], what: str, member: str
    ) -> tuple[int, dict[str, Any]] | None:
        """The block index and the object a block event carries (``start``, ``delta``);
        None, after ending the stream in an error, when either is missing."""
        index = self._block_index(payload, what)
        if index is None:
            return None
        value = payload.get(member)
        if not isinstance(value, dict):
            self.malformed(f"{what} at index {index} without a {member} object")
            return None
        return index, value


def frame_error(frame: EventStreamMessage) -> tuple[str, dict[str, str], str]:
    """An exception or error frame as (message, string headers, body text) for ``acc.fail``.

    Shared with bedrock-invoke-stream, whose exception frames are the same union members.
    An exception's message is its JSON ``message`` (``Message``), else the payload text,
    else the exception name; an error frame's is its ``:error-message`` / ``:error-code``.
    """
    headers = _text_headers(frame)
    text = frame.payload.decode("utf-8", "replace")
    if frame.message_type == "error":
        message = headers.get(":error-message") or headers.get(":error-code") or "error frame"
        return message, headers, text
    found = None
    try:
        value = bounded_loads(text)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        found = as_str(value.get("message")) or as_str(value.get("Message"))
    elif text.strip():
        found = text.strip()
    return found or frame.exception_type or "exception", headers, text


def _text_headers(frame: EventStreamMessage) -> dict[str, str]:
    """The frame's string headers, as stream_harness.errors reads them (:exception-type, ...)."""
    return {k: v for k, v in frame.headers.items() if isinstance(v, str)}


_HANDLERS = {
    "messageStart": BedrockConverseStreamNormalizer._on_message_start,
    "contentBlockStart": BedrockConverseStreamNormalizer._on_block_start,
    "contentBlockDelta": BedrockConverseStreamNormalizer._on_block_delta,
    "contentBlockStop": BedrockConverseStreamNormalizer._on_block_stop,
    "messageStop": BedrockConverseStreamNormalizer._on_message_stop,
    "metadata": BedrockConverseStreamNormalizer._on_metadata,
}

Normalizer = BedrockConverseStreamNormalizer

__all__ = ["BedrockConverseStreamNormalizer", "Normalizer", "frame_error"]

PROTOCOL = register(
    Protocol(
        id="bedrock-converse-stream",
        title="Amazon Bedrock ConverseStream",
        framing=EVENTSTREAM,
        translator=BedrockConverseStreamNormalizer,
        detect=Detect(
            # /converse (non-streaming) too: its error bodies answer the same API and are cases
            url=(r"/converse(?:-stream)?(?:$|[?#/])",),
            body=(rb":event-type.{0,40}(?:messageStart|contentBlock)",),
        ),
        stop_reasons="bedrock-converse-stream",
        order=50,
    )
)
