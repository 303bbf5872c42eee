"""Backoff and the server's wait hints, as the loop uses them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from stream_harness.contract.events import ErrorInfo
from stream_harness.loop.retry import RetryPolicy, backoff_delay, decide_delay

NOW = datetime(2026, 3, 2, 10, 15, 0, tzinfo=UTC)
RATE_LIMIT = ErrorInfo(kind="rate_limit", status=429, retryable=True)


def test_defaults_are_seed_000s_numbers() -> None:
    """seeds/000 SessionRetry: base 2000 ms, doubling, max 60000 ms; ``attempt < 5``."""
    policy = RetryPolicy()
    assert (policy.max_retries, policy.base, policy.factor, policy.cap) == (5, 2.0, 2.0, 60.0)
    assert policy.kinds == ("rate_limit", "overloaded", "transient")
    assert policy.message_patterns == ("timeout",)
    assert policy.network is True


def test_backoff_doubles_from_2_s_and_caps_at_60_s() -> None:
    policy = RetryPolicy()
    assert [backoff_delay(policy, n) for n in range(1, 8)] == [
        2.0,
        4.0,
        8.0,
        16.0,
        32.0,
        60.0,
        60.0,
    ]


def test_backoff_never_overflows() -> None:
    assert backoff_delay(RetryPolicy(base=1.0, factor=10.0, cap=60.0), 10_000) == 60.0


def test_policy_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(factor=0.5)
    with pytest.raises(ValueError):
        RetryPolicy(max_retries=-1)


@pytest.mark.parametrize(
    ("headers", "expected", "hinted"),
    [
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5, True),  # ms wins (Stainless)
        ({"retry-after": "2"}, 2.0, True),  # opencode check 7: 2 -> 2000 ms
        ({"retry-after": "Mon, 02 Mar 2026 10:15:07 GMT"}, 7.0, True),  # an HTTP date, on our clock
        ({"retry-after": "Mon, 02 Mar 2026 10:14:00 GMT"}, 2.0, False),  # in the past: no hint
        ({"retry-after": "soon"}, 2.0, False),  # garbage: no hint
        ({"retry-after": "45"}, 45.0, True),  # below the 60 s cap: as the server said
        ({"retry-after": "600"}, 60.0, True),  # seed 000: Math.min(retryAfter, 60000 ms)
        ({"retry-after-ms": "90000"}, 60.0, True),  # retry-after-ms is capped the same way
        ({}, 2.0, False),
    ],
)
def test_hint_precedence(headers: dict[str, str], expected: float, hinted: bool) -> None:
    decision = decide_delay(RetryPolicy(), 1, RATE_LIMIT, headers=headers, body=None, now=NOW)
    assert (decision.delay, decision.hinted) == (expected, hinted)


def test_body_hint_when_headers_have_none() -> None:
    body = b'{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"quota","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12.5s"}]}}'
    decision = decide_delay(
        RetryPolicy(), 1, RATE_LIMIT, headers={"x-other": "1"}, body=body, now=NOW
    )
    assert (decision.delay, decision.hinted) == (12.5, True)


def test_error_info_hint_without_a_response() -> None:
    info = ErrorInfo(kind="overloaded", retryable=True, retry_after=3.0)
    assert decide_delay(RetryPolicy(), 2, info, headers=None, body=None, now=NOW).delay == 3.0
    plain = ErrorInfo(kind="overloaded", retryable=True)
    assert decide_delay(RetryPolicy(), 2, plain, headers=None, body=None, now=NOW).delay == 4.0


def test_error_info_hint_is_capped_too() -> None:
    info = ErrorInfo(kind="rate_limit", retryable=True, retry_after=3600.0)
    decision = decide_delay(RetryPolicy(), 1, info, headers=None, body=None, now=NOW)
    assert (decision.delay, decision.hinted) == (60.0, True)
    assert (
        decide_delay(RetryPolicy(cap=90.0), 1, info, headers=None, body=None, now=NOW).delay == 90.0
    )


FATAL = ErrorInfo(kind="fatal", retryable=False)


@pytest.mark.parametrize(
    ("info", "message", "network", "expected"),
    [
        (RATE_LIMIT, "rate limited", False, True),  # seed: rate_limit
        (ErrorInfo(kind="overloaded", retryable=True), "Overloaded", False, True),  # overloaded
        (ErrorInfo(kind="transient", status=500, retryable=True), "api_error", False, True),
        (FATAL, "Gateway Timeout while waiting", False, True),  # the message says timeout
        (FATAL, "httpx.ReadTimeout", False, True),  # case-insensitive
        (FATAL, "getaddrinfo ENOTFOUND api.example.com", True, True),  # network: DNS
        (FATAL, "[Errno 111] Connection refused", True, True),  # network: refused
        (FATAL, "invalid x-api-key", False, False),  # anything else: not retried
        (ErrorInfo(kind="overflow"), "prompt is too long; timeout", True, False),  # never
        # x-should-retry: false makes a transient error unretryable (the server's word).
        (ErrorInfo(kind="transient", status=500, retryable=False), "api_error", False, False),
    ],
)
def test_retryable_is_seed_000s_rule(
    info: ErrorInfo, message: str, network: bool, expected: bool
) -> None:
    assert RetryPolicy().retryable(info, message, network=network) is expected


def test_retryable_rule_is_configurable() -> None:
    strict = RetryPolicy(kinds=("rate_limit",), message_patterns=(), network=False)
    assert not strict.retryable(FATAL, "timeout", network=True)
    assert not strict.retryable(ErrorInfo(kind="overloaded", retryable=True), "x", network=False)
    assert strict.retryable(RATE_LIMIT, "x", network=False)
