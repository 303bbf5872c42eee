"""Amazon Bedrock ``InvokeModelWithResponseStream`` (``POST /model/{id}/invoke-with-response-stream``).

The wire (AWS API reference ``InvokeModelWithResponseStream``, ``ResponseStream``,
``PayloadPart``): AWS event-stream frames; each ``chunk`` event carries
``{"bytes": <base64>, "p": <padding>}`` whose bytes are one JSON chunk written by the
*model's own* API, and exception frames (``throttlingException``, ``validationException``,
``modelStreamErrorException``, ``modelTimeoutException``, ``internalServerException``,
``serviceUnavailableException``) end the stream. The registered framing
(:class:`stream_harness.wire.payloadpart.PayloadPartDecoder`) unwraps the chunks, so this
translator reads model JSON, exception frames, and framing errors.

Which model family wrote the chunks shows only in the URL's model id, which a normalizer
never sees, so the family is told from the first chunk's keys (spec: "Families"):

========================  =============================================  ==========================
family                    first chunk                                    translated by
========================  =============================================  ==========================
anthropic-messages        ``"type"``: ``message_start`` ...               the Anthropic translator
nova                      ``messageStart`` / ``contentBlockDelta`` ...    the ConverseStream translator
claude-text-completions   ``completion``                                 a text family
titan                     ``outputText``                                 a text family
llama                     ``generation``                                 a text family
mistral                   ``outputs``                                    a text family
cohere-command-r          ``event_type``                                 the Cohere chat family
cohere-command            ``text`` / ``is_finished`` / ``generations``   a text family
========================  =============================================  ==========================

The Anthropic and Nova chunks *are* those protocols' events, so their translators are
reused as they are, sharing this normalizer's accumulator: Anthropic events arrive as
:class:`~stream_harness.wire.JSONLine` values named by their ``"type"`` (what any non-SSE framing
hands that translator), Nova's ``{"<eventName>": payload}`` objects as the event-stream
frames ConverseStream would have sent. Every chunk may carry
``amazon-bedrock-invocationMetrics`` (Bedrock's own token counts and latencies): kept as a
provider block, and its counts fill the usage only where the family reports none (the
family's own numbers are what its SDK shows; they differ, e.g. Anthropic's
``output_tokens`` vs ``outputTokenCount`` in the corpus).

The mapping, the keys of every family and the decisions are in
specs/protocols/bedrock-invoke-stream.md ("spec:" below).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from stream_harness.providers.accumulator import Accumulator
from stream_harness.providers.anthropic_messages import AnthropicMessagesNormalizer
from stream_harness.providers.base import CallIds, JSONFrameNormalizer, excerpt
from stream_harness.providers.bedrock_converse_stream import (
    BedrockConverseStreamNormalizer,
    frame_error,
)
from stream_harness.providers.coerce import as_str, is_int
from stream_harness.providers.registry import Detect, Protocol, register
from stream_harness.wire import EventStreamMessage, JSONLine
from stream_harness.wire.framing import EVENTSTREAM_CHUNKS, FrameDecoder
from stream_harness.wire.payloadpart import BadChunk

PROTOCOL_ID: Final = "bedrock-invoke-stream"
METRICS: Final = "amazon-bedrock-invocationMetrics"

# amazon-bedrock-invocationMetrics -> Accumulator.set_usage keywords (spec: "Usage").
_METRIC_FIELDS: Final = (
    ("input", "inputTokenCount"),
    ("output", "outputTokenCount"),
    ("cache_read", "cacheReadInputTokenCount"),
    ("cache_write", "cacheWriteInputTokenCount"),
)

_ANTHROPIC_EVENTS: Final = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
        "error",
    }
)
# Nova's chunks: one ConverseStream event each, named by its only key besides the metrics.
_CONVERSE_EVENTS: Final = (
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
)


class _NoFrames:
    """The decoder handed to a reused translator: it is given frames, never bytes."""

    def feed(self, chunk: bytes) -> list[Any]:
        return []

    def close(self) -> list[Any]:
        return []


# -- the families --------------------------------------------------------------------


class _Family(ABC):
    """One model family's chunks -> accumulator calls."""

    name: str
    acc: Accumulator
    usage_seen = False

    @abstractmethod
    def chunk(self, line: JSONLine) -> None:
        """Translate one decoded chunk."""

    def carries_usage(self, value: dict[str, Any]) -> bool:
        """Whether this chunk has the family's own token counts (then metrics don't count)."""
        return False

    def before_terminal(self) -> None:
        """Hand the accumulator whatever the family still holds, before an error."""
        return

    def fail(
        self, message: str, *, headers: dict[str, str] | None = None, body: Any = None
    ) -> None:
        """End in an error, after handing over whatever the family still holds."""
        self.before_terminal()
        self.acc.fail(message, headers=headers, body=body)

    def exception(self, frame: EventStreamMessage) -> None:
        message, headers, body = frame_error(frame)
        self.fail(message, headers=headers, body=body)

    @abstractmethod
    def eof(self) -> None:
        """The body ended (the family decides whether its end marker came)."""


