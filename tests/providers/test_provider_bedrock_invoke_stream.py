"""bedrock-invoke-stream: the PayloadPart framing, family detection, usage, errors.

The bundled cassettes and their goldens cover each family's happy paths (tests/recordings/test_goldens.py);
these tests pin the decisions of specs/protocols/bedrock-invoke-stream.md that a golden
would only show indirectly.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from cassette_checks import Translate, terminal
from corpus_streams import blocks_text
from stream_harness.contract.events import DoneEvent, ErrorEvent, Event
from stream_harness.providers.bedrock_invoke_stream import family_of
from stream_harness.wire import EventStreamMessage, JSONLine, encode_message
from stream_harness.wire.payloadpart import BadChunk, PayloadPartDecoder

PROTOCOL = "bedrock-invoke-stream"


def chunk(obj: Any, *, raw: bytes | None = None) -> bytes:
    data = raw if raw is not None else json.dumps(obj).encode()
    part = {"bytes": base64.b64encode(data).decode(), "p": "abcdef"}
    headers = {
        ":event-type": "chunk",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return encode_message(headers, json.dumps(part).encode())


def exception(kind: str, message: str) -> bytes:
    headers = {
        ":exception-type": kind,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_message(headers, json.dumps({"message": message}).encode())


def run(body: bytes, step: int | None = None) -> list[Event]:
    return Translate(PROTOCOL).run(body, [] if step is None else range(step, len(body), step))


def text_of(event: DoneEvent | ErrorEvent) -> str:
    return blocks_text(event.message.content)


@pytest.mark.parametrize(
    ("value", "family"),
    [
        ({"type": "message_start", "message": {}}, "anthropic-messages"),
        ({"type": "ping"}, "anthropic-messages"),
        ({"messageStart": {"role": "assistant"}}, "nova"),
        ({"contentBlockDelta": {"delta": {"text": "x"}, "contentBlockIndex": 0}}, "nova"),
        ({"completion": " hi", "stop_reason": None, "stop": None}, "claude-text-completions"),
        ({"outputText": "hi", "index": 0, "completionReason": None}, "titan"),
        ({"generation": "hi", "stop_reason": None}, "llama"),
        ({"event_type": "stream-start", "is_finished": False}, "cohere-command-r"),
        ({"outputs": [{"text": "hi", "stop_reason": None}]}, "mistral"),
        ({"text": " hi", "is_finished": False}, "cohere-command"),
        ({"generations": [{"text": "hi"}]}, "cohere-command"),
        ({"choices": [{"delta": {"content": "hi"}}]}, None),
        ({"type": "response.created"}, None),
        ([1, 2], None),
    ],
)
def test_the_family_is_told_from_the_chunk_keys(value: Any, family: str | None) -> None:
    assert family_of(value) == family


def test_the_framing_unwraps_chunks_and_passes_exceptions_on() -> None:
    other = encode_message({":event-type": "futureEvent", ":message-type": "event"}, b"{}")
    body = (
        chunk({"generation": "a"})
        + other
        + chunk(None, raw=b"not json")
        + exception("throttlingException", "slow")
    )
    items = PayloadPartDecoder().feed(body)
    assert isinstance(items[0], JSONLine) and items[0].value == {"generation": "a"}
    assert isinstance(items[1], BadChunk) and "not JSON" in items[1].message
    assert (
        isinstance(items[2], EventStreamMessage)
        and items[2].exception_type == "throttlingException"
    )
    assert len(items) == 3  # the unknown event type is passed over


def test_metrics_fill_the_usage_only_where_the_family_reports_none() -> None:
    metrics = {
        "inputTokenCount": 11,
        "outputTokenCount": 5,
        "invocationLatency": 9,
        "firstByteLatency": 3,
    }
    claude = chunk({"completion": "Hi", "stop_reason": None, "stop": None}) + chunk(
        {
            "completion": "",
            "stop_reason": "max_tokens",
            "stop": None,
            "amazon-bedrock-invocationMetrics": metrics,
        }
    )
    done = terminal(run(claude))
    assert (done.message.usage.input, done.message.usage.output) == (11, 5)
    assert done.message.provider_blocks[0].provider_type == "amazon-bedrock-invocationMetrics"
    # Llama reports its own counts: they win over the metrics.
    llama = chunk(
        {
            "generation": "Hi",
            "prompt_token_count": 7,
            "generation_token_count": 1,
            "stop_reason": None,
        }
    ) + chunk(
        {
            "generation": "",
            "prompt_token_count": None,
            "generation_token_count": 2,
            "stop_reason": "stop",
            "amazon-bedrock-invocationMetrics": metrics,
        }
    )
    done = terminal(run(llama))
    assert (done.message.usage.input, done.message.usage.output) == (7, 2)


def test_a_bad_chunk_ends_the_stream_keeping_the_text() -> None:
    body = chunk({"outputText": "kept", "completionReason": None}) + chunk(None, raw=b"\xff\xfe")
    end = terminal(run(body))
    assert isinstance(end, ErrorEvent)
    assert end.error_message.startswith("malformed chunk #2")
    assert text_of(end) == "kept"


def test_an_unknown_family_is_an_error_not_a_silent_success() -> None:
    end = terminal(run(chunk({"choices": [{"delta": {"content": "hi"}}]})))
    assert isinstance(end, ErrorEvent)
    assert "no known model family" in end.error_message


def test_an_exception_before_any_chunk_is_classified_by_its_type() -> None:
    end = terminal(
        run(exception("throttlingException", "Too many tokens, please wait before trying again."))
    )
    assert isinstance(end, ErrorEvent)
    assert end.error.kind == "rate_limit" and end.error.retryable
    assert end.error.provider_type == "throttlingException"


@pytest.mark.parametrize(
    "first",
    [
        {"generation": "part", "stop_reason": None},
        {
            "type": "message_start",
            "message": {"id": "m", "model": "c", "usage": {"input_tokens": 1}},
        },
        {"messageStart": {"role": "assistant"}},
        {"event_type": "stream-start", "generation_id": "g"},
    ],
    ids=["llama", "anthropic", "nova", "cohere-r"],
)
def test_every_family_fails_on_an_exception_after_chunks(first: dict[str, Any]) -> None:
    end = terminal(run(chunk(first) + exception("modelStreamErrorException", "retry me")))
    assert isinstance(end, ErrorEvent)
    assert end.error_message == "retry me"
    assert end.error.kind == "transient"


@pytest.mark.parametrize(
    "body",
    [
        chunk({"generation": "cut", "stop_reason": None}),
        chunk({"outputText": "cut", "completionReason": None}),
        chunk({"text": "cut", "is_finished": False}),
        chunk({"event_type": "text-generation", "text": "cut"}),
        chunk({"messageStart": {"role": "assistant"}}),
        b"",
    ],
    ids=["llama", "titan", "cohere", "cohere-r", "nova", "empty"],
)
def test_eof_before_the_end_marker_is_an_error(body: bytes) -> None:
    end = terminal(run(body))
    assert isinstance(end, ErrorEvent)
    assert end.error_message.startswith("stream ended without")


def test_a_stop_reason_of_the_wrong_type_is_malformed() -> None:
    end = terminal(run(chunk({"generation": "x", "stop_reason": 3})))
    assert isinstance(end, ErrorEvent) and "stop_reason is not a string" in end.error_message


def test_nova_cache_counters_use_the_invoke_names() -> None:
    body = (
        chunk({"messageStart": {"role": "assistant"}})
        + chunk({"contentBlockDelta": {"delta": {"text": "hi"}, "contentBlockIndex": 0}})
        + chunk({"messageStop": {"stopReason": "end_turn"}})
        + chunk(
            {
                "metadata": {
                    "usage": {
                        "inputTokens": 3,
                        "outputTokens": 1,
                        "cacheReadInputTokenCount": 40,
                        "cacheWriteInputTokenCount": 2,
                    }
                }
            }
        )
    )
    done = terminal(run(body, step=7))
    assert isinstance(done, DoneEvent)
    u = done.message.usage
    assert (u.input, u.output, u.cache_read, u.cache_write) == (3, 1, 40, 2)


def test_cohere_final_response_is_not_read_again() -> None:
    body = chunk({"text": "Hello", "is_finished": False}) + chunk(
        {
            "is_finished": True,
            "finish_reason": "COMPLETE",
            "response": {"generations": [{"text": "Hello", "finish_reason": "COMPLETE"}]},
        }
    )
    done = terminal(run(body))
    assert isinstance(done, DoneEvent) and text_of(done) == "Hello"


def test_cohere_command_r_tool_calls_end_with_complete_as_tool_use() -> None:
    body = (
        chunk({"event_type": "stream-start", "generation_id": "g1"})
        + chunk(
            {
                "event_type": "tool-calls-generation",
                "tool_calls": [
                    {"name": "a", "parameters": {"x": 1}},
                    {"name": "a", "parameters": {"x": 2}},
                ],
            }
        )
        + chunk({"event_type": "stream-end", "finish_reason": "COMPLETE"})
    )
    done = terminal(run(body, step=5))
    assert isinstance(done, DoneEvent) and done.reason == "tool_use"
    ids = [getattr(b, "id", None) for b in done.message.content]
    assert ids == ["a_1", "a_2"]
    assert done.message.response_id == "g1"


def test_bundled_streams_are_detected_from_the_body_alone() -> None:
    import dataclasses

    from stream_harness.contract.facts import bundled_cassettes
    from stream_harness.providers.reference import detect_protocol
    from stream_harness.recordings.cassette import load_cassette

    checked = 0
    for path in sorted((bundled_cassettes() / PROTOCOL).glob("*.yaml")):
        inter = load_cassette(path).interactions[0]
        if (
            inter.response.status >= 400
            or b":event-type\x07\x00\x05chunk" not in inter.response.body
        ):
            continue  # HTTP errors, and streams that are one exception frame
        bare = dataclasses.replace(inter, request=dataclasses.replace(inter.request, uri=""))
        assert detect_protocol(bare) == PROTOCOL, path.name
        checked += 1
    assert checked >= 25
