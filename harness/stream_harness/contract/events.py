"""The unified event contract: what every normalizer emits and every consumer reads.

One file, as pi-ai's ``types.ts`` is one file: the events are small typed objects
(h11 style), errors are events too, and the assembled assistant message rides on the
terminal event. ``specs/events.schema.json`` is generated from these models
(``python -m stream_harness.contract.events``) and ``specs/contract.md`` states the rules (C1, C2, ...)
that the conformance checks cite.

Event JSON is snake_case and every event carries a ``type`` discriminator, so a JSON
line can be read back with :func:`event_from_json`.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    TypeAdapter,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

StopReason: TypeAlias = Literal["stop", "length", "tool_use", "error", "aborted"]
DoneReason: TypeAlias = Literal["stop", "length", "tool_use"]
ErrorReason: TypeAlias = Literal["error", "aborted"]
ErrorKind: TypeAlias = Literal["overflow", "rate_limit", "overloaded", "transient", "fatal"]


class _Model(BaseModel):
    # Frozen so that an event handed to a consumer can never change under it; the
    # accumulator builds new blocks instead of mutating ones it already emitted.
    model_config = ConfigDict(frozen=True, extra="forbid")


# ---------------------------------------------------------------------------
# The assembled message
# ---------------------------------------------------------------------------


class Usage(_Model):
    """Token counts as the provider reported them, in one arithmetic for all providers.

    ``input`` excludes cached tokens (``cache_read`` and ``cache_write`` are separate),
    ``output`` includes reasoning tokens, and ``total`` is the provider's total when it
    sends one, else the sum of the four. specs/contract.md (section Usage) gives the
    per-protocol derivation.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total: int = 0


class TextBlock(_Model):
    type: Literal["text"] = "text"
    content: str = ""
    # Gemini may attach a thoughtSignature to a plain text part; it must be replayed.
    signature: str | None = None


class ThinkingBlock(_Model):
    type: Literal["thinking"] = "thinking"
    content: str = ""
    # Opaque replay token (Anthropic signature, Gemini thoughtSignature, the encrypted
    # reasoning of OpenAI Responses). Must be sent back byte for byte, so never edited.
    signature: str | None = None
    # True when the provider sent the reasoning encrypted only (Anthropic
    # redacted_thinking); the payload is then in ``signature`` and ``content`` is empty.
    redacted: bool = False


class ToolCall(_Model):
    type: Literal["tool_call"] = "tool_call"
    id: str = ""
    name: str = ""
    arguments: dict[str, Any] = Field(default_factory=dict)
    # Opaque replay token attached to the call (Gemini thoughtSignature on a functionCall
    # part, OpenRouter's encrypted reasoning detail for that call id).
    signature: str | None = None


ContentBlock: TypeAlias = Annotated[
    TextBlock | ThinkingBlock | ToolCall, Field(discriminator="type")
]


class ProviderBlock(_Model):
    """A block the contract does not model (server tool calls and their results,
    executable code, images, ...), kept verbatim so that nothing received is lost.

    ``position`` is the number of content blocks that preceded it, which places it in
    the message without giving it a ``content_index``.
    """

    provider_type: str
    position: int
    data: dict[str, Any] = Field(default_factory=dict)


ErrorOrigin: TypeAlias = Literal["provider", "stream"]


class ErrorInfo(_Model):
    """What a consumer needs to act on an error without string-matching on its own.

    ``origin`` tells who spoke: ``provider`` when the error came from the provider (an
    HTTP error body, an error event, a refusal or failure status), ``stream`` when the
    normalizer found the stream itself broken (cut before its terminal signal, malformed
    JSON, a framing fault); the message is then ours, not the provider's.
    """

    kind: ErrorKind = "fatal"
    status: int | None = None
    provider_type: str | None = None
    code: str | None = None
    retryable: bool = False
    retry_after: float | None = None
    origin: ErrorOrigin = "provider"


class AssistantMessage(_Model):
    content: list[ContentBlock] = Field(default_factory=list)
    stop_reason: StopReason = "stop"
    provider_stop_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    response_id: str | None = None
    error_message: str | None = None
    provider_blocks: list[ProviderBlock] = Field(default_factory=list)


# ---------------------------------------------------------------------------
# Events
# ---------------------------------------------------------------------------


class StartEvent(_Model):
    type: Literal["start"] = "start"


class TextStartEvent(_Model):
    type: Literal["text_start"] = "text_start"
    content_index: int


class TextDeltaEvent(_Model):
    type: Literal["text_delta"] = "text_delta"
    content_index: int
    delta: str


class TextEndEvent(_Model):
    type: Literal["text_end"] = "text_end"
    content_index: int
    content: str
    signature: str | None = None


class ThinkingStartEvent(_Model):
    type: Literal["thinking_start"] = "thinking_start"
    content_index: int


class ThinkingDeltaEvent(_Model):
    type: Literal["thinking_delta"] = "thinking_delta"
    content_index: int
    delta: str


class ThinkingEndEvent(_Model):
    type: Literal["thinking_end"] = "thinking_end"
    content_index: int
    content: str
    signature: str | None = None
    redacted: bool = False


class ToolCallStartEvent(_Model):
    type: Literal["toolcall_start"] = "toolcall_start"
    content_index: int
    id: str | None = None
    name: str | None = None


