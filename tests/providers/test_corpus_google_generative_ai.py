"""The google-generative-ai normalizer on every recorded Gemini interaction of the corpus.

There is no official SDK accumulator to compare with for Gemini, so the oracle is a plain
reading of the wire, a few lines with no state machine: every chunk parsed with
``json.loads`` (SSE ``data:`` lines, or the JSON array), part texts joined by
``thought``, function calls counted and read in order, the last ``finishReason``, the last
value of each ``usageMetadata`` counter, every ``thoughtSignature``. The final message
must agree with it (any chunking giving the one-chunk events, contract C13, is
test_corpus_split_invariance.py's, for every protocol).

Every streaming interaction in the corpus has a finishReason in its last chunk, so all
must end in ``done`` (none of the recorded streams is cut; the cut case is covered by
the bundled ``stream_cut`` cassette and unit tests). The corpus's HTTP errors (400 bad
key, 404 unknown model, 503 overloaded) must surface the body's ``error.message``.

Skips cleanly when the corpus is absent (tests/conftest.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from cassette_checks import ends_done, ends_failed, events_of
from corpus_streams import blocks_text, corpus_params, corpus_recordings, corpus_streams
from stream_harness.contract.events import ThinkingBlock, ToolCall
from stream_harness.providers.reference import detect_protocol
from stream_harness.recordings.cassette import Interaction
from stream_harness.recordings.golden import interaction_events

PROTOCOL = "google-generative-ai"
# Vertex AI recordings of the same wire (aiplatform.googleapis.com URLs) are detected as
# vertex-gemini, the same translator behind its integer-enum step: judged by the same oracle.
PROTOCOLS = (PROTOCOL, "vertex-gemini")
STREAMS = corpus_params(corpus_streams(*PROTOCOLS))
HTTP_ERRORS = corpus_params(
    r for r in corpus_recordings() if r.is_http_error and r.protocol in PROTOCOLS
)


# -- the oracle ------------------------------------------------------------------------------


def _chunks(body: bytes) -> list[dict[str, Any]]:
    text = body.decode("utf-8")
    if text.lstrip().startswith("["):
        return list(json.loads(text))
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


@dataclass
class Wire:
    text: str = ""
    thinking: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    call_ids: list[str | None] = field(default_factory=list)
    other_parts: int = 0
    signatures: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    model: str | None = None
    response_id: str | None = None


def read_wire(body: bytes) -> Wire:
    w = Wire()
    for chunk in _chunks(body):
        w.model = chunk.get("modelVersion", w.model)
        w.response_id = chunk.get("responseId", w.response_id)
        w.usage.update(chunk.get("usageMetadata", {}))
        for candidate in chunk.get("candidates") or []:
            for part in candidate.get("content", {}).get("parts", []):
                if "thoughtSignature" in part:
                    w.signatures.append(part["thoughtSignature"])
                if "functionCall" in part:
                    w.calls.append(
                        (part["functionCall"]["name"], part["functionCall"].get("args", {}))
                    )
                    w.call_ids.append(part["functionCall"].get("id"))
                elif part.get("thought") is True:
                    w.thinking += part["text"]
                elif "text" in part:
                    w.text += part["text"]
                else:
                    w.other_parts += 1
            w.finish_reason = candidate.get("finishReason", w.finish_reason)
    return w


# -- tests ---------------------------------------------------------------------------------


@pytest.mark.usefixtures("corpus_dir")  # skips without a corpus
def test_the_corpus_has_gemini_streams() -> None:
    assert len(STREAMS) >= 20  # 23 when this was written; a drop means detection broke
    assert len(HTTP_ERRORS) >= 3


@pytest.mark.parametrize("inter", STREAMS)
def test_final_message_matches_the_wire(inter: Interaction) -> None:
    last = ends_done(events_of(detect_protocol(inter), [inter.response.body]))
    message = last.message
    w = read_wire(inter.response.body)

    assert blocks_text(message.content) == w.text
    assert blocks_text(message.content, ThinkingBlock) == w.thinking
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    assert [(c.name, c.arguments) for c in calls] == w.calls
    # Wire ids are kept; calls without one get unique synthetic ids (case 36).
    for call, wire_id in zip(calls, w.call_ids, strict=True):
        if wire_id is not None:
            assert call.id == wire_id
    assert len({c.id for c in calls}) == len(calls)
    assert len(message.provider_blocks) >= w.other_parts

    # Every signature on the wire is on exactly one block or kept part (never dropped,
    # never duplicated); this corpus has at most one per block.
    kept = [b.signature for b in message.content if b.signature is not None]
    kept += [
        p.data["thoughtSignature"] for p in message.provider_blocks if "thoughtSignature" in p.data
    ]
    assert sorted(kept) == sorted(w.signatures)

    assert message.provider_stop_reason == w.finish_reason
    expected_reason = {"STOP": "tool_use" if w.calls else "stop", "MAX_TOKENS": "length"}[
        str(w.finish_reason)
    ]
    assert last.reason == expected_reason

    u = w.usage
    assert message.usage.input == (
        u.get("promptTokenCount", 0)
        - u.get("cachedContentTokenCount", 0)
        + u.get("toolUsePromptTokenCount", 0)
    )
    assert message.usage.output == u.get("candidatesTokenCount", 0) + u.get("thoughtsTokenCount", 0)
    assert message.usage.cache_read == u.get("cachedContentTokenCount", 0)
    assert message.usage.total == u["totalTokenCount"]
    # toolUsePromptTokenCount belongs to input: with it, the parts add up to the total.
    assert (
        message.usage.input + message.usage.output + message.usage.cache_read == message.usage.total
    )
    assert (message.model, message.response_id) == (w.model, w.response_id)


@pytest.mark.parametrize("inter", HTTP_ERRORS)
def test_http_errors_carry_the_provider_message(inter: Interaction) -> None:
    last = ends_failed(interaction_events(inter, detect_protocol(inter)))
    assert last.error_message == json.loads(inter.response.body)["error"]["message"]
    assert last.error is not None and last.error.status == inter.response.status
