"""Ids a library makes up, written as numbered placeholders so that a verdict reads the same
on every run (issue 36: a regenerated report changes only its header and footer)."""

from __future__ import annotations

import uuid

import pytest

from stream_harness.adapters.protocol import ReferenceAdapter
from stream_harness.conformance.cases import load_cases
from stream_harness.conformance.checks import CHECKS
from stream_harness.conformance.checks.engine import CheckContext, Failure
from stream_harness.conformance.generated_ids import steady_text, steady_texts
from stream_harness.conformance.runner import complete, steady
from stream_harness.contract.facts import bundled_cassettes

# Each seen in a committed report's message, differing between two runs of one commit.
MADE_UP = [
    "pyd_ai_4e1c4ff73c46467e8505c5c795d0c90f",  # pydantic-ai, a call without an id
    "99aa09324a534cbf9c722d3b06a69dd7",  # LangChain's run id
    "d6a5f960-7418-4e49-90b6-f7be2dd3c41d",  # LangChain on Vertex
    "chatcmpl-3ea7c3a8-18be-42c3-8ecd-d5c8c916eb9e",  # LiteLLM
    "chatcmpl--7640315061747730984",  # any-llm: a hash
    "aitxt-XvWWP5ixfe5tMHYgYIbOGL2X",  # the AI SDK: base62
    "aitxt-IpreALZqxEvVLCoAyClcpGbC",  # the AI SDK, no digit by chance
    "undefined_1795918261480_207",  # pi-ai: a timestamp
    "0x7f7d261744d0",  # an object's address in a repr
]
# Written, not drawn: kept whether or not the stream served them.
WORDS = ["get_weather", "openai-completions", "gpt-4o-mini-2024-07-18", "call_p1_f0",
         "proxy-upstream-cut", "google-generative-ai", "content_block_delta",
         "ResponseValidationError", "AI_TypeValidationError", "HTTPResponseError"]  # fmt: skip


@pytest.mark.parametrize("token", MADE_UP)
def test_a_made_up_id_becomes_a_placeholder(token: str) -> None:
    assert steady_text(f"call {token} ran twice", b"{}") == "call <generated id 1> ran twice"


@pytest.mark.parametrize("token", MADE_UP)
def test_an_id_the_stream_served_is_quoted_as_it_is(token: str) -> None:
    served = f'{{"id":"{token}"}}'.encode()
    assert steady_text(f"call {token} ran twice", served) == f"call {token} ran twice"


def test_words_are_not_ids() -> None:
    text = " ".join(WORDS)
    assert steady_text(text, b"") == text


def test_one_numbering_across_a_failures_texts_keeps_same_and_different_apart() -> None:
    a, b = (f"pyd_ai_{uuid.uuid4().hex}" for _ in range(2))
    message, expected, observed, none = steady_texts(
        [f"ids {a} and {b} differ", f'{{"id": "{a}"}}', f'{{"id": "{b}"}}', None], b""
    )
    assert message == "ids <generated id 1> and <generated id 2> differ"
    assert (expected, observed, none) == (
        '{"id": "<generated id 1>"}',
        '{"id": "<generated id 2>"}',
        None,
    )


def test_two_runs_making_up_other_ids_give_the_same_failure() -> None:
    def failure() -> Failure:
        made = f"run-{uuid.uuid4()}"
        return Failure(
            f"observed {made}", expected='{"id": "toolu_01A"}', observed=f'{{"id": "{made}"}}'
        )

    body = b'data: {"id":"toolu_01A"}\n\n'
    first, second = steady(failure(), body), steady(failure(), body)
    assert first == second
    assert (
        first.observed == '{"id": "<generated id 1>"}' and first.expected == '{"id": "toolu_01A"}'
    )


def test_an_id_the_wire_carries_encoded_is_still_the_providers() -> None:
    # Bedrock's InvokeModel wraps each event's JSON in base64 inside event-stream frames:
    # the id is not in the bytes as text, but the reference reads it from them.
    path = bundled_cassettes() / "bedrock-invoke-stream" / "anthropic_tool_call.yaml"
    (case,) = load_cases([path])[0]
    ids = {i for e in case.expected_events() if isinstance(i := getattr(e, "id", None), str) and i}
    assert ids and all(i.encode() not in case.body for i in ids)
    ctx = CheckContext(case, ReferenceAdapter())
    quoted = Failure(
        f"call {min(ids)} ran twice", command="x", expected="{}", observed="{}", stdout_noise=""
    )
    assert complete(quoted, CHECKS[0], ctx).message == quoted.message