class DeferredArguments:
    """Live tool arguments that are built only when someone reads them.

    Contract C9 gives every ``toolcall_delta`` the arguments parsed so far. Built eagerly,
    that is one new copy of the text received so far per delta: quadratic in the size of
    the call (a 100 KB call in 30,000 deltas held 1.4-2.8 GB and cost 19-26x the bare
    parse, benchmarks/README.md). The accumulator therefore stores one of these on the
    event instead of a dict; reading ``event.arguments``, comparing, printing, pickling or
    serializing the event builds the value once and the event keeps it. Nothing a
    consumer can observe differs from a plain dict field: ``event.arguments`` is always a
    ``dict`` and the JSON is byte-identical.
    """

    __slots__ = ()

    def resolve(self) -> dict[str, Any]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DeferredArguments):
            other = other.resolve()
        return self.resolve() == other

    __hash__ = None  # type: ignore[assignment]  # as unhashable as the dict it stands for

    def __repr__(self) -> str:
        return repr(self.resolve())

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (self.resolve(),))


def _resolve(value: Any) -> Any:
    return value.resolve() if isinstance(value, DeferredArguments) else value


class _LiveArgumentsSchema:
    """A dict[str, Any] to validation and the JSON schema; a DeferredArguments instance is
    stored as it is (an isinstance check in pydantic-core, no Python call per event:
    bench_normalizers.py, 7% of an Anthropic tool stream) and resolved when serialized."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        plain = handler(dict[str, Any])
        return core_schema.union_schema(
            [core_schema.is_instance_schema(DeferredArguments), plain],
            serialization=core_schema.plain_serializer_function_ser_schema(
                _resolve, return_schema=plain
            ),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return handler(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))


LiveArguments: TypeAlias = Annotated[dict[str, Any], _LiveArgumentsSchema]


class ToolCallDeltaEvent(_Model):
    type: Literal["toolcall_delta"] = "toolcall_delta"
    content_index: int
    delta: str
    # The live best-effort arguments after this delta (see specs/contract.md, C9). Stored
    # as DeferredArguments by the normalizers; always read as a dict (property below).
    arguments: LiveArguments = Field(default_factory=dict)


def _read_arguments(self: ToolCallDeltaEvent) -> dict[str, Any]:
    value = self.__dict__["arguments"]
    if isinstance(value, DeferredArguments):
        value = value.resolve()
        # The model is frozen against assignment; caching the value built from the same
        # input is not a change a reader can see.
        self.__dict__["arguments"] = value
    return value  # type: ignore[no-any-return]


# A data descriptor on the class wins over the instance __dict__ pydantic fills, so every
# attribute read goes through _read_arguments; pydantic itself reads __dict__ directly.
ToolCallDeltaEvent.arguments = property(_read_arguments)  # type: ignore[assignment]


class ToolCallEndEvent(_Model):
    type: Literal["toolcall_end"] = "toolcall_end"
    content_index: int
    tool_call: ToolCall
    # The argument text as delivered (the fragments joined) and whether it parsed strictly
    # as a JSON object (specs/contract.md, C7). ``tool_call.arguments`` is then the
    # recovery cascade's best value (C7): a preview to show, never arguments to run a tool
    # on (agent check A13). None: the producer did not say (events built by hand, another
    # library's adapter).
    raw_arguments: str | None = None
    strict: bool | None = None


class DoneEvent(_Model):
    type: Literal["done"] = "done"
    reason: DoneReason
    message: AssistantMessage


class ErrorEvent(_Model):
    type: Literal["error"] = "error"
    reason: ErrorReason
    error_message: str
    message: AssistantMessage
    # Filled by the normalizers from stream_harness.errors.classify, so that consumers never
    # classify on their own. None only for events built by hand.
    error: ErrorInfo | None = None


Event: TypeAlias = Annotated[
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent,
    Field(discriminator="type"),
]

TerminalEvent: TypeAlias = DoneEvent | ErrorEvent
DELTA_TYPES = frozenset({"text_delta", "thinking_delta", "toolcall_delta"})
START_TYPES = frozenset({"text_start", "thinking_start", "toolcall_start"})
END_TYPES = frozenset({"text_end", "thinking_end", "toolcall_end"})
TERMINAL_TYPES = frozenset({"done", "error"})

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
_EVENTS_ADAPTER: TypeAdapter[list[Event]] = TypeAdapter(list[Event])


def event_to_json(event: Event) -> str:
    """One compact JSON line; the form `stream-harness normalize` prints and golden files hold."""
    try:
        return event.model_dump_json()
    except ValueError:
        # A lone UTF-16 surrogate (a `\\ud83d` escape split from its pair by the
        # provider) cannot be encoded as UTF-8; json escapes it instead of failing, so
        # what was received is still printed.
        return json.dumps(event.model_dump(), ensure_ascii=True, separators=(",", ":"))


def event_from_json(line: str | bytes) -> Event:
    return EVENT_ADAPTER.validate_json(line)


def events_from_jsonl(text: str) -> list[Event]:
    return [event_from_json(line) for line in text.splitlines() if line.strip()]


def json_schema() -> dict[str, Any]:
    """The JSON Schema of one event, committed as specs/events.schema.json."""
    schema = EVENT_ADAPTER.json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "stream-harness unified stream event"
    return schema


def render_schema() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":  # pragma: no cover - regeneration entry point
    import sys
    from pathlib import Path

    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("specs/events.schema.json")
    target.write_text(render_schema(), encoding="utf-8")
    print(f"wrote {target}")