class _Borrowed(_Family):
    """A family whose chunks are another protocol's events: that protocol's translator
    reads them (``translator``), writing to this stream's accumulator, so its rules for
    errors, framing faults and the end of the body are the family's too."""

    translator: type[AnthropicMessagesNormalizer] | type[BedrockConverseStreamNormalizer]
    inner: AnthropicMessagesNormalizer | BedrockConverseStreamNormalizer

    def __init__(self, acc: Accumulator) -> None:
        self.acc = acc
        self.inner = self.translator(_NoFrames())
        self.inner.acc = acc

    def before_terminal(self) -> None:
        self.inner.before_terminal()

    def eof(self) -> None:
        self.inner.on_eof()


class _Anthropic(_Borrowed):
    name = "anthropic-messages"
    translator = AnthropicMessagesNormalizer
    inner: AnthropicMessagesNormalizer

    def chunk(self, line: JSONLine) -> None:
        self.inner.dispatch([line])

    def carries_usage(self, value: dict[str, Any]) -> bool:
        message = value.get("message")
        return isinstance(value.get("usage"), dict) or (
            isinstance(message, dict) and isinstance(message.get("usage"), dict)
        )


class _Nova(_Borrowed):
    name = "nova"
    translator = BedrockConverseStreamNormalizer
    inner: BedrockConverseStreamNormalizer

    def chunk(self, line: JSONLine) -> None:
        value = line.value
        assert isinstance(value, dict)
        for name in value:
            if name not in _CONVERSE_EVENTS:
                continue  # the metrics (handled before), and whatever Nova adds
            payload = json.dumps(value[name], ensure_ascii=False).encode()
            headers: dict[str, str | int | bool | bytes] = {
                ":event-type": name,
                ":content-type": "application/json",
                ":message-type": "event",
            }
            self.inner.dispatch([EventStreamMessage(headers, payload)])
            if name == "metadata":
                self._cache_usage(value[name])
            if self.inner.acc.terminated:
                return

    def _cache_usage(self, metadata: Any) -> None:
        # Nova's InvokeModel metadata names the cache counters like the invocation
        # metrics (cacheReadInputTokenCount), not like Converse (cacheReadInputTokens).
        usage = metadata.get("usage") if isinstance(metadata, dict) else None
        if not isinstance(usage, dict):
            return
        counts = {
            name: usage[key]
            for name, key in (
                ("cache_read", "cacheReadInputTokenCount"),
                ("cache_write", "cacheWriteInputTokenCount"),
            )
            if is_int(usage.get(key))
        }
        if counts:
            self.inner.acc.set_usage(**counts)

    def carries_usage(self, value: dict[str, Any]) -> bool:
        metadata = value.get("metadata")
        return isinstance(metadata, dict) and isinstance(metadata.get("usage"), dict)

    def exception(self, frame: EventStreamMessage) -> None:
        self.inner.dispatch([frame])


