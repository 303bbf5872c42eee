"""OpenAI Chat Completions and every OpenAI-compatible server -> unified events.

One normalizer covers OpenAI, Mistral, DeepSeek, Groq, OpenRouter, vLLM, Ollama ``/v1``,
llama.cpp, z.ai, Together, the HF router, Snowflake Cortex and Crusoe: they all send
``data: {chat.completion.chunk}`` SSE events, and differ only in optional fields, which is
why every deviation below is handled by looking at what a chunk holds, never by asking
which server sent it. specs/protocols/openai-completions.md is the full mapping; the
facts cited as "PF x.y" are /work/shared/research/provider-facts.md sections, "case N" its
section 7 conformance cases, and "bug N" ecosystem.md section 6.

Why the end is decided at ``[DONE]`` (or EOF) and not at ``finish_reason``: the corpus has
chunks after the finish reason that still matter (the usage-only chunk, OpenAI's
``moderation`` chunk, OpenRouter's usage chunk and its in-band error after
``finish_reason: "length"``), so the finish reason is remembered and the message is
finished only when the stream says it is over.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from stream_harness.contract.events import ErrorInfo
from stream_harness.providers.base import SSENormalizer, excerpt
from stream_harness.providers.coerce import as_dict, as_int, as_str, dicts
from stream_harness.providers.registry import Detect, Protocol, register
from stream_harness.wire import SSEEvent
from stream_harness.wire.framing import SSE, FrameDecoder

# Vendor keys for the accumulator. Text-like blocks reuse their key after they close
# (the accumulator opens a new block when the key is no longer open); tool calls get one
# key per call, because one wire ``index`` can carry several calls (bug 4).
TEXT: Final = "text"
THINKING: Final = "thinking"
REFUSAL: Final = "refusal"
_TEXT_LIKE: Final = (TEXT, THINKING, REFUSAL)

# First non-empty field wins, so that a server sending the same text under two names
# (chutes.ai sends reasoning_content and reasoning) gives one thinking stream (PF 2.7,
# case 16). Order as in pi (PF 2.7): DeepSeek/llama.cpp/z.ai, then vLLM/Ollama/Groq/
# OpenRouter, then the rarer reasoning_text.
_REASONING_FIELDS: Final = ("reasoning_content", "reasoning", "reasoning_text")

# Every delta field _reasoning reads: a delta with none of them skips the call.
_REASONING_KEYS: Final = frozenset((*_REASONING_FIELDS, "reasoning_details"))

# The message of the error that ends a stream cut before any finish reason (case 6, 62).
NO_FINISH_REASON: Final = "stream ended without finish_reason"


def _arguments_text(value: Any) -> str:
    """Tool arguments as wire text; Mistral may send the object itself (PF 2.6)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return ""


def _error_message(error: Any, fallback: str) -> str:
    if isinstance(error, str) and error:
        return error
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message:
            return message
        return f"{fallback}: {excerpt(json.dumps(error, ensure_ascii=False), 200)}"
    return fallback


@dataclass(slots=True)
class _Call:
    """What the normalizer must remember about one tool call to route later deltas."""

    key: tuple[str, int]
    index: int | None
    id: str | None = None
    name: str | None = None


@dataclass(slots=True)
class _ExtraChoice:
    """A choice other than index 0 (``n > 1``), kept whole as a provider block."""

    index: int
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    tool_calls: dict[int, dict[str, str]] = field(default_factory=dict)
    finish_reason: str | None = None

    def as_data(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "content": "".join(self.content),
            "reasoning": "".join(self.reasoning),
            "refusal": "".join(self.refusal),
            "tool_calls": [self.tool_calls[i] for i in sorted(self.tool_calls)],
            "finish_reason": self.finish_reason,
        }


