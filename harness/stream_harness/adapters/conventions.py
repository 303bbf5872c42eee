"""Per-adapter conventions: how a third-party library's own vocabulary maps to the contract.

Libraries differ from the contract in representation as well as in behaviour: LiteLLM says
``tool_calls`` where Anthropic said ``tool_use``, LangChain counts cache reads inside its
input tokens, a library that exposes one string per message cannot say where the
provider's text blocks began. A conformance matrix that counted those as failures would
drown the real ones. ``specs/adapter_conventions.yaml`` holds each adapter's conventions as
data, with the source of every entry; this module reads them and applies them, so that an
adapter's code only collects what the library returned (:class:`Collected`) and a
convention never turns into a failure while a disagreement in content still does.

Three kinds of entries, per adapter and protocol:

- ``stop_reasons``: the library's stop value -> the raw wire value it stands for. Values
  not listed pass through (the library kept the raw value). A library value that stands
  for several wire values maps to the table's choice, and the table says which it
  collapses, so that a report reader sees why such a case differs.
- ``usage``: the library's counter arithmetic (``input_includes_cache``,
  ``output_excludes_thinking``) and what it reports for a stream without usage
  (``missing``: ``zero``, ``none`` or ``estimate``).
- ``align``: representation choices reconciled with the reference, each applied only where
  the library's content agrees with the reference's (see :func:`align`), so that a real
  difference in text, thinking or tool calls still shows.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

from stream_harness.adapters.sdk_support import stop_mapping
from stream_harness.contract.events import (
    AssistantMessage,
    ContentBlock,
    DoneEvent,
    ErrorEvent,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    Usage,
)
from stream_harness.contract.facts import load_yaml
from stream_harness.providers.reference import normalize

TABLE: Final = "adapter_conventions.yaml"

Missing: TypeAlias = Literal["zero", "none", "estimate"]
Alignment: TypeAlias = Literal[
    "text_joined",
    "block_order",
    "signatures",
    "thinking_joined",
    "thinking_parts",
    "tool_call_ids",
]
ALIGNMENTS: Final[frozenset[str]] = frozenset(
    {
        "text_joined",
        "block_order",
        "signatures",
        "thinking_joined",
        "thinking_parts",
        "tool_call_ids",
    }
)
# The separator the reference puts between the summary parts of one reasoning item.
PART_SEPARATOR: Final = "\n\n"


class ConventionsError(ValueError):
    """``specs/adapter_conventions.yaml`` is malformed; the message is one line."""


@dataclass(frozen=True, slots=True)
class UsageRule:
    input_includes_cache: bool = False
    output_excludes_thinking: bool = False
    missing: Missing = "zero"


@dataclass(frozen=True, slots=True)
class ProtocolConventions:
    stop_reasons: Mapping[str, str] = field(default_factory=dict)
    usage: UsageRule = field(default_factory=UsageRule)
    align: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class AdapterConventions:
    adapter: str
    library: str
    protocols: Mapping[str, ProtocolConventions]

    def for_protocol(self, protocol: str) -> ProtocolConventions:
        return self.protocols.get(protocol, ProtocolConventions())


def _rule(
    adapter: str, protocol: str, raw: Mapping[str, Any], source: str = TABLE
) -> ProtocolConventions:
    where = f"{source}: {adapter}/{protocol}"
    if not isinstance(raw, Mapping):
        raise ConventionsError(f"{where}: must be a mapping")
    if "source" not in raw:
        raise ConventionsError(f"{where}: every protocol entry needs a source")
    stops = raw.get("stop_reasons") or {}
    if not isinstance(stops, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in stops.items()
    ):
        raise ConventionsError(f"{where}: stop_reasons must map library values to wire values")
    usage = raw.get("usage") or {}
    if not isinstance(usage, Mapping):
        raise ConventionsError(f"{where}: usage must be a mapping")
    missing = usage.get("missing", "zero")
    if missing not in ("zero", "none", "estimate"):
        raise ConventionsError(f"{where}: usage.missing must be zero, none or estimate")
    align = raw.get("align") or []
    if not isinstance(align, list) or not all(isinstance(a, str) for a in align):
        raise ConventionsError(f"{where}: align must be a list of names")
    unknown = sorted(set(align) - ALIGNMENTS)
    if unknown:
        raise ConventionsError(f"{where}: unknown alignment(s) {unknown}")
    return ProtocolConventions(
        stop_reasons=dict(stops),
        usage=UsageRule(
            input_includes_cache=bool(usage.get("input_includes_cache", False)),
            output_excludes_thinking=bool(usage.get("output_excludes_thinking", False)),
            missing=missing,
        ),
        align=frozenset(align),
    )


def parse_conventions(
    data: Mapping[str, Any], source: str = TABLE
) -> dict[str, AdapterConventions]:
    """The table's adapters, checked once: a malformed entry is a repository bug.

    ``source`` names where the entries came from in every error (the bundled table, or a
    stdio adapter's ``started`` reply that declares its own).
    """
    adapters = data.get("adapters")
    if not isinstance(adapters, Mapping):
        raise ConventionsError(f"{source}: needs a mapping `adapters`")
    out: dict[str, AdapterConventions] = {}
    for name, entry in adapters.items():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("protocols"), Mapping):
            raise ConventionsError(f"{source}: {name}: needs `library` and `protocols`")
        out[name] = AdapterConventions(
            adapter=name,
            library=str(entry.get("library", name)),
            protocols={p: _rule(name, p, r, source) for p, r in entry["protocols"].items()},
        )
    return out


@functools.cache
def all_conventions() -> dict[str, AdapterConventions]:
    return parse_conventions(load_yaml(TABLE))


def conventions_for(adapter: str | AdapterConventions) -> AdapterConventions:
    """The bundled table's entry of ``adapter``; an entry given as such is its own (a stdio
    adapter that declares its conventions in its handshake)."""
    if isinstance(adapter, AdapterConventions):
        return adapter
    found = all_conventions().get(adapter)
    if found is None:
        raise ConventionsError(f"{TABLE}: no entry for adapter {adapter!r}")
    return found


# ---------------------------------------------------------------------------------------
# What an adapter collects from its library
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LibraryUsage:
    """The library's counters as it reports them, before its arithmetic is undone.

    ``thinking`` is set only by libraries that report reasoning tokens apart from their
    output count. ``None`` as a whole (not this object) means the library reported no
    usage at all.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    thinking: int = 0
    total: int | None = None


