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

import pytest

from cassette_checks import events_of
from corpus_streams import blocks_text, botocore_frames, corpus_params, corpus_recordings
from stream_harness.conformance.strategies import split_at
from stream_harness.contract.events import DoneEvent, ToolCall
from stream_harness.providers.reference import detect_protocol
from stream_harness.recordings.cassette import Interaction
from stream_harness.recordings.golden import interaction_events

PROTOCOL = "bedrock-invoke-stream"
CASES = corpus_params(
    (
        r
        for r in corpus_recordings()
        if "/invoke-with-response-stream" in r.interaction.request.uri and not r.is_http_error
    ),
    when_empty="no InvokeModel streams",
)


@dataclass
class Folded:
    text: list[str] = field(default_factory=list)
    tools: list[tuple[str, str, str]] = field(default_factory=list)
    stop: str | None = None


def read_with_botocore(body: bytes) -> Folded:
    f = Folded()
    for parsed in botocore_frames(body, "InvokeModelWithResponseStream", "body"):
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
    assert blocks_text(content) == "".join(f.text)
    calls = [(c.id, c.name, c.arguments) for c in content if isinstance(c, ToolCall)]
    assert calls == [(i, n, json.loads(a or "{}")) for i, n, a in f.tools]
    assert done.message.provider_stop_reason == f.stop


@pytest.mark.parametrize("inter", CASES)
def test_any_split_gives_the_same_final_message(inter: Interaction) -> None:
    body = inter.response.body
    whole = interaction_events(inter, PROTOCOL)[-1]
    for cuts in ([1], [len(body) // 3, len(body) // 2], list(range(5, len(body), 97))):
        assert events_of(PROTOCOL, split_at(body, cuts))[-1] == whole
