"""Anthropic Messages streaming (``POST /v1/messages`` with ``stream: true``) -> unified events.

The wire (provider-facts.md 2.1): ``message_start``, then per content block
``content_block_start`` / ``content_block_delta``* / ``content_block_stop`` addressed by
``index``, then ``message_delta`` (stop reason, cumulative usage) and ``message_stop``;
``ping`` anywhere, ``error`` after the 200 response has started. The full mapping, the
decisions where the protocol is silent, and what is kept as provider blocks are written
down in specs/protocols/anthropic-messages.md; this module cites it by section.

Keys for the accumulator are the wire ``index`` (an ``int``): Anthropic streams one block
at a time and an index names one block of the final ``content``.

Blocks the contract does not model (``server_tool_use``, ``mcp_tool_use``, every
``*_tool_result``, ``compaction``, ``fallback``, unknown types) are kept as provider
blocks holding the block as the SDK's final message would (``input`` assembled from
``input_json_delta``, ``compaction_delta`` fields applied). They can only be handed to the
accumulator whole, so they wait until their ``content_block_stop``, or until the stream
ends in any way (then they are flushed first, so an error never loses them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from stream_harness.contract.partial_json import parse_partial
from stream_harness.providers.base import SSENormalizer, excerpt, parse_json
from stream_harness.providers.coerce import as_text, is_int
from stream_harness.providers.registry import Detect, Protocol, register
from stream_harness.wire import SSEEvent
from stream_harness.wire.framing import SSE, FrameDecoder

WireKind = Literal["text", "thinking", "redacted_thinking", "tool_use", "provider"]

# Usage fields -> Accumulator.set_usage keywords. Anthropic's input_tokens already
# excludes cached tokens and output_tokens already includes thinking tokens, so no
# arithmetic is needed (specs/protocols/anthropic-messages.md, "Usage").
_USAGE_FIELDS: tuple[tuple[str, str], ...] = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cache_read", "cache_read_input_tokens"),
    ("cache_write", "cache_creation_input_tokens"),
)

# message_delta fields with no place in AssistantMessage, kept verbatim in one
# "message_delta" provider block (a code-execution container id must be sent back).
_MESSAGE_META_FIELDS = ("stop_sequence", "stop_details", "container")


@dataclass(slots=True)
class _WireBlock:
    """What the wire said about one ``index`` (the accumulator knows the rest)."""

    kind: WireKind
    start: dict[str, Any]
    provider_type: str = ""
    open: bool = True
    # text: citations from the start block and citations_delta, in order.
    citations: list[Any] = field(default_factory=list)
    content_index: int | None = None
    # tool_use: a non-empty ``input`` in content_block_start (case 22), as JSON text,
    # used only if no input_json_delta follows (the SDK's deltas replace it too).
    start_input: str | None = None
    # provider blocks: the block as started, and input_json_delta fragments.
    data: dict[str, Any] = field(default_factory=dict)
    json_parts: list[str] = field(default_factory=list)


class AnthropicMessagesNormalizer(SSENormalizer):
    protocol = "anthropic-messages"

    def __init__(self, frames: FrameDecoder | None = None) -> None:
        super().__init__(frames)
        self._blocks: dict[int, _WireBlock] = {}
        self._tool_ids: set[str] = set()
        self._message_started = False
        # Events other than ping handled so far: an error before any of them is the
        # "first event" case (provider-facts.md 5.1, case 24).
        self._handled = 0
        self._stop_reason: str | None = None
        self._refusal_explanation: str | None = None
        self._message_meta: dict[str, Any] = {}
        # A start that reused the index of a block already stopped -> the index its block
        # really has (anthropic-sdk-typescript#879: after a server-tool result the start
        # repeats the previous index while its deltas and stop carry index + 1).
        self._moved: dict[int, int] = {}

    # -- framing hooks ----------------------------------------------------------

    def on_eof(self) -> None:
        # bugs 27-29 (ecosystem.md section 6): a cut stream is an error that keeps the
        # content; a message_delta with a stop_reason is not enough, since the protocol
        # allows more than one and only message_stop ends it (spec doc, "EOF").
        self.before_terminal()
        if self.events_seen == 0:
            self.acc.fail("stream ended without message_stop (no events received)")
        else:
            self.acc.fail("stream ended without message_stop")

    # -- events -----------------------------------------------------------------

    def on_event(self, event: SSEEvent) -> None:
        if event.event == "ping":  # case 19
            return
        if not event.data.strip():
            return  # the SDK skips data-less events too
        try:
            obj = parse_json(event.data)
        except (ValueError, RecursionError) as exc:
            self.before_terminal()
            if event.event == "error":
                # A non-JSON error event: its text is the message (the SDK does the same).
                self._fail_error(event.data.strip(), None, event.data)
            elif isinstance(exc, RecursionError):
                # json.loads gives up on deep nesting with RecursionError, which
                # SSENormalizer.load_json does not catch.
                self.acc.fail(
                    f"malformed JSON in SSE event #{self.events_seen} ({event.event}): "
                    f"nested too deeply: {excerpt(event.data)}"
                )
            else:
                self.load_json(event)  # fails with the shared "malformed JSON" message
            return
        if not isinstance(obj, dict):
            self.malformed(f"{event.event} event data is not a JSON object: {excerpt(event.data)}")
            return
        wire_type = obj.get("type")
        kind = wire_type if isinstance(wire_type, str) else event.event
        if event.event == "error" or kind == "error":
            self._on_error(obj, event.data)
            return
        if kind == "ping":
            return
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, obj)
        # Unknown event types are passed over (the protocol may grow).
        self._handled += 1

    def _on_message_start(self, obj: dict[str, Any]) -> None:
        if self._message_started:
            return  # the SDK ignores a second message_start as well
        message = obj.get("message")
        if not isinstance(message, dict):
            self.malformed("message_start without a message object")
            return
        self._message_started = True
        self.acc.start(model=as_text(message.get("model")), response_id=as_text(message.get("id")))
        self._apply_usage(message.get("usage"))  # case 23: initial usage incl. cache tokens
        stop_reason = message.get("stop_reason")
        if isinstance(stop_reason, str):
            self._set_stop_reason(stop_reason)
        content = message.get("content")
        if isinstance(content, list) and content:
            # Replays and gateways send the whole message here (tool_use blocks, server
            # tool results) with its stop_reason and no block events: each block is one
            # started and stopped at its position. A stop_reason of a later message_delta
            # still wins; without one, this one counts.
            for index, block in enumerate(content):
                if self.acc.terminated:
                    return
                self._on_block_start({"index": index, "content_block": block})
                if index in self._blocks and self._blocks[index].open:
                    self._stop_block(index)

    def _on_block_start(self, obj: dict[str, Any]) -> None:
        index = self._index(obj, "content_block_start")
        block = obj.get("content_block")
        if index is None:
            return
        if not isinstance(block, dict):
            self.malformed(f"content_block_start at index {index} without a content_block object")
            return
        index = self._start_index(index, block)
        if index is None:
            return
        block_type = block.get("type")
        if block_type == "text":
            self._start_text(index, block)
        elif block_type == "thinking":
            self._start_thinking(index, block)
        elif block_type == "redacted_thinking":
            self._start_redacted_thinking(index, block)
        elif block_type == "tool_use":
            self._start_tool_use(index, block)
        else:
            self._start_provider(index, block, block_type)

    def _start_index(self, index: int, block: dict[str, Any]) -> int | None:
        """Where a start at ``index`` puts its block (None: nowhere, it repeats the open one)."""
        previous = self._blocks.get(index)
        if previous is not None and previous.open:
            if previous.start == block:
                return None  # the same start sent twice: nothing new
            self._stop_block(index)  # a different block under an open index replaces it
        elif previous is not None:
            # The index of a block already stopped (anthropic-sdk-typescript#879): the
            # block is the next one, where its deltas and stop will point. Recovered and
            # recorded, not failed: every block and its content are kept.
            moved = max(self._blocks) + 1
            self.acc.warn(
                f"content_block_start reused index {index} of a stopped block; "
                f"taken as index {moved}"
            )
            self._moved[index] = moved
            index = moved
        return index

    def _start_text(self, index: int, block: dict[str, Any]) -> None:
        wire = _WireBlock("text", block)
        self._blocks[index] = wire
        citations = block.get("citations")
        if isinstance(citations, list):
            wire.citations.extend(citations)
        text = block.get("text")
        if isinstance(text, str):
            self._text(index, wire, text)

    def _start_thinking(self, index: int, block: dict[str, Any]) -> None:
        self._blocks[index] = _WireBlock("thinking", block)
        thinking = block.get("thinking")
        if isinstance(thinking, str):
            self.acc.thinking(index, thinking)
        signature = block.get("signature")
        if isinstance(signature, str) and signature:
            self.acc.open_thinking(index)
            self.acc.signature(index, signature)

    def _start_redacted_thinking(self, index: int, block: dict[str, Any]) -> None:
        # case 21: arrives whole, opaque payload in `data`, no deltas.
        data = block.get("data")
        if not isinstance(data, str):
            self.malformed(f"redacted_thinking block at index {index}: 'data' is not a string")
            return
        # Stays open on the wire until its stop, so a stray delta is ignored like any
        # other delta that does not fit its block; the accumulator has closed it already.
        self._blocks[index] = _WireBlock("redacted_thinking", block)
        self.acc.redacted_thinking(index, data)

    def _start_tool_use(self, index: int, block: dict[str, Any]) -> None:
        tool_id = as_text(block.get("id"))
        if tool_id and tool_id in self._tool_ids:
            # Ids must be unique in a message (contract C10); a second block with the
            # same id is a replayed or corrupted stream, not a new call.
            self.malformed(f"tool_use at index {index} repeats the id {tool_id!r}")
            return
        if tool_id:
            self._tool_ids.add(tool_id)
        wire = _WireBlock("tool_use", block)
        self._blocks[index] = wire
        self.acc.tool_call(index, id=tool_id, name=as_text(block.get("name")))
        start_input = block.get("input")
        if isinstance(start_input, dict) and start_input:  # case 22
            try:
                wire.start_input = json.dumps(
                    start_input, ensure_ascii=False, separators=(",", ":")
                )
            except (ValueError, RecursionError):
                self.malformed(f"tool_use at index {index}: 'input' cannot be encoded")

    def _start_provider(self, index: int, block: dict[str, Any], block_type: Any) -> None:
        """A block the contract does not model, kept whole as a provider block."""
        provider_type = block_type if isinstance(block_type, str) else "unknown"
        self._blocks[index] = _WireBlock(
            "provider", block, provider_type=provider_type, data=dict(block)
        )
        if block_type == "fallback":
            # The beta SDK relabels the message with the model that served it.
            to = block.get("to")
            if isinstance(to, dict):
                self.acc.set_meta(model=as_text(to.get("model")))

    def _on_block_delta(self, obj: dict[str, Any]) -> None:
        # The hot path of every stream: the checks of _index, _field and _text are inlined
        # for the common case (4% of a text stream, bench_normalizers.py).
        index = obj.get("index")
        if type(index) is not int:  # bool, missing, anything else: the general check
            index = self._index(obj, "content_block_delta")
            if index is None:
                return
        wire = self._blocks.get(index)
        if (wire is None or not wire.open) and index in self._moved:
            index = self._moved[index]  # the start's index, the block having moved
            wire = self._blocks.get(index)
        if wire is None or not wire.open:
            self.malformed(f"content_block_delta for index {index}, which is not an open block")
            return
        delta = obj.get("delta")
        if not isinstance(delta, dict):
            self.malformed(f"content_block_delta at index {index} without a delta object")
            return
        delta_type = delta.get("type")
        # A delta that does not fit its block's type is ignored, as the SDK does.
        if delta_type == "text_delta" and wire.kind == "text":
            text = delta.get("text")
            if not isinstance(text, str):
                self._field(delta, "text", index)  # ends the stream
            elif wire.content_index is not None:
                self.acc.text(index, text)  # the accumulator's block is open already
            else:
                self._text(index, wire, text)
        elif delta_type == "thinking_delta" and wire.kind == "thinking":
            thinking = self._field(delta, "thinking", index)
            if thinking is not None:
                self.acc.thinking(index, thinking)
        elif delta_type == "signature_delta" and wire.kind == "thinking":
            # case 20: fragments are concatenated (the accumulator appends; pi does the
            # same; the SDK assigns, see specs/known-differences.md).
            signature = self._field(delta, "signature", index)
            if signature:
                if not self.acc.is_open(index):
                    self.acc.open_thinking(index)
                self.acc.signature(index, signature)
        elif delta_type == "input_json_delta" and wire.kind in ("tool_use", "provider"):
            partial = delta.get("partial_json")  # _field inlined: the tool stream's hot path
            if type(partial) is not str:
                self._field(delta, "partial_json", index)  # ends the stream
                return
            if not partial:
                return  # case 22: empty partial_json is skipped
            if wire.kind == "tool_use":
                wire.start_input = None
                self.acc.tool_call(index, delta=partial)
            else:
                wire.json_parts.append(partial)
        elif delta_type == "citations_delta" and wire.kind == "text" and "citation" in delta:
            wire.citations.append(delta["citation"])
        elif delta_type == "compaction_delta" and wire.kind == "provider":
            # The SDK assigns the delta's fields to the block (the summary comes whole).
            wire.data.update((k, v) for k, v in delta.items() if k != "type")

    def _on_block_stop(self, obj: dict[str, Any]) -> None:
        index = self._index(obj, "content_block_stop")
        if index is None:
            return
        if not (index in self._blocks and self._blocks[index].open) and index in self._moved:
            index = self._moved[index]
        if index in self._blocks and self._blocks[index].open:
            self._stop_block(index)

    def _on_message_delta(self, obj: dict[str, Any]) -> None:
        delta = obj.get("delta", {})
        if delta is None:
            delta = {}
        if not isinstance(delta, dict):
            self.malformed("message_delta with a delta that is not an object")
            return
        if "stop_reason" in delta:
            stop_reason = delta["stop_reason"]
            if stop_reason is not None and not isinstance(stop_reason, str):
                self.malformed(
                    f"message_delta stop_reason is not a string: {excerpt(repr(stop_reason))}"
                )
                return
            self._set_stop_reason(stop_reason)
        if "stop_details" in delta:
            details = delta["stop_details"]
            explanation = details.get("explanation") if isinstance(details, dict) else None
            self._refusal_explanation = as_text(explanation)
        for key in _MESSAGE_META_FIELDS:
            if delta.get(key) is not None:
                self._message_meta[key] = delta[key]
        if obj.get("context_management") is not None:
            self._message_meta["context_management"] = obj["context_management"]
        self._apply_usage(obj.get("usage"))  # cumulative: overwrite only what is present

    def _on_message_stop(self, obj: dict[str, Any]) -> None:
        self.before_terminal()
        # The refusal explanation becomes the error message (case 26); it is passed only
        # for a refusal so that it never hides "unrecognized stop reason".
        details = self._refusal_explanation if self._stop_reason == "refusal" else None
        self.acc.finish_provider(self._stop_reason, details=details)

    def _on_error(self, obj: dict[str, Any], raw: str) -> None:
        self.before_terminal()
        error = obj.get("error")
        error_type = message = None
        if isinstance(error, dict):
            error_type = as_text(error.get("type"))
            message = as_text(error.get("message"))
        text = message or error_type or f"error event: {excerpt(raw)}"
        self._fail_error(text, error_type, raw)

    def _fail_error(self, message: str, error_type: str | None, raw: str) -> None:
        # case 24: an overloaded_error before anything else is what a 529 response would
        # have been (VAI does the same); later errors carry no status, the error type
        # (read from the body by stream_harness.errors) classifies them (case 25, bug 30).
        first = self._handled == 0
        status = 529 if first and error_type == "overloaded_error" else None
        self.acc.fail(message, status=status, body=raw)

    # -- helpers ------------------------------------------------------------------

    def _text(self, index: int, wire: _WireBlock, text: str) -> None:
        was_open = self.acc.is_open(index)
        self.acc.text(index, text)
        if not was_open and self.acc.is_open(index):
            wire.content_index = self.acc.block_count - 1

    def _stop_block(self, index: int) -> None:
        wire = self._blocks[index]
        wire.open = False
        if wire.kind == "tool_use" and wire.start_input is not None:
            self.acc.tool_call(index, delta=wire.start_input)
        if wire.kind == "provider":
            if wire.json_parts:
                wire.data["input"] = parse_partial("".join(wire.json_parts))
            self.acc.provider_block(wire.provider_type, wire.data)
            return
        self.acc.end(index)
        if wire.kind == "text" and wire.citations:
            self.acc.provider_block(
                "citations", {"content_index": wire.content_index, "citations": wire.citations}
            )

    def before_terminal(self) -> None:
        """Close what is open, in wire order, so the terminal message holds all of it."""
        if self.acc.terminated:
            return
        for index, wire in list(self._blocks.items()):
            if wire.open:
                self._stop_block(index)
        if self._message_meta:
            self.acc.provider_block("message_delta", dict(self._message_meta))
            self._message_meta = {}

    def _set_stop_reason(self, stop_reason: str | None) -> None:
        self._stop_reason = stop_reason
        # Kept on the accumulator at once so that an error before message_stop still
        # reports (and classifies by) the reason the wire gave.
        self.acc.provider_stop_reason = stop_reason

    def _apply_usage(self, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        counts = {name: usage[key] for name, key in _USAGE_FIELDS if is_int(usage.get(key))}
        if counts:
            self.acc.set_usage(**counts)

    def _index(self, obj: dict[str, Any], what: str) -> int | None:
        index = obj.get("index")
        if not is_int(index):
            self.malformed(f"{what} without an integer index: {excerpt(repr(index))}")
            return None
        assert isinstance(index, int)
        return index

    def _field(self, delta: dict[str, Any], name: str, index: int) -> str | None:
        value = delta.get(name)
        if not isinstance(value, str):
            # Only called after the delta type matched, so the type is a known name.
            self.malformed(f"{delta['type']} at index {index}: {name!r} is not a string")
            return None
        return value


_HANDLERS = {
    "message_start": AnthropicMessagesNormalizer._on_message_start,
    "content_block_start": AnthropicMessagesNormalizer._on_block_start,
    "content_block_delta": AnthropicMessagesNormalizer._on_block_delta,
    "content_block_stop": AnthropicMessagesNormalizer._on_block_stop,
    "message_delta": AnthropicMessagesNormalizer._on_message_delta,
    "message_stop": AnthropicMessagesNormalizer._on_message_stop,
}

Normalizer = AnthropicMessagesNormalizer

PROTOCOL = register(
    Protocol(
        id="anthropic-messages",
        title="Anthropic Messages",
        framing=SSE,
        translator=AnthropicMessagesNormalizer,
        detect=Detect(
            url=(r"/v1/messages(?:$|[?#/])",),
            body=(rb"event:\s*message_start|\"type\"\s*:\s*\"message_start\"",),
        ),
        stop_reasons="anthropic-messages",
        order=10,
    )
)