Getter = Callable[[dict[str, Any]], Any]


def _key(name: str) -> Getter:
    return lambda value: value.get(name)


def _first_output(name: str) -> Getter:
    def get(value: dict[str, Any]) -> Any:
        outputs = value.get("outputs")
        first = outputs[0] if isinstance(outputs, list) and outputs else None
        return first.get(name) if isinstance(first, dict) else None

    return get


def _cohere_generation(value: dict[str, Any]) -> dict[str, Any] | None:
    """``generations[0]`` of a chunk without stream markers (the response shape)."""
    if "is_finished" in value or "text" in value:
        return None
    generations = value.get("generations")
    first = generations[0] if isinstance(generations, list) and generations else None
    return first if isinstance(first, dict) else None


def _cohere_text(value: dict[str, Any]) -> Any:
    # A stream chunk has its text at the top; the final chunk keeps the whole response
    # (generations included) under "response", which is not read (it would repeat the text).
    generation = _cohere_generation(value)
    return generation.get("text") if generation is not None else value.get("text")


def _cohere_stop(value: dict[str, Any]) -> Any:
    # finish_reason counts on the chunk that says is_finished (spec: "Cohere Command").
    generation = _cohere_generation(value)
    if generation is not None:
        return generation.get("finish_reason")
    return value.get("finish_reason") if value.get("is_finished") is True else None


@dataclass(frozen=True, slots=True)
class _TextShape:
    """Where a one-text-block family keeps its text, stop reason and token counts."""

    name: str
    stop_field: str
    text: Getter
    stop: Getter
    usage: tuple[tuple[str, str], ...] = ()
    # A field kept as a provider block when present and not null (Claude's matched stop).
    extra: str | None = None


_TITAN = _TextShape(
    "titan",
    "completionReason",
    _key("outputText"),
    _key("completionReason"),
    usage=(("input", "inputTextTokenCount"), ("output", "totalOutputTextTokenCount")),
)
_LLAMA = _TextShape(
    "llama",
    "stop_reason",
    _key("generation"),
    _key("stop_reason"),
    usage=(("input", "prompt_token_count"), ("output", "generation_token_count")),
)
_CLAUDE_TEXT = _TextShape(
    "claude-text-completions", "stop_reason", _key("completion"), _key("stop_reason"), extra="stop"
)
_MISTRAL = _TextShape(
    "mistral", "outputs[0].stop_reason", _first_output("text"), _first_output("stop_reason")
)
_COHERE = _TextShape("cohere-command", "finish_reason", _cohere_text, _cohere_stop)


class _Text(_Family):
    """Families whose chunks hold a piece of one text, and a stop reason at the end."""

    def __init__(self, acc: Accumulator, shape: _TextShape) -> None:
        self.acc = acc
        self.shape = shape
        self.name = shape.name
        self.chunks = 0
        self.stopped = False
        self.stop_reason: str | None = None
        self.extra: Any = None

    def chunk(self, line: JSONLine) -> None:
        value = line.value
        assert isinstance(value, dict)
        self.chunks += 1
        shape, acc = self.shape, self.acc
        acc.start()
        text = shape.text(value)
        if text is not None and not isinstance(text, str):
            self.fail(f"malformed {shape.name} chunk #{self.chunks}: the text is not a string")
            return
        if text:
            acc.text(0, text)
        counts = {name: value[key] for name, key in shape.usage if is_int(value.get(key))}
        if counts:
            self.usage_seen = True
            acc.set_usage(**counts)
        if shape.extra is not None and value.get(shape.extra) is not None:
            self.extra = value[shape.extra]
        stop = shape.stop(value)
        if stop is None:
            return
        if not isinstance(stop, str):
            self.fail(
                f"malformed {shape.name} chunk #{self.chunks}: {shape.stop_field} is not a "
                f"string: {excerpt(repr(stop))}"
            )
            return
        # The end marker of these families; text after it is still taken (nothing says
        # it cannot come), and the stream ends at EOF so that an exception frame after
        # it still counts (spec: "Text families").
        self.stopped = True
        self.stop_reason = stop
        acc.set_provider_stop_reason(stop)

    def carries_usage(self, value: dict[str, Any]) -> bool:
        return any(is_int(value.get(key)) for _, key in self.shape.usage)

    def _flush(self) -> None:
        if self.extra is not None and not self.acc.terminated:
            self.acc.provider_block(
                self.shape.extra or "extra", {self.shape.extra or "extra": self.extra}
            )
            self.extra = None

    def before_terminal(self) -> None:
        self._flush()

    def eof(self) -> None:
        if not self.stopped:
            self.fail(f"stream ended without a {self.shape.stop_field} ({self.shape.name})")
            return
        self._flush()
        self.acc.finish_provider(self.stop_reason)


