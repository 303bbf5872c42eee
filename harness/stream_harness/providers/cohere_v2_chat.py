"""Cohere v2 chat streaming (``POST /v2/chat`` with ``stream: true``) -> unified events.

The wire (Cohere's streaming and tool-use-streaming guides, and the cohere-python SDK's
``V2ChatStreamResponse`` models): SSE events whose ``event:`` name equals the JSON
``type``: ``message-start`` (the response ``id``), per content block ``content-start`` /
``content-delta``* / ``content-end`` addressed by ``index`` (``type`` ``text`` or
``thinking``), ``tool-plan-delta`` (the plan written before tool calls, no index),
per call ``tool-call-start`` (the call as an *object* under ``tool_calls``) /
``tool-call-delta``* / ``tool-call-end``, ``citation-start`` / ``citation-end`` pairs,
and ``message-end`` with ``finish_reason``, ``usage`` and, on a failure, an ``error``
string; a bare ``data: [DONE]`` follows. The mapping, the decisions where the protocol is
silent (the tool plan is thinking; usage arithmetic) and the provider blocks are written
down in specs/protocols/cohere-v2-chat.md ("spec:" below).

Keys for the accumulator: ``("content", index)`` for content blocks, ``("tool", index)``
for calls, ``("plan", n)`` for a tool plan. Cohere numbers content blocks and calls
separately, each from 0, so the kind is part of the key.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from typing import Any, Final, Literal

from stream_harness.providers.base import CallIds, SSENormalizer, excerpt, parse_json
from stream_harness.providers.coerce import as_int, as_str
from stream_harness.providers.registry import Detect, Protocol, register
from stream_harness.wire import SSEEvent
from stream_harness.wire.framing import SSE, FrameDecoder

TextKind = Literal["text", "thinking"]

# The content types of content-start (ChatContentStartEventDeltaMessageContentType).
_KINDS: Final[dict[str, TextKind]] = {"text": "text", "thinking": "thinking"}


class CohereV2ChatNormalizer(SSENormalizer):
    protocol = "cohere-v2-chat"

    def __init__(self, frames: FrameDecoder | None = None) -> None:
        super().__init__(frames)
        self._kinds: dict[Hashable, TextKind] = {}  # content key -> type from content-start
        self._last_content: Hashable | None = None
        self._plan: Hashable | None = None  # the open tool-plan block
        self._plans = 0
        self._calls = 0  # tool-call-starts seen: the index of a start that names none
        self._last_call: Hashable | None = None
        self._call_ids = CallIds()
        # Citations waiting for their block to end (spec: "Citations"), and the content
        # index every ended block had, for citations that come after it.
        self._pending: dict[Hashable, list[Any]] = {}
        self._ended: dict[Hashable, int] = {}
        self._usage_kept: dict[str, Any] = {}

    # -- framing hooks ----------------------------------------------------------

    def on_eof(self) -> None:
        # spec: "The end": message-end is the terminal signal; without it the stream was
        # cut, and what came is kept (bugs 27-29).
        self.before_terminal()
        empty = " (no events received)" if self.events_seen == 0 else ""
        self.acc.fail(f"stream ended without message-end{empty}")

    # -- events -------------------------------------------------------------------

    def on_event(self, event: SSEEvent) -> None:
        data = event.data.strip()
        if not data:
            return  # the SDK skips data-less events too
        if data == "[DONE]":
            # After message-end the stream is terminated and this is never seen; before
            # it, the server closed the stream without a finish reason.
            self.before_terminal()
            self.acc.fail("stream ended without message-end ([DONE] came first)")
            return
        try:
            obj = parse_json(event.data)
        except (ValueError, RecursionError):
            self.before_terminal()
            self.load_json(event)  # fails with the shared "malformed JSON" message
            return
        if not isinstance(obj, dict):
            self.malformed(f"{event.event} event data is not a JSON object: {excerpt(event.data)}")
            return
        wire_type = obj.get("type")
        kind = wire_type if isinstance(wire_type, str) else event.event
        if kind == "error" or (wire_type is None and isinstance(obj.get("message"), str)):
            # Not a documented v2 event: a proxy's or gateway's error object in the stream.
            self.before_terminal()
            text = as_str(obj.get("message"))
            self.acc.fail(text or f"error event: {excerpt(event.data)}", body=obj)
            return
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, obj)
        # Unknown types (debug, anything new) are passed over: the protocol may grow.

    def _on_message_start(self, obj: dict[str, Any]) -> None:
        self.acc.start(response_id=as_str(obj.get("id")))

    def _on_content_start(self, obj: dict[str, Any]) -> None:
        content = self._content(obj, "content-start")
        if content is None:
            return
        self._close_plan()
        key = ("content", self._index(obj, 0))
        declared = content.get("type")
        kind = _KINDS.get(declared) if isinstance(declared, str) else None
        if kind is not None:
            self._kinds[key] = kind
        self._last_content = key
        self._content_text(key, content, "content-start")

    def _on_content_delta(self, obj: dict[str, Any]) -> None:
        content = self._content(obj, "content-delta")
        if content is None:
            return
        key = ("content", self._index(obj, 0))
        self._last_content = key
        self._content_text(key, content, "content-delta")

    def _on_content_end(self, obj: dict[str, Any]) -> None:
        self._end(("content", self._index(obj, 0)))

    def _on_tool_plan_delta(self, obj: dict[str, Any]) -> None:
        message = self._message(obj, "tool-plan-delta")
        if message is None:
            return
        plan = message.get("tool_plan")
        if plan is None:
            return
        if not isinstance(plan, str):
            self.malformed(f"tool-plan-delta: 'tool_plan' is not a string: {excerpt(repr(plan))}")
            return
        if not plan:
            return
        # spec: "The tool plan": thinking, kept apart from the answer's text.
        if self._plan is None:
            self._plans += 1
            self._plan = ("plan", self._plans)
        self.acc.thinking(self._plan, plan)

    def _on_tool_call_start(self, obj: dict[str, Any]) -> None:
        message = self._message(obj, "tool-call-start")
        if message is None:
            return
        call = message.get("tool_calls")
        if isinstance(call, list):
            # The documented shape is one object; a list (some proxies) holds that object.
            self.acc.warn("tool-call-start carried a list under tool_calls; its first call is used")
            call = call[0] if call else None
        if not isinstance(call, dict):
            self.malformed("tool-call-start without a tool_calls object")
            return
        function = self._member(call, "function", "tool-call-start: 'function' is not an object")
        if function is None:
            return
        arguments = self._arguments(function, "tool-call-start")
        if arguments is None:
            return
        self._close_plan()
        index = self._index(obj, self._calls)
        self._calls += 1
        key = ("tool", index)
        if self.acc.is_open(key):
            self._end(key)  # a second start under an open index is a new call
        name = as_str(function.get("name"))
        self.acc.tool_call(key, id=self._call_ids.assign(as_str(call.get("id")), name), name=name)
        self._last_call = key
        self.acc.tool_call(key, delta=arguments)

    def _on_tool_call_delta(self, obj: dict[str, Any]) -> None:
        message = self._message(obj, "tool-call-delta")
        if message is None:
            return
        key = self._call_key(obj)
        if key is None or self.acc.open_kind(key) != "tool_call":
            self.malformed(f"tool-call-delta for a call that was not started: {excerpt(repr(key))}")
            return
        call = message.get("tool_calls")
        if isinstance(call, list):
            call = call[0] if call else None
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            return  # nothing to add (the SDK's models allow every level to be absent)
        arguments = self._arguments(function, "tool-call-delta")
        if arguments:
            self.acc.tool_call(key, delta=arguments)

    def _on_tool_call_end(self, obj: dict[str, Any]) -> None:
        key = self._call_key(obj)
        if key is not None:
            self._end(key)

    def _on_citation_start(self, obj: dict[str, Any]) -> None:
        message = self._message(obj, "citation-start")
        if message is None:
            return
        found = message.get("citations")
        citations = found if isinstance(found, list) else [found]
        for citation in citations:
            if isinstance(citation, dict):
                self._cite(citation)

    def _on_message_end(self, obj: dict[str, Any]) -> None:
        delta = self._member(obj, "delta", "message-end with a delta that is not an object")
        if delta is None:
            return
        reason = delta.get("finish_reason")
        if reason is not None and not isinstance(reason, str):
            self.malformed(f"message-end finish_reason is not a string: {excerpt(repr(reason))}")
            return
        error = delta.get("error")
        error = (error.strip() or None) if isinstance(error, str) else None
        self.acc.set_meta(response_id=as_str(obj.get("id")))
        self._apply_usage(delta.get("usage"))
        self.before_terminal()
        if reason is None and error is not None:
            # An error without a finish reason: the provider's failure all the same.
            self.acc.fail(error, body={"message": error})
            return
        # spec: "The end": finish_reason through specs/stop_reasons.yaml; the error
        # string is the message of an ERROR (or any other error row).
        self.acc.finish_provider(reason, details=error)

    # -- helpers ------------------------------------------------------------------

    def _content_text(self, key: Hashable, content: dict[str, Any], what: str) -> None:
        """The text or thinking fragment of a content-start or content-delta.

        The block's kind is content-start's ``type``; a delta of a block whose start was
        not seen says its kind by the field it carries (``thinking`` or ``text``).
        """
        kind = self._kinds.get(key)
        if kind is None:
            kind = "thinking" if content.get("thinking") is not None else "text"
        value = content.get(kind)
        if value is None:
            other: TextKind = "text" if kind == "thinking" else "thinking"
            if content.get(other) is None:
                return
            kind, value = other, content[other]
        if not isinstance(value, str):
            self.malformed(f"{what}: {kind!r} is not a string: {excerpt(repr(value))}")
            return
        if kind == "thinking":
            self.acc.thinking(key, value)
        else:
            self.acc.text(key, value)

    def _arguments(self, function: dict[str, Any], what: str) -> str | None:
        """A call's argument fragment as text ('' when absent); None after a malformed one."""
        arguments = function.get("arguments")
        if arguments is None:
            return ""
        if isinstance(arguments, str):
            return arguments
        if isinstance(arguments, dict):
            # An object instead of JSON text (a proxy's form): its compact JSON.
            return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
        self.malformed(f"{what}: 'arguments' is not a string: {excerpt(repr(arguments))}")
        return None

    def _cite(self, citation: dict[str, Any]) -> None:
        """File a citation under the block it annotates (spec: "Citations")."""
        kind = citation.get("type")
        wire_index = as_int(citation.get("content_index"))
        key: Hashable | None
        if kind == "PLAN":
            key = self._plan
        elif wire_index is not None:
            key = ("content", wire_index)
        else:
            key = self._last_content
        if key is not None and self.acc.is_open(key):
            self._pending.setdefault(key, []).append(citation)
            return
        # The block has ended (or never opened): the citation is kept on its own.
        where = self._ended.get(key) if key is not None else None
        self.acc.provider_block("citations", {"content_index": where, "citations": [citation]})

    def _end(self, key: Hashable) -> None:
        """Close a block, then keep the citations that fell in it after it."""
        index = self.acc.content_index(key)
        if index is not None:
            self._ended[key] = index
        self.acc.end(key)
        if key == self._plan:
            self._plan = None
        cited = self._pending.pop(key, None)
        if cited:
            where = index if index is not None else self._ended.get(key)
            self.acc.provider_block("citations", {"content_index": where, "citations": cited})

    def _close_plan(self) -> None:
        if self._plan is not None:
            self._end(self._plan)

    def before_terminal(self) -> None:
        """Close what is open, in opening order, so the terminal message holds all of it."""
        if self.acc.terminated:
            return
        for key in self.acc.open_keys():
            self._end(key)
        for key in list(self._pending):  # citations of blocks that never opened
            self.acc.provider_block(
                "citations",
                {"content_index": self._ended.get(key), "citations": self._pending.pop(key)},
            )
        if self._usage_kept:
            self.acc.provider_block("usage", dict(self._usage_kept))
            self._usage_kept = {}

    def _apply_usage(self, usage: Any) -> None:
        """spec: "Usage": ``tokens`` are the model's counts, ``cached_tokens`` a part of
        the input; ``billed_units`` (what is charged) are kept as a provider block and
        stand in for ``tokens`` only when those are absent."""
        if not isinstance(usage, dict):
            return
        tokens = usage.get("tokens")
        billed = usage.get("billed_units")
        counts = tokens if isinstance(tokens, dict) else billed if isinstance(billed, dict) else {}
        cached = as_int(usage.get("cached_tokens")) or 0
        prompt = as_int(counts.get("input_tokens"))
        output = as_int(counts.get("output_tokens"))
        self.acc.set_usage(
            input=max(0, prompt - cached) if prompt is not None else None,
            output=output,
            cache_read=cached if cached else None,
        )
        if isinstance(billed, dict):
            self._usage_kept["billed_units"] = billed

    def _message(self, obj: dict[str, Any], what: str) -> dict[str, Any] | None:
        """``delta.message`` of an event ({} when absent); None after a malformed one."""
        delta = self._member(obj, "delta", f"{what} with a delta that is not an object")
        if delta is None:
            return None
        return self._member(delta, "message", f"{what} with a delta.message that is not an object")

    def _content(self, obj: dict[str, Any], what: str) -> dict[str, Any] | None:
        message = self._message(obj, what)
        if message is None:
            return None
        return self._member(message, "content", f"{what}: delta.message.content is not an object")

    def _member(self, parent: dict[str, Any], key: str, complaint: str) -> dict[str, Any] | None:
        """An object member that may be absent ({}); None, after ending the stream in an
        error saying ``complaint``, when it is something else than an object."""
        value = parent.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.malformed(complaint)
            return None
        return value

    def _index(self, obj: dict[str, Any], default: int) -> int:
        index = as_int(obj.get("index"))
        return index if index is not None else default

    def _call_key(self, obj: dict[str, Any]) -> Hashable | None:
        index = as_int(obj.get("index"))
        return ("tool", index) if index is not None else self._last_call


