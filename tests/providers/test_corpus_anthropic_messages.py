"""The anthropic-messages normalizer on every recorded streaming interaction of the corpus.

Three oracles, each independent of the normalizer:

1. a plain reading of the wire (every ``data:`` line parsed with ``json.loads``; texts
   joined per delta type, tool ids in order, the last ``stop_reason`` and
   ``output_tokens``);
2. the official SDK's accumulator (anthropic 2.x ``client.beta.messages.stream(...)``,
   fed through an httpx2 ``MockTransport``, ecosystem.md section 4), compared on text,
   thinking + signature, tool calls, stop reason, usage, citations and the blocks kept as
   provider blocks; every disagreement we accept is listed in specs/known-differences.md;
3. split invariance (contract C13), for every protocol in test_corpus_split_invariance.py.

Skips cleanly when the corpus is absent (tests/conftest.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cassette_checks import ends_done, events_of, replaying_client
from corpus_streams import blocks_text, corpus_params, corpus_streams
from stream_harness.contract.events import AssistantMessage, TextBlock, ThinkingBlock, ToolCall
from stream_harness.recordings.cassette import Interaction, load_cassette

PROTOCOL = "anthropic-messages"
INTERACTIONS = corpus_params(corpus_streams(PROTOCOL))


def _wire(body: bytes) -> list[dict[str, Any]]:
    """Every data payload, in order (oracle 1: no state machine, just json.loads)."""
    out = []
    for line in body.decode("utf-8").split("\n"):
        if line.startswith("data:"):
            out.append(json.loads(line[5:]))
    return out


@pytest.mark.usefixtures("corpus_dir")  # skips without a corpus
def test_the_corpus_has_anthropic_streams() -> None:
    assert len(INTERACTIONS) >= 20  # 23 at the time of writing


@pytest.mark.corpus
@pytest.mark.parametrize("inter", INTERACTIONS)
def test_corpus_stream_ends_in_done_and_matches_the_wire(inter: Interaction) -> None:
    # Every Anthropic stream in the corpus ends with message_stop after a known stop
    # reason; none carries an error event (corpus-visible-notes.md gap 6).
    last = ends_done(events_of(PROTOCOL, [inter.response.body]))
    msg = last.message
    wire = _wire(inter.response.body)

    def joined(delta_type: str, key: str) -> str:
        return "".join(
            w["delta"][key]
            for w in wire
            if w["type"] == "content_block_delta" and w["delta"]["type"] == delta_type
        )

    assert blocks_text(msg.content) == joined("text_delta", "text")
    thinking = [b for b in msg.content if isinstance(b, ThinkingBlock)]
    assert "".join(b.content for b in thinking if not b.redacted) == joined(
        "thinking_delta", "thinking"
    )
    assert "".join(b.signature or "" for b in thinking if not b.redacted) == joined(
        "signature_delta", "signature"
    )
    starts = [w["content_block"] for w in wire if w["type"] == "content_block_start"]
    assert [b.signature for b in thinking if b.redacted] == [
        s["data"] for s in starts if s["type"] == "redacted_thinking"
    ]
    assert [(c.id, c.name) for c in msg.content if isinstance(c, ToolCall)] == [
        (s["id"], s["name"]) for s in starts if s["type"] == "tool_use"
    ]
    deltas = [w for w in wire if w["type"] == "message_delta"]
    assert msg.provider_stop_reason == deltas[-1]["delta"]["stop_reason"]
    assert msg.usage.output == deltas[-1]["usage"]["output_tokens"]
    first = next(w for w in wire if w["type"] == "message_start")["message"]
    assert (msg.model, msg.response_id) == (first["model"], first["id"])
    kept = [
        p.provider_type
        for p in msg.provider_blocks
        if p.provider_type not in ("citations", "message_delta")
    ]
    assert kept == [
        s["type"]
        for s in starts
        if s["type"] not in ("text", "thinking", "redacted_thinking", "tool_use")
    ]


# -- the SDK oracle ---------------------------------------------------------------------


def sdk_final_message(body: bytes) -> Any:
    """The anthropic SDK's get_final_message() for a recorded body (no cassette active)."""
    anthropic = pytest.importorskip("anthropic")
    client = anthropic.Anthropic(
        api_key="test-key",
        base_url="http://oracle.invalid",
        max_retries=0,
        http_client=replaying_client(pytest.importorskip("httpx2"), body),
    )
    # The beta accumulator is a superset of the plain one: it also assembles mcp_tool_use
    # input and applies compaction_delta (specs/known-differences.md).
    with client.beta.messages.stream(
        model="claude-oracle", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        for _ in stream:
            pass
        return stream.get_final_message()


_CONTRACT_TYPES = ("text", "thinking", "redacted_thinking", "tool_use")


def _without_none(value: Any) -> Any:
    # The SDK assigns optional delta fields it did not receive (compaction_delta's
    # encrypted_content) as None; we keep only what the wire sent (known-differences.md).
    return {k: v for k, v in value.items() if v is not None} if isinstance(value, dict) else value


def sdk_view(message: Any) -> dict[str, Any]:
    blocks: list[tuple[Any, ...]] = []
    citations: list[tuple[int, list[Any]]] = []
    others: list[Any] = []
    for block in message.content:
        d = block.to_dict()
        kind = d["type"]
        if kind == "text":
            if d["text"]:  # an empty text block opens no block in the contract
                blocks.append(("text", d["text"]))
            if d.get("citations"):
                citations.append((len(blocks) - 1, d["citations"]))
        elif kind == "thinking":
            blocks.append(("thinking", d["thinking"], d.get("signature") or None))
        elif kind == "redacted_thinking":
            blocks.append(("redacted", d["data"]))
        elif kind == "tool_use":
            blocks.append(("tool", d["id"], d["name"], d["input"]))
        else:
            others.append(_without_none(d))
    u = message.usage
    return {
        "model": message.model,
        "id": message.id,
        "blocks": blocks,
        "citations": citations,
        "others": others,
        "stop_reason": message.stop_reason,
        "usage": (
            u.input_tokens,
            u.output_tokens,
            u.cache_read_input_tokens or 0,
            u.cache_creation_input_tokens or 0,
        ),
    }


def our_view(message: AssistantMessage) -> dict[str, Any]:
    blocks: list[tuple[Any, ...]] = []
    for b in message.content:
        if isinstance(b, TextBlock):
            blocks.append(("text", b.content))
        elif isinstance(b, ThinkingBlock):
            blocks.append(
                ("redacted", b.signature) if b.redacted else ("thinking", b.content, b.signature)
            )
        else:
            blocks.append(("tool", b.id, b.name, b.arguments))
    pbs = message.provider_blocks
    u = message.usage
    return {
        "model": message.model,
        "id": message.response_id,
        "blocks": blocks,
        "citations": [
            (p.data["content_index"], p.data["citations"])
            for p in pbs
            if p.provider_type == "citations"
        ],
        "others": [
            _without_none(p.data)
            for p in pbs
            if p.provider_type not in ("citations", "message_delta")
        ],
        "stop_reason": message.provider_stop_reason,
        "usage": (u.input, u.output, u.cache_read, u.cache_write),
    }


@pytest.mark.corpus
@pytest.mark.parametrize("inter", INTERACTIONS)
def test_corpus_matches_the_anthropic_sdk(inter: Interaction) -> None:
    events = events_of(PROTOCOL, [inter.response.body])
    ours = our_view(events[-1].message)  # type: ignore[union-attr]
    theirs = sdk_view(sdk_final_message(inter.response.body))
    assert ours == theirs


BUNDLED = sorted(
    (Path(__file__).resolve().parents[2] / "cassettes" / "anthropic-messages").glob("*.yaml")
)
# The SDK raises on an `event: error` (ecosystem.md section 4, bug 30), so it has no final
# message to compare for these; specs/known-differences.md lists them.
SDK_RAISES = {"overloaded_midstream", "error_first_event"}


@pytest.mark.parametrize("path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_bundled_cassettes_match_the_anthropic_sdk(path: Path) -> None:
    inter = load_cassette(path).interactions[0]
    if inter.response.status >= 400:
        pytest.skip("HTTP error: no stream for the SDK to accumulate")
    if path.stem in SDK_RAISES:
        anthropic = pytest.importorskip("anthropic")
        with pytest.raises(anthropic.APIStatusError):
            sdk_final_message(inter.response.body)
        return
    events = events_of(PROTOCOL, [inter.response.body])
    assert our_view(events[-1].message) == sdk_view(sdk_final_message(inter.response.body))  # type: ignore[union-attr]


# -- the differences listed in specs/known-differences.md are real ----------------------

_SIG_BODY = (
    'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message",'
    '"role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,'
    '"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    '"content_block":{"type":"thinking","thinking":"","signature":""}}\n\n'
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    '"delta":{"type":"signature_delta","signature":"AAA"}}\n\n'
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    '"delta":{"type":"signature_delta","signature":"BBB"}}\n\n'
    'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
)
_END = (
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn",'
    '"stop_sequence":null},"usage":{"output_tokens":5}}\n\n'
)


def test_known_difference_6_signature_fragments() -> None:
    body = (_SIG_BODY + _END + 'event: message_stop\ndata: {"type":"message_stop"}\n\n').encode()
    theirs = sdk_final_message(body)
    ours = events_of(PROTOCOL, [body])[-1].message  # type: ignore[union-attr]
    assert theirs.content[0].signature == "BBB"  # assigned: the last fragment wins
    assert ours.content == [ThinkingBlock(content="", signature="AAABBB")]


def test_known_difference_7_truncation_is_silent_in_the_sdk() -> None:
    body = (_SIG_BODY + _END).encode()  # no message_stop
    theirs = sdk_final_message(body)
    assert theirs.stop_reason == "end_turn"  # no exception, looks complete
    last = events_of(PROTOCOL, [body])[-1]
    assert last.type == "error"
    assert last.error_message == "stream ended without message_stop"


def test_known_difference_10_a_later_message_delta_without_stop_reason() -> None:
    second = 'event: message_delta\ndata: {"type":"message_delta","delta":{},"usage":{"output_tokens":6}}\n\n'
    body = (
        _SIG_BODY + _END + second + 'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    ).encode()
    assert sdk_final_message(body).stop_reason is None
    ours = events_of(PROTOCOL, [body])[-1].message  # type: ignore[union-attr]
    assert (ours.provider_stop_reason, ours.usage.output) == ("end_turn", 6)
