"""The provider's own words from an error body, whatever shape the provider used.

Every provider wraps its message differently (Anthropic ``{"type":"error","error":{...}}``,
OpenAI ``{"error":{message,type,code,param}}``, Responses events with the error nested or at
the top level, ``response.failed``, Gemini ``{"error":{code,message,status,details}}`` also
inside a JSON array, Bedrock ``{"message"}``/``{"Message"}`` with ``__type``, OpenRouter
``metadata.raw`` and in-band ``choices[].error``, vLLM/Mistral ``{"object":"error",...}``,
Ollama ``{"error": "text"}``, plain text and HTML). Finding the message once, here, is what
lets the classifier and every normalizer show the same text. Nothing in this module raises:
an unreadable body gives an empty :class:`ErrorDetails`.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from stream_harness.contract.partial_json import parse_partial

# Plain-text and HTML bodies are reduced to one line of at most this many characters: enough
# to identify a proxy's error page, short enough to put in an error message.
MAX_TEXT_LINE = 300
# How deep to follow JSON nested in JSON (gemini-cli wraps the whole body in error.message).
_MAX_DEPTH = 4
# Bodies larger than this are not scanned for SSE lines or embedded JSON; a real error body
# is small, and this keeps the work bounded on a pathological input.
_MAX_SCAN = 1 << 20
# A plain-text body's readable line is near its start; only this much of it is looked at.
_MAX_TEXT_SCAN = 1 << 16

_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
# Where markup a browser does not show begins: a script, a style sheet, a comment.
_HIDDEN = re.compile(r"<(script|style)\b|<!--", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ErrorDetails:
    """What an error body says, field by field; every field is optional.

    ``status`` is a status found inside the body (Gemini ``error.code``, OpenRouter's numeric
    ``code``, vLLM ``code``, Mistral ``raw_status_code``), which is the only status a
    mid-stream error has. ``status_text`` is a textual status (Gemini ``error.status``).
    ``code`` is the provider's machine-readable code: OpenAI ``error.code``, Anthropic
    ``error.details.error_code``, Mistral ``code``, else Gemini's first QuotaFailure
    ``quotaId`` or ErrorInfo ``reason``. ``retry_delay`` is Gemini's raw
    ``RetryInfo.retryDelay``. ``extra_messages`` are further texts worth matching
    (OpenRouter's upstream ``metadata.raw``).
    """

    message: str | None = None
    provider_type: str | None = None
    code: str | None = None
    status: int | None = None
    status_text: str | None = None
    param: str | None = None
    reasons: tuple[str, ...] = ()
    quota_ids: tuple[str, ...] = ()
    retry_delay: str | None = None
    extra_messages: tuple[str, ...] = field(default=())

    @property
    def texts(self) -> tuple[str, ...]:
        first = (self.message,) if self.message else ()
        return first + self.extra_messages

    @property
    def empty(self) -> bool:
        return self == _EMPTY


_EMPTY = ErrorDetails()


def _str(value: object) -> str | None:
    if isinstance(value, str) and value.strip():
        return value
    return None


def _int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _bedrock_type(value: str) -> str:
    """``com.amazon.coral.validate#ValidationException`` or ``X:http://...`` -> the bare name."""
    return value.rsplit("#", 1)[-1].split(":", 1)[0].strip()


def _looks_like_json(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith(("{", "["))


def _loads(text: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


# Bodies larger than this are not repaired when not strict JSON: a real error body is a few
# hundred bytes, and partial parsing of a hostile megabyte (1 MB of quotes) took 22 s.
_MAX_LENIENT = 1 << 14
# A JSON string, or a comma with only whitespace before a closing bracket: the strings are
# matched first so that a ", ]" inside a message is left alone.
_TRAILING_COMMA = re.compile(r'("(?:[^"\\]|\\.)*")|,(\s*[\]}])')


def _loads_body(text: str) -> object:
    """A whole error body that is JSON or almost JSON: strict first, then without trailing
    commas (``[{"error": {...}},\n]``, as recorded from a Vertex AI endpoint), then
    completed where it was cut off (a JSON array stream that ended early). Otherwise the
    reader would fall back to the body's first line, ``[``, and the message would be lost.
    """
    value = _loads(text)
    if value is not None or len(text) > _MAX_LENIENT:
        return value
    relaxed = _TRAILING_COMMA.sub(lambda m: m.group(1) or m.group(2), text)
    value = _loads(relaxed) if relaxed != text else None
    if value is not None:
        return value
    partial = parse_partial(relaxed)
    return partial if partial not in ({}, [], None) else None


def _merge(outer: ErrorDetails, inner: ErrorDetails) -> ErrorDetails:
    """Inner (the wrapped, original error) wins; the wrapper only fills what the inner lacks."""
    filled = {
        name: getattr(inner, name) or getattr(outer, name)
        for name in (
            "message",
            "provider_type",
            "code",
            "status",
            "status_text",
            "param",
            "reasons",
            "quota_ids",
            "retry_delay",
            "extra_messages",
        )
    }
    return replace(inner, **filled)


def _google_details(details: object) -> tuple[tuple[str, ...], tuple[str, ...], str | None]:
    reasons: list[str] = []
    quota_ids: list[str] = []
    retry_delay: str | None = None
    if not isinstance(details, Sequence) or isinstance(details, str | bytes):
        return (), (), None
    for item in list(details)[:32]:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("@type")
        kind = kind if isinstance(kind, str) else ""
        if kind.endswith("RetryInfo"):
            retry_delay = retry_delay or _str(item.get("retryDelay"))
        elif kind.endswith("QuotaFailure"):
            violations = item.get("violations")
            if isinstance(violations, Sequence) and not isinstance(violations, str | bytes):
                for violation in list(violations)[:32]:
                    if isinstance(violation, Mapping) and (quota := _str(violation.get("quotaId"))):
                        quota_ids.append(quota)
        elif (reason := _str(item.get("reason"))) is not None:
            reasons.append(reason)
    return tuple(reasons), tuple(quota_ids), retry_delay


def _legacy_google_reasons(errors: object) -> tuple[str, ...]:
    """Google's older ``error.errors[].reason`` (``rateLimitExceeded``)."""
    if not isinstance(errors, Sequence) or isinstance(errors, str | bytes):
        return ()
    return tuple(
        reason
        for item in list(errors)[:32]
        if isinstance(item, Mapping) and (reason := _str(item.get("reason"))) is not None
    )


def _from_error_object(err: Mapping[object, object], depth: int) -> ErrorDetails:
    """The object under an ``error`` key (every JSON-speaking provider has one)."""
    message = _str(err.get("message"))
    provider_type = _str(err.get("type"))
    status_text = _str(err.get("status"))
    raw_code = err.get("code")
    code = _str(raw_code)
    status = _int(raw_code)
    anthropic_details = err.get("details")
    if code is None and isinstance(anthropic_details, Mapping):
        code = _str(anthropic_details.get("error_code"))
    reasons, quota_ids, retry_delay = _google_details(anthropic_details)
    reasons = reasons + _legacy_google_reasons(err.get("errors"))
    if code is None:
        code = quota_ids[0] if quota_ids else (reasons[0] if reasons else None)
    extra: list[str] = []
    metadata = err.get("metadata")
    if isinstance(metadata, Mapping) and (raw := _str(metadata.get("raw"))) is not None:
        inner_raw = _from_json(_loads(raw), depth + 1) if _looks_like_json(raw) else None
        extra.append(inner_raw.message if inner_raw and inner_raw.message else raw)
    details = ErrorDetails(
        message=message,
        provider_type=provider_type or status_text,
        code=code,
        status=status,
        status_text=status_text,
        param=_str(err.get("param")),
        reasons=reasons,
        quota_ids=quota_ids,
        retry_delay=retry_delay,
        extra_messages=tuple(extra),
    )
    if message is not None and _looks_like_json(message) and depth < _MAX_DEPTH:
        inner = _from_json(_loads(message), depth + 1)
        if inner is not None and not inner.empty:
            return _merge(details, inner)
    return details


def _validation_detail(detail: object) -> str | None:
    """FastAPI's 422 ``{"detail": [{loc, msg, type}]}`` (Mistral, vLLM) as one line.

    Each entry reads ``body.messages: Field required``; at most three, so that a request
    with many bad fields gives a short message.
    """
    if not isinstance(detail, Sequence) or isinstance(detail, str | bytes | bytearray):
        return None
    parts: list[str] = []
    for item in list(detail)[:3]:
        if not isinstance(item, Mapping):
            continue
        msg = _str(item.get("msg"))
        if msg is None:
            continue
        loc = item.get("loc")
        where = (
            ".".join(str(x) for x in loc if isinstance(x, str | int))
            if isinstance(loc, Sequence) and not isinstance(loc, str | bytes | bytearray)
            else ""
        )
        parts.append(f"{where}: {msg}" if where else msg)
    return "; ".join(parts) or None


def _from_flat(value: Mapping[object, object]) -> ErrorDetails:
    """Shapes without an ``error`` object: Bedrock, Cohere, vLLM/Mistral, Responses events."""
    message = (
        _str(value.get("message"))
        or _str(value.get("Message"))
        or _str(value.get("detail"))
        or _validation_detail(value.get("detail"))
    )
    bedrock_type = _str(value.get("__type"))
    provider_type = _bedrock_type(bedrock_type) if bedrock_type else None
    if provider_type is None:
        declared = _str(value.get("type"))
        # "error" is the envelope's own type (Anthropic, Responses), not an error kind.
        provider_type = declared if declared and declared != "error" else None
    raw_code = value.get("code")
    status = _int(value.get("raw_status_code")) or _int(raw_code)
    return ErrorDetails(
        message=message,
        provider_type=provider_type,
        code=_str(raw_code),
        status=status,
        param=_str(value.get("param")),
    )


def _from_json(value: object, depth: int = 0) -> ErrorDetails | None:
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray):
        for item in list(value[:8]):
            found = _from_json(item, depth + 1)
            if found is not None and not found.empty:
                return found
        return None
    if not isinstance(value, Mapping):
        return None
    err = value.get("error")
    if isinstance(err, Mapping):
        return _from_error_object(err, depth)
    if (text := _str(err)) is not None:
        # Ollama and some proxies: {"error": "message"}.
        flat = _from_flat(value)
        return replace(flat, message=text)
    response = value.get("response")
    if isinstance(response, Mapping) and isinstance(response.get("error"), Mapping):
        # Responses ``response.failed``: the error sits on the response object.
        return _from_error_object(response["error"], depth)
    choices = value.get("choices")
    if isinstance(choices, Sequence) and not isinstance(choices, str | bytes):
        for choice in list(choices)[:8]:
            if isinstance(choice, Mapping) and isinstance(choice.get("error"), Mapping):
                # OpenRouter in-band error: choices[0].error{code, message}.
                return _from_error_object(choice["error"], depth)
    flat = _from_flat(value)
    return None if flat.empty else flat


def _sse_payloads(text: str) -> list[object]:
    """``data:`` payloads of an SSE error body (a proxy may answer with a one-event stream)."""
    payloads: list[object] = []
    for line in text.splitlines():
        if line.startswith("data:"):
            data = line[5:].strip()
            if data and _looks_like_json(data):
                payloads.append(_loads(data))
    return payloads


def _visible(markup: str) -> str:
    """The markup without what a browser does not show: scripts, style sheets, comments.

    A page without a title would otherwise give its first CSS rule or script line as the
    message. One pass with ``str.find`` for each end, so an unclosed ``<style`` costs one
    scan, not one per later tag.
    """
    lower = markup.lower()
    parts: list[str] = []
    pos = 0
    while (found := _HIDDEN.search(markup, pos)) is not None:
        parts.append(markup[pos : found.start()])
        if found.group(1) is None:  # a comment
            end = lower.find("-->", found.end())
            pos = len(markup) if end < 0 else end + 3
        else:
            end = lower.find(f"</{found.group(1).lower()}", found.end())
            close = -1 if end < 0 else lower.find(">", end)
            pos = len(markup) if close < 0 else close + 1
    parts.append(markup[pos:])
    return "\n".join(parts)


def _first_line(text: str) -> str | None:
    for line in text.splitlines():
        line = " ".join(line.split())
        if line:
            return line[:MAX_TEXT_LINE]
    return None


def _text_line(text: str) -> str | None:
    """One readable line of a plain-text or HTML body.

    For HTML, the page's ``<title>`` (what a load balancer puts its status in), else its
    first line of visible text (an ``<h1>``, Azure Front Door's ``<h2>`` fragment), with
    character references decoded: the meaningful words, never the markup.
    """
    if "<" in text and ">" in text:
        title = _TITLE.search(text)
        if title is not None and (line := _first_line(html.unescape(title.group(1)))):
            return line
        return _first_line(html.unescape(_TAG.sub("\n", _visible(text))))
    return _first_line(text)


def _decode(body: object) -> object:
    if isinstance(body, bytes | bytearray | memoryview):
        body = bytes(body).decode("utf-8", errors="replace")
    if isinstance(body, str):
        return body.lstrip("\ufeff")
    return body


def error_details_from_body(body: bytes | str | Mapping[str, object] | object) -> ErrorDetails:
    """The message, type, code and status a provider put in an error body; never raises."""
    value = _decode(body)
    if value is None:
        return _EMPTY
    if not isinstance(value, str):
        return _from_json(value) or _EMPTY
    if not value.strip():
        return _EMPTY
    if len(value) <= _MAX_SCAN:
        if _looks_like_json(value):
            parsed = _from_json(_loads_body(value))
            if parsed is not None:
                return parsed
        if "data:" in value:
            for payload in _sse_payloads(value):
                found = _from_json(payload)
                if found is not None:
                    return found
    return ErrorDetails(message=_text_line(value[:_MAX_TEXT_SCAN]))


def details_from_message(message: str) -> ErrorDetails:
    """A JSON body embedded in an SDK message (``"429 {\\"type\\":\\"error\\",...}"``)."""
    start = message.find("{")
    end = message.rfind("}")
    if start < 0 or end <= start or end - start > _MAX_SCAN:
        return _EMPTY
    return _from_json(_loads(message[start : end + 1])) or _EMPTY
