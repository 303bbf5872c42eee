"""``specs/overflow.yaml`` and ``specs/retry.yaml`` compiled once into typed, frozen tables.

The facts (patterns, vetoes, rules, header formats) live in the YAML with a source per row;
this module only turns them into compiled regexes and sets, so that classification never
re-reads or re-compiles anything. A malformed table is a bug in the repository, not in the
input, so it raises :class:`ErrorTableError` at first use (and the test suite loads both).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast, get_args

from stream_harness.contract import facts
from stream_harness.contract.events import ErrorKind

OVERFLOW_TABLE = "overflow.yaml"
RETRY_TABLE = "retry.yaml"

DelaySource: TypeAlias = Literal[
    "retry_after_ms", "retry_after", "retry_info", "reset_headers", "message_hints"
]
ResetFormat: TypeAlias = Literal["rfc3339", "epoch_seconds", "milliseconds", "duration"]
KINDS: tuple[str, ...] = get_args(ErrorKind)


class ErrorTableError(ValueError):
    """A spec table is missing a key or holds a value of the wrong type."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of ``retry.yaml`` ``rules``: every given condition must hold."""

    id: str
    kind: ErrorKind
    types: frozenset[str] | None
    codes: frozenset[str] | None
    statuses: tuple[range, ...] | None
    quota_ids: re.Pattern[str] | None
    stop_reasons: frozenset[str] | None
    message: re.Pattern[str] | None
    protocols: frozenset[str] | None


@dataclass(frozen=True, slots=True)
class ResetSpec:
    pattern: re.Pattern[str]
    format: ResetFormat


@dataclass(frozen=True, slots=True)
class OverflowTable:
    patterns: tuple[re.Pattern[str], ...]
    vetoes: tuple[re.Pattern[str], ...]
    veto_types: frozenset[str]
    veto_statuses: frozenset[int]
    overflow_types: frozenset[str]
    overflow_stop_reasons: frozenset[str]
    no_body_statuses: frozenset[int]
    no_body_protocols: frozenset[str]
    truncation_ratio: float
    max_match_chars: int


@dataclass(frozen=True, slots=True)
class RetryTable:
    retryable: Mapping[str, bool]
    rules: tuple[Rule, ...]
    sources: tuple[DelaySource, ...]
    max_delay_s: float
    retry_after_ms_header: str
    retry_after_header: str
    reset_specs: tuple[ResetSpec, ...]
    message_hints: tuple[re.Pattern[str], ...]


