"""bedrock-invoke-stream on every recorded InvokeModelWithResponseStream interaction.

The oracle is botocore, the official SDK's own reading of the same bytes (offline:
``EventStreamBuffer`` + ``EventStreamJSONParser`` on the ``InvokeModelWithResponseStream``
output shape), its ``chunk.bytes`` decoded with ``json.loads`` and folded in a few lines
per family: text, tool calls with their parsed input, the stop reason. Skipped cleanly
when the corpus or botocore is absent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from conftest import corpus_dir, no_corpus_reason

from stream_harness.recordings.cassette import Interaction, load_cassette
from stream_harness.contract.events import DoneEvent, TextBlock, ToolCall
from stream_harness.recordings.golden import interaction_events
from stream_harness.providers.reference import detect_protocol
from stream_harness.conformance.strategies import split_at

PROTOCOL = "bedrock-invoke-stream"


def _interactions() -> list[Any]:
    root = corpus_dir()
    if root is None:
        return [
            pytest.param(None, marks=pytest.mark.skip(reason=no_corpus_reason()), id="no-corpus")
        ]
    out = []
    for path in sorted(root.rglob("*.yaml")):
        try:
            cassette = load_cassette(path)
        except Exception:  # unreadable files are test_corpus_loads' business
            continue
        for inter in cassette.interactions:
            if "/invoke-with-response-stream" in inter.request.uri and inter.response.status < 400:
                out.append(pytest.param(inter, id=f"{path.relative_to(root)}#{inter.index}"))
    return out or [
        pytest.param(None, marks=pytest.mark.skip(reason="no InvokeModel streams"), id="none")
    ]


CASES = _interactions()


@dataclass
class Folded:
    text: list[str] = field(default_factory=list)
    tools: list[tuple[str, str, str]] = field(default_factory=list)
    stop: str | None = None


def read_with_botocore(body: bytes) -> Folded:
    eventstream = pytest.importorskip("botocore.eventstream")
    parsers = pytest.importorskip("botocore.parsers")
    session = pytest.importorskip("botocore.session")
    operation = (
        session.Session()
        .get_service_model("bedrock-runtime")
        .operation_model("InvokeModelWithResponseStream")
    )
    shape = operation.output_shape.members["body"]
    parser = parsers.EventStreamJSONParser()
    buffer = eventstream.EventStreamBuffer()
    buffer.add_data(body)
    f = Folded()
    for message in buffer:
        parsed = parser.parse(message.to_response_dict(), shape)
        chunk = json.loads(parsed["chunk"]["bytes"])
        kind = chunk.get("type")
        if kind == "content_block_start" and chunk["content_block"]["type"] == "tool_use":
            block = chunk["content_block"]
            f.tools.append((block["id"], block["name"], ""))
        elif kind == "content_block_delta":
            delta = chunk["delta"]
            if delta["type"] == "text_delta":
                f.text.append(delta["text"])
            elif delta["type"] == "input_json_delta":
                tid, name, args = f.tools[-1]
                f.tools[-1] = (tid, name, args + delta["partial_json"])
        elif kind == "message_delta":
            f.stop = chunk["delta"].get("stop_reason")
        elif "contentBlockDelta" in chunk:
            f.text.append(chunk["contentBlockDelta"]["delta"].get("text", ""))
        elif "messageStop" in chunk:
            f.stop = chunk["messageStop"]["stopReason"]
    return f


@pytest.mark.parametrize("inter", CASES)
def test_corpus_stream_is_detected_and_ends_in_done(inter: Interaction) -> None:
    assert detect_protocol(inter) == PROTOCOL
    events = interaction_events(inter, PROTOCOL)
    assert isinstance(events[-1], DoneEvent), events[-1]


@pytest.mark.parametrize("inter", CASES)
def test_final_message_matches_botocore(inter: Interaction) -> None:
    f = read_with_botocore(inter.response.body)
    done = interaction_events(inter, PROTOCOL)[-1]
    assert isinstance(done, DoneEvent)
    content = done.message.content
    assert "".join(b.content for b in content if isinstance(b, TextBlock)) == "".join(f.text)
    calls = [(c.id, c.name, c.arguments) for c in content if isinstance(c, ToolCall)]
    assert calls == [(i, n, json.loads(a or "{}")) for i, n, a in f.tools]
    assert done.message.provider_stop_reason == f.stop


@pytest.mark.parametrize("inter", CASES)
def test_any_split_gives_the_same_final_message(inter: Interaction) -> None:
    from stream_harness.providers.registry import get_normalizer

    body = inter.response.body
    whole = interaction_events(inter, PROTOCOL)[-1]
    for cuts in ([1], [len(body) // 3, len(body) // 2], list(range(5, len(body), 97))):
        n = get_normalizer(PROTOCOL)
        out = []
        for piece in split_at(body, cuts):
            out += n.feed(piece)
        out += n.close()
        assert out[-1] == whole
