"""Backoff and the server's wait hints, as the loop uses them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from harness.events import ErrorInfo
from harness.loop.retry import RetryPolicy, backoff_delay, decide_delay

NOW = datetime(2026, 3, 2, 10, 15, 0, tzinfo=UTC)
RATE_LIMIT = ErrorInfo(kind="rate_limit", status=429, retryable=True)


def test_backoff_doubles_from_2_s_and_caps_at_30_s() -> None:
    policy = RetryPolicy()
    assert [backoff_delay(policy, n) for n in range(1, 8)] == [
        2.0,
        4.0,
        8.0,
        16.0,
        30.0,
        30.0,
        30.0,
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
        ({"retry-after": "45"}, 45.0, True),  # above the 30 s cap: the server's word stands
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
