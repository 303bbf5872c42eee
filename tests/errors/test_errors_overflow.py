"""specs/overflow.yaml, row by row, plus the table's own consistency and is_context_overflow.

Every case row is one test: the expected value is the table's (reviewed against its source),
never something the classifier produced.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from error_rows import classify_row
from stream_harness.contract import facts
from stream_harness.contract.events import AssistantMessage, ErrorInfo, Usage
from stream_harness.errors import classify, is_context_overflow
from stream_harness.errors.body import error_details_from_body

TABLE: dict[str, Any] = facts.load_yaml("overflow.yaml")
CASES: list[dict[str, Any]] = TABLE["cases"]


def _case_id(index: int, case: dict[str, Any]) -> str:
    return f"{index:02d}-{case['provider']}-{case['expected']}"


@pytest.mark.parametrize("case", [pytest.param(c, id=_case_id(i, c)) for i, c in enumerate(CASES)])
def test_overflow_case(case: dict[str, Any]) -> None:
    info = classify_row(case)
    assert (info.kind == "overflow") is (case["expected"] == "overflow"), info
    if info.kind == "overflow":
        assert info.retryable is False


def test_table_has_the_required_breadth() -> None:
    assert len(CASES) >= 50
    assert sum(c["expected"] == "overflow" for c in CASES) >= 30
    assert sum(c["expected"] == "not_overflow" for c in CASES) >= 15
    for row in CASES:
        assert row["expected"] in {"overflow", "not_overflow"}
        assert isinstance(row.get("source"), str) and row["source"].strip()
        assert {"message", "body", "provider_stop_reason", "status"} & set(row), row


@pytest.mark.parametrize("section", ["patterns", "vetoes"])
def test_every_pattern_row_has_a_source_and_compiles(section: str) -> None:
    rows = TABLE[section]
    assert rows
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for row in rows:
        assert row["source"].strip()
        re.compile(row["regex"], re.IGNORECASE)


def _row_texts(case: dict[str, Any]) -> list[str]:
    texts = [case["message"]] if case.get("message") else []
    details = error_details_from_body(case.get("body"))
    return texts + list(details.texts)


@pytest.mark.parametrize("pattern", [pytest.param(p, id=p["id"]) for p in TABLE["patterns"]])
def test_every_overflow_pattern_is_exercised_by_a_row(pattern: dict[str, Any]) -> None:
    # A pattern no real message exercises is a pattern nobody has checked.
    regex = re.compile(pattern["regex"], re.IGNORECASE)
    assert any(regex.search(text) for case in CASES for text in _row_texts(case))


@pytest.mark.parametrize("veto", [pytest.param(v, id=v["id"]) for v in TABLE["vetoes"]])
def test_every_veto_is_exercised_by_a_not_overflow_row(veto: dict[str, Any]) -> None:
    regex = re.compile(veto["regex"], re.IGNORECASE)
    hits = [
        case
        for case in CASES
        if case["expected"] == "not_overflow"
        and any(regex.search(text) for text in _row_texts(case))
    ]
    assert hits


def test_veto_beats_a_matching_overflow_pattern() -> None:
    # "too many tokens" is an overflow pattern; the Bedrock throttling wording vetoes it.
    text = "Too many tokens, please wait before trying again."
    assert re.search("too many tokens", text, re.IGNORECASE)
    assert classify(message=text).kind != "overflow"
    assert classify(message="too many tokens: size limit exceeded").kind == "overflow"


def test_veto_by_status_and_type_beats_overflow_code() -> None:
    body = {"error": {"code": "context_length_exceeded", "message": "prompt is too long"}}
    assert classify(status=400, body=body).kind == "overflow"
    assert classify(status=429, body=body).kind == "rate_limit"
    throttled = {"__type": "ThrottlingException", "message": "prompt is too long"}
    assert classify(body=throttled).kind == "rate_limit"


def test_overflow_is_never_retryable_even_when_the_server_says_retry() -> None:
    info = classify(
        status=400,
        message="prompt is too long: 5 tokens > 4 maximum",
        headers={"x-should-retry": "true"},
    )
    assert info.kind == "overflow"
    assert info.retryable is False


def test_empty_body_rule_needs_a_received_body() -> None:
    # The Cerebras rule reads an *empty* body; a caller that passes no body says nothing.
    assert classify(status=400, body=b"").kind == "overflow"
    assert classify(status=400, body=b"   \n").kind == "overflow"
    assert classify(status=400).kind == "fatal"
    assert classify(status=400, body=b"", protocol="google-generative-ai").kind == "fatal"
    assert classify(status=413, body="", protocol="openai-completions").kind == "overflow"
    assert classify(status=429, body="", protocol="openai-completions").kind == "rate_limit"


# --------------------------------------------------------------------------- message level

WINDOW = 200_000


def _message(**fields: Any) -> AssistantMessage:
    return AssistantMessage(**fields)


def test_stop_reason_overflow_counts_whatever_the_contract_stop_reason() -> None:
    # specs/stop_reasons.yaml maps model_context_window_exceeded to `length`.
    msg = _message(stop_reason="length", provider_stop_reason="model_context_window_exceeded")
    assert is_context_overflow(msg)
    assert not is_context_overflow(
        _message(stop_reason="length", provider_stop_reason="max_tokens")
    )


def test_error_message_overflow() -> None:
    msg = _message(
        stop_reason="error", error_message="prompt is too long: 213462 tokens > 200000 maximum"
    )
    assert is_context_overflow(msg)
    throttled = _message(
        stop_reason="error",
        error_message="Throttling error: Too many tokens, please wait before trying again.",
    )
    assert not is_context_overflow(throttled)


def test_error_info_wins_over_the_text() -> None:
    # The normalizer saw the body; its classification is the better-informed one.
    msg = _message(stop_reason="error", error_message="Provider returned error")
    assert is_context_overflow(msg, error=ErrorInfo(kind="overflow"))
    wordy = _message(stop_reason="error", error_message="prompt is too long")
    assert not is_context_overflow(wordy, error=ErrorInfo(kind="rate_limit", retryable=True))


def test_silent_overflow_needs_input_plus_cache_above_the_window() -> None:
    at = _message(stop_reason="stop", usage=Usage(input=150_000, cache_read=50_000))
    above = _message(stop_reason="stop", usage=Usage(input=150_000, cache_read=50_001))
    assert not is_context_overflow(at, WINDOW)
    assert is_context_overflow(above, WINDOW)
    assert not is_context_overflow(above)  # no window, no silent-overflow check
    # Output tokens do not count: the prompt is what overflowed.
    assert not is_context_overflow(
        _message(stop_reason="stop", usage=Usage(input=199_000, output=5_000)), WINDOW
    )


def test_truncation_overflow_at_99_percent_with_no_output() -> None:
    edge = _message(stop_reason="length", usage=Usage(input=197_000, cache_read=1_000))
    below = _message(stop_reason="length", usage=Usage(input=197_000, cache_read=999))
    with_output = _message(stop_reason="length", usage=Usage(input=199_000, output=1))
    assert is_context_overflow(edge, WINDOW)  # 198_000 == 0.99 * 200_000
    assert not is_context_overflow(below, WINDOW)
    assert not is_context_overflow(with_output, WINDOW)


def test_bad_context_windows_are_ignored() -> None:
    msg = _message(stop_reason="stop", usage=Usage(input=10))
    for window in (0, -5, True, None):
        assert not is_context_overflow(msg, window)  # type: ignore[arg-type]