@dataclass(frozen=True, slots=True)
class Collected:
    """What the library handed its user, already split into the contract's block kinds."""

    content: Sequence[ContentBlock] = ()
    stop: str | None = None
    usage: LibraryUsage | None = None
    model: str | None = None
    response_id: str | None = None
    provider_blocks: Sequence[ProviderBlock] = ()
    refusal: str | None = None
    # The provider's error message the library surfaced (an error chunk it yielded).
    error: str | None = None
    # The provider's own words on why it stopped, as the library handed them over (Gemini
    # finishMessage): appended to an error stop's message, as the reference does.
    stop_details: str | None = None


def contract_usage(usage: LibraryUsage | None, rule: UsageRule) -> Usage:
    if usage is None:
        return Usage()
    cache = usage.cache_read + usage.cache_write
    counts = {
        "input": max(0, usage.input - cache) if rule.input_includes_cache else usage.input,
        "output": usage.output + usage.thinking if rule.output_excludes_thinking else usage.output,
        "cache_read": usage.cache_read,
        "cache_write": usage.cache_write,
    }
    total = usage.total if usage.total is not None else sum(counts.values())
    return Usage(**counts, total=total)


def wire_stop(conv: ProtocolConventions, value: str | None) -> str | None:
    """The raw wire value a library's stop value stands for (the table's, else itself)."""
    if value is None:
        return None
    return conv.stop_reasons.get(value, value)