class _CohereChat(_Family):
    """Cohere Command R / R+: the Cohere chat stream events, named by ``event_type``."""

    name = "cohere-command-r"

    def __init__(self, acc: Accumulator) -> None:
        self.acc = acc
        self.ids = CallIds()
        self.tools = 0
        self.ended = False
        self.stop_reason: str | None = None

    def chunk(self, line: JSONLine) -> None:
        value = line.value
        assert isinstance(value, dict)
        acc = self.acc
        kind = value.get("event_type")
        if kind == "stream-start":
            acc.start(response_id=as_str(value.get("generation_id")))
        elif kind == "text-generation":
            text = value.get("text")
            if not isinstance(text, str):
                self.fail("malformed cohere-command-r text-generation: 'text' is not a string")
                return
            acc.text("text", text)
        elif kind == "tool-calls-generation":
            # The calls arrive whole here (tool-calls-chunk only previews them).
            calls = value.get("tool_calls")
            if not isinstance(calls, list):
                self.fail("malformed cohere-command-r tool-calls-generation: no tool_calls list")
                return
            acc.end("text")
            for call in calls:
                if not isinstance(call, dict):
                    self.fail("malformed cohere-command-r tool call: not an object")
                    return
                name = as_str(call.get("name"))
                arguments = call.get("parameters")
                if not isinstance(arguments, dict):
                    arguments = {}
                key = ("tool", self.tools)
                self.tools += 1
                # Cohere's v1 calls have no id: a synthetic one per call (CallIds).
                acc.whole_tool_call(
                    key, id=self.ids.assign(None, name), name=name, arguments=arguments
                )
                acc.end(key)
        elif kind == "stream-end":
            reason = value.get("finish_reason")
            if reason is not None and not isinstance(reason, str):
                self.fail("malformed cohere-command-r stream-end: finish_reason is not a string")
                return
            self.ended = True
            self.stop_reason = reason
            acc.set_provider_stop_reason(reason)
            response = value.get("response")
            meta = response.get("meta") if isinstance(response, dict) else None
            billed = meta.get("billed_units") if isinstance(meta, dict) else None
            if isinstance(billed, dict):
                counts = {
                    name: billed[key]
                    for name, key in (("input", "input_tokens"), ("output", "output_tokens"))
                    if is_int(billed.get(key))
                }
                if counts:
                    self.usage_seen = True
                    acc.set_usage(**counts)
        # tool-calls-chunk, citation-generation, search-queries-generation and
        # search-results are passed over (spec: "Cohere Command R").

    def eof(self) -> None:
        if not self.ended:
            self.fail("stream ended without stream-end (cohere-command-r)")
            return
        self.acc.finish_provider(self.stop_reason)


def family_of(value: Any) -> str | None:
    """The model family a decoded chunk belongs to, from its keys (spec: "Families")."""
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if isinstance(kind, str) and kind in _ANTHROPIC_EVENTS:
        return "anthropic-messages"
    if any(name in value for name in _CONVERSE_EVENTS):
        return "nova"
    if "completion" in value:
        return "claude-text-completions"
    if "outputText" in value:
        return "titan"
    if "generation" in value:
        return "llama"
    if "event_type" in value:
        return "cohere-command-r"
    if "outputs" in value:
        return "mistral"
    if "is_finished" in value or "text" in value or "generations" in value:
        return "cohere-command"
    return None