_HANDLERS = {
    "message-start": CohereV2ChatNormalizer._on_message_start,
    "content-start": CohereV2ChatNormalizer._on_content_start,
    "content-delta": CohereV2ChatNormalizer._on_content_delta,
    "content-end": CohereV2ChatNormalizer._on_content_end,
    "tool-plan-delta": CohereV2ChatNormalizer._on_tool_plan_delta,
    "tool-call-start": CohereV2ChatNormalizer._on_tool_call_start,
    "tool-call-delta": CohereV2ChatNormalizer._on_tool_call_delta,
    "tool-call-end": CohereV2ChatNormalizer._on_tool_call_end,
    "citation-start": CohereV2ChatNormalizer._on_citation_start,
    "message-end": CohereV2ChatNormalizer._on_message_end,
}

Normalizer = CohereV2ChatNormalizer

__all__ = ["CohereV2ChatNormalizer", "Normalizer"]

PROTOCOL = register(
    Protocol(
        id="cohere-v2-chat",
        title="Cohere v2 chat",
        framing=SSE,
        translator=CohereV2ChatNormalizer,
        detect=Detect(
            # /v2/chat on api.cohere.com, api.cohere.ai and private deployments; not
            # /v2/chat/completions (an OpenAI-compatible path elsewhere).
            url=(r"/v2/chat(?:$|[?#])",),
            body=(rb"event:\s*message-start|\"type\"\s*:\s*\"message-start\"",),
        ),
        stop_reasons="cohere-v2-chat",
        order=70,
    )
)
