"""One classifier for every provider error, so that no consumer string-matches on its own.

Signals are read in a fixed order (specs/errors.md, "Precedence"): a veto rules overflow out;
overflow (stop reason, type or code, message pattern, the empty-body rule) comes next; then
the first matching rule of ``specs/retry.yaml``; ``x-should-retry`` last adjusts
retryability. Everything here is a pure function of its arguments: no clock, no I/O, and no
exception escapes, whatever the input.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict, Unpack

from stream_harness.contract.events import AssistantMessage, ErrorInfo, ErrorKind
from stream_harness.errors.body import ErrorDetails, details_from_message, error_details_from_body
from stream_harness.errors.delay import delay_from
from stream_harness.errors.headers import HeaderInput, normalize_headers, should_retry
from stream_harness.errors.tables import OverflowTable, Rule, overflow_table, retry_table

# Headers that carry an exception name: Bedrock's HTTP header, and the AWS event-stream
# frame headers of an exception (``:exception-type``) or error (``:error-code``) message.
_TYPE_HEADERS = ("x-amzn-errortype", ":exception-type", ":error-code")
_MESSAGE_HEADERS = (":error-message",)


@dataclass(frozen=True, slots=True)
class _Signals:
    """Everything the tables are matched against, normalised once."""

    status: int | None
    provider_type: str | None
    code: str | None
    identifiers: frozenset[str]  # provider type, code, Gemini reasons and quota ids, lower-cased
    quota_ids: tuple[str, ...]
    texts: tuple[str, ...]
    stop_reason: str | None
    protocol: str | None


def _error_status(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 400 <= value <= 599:
        return value
    return None


def _received_empty(body: object) -> bool:
    """A body was received and it is empty (None means the caller did not pass one)."""
    if isinstance(body, str | bytes | bytearray):
        return not body.strip()
    if isinstance(body, memoryview):
        return not bytes(body).strip()
    return False


def _header_type(headers: Mapping[str, str]) -> str | None:
    for name in _TYPE_HEADERS:
        value = headers.get(name, "").split(":", 1)[0].strip()
        if value:
            return value
    return None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _signals(
    status: object,
    message: object,
    body: object,
    headers: Mapping[str, str],
    provider_stop_reason: object,
    protocol: object,
    max_chars: int,
) -> tuple[_Signals, ErrorDetails]:
    text = _text(message)
    details = error_details_from_body(body)
    if details.empty and text is not None:
        details = details_from_message(text)
    provider_type = details.provider_type or _header_type(headers)
    texts = [text, details.message, *details.extra_messages]
    texts += [headers.get(name) for name in _MESSAGE_HEADERS]
    unique = tuple(dict.fromkeys(t[:max_chars] for t in texts if t))
    identifiers = {provider_type, details.code, *details.reasons, *details.quota_ids}
    stop = _text(provider_stop_reason)
    proto = _text(protocol)
    signals = _Signals(
        status=_error_status(status) or _error_status(details.status),
        provider_type=provider_type,
        code=details.code,
        identifiers=frozenset(i.lower() for i in identifiers if i),
        quota_ids=details.quota_ids,
        texts=unique,
        stop_reason=stop.strip().lower() if stop else None,
        protocol=proto.strip().lower() if proto else None,
    )
    return signals, details


def _any_match(patterns: Sequence[re.Pattern[str]], texts: Sequence[str]) -> bool:
    return any(p.search(t) for p in patterns for t in texts)


def _vetoed(signals: _Signals, table: OverflowTable) -> bool:
    return (
        _any_match(table.vetoes, signals.texts)
        or bool(signals.identifiers & table.veto_types)
        or signals.status in table.veto_statuses
    )


def _no_body_text(
    signals: _Signals, status: object, message: object, body: object, table: OverflowTable
) -> str | None:
    """pi's Cerebras rule: an empty 400/413 reads as the SDK's "<status> status code (no body)".

    Only for a body that was received empty (``b""``), not for one the caller left out, and
    only for the protocols of the table (or an unknown one), so that a bare ``status=400``
    stays an ordinary fatal error.
    """
    http = _error_status(status)
    if (
        http is None
        or http not in table.no_body_statuses
        or _text(message)
        or not _received_empty(body)
    ):
        return None
    if signals.protocol is not None and signals.protocol not in table.no_body_protocols:
        return None
    return f"{http} status code (no body)"


def _is_overflow(signals: _Signals, no_body: str | None, table: OverflowTable) -> bool:
    if _vetoed(signals, table):
        return False
    if signals.stop_reason in table.overflow_stop_reasons:
        return True
    if signals.identifiers & table.overflow_types:
        return True
    texts = (*signals.texts, no_body) if no_body else signals.texts
    return _any_match(table.patterns, texts)


def _rule_matches(rule: Rule, signals: _Signals) -> bool:
    if rule.protocols is not None and signals.protocol not in rule.protocols:
        return False
    if rule.types is not None and (signals.provider_type or "").lower() not in rule.types:
        return False
    if rule.codes is not None and not (signals.identifiers & rule.codes):
        return False
    if rule.statuses is not None and (
        signals.status is None or not any(signals.status in r for r in rule.statuses)
    ):
        return False
    if rule.quota_ids is not None and not _any_match([rule.quota_ids], signals.quota_ids):
        return False
    if rule.stop_reasons is not None and signals.stop_reason not in rule.stop_reasons:
        return False
    return rule.message is None or _any_match([rule.message], signals.texts)


def _kind(signals: _Signals) -> ErrorKind:
    for rule in retry_table().rules:
        if _rule_matches(rule, signals):
            return rule.kind
    return "fatal"


def classify(
    *,
    status: int | None = None,
    message: str | None = None,
    body: bytes | str | Mapping[str, object] | object = None,
    headers: HeaderInput = None,
    provider_stop_reason: str | None = None,
    protocol: str | None = None,
    now: datetime | None = None,
) -> ErrorInfo:
    """Classify one provider error into the contract's :class:`ErrorInfo`.

    ``status`` is the HTTP status (a 2xx status is ignored: a mid-stream error's status is the
    one in its body, if any). ``body`` is the raw error body or one parsed error event.
    ``protocol`` is the protocol id of stream_harness.providers (``anthropic-messages``,
    ``openai-completions``, ...), used only by table rows restricted to a protocol. ``now``
    converts absolute retry hints; without it they are ignored. Never raises.
    """
    table = overflow_table()
    normalized = normalize_headers(headers)
    signals, details = _signals(
        status, message, body, normalized, provider_stop_reason, protocol, table.max_match_chars
    )
    no_body = _no_body_text(signals, status, message, body, table)
    kind: ErrorKind = "overflow" if _is_overflow(signals, no_body, table) else _kind(signals)
    retryable = retry_table().retryable[kind]
    override = should_retry(normalized)
    if override is not None and kind != "overflow":
        # The server's explicit word beats the status rule (Stainless), except that an
        # overflow is never resent unchanged: compaction, not a retry, fixes it.
        retryable = override
        if override and kind == "fatal":
            kind = "transient"
    nows = now if isinstance(now, datetime) else None
    return ErrorInfo(
        kind=kind,
        status=signals.status,
        provider_type=signals.provider_type,
        code=signals.code,
        retryable=retryable,
        retry_after=delay_from(
            normalized, details, signals.texts, nows, max_chars=table.max_match_chars
        ),
    )


class ErrorSignals(TypedDict, total=False):
    """What :func:`classify` reads, as keywords a wrapper can pass on unchanged."""

    status: int | None
    message: str | None
    body: object
    headers: HeaderInput
    provider_stop_reason: str | None
    protocol: str | None


def is_retryable(**signals: Unpack[ErrorSignals]) -> bool:
    """``classify(...).retryable``, for callers that need only the yes/no."""
    return classify(**signals).retryable


def is_context_overflow(
    message: AssistantMessage, context_window: int | None = None, *, error: ErrorInfo | None = None
) -> bool:
    """Did this assistant turn overflow the context window (so the loop should compact)?

    True for an overflow error (``error`` from the terminal event when given, else the
    message's own error text), for an overflow stop reason (``model_context_window_exceeded``
    even though it ends the stream as ``length``), and, with ``context_window``, for pi's
    silent overflow (``stop`` with input + cache reads above the window) and truncation
    overflow (``length`` with no output and input + cache reads at 99% of the window).
    """
    table = overflow_table()
    stop = (message.provider_stop_reason or "").strip().lower()
    if stop in table.overflow_stop_reasons:
        return True
    if error is not None:
        if error.kind == "overflow":
            return True
    elif message.stop_reason == "error" and message.error_message:
        if classify(message=message.error_message).kind == "overflow":
            return True
    if (
        not isinstance(context_window, int)
        or isinstance(context_window, bool)
        or context_window <= 0
    ):
        return False
    used = message.usage.input + message.usage.cache_read
    if message.stop_reason == "stop":
        return used > context_window
    if message.stop_reason == "length":
        return message.usage.output == 0 and used >= table.truncation_ratio * context_window
    return False