def _get(node: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(node, Mapping) or key not in node:
        raise ErrorTableError(f"{where}: missing key {key!r}")
    value = node[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ErrorTableError(f"{where}.{key}: expected {kind}, got {type(value).__name__}")
    return value


def _regex(text: str, where: str) -> re.Pattern[str]:
    try:
        return re.compile(text, re.IGNORECASE)
    except re.error as exc:
        raise ErrorTableError(f"{where}: bad regex {text!r}: {exc}") from exc


def _values(rows: Any, where: str) -> list[Any]:
    if not isinstance(rows, list):
        raise ErrorTableError(f"{where}: expected a list")
    return [_get(row, "value", (str, int), f"{where}[{i}]") for i, row in enumerate(rows)]


def _lowered(values: list[Any]) -> frozenset[str]:
    return frozenset(str(value).lower() for value in values)


def _statuses(values: list[Any], where: str) -> tuple[range, ...]:
    out: list[range] = []
    for value in values:
        if isinstance(value, int) and not isinstance(value, bool):
            out.append(range(value, value + 1))
        elif isinstance(value, str) and re.fullmatch(r"\d{3}-\d{3}", value):
            low, high = (int(part) for part in value.split("-"))
            out.append(range(low, high + 1))
        else:
            raise ErrorTableError(f"{where}: bad status {value!r}")
    return tuple(out)


def _string_set(when: Mapping[str, Any], key: str, where: str) -> frozenset[str] | None:
    if key not in when:
        return None
    values = when[key]
    if not isinstance(values, list) or not values:
        raise ErrorTableError(f"{where}.{key}: expected a non-empty list")
    return _lowered(values)


def _rule(row: Any, where: str) -> Rule:
    when = _get(row, "when", Mapping, where)
    known = {"types", "codes", "statuses", "quota_ids", "stop_reasons", "message", "protocols"}
    if not when or set(when) - known:
        raise ErrorTableError(f"{where}.when: empty or unknown keys {sorted(set(when) - known)}")
    kind = _get(row, "kind", str, where)
    if kind not in KINDS:
        raise ErrorTableError(f"{where}.kind: {kind!r} is not an ErrorKind")
    _get(row, "source", str, where)
    statuses = when.get("statuses")
    return Rule(
        id=_get(row, "id", str, where),
        kind=cast(ErrorKind, kind),
        types=_string_set(when, "types", where),
        codes=_string_set(when, "codes", where),
        statuses=None if statuses is None else _statuses(list(statuses), f"{where}.statuses"),
        quota_ids=_regex(when["quota_ids"], where) if "quota_ids" in when else None,
        stop_reasons=_string_set(when, "stop_reasons", where),
        message=_regex(when["message"], where) if "message" in when else None,
        protocols=_string_set(when, "protocols", where),
    )


def _sourced_regexes(rows: Any, where: str) -> tuple[re.Pattern[str], ...]:
    if not isinstance(rows, list):
        raise ErrorTableError(f"{where}: expected a list")
    out = []
    for i, row in enumerate(rows):
        _get(row, "source", str, f"{where}[{i}]")
        out.append(_regex(_get(row, "regex", str, f"{where}[{i}]"), f"{where}[{i}]"))
    return tuple(out)


@functools.cache
def overflow_table() -> OverflowTable:
    data = facts.load_yaml(OVERFLOW_TABLE)
    no_body = _get(data, "no_body", Mapping, "overflow")
    level = _get(data, "message_level", Mapping, "overflow")
    return OverflowTable(
        patterns=_sourced_regexes(_get(data, "patterns", list, "overflow"), "patterns"),
        vetoes=_sourced_regexes(_get(data, "vetoes", list, "overflow"), "vetoes"),
        veto_types=_lowered(_values(data.get("veto_types"), "veto_types")),
        veto_statuses=frozenset(
            int(v) for v in _values(data.get("veto_statuses"), "veto_statuses")
        ),
        overflow_types=_lowered(_values(data.get("overflow_types"), "overflow_types")),
        overflow_stop_reasons=_lowered(
            _values(data.get("overflow_stop_reasons"), "overflow_stop_reasons")
        ),
        no_body_statuses=frozenset(_get(no_body, "statuses", list, "no_body")),
        no_body_protocols=_lowered(_get(no_body, "protocols", list, "no_body")),
        truncation_ratio=float(_get(level, "truncation_ratio", (int, float), "message_level")),
        max_match_chars=_get(data, "max_match_chars", int, "overflow"),
    )


@functools.cache
def retry_table() -> RetryTable:
    data = facts.load_yaml(RETRY_TABLE)
    kinds = _get(data, "kinds", Mapping, "retry")
    if set(kinds) != set(KINDS):
        raise ErrorTableError(f"retry.kinds: expected exactly {sorted(KINDS)}")
    retryable = {kind: _get(kinds[kind], "retryable", bool, f"kinds.{kind}") for kind in KINDS}
    rules = _get(data, "rules", list, "retry")
    delay = _get(data, "delay", Mapping, "retry")
    sources = tuple(_get(delay, "sources", list, "delay"))
    allowed = get_args(DelaySource)
    if not sources or any(source not in allowed for source in sources):
        raise ErrorTableError(f"delay.sources: each must be one of {allowed}")
    resets = _get(_get(delay, "reset_headers", Mapping, "delay"), "specs", list, "reset_headers")
    reset_specs = []
    for i, row in enumerate(resets):
        where = f"reset_headers.specs[{i}]"
        fmt = _get(row, "format", str, where)
        if fmt not in get_args(ResetFormat):
            raise ErrorTableError(f"{where}.format: {fmt!r}")
        _get(row, "source", str, where)
        reset_specs.append(
            ResetSpec(_regex(_get(row, "pattern", str, where), where), cast(ResetFormat, fmt))
        )
    return RetryTable(
        retryable=retryable,
        rules=tuple(_rule(row, f"rules[{i}]") for i, row in enumerate(rules)),
        sources=cast(tuple[DelaySource, ...], sources),
        max_delay_s=float(_get(delay, "max_delay_s", (int, float), "delay")),
        retry_after_ms_header=_get(
            _get(delay, "retry_after_ms", Mapping, "delay"), "header", str, "retry_after_ms"
        ).lower(),
        retry_after_header=_get(
            _get(delay, "retry_after", Mapping, "delay"), "header", str, "retry_after"
        ).lower(),
        reset_specs=tuple(reset_specs),
        message_hints=_sourced_regexes(
            _get(delay, "message_hints", list, "delay"), "message_hints"
        ),
    )
