"""The ollama normalizer on every recorded native-API interaction of the corpus.

There is no official SDK accumulator to compare with (ollama-python yields one
``ChatResponse`` per line and leaves joining them to the caller), so the oracle is a
plain reading of the wire, a few lines with no state machine: every line parsed with
``json.loads``, ``message.thinking`` and ``message.content`` joined, tool calls read in
order, ``done_reason`` and the counts of the ``done: true`` line. The final message must
agree with it (any chunking giving the one-chunk events, contract C13, is
test_corpus_split_invariance.py's, for every protocol).

The corpus's one Ollama stream (openinference, qwen3.6 with thinking) ends with a
``done: true`` line, so it must end in ``done``.

Skips cleanly when the corpus is absent (tests/conftest.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from cassette_checks import ends_done, events_of
from corpus_streams import blocks_text, corpus_params, corpus_streams
from stream_harness.contract.events import ThinkingBlock, ToolCall
from stream_harness.recordings.cassette import Interaction

PROTOCOL = "ollama"
STREAMS = corpus_params(corpus_streams(PROTOCOL))


@dataclass
class Wire:
    thinking: str = ""
    text: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    done_reason: str | None = None
    prompt_eval_count: int = 0
    eval_count: int = 0
    model: str | None = None


def read_wire(body: bytes) -> Wire:
    w = Wire()
    for raw in body.decode("utf-8").splitlines():
        if not raw.strip():
            continue
        line = json.loads(raw)
        w.model = line.get("model", w.model)
        message = line.get("message", {})
        w.thinking += message.get("thinking", "")
        w.text += message.get("content", "")
        for call in message.get("tool_calls", []):
            w.calls.append((call["function"]["name"], call["function"]["arguments"]))
        if line.get("done"):
            w.done_reason = line.get("done_reason")
            w.prompt_eval_count = line.get("prompt_eval_count", 0)
            w.eval_count = line.get("eval_count", 0)
    return w


@pytest.mark.usefixtures("corpus_dir")  # skips without a corpus
def test_the_corpus_has_an_ollama_stream() -> None:
    assert len(STREAMS) >= 1  # 1 when this was written; a drop means detection broke


@pytest.mark.parametrize("inter", STREAMS)
def test_final_message_matches_the_wire(inter: Interaction) -> None:
    last = ends_done(events_of(PROTOCOL, [inter.response.body]))
    message = last.message
    w = read_wire(inter.response.body)
    assert blocks_text(message.content, ThinkingBlock) == w.thinking
    assert blocks_text(message.content) == w.text
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    assert [(c.name, c.arguments) for c in calls] == w.calls
    assert len({c.id for c in calls}) == len(calls)
    assert message.provider_stop_reason == w.done_reason
    assert last.reason == (
        "tool_use" if w.calls else {"stop": "stop", "length": "length"}[str(w.done_reason)]
    )
    assert message.usage.input == w.prompt_eval_count
    assert message.usage.output == w.eval_count
    assert message.usage.total == w.prompt_eval_count + w.eval_count
    assert message.model == w.model