_TEXT_SHAPES: Final = {s.name: s for s in (_TITAN, _LLAMA, _CLAUDE_TEXT, _MISTRAL, _COHERE)}


def _make_family(name: str, acc: Accumulator) -> _Family:
    if name == "anthropic-messages":
        return _Anthropic(acc)
    if name == "nova":
        return _Nova(acc)
    if name == "cohere-command-r":
        return _CohereChat(acc)
    return _Text(acc, _TEXT_SHAPES[name])


# -- the normalizer -------------------------------------------------------------------


class BedrockInvokeStreamNormalizer(JSONFrameNormalizer):
    """Chunks arrive as JSON values (:meth:`on_value`), exception frames and bad chunks as
    frames (:meth:`on_frame`)."""

    protocol = PROTOCOL_ID
    frame_noun = "chunk"

    def __init__(self, frames: FrameDecoder | None = None) -> None:
        super().__init__(frames)
        self.family: _Family | None = None

    def on_frame(self, frame: EventStreamMessage | BadChunk) -> None:
        if isinstance(frame, BadChunk):
            self.fail(f"malformed chunk #{self.frames_seen + 1}: {frame.message}")
        elif self.family is not None:
            self.family.exception(frame)
        else:
            message, headers, body = frame_error(frame)
            self.acc.fail(message, headers=headers, body=body)

    def on_value(self, value: Any, raw: str) -> None:
        if not isinstance(value, dict):
            self.malformed(f"not a JSON object: {excerpt(raw)}")
            return
        family = self.family
        if family is None:
            name = family_of(value)
            if name is None:
                keys = ", ".join(sorted(value)[:8])
                self.fail(f"chunk #{self.frames_seen} is of no known model family (keys: {keys})")
                return
            family = self.family = _make_family(name, self.acc)
        metrics = value.get(METRICS)
        if isinstance(metrics, dict):
            self._metrics(family, value, metrics)
        if family.carries_usage(value):
            family.usage_seen = True
        family.chunk(JSONLine(value, raw))

    def _metrics(self, family: _Family, value: dict[str, Any], metrics: dict[str, Any]) -> None:
        # Before the chunk is translated: the chunk may end the stream (Anthropic's
        # message_stop carries the metrics).
        self.acc.provider_block(METRICS, dict(metrics))
        if family.usage_seen or family.carries_usage(value):
            return
        counts = {name: metrics[key] for name, key in _METRIC_FIELDS if is_int(metrics.get(key))}
        if counts:
            self.acc.set_usage(**counts)

    def before_terminal(self) -> None:
        # The family, once known, hands over what it holds (its translator's rules).
        if self.family is not None:
            self.family.before_terminal()

    def on_eof(self) -> None:
        if self.family is None:
            self.acc.fail("stream ended without a chunk (no frames received)")
            return
        self.family.eof()


Normalizer = BedrockInvokeStreamNormalizer

__all__ = ["METRICS", "PROTOCOL_ID", "BedrockInvokeStreamNormalizer", "Normalizer", "family_of"]

PROTOCOL = register(
    Protocol(
        id=PROTOCOL_ID,
        title="Amazon Bedrock InvokeModelWithResponseStream",
        framing=EVENTSTREAM_CHUNKS,
        translator=BedrockInvokeStreamNormalizer,
        detect=Detect(
            # /invoke (non-streaming) too: its error bodies answer the same API.
            url=(r"/model/[^/?#]+/invoke(?:-with-response-stream)?(?:$|[?#/])",),
            # The :event-type header of a chunk frame: name, type 7 (string), length 5.
            body=(rb":event-type\x07\x00\x05chunk",),
        ),
        stop_reasons=PROTOCOL_ID,
        # After the six first protocols: its URL and body rules match nothing of theirs
        # (chunk frames show no ConverseStream event name in clear), nor theirs its.
        order=70,
    )
)
