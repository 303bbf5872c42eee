"""How long the server asked us to wait, from headers, body and message, in one precedence.

The sources and their order come from ``specs/retry.yaml`` (``delay.sources``): the
Stainless headers first (``retry-after-ms``, then ``retry-after``), then Gemini's
``RetryInfo`` in the body, then rate-limit reset headers, then hints in the message text. The
first source with a usable value wins; a usable value is finite and positive, so garbage, zero
and negative values fall through to the next source instead of stopping the search. The value
is reported as the server said it (clamped only at ``max_delay_s``); whether a 5-minute hint
is worth waiting for is the consumer's policy, not a fact about the error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime

from stream_harness.errors.body import ErrorDetails, error_details_from_body
from stream_harness.errors.durations import (
    as_utc,
    parse_duration,
    parse_http_date,
    parse_number,
    parse_rfc3339,
    seconds_until,
)
from stream_harness.errors.headers import HeaderInput, normalize_headers
from stream_harness.errors.tables import ResetSpec, RetryTable, retry_table

# Bare reset numbers above these are absolute epoch times, not relative seconds (oh-my-pi's
# rule; see specs/retry.yaml reset_headers).
_EPOCH_MS = 1e12
_EPOCH_S = 1e9


def _usable(value: float | None) -> float | None:
    if value is None or not math.isfinite(value) or value <= 0:
        return None
    return value


def _epoch_delay(epoch_seconds: float, now: datetime | None) -> float | None:
    if now is None:
        return None
    try:
        return epoch_seconds - as_utc(now).timestamp()
    except (OverflowError, ValueError, OSError):
        return None


def _retry_after(value: str, now: datetime | None) -> float | None:
    seconds = parse_number(value)
    if seconds is not None:
        return seconds
    moment = parse_http_date(value)
    if moment is None or now is None:
        return None
    return seconds_until(moment, now)


def _reset_value(spec: ResetSpec, value: str, now: datetime | None) -> float | None:
    if spec.format == "rfc3339":
        moment = parse_rfc3339(value)
        return None if moment is None or now is None else seconds_until(moment, now)
    if spec.format == "epoch_seconds":
        number = parse_number(value)
        return None if number is None else _epoch_delay(number, now)
    if spec.format == "milliseconds":
        number = parse_number(value)
        return None if number is None else number / 1000.0
    number = parse_number(value)
    if number is None:
        return parse_duration(value)
    if number > _EPOCH_MS:
        return _epoch_delay(number / 1000.0, now)
    if number > _EPOCH_S:
        return _epoch_delay(number, now)
    return number


def _reset_headers(
    headers: Mapping[str, str], table: RetryTable, now: datetime | None
) -> float | None:
    exhausted: list[float] = []
    others: list[float] = []
    for name, value in headers.items():
        spec = next((spec for spec in table.reset_specs if spec.pattern.search(name)), None)
        if spec is None:
            continue
        delay = _usable(_reset_value(spec, value, now))
        if delay is None:
            continue
        remaining = parse_number(headers.get(name.replace("reset", "remaining", 1), ""))
        (exhausted if remaining == 0 else others).append(delay)
    if exhausted:
        return max(exhausted)
    return max(others) if others else None


def _message_hint(texts: Sequence[str], table: RetryTable, max_chars: int) -> float | None:
    for pattern in table.message_hints:
        for text in texts:
            match = pattern.search(text[:max_chars])
            if match is not None:
                # A Go-style duration, or plain seconds where the pattern matched the
                # unit itself (Azure's "Please retry after 6 seconds.").
                group = match.group(1)
                parsed = parse_duration(group)
                delay = _usable(parsed if parsed is not None else parse_number(group))
                if delay is not None:
                    return delay
    return None


def delay_from(
    headers: Mapping[str, str],
    details: ErrorDetails,
    texts: Sequence[str],
    now: datetime | None,
    *,
    max_chars: int = 8192,
) -> float | None:
    """The precedence walk over already-normalised inputs (shared with classify)."""
    table = retry_table()
    for source in table.sources:
        if source == "retry_after_ms":
            raw = parse_number(headers.get(table.retry_after_ms_header, ""))
            delay = _usable(None if raw is None else raw / 1000.0)
        elif source == "retry_after":
            raw_header = headers.get(table.retry_after_header)
            delay = _usable(None if raw_header is None else _retry_after(raw_header, now))
        elif source == "retry_info":
            delay = _usable(
                None if details.retry_delay is None else parse_duration(details.retry_delay)
            )
        elif source == "reset_headers":
            delay = _reset_headers(headers, table, now)
        else:
            delay = _message_hint(texts, table, max_chars)
        if delay is not None:
            return min(delay, table.max_delay_s)
    return None


def retry_delay(
    headers: HeaderInput, body: object = None, *, now: datetime | None = None
) -> float | None:
    """Seconds to wait before retrying, or None when the server gave no usable hint.

    ``now`` converts absolute hints (an HTTP-date ``retry-after``, RFC 3339 or epoch reset
    headers); without it those hints are skipped, because this package reads no clock. Never
    raises and never returns a negative, zero or non-finite number.
    """
    details = error_details_from_body(body)
    return delay_from(normalize_headers(headers), details, details.texts, now)
