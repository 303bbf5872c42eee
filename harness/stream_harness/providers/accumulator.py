"""Block bookkeeping shared by every normalizer.

A normalizer only translates its wire events into calls on an :class:`Accumulator`
(``text``, ``thinking``, ``tool_call``, ``end``, ``finish``, ``fail``); everything the
contract promises about blocks lives here once: opening a block on its first delta,
``content_index`` in opening order, the ``*_end`` content being the concatenation of the
deltas, live tool arguments, closing every open block before the terminal event, and
exactly one terminal event. This is the role of pydantic-ai's parts manager.

Blocks are addressed by a *vendor key*: whatever identifies a block on the wire
(Anthropic's block index, a Chat Completions tool-call index, a Responses item id).
Several blocks may be open at once (interleaved parallel tool calls); each normalizer
decides when a block ends, because only it knows when its protocol says so.

Output is buffered: every call appends events, and the normalizer returns
:meth:`Accumulator.drain` from its ``feed`` / ``close``.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from stream_harness.contract.events import (
    AssistantMessage,
    ContentBlock,
    DeferredArguments,
    DoneEvent,
    ErrorEvent,
    ErrorInfo,
    ErrorOrigin,
    Event,
    ProviderBlock,
    StartEvent,
    StopReason,
    TextBlock,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingBlock,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    Usage,
)
from stream_harness.contract.lifecycle import Phase, advance
from stream_harness.contract.limits import JSON_MAX_DEPTH
from stream_harness.contract.partial_json import ArgumentsLog, Step
from stream_harness.errors.classify import classify
from stream_harness.providers.stop_reasons import map_stop_reason

BlockKind = Literal["text", "thinking", "tool_call"]

# "No parsed value given" for _tool_delta (None is a JSON value).
_NOT_PARSED: Any = object()

# The delta events are built by their models' validators from a dict: the same validated,
# frozen objects as ``TextDeltaEvent(content_index=..., delta=...)`` without the keyword
# plumbing of ``BaseModel.__init__``, which costs about 0.4 us per event (1.05 -> 0.64 us
# measured; 8 ms on a 20,000-delta stream). ``model_construct`` is slower than either.
_text_delta_event = TextDeltaEvent.__pydantic_validator__.validate_python
_thinking_delta_event = ThinkingDeltaEvent.__pydantic_validator__.validate_python
_toolcall_delta_event = ToolCallDeltaEvent.__pydantic_validator__.validate_python


@dataclass(slots=True)
class _Block:
    kind: BlockKind
    content_index: int
    parts: list[str] = field(default_factory=list)  # text and thinking; a call's are in args
    signature: str | None = None
    redacted: bool = False
    id: str | None = None
    name: str | None = None
    args: ArgumentsLog | None = None
    final: ContentBlock | None = None
    strict: bool = True  # a closed call's text parsed strictly (C7)
    # Where the block is in the lifecycle table (stream_harness.contract.lifecycle). A delta
    # leaves an open block open (the table's open x delta), so only start and end advance it.
    phase: Phase = "new"

    def snapshot(self) -> ContentBlock:
        """The block as it stands; closed blocks return their frozen final form."""
        if self.final is not None:
            return self.final
        if self.kind == "text":
            return TextBlock(content="".join(self.parts), signature=self.signature)
        if self.kind == "thinking":
            return ThinkingBlock(
                content="".join(self.parts), signature=self.signature, redacted=self.redacted
            )
        assert self.args is not None
        return ToolCall(
            id=self.id or f"toolcall_{self.content_index}",
            name=self.name or "",
            arguments=_as_object(self.args.value),
            signature=self.signature,
        )


class _LiveArguments(DeferredArguments):
    """A delta's live arguments: a position in its call's ArgumentsLog, built on read."""

    __slots__ = ("_at", "_log", "_value")

    def __init__(self, log: ArgumentsLog, at: int) -> None:
        self._log: ArgumentsLog | None = log
        self._at = at
        self._value: dict[str, Any] | None = None

    def resolve(self) -> dict[str, Any]:
        if self._log is not None:
            self._value = _as_object(self._log.value_at(self._at))
            self._log = None  # the log may go once every reader has its value
        assert self._value is not None
        return self._value


_STRICT_STEPS: Final = frozenset({Step.STRICT, Step.EMPTY})
"""Cascade steps whose value is the text's own (C7): a strict parse, or no text at all (a
tool without parameters; Anthropic then streams no fragment)."""


def _as_object(value: Any) -> dict[str, Any]:
    # The contract's arguments are an object; a tool call whose arguments parse to
    # anything else (a list, a number) is malformed, and {} is what the cascade gives
    # for unusable input too.
    return value if isinstance(value, dict) else {}


class Accumulator:
    """Turns block-level calls into contract events and the assembled message."""

    def __init__(self, protocol: str) -> None:
        self.protocol = protocol
        self.model: str | None = None
        self.response_id: str | None = None
        self.provider_stop_reason: str | None = None
        self._out: list[Event] = []
        self._blocks: list[_Block] = []
        self._open: dict[Hashable, _Block] = {}
        self._provider_blocks: list[ProviderBlock] = []
        self._usage: dict[str, int] = {}
        self._started = False
        self._terminal: DoneEvent | ErrorEvent | None = None
        # Wire anomalies the normalizer recovered from (an index the wire got wrong, ...):
        # not part of the contract's events, so that recovering changes no golden line,
        # but kept for reports and `stream-harness normalize` to show.
        self.warnings: list[str] = []
        # A tool call whose arguments nest deeper than stream_harness.contract.limits.JSON_MAX_DEPTH: its
        # value is {} by the cascade, so the stream may not end in done (finish turns
        # it into an error naming the call); the first such call is kept.
        self._too_deep: str | None = None

    # -- state -------------------------------------------------------------

    @property
    def started(self) -> bool:
        return self._started

    @property
    def terminated(self) -> bool:
        return self._terminal is not None

    @property
    def terminal(self) -> DoneEvent | ErrorEvent | None:
        return self._terminal

    @property
    def has_tool_calls(self) -> bool:
        return any(b.kind == "tool_call" for b in self._blocks)

    @property
    def block_count(self) -> int:
        return len(self._blocks)

    def is_open(self, key: Hashable) -> bool:
        return key in self._open

    def open_kind(self, key: Hashable) -> BlockKind | None:
        block = self._open.get(key)
        return block.kind if block is not None else None

    def open_keys(self) -> list[Hashable]:
        """Keys of the open blocks in content_index order."""
        return sorted(self._open, key=lambda k: self._open[k].content_index)

    def warn(self, message: str) -> None:
        """Record a wire anomaly that was recovered from instead of failing the stream."""
        if message not in self.warnings:
            self.warnings.append(message)

    def drain(self) -> list[Event]:
        out, self._out = self._out, []
        return out

    # -- message metadata ---------------------------------------------------

    def start(self, *, model: str | None = None, response_id: str | None = None) -> None:
        """Emit ``start`` once; later calls only fill in metadata that was missing."""
        self.set_meta(model=model, response_id=response_id)
        self._ensure_started()

    def set_meta(self, *, model: str | None = None, response_id: str | None = None) -> None:
        if model:
            self.model = model
        if response_id:
            self.response_id = response_id

    def set_usage(
        self,
        *,
        input: int | None = None,
        output: int | None = None,
        cache_read: int | None = None,
        cache_write: int | None = None,
        total: int | None = None,
    ) -> None:
        """Overwrite the given counters (providers report cumulative usage)."""
        # Written out rather than looped over a table of pairs: Gemini reports usage on
        # every chunk, and the loop cost twice as much.
        u = self._usage
        if input is not None:
            u["input"] = max(0, int(input))
        if output is not None:
            u["output"] = max(0, int(output))
        if cache_read is not None:
            u["cache_read"] = max(0, int(cache_read))
        if cache_write is not None:
            u["cache_write"] = max(0, int(cache_write))
        if total is not None:
            u["total"] = max(0, int(total))

    def usage(self) -> Usage:
        u = self._usage
        parts = (
            u.get("input", 0),
            u.get("output", 0),
            u.get("cache_read", 0),
            u.get("cache_write", 0),
        )
        total = u["total"] if "total" in u else sum(parts)
        return Usage(
            input=parts[0], output=parts[1], cache_read=parts[2], cache_write=parts[3], total=total
        )

    # -- blocks ---------------------------------------------------------------

    def text(self, key: Hashable, delta: str) -> None:
        """Append text to the block under ``key``, opening it on the first non-empty delta.

        Empty deltas are dropped: Anthropic and Ollama send ``""`` during other blocks,
        and opening a block for them would invent empty text blocks.
        """
        if not delta or self._terminal is not None:
            return
        block = self._open.get(key)
        if block is None or block.kind != "text":  # (the common case skips a call)
            block = self._block_for(key, "text")
        block.parts.append(delta)
        self._out.append(_text_delta_event({"content_index": block.content_index, "delta": delta}))

    def thinking(self, key: Hashable, delta: str) -> None:
        if not delta or self._terminal is not None:
            return
        block = self._open.get(key)
        if block is None or block.kind != "thinking":
            block = self._block_for(key, "thinking")
        block.parts.append(delta)
        self._out.append(
            _thinking_delta_event({"content_index": block.content_index, "delta": delta})
        )

    def open_text(self, key: Hashable) -> None:
        """Open a text block before any text arrives (e.g. to hold a signature)."""
        if self._terminal is None:
            self._block_for(key, "text")

    def open_thinking(self, key: Hashable) -> None:
        """Open a thinking block before any text arrives (a signature-only block)."""
        if self._terminal is None:
            self._block_for(key, "thinking")

    def signature(self, key: Hashable, signature: str, *, replace: bool = False) -> None:
        """Attach an opaque replay token to the block open under ``key``.

        Successive fragments are concatenated (a proxy may split one signature; pi does
        the same); ``replace`` is for protocols that resend the whole token.
        """
        if not signature or self._terminal is not None:
            return
        block = self._open.get(key)
        if block is None:
            return
        if replace or block.signature is None:
            block.signature = signature
        else:
            block.signature += signature

    def redacted_thinking(self, key: Hashable, data: str) -> None:
        """A thinking block that arrives whole and encrypted (Anthropic redacted_thinking)."""
        if self._terminal is not None:
            return
        block = self._block_for(key, "thinking")
        block.redacted = True
        block.signature = data
        self.end(key)

    def tool_call(
        self,
        key: Hashable,
        *,
        id: str | None = None,
        name: str | None = None,
        delta: str = "",
    ) -> None:
        """Open or continue a tool call; ``id`` and ``name`` fill in whatever is missing.

        A name that arrives after the first delta is kept (some OpenAI-compatible
        servers send it late); a repeated id or name is not appended, unlike
        ``accumulate_delta`` in openai-python, which builds ``call_acall_a``.
        """
        if self._terminal is not None:
            return
        block = self._open.get(key)
        if block is None or block.kind != "tool_call":
            if block is not None:
                self.end(key)
            block = self._open_block(key, "tool_call", id=id or None, name=name or None)
        else:
            if id and not block.id:
                block.id = id
            if name and not block.name:
                block.name = name
        if delta:
            self._tool_delta(block, delta)

    def tool_call_arguments(self, key: Hashable) -> str:
        block = self._open.get(key)
        if block is None or block.args is None:
            return ""
        return block.args.text

    def tool_call_done(self, key: Hashable, arguments: str | None) -> None:
        """Reconcile the streamed arguments with a final full copy, then close the call.

        Providers that send only the final string (OpenAI Responses ``.done`` without
        deltas) still get their arguments; a final copy that extends what streamed adds
        the missing suffix as one more delta; one that contradicts it is ignored, since
        the deltas are what every consumer already saw.
        """
        block = self._open.get(key)
        if block is None or block.kind != "tool_call":
            return
        if arguments:
            assert block.args is not None
            streamed = block.args.text
            if arguments.startswith(streamed) and len(arguments) > len(streamed):
                self._tool_delta(block, arguments[len(streamed) :])
        self.end(key)

    def whole_tool_call(
        self,
        key: Hashable,
        *,
        id: str | None,
        name: str | None,
        arguments: dict[str, Any] | str | None,
        signature: str | None = None,
    ) -> None:
        """A call that arrives complete (Gemini, Groq): start, one synthetic delta, end.

        ``arguments`` given as an object must be a value parsed from JSON (string keys,
        JSON types): it becomes the live and final value as it is, without a parse of
        its dumped text.
        """
        if self._terminal is not None:
            return
        self.tool_call(key, id=id, name=name)
        if signature:
            self.signature(key, signature)
        if isinstance(arguments, str):
            text = arguments
        elif arguments is None:
            text = ""
        else:
            text = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
            block = self._open.get(key)
            if text and block is not None and block.kind == "tool_call":
                # The arguments are parsed already: the live and final values are
                # them, not a second parse of their text (IncrementalJSON.feed_whole).
                self._tool_delta(block, text, whole=arguments)
                self.end(key)
                return
        self.tool_call(key, delta=text)
        self.end(key)

    def provider_block(
        self, provider_type: str, data: dict[str, Any], *, position: int | None = None
    ) -> None:
        """Keep a block the contract does not model.

        It is placed after the blocks so far, or at ``position`` (the number of content
        blocks that preceded it on the wire) when it arrives late, e.g. backfilled from a
        final payload.
        """
        if self._terminal is None:
            where = (
                len(self._blocks) if position is None else max(0, min(position, len(self._blocks)))
            )
            self._provider_blocks.append(
                ProviderBlock(provider_type=provider_type, position=where, data=data)
            )

    def content_index(self, key: Hashable) -> int | None:
        """The content_index of the block open under ``key``, if any."""
        block = self._open.get(key)
        return block.content_index if block is not None else None

    def set_provider_stop_reason(self, raw: str | None) -> None:
        """Record the raw stop reason early, so an error before the end is classified with it."""
        if raw is not None:
            self.provider_stop_reason = raw

    def end(self, key: Hashable) -> None:
        block = self._open.pop(key, None)
        if block is None:
            return
        if block.kind == "tool_call":
            assert block.args is not None
            if self._too_deep is None and block.args.too_deep:
                self._too_deep = (
                    f"tool call {block.id or block.content_index!r}: arguments nested too "
                    f"deep (more than {JSON_MAX_DEPTH} levels; STREAM_HARNESS_JSON_MAX_DEPTH)"
                )
            # C7: the final arguments are the cascade's parse of the whole text, with the
            # text and whether that parse was strict.
            parsed = block.args.close_cascade()
            final: ContentBlock = ToolCall(
                id=block.id or f"toolcall_{block.content_index}",
                name=block.name or "",
                arguments=_as_object(parsed.value),
                signature=block.signature,
            )
            block.strict = parsed.step in _STRICT_STEPS and isinstance(parsed.value, dict)
        else:
            final = block.snapshot()
        block.phase = advance(block.phase, "end")
        block.final = final
        i = block.content_index
        if isinstance(final, TextBlock):
            self._out.append(
                TextEndEvent(content_index=i, content=final.content, signature=final.signature)
            )
        elif isinstance(final, ThinkingBlock):
            self._out.append(
                ThinkingEndEvent(
                    content_index=i,
                    content=final.content,
                    signature=final.signature,
                    redacted=final.redacted,
                )
            )
        else:
            self._out.append(
                ToolCallEndEvent(
                    content_index=i,
                    tool_call=final,
                    raw_arguments=block.args.text if block.args is not None else "",
                    strict=block.strict,
                )
            )

    def end_all(self) -> None:
        for key in self.open_keys():
            self.end(key)

    def _end_for_terminal(self) -> None:
        """Close the open blocks, then move every block through the terminal event, which
        the lifecycle table refuses for a block still open (C5)."""
        self.end_all()
        for block in self._blocks:
            block.phase = advance(block.phase, "terminal")

    # -- terminal -------------------------------------------------------------

    def message(self) -> AssistantMessage:
        """The message as it stands (the terminal event carries the final one)."""
        if self._terminal is not None:
            return self._terminal.message
        return self._message("stop", None)

    def finish(
        self,
        stop_reason: StopReason,
        *,
        provider_stop_reason: str | None = None,
        error_message: str | None = None,
        error: ErrorInfo | None = None,
    ) -> None:
        """Close every open block and emit ``done`` (or ``error`` for error/aborted)."""
        if self._terminal is not None:
            return
        if provider_stop_reason is not None:
            self.provider_stop_reason = provider_stop_reason
        if stop_reason in ("error", "aborted"):
            # A stop value the provider sent is the provider speaking (a filter, a refusal,
            # an unknown value); ending without one means the stream was cut.
            self.fail(
                error_message or f"stream stopped with {self.provider_stop_reason!r}",
                aborted=stop_reason == "aborted",
                error=error,
                origin="provider" if self.provider_stop_reason is not None else None,
            )
            return
        self._ensure_started()
        self._end_for_terminal()
        if self._too_deep is not None:
            # Never a done whose tool call silently lost its arguments.
            self.fail(self._too_deep)
            return
        message = self._message(stop_reason, None)
        terminal = DoneEvent(reason=stop_reason, message=message)
        self._terminal = terminal
        self._out.append(terminal)

    def finish_provider(self, raw: str | None, *, details: str | None = None) -> None:
        """Finish with a provider stop reason mapped through specs/stop_reasons.yaml."""
        mapping = map_stop_reason(
            self.protocol, raw, has_tool_calls=self.has_tool_calls, details=details
        )
        self.finish(mapping.reason, provider_stop_reason=raw, error_message=mapping.error_message)

    def fail(
        self,
        error_message: str,
        *,
        aborted: bool = False,
        error: ErrorInfo | None = None,
        status: int | None = None,
        body: Any = None,
        headers: Any = None,
        provider_stop_reason: str | None = None,
        origin: ErrorOrigin | None = None,
    ) -> None:
        """End in ``error``, keeping every block received so far (closed, in order).

        The classification comes from stream_harness.errors unless the caller already has it,
        so that no consumer has to string-match an error message on its own. ``origin``
        defaults to ``stream`` for a fault the normalizer found itself, which is how the
        normalizers report one: a message with no wire body, status or headers.
        """
        if self._terminal is not None:
            return
        self.set_provider_stop_reason(provider_stop_reason)
        self._ensure_started()
        self._end_for_terminal()
        error_was_none = error is None
        if error is None:
            error = classify(
                status=status,
                message=error_message,
                body=body,
                headers=headers,
                provider_stop_reason=self.provider_stop_reason,
                protocol=self.protocol,
            )
        if origin is None:
            origin = (
                "stream"
                if error_was_none and body is None and status is None and headers is None
                else error.origin
            )
        if error.origin != origin:
            error = error.model_copy(update={"origin": origin})
        stop: StopReason = "aborted" if aborted else "error"
        message = self._message(stop, error_message)
        terminal = ErrorEvent(
            reason="aborted" if aborted else "error",
            error_message=error_message,
            message=message,
            error=error,
        )
        self._terminal = terminal
        self._out.append(terminal)

    def force_fail(self, error_message: str) -> None:
        """The last resort of the never-raise choke point, when :meth:`fail` itself raised.

        Each open block is closed on its own (a block that cannot be is dropped from the
        open set), then an error terminal with whatever content can still be snapshotted.
        """
        if self._terminal is not None:
            return
        for key in list(self._open):
            try:
                self.end(key)
            except Exception:
                self._open.pop(key, None)
        content: list[ContentBlock] = []
        for block in self._blocks:
            try:
                content.append(block.snapshot())
            except Exception:
                continue
        self._ensure_started()
        terminal = ErrorEvent(
            reason="error",
            error_message=error_message,
            message=AssistantMessage(
                content=content, stop_reason="error", error_message=error_message
            ),
            error=ErrorInfo(kind="fatal", origin="stream"),
        )
        self._terminal = terminal
        self._out.append(terminal)

    # -- internals ------------------------------------------------------------

    def _ensure_started(self) -> None:
        if not self._started:
            self._started = True
            self._out.append(StartEvent())

    def _block_for(self, key: Hashable, kind: BlockKind) -> _Block:
        block = self._open.get(key)
        if block is not None and block.kind == kind:
            return block
        if block is not None:
            self.end(key)
        return self._open_block(key, kind)

    def _open_block(
        self, key: Hashable, kind: BlockKind, *, id: str | None = None, name: str | None = None
    ) -> _Block:
        self._ensure_started()
        block = _Block(kind=kind, content_index=len(self._blocks), id=id, name=name)
        block.phase = advance(block.phase, "start")
        self._blocks.append(block)
        self._open[key] = block
        i = block.content_index
        if kind == "text":
            self._out.append(TextStartEvent(content_index=i))
        elif kind == "thinking":
            self._out.append(ThinkingStartEvent(content_index=i))
        else:
            block.args = ArgumentsLog()
            self._out.append(ToolCallStartEvent(content_index=i, id=id, name=name))
        return block

    def _tool_delta(self, block: _Block, delta: str, *, whole: Any = _NOT_PARSED) -> None:
        log = block.args
        assert log is not None
        at = log.feed(delta) if whole is _NOT_PARSED else log.feed_whole(delta, whole)
        self._out.append(
            _toolcall_delta_event(
                {
                    "content_index": block.content_index,
                    "delta": delta,
                    "arguments": _LiveArguments(log, at),
                }
            )
        )

    def _message(self, stop_reason: StopReason, error_message: str | None) -> AssistantMessage:
        return AssistantMessage(
            content=[b.snapshot() for b in self._blocks],
            stop_reason=stop_reason,
            provider_stop_reason=self.provider_stop_reason,
            usage=self.usage(),
            model=self.model,
            response_id=self.response_id,
            error_message=error_message,
            provider_blocks=list(self._provider_blocks),
        )
