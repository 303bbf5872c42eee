"""Fault placement as data: where a response ends early, and how.

A fault that ends a response early is two choices, not one key per combination: a
*place* (a byte of the body, a place inside the N-th call's arguments, right after the
text, or where the content ends) and an *ending* (the connection dropped with a FIN or an
RST, a clean end of the body without the terminal event, the output limit, an in-band
error event, or a normal finish over whatever was sent). The old one-word keys
(``cut_at``, ``cut_in_tool_args``, ...) are sugar for points of that grid
(:func:`normalize`), so a scenario, a test and an exploring strategy speak one model.

Besides endings, a call can be served wrong on purpose (``mutate``): arguments that break
the tool's schema, no id, an id already used, or a fresh id for the same call on a resend.

This module knows JSON text and the scenario's data, never a wire format: the per-protocol
renderers (:mod:`stream_harness.agents.scenario.render`) turn a resolved fault into bytes. What a
protocol cannot express is said once, in :data:`WHOLE_CALLS` and :func:`unexpressible`,
so that :func:`fault_space` never offers a fault a renderer would refuse. What a protocol's
servers never send (a call without an id where every server sends one) is a sourced fact of
specs/call_ids.yaml, read by :func:`unexpressible` too, so that no row is failed for handling
something no provider serves.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from stream_harness.contract import facts

__all__ = [
    "ENDINGS",
    "ERROR_KINDS",
    "NAMED_PLACES",
    "WHOLE_CALLS",
    "ByteAt",
    "CallFault",
    "FaultSpec",
    "InCall",
    "Resolved",
    "canonical_yaml",
    "fault_space",
    "id_way",
    "normalize",
    "place_offset",
    "unexpressible",
]

Ending = Literal["fin", "rst", "clean_eof", "length", "error_event", "finish"]
ENDINGS: Final[tuple[Ending, ...]] = get_args(Ending)
"""``fin``/``rst``: the connection drops (no chunked terminator); ``clean_eof``: the body
ends cleanly without the terminal event; ``length``: the output limit (``length``,
``max_tokens``, ``response.incomplete``); ``error_event``: the protocol's in-band error;
``finish``: the response ends normally (the cut call closed) over what was sent."""

ErrorKind = Literal["overloaded", "rate_limit", "server_error"]
ERROR_KINDS: Final[tuple[ErrorKind, ...]] = get_args(ErrorKind)

NamedPlace = Literal[
    "last_value", "number", "string", "escape", "between_keys", "first_piece", "half"
]
NAMED_PLACES: Final[tuple[NamedPlace, ...]] = get_args(NamedPlace)
"""Inside a call's compact JSON arguments: ``last_value`` (inside the last top-level
value: every key present), ``number`` / ``string`` / ``escape`` (inside the first value of
that sort, at any depth), ``between_keys`` (right after the comma that follows the first
top-level member), ``first_piece`` (after the first streamed piece, 3 characters in
where calls come whole: the old ``cut_in_tool_args``), ``half`` (after half of the pieces: the old
``length_stop_in_tool_call``)."""

ArgsFault = Literal["wrong_type", "missing_required"]
IdFault = Literal["missing", "reused", "fresh"]
IdWay = Literal["missing", "reused_in_response", "reused_across", "fresh"]
"""The ways of serving a call's id that specs/call_ids.yaml says, per protocol, some server
sends or none does: ``reused`` on call 1 repeats an id of an earlier response, on a later
call the id of an earlier call of the same response (:func:`id_way`)."""

_NEVER: Final[dict[IdWay, str]] = {
    "missing": "always sends a call id",
    "reused_in_response": "never repeats a call id within one response",
    "reused_across": "never repeats a call id of an earlier response",
    "fresh": "never serves a call under a new id",
}

WHOLE_CALLS: Final = frozenset({"google-generative-ai"})
"""Protocols whose calls arrive whole (Gemini's ``functionCall`` carries ``args`` as an
object): a call cannot finish with arguments cut short, and a call the output limit cuts
is not sent at all."""

_CUT_ENDINGS: Final[tuple[Ending, ...]] = ("fin", "rst", "clean_eof")


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ByteAt(_Spec):
    """A byte offset of the body."""

    byte: int = Field(ge=0)


class InCall(_Spec):
    """A place inside the ``call``-th (1-based) call's arguments: a character offset of
    their compact JSON text, or a named place (:data:`NAMED_PLACES`)."""

    call: int = Field(ge=1)
    at: Annotated[int, Field(ge=1)] | NamedPlace


Place = ByteAt | InCall | Literal["after_text"]


class CallFault(_Spec):
    """The ``call``-th call served wrong: its arguments break the tool's schema, or its id
    is missing, one already served, or fresh (a resend of the same call under a new id)."""

    call: int = Field(1, ge=1)
    args: ArgsFault | None = None
    id: IdFault | None = None

    @model_validator(mode="after")
    def _something(self) -> CallFault:
        if self.args is None and self.id is None:
            raise ValueError("mutate needs args or id")
        return self


class FaultSpec(_Spec):
    """What goes wrong with one response, as a scenario writes it (specs/scenarios.md,
    "Agent scenarios"). The new model is ``place`` + ``ending`` (+ ``kind``) and
    ``mutate``; the old keys are sugar that :func:`normalize` maps onto it."""

    place: Place | None = None
    ending: Ending | None = None
    kind: ErrorKind | None = None  # the error event's kind (ending error_event)
    mutate: CallFault | None = None
    status: int | None = Field(None, ge=400, le=599)
    headers: dict[str, str] = {}
    body: str | None = None
    overflow: bool = False
    pace: float = Field(0.0, ge=0, le=5)
    # sugar
    cut_at: int | None = Field(None, ge=0)
    cut_in_tool_args: bool | int = False  # true: the first call; N: the N-th (1-based)
    error_event_after_200: ErrorKind | None = None
    length_stop_in_tool_call: bool = False
    no_terminal_event: bool = False

    @model_validator(mode="after")
    def _one(self) -> FaultSpec:
        chosen = [
            n
            for n in (
                "cut_at",
                "cut_in_tool_args",
                "status",
                "overflow",
                "error_event_after_200",
                "length_stop_in_tool_call",
                "no_terminal_event",
                "ending",
            )
            if getattr(self, n) not in (None, False)
        ]
        if len(chosen) > 1 and set(chosen) != {"status", "overflow"}:
            raise ValueError(f"one fault per response, got {', '.join(chosen)}")
        if self.place is not None and self.ending is None:
            raise ValueError("a place needs an ending")
        if (self.ending == "error_event") != (self.kind is not None):
            raise ValueError("kind goes with ending error_event, and error_event needs a kind")
        if isinstance(self.place, ByteAt) and self.ending not in _CUT_ENDINGS:
            raise ValueError(f"a byte place takes the endings {', '.join(_CUT_ENDINGS)}")
        if self.ending == "finish" and not isinstance(self.place, InCall):
            raise ValueError(
                "ending finish needs a place inside a call (place: {call: N, at: ...})"
            )
        if self.mutate is not None and (self.status is not None or self.overflow):
            raise ValueError("an HTTP error serves no call to mutate")
        return self


@dataclass(frozen=True, slots=True)
class Resolved:
    """A stream fault in the new model, against one script: ``place`` None is where the
    content ends (after every call, before the terminal event)."""

    place: ByteAt | InCall | Literal["after_text"] | None
    ending: Ending
    kind: ErrorKind | None = None


def normalize(fault: FaultSpec, calls: int) -> Resolved | None:
    """The stream fault of ``fault`` in the new model (None: no stream fault), the sugar
    mapped; ``calls`` is the script's number of calls (``length_stop_in_tool_call`` cuts
    the last)."""
    if fault.ending is not None:
        return Resolved(fault.place, fault.ending, fault.kind)
    if fault.cut_at is not None:
        return Resolved(ByteAt(byte=fault.cut_at), "fin")
    if fault.cut_in_tool_args is not False:
        n = 1 if fault.cut_in_tool_args is True else int(fault.cut_in_tool_args)
        return Resolved(InCall(call=n, at="first_piece"), "fin")
    if fault.error_event_after_200 is not None:
        return Resolved("after_text", "error_event", fault.error_event_after_200)
    if fault.length_stop_in_tool_call:
        return Resolved(InCall(call=max(calls, 1), at="half"), "length")
    if fault.no_terminal_event:
        return Resolved(None, "clean_eof")
    return None


def canonical_yaml(fault: FaultSpec, calls: int | None = None) -> str:
    """The fault as the shortest YAML that loads back to the same behaviour: defaults
    left out, sugar spelled in the new model when ``calls`` (the script's number of calls)
    is given, keys in a fixed order. For saving a shrunk failure as a scenario's
    ``fault:`` (one flow-style line)."""
    data = fault.model_dump(mode="json", exclude_defaults=True)
    if calls is not None:
        resolved = normalize(fault, calls)
        for sugar in (
            "cut_at",
            "cut_in_tool_args",
            "error_event_after_200",
            "length_stop_in_tool_call",
            "no_terminal_event",
        ):
            data.pop(sugar, None)
        if resolved is not None:
            data["ending"] = resolved.ending
            if resolved.place is not None:
                place = resolved.place
                data["place"] = place if isinstance(place, str) else place.model_dump()
            if resolved.kind is not None:
                data["kind"] = resolved.kind
    order = ["place", "ending", "kind", "mutate", "status", "overflow", "headers", "body", "pace"]
    ordered = {k: data[k] for k in order if k in data}
    ordered.update({k: v for k, v in data.items() if k not in ordered})
    text: str = yaml.safe_dump(ordered, default_flow_style=True, sort_keys=False, width=10**6)
    return text.strip()


# -- places inside JSON arguments ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int
    value: Any
    depth: int
    member_end: bool = False  # a top-level member's value: a comma may follow


def compact(arguments: Mapping[str, Any]) -> str:
    """The arguments' JSON text as every renderer streams it."""
    return json.dumps(dict(arguments), separators=(",", ":"))


def _spans(value: Any, start: int, depth: int) -> tuple[str, list[_Span]]:
    """The compact text of ``value`` and the span of every scalar value in it."""
    if isinstance(value, dict):
        text, spans = "{", []
        for i, (k, v) in enumerate(value.items()):
            if i:
                text += ","
            text += json.dumps(k) + ":"
            inner, sub = _spans(v, start + len(text), depth + 1)
            spans += sub
            spans.append(_Span(start + len(text), start + len(text) + len(inner), v, depth + 1))
            text += inner
        return text + "}", spans
    if isinstance(value, list):
        text, spans = "[", []
        for i, v in enumerate(value):
            if i:
                text += ","
            inner, sub = _spans(v, start + len(text), depth + 1)
            spans += sub
            text += inner
        return text + "]", spans
    return json.dumps(value), []


def _members(arguments: Mapping[str, Any]) -> list[_Span]:
    text, spans = _spans(dict(arguments), 0, 0)
    assert text == compact(arguments)
    return spans


def _escapes(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The (start, end) of every escape sequence in the string literal text[start:end]."""
    i = start + 1
    while i < end - 1:
        if text[i] == "\\":
            n = 6 if text[i + 1] == "u" else 2
            yield i, i + n
            i += n
        else:
            i += 1


def place_offset(
    arguments: Mapping[str, Any], at: int | NamedPlace, delta_size: int, *, whole: bool = False
) -> int | None:
    """The character offset of ``at`` in the arguments' compact JSON text, strictly inside
    it (0 < offset < length); None when the arguments have no such place (a character
    offset past the end, no number to cut inside, ...). ``whole``: the protocol sends the
    call whole (:data:`WHOLE_CALLS`), so its ``first_piece`` is 3 characters in, where the
    cut of the old ``cut_in_tool_args`` has always been."""
    text = compact(arguments)
    size = piece_size(text, delta_size)
    pieces = max(1, -(-len(text) // size))
    found: int | None
    if isinstance(at, int):
        found = at
    elif at == "first_piece":
        found = 3 if whole else size
    elif at == "half":
        found = size * max(1, pieces // 2)
    else:
        found = _named(text, arguments, at)
    return found if found is not None and 0 < found < len(text) else None


def _named(text: str, arguments: Mapping[str, Any], at: NamedPlace) -> int | None:
    spans = _members(arguments)
    top = [s for s in spans if s.depth == 1]
    if at == "last_value":
        last = top[-1] if top else None
        return (
            last.start + len(text[last.start : last.end]) // 2
            if last and last.end - last.start >= 2
            else None
        )
    if at == "between_keys":
        return top[0].end + 1 if len(top) >= 2 else None
    for s in sorted(spans, key=lambda s: s.start):
        if at == "number" and _is_number(s.value) and s.end - s.start >= 2:
            return s.start + (s.end - s.start) // 2
        if at == "string" and isinstance(s.value, str):
            # The middle of the literal, moved back off any escape sequence.
            mid = s.start + max(1, (s.end - s.start) // 2)
            for a, b in _escapes(text, s.start, s.end):
                if a < mid < b:
                    mid = a
            return mid
        if at == "escape" and isinstance(s.value, str):
            for a, _ in _escapes(text, s.start, s.end):
                return a + 1
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def piece_size(text: str, delta_size: int) -> int:
    """Characters per streamed piece of arguments: at least 4, at most half of them."""
    return max(4, min(delta_size, len(text) // 2 or 1))


# -- mutations ---------------------------------------------------------------------------------


def broken_arguments(
    arguments: Mapping[str, Any], schema: Mapping[str, Any], how: ArgsFault
) -> dict[str, Any] | None:
    """The arguments made to break the tool's schema (valid JSON still), None when they
    cannot be: ``wrong_type`` turns the first required (else first) argument into another
    JSON type; ``missing_required`` drops the last required argument present."""
    required = [k for k in schema.get("required", []) if k in arguments]
    if how == "missing_required":
        if not required:
            return None
        return {k: v for k, v in arguments.items() if k != required[-1]}
    keys = required or list(arguments)
    if not keys:
        return None
    key = keys[0]
    value = arguments[key]
    other: Any = (
        0
        if isinstance(value, str)
        else json.dumps(value)
        if not isinstance(value, bool | int | float)
        else str(value).lower()
    )
    return {**arguments, key: other}


def id_way(mutate: CallFault) -> IdWay | None:
    """How ``mutate`` serves its call's id, in the words of specs/call_ids.yaml (None: the
    id is left alone)."""
    if mutate.id == "reused":
        return "reused_in_response" if mutate.call > 1 else "reused_across"
    return mutate.id


def _id_never_sent(mutate: CallFault, protocol: str) -> str | None:
    way = id_way(mutate)
    if way is None:
        return None
    table: Mapping[str, Mapping[str, Any]] = facts.load_yaml("call_ids")["protocols"]
    fact = table.get(protocol, {}).get(way)
    if fact is None or fact["sent"]:
        return None
    return f"{protocol} {_NEVER[way]} ({fact['source']})"


def unexpressible(fault: Resolved | CallFault, protocol: str) -> str | None:
    """Why ``protocol`` cannot serve ``fault`` (None: it can): a stream fault its wire
    cannot carry, or a call's id served a way no server of the protocol sends it
    (specs/call_ids.yaml)."""
    if isinstance(fault, CallFault):
        return _id_never_sent(fault, protocol)
    if protocol in WHOLE_CALLS and isinstance(fault.place, InCall):
        if fault.ending == "finish":
            return f"{protocol} sends whole calls: no call finishes with its arguments cut short"
        if fault.ending in ("clean_eof", "error_event"):
            # Half an event, then the end or another event: read as a malformed payload.
            return (
                f"{protocol} sends a call as one whole event: only a dropped connection or "
                "the output limit can end a response inside it"
            )
    return None


def fault_space(
    calls: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    protocol: str,
    *,
    delta_size: int = 12,
    has_text: bool = True,
) -> list[FaultSpec]:
    """Every stream fault in the new model that ``protocol`` can serve for a script with
    these ``calls`` (each ``(arguments, tool schema)``), with the named places (not every
    character offset: :func:`call_offsets` gives their range) and one ``byte`` place per
    ending at byte 0 (any byte below the body's length is valid: the strategies draw it).
    The calls served wrong are those the protocol's servers send (:func:`unexpressible`,
    specs/call_ids.yaml). A strategy that draws from this list never draws an impossible
    fault."""
    out: list[FaultSpec] = []
    place_endings: list[tuple[Place | None, Ending]] = [(ByteAt(byte=0), e) for e in _CUT_ENDINGS]
    place_endings += [(None, e) for e in ("fin", "rst", "clean_eof", "length", "error_event")]
    if has_text:
        place_endings += [
            ("after_text", e) for e in ("fin", "rst", "clean_eof", "length", "error_event")
        ]
    for n, (arguments, _) in enumerate(calls, 1):
        for at in NAMED_PLACES:
            if place_offset(arguments, at, delta_size) is not None:
                place_endings += [(InCall(call=n, at=at), e) for e in ENDINGS]
    for place, ending in place_endings:
        kinds: tuple[ErrorKind | None, ...] = ERROR_KINDS if ending == "error_event" else (None,)
        for kind in kinds:
            resolved = Resolved(place, ending, kind)
            if unexpressible(resolved, protocol) is None:
                out.append(FaultSpec(place=place, ending=ending, kind=kind))
    for n, (arguments, schema) in enumerate(calls, 1):
        for how in get_args(ArgsFault):
            if broken_arguments(arguments, schema, how) is not None:
                out.append(FaultSpec(mutate=CallFault(call=n, args=how)))
        ids: tuple[IdFault, ...] = ("missing", "fresh", "reused") if n > 1 else ("missing", "fresh")
        wrong = [CallFault(call=n, id=i) for i in ids]
        out += [FaultSpec(mutate=m) for m in wrong if unexpressible(m, protocol) is None]
    return out


def call_offsets(arguments: Mapping[str, Any]) -> range:
    """The character offsets valid for ``place: {call: N, at: OFFSET}``."""
    return range(1, len(compact(arguments)))
