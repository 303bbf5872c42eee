"""The bedrock-converse-stream normalizer on every recorded ConverseStream interaction.

Two oracles read the same bytes by other paths than ours, and the final message must
agree with both (specs/known-differences.md, bedrock-converse-stream):

* a plain reading in this file: frames cut with ``struct`` and checked with ``zlib.crc32``
  (no stream_harness.wire), payloads parsed with ``json.loads`` and folded in a few lines: text
  and reasoning by ``contentBlockIndex``, signatures, redacted blobs joined as bytes, tool
  uses with their parsed input, the stop reason, the last usage;
* botocore (the official SDK's event-stream decoder and ConverseStream parser, offline:
  ``EventStreamBuffer`` + ``EventStreamJSONParser`` on the service model), folded the same
  way; skipped when botocore is not installed.

Every streaming interaction in the corpus ends with messageStop + metadata, so all must
end in ``done``. The corpus's HTTP errors (JSON bodies: invalid model id, throttling,
two context-window overflows recorded on the non-streaming ``/converse`` path, which is
the same error wire) must carry the body's message and be classified.

Skips cleanly when the corpus is absent (tests/conftest.py).
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from test_provider_bedrock_converse_stream import frame_cuts

from cassette_checks import ends_done, ends_failed, events_of
from corpus_streams import (
    assert_chunkings_agree,
    blocks_text,
    botocore_frames,
    corpus_params,
    corpus_recordings,
    corpus_streams,
)
from stream_harness.conformance.strategies import split_at
from stream_harness.contract.events import DoneEvent, ErrorEvent, ThinkingBlock, ToolCall
from stream_harness.recordings.cassette import Interaction, load_cassette
from stream_harness.recordings.golden import interaction_events

PROTOCOL = "bedrock-converse-stream"
REPO = Path(__file__).resolve().parents[2]
STREAMS = corpus_params(corpus_streams(PROTOCOL))
# The /converse errors are not detected by URL; their wire is the same.
HTTP_ERRORS = corpus_params(
    r
    for r in corpus_recordings()
    if r.is_http_error and (r.protocol == PROTOCOL or r.path.parent.name == "bedrock_converse")
)


# -- the oracles -------------------------------------------------------------------------------


@dataclass
class Wire:
    """A ConverseStream response as a reader of the wire sees it."""

    texts: dict[int, str] = field(default_factory=dict)
    reasoning: dict[int, str] = field(default_factory=dict)
    signatures: dict[int, str] = field(default_factory=dict)
    redacted: dict[int, bytes] = field(default_factory=dict)
    tools: dict[int, dict[str, Any]] = field(default_factory=dict)
    # Blocks the service ran (server tool use and its result), as the Converse message
    # would hold them: index -> (type, data, input text).
    server: dict[int, tuple[str, dict[str, Any], str]] = field(default_factory=dict)
    stop_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)

    def fold(self, event_type: str, payload: dict[str, Any]) -> None:
        if event_type == "contentBlockStart":
            tool = payload["start"].get("toolUse")
            result = payload["start"].get("toolResult")
            if tool is not None and tool.get("type") == "server_tool_use":
                self.server[payload["contentBlockIndex"]] = ("server_tool_use", dict(tool), "")
            elif result is not None:
                self.server[payload["contentBlockIndex"]] = ("toolResult", dict(result), "")
            elif tool is not None:
                self.tools[payload["contentBlockIndex"]] = {
                    "id": tool["toolUseId"],
                    "name": tool["name"],
                    "input": "",
                }
        elif event_type == "contentBlockDelta":
            i, delta = payload["contentBlockIndex"], payload["delta"]
            if "text" in delta:
                self.texts[i] = self.texts.get(i, "") + delta["text"]
            if "toolUse" in delta and i in self.tools:
                self.tools[i]["input"] += delta["toolUse"]["input"]
            if "toolUse" in delta and i in self.server:
                kind, data, text = self.server[i]
                self.server[i] = (kind, data, text + delta["toolUse"]["input"])
            if "toolResult" in delta and i in self.server:
                self.server[i][1].setdefault("content", []).extend(delta["toolResult"])
            reasoning = delta.get("reasoningContent", {})
            if "text" in reasoning:
                self.reasoning[i] = self.reasoning.get(i, "") + reasoning["text"]
            if "signature" in reasoning:
                self.signatures[i] = self.signatures.get(i, "") + reasoning["signature"]
            if "redactedContent" in reasoning:
                blob = reasoning["redactedContent"]
                # JSON carries base64; botocore hands over the decoded bytes.
                piece = blob if isinstance(blob, bytes) else base64.b64decode(blob)
                self.redacted[i] = self.redacted.get(i, b"") + piece
        elif event_type == "messageStop":
            self.stop_reason = payload.get("stopReason")
        elif event_type == "metadata":
            self.usage = dict(payload.get("usage", {}))


def read_wire(body: bytes) -> Wire:
    """Frames cut by their length prefix, both CRCs checked, headers read by hand."""
    w = Wire()
    pos = 0
    while pos < len(body):
        total, headers_len, prelude_crc = struct.unpack_from(">III", body, pos)
        assert zlib.crc32(body[pos : pos + 8]) == prelude_crc
        end = pos + total
        assert zlib.crc32(body[pos : end - 4]) == struct.unpack_from(">I", body, end - 4)[0]
        headers: dict[str, str] = {}
        h = pos + 12
        while h < pos + 12 + headers_len:
            name_len = body[h]
            name = body[h + 1 : h + 1 + name_len].decode()
            h += 1 + name_len
            assert body[h] == 7  # Bedrock sends string headers only
            (size,) = struct.unpack_from(">H", body, h + 1)
            headers[name] = body[h + 3 : h + 3 + size].decode()
            h += 3 + size
        payload = json.loads(body[pos + 12 + headers_len : end - 4])
        assert headers[":message-type"] == "event"
        w.fold(headers[":event-type"], payload)
        pos = end
    return w


def read_with_botocore(body: bytes) -> Wire:
    """The official SDK's reading: botocore's event-stream buffer and ConverseStream parser."""
    w = Wire()
    for parsed in botocore_frames(body, "ConverseStream", "stream"):
        for event_type, payload in parsed.items():
            w.fold(event_type, payload)
    return w


def assert_matches(message: Any, w: Wire) -> None:
    content = message.content
    assert blocks_text(content) == "".join(w.texts[i] for i in sorted(w.texts))
    thinking = [b for b in content if isinstance(b, ThinkingBlock) and not b.redacted]
    assert [b.content for b in thinking] == [w.reasoning[i] for i in sorted(w.reasoning)]
    assert [b.signature for b in thinking] == [w.signatures.get(i) for i in sorted(w.reasoning)]
    redacted = [b for b in content if isinstance(b, ThinkingBlock) and b.redacted]
    # The redacted token is the base64 of the joined bytes (case 45).
    assert [base64.b64decode(b.signature or "") for b in redacted] == [
        w.redacted[i] for i in sorted(w.redacted)
    ]
    calls = [b for b in content if isinstance(b, ToolCall)]
    wire_calls = [w.tools[i] for i in sorted(w.tools)]
    assert [(c.id, c.name) for c in calls] == [(t["id"], t["name"]) for t in wire_calls]
    for call, wire_call in zip(calls, wire_calls, strict=True):
        try:
            arguments = json.loads(wire_call["input"] or "{}")
        except ValueError:
            continue  # malformed_tool_use: the wire has no arguments to compare with
        assert call.arguments == arguments
    server = [
        (kind, {**data, "input": json.loads(text)} if text else data)
        for kind, data, text in (w.server[i] for i in sorted(w.server))
    ]
    assert [
        (p.provider_type, p.data)
        for p in message.provider_blocks
        if p.provider_type in ("server_tool_use", "toolResult")
    ] == server
    assert message.provider_stop_reason == w.stop_reason
    u = w.usage
    assert message.usage.input == u.get("inputTokens", 0)
    assert message.usage.output == u.get("outputTokens", 0)
    assert message.usage.cache_read == u.get("cacheReadInputTokens", 0)
    assert message.usage.cache_write == u.get("cacheWriteInputTokens", 0)
    assert message.usage.total == u["totalTokens"]


# -- tests ---------------------------------------------------------------------------------


@pytest.mark.usefixtures("corpus_dir")  # skips without a corpus
def test_the_corpus_has_bedrock_streams() -> None:
    assert len(STREAMS) >= 7  # 7 when this was written; a drop means detection broke
    assert len(HTTP_ERRORS) >= 8


@pytest.mark.parametrize("inter", STREAMS)
def test_final_message_matches_the_wire(inter: Interaction) -> None:
    last = ends_done(events_of(PROTOCOL, [inter.response.body]))
    w = read_wire(inter.response.body)
    assert_matches(last.message, w)
    expected = {"end_turn": "stop", "tool_use": "tool_use"}[str(w.stop_reason)]
    assert last.reason == expected
    # No model or response id on this wire (they are in the URL and the HTTP headers).
    assert (last.message.model, last.message.response_id) == (None, None)


@pytest.mark.parametrize("inter", STREAMS)
def test_final_message_matches_botocore(inter: Interaction) -> None:
    w = read_with_botocore(inter.response.body)
    last = events_of(PROTOCOL, [inter.response.body])[-1]
    assert isinstance(last, DoneEvent)
    assert_matches(last.message, w)


@pytest.mark.parametrize("inter", STREAMS)
def test_split_at_frame_boundaries(inter: Interaction) -> None:
    # Any chunking and one byte at a time: test_corpus_split_invariance.py, for every protocol.
    body = inter.response.body
    assert_chunkings_agree(PROTOCOL, body, frame_cuts(body).map(lambda cuts: split_at(body, cuts)))


@pytest.mark.parametrize("inter", HTTP_ERRORS)
def test_http_errors_carry_the_provider_message(inter: Interaction) -> None:
    last = ends_failed(interaction_events(inter, PROTOCOL))
    body = json.loads(inter.response.body)
    assert last.error_message == body["message"]
    assert last.error is not None and last.error.status == inter.response.status
    text = body["message"].lower()
    if "input is too long" in text or "input tokens exceeded" in text:
        assert last.error.kind == "overflow"  # provider-facts.md 4.3, overflow.yaml
    elif inter.response.status == 429:
        assert (last.error.kind, last.error.retryable) == ("rate_limit", True)
        assert last.error.provider_type == "ThrottlingException"  # the body's __type
    else:
        assert (last.error.kind, last.error.retryable) == ("fatal", False)


BUNDLED = sorted((REPO / "cassettes" / PROTOCOL).glob("*.yaml"))


@pytest.mark.parametrize("path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_bundled_cassettes_against_botocore(path: Path) -> None:
    # The bundled cassettes are ours; botocore is the check that they are real frames
    # and that we read them as the SDK does.
    pytest.importorskip("botocore")
    from botocore.eventstream import ChecksumMismatch

    inter = load_cassette(path).interactions[0]
    if inter.response.status >= 400:
        return  # a JSON error body, not an event stream
    last = events_of(PROTOCOL, [inter.response.body])[-1]
    if path.stem == "crc_corruption":
        # case 42: botocore raises on the damaged frame; we end in an error event.
        with pytest.raises(ChecksumMismatch):
            read_with_botocore(inter.response.body)
        assert isinstance(last, ErrorEvent) and "CRC mismatch" in last.error_message
        return
    w = read_with_botocore(inter.response.body)
    if path.stem == "leftover_bytes":
        # case 43: botocore's buffer keeps the incomplete frame and the iteration simply
        # ends (known difference 1); we end in an error that says so.
        assert w.stop_reason is None
        assert (
            isinstance(last, ErrorEvent) and "incomplete event-stream frame" in last.error_message
        )
        return
    if w.stop_reason is None:
        # An exception frame cut the stream: compare the content received before it.
        assert isinstance(last, ErrorEvent)
        w.usage = {"totalTokens": 0}
    assert_matches(last.message, w)