def to_message(
    adapter: str | AdapterConventions, protocol: str, collected: Collected
) -> AssistantMessage:
    """The library's result in the contract's terms, by its conventions' table."""
    conv = conventions_for(adapter).for_protocol(protocol)
    raw = wire_stop(conv, collected.stop)
    content = list(collected.content)
    mapping = stop_mapping(
        protocol,
        raw,
        has_tool_calls=any(isinstance(b, ToolCall) for b in content),
        refusal=bool(collected.refusal),
        details=collected.refusal or collected.error,
    )
    error_message = mapping.error_message if mapping.reason == "error" else None
    if error_message is not None and collected.stop_details:
        error_message = f"{error_message}: {collected.stop_details}"
    if collected.error:
        error_message = collected.error
    return AssistantMessage(
        content=content,
        stop_reason="error" if collected.error else mapping.reason,
        provider_stop_reason=raw,
        usage=contract_usage(collected.usage, conv.usage),
        model=collected.model or None,
        response_id=collected.response_id or None,
        error_message=error_message,
        provider_blocks=list(collected.provider_blocks),
    )


# ---------------------------------------------------------------------------------------
# Alignment with the reference: representation, never content
# ---------------------------------------------------------------------------------------


def reference_message(
    protocol: str, chunks: Sequence[bytes], status: int, headers: Mapping[str, Sequence[str]] | None
) -> AssistantMessage | None:
    """The reference's final message on the same body (whole, so split-independent)."""
    hdrs = tuple((k, tuple(v)) for k, v in (headers or {}).items())
    return _reference_message(protocol, b"".join(chunks), status, hdrs)


@functools.lru_cache(maxsize=64)
def _reference_message(
    protocol: str, body: bytes, status: int, headers: tuple[tuple[str, tuple[str, ...]], ...]
) -> AssistantMessage | None:
    """Memoized: every split of a case asks for the same whole body (hundreds of times;
    the messages are frozen, so sharing one is safe)."""
    events = list(
        normalize(protocol, [body], status=status, headers={k: list(v) for k, v in headers})
    )
    last = events[-1] if events else None
    return last.message if isinstance(last, DoneEvent | ErrorEvent) else None


def _kind_text(block: ContentBlock) -> str:
    return block.content if isinstance(block, TextBlock | ThinkingBlock) else ""


def _resegment(
    blocks: list[ContentBlock], ref: Sequence[ContentBlock], kind: type[TextBlock | ThinkingBlock]
) -> list[ContentBlock]:
    """Cut the library's one joined block of ``kind`` at the reference's block boundaries.

    Only when the joined text equals the reference's blocks of that kind concatenated:
    the library kept every character and only lost where blocks began.
    """
    mine = [b for b in blocks if isinstance(b, kind)]
    theirs = [b for b in ref if isinstance(b, kind)]
    if len(mine) == len(theirs) or "".join(map(_kind_text, mine)) != "".join(
        map(_kind_text, theirs)
    ):
        return blocks
    out: list[ContentBlock] = []
    placed = False
    for b in blocks:
        if isinstance(b, kind):
            if not placed:
                out.extend(theirs)
                placed = True
            continue
        out.append(b)
    return out


def _join_parts(blocks: list[ContentBlock], ref: Sequence[ContentBlock]) -> list[ContentBlock]:
    """Merge runs of thinking blocks the reference has as one block, part by part.

    The library keeps each summary part of one reasoning item as a thinking block of its
    own; the reference joins them with a blank line. A run is merged only when its parts,
    joined so, are exactly the reference's block at that place (its first part's signature
    kept), so that a lost or changed part stays a difference.
    """
    out: list[ContentBlock] = []
    i = 0
    while i < len(blocks):
        b = blocks[i]
        want = ref[len(out)] if len(out) < len(ref) else None
        if isinstance(b, ThinkingBlock) and isinstance(want, ThinkingBlock):
            j = i + 1
            while j < len(blocks) and isinstance(blocks[j], ThinkingBlock):
                j += 1
            for end in range(j, i + 1, -1):
                run = [x for x in blocks[i:end] if isinstance(x, ThinkingBlock)]
                if PART_SEPARATOR.join(x.content for x in run) == want.content:
                    out.append(b.model_copy(update={"content": want.content}))
                    i = end
                    break
            else:
                out.append(b)
                i += 1
            continue
        out.append(b)
        i += 1
    return out


