"""Provider stop reasons -> the contract's ``StopReason``, read from ``specs/stop_reasons.yaml``.

The mapping is data, not code, so that every row carries its source and every row is a test
case; this module only loads the table, checks its shape once, and looks values up. The
decisions the table encodes (why ``pause_turn`` is ``stop``, why unknown values are errors,
what ``raw=None`` means per protocol) are in the YAML header and ``specs/stop_reasons.md``.

A normalizer calls :func:`map_stop_reason` at the end of a stream. It never raises: an
unknown protocol, an unknown value, or even a broken table comes back as an ``error``
mapping whose message says what was wrong, so the stream still ends with a terminal event.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stream_harness.contract import facts
from stream_harness.contract.events import StopReason
from stream_harness.providers.registry import stop_reason_section

TABLE_NAME = "stop_reasons.yaml"
TABLE_LABEL = f"specs/{TABLE_NAME}"

# ``aborted`` is the local abort signal, never a provider value, so no row may produce it.
_RowReason: TypeAlias = Literal["stop", "length", "tool_use", "error"]


@dataclass(frozen=True, slots=True)
class StopMapping:
    """What a raw stop value means for the contract.

    ``known`` is False only on the fallback paths (a value or protocol with no row), so a
    conformance report can list the values that the table should learn.
    """

    reason: StopReason
    error_message: str | None
    known: bool


class StopReasonTableError(ValueError):
    """``specs/stop_reasons.yaml`` is unreadable or malformed; the message is one line."""


@dataclass(frozen=True, slots=True)
class ProtocolTable:
    """One protocol's rows, keyed by raw value (``None`` for "ended without a reason")."""

    protocol: str
    tool_calls_override: Literal["tool_use"] | None
    mappings: Mapping[str | None, StopMapping]
    refusal_override: Literal["error"] | None = None


@dataclass(frozen=True, slots=True)
class StopReasonTable:
    protocols: Mapping[str, ProtocolTable]


# --- the file's shape (pydantic checks it; strict, so a YAML bool or number is no str) ---


class _Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class _ProtocolSpec(_Spec):
    raw_field: str = Field(min_length=1)
    tool_calls_override: Literal["tool_use"] | None
    refusal_override: Literal["error"] | None = None
    source: str = Field(min_length=1)


class _RowSpec(_Spec):
    protocol: str = Field(min_length=1)
    raw: str | None
    reason: _RowReason
    error_message: str | None = Field(default=None, min_length=1)
    source: str = Field(min_length=1)


class _FileSpec(_Spec):
    # Rows are validated one by one below, so that an error can name the row.
    protocols: dict[str, _ProtocolSpec] = Field(min_length=1)
    rows: list[Any] = Field(min_length=1)


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _first_error(exc: ValidationError) -> str:
    err = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in err["loc"]) or "(top level)"
    return _one_line(f"{where}: {err['msg']}")


def _row_label(index: int, row: Any) -> str:
    if isinstance(row, Mapping):
        return f"rows[{index}] (protocol={row.get('protocol')!r}, raw={row.get('raw')!r})"
    return f"rows[{index}]"


def parse_stop_reason_table(data: Any) -> StopReasonTable:
    """Check the loaded YAML and build the lookup table; raise :class:`StopReasonTableError`.

    Separate from the file read so that tests can feed malformed tables directly.
    """
    try:
        file_spec = _FileSpec.model_validate(data)
    except ValidationError as exc:
        raise StopReasonTableError(f"{TABLE_LABEL}: {_first_error(exc)}") from None

    collected: dict[str, dict[str | None, StopMapping]] = {name: {} for name in file_spec.protocols}
    for index, raw_row in enumerate(file_spec.rows):
        label = f"{TABLE_LABEL}: {_row_label(index, raw_row)}"
        try:
            row = _RowSpec.model_validate(raw_row)
        except ValidationError as exc:
            raise StopReasonTableError(f"{label}: {_first_error(exc)}") from None
        if row.protocol not in collected:
            raise StopReasonTableError(f"{label}: protocol is not declared under `protocols`")
        if row.error_message is not None and row.reason != "error":
            raise StopReasonTableError(f"{label}: error_message is only allowed on error rows")
        if row.reason == "error" and row.raw is None and row.error_message is None:
            raise StopReasonTableError(f"{label}: an error row with raw null needs error_message")
        if row.raw in collected[row.protocol]:
            raise StopReasonTableError(f"{label}: duplicate (protocol, raw)")
        message = row.error_message
        if row.reason == "error" and message is None:
            message = f"Provider stopped with: {row.raw}"
        collected[row.protocol][row.raw] = StopMapping(row.reason, message, known=True)

    return StopReasonTable(
        protocols={
            name: ProtocolTable(
                protocol=name,
                tool_calls_override=spec.tool_calls_override,
                mappings=collected[name],
                refusal_override=spec.refusal_override,
            )
            for name, spec in file_spec.protocols.items()
        }
    )


@functools.cache
def load_stop_reason_table() -> StopReasonTable:
    """Read and check the table once per process; raise :class:`StopReasonTableError`."""
    try:
        data = facts.load_yaml(TABLE_NAME)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise StopReasonTableError(f"{TABLE_LABEL}: cannot read: {_one_line(str(exc))}") from None
    return parse_stop_reason_table(data)


def _section(protocol: str) -> str:
    """The table section of a protocol: its registration names it (harness/stream_harness/providers/registry.py),
    so two protocols with one stop vocabulary share a section; an id nobody registered is
    looked up as itself (and normally found nowhere)."""
    return stop_reason_section(protocol)


def map_stop_reason(
    protocol: str,
    raw: str | None,
    *,
    has_tool_calls: bool = False,
    details: str | None = None,
    refusal: bool = False,
) -> StopMapping:
    """Map one protocol's raw stop value; never raises.

    ``raw=None`` means the protocol's end arrived without a reason (each protocol's row for
    it says what that means). ``has_tool_calls`` turns a ``stop`` into ``tool_use`` for the
    protocols whose table sets ``tool_calls_override`` (Responses, Gemini, Ollama report a
    plain stop when the model called tools). ``details`` (a refusal explanation, a failed
    response's error message) replaces the message of an ``error`` mapping; it is ignored for
    the other reasons, which carry no message. ``refusal`` (the model refused in content,
    e.g. OpenAI's ``delta.refusal``, while the finish reason stays ``stop``) applies the
    protocol's ``refusal_override``: a refusal is not an answer, whatever the raw value.
    """
    try:
        table = load_stop_reason_table()
    except StopReasonTableError as exc:
        return StopMapping("error", str(exc), known=False)

    proto = table.protocols.get(_section(protocol)) if isinstance(protocol, str) else None
    if proto is None:
        return StopMapping(
            "error", f"unrecognized protocol {protocol!r} (stop reason {raw!r})", known=False
        )

    mapping = proto.mappings.get(raw) if raw is None or isinstance(raw, str) else None
    if mapping is None:
        mapping = StopMapping("error", f"unrecognized stop reason {raw!r}", known=False)

    if has_tool_calls and mapping.reason == "stop" and proto.tool_calls_override is not None:
        mapping = replace(mapping, reason=proto.tool_calls_override)
    if refusal and proto.refusal_override is not None:
        mapping = replace(
            mapping,
            reason=proto.refusal_override,
            error_message=mapping.error_message or "The model refused to answer",
        )
    if details and mapping.reason == "error":
        mapping = replace(mapping, error_message=details)
    return mapping
