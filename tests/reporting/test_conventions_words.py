"""An agent row's conventions in words: the policy a reader needs, per protocol where it differs."""

from __future__ import annotations

from stream_harness.reporting.conventions import conventions_lines

ROW = {
    "max_retries": 2,
    "retries_after_partial_output": False,
    "retry_after_honoured": True,
    "retry_after_cap_s": 120,
    "retry_after_over_cap": "give_up",
    "tool_failure": "raises",
    "eager_tools": True,
    "sources": {"max_retries": "openai/_constants.py"},
    "by_protocol": {
        "openai-completions": {"max_retries": 2, "retry_after_cap_s": 120, "client": "openai"},
        "anthropic-messages": {
            "max_retries": 2,
            "retry_after_cap_s": None,
            "client": "anthropic-2",
        },
        "google-generative-ai": {
            "max_retries": 0,
            "retry_after_honoured": False,
            "retried_statuses": [429, 503],
            "client": "google-genai",
        },
    },
}


def test_the_row_policy_in_one_line_then_each_protocol_that_differs() -> None:
    first, *rest = conventions_lines(ROW)
    assert first == (
        "2 retries; retry-after up to 120 s, above: give_up; no resend once a stream began; "
        "tool failure: raises; eager_tools"
    )
    assert "openai/_constants.py" not in " ".join([first, *rest])  # sources stay data
    assert rest == [
        "anthropic-messages (anthropic-2): retry-after waited, no cap",
        "google-generative-ai (google-genai): 0 retries; retry-after ignored; retried statuses 429,503",
    ]  # openai-completions is the row's own policy: no line


def test_nothing_declared_says_so() -> None:
    assert conventions_lines({}) == ["none declared"]
