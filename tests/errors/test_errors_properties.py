"""Properties of the classifier on arbitrary input: it never raises, vetoes always win, and
delays are never negative. Deterministic under the CI profile; sizes kept small for 2 cores.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from stream_harness.contract import facts
from stream_harness.errors import classify, error_details_from_body, retry_delay
from stream_harness.errors.body import MAX_TEXT_LINE
from stream_harness.errors.tables import retry_table

OVERFLOW = facts.load_yaml("overflow.yaml")
VETOES = [re.compile(v["regex"], re.IGNORECASE) for v in OVERFLOW["vetoes"]]


def _vetoed(text: str) -> bool:
    return any(v.search(text) for v in VETOES)


# Veto phrases and overflow phrases are the table's own rows.
VETO_PHRASES = sorted(
    {
        case["message"]
        for case in OVERFLOW["cases"]
        if case["expected"] == "not_overflow" and case.get("message") and _vetoed(case["message"])
    }
)
OVERFLOW_PHRASES = sorted(
    {
        case["message"]
        for case in OVERFLOW["cases"]
        if case["expected"] == "overflow" and case.get("message")
    }
)
HEADER_NAMES = [
    "retry-after",
    "retry-after-ms",
    "x-should-retry",
    "anthropic-ratelimit-tokens-reset",
    "anthropic-ratelimit-tokens-remaining",
    "anthropic-ratelimit-unified-reset",
    "x-ratelimit-reset-tokens",
    "x-ratelimit-remaining-tokens",
    "x-ratelimit-reset",
    "x-ratelimit-reset-ms",
    "x-amzn-errortype",
    ":exception-type",
    ":error-message",
]
BODY_KEYS = [
    "error",
    "message",
    "type",
    "code",
    "status",
    "details",
    "response",
    "choices",
    "metadata",
    "raw",
    "@type",
    "retryDelay",
    "violations",
    "quotaId",
    "reason",
    "__type",
    "Message",
    "raw_status_code",
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(BODY_KEYS) | st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=20,
)
header_values = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "0",
            "-1",
            "1.5",
            "nan",
            "inf",
            "1e309",
            "6m0s",
            "12ms",
            "Wed, 21 Oct 2015 07:28:00 GMT",
            "2024-03-26T20:00:00Z",
            "99999999999999",
            "true",
            "false",
        ]
    ),
    st.lists(st.text(max_size=10), max_size=3),
    st.binary(max_size=20),
    st.integers(),
    st.none(),
)
headers_strategy = st.dictionaries(
    st.sampled_from(HEADER_NAMES) | st.text(max_size=12), header_values, max_size=6
)
bodies = st.one_of(
    st.none(),
    st.binary(max_size=200),
    st.text(max_size=200),
    json_values,
    json_values.map(lambda value: json.dumps(value)),
)
nows = st.one_of(
    st.none(),
    st.datetimes(),  # naive: taken as UTC
    st.datetimes(
        timezones=st.sampled_from(
            [UTC, timezone(timedelta(hours=-12)), timezone(timedelta(hours=14))]
        )
    ),
)
statuses = st.one_of(
    st.none(),
    st.integers(),
    st.sampled_from([200, 400, 408, 409, 413, 429, 500, 502, 503, 529]),
    st.booleans(),
)

PROFILE = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROFILE
@given(
    status=statuses,
    message=st.one_of(st.none(), st.text(max_size=200)),
    body=bodies,
    headers=st.one_of(st.none(), headers_strategy),
    stop=st.one_of(
        st.none(),
        st.text(max_size=20),
        st.sampled_from(["model_context_window_exceeded", "network_error"]),
    ),
    protocol=st.one_of(
        st.none(),
        st.sampled_from(["openai-completions", "anthropic-messages", "google-generative-ai"]),
        st.text(max_size=10),
    ),
    now=nows,
)
def test_classify_never_raises(
    status: Any, message: Any, body: Any, headers: Any, stop: Any, protocol: Any, now: Any
) -> None:
    info = classify(
        status=status,
        message=message,
        body=body,
        headers=headers,
        provider_stop_reason=stop,
        protocol=protocol,
        now=now,
    )
    if info.kind in {"overflow", "fatal"}:
        assert info.retryable is False
    if info.status is not None:
        assert 400 <= info.status <= 599
    if info.retry_after is not None:
        assert 0 < info.retry_after <= retry_table().max_delay_s


@PROFILE
@given(headers=st.one_of(st.none(), headers_strategy), body=bodies, now=nows)
def test_retry_delay_is_never_negative_and_never_raises(headers: Any, body: Any, now: Any) -> None:
    delay = retry_delay(headers, body, now=now)
    if delay is not None:
        assert math.isfinite(delay)
        assert 0 < delay <= retry_table().max_delay_s


@PROFILE
@given(
    prefix=st.text(max_size=40),
    overflow=st.sampled_from(OVERFLOW_PHRASES),
    veto=st.sampled_from(VETO_PHRASES),
    suffix=st.text(max_size=40),
    veto_first=st.booleans(),
    status=st.one_of(st.none(), st.sampled_from([400, 413, 429, 500])),
    as_body=st.booleans(),
    stop=st.one_of(st.none(), st.just("model_context_window_exceeded")),
)
def test_a_message_matching_a_veto_is_never_overflow(
    prefix: str,
    overflow: str,
    veto: str,
    suffix: str,
    veto_first: bool,
    status: Any,
    as_body: bool,
    stop: Any,
) -> None:
    parts = [veto, overflow] if veto_first else [overflow, veto]
    text = " ".join([prefix, *parts, suffix])
    # An anchored veto (pi's "^Throttling error:") only vetoes at the start of the text.
    assume(_vetoed(text))
    if as_body:
        # Even an overflow code in the same body does not outvote the veto.
        body = {"error": {"message": text, "code": "context_length_exceeded"}}
        info = classify(status=status, body=body, provider_stop_reason=stop)
    else:
        info = classify(status=status, message=text, provider_stop_reason=stop)
    assert info.kind != "overflow"


@PROFILE
@given(
    prefix=st.text(max_size=40),
    overflow=st.sampled_from(OVERFLOW_PHRASES),
    suffix=st.text(max_size=40),
)
def test_overflow_phrases_survive_surrounding_text(prefix: str, overflow: str, suffix: str) -> None:
    # pi's Cerebras pattern is anchored at the start of the text, so it gets no prefix.
    anchored = re.match(r"4(?:00|13) status code", overflow) is not None
    text = " ".join([overflow, suffix] if anchored else [prefix, overflow, suffix])
    assume(not _vetoed(text))
    assert classify(message=text).kind == "overflow"


@PROFILE
@given(body=st.one_of(st.binary(max_size=2000), st.text(max_size=2000)))
def test_text_bodies_give_one_bounded_line(body: bytes | str) -> None:
    details = error_details_from_body(body)
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    is_structured = text.lstrip("\ufeff").lstrip().startswith(("{", "[")) or "data:" in text
    if details.message is not None and not is_structured:
        assert 0 < len(details.message) <= MAX_TEXT_LINE
        assert "\n" not in details.message
        assert details.message == details.message.strip()


@pytest.mark.parametrize(
    "now",
    [
        datetime.min,
        datetime.max,
        datetime.min.replace(tzinfo=UTC),
        datetime.max.replace(tzinfo=UTC),
        datetime(1970, 1, 1),
        datetime(2026, 1, 1, 0, 0, 59, tzinfo=timezone(timedelta(hours=14))),
    ],
)
def test_extreme_clocks(now: datetime) -> None:
    headers = {
        "x-ratelimit-reset": "1767225660",
        "anthropic-ratelimit-tokens-reset": "2026-01-01T00:01:00Z",
        "retry-after": "Thu, 01 Jan 2026 00:01:00 GMT",
    }
    delay = retry_delay(headers, now=now)
    assert delay is None or 0 < delay <= retry_table().max_delay_s
    assert classify(status=429, headers=headers, now=now).kind == "rate_limit"
