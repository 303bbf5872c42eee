"""Parsers for the time formats that retry hints come in; each returns None instead of raising.

Go durations (``6m0s``, ``12ms``, ``1h2m3.5s``: OpenAI's ``x-ratelimit-reset-*``) and
protobuf durations (``45.837906927s``: Gemini's ``RetryInfo``) share one grammar, so one
parser serves both. Absolute times (HTTP-date, RFC 3339, epoch numbers) become a delay
only against a caller-supplied ``now``: the package never reads a clock, which keeps
classification a pure function of its inputs (and replays deterministic).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

# Go's time.ParseDuration units; both micro signs are accepted, as Go does.
_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,  # U+00B5 MICRO SIGN
    "μs": 1e-6,  # U+03BC GREEK SMALL LETTER MU
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION = re.compile(r"[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+")
# A plain decimal number; stricter than float(), which also takes "nan", "inf" and "1_0".
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
# Longer strings are junk for every format here; refusing them early bounds the work.
_MAX_LEN = 64


def parse_number(text: str) -> float | None:
    text = text.strip()
    if len(text) > _MAX_LEN or not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def parse_duration(text: str) -> float | None:
    """Seconds of a Go/protobuf duration (``"0"`` is zero); None when it is not one."""
    text = text.strip()
    if len(text) > _MAX_LEN:
        return None
    if text in {"0", "+0", "-0"}:
        return 0.0
    if not _DURATION.fullmatch(text):
        return None
    sign = -1.0 if text.startswith("-") else 1.0
    total = sum(float(number) * _UNIT_SECONDS[unit] for number, unit in _PART.findall(text))
    return sign * total if math.isfinite(total) else None


def as_utc(moment: datetime) -> datetime:
    """Naive datetimes are taken as UTC (HTTP dates and reset headers are always UTC)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def parse_http_date(text: str) -> datetime | None:
    if len(text) > _MAX_LEN:
        return None
    try:
        return as_utc(parsedate_to_datetime(text))
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def parse_rfc3339(text: str) -> datetime | None:
    if len(text) > _MAX_LEN:
        return None
    try:
        return as_utc(datetime.fromisoformat(text.strip()))
    except ValueError:
        return None


def seconds_until(moment: datetime, now: datetime) -> float | None:
    try:
        return (as_utc(moment) - as_utc(now)).total_seconds()
    except (OverflowError, ValueError):
        return None
