"""mistral-chat: what is Mistral's own, on top of the shared Chat Completions translator.

The shared behaviour (framing, text, usage, the end of the stream) is the openai-completions
suite's; the registry-wide suites run the bundled cassettes. Here: detection of Mistral's
URLs, headers and bodies; the one routing rule only this protocol has; thinking signatures
and the pieces inside a thinking list; the same bytes under both protocols; the
stop values. Bodies are written inline in Mistral's documented shape
(specs/protocols/mistral-chat.md).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from stream_harness.contract.events import (
    DoneEvent,
    ErrorEvent,
    Event,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from stream_harness.contract.facts import bundled_cassettes
from stream_harness.providers.reference import detect_protocol, normalize
from stream_harness.providers.stop_reasons import map_stop_reason
from stream_harness.recordings.cassette import Interaction, Request, Response, load_cassette
from stream_harness.recordings.golden import expected_path, read_expected

PROTOCOL = "mistral-chat"
DONE = b"data: [DONE]\n\n"


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    data = {
        "id": "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": "mistral-small-latest",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return b"data: " + json.dumps(data).encode() + b"\n\n"


def run(body: bytes, protocol: str = PROTOCOL) -> list[Event]:
    return list(normalize(protocol, [body]))


def final(body: bytes, protocol: str = PROTOCOL) -> DoneEvent | ErrorEvent:
    last = run(body, protocol)[-1]
    assert isinstance(last, DoneEvent | ErrorEvent)
    return last


def calls(body: bytes, protocol: str = PROTOCOL) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (b.id, b.name, b.arguments)
        for b in final(body, protocol).message.content
        if isinstance(b, ToolCall)
    ]


def interaction(uri: str, body: bytes, headers: dict[str, list[str]] | None = None) -> Interaction:
    return Interaction(
        0,
        Request(method="POST", uri=uri, headers={}, body=b"{}"),
        Response(status=200, reason="OK", headers=headers or {}, body=body),
    )


# -- detection -----------------------------------------------------------------------------

PLAIN = chunk({"role": "assistant", "content": "Hi"}) + chunk({"content": ""}, "stop") + DONE


@pytest.mark.parametrize(
    ("uri", "protocol"),
    [
        ("https://api.mistral.ai/v1/chat/completions", PROTOCOL),
        ("https://api.mistral.ai/v1/chat/completions#stream", PROTOCOL),  # the SDK's suffix
        ("https://codestral.mistral.ai/v1/fim/completions#stream", PROTOCOL),
        ("https://api.mistral.ai/v1/agents/completions", PROTOCOL),
        ("http://127.0.0.1:8080/v1/fim/completions", PROTOCOL),
        (
            "https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/europe-west4"
            "/publishers/mistralai/models/mistral-large-2411:streamRawPredict",
            PROTOCOL,
        ),
        # Not Mistral's: the generic chat path, and Mistral's other streaming API.
        ("https://api.openai.com/v1/chat/completions", "openai-completions"),
        ("https://llm-gateway.internal/v1/chat/completions", "openai-completions"),
    ],
)
def test_detection_by_url(uri: str, protocol: str) -> None:
    assert detect_protocol(interaction(uri, PLAIN)) == protocol


def test_detection_without_a_url_by_the_correlation_header_then_a_thinking_chunk() -> None:
    header = {"mistral-correlation-id": ["019c3b4c-0a1b-7c2d-8e3f-4a5b6c7d8e9f"]}
    assert detect_protocol(interaction("", PLAIN, header)) == PROTOCOL
    thinking = chunk(
        {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "a"}]}]}
    )
    assert detect_protocol(interaction("", thinking + PLAIN)) == PROTOCOL
    # A plain chunk stream without either says nothing Mistral-specific.
    assert detect_protocol(interaction("", PLAIN)) == "openai-completions"


def test_the_corpus_uris_and_the_bundled_cassettes_are_mistral_chat() -> None:
    for path in sorted((bundled_cassettes() / PROTOCOL).glob("*.yaml")):
        assert detect_protocol(load_cassette(path).interactions[0]) == PROTOCOL, path.name


# -- the same bytes under both protocols ---------------------------------------------------


@pytest.mark.parametrize(
    ("native", "gateway"),
    [("thinking_array", "mistral_thinking_array"), ("tool_null_id", "mistral_tool_null_id")],
)
def test_the_same_bytes_give_the_same_events_under_both_protocols(
    native: str, gateway: str
) -> None:
    root = bundled_cassettes()
    mine = load_cassette(root / PROTOCOL / f"{native}.yaml").interactions[0]
    theirs = load_cassette(root / "openai-completions" / f"{gateway}.yaml").interactions[0]
    assert mine.response.body == theirs.response.body
    assert detect_protocol(theirs) == "openai-completions"
    assert run(mine.response.body) == run(theirs.response.body, "openai-completions")
    assert read_expected(expected_path(root / PROTOCOL / f"{native}.yaml")) == read_expected(
        expected_path(root / "openai-completions" / f"{gateway}.yaml")
    )


# -- tool calls: the rule only mistral-chat has --------------------------------------------


def _named_without_id(city: str) -> dict[str, Any]:
    return {"id": "null", "function": {"name": "get_weather", "arguments": {"city": city}}}


def test_two_named_fragments_without_index_or_id_are_two_calls() -> None:
    body = (
        chunk({"tool_calls": [_named_without_id("Nice")]})
        + chunk({"tool_calls": [_named_without_id("Brest")]})
        + chunk({"content": ""}, "tool_calls")
        + DONE
    )
    assert calls(body) == [
        ("toolcall_0", "get_weather", {"city": "Nice"}),
        ("toolcall_1", "get_weather", {"city": "Brest"}),
    ]
    # The OpenAI translator takes a repeated name as the same call (servers that repeat
    # the name on every delta), so there the two run together: the difference is the point.
    merged = calls(body, "openai-completions")
    assert len(merged) == 1


def test_devstral_fragments_continue_their_call() -> None:
    """`name: ""` and `id: "null"` on continuations (mistral-vibe's recorded streams)."""
    body = (
        chunk(
            {
                "tool_calls": [
                    {"id": "k3Vb8Nq1Z", "function": {"name": "read", "arguments": ""}, "index": 0}
                ]
            }
        )
        + chunk({"tool_calls": [{"function": {"name": "", "arguments": '{"p": '}, "index": 0}]})
        + chunk(
            {
                "tool_calls": [
                    {"id": "null", "function": {"name": "", "arguments": "1}"}, "index": 0}
                ]
            }
        )
        + chunk({"content": ""}, "tool_calls")
        + DONE
    )
    assert calls(body) == [("k3Vb8Nq1Z", "read", {"p": 1})]


def test_a_fragment_without_index_or_name_continues_the_latest_call() -> None:
    body = (
        chunk(
            {"tool_calls": [{"id": "Ab1Cd2Ef3", "function": {"name": "f", "arguments": '{"a":'}}]}
        )
        + chunk({"tool_calls": [{"function": {"arguments": "1}"}}]})
        + chunk({}, "tool_calls")
        + DONE
    )
    assert calls(body) == [("Ab1Cd2Ef3", "f", {"a": 1})]


# -- thinking ------------------------------------------------------------------------------


def think(*pieces: Any, **extra: Any) -> dict[str, Any]:
    return {"content": [{"type": "thinking", "thinking": list(pieces), **extra}]}


def test_a_signature_goes_on_the_thinking_block_and_other_pieces_are_provider_blocks() -> None:
    body = (
        chunk(think({"type": "text", "text": "Two"}))
        + chunk(think({"type": "reference", "reference_ids": [4]}, signature="c2ln"))
        + chunk(think())
        + chunk({"content": "Four."}, "stop")
        + DONE
    )
    msg = final(body).message
    assert msg.content == [
        ThinkingBlock(content="Two", signature="c2ln"),
        TextBlock(content="Four."),
    ]
    [ref] = msg.provider_blocks
    assert (ref.provider_type, ref.position) == ("mistral.reference", 1)


def test_a_signature_without_thinking_text_is_a_thinking_block_of_its_own() -> None:
    body = (
        chunk({"content": "a"})
        + chunk(think(signature="c2ln"))
        + chunk({"content": "b"}, "stop")
        + DONE
    )
    assert final(body).message.content == [
        TextBlock(content="a"),
        ThinkingBlock(content="", signature="c2ln"),
        TextBlock(content="b"),
    ]


# -- stop values and errors ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("model_length", "length"),
        ("tool_calls", "tool_use"),
        ("error", "error"),
        (None, "stop"),
    ],
)
def test_every_documented_finish_reason_maps(raw: str | None, reason: str) -> None:
    assert map_stop_reason(PROTOCOL, raw).reason == reason
    assert map_stop_reason(PROTOCOL, raw).known


def test_an_unknown_finish_reason_is_an_error_that_names_it() -> None:
    got = final(chunk({"content": "x"}) + chunk({}, "content_filter") + DONE)
    assert got.message.stop_reason == "error"
    assert got.message.provider_stop_reason == "content_filter"


def test_a_validation_error_body_gives_its_field_and_message() -> None:
    body = json.dumps(
        {"detail": [{"type": "missing", "loc": ["body", "model"], "msg": "Field required"}]}
    )
    events = list(normalize(PROTOCOL, [body.encode()], status=422))
    last = events[-1]
    assert isinstance(last, ErrorEvent)
    assert last.error_message == "body.model: Field required"


def test_the_padding_field_changes_nothing() -> None:
    padded = chunk({"content": "Hi"}, p="abcdefgh") + chunk({"content": ""}, "stop", p="ab") + DONE
    plain = chunk({"content": "Hi"}) + chunk({"content": ""}, "stop") + DONE
    assert run(padded) == run(plain)


def test_the_registration_is_tried_before_openai_completions() -> None:
    from stream_harness.providers.registry import protocol_ids

    ids = protocol_ids()
    assert ids.index(PROTOCOL) < ids.index("openai-completions")
