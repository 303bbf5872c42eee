"""specs/retry.yaml, row by row: retry delays from headers and bodies, and error kinds."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from error_rows import classify_row, row_now
from stream_harness.contract import facts
from stream_harness.contract.events import ErrorKind
from stream_harness.errors import classify, is_retryable, parse_duration, retry_delay
from stream_harness.errors.classify import _rule_matches, _signals
from stream_harness.errors.headers import normalize_headers
from stream_harness.errors.tables import retry_table

TABLE: dict[str, Any] = facts.load_yaml("retry.yaml")
HEADER_CASES: list[dict[str, Any]] = TABLE["header_cases"]
ERROR_CASES: list[dict[str, Any]] = TABLE["error_cases"]


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"{i:02d}") for i, c in enumerate(HEADER_CASES)]
)
def test_header_case(case: dict[str, Any]) -> None:
    got = retry_delay(case.get("headers"), case.get("body"), now=row_now(case))
    if case["expected"] is None:
        assert got is None
    else:
        assert got == pytest.approx(case["expected"], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, id=f"{i:02d}-{c['provider']}") for i, c in enumerate(ERROR_CASES)],
)
def test_error_case(case: dict[str, Any]) -> None:
    info = classify_row(case)
    for field, expected in case["expected"].items():
        got = getattr(info, field)
        if field == "retry_after" and expected is not None:
            assert got == pytest.approx(expected, rel=1e-12), (field, info)
        else:
            assert got == expected, (field, info)


def test_every_row_has_a_source() -> None:
    for row in [*HEADER_CASES, *ERROR_CASES, *TABLE["rules"], *TABLE["kinds"].values()]:
        assert isinstance(row.get("source"), str) and row["source"].strip(), row
    assert len(HEADER_CASES) >= 20
    assert len(ERROR_CASES) >= 40


@pytest.mark.parametrize("rule", [pytest.param(r, id=r.id) for r in retry_table().rules])
def test_every_rule_decides_some_row(rule: Any) -> None:
    # A rule that is never the first match for a real row is dead or shadowed.
    def first_rule(case: dict[str, Any]) -> str | None:
        signals, _ = _signals(
            case.get("status"),
            case.get("message"),
            case.get("body"),
            normalize_headers(case.get("headers")),
            case.get("provider_stop_reason"),
            case.get("protocol"),
            8192,
        )
        return next((r.id for r in retry_table().rules if _rule_matches(r, signals)), None)

    assert any(first_rule(case) == rule.id for case in ERROR_CASES)


def test_kinds_table_matches_the_contract() -> None:
    retryable: dict[ErrorKind, bool] = {
        "overflow": False,
        "rate_limit": True,
        "overloaded": True,
        "transient": True,
        "fatal": False,
    }
    assert dict(retry_table().retryable) == retryable


def test_retryable_follows_kind_unless_the_server_overrides() -> None:
    for case in ERROR_CASES:
        info = classify_row(case)
        if info.kind in {"overflow", "fatal"}:
            assert info.retryable is False, case
        elif "x-should-retry" not in {k.lower() for k in (case.get("headers") or {})}:
            assert info.retryable is True, case


def test_is_retryable_is_classify_retryable() -> None:
    assert is_retryable(status=529) is True
    assert is_retryable(status=400) is False
    assert is_retryable(status=503, headers={"X-Should-Retry": "FALSE"}) is False


# ---------------------------------------------------------------------------- precedence


def test_retry_after_ms_beats_retry_after_beats_body_beats_resets() -> None:
    body = {"error": {"details": [{"@type": "google.rpc.RetryInfo", "retryDelay": "9s"}]}}
    resets = {"x-ratelimit-reset-tokens": "20s"}
    assert retry_delay({**resets, "retry-after-ms": "500", "retry-after": "3"}, body) == 0.5
    assert retry_delay({**resets, "retry-after": "3"}, body) == 3.0
    assert retry_delay(resets, body) == 9.0
    assert retry_delay(resets) == 20.0


def test_http_date_uses_now_in_any_timezone() -> None:
    headers = {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}
    plus_two = timezone(timedelta(hours=2))
    now = datetime(2015, 10, 21, 9, 27, 0, tzinfo=plus_two)  # 07:27:00 UTC
    assert retry_delay(headers, now=now) == 60.0
    naive_utc = datetime(2015, 10, 21, 7, 27, 0)
    assert retry_delay(headers, now=naive_utc) == 60.0


def test_classify_reports_the_delay_only_from_the_inputs() -> None:
    now = datetime(2024, 3, 26, 19, 59, 0, tzinfo=UTC)
    headers = {"anthropic-ratelimit-tokens-reset": "2024-03-26T20:00:00Z"}
    assert classify(status=429, headers=headers, now=now).retry_after == 60.0
    assert classify(status=429, headers=headers).retry_after is None


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("6m0s", 360.0),
        ("12ms", 0.012),
        ("1h2m3.5s", 3723.5),
        ("45.837906927s", 45.837906927),
        ("1.5h", 5400.0),
        ("300us", 0.0003),
        ("300µs", 0.0003),
        ("2ns", 2e-9),
        ("0", 0.0),
        ("-1s", -1.0),
        (".5s", 0.5),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    got = parse_duration(text)
    assert got is not None and math.isclose(got, seconds, rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize("text", ["", "1", "s", "1x", "1s2", "1 s", "abc", "1e3s", "1" * 80 + "s"])
def test_parse_duration_rejects(text: str) -> None:
    assert parse_duration(text) is None