def _same_content(a: ContentBlock, b: ContentBlock) -> bool:
    """Equal but for the signature (and the id of a tool call)."""
    if isinstance(a, ToolCall) and isinstance(b, ToolCall):
        return (a.name, a.arguments) == (b.name, b.arguments)
    if type(a) is not type(b):
        return False
    return a.model_copy(update={"signature": None}) == b.model_copy(update={"signature": None})


def align(
    message: AssistantMessage, reference: AssistantMessage | None, rules: frozenset[str]
) -> AssistantMessage:
    """Reconcile the representation choices ``rules`` names with the reference.

    - ``text_joined`` / ``thinking_joined``: the library gives one string per message; it
      is cut at the reference's block boundaries when the characters agree.
    - ``thinking_parts``: the library gives one thinking block per summary part where the
      reference has one per reasoning item; the parts are merged when they join to it.
    - ``block_order``: the library's blocks come in a fixed order (thinking, text, tool
      calls); they take the reference's order when they are the same blocks.
    - ``signatures``: the library keeps no replay token where the reference has one
      (or keeps it in another packing); a block whose content agrees takes the reference's.
    - ``tool_call_ids``: the library invents its own ids for calls the wire sent without
      one; a call whose name and arguments agree takes the reference's id.

    Every rule leaves a block alone when its content differs from the reference's, so a
    content difference is never hidden; the rules applied are listed per adapter in
    ``specs/adapter_conventions.yaml`` with the reason.
    """
    if reference is None or not rules:
        return message
    blocks = list(message.content)
    ref = list(reference.content)
    if "thinking_joined" in rules:
        blocks = _resegment(blocks, ref, ThinkingBlock)
    if "thinking_parts" in rules:
        blocks = _join_parts(blocks, ref)
    if "text_joined" in rules:
        blocks = _resegment(blocks, ref, TextBlock)
    if "block_order" in rules and len(blocks) == len(ref) and blocks != ref:
        remaining = list(blocks)
        ordered: list[ContentBlock] = []
        for target in ref:
            match = next((b for b in remaining if _same_content(b, target)), None)
            if match is None:
                break
            remaining.remove(match)
            ordered.append(match)
        else:
            blocks = ordered
    if "signatures" in rules or "tool_call_ids" in rules:
        fixed: list[ContentBlock] = []
        for i, b in enumerate(blocks):
            want: ContentBlock | None = ref[i] if i < len(ref) else None
            if want is not None and _same_content(b, want):
                update: dict[str, Any] = {}
                if "signatures" in rules and b.signature != want.signature:
                    update["signature"] = want.signature
                if (
                    "tool_call_ids" in rules
                    and isinstance(b, ToolCall)
                    and isinstance(want, ToolCall)
                    and b.id != want.id
                ):
                    update["id"] = want.id
                b = b.model_copy(update=update) if update else b
            fixed.append(b)
        blocks = fixed
    return message.model_copy(update={"content": blocks})


def no_wire_usage(reference: AssistantMessage | None) -> bool:
    return reference is not None and reference.usage == Usage()


def finish(
    adapter: str | AdapterConventions,
    protocol: str,
    collected: Collected,
    reference: AssistantMessage | None,
) -> AssistantMessage:
    """:func:`to_message`, then the adapter's alignments and its no-usage convention."""
    conv = conventions_for(adapter).for_protocol(protocol)
    message = align(to_message(adapter, protocol, collected), reference, conv.align)
    if conv.usage.missing != "zero" and no_wire_usage(reference):
        # The wire carried no usage: the library reports None or its own estimate, which
        # is its documented convention, not a count it got wrong.
        message = message.model_copy(update={"usage": Usage()})
    return message
