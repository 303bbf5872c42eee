"""error_details_from_body on every error body shape, and header normalisation."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from stream_harness.errors import ErrorDetails, classify, error_details_from_body
from stream_harness.errors.body import MAX_TEXT_LINE
from stream_harness.errors.headers import normalize_headers, should_retry


@pytest.mark.parametrize(
    ("body", "message", "provider_type", "code", "status"),
    [
        pytest.param(
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            "Overloaded",
            "overloaded_error",
            None,
            None,
            id="anthropic",
        ),
        pytest.param(
            {
                "error": {
                    "message": "m",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            },
            "m",
            "invalid_request_error",
            "context_length_exceeded",
            None,
            id="openai",
        ),
        pytest.param(
            {
                "type": "error",
                "sequence_number": 2,
                "error": {"type": "invalid_request_error", "code": "c", "message": "m"},
            },
            "m",
            "invalid_request_error",
            "c",
            None,
            id="responses-nested-event",
        ),
        pytest.param(
            {"type": "error", "code": "rate_limit_exceeded", "message": "m", "param": None},
            "m",
            None,
            "rate_limit_exceeded",
            None,
            id="responses-top-level-event",
        ),
        pytest.param(
            {
                "type": "response.failed",
                "response": {"status": "failed", "error": {"code": "server_error", "message": "m"}},
            },
            "m",
            None,
            "server_error",
            None,
            id="responses-failed",
        ),
        pytest.param(
            {"error": {"code": 503, "message": "m", "status": "UNAVAILABLE"}},
            "m",
            "UNAVAILABLE",
            None,
            503,
            id="gemini",
        ),
        pytest.param(
            [{"error": {"code": 429, "message": "m", "status": "RESOURCE_EXHAUSTED"}}],
            "m",
            "RESOURCE_EXHAUSTED",
            None,
            429,
            id="gemini-array",
        ),
        pytest.param({"message": "m"}, "m", None, None, None, id="bedrock-message"),
        pytest.param(
            {"Message": "m", "__type": "com.amazon.coral.validate#ValidationException"},
            "m",
            "ValidationException",
            None,
            None,
            id="bedrock-Message-namespaced-type",
        ),
        pytest.param(
            {"error": {"code": 502, "message": "m", "metadata": {"provider_name": "X"}}},
            "m",
            None,
            None,
            502,
            id="openrouter",
        ),
        pytest.param(
            {
                "choices": [
                    {"index": 0, "finish_reason": "error", "error": {"code": 502, "message": "m"}}
                ]
            },
            "m",
            None,
            None,
            502,
            id="openrouter-in-band",
        ),
        pytest.param(
            {
                "object": "error",
                "message": "m",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            },
            "m",
            "BadRequestError",
            None,
            400,
            id="vllm",
        ),
        pytest.param(
            {
                "object": "error",
                "message": "m",
                "type": "rate_limited",
                "code": "1300",
                "raw_status_code": 429,
            },
            "m",
            "rate_limited",
            "1300",
            429,
            id="mistral",
        ),
        pytest.param({"id": "bda42bf8", "message": "m"}, "m", None, None, None, id="cohere"),
        pytest.param({"error": "m"}, "m", None, None, None, id="ollama"),
        pytest.param({"detail": "m"}, "m", None, None, None, id="detail"),
    ],
)
def test_body_shapes(
    body: Any, message: str, provider_type: str | None, code: str | None, status: int | None
) -> None:
    for form in (body, json.dumps(body), json.dumps(body).encode()):
        details = error_details_from_body(form)
        assert (details.message, details.provider_type, details.code, details.status) == (
            message,
            provider_type,
            code,
            status,
        )


def test_gemini_details() -> None:
    body = {
        "error": {
            "code": 429,
            "status": "RESOURCE_EXHAUSTED",
            "message": "m",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.Help", "links": []},
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [{"quotaId": "PerMinute"}, {"quotaId": "PerDay"}, {}],
                },
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "RATE_LIMIT_EXCEEDED",
                },
                {
                    "@type": "type.googleapis.com/google.rpc.RetryInfo",
                    "retryDelay": "45.837906927s",
                },
                "junk",
            ],
        }
    }
    details = error_details_from_body(body)
    assert details.quota_ids == ("PerMinute", "PerDay")
    assert details.reasons == ("RATE_LIMIT_EXCEEDED",)
    assert details.code == "PerMinute"
    assert details.retry_delay == "45.837906927s"
    assert details.status_text == "RESOURCE_EXHAUSTED"


def test_anthropic_details_error_code() -> None:
    body = {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "details": {"error_code": "enforced_spend_limit_reached"},
        },
    }
    assert error_details_from_body(body).code == "enforced_spend_limit_reached"


def test_json_wrapped_in_a_message_is_unwrapped() -> None:
    inner = {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED",
        }
    }
    body = {
        "error": {
            "message": json.dumps(inner, indent=2),
            "code": 429,
            "status": "Too Many Requests",
        }
    }
    details = error_details_from_body(body)
    assert details.message == "Resource has been exhausted (e.g. check quota)."
    assert details.provider_type == "RESOURCE_EXHAUSTED"
    assert details.status == 429


def test_openrouter_raw_upstream_message_is_kept() -> None:
    body = {
        "error": {
            "code": 400,
            "message": "Provider returned error",
            "metadata": {"raw": "prompt is too long: 5 > 4"},
        }
    }
    details = error_details_from_body(body)
    assert details.message == "Provider returned error"
    assert details.extra_messages == ("prompt is too long: 5 > 4",)
    assert classify(status=400, body=body).kind == "overflow"


def test_openrouter_raw_that_is_json_gives_its_message() -> None:
    raw = json.dumps(
        {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "prompt is too long"},
        }
    )
    details = error_details_from_body(
        {"error": {"code": 400, "message": "Provider returned error", "metadata": {"raw": raw}}}
    )
    assert details.extra_messages == ("prompt is too long",)


def test_sse_body_finds_the_error_event() -> None:
    body = (
        b": OPENROUTER PROCESSING\n\n"
        b'data: {"id":"g","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
        b'data: {"id":"g","error":{"code":400,"message":"Token limit reached"},"choices":[]}\n\n'
        b"data: [DONE]\n\n"
    )
    details = error_details_from_body(body)
    assert (details.message, details.status) == ("Token limit reached", 400)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "upstream connect error or disconnect/reset before headers\nsecond line",
            "upstream connect error or disconnect/reset before headers",
        ),
        ("\n\n   Bad   Gateway  \n", "Bad Gateway"),
        (
            "<html><head><title>502 Bad Gateway</title></head><body>x</body></html>",
            "502 Bad Gateway",
        ),
        (
            "<html><body><h1>Service Unavailable</h1><p>later</p></body></html>",
            "Service Unavailable",
        ),
        # A page without a (non-empty) title: its first visible text, not its CSS or script.
        (
            "<html><head><style>body{color:red}</style><script>var a=1;</script></head>"
            "<body><!-- x --><h1>Service Unavailable</h1></body></html>",
            "Service Unavailable",
        ),
        (
            "<html><head><title> </title></head><body><h1>Bad Gateway</h1></body></html>",
            "Bad Gateway",
        ),
        ("<title>Rate limited &amp; queued &#39;m&#39;</title>", "Rate limited & queued 'm'"),
        ("<style>" * 1000, None),
        ("\ufeffplain", "plain"),
        (b"\xff\xfeNot UTF-8 \xc3", "\ufffd\ufffdNot UTF-8 \ufffd"),
        ("{not json", "{not json"),
    ],
)
def test_text_bodies(body: str | bytes, message: str | None) -> None:
    assert error_details_from_body(body).message == message


def test_long_text_is_bounded() -> None:
    details = error_details_from_body("x" * 10_000)
    assert details.message == "x" * MAX_TEXT_LINE


@pytest.mark.parametrize(
    "body", [None, "", b"", "   ", {}, [], 42, 1.5, object(), {"foo": 1}, [1, 2], {"error": None}]
)
def test_empty_or_unknown_bodies(body: Any) -> None:
    assert error_details_from_body(body) == ErrorDetails()


def test_deep_nesting_does_not_raise() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert error_details_from_body(deep).message is not None  # the text line, not a crash
    nested: Any = {"error": {"message": "m"}}
    for _ in range(50):
        nested = [nested]
    assert error_details_from_body(nested) == ErrorDetails()  # beyond the depth limit


# ------------------------------------------------------------------------------- headers


class _BrokenMapping(Mapping[str, str]):
    def __getitem__(self, key: str) -> str:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("broken")

    def __len__(self) -> int:
        return 1


def test_normalize_headers() -> None:
    raw: Any = {
        "Retry-After": ["7", "8"],
        b"X-Bytes": b"v",
        "X-Int": 5,
        "X-Junk": object(),
        "X-Empty-List": [],
        3: "ignored",
        "  Spaced  ": "  value  ",
    }
    assert normalize_headers(raw) == {
        "retry-after": "7",
        "x-bytes": "v",
        "x-int": "5",
        "spaced": "value",
    }
    assert normalize_headers(_BrokenMapping()) == {}
    assert normalize_headers(None) == {}
    assert normalize_headers([("a", "b")]) == {}


@pytest.mark.parametrize(
    ("value", "expected"),
    [("true", True), ("TRUE", True), ("false", False), ("False", False), ("1", None), ("", None)],
)
def test_should_retry(value: str, expected: bool | None) -> None:
    assert should_retry({"x-should-retry": value}) is expected


def test_bedrock_type_from_headers() -> None:
    info = classify(
        status=400,
        headers={
            "X-Amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"
        },
        body={"message": "m"},
    )
    assert info.provider_type == "ThrottlingException"
    assert info.kind == "rate_limit"
    frame = classify(
        headers={
            ":message-type": "error",
            ":error-code": "InternalFailure",
            ":error-message": "prompt is too long",
        }
    )
    assert (frame.provider_type, frame.kind) == ("InternalFailure", "overflow")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            '{"error": {"message": "Quota exceeded",}}',
            "Quota exceeded",
            id="trailing-comma-object",
        ),
        pytest.param(
            '[{"error": {"message": "Quota exceeded"}},\n]',
            "Quota exceeded",
            id="trailing-comma-array",
        ),
        pytest.param(
            '{"error": {"message": "a, ] b, }",}}',
            "a, ] b, }",
            id="comma-bracket-inside-a-string-kept",
        ),
        pytest.param(
            '[{"error": {"code": 503, "message": "The model is overloaded"',
            "The model is overloaded",
            id="cut-off",
        ),
        pytest.param("[", "[", id="a-bracket-alone-is-text"),
        pytest.param("[not json, ]", "[not json, ]", id="not-json-is-text"),
    ],
)
def test_an_almost_json_body_keeps_its_message(body: str, message: str) -> None:
    """Before, any body json.loads refused fell back to its first line (``[``)."""
    assert error_details_from_body(body.encode()).message == message


def test_only_a_small_body_is_repaired() -> None:
    """Repair is bounded (a hostile megabyte of quotes took 22 s to parse partially): past
    the bound a body that is not strict JSON is read as text, as before."""
    padding = " " * (1 << 14)
    body = '{"error": {"message": "Quota exceeded",' + padding + "}}"
    assert (
        error_details_from_body(body.encode()).message
        == '{"error": {"message": "Quota exceeded", }}'
    )