class OpenAICompletionsNormalizer(SSENormalizer):
    """Chat Completions chunks -> accumulator calls; choice 0 is the message."""

    protocol = "openai-completions"

    def __init__(self, frames: FrameDecoder | None = None) -> None:
        super().__init__(frames)
        self._finish_reason: str | None = None
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self._by_id: dict[str, _Call] = {}
        self._legacy: _Call | None = None
        self._refusal: list[str] = []
        self._encrypted = 0
        self._extra: dict[int, _ExtraChoice] = {}

    # -- SSE events --------------------------------------------------------------

    def on_event(self, event: SSEEvent) -> None:
        data = event.data.strip()
        if not data:
            return
        if data == "[DONE]":
            self._finish()
            return
        chunk = self.load_json(event)
        if self.acc.terminated:
            return
        if not isinstance(chunk, dict):
            self.acc.fail(
                f"SSE event #{self.events_seen} is not a JSON object: {excerpt(event.data)}"
            )
            return
        if event.event == "error":
            # Not OpenAI's own shape, but some gateways name the event; its data is the error.
            self._in_band_error(chunk.get("error", chunk), chunk)
            return
        self._chunk(chunk)

    def on_eof(self) -> None:
        # Many compatibles end without [DONE] (PF 2.7): a finish reason is enough to know
        # the message is complete. Without one the stream was cut (case 6, 62).
        if self._finish_reason is not None:
            self._finish()
        else:
            self.acc.fail(NO_FINISH_REASON)

    # -- one chunk ---------------------------------------------------------------

    def _chunk(self, chunk: dict[str, Any]) -> None:
        # Speed: this runs once per chunk, so optional fields are looked up before any
        # call is made for them (with the same in _choice, _delta and _text_like: 29% of
        # a text stream, bench_normalizers.py).
        acc = self.acc
        if not acc.model or not acc.response_id:
            # Model and id from the first chunk that has them: Groq compound sends a new
            # id on every chunk and "stub" on the last; Azure and Snowflake send "" at first.
            acc.set_meta(
                model=None if acc.model else as_str(chunk.get("model")),
                response_id=None if acc.response_id else as_str(chunk.get("id")),
            )
        if not acc.started:
            acc.start()
        if chunk.get("object") == "error":  # vLLM in-band error (PF 2.2, case 51)
            self._in_band_error(chunk, chunk)
            return
        # Groq's own usage first, so that a top-level copy in the same chunk wins (PF 2.7).
        x_groq = chunk.get("x_groq")
        if x_groq is not None:
            self._usage(as_dict(x_groq).get("usage"))
        usage = chunk.get("usage")
        if usage is not None:
            self._usage(usage)
        choices = chunk.get("choices")
        if isinstance(choices, list):  # None or [] on usage-only chunks (case 7, bugs 12-14)
            for choice in choices:
                if isinstance(choice, dict):
                    self._choice(choice)
                    if self.acc.terminated:
                        return
        if chunk.get("error"):
            # OpenAI / OpenRouter in-band error after HTTP 200 (PF 2.2, 2.7; case 51).
            # Truthiness as in openai-python's Stream: `"error": null` or `{}` is no error.
            self._in_band_error(chunk["error"], chunk)

    def _choice(self, choice: dict[str, Any]) -> None:
        index = choice.get("index")
        if index != 0:  # (0, 0.0 and False are choice 0 for _int too)
            index = as_int(index)
            if index is not None and index != 0:
                self._extra_choice(index, choice)
                return
        delta = choice.get("delta")
        if isinstance(delta, dict):  # null on some final chunks (bug 19)
            self._delta(delta)
        usage = choice.get("usage")
        if usage is not None:
            self._usage(usage)  # Moonshot puts usage here (PF 2.7)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            # The last non-null value wins (the SDK does the same; bug 16 servers repeat it).
            self._finish_reason = reason
        if choice.get("error"):
            # OpenRouter: finish_reason "error" with choices[0].error{code, message} (case 50).
            self._in_band_error(choice["error"], choice)

    def _delta(self, delta: dict[str, Any]) -> None:
        if not _REASONING_KEYS.isdisjoint(delta):
            self._reasoning(delta)
        content = delta.get("content")
        if isinstance(content, str):
            self._text_like(TEXT, content)
        elif isinstance(content, list):
            self._content_parts(content)
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            self._refusal.append(refusal)
            self._text_like(REFUSAL, refusal)
        tool_calls = delta.get("tool_calls")
        if tool_calls is not None:
            for entry in dicts(tool_calls):
                self._tool_call(entry)  # in order, also two entries for one index (bug 6)
        function_call = delta.get("function_call")
        if isinstance(function_call, dict):
            self._legacy_function_call(function_call)
        details = delta.get("reasoning_details")
        if details is not None:
            for detail in dicts(details):
                if detail.get("type") == "reasoning.encrypted":
                    self._encrypted_detail(detail)
        annotations = delta.get("annotations")
        if annotations is not None:  # OpenRouter/OpenAI url_citation
            for annotation in dicts(annotations):
                self.acc.provider_block("openai.annotation", annotation)
        executed = delta.get("executed_tools")
        if executed is not None:  # Groq compound's server-side tools
            for tool in dicts(executed):
                self.acc.provider_block("groq.executed_tool", tool)

    # -- text, thinking, refusal ---------------------------------------------------

    def _text_like(self, key: str, delta: str) -> None:
        """Append to one of the text-like blocks, closing the others first.

        An empty delta changes nothing: Ollama sends ``content: ""`` on every thinking
        chunk, and that must neither open a text block nor end the thinking (case 17).
        """
        if not delta:
            return
        if not self.acc.is_open(key):
            # Only this method opens these blocks, and it closes the others first: when
            # ``key`` is open, they are closed already (the common case skips the loop).
            for other in _TEXT_LIKE:
                if other != key and self.acc.is_open(other):
                    self.acc.end(other)
        if key == THINKING:
            self.acc.thinking(key, delta)
        else:
            self.acc.text(key, delta)

    def _reasoning(self, delta: dict[str, Any]) -> None:
        text = None
        for name in _REASONING_FIELDS:
            text = as_str(delta.get(name))
            if text is not None:
                break
        if text is not None:
            self._text_like(THINKING, text)
        for detail in dicts(delta.get("reasoning_details")):
            kind = detail.get("type")
            if kind in ("reasoning.text", "reasoning.summary"):
                # OpenRouter repeats `reasoning` as a reasoning.text detail: the plain
                # field wins when both are present. Snowflake sends only the detail.
                piece = as_str(detail.get("text" if kind == "reasoning.text" else "summary"))
                if text is None and piece is not None:
                    self._text_like(THINKING, piece)
                signature = as_str(detail.get("signature"))
                if signature is not None:
                    if self.acc.open_kind(THINKING) == "thinking":
                        self.acc.signature(THINKING, signature)
                    else:
                        self.acc.provider_block("openrouter.reasoning_detail", detail)
            elif kind != "reasoning.encrypted":
                self.acc.provider_block("openrouter.reasoning_detail", detail)

    def _content_parts(self, parts: list[Any]) -> None:
        """Mistral's ``content`` as a list of typed chunks (PF 2.6, case 48).

        It lives here, not in the mistral-chat translator only, because Mistral's bytes
        also reach this protocol under OpenAI-compatible URLs (a proxy, an OpenAI client
        pointed at api.mistral.ai and recorded through a gateway) and a URL-less body
        whose first 4 KiB holds no thinking chunk: the same bytes must give the same
        events whichever of the two protocols detection picked.
        """
        for part in parts:
            if isinstance(part, str):
                self._text_like(TEXT, part)
                continue
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                text = part.get("text")
                if isinstance(text, str):
                    self._text_like(TEXT, text)
            elif kind == "thinking":
                self._thinking_part(part)
            else:  # reference ids, image_url, and whatever comes next
                self.acc.provider_block(
                    f"mistral.{kind}" if isinstance(kind, str) else "mistral.part", part
                )

    def _thinking_part(self, part: dict[str, Any]) -> None:
        """``{type: thinking, thinking: [text | reference | tool_reference chunks], signature?}``.

        Text pieces are the thinking's text (an empty list, which magistral sends as the
        thinking's last chunk, adds nothing and ends nothing); other pieces are kept as
        provider blocks. ``signature`` (mistralai SDK 3.x ``ThinkChunk``: "to replay some
        reasoning blocks across turns") is the open thinking block's replay token.
        """
        thinking = part.get("thinking")
        pieces = thinking if isinstance(thinking, list) else [thinking]
        for piece in pieces:
            if isinstance(piece, str):
                self._text_like(THINKING, piece)
            elif isinstance(piece, dict):
                text = piece.get("text")
                if isinstance(text, str):
                    self._text_like(THINKING, text)
                elif piece.get("type") is not None:
                    kind = piece.get("type")
                    name = f"mistral.{kind}" if isinstance(kind, str) else "mistral.part"
                    self.acc.provider_block(name, piece)
        signature = as_str(part.get("signature"))
        if signature is not None:
            if not self.acc.is_open(THINKING):  # a signature-only chunk: a block of its own
                for other in _TEXT_LIKE:
                    self.acc.end(other)
                self.acc.open_thinking(THINKING)
            self.acc.signature(THINKING, signature)

    # -- tool calls ----------------------------------------------------------------

    def _tool_call(self, entry: dict[str, Any]) -> None:
        function = entry.get("function")
        if not isinstance(function, dict):
            function = as_dict(entry.get("custom"))  # OAI-PY custom tools: {name, input}
            arguments = _arguments_text(function.get("input"))
        else:
            arguments = _arguments_text(function.get("arguments"))
        raw_id = as_str(entry.get("id"))
        call_id = None if raw_id == "null" else raw_id  # Mistral's literal "null" (case 49)
        name = as_str(function.get("name"))
        call = self._resolve(as_int(entry.get("index")), call_id, name)
        self._feed_call(call, call_id, name, arguments)

    def _resolve(self, index: int | None, call_id: str | None, name: str | None) -> _Call:
        """Which call a delta continues; a new one when it continues none.

        By ``index`` first (case 8, 9), unless the call there has another id and the
        fragment's id is a known call's, which it continues (issue 14: a known id never
        starts a second call); when ``index`` is missing (Mistral) by id, then the
        latest call (the Vercel AI tracker's order, PF 2.2). An id or a name different from
        the call's own starts a new call: Ollama sends every parallel call at index 0
        with its own id (bug 4), and a name is never sent in pieces (the SDKs assign it,
        pi and VAI alike), so a second name is a second call (bug 3) while the same name
        repeated on every delta is not appended (bug 7).
        """
        call: _Call | None
        if index is not None:
            call = self._by_index.get(index)
        elif call_id is not None:
            call = self._by_id.get(call_id)
        else:
            call = self._calls[-1] if self._calls else None
        if call is not None and not self._conflicts(call, call_id, name):
            return call
        known = self._by_id.get(call_id) if call_id is not None else None
        if known is not None and known is not call and not self._conflicts(known, call_id, name):
            # An earlier call's id after a later call took its index (or where every call
            # comes at index 0, Ollama): the id names its own call, which continues; a new
            # call would repeat that id (C10) and split its arguments.
            self.acc.warn(f"tool-call fragment for {call_id!r} at another call's index")
            return known
        return self._new_call(index)

    def _new_call(self, index: int | None) -> _Call:
        call = _Call(key=("tool_call", len(self._calls)), index=index)
        self._calls.append(call)
        if index is not None:
            self._by_index[index] = call
        for other in _TEXT_LIKE:  # a tool call ends the text or thinking before it
            self.acc.end(other)
        return call

    @staticmethod
    def _conflicts(call: _Call, call_id: str | None, name: str | None) -> bool:
        return bool(
            (call_id is not None and call.id is not None and call_id != call.id)
            or (name is not None and call.name is not None and name != call.name)
        )

    def _feed_call(
        self, call: _Call, call_id: str | None, name: str | None, arguments: str
    ) -> None:
        # An empty fragment adds nothing: the trailing `arguments: ""` chunk vLLM sends
        # with the finish reason continues the call and creates no second one (bug 9).
        self.acc.tool_call(call.key, id=call_id, name=name, delta=arguments)
        if name is not None and call.name is None:
            call.name = name
        if call_id is not None and call.id is None:
            call.id = call_id
            self._by_id.setdefault(call_id, call)

    def _legacy_function_call(self, function_call: dict[str, Any]) -> None:
        """The deprecated single ``function_call`` delta is one more tool call."""
        name = as_str(function_call.get("name"))
        if self._legacy is None or self._conflicts(self._legacy, None, name):
            self._legacy = _Call(key=("tool_call", len(self._calls)), index=None)
            self._calls.append(self._legacy)
            for other in _TEXT_LIKE:
                self.acc.end(other)
        self._feed_call(self._legacy, None, name, _arguments_text(function_call.get("arguments")))

    def _encrypted_detail(self, detail: dict[str, Any]) -> None:
        """OpenRouter encrypted reasoning: the matching tool call's signature (case 18).

        An entry whose ``id`` names a tool call already received is that call's replay
        token (pi matches the same way, PF 2.7; tool calls are read before the details of
        the same delta). Any other entry (no id, or OpenAI's ``rs_...`` reasoning ids, as
        in the corpus) is reasoning sent encrypted only, which is what a redacted
        thinking block holds, placed where it arrived.
        """
        data = as_str(detail.get("data"))
        if data is None:
            self.acc.provider_block("openrouter.reasoning_detail", detail)
            return
        detail_id = as_str(detail.get("id"))
        call = self._by_id.get(detail_id) if detail_id is not None else None
        if call is not None and self.acc.is_open(call.key):
            self.acc.signature(call.key, data, replace=True)
            return
        for other in _TEXT_LIKE:
            self.acc.end(other)
        self._encrypted += 1
        self.acc.redacted_thinking(("encrypted", self._encrypted), data)

    # -- usage -----------------------------------------------------------------------

    def _usage(self, usage: Any) -> None:
        """Usage arithmetic (specs/protocols/openai-completions.md, "Usage").

        ``prompt_tokens`` includes the cached tokens (OpenAI, and DeepSeek's flat
        ``prompt_cache_hit_tokens``, PF 2.7), so input = prompt - cache read - cache write;
        ``completion_tokens`` already includes reasoning tokens (OpenAI; in the corpus
        DeepSeek 198 of 212 and z.ai 561 of 564), so it is the output as sent.
        """
        if not isinstance(usage, dict):
            return
        prompt = as_int(usage.get("prompt_tokens"))
        completion = as_int(usage.get("completion_tokens"))
        total = as_int(usage.get("total_tokens"))
        if prompt is None and completion is None and total is None:
            return
        details = as_dict(usage.get("prompt_tokens_details"))
        cache_read = as_int(details.get("cached_tokens"))
        if cache_read is None:
            cache_read = as_int(usage.get("prompt_cache_hit_tokens"))  # DeepSeek
        if cache_read is None:
            cache_read = as_int(usage.get("cached_tokens"))  # Together
        cache_write = as_int(details.get("cache_write_tokens"))  # OpenRouter
        read, write = max(0, cache_read or 0), max(0, cache_write or 0)
        self.acc.set_usage(
            input=None if prompt is None else max(0, prompt - read - write),
            output=completion,
            cache_read=read,
            cache_write=write,
            total=total,
        )

    # -- errors and the end ----------------------------------------------------------

    def _in_band_error(self, error: Any, body: dict[str, Any]) -> None:
        """An error after HTTP 200: the stream ends here, keeping what came before."""
        message = _error_message(error, "in-band error")
        # The finish reason of this choice (OpenRouter "error") goes with the error so
        # that the classification and the message record what the wire said.
        reason = as_str(body.get("finish_reason"))
        if reason is not None:
            self._finish_reason = reason
        self.acc.provider_stop_reason = self._finish_reason
        self.acc.fail(message, body={"error": error})

    def _extra_choice(self, index: int, choice: dict[str, Any]) -> None:
        """n > 1: choice 0 is the message; the others are kept verbatim-in-spirit."""
        extra = self._extra.setdefault(index, _ExtraChoice(index))
        delta = as_dict(choice.get("delta"))
        if isinstance(delta.get("content"), str):
            extra.content.append(delta["content"])
        for name in _REASONING_FIELDS:
            if as_str(delta.get(name)) is not None:
                extra.reasoning.append(delta[name])
                break
        if isinstance(delta.get("refusal"), str):
            extra.refusal.append(delta["refusal"])
        for entry in dicts(delta.get("tool_calls")):
            slot = as_int(entry.get("index"))
            slot = len(extra.tool_calls) if slot is None else slot
            call = extra.tool_calls.setdefault(slot, {"id": "", "name": "", "arguments": ""})
            function = as_dict(entry.get("function"))
            call["id"] = call["id"] or (as_str(entry.get("id")) or "")
            call["name"] = call["name"] or (as_str(function.get("name")) or "")
            call["arguments"] += _arguments_text(function.get("arguments"))
        reason = as_str(choice.get("finish_reason"))
        if reason is not None:
            extra.finish_reason = reason

    def _finish(self) -> None:
        """[DONE], or EOF after a finish reason: close everything and end the message.

        Tool calls close here, all of them, in wire-index order: a call's arguments can
        still grow until the choice ends (a parseable prefix is not the end, case 12),
        and servers send deltas after the finish reason (bug 18). [DONE] without any
        finish reason is a normal end: Snowflake Cortex never sends one (corpus), and
        specs/stop_reasons.yaml maps the missing value to stop.
        """
        open_calls = [c for c in self._calls if self.acc.is_open(c.key)]
        open_calls.sort(
            key=lambda c: (c.index if c.index is not None else len(self._calls), c.key[1])
        )
        for call in open_calls:
            self.acc.end(call.key)
        for index in sorted(self._extra):
            self.acc.provider_block("openai.choice", self._extra[index].as_data())
        if self._refusal:
            # The refusal text is the message's content and the error's message; the
            # finish reason (usually "stop") stays as the provider's.
            self.acc.finish(
                "error",
                provider_stop_reason=self._finish_reason,
                error_message="".join(self._refusal),
                error=ErrorInfo(kind="fatal", provider_type="refusal", retryable=False),
            )
            return
        self.acc.finish_provider(self._finish_reason)


Normalizer = OpenAICompletionsNormalizer

PROTOCOL = register(
    Protocol(
        id="openai-completions",
        title="OpenAI Chat Completions (and compatible servers)",
        framing=SSE,
        translator=OpenAICompletionsNormalizer,
        detect=Detect(
            url=(r"/chat/completions(?:$|[?#/])",),
            body=(rb"\"object\"\s*:\s*\"chat\.completion\.chunk\"",),
        ),
        stop_reasons="openai-completions",
        order=20,
    )
)
