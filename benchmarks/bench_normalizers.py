"""Benchmark: the reference normalizers against the bare cost and the official SDKs.

Run as ``python benchmarks/bench_normalizers.py`` (options: ``--repeat N``,
``--sdk-repeat N`` (0 skips the SDKs), ``--only PROTOCOL``, ``--keep-events``, ``--out
PATH``). It prints a table and writes ``benchmarks/results/normalizers.json``. Not a
test: beyond checking that every contender assembled the right message, nothing is
asserted; the targets of issue 3 are reported as met or not:

- the normalizer (bytes in, unified events out) costs at most 2x the *bare* cost:
  decoding the body, splitting it into lines and ``json.loads`` of every ``data:``
  payload, nothing else (on the whole body, also when the normalizer is fed 4 KB chunks);
- it is at least 4x faster than the official SDK accumulating the same stream, through
  its public streaming helper over an ``httpx`` ``MockTransport`` serving the body in the
  same chunks (so the SDK, too, goes from bytes to an assembled message):
  anthropic ``client.messages.stream(...)`` + ``get_final_message()`` (its
  ``accumulate_event`` inside), openai ``client.chat.completions.stream(...)`` +
  ``get_final_completion()`` (``ChatCompletionStreamState.handle_chunk`` inside) and
  ``client.responses.stream(...)`` + ``get_final_response()`` (``ResponseStreamState``
  inside). The client is built once, outside the timed region. Gemini: n/a, no SDK
  accumulates its stream (google-genai's ``generate_content_stream`` parses chunks, and
  its chat session appends their contents to the history unmerged).

Every contender consumes the stream as a streaming consumer does: it handles each event
and drops it (the SDK loops and the bare loop keep nothing either). ``--keep-events``
keeps every event of the normalizer in a list instead, which for the tool workloads
means keeping every live-arguments string (gigabytes; see benchmarks/README.md).

Workloads, per protocol, generated here in the protocol's real wire format with payloads
shaped and sized like the bundled cassettes (cassettes/<protocol>/) and fragment lengths
drawn around the medians measured on the recorded corpus (text: Anthropic 17 characters,
Chat Completions and Responses 4, Gemini about 100 per chunk; tool arguments: Anthropic
6, OpenAI 3):

- ``text``: 20,000 text deltas (prose with some Latin-1 and a few wider characters);
- ``tool``: one tool call whose arguments are 100 KB of JSON (a file write: source code
  with newlines, quotes, backslashes and a few non-ASCII characters), streamed in
  fragments (Gemini: whole, in one part, as the Gemini API sends calls).

Two more references explain the tool rows: the *floor* is the bare cost plus what the
contract itself adds, one new string per delta holding the arguments so far (C9: a live
value holds its strings whole, and a Python string cannot share a prefix), or, for a call
that arrives parsed, dumping it to the one delta's JSON text. For the text rows, the
stages (SSE framing, JSON parsing, delta-event construction) are timed alone, and the
rest is the protocol's translation and the accumulator's bookkeeping.

Timing: CPU time (``time.process_time``; the machine is shared, being descheduled is not
cost), minimum over the repeats, cyclic GC off during a run as ``timeit`` does, contenders
taking turns so that load drifting hits them alike.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from stream_harness.contract.events import DoneEvent, Event, TextBlock, TextDeltaEvent, ToolCall
from stream_harness.providers.base import framing_slices, parse_json
from stream_harness.providers.registry import get_normalizer
from stream_harness.wire import SSEDecoder

TEXT_DELTAS = 20_000
TOOL_BYTES = 100_000
CHUNK = 4096
RESULTS = Path(__file__).resolve().parent / "results" / "normalizers.json"
PROTOCOLS = ("anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai")
TARGET_BARE = 2.0
TARGET_SDK = 4.0

# -- content -------------------------------------------------------------------------------

_WORDS = (
    "the stream harness replays recorded provider traffic and checks every event against "
    "the contract so that a café résumé naïve über façade déjà vu — “quoted” text → arrow "
    "works the same whatever the chunking of the body was when it arrived over the network"
).split(" ")


def text_fragments(n: int, median: int, seed: int) -> list[str]:
    """``n`` prose fragments whose lengths scatter around ``median`` characters."""
    rng = random.Random(seed)
    prose = " ".join(rng.choice(_WORDS) for _ in range(n * max(1, median) // 4 + 64))
    out: list[str] = []
    pos = 0
    for _ in range(n):
        size = rng.randint(1, 2 * median - 1) if median > 1 else 1
        if pos + size > len(prose):
            pos = 0
        out.append(prose[pos : pos + size])
        pos += size
    return out


_CODE = [
    "def {w}_{i}(self, path: str) -> None:",
    '    """Load the {w} from path (cache: {i} entries, déjà vu)."""',
    '    pattern = re.compile(r"^\\s*(\\w+)\\s*=\\s*\\"([^\\"]*)\\"$")',
    '    win_path = "C:\\\\Users\\\\{w}\\\\AppData\\\\Local\\\\tmp_{i}"',
    "    if not self.{w}_{i}:",
    '        raise ValueError(f"missing {w!r}: {{self.{w}_{i}}} at line {i}")',
    "    for key, value in sorted(self.items.items()):  # {w} #{i} → next",
    "        print(f'{{key}}\\t{{value}}', end=\"\\n\")",
    "",
]
_CODE_WORDS = ("config", "value", "item", "path", "count", "cache", "index", "result")


def tool_arguments_json(size: int, seed: int = 7) -> str:
    """``{"path": ..., "content": <source code>}`` as compact JSON of ``size`` characters."""
    rng = random.Random(seed)
    lines: list[str] = []
    length = 0
    while length < size:
        line = rng.choice(_CODE).format(w=rng.choice(_CODE_WORDS), i=rng.randrange(10_000))
        lines.append(line)
        length += len(line) + 4
    content = "\n".join(lines)
    text = ""
    low, high = 0, len(content)  # the longest cut that fits
    while low < high:
        mid = (low + high + 1) // 2
        candidate = _compact({"path": "src/app/generated.py", "content": content[:mid]})
        if len(candidate) <= size:
            low, text = mid, candidate
        else:
            high = mid - 1
    return text or _compact({"path": "src/app/generated.py", "content": content[:low]})


def split_text(text: str, median: int, seed: int) -> list[str]:
    """``text`` cut into pieces whose lengths scatter around ``median`` (mid-escape too)."""
    rng = random.Random(seed)
    out: list[str] = []
    pos = 0
    while pos < len(text):
        size = rng.randint(1, 2 * median - 1)
        out.append(text[pos : pos + size])
        pos += size
    return out


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# -- wire formats -----------------------------------------------------------------------------


def _sse(events: list[tuple[str | None, Any]], sep: str = "\n") -> bytes:
    out: list[str] = []
    for name, data in events:
        payload = data if isinstance(data, str) else _compact(data)
        if name is not None:
            out.append(f"event: {name}{sep}")
        out.append(f"data: {payload}{sep}{sep}")
    return "".join(out).encode("utf-8")


def anthropic_body(kind: str, pieces: list[str]) -> bytes:
    usage = {
        "input_tokens": 402,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
        "output_tokens": 2,
        "service_tier": "standard",
    }
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_01Tc5Gh7Jk9Lm2Np4Qr6St8U",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        },
    }
    block: dict[str, Any]
    if kind == "text":
        block = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in pieces]
        stop = "end_turn"
    else:
        block = {
            "type": "tool_use",
            "id": "toolu_01A9xQ3mW7kP2vN8cR5tY4bZ",
            "name": "write_file",
            "input": {},
        }
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
        stop = "tool_use"
    events: list[tuple[str | None, Any]] = [
        ("message_start", start),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        ("ping", {"type": "ping"}),
    ]
    events += [
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": d})
        for d in deltas
    ]
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": len(pieces)},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return _sse(events)


def completions_body(kind: str, pieces: list[str]) -> bytes:
    head = {
        "id": "chatcmpl-Fq2Lx0pBenchmark001",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": "gpt-4o-mini-2024-07-18",
        "service_tier": "default",
        "system_fingerprint": "fp_5d2b8a1c0e",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**head, "choices": [choice], **extra, "usage": None}

    if kind == "text":
        first = chunk({"role": "assistant", "content": "", "refusal": None}, obfuscation="aB3")
        body = [
            chunk({"content": p}, obfuscation="x9Q1"[: 1 + i % 4]) for i, p in enumerate(pieces)
        ]
        finish = "stop"
    else:
        call = {
            "index": 0,
            "id": "call_Wq8rT2mXbN4kP7sZ1cV3dF6g",
            "type": "function",
            "function": {"name": "write_file", "arguments": ""},
        }
        first = chunk({"role": "assistant", "content": None, "tool_calls": [call], "refusal": None})
        body = [chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces]
        finish = "tool_calls"
    usage = {
        "prompt_tokens": 61,
        "completion_tokens": len(pieces),
        "total_tokens": 61 + len(pieces),
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }
    last = [chunk({}, finish), {**head, "choices": [], "usage": usage}]
    return _sse([(None, c) for c in [first, *body, *last]] + [(None, "[DONE]")])


_RESPONSE = {
    "id": "resp_774f0ccd76e513c925bca8fb01c4a610db25ec1a6b33bab5",
    "object": "response",
    "created_at": 1767225600,
    "status": "in_progress",
    "background": False,
    "error": None,
    "incomplete_details": None,
    "instructions": None,
    "max_output_tokens": None,
    "model": "gpt-4.1-mini-2025-04-14",
    "output": [],
    "parallel_tool_calls": True,
    "previous_response_id": None,
    "reasoning": {"effort": None, "summary": None},
    "store": True,
    "temperature": 1.0,
    "text": {"format": {"type": "text"}, "verbosity": "medium"},
    "tool_choice": "auto",
    "tools": [],
    "top_p": 1.0,
    "truncation": "disabled",
    "usage": None,
    "user": None,
    "metadata": {},
}


def responses_body(kind: str, pieces: list[str]) -> bytes:
    seq = iter(range(1_000_000))
    events: list[tuple[str | None, Any]] = []

    def add(etype: str, **fields: Any) -> None:
        events.append((etype, {"type": etype, **fields, "sequence_number": next(seq)}))

    add("response.created", response=_RESPONSE)
    add("response.in_progress", response=_RESPONSE)
    whole = "".join(pieces)
    if kind == "text":
        item_id = "msg_20aea19d41c2fd593dc0c8fbd79563ecb65809e37998b462f8"
        item = {
            "id": item_id,
            "type": "message",
            "status": "in_progress",
            "content": [],
            "role": "assistant",
        }
        add("response.output_item.added", output_index=0, item=item)
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        add(
            "response.content_part.added",
            item_id=item_id,
            output_index=0,
            content_index=0,
            part=part,
        )
        for p in pieces:
            add(
                "response.output_text.delta",
                item_id=item_id,
                output_index=0,
                content_index=0,
                delta=p,
                logprobs=[],
                obfuscation="x9Q1",
            )
        add(
            "response.output_text.done",
            item_id=item_id,
            output_index=0,
            content_index=0,
            text=whole,
            logprobs=[],
        )
        part = {**part, "text": whole}
        add(
            "response.content_part.done",
            item_id=item_id,
            output_index=0,
            content_index=0,
            part=part,
        )
        done = {**item, "status": "completed", "content": [part]}
    else:
        item_id = "fc_9e9e9032797a5b9159eb9c250b57e7324abb99a7402b12463f"
        item = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": "call_6c70145d66f12bd25fb9c204",
            "name": "write_file",
        }
        add("response.output_item.added", output_index=0, item=item)
        for p in pieces:
            add(
                "response.function_call_arguments.delta",
                item_id=item_id,
                output_index=0,
                delta=p,
                obfuscation="x9Q1",
            )
        add(
            "response.function_call_arguments.done",
            item_id=item_id,
            output_index=0,
            arguments=whole,
        )
        done = {**item, "status": "completed", "arguments": whole}
    add("response.output_item.done", output_index=0, item=done)
    usage = {
        "input_tokens": 61,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": len(pieces),
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 61 + len(pieces),
    }
    add(
        "response.completed",
        response={**_RESPONSE, "status": "completed", "output": [done], "usage": usage},
    )
    return _sse(events)


def gemini_body(kind: str, pieces: list[str]) -> bytes:
    """``alt=sse``: ``data:`` lines, ``\\r\\n`` line ends, Gemini's spaced JSON."""

    def chunk(parts: list[dict[str, Any]], finish: str | None, candidates_tokens: int) -> str:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
        if finish:
            candidate["finishReason"] = finish
        candidate["index"] = 0
        usage = {
            "promptTokenCount": 61,
            "candidatesTokenCount": candidates_tokens,
            "totalTokenCount": 61 + candidates_tokens,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 61}],
            "thoughtsTokenCount": 21,
        }
        obj = {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": "gemini-2.5-flash",
            "responseId": "rkCOdp0NXir2IFjK5-Az2CY",
        }
        return json.dumps(obj, ensure_ascii=False, separators=(",", ": "))

    if kind == "text":
        chunks = [chunk([{"text": p}], None, i) for i, p in enumerate(pieces)]
        chunks[-1] = chunk([{"text": pieces[-1]}], "STOP", len(pieces))
    else:
        call = {"name": "write_file", "args": json.loads("".join(pieces)), "id": "5yq0kd2m"}
        chunks = [chunk([{"functionCall": call}], None, 18), chunk([{"text": ""}], "STOP", 18)]
    return _sse([(None, c) for c in chunks], sep="\r\n")


# Median fragment lengths measured on /work/shared/corpus (text deltas, tool arguments).
_SHAPES: dict[str, tuple[Callable[[str, list[str]], bytes], int, int]] = {
    "anthropic-messages": (anthropic_body, 17, 6),
    "openai-completions": (completions_body, 4, 3),
    "openai-responses": (responses_body, 4, 3),
    "google-generative-ai": (gemini_body, 100, 0),
}


@dataclass
class Workload:
    protocol: str
    kind: str
    body: bytes
    deltas: int
    expected: str | dict[str, Any]  # the text, or the tool arguments
    arguments: str = ""  # tool: the arguments' JSON text
    ends: tuple[int, ...] = ()  # tool: where each fragment of it ends
    pieces: tuple[str, ...] = ()  # text: the deltas

    @property
    def events(self) -> int:
        return self.body.count(b"data:")


def workload(protocol: str, kind: str) -> Workload:
    make, text_median, args_median = _SHAPES[protocol]
    if kind == "text":
        pieces = text_fragments(TEXT_DELTAS, text_median, seed=11)
        expected: str | dict[str, Any] = "".join(pieces)
    else:
        args = tool_arguments_json(TOOL_BYTES)
        pieces = split_text(args, args_median, seed=13) if args_median else [args]
        ends = list(itertools.accumulate(len(p) for p in pieces))
        return Workload(
            protocol, kind, make(kind, pieces), len(pieces), json.loads(args), args, tuple(ends)
        )
    return Workload(protocol, kind, make(kind, pieces), len(pieces), expected, pieces=tuple(pieces))


# -- contenders -----------------------------------------------------------------------------


def chunked(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


def bare(body: bytes) -> Callable[[], object]:
    """The floor: decode, split into lines, ``json.loads`` every ``data:`` payload.

    The fastest of the plain loops tried (bytes lines, keeping the values in a list and
    a list comprehension were all slower); it keeps nothing, as a consumer that acts on
    each payload and drops it.
    """
    loads = json.loads

    def run() -> None:
        for line in body.decode("utf-8").splitlines():
            if line.startswith("data: "):
                payload = line[6:]
                if payload != "[DONE]":
                    loads(payload)

    return run


def live_floor(body: bytes, arguments: str, ends: list[int], *, keep: bool) -> Callable[[], object]:
    """The bare cost plus what contract C9 alone costs: one new string per delta holding
    the arguments so far (a live value holds its strings whole, and a Python string
    cannot share a prefix with another). ``keep``: all of them alive at once, as when the
    whole body is fed in one call (``feed`` returns every event of the body in one list);
    else each dropped at once, as a streaming consumer of small chunks does."""
    run_bare = bare(body)

    def run() -> object:
        run_bare()
        if keep:
            return [arguments[:end] for end in ends]
        for end in ends:
            arguments[:end]  # the copy is the point
        return None

    return run


def whole_call_floor(body: bytes, arguments: Any) -> Callable[[], object]:
    """The bare cost plus writing the one ``toolcall_delta`` of a call that arrives
    parsed (Gemini): the contract's delta is JSON text, so the object is dumped."""
    run_bare = bare(body)

    def run() -> object:
        run_bare()
        return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))

    return run


def normalizer(
    protocol: str, chunks: list[bytes], *, keep: bool, read_arguments: bool = False
) -> Callable[[], Event | None]:
    """Feed the chunks, consume every event; return the last one.

    As the SDK runs and the bare loop do, a streaming consumer handles each event and
    drops it; ``keep`` holds all of them instead (see ``--keep-events``).
    ``read_arguments``: the consumer also reads the live arguments of every
    ``toolcall_delta`` (built on read, events.DeferredArguments), as a UI showing the
    call as it streams would.
    """

    def run() -> Event | None:
        norm = get_normalizer(protocol)
        kept: list[Event] = []
        last: Event | None = None
        for chunk in chunks:
            for last in norm.feed(chunk):
                if read_arguments and last.type == "toolcall_delta":
                    last.arguments  # noqa: B018  # the read is the point
                if keep:
                    kept.append(last)
        for last in norm.close():
            if keep:
                kept.append(last)
        return last

    return run


def stages(w: Workload) -> dict[str, Callable[[], object]]:
    """Where the time of a text stream goes, fed whole: the SSE framing alone, framing
    plus JSON parsing (as the normalizers parse), and building the delta events alone
    (pydantic validation, as the accumulator builds them). The rest of the normalizer's
    time is the protocol's translation and the accumulator's bookkeeping."""
    body = w.body
    make_event = TextDeltaEvent.__pydantic_validator__.validate_python

    def sse() -> None:
        decoder = SSEDecoder()  # fed as the normalizers feed it, a slice at a time
        for piece in framing_slices(body):
            for _event in decoder.feed(piece):
                pass
        decoder.close()

    def sse_json() -> None:
        decoder = SSEDecoder()
        for piece in framing_slices(body):
            for event in decoder.feed(piece):
                if event.data != "[DONE]":  # type: ignore[union-attr]
                    parse_json(event.data)  # type: ignore[union-attr]
        decoder.close()

    def delta_events() -> None:
        for piece in w.pieces:
            make_event({"content_index": 0, "delta": piece})

    return {"stage_sse": sse, "stage_sse_json": sse_json, "stage_delta_events": delta_events}


def check_normalizer(w: Workload, terminal: Event | None) -> None:
    assert isinstance(terminal, DoneEvent), terminal
    (block,) = terminal.message.content
    if w.kind == "text":
        assert isinstance(block, TextBlock) and block.content == w.expected
    else:
        assert isinstance(block, ToolCall) and block.arguments == w.expected


def _transport(httpx_module: Any, chunks: list[bytes]) -> Any:
    """A MockTransport answering every request with the body, in ``chunks``."""

    class Body(httpx_module.SyncByteStream):  # type: ignore[misc]
        def __iter__(self) -> Any:
            return iter(chunks)

    def handler(request: Any) -> Any:
        return httpx_module.Response(
            200, headers={"content-type": "text/event-stream"}, stream=Body()
        )

    return httpx_module.MockTransport(handler)


def sdk(protocol: str, chunks: list[bytes]) -> tuple[Callable[[], Any], str] | None:
    """The SDK's streaming helper over a mock transport; None where there is none."""
    if protocol == "anthropic-messages":
        import anthropic
        import httpx2

        client = anthropic.Anthropic(
            api_key="test",
            base_url="http://bench.invalid",
            max_retries=0,
            http_client=httpx2.Client(transport=_transport(httpx2, chunks)),
        )

        def run_anthropic() -> Any:
            with client.messages.stream(
                model="claude-bench", max_tokens=1024, messages=[{"role": "user", "content": "hi"}]
            ) as stream:
                for _ in stream:
                    pass
                return stream.get_final_message()

        return run_anthropic, f"anthropic {anthropic.__version__}: client.messages.stream"
    if protocol in ("openai-completions", "openai-responses"):
        import httpx2
        import openai

        client_o = openai.OpenAI(
            api_key="sk-test",
            base_url="http://bench.invalid/v1",
            max_retries=0,
            http_client=httpx2.Client(transport=_transport(httpx2, chunks)),
        )
        if protocol == "openai-completions":

            def run_chat() -> Any:
                with client_o.chat.completions.stream(
                    model="gpt-bench", messages=[{"role": "user", "content": "hi"}]
                ) as stream:
                    for _ in stream:
                        pass
                    return stream.get_final_completion()

            return run_chat, f"openai {openai.__version__}: client.chat.completions.stream"

        def run_responses() -> Any:
            with client_o.responses.stream(model="gpt-bench", input="hi") as stream:
                for _ in stream:
                    pass
                return stream.get_final_response()

        return run_responses, f"openai {openai.__version__}: client.responses.stream"
    return None


def check_sdk(w: Workload, final: Any) -> None:
    if w.protocol == "anthropic-messages":
        (block,) = final.content
        got = block.text if w.kind == "text" else block.input
    elif w.protocol == "openai-completions":
        message = final.choices[0].message
        got = (
            message.content
            if w.kind == "text"
            else json.loads(message.tool_calls[0].function.arguments)
        )
    else:
        (item,) = final.output
        got = item.content[0].text if w.kind == "text" else json.loads(item.arguments)
    assert got == w.expected, "the SDK assembled something else"


def cpu_time(run: Callable[[], object]) -> float:
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        run()
        return time.process_time() - start
    finally:
        gc.enable()


def measure(w: Workload, repeat: int, sdk_repeat: int, *, keep: bool) -> dict[str, Any]:
    feeds = {"whole": [w.body], "4KB": chunked(w.body, CHUNK)}
    cases: dict[str, tuple[Callable[[], object], int]] = {"bare": (bare(w.body), repeat)}
    if len(w.ends) > 1:
        for label in feeds:
            floor = live_floor(w.body, w.arguments, list(w.ends), keep=label == "whole" or keep)
            cases[f"c9_floor_{label}"] = (floor, repeat)
    elif w.ends:  # a call that arrives whole, parsed: the delta text must be written
        for label in feeds:
            cases[f"c9_floor_{label}"] = (whole_call_floor(w.body, w.expected), repeat)
    for label, chunks in feeds.items():
        run_ours = normalizer(w.protocol, chunks, keep=keep)
        check_normalizer(w, run_ours())
        cases[f"normalizer_{label}"] = (run_ours, repeat)
        if w.kind == "tool":
            run_read = normalizer(w.protocol, chunks, keep=keep, read_arguments=True)
            check_normalizer(w, run_read())
            cases[f"normalizer_reading_arguments_{label}"] = (run_read, repeat)
    if w.kind == "text":
        cases.update({name: (stage, repeat) for name, stage in stages(w).items()})
    sdk_api = None
    for label, chunks in feeds.items():
        found = sdk(w.protocol, chunks) if sdk_repeat else None
        if found is not None:
            run_sdk, sdk_api = found
            check_sdk(w, run_sdk())
            cases[f"sdk_{label}"] = (run_sdk, sdk_repeat)
    best = dict.fromkeys(cases, float("inf"))
    for round_ in range(max(repeat, sdk_repeat)):
        for name, (run, times) in cases.items():
            if round_ < times:
                best[name] = min(best[name], cpu_time(run))
    row: dict[str, Any] = {
        "protocol": w.protocol,
        "workload": w.kind,
        "body_bytes": len(w.body),
        "sse_events": w.events,
        "deltas": w.deltas,
        "sdk": sdk_api or "n/a",
        "ms": {name: round(seconds * 1e3, 2) for name, seconds in best.items()},
    }
    for label in feeds:
        ours = best[f"normalizer_{label}"]
        row[f"x_bare_{label}"] = round(ours / best["bare"], 2)
        if f"c9_floor_{label}" in best:
            row[f"x_c9_floor_{label}"] = round(ours / best[f"c9_floor_{label}"], 2)
        if f"normalizer_reading_arguments_{label}" in best:
            reading = best[f"normalizer_reading_arguments_{label}"]
            row[f"reading_arguments_x_bare_{label}"] = round(reading / best["bare"], 2)
            row[f"reading_arguments_x_c9_floor_{label}"] = round(
                reading / best[f"c9_floor_{label}"], 2
            )
        if f"sdk_{label}" in best:
            row[f"sdk_speedup_{label}"] = round(best[f"sdk_{label}"] / ours, 2)
    if "stage_sse" in best:
        whole = best["normalizer_whole"]
        sse_s, json_s = best["stage_sse"], best["stage_sse_json"] - best["stage_sse"]
        events_s = best["stage_delta_events"]
        row["where_the_time_goes_whole_ms"] = {
            "sse_framing": round(sse_s * 1e3, 1),
            "json_parsing": round(json_s * 1e3, 1),
            "delta_events_pydantic": round(events_s * 1e3, 1),
            "translation_and_bookkeeping": round((whole - sse_s - json_s - events_s) * 1e3, 1),
        }
    return row


def targets(rows: list[dict[str, Any]]) -> dict[str, bool]:
    met: dict[str, bool] = {}
    for r in rows:
        name = f"{r['protocol']}/{r['workload']}"
        met[f"{name} <= {TARGET_BARE:g}x bare"] = all(
            r[f"x_bare_{label}"] <= TARGET_BARE for label in ("whole", "4KB")
        )
        if "sdk_speedup_whole" in r:
            met[f"{name} >= {TARGET_SDK:g}x faster than the SDK"] = all(
                r[f"sdk_speedup_{label}"] >= TARGET_SDK for label in ("whole", "4KB")
            )
    return met


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of bare and normalizer")
    parser.add_argument(
        "--sdk-repeat", type=int, default=3, help="runs of each SDK case (0: skip the SDKs)"
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--only", choices=PROTOCOLS, action="append", help="protocol(s) to run")
    parser.add_argument(
        "--keep-events",
        action="store_true",
        help="keep every event in a list instead of dropping each once consumed",
    )
    args = parser.parse_args()
    rows = []
    for protocol in args.only or PROTOCOLS:
        for kind in ("text", "tool"):
            w = workload(protocol, kind)
            rows.append(measure(w, args.repeat, args.sdk_repeat, keep=args.keep_events))
            print_row(rows[-1], header=len(rows) == 1)
    met = targets(rows)
    result = {
        "targets": {"bare_max_ratio": TARGET_BARE, "sdk_min_speedup": TARGET_SDK},
        "chunk_bytes": CHUNK,
        "timing": "CPU time (process_time), min over repeats, cyclic GC off during a run",
        "events": "kept in a list" if args.keep_events else "consumed and dropped",
        "repeat": args.repeat,
        "sdk_repeat": args.sdk_repeat,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "load_average_at_end": list(os.getloadavg()),
        "versions": {
            n: _version(n) for n in ("pydantic", "pydantic-core", "anthropic", "openai", "httpx2")
        },
        "rows": rows,
        "targets_met": met,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print()
    print("where the time of a text stream goes, whole body (ms; stages timed alone):")
    for r in rows:
        if "where_the_time_goes_whole_ms" in r:
            parts = ", ".join(f"{k} {v}" for k, v in r["where_the_time_goes_whole_ms"].items())
            print(f"  {r['protocol']:<21} {parts}")
    print()
    for target, ok in met.items():
        print(f"target {target}: {'met' if ok else 'NOT MET'}")
    print(f"written to {args.out}")


def _pair(row: dict[str, Any], key: str, fmt: str, width: int) -> str:
    if f"{key}_whole" not in row:
        return f"{'n/a':>{width}}"
    whole, chunks = format(row[f"{key}_whole"], fmt), format(row[f"{key}_4KB"], fmt)
    return f"{whole + '|' + chunks:>{width}}"


def print_row(r: dict[str, Any], *, header: bool) -> None:
    if header:
        print(
            f"CPU ms, best of runs, whole body|{CHUNK // 1024} KB chunks. x bare: ours/bare "
            f"(target <= {TARGET_BARE:g}); x floor: ours/(bare + what the contract adds to it: "
            f"one string per delta (C9), or dumping a whole call's arguments); "
            f"SDK/ours: target >= {TARGET_SDK:g}"
        )
        head = (
            f"{'protocol':<21} {'work':<4} {'events':>6} {'KB':>6} {'bare':>7} {'floor':>13} "
            f"{'ours':>13} {'x bare':>11} {'x floor':>11} {'SDK':>15} {'SDK/ours':>11}"
        )
        print(head)
        print("-" * len(head))
    ms = r["ms"]
    ours = {f"ours_{k}": ms[f"normalizer_{k}"] for k in ("whole", "4KB")}
    sdk_ms = {f"sdk_{k}": ms[f"sdk_{k}"] for k in ("whole", "4KB") if f"sdk_{k}" in ms}
    floor = _pair({k.replace("c9_", ""): v for k, v in ms.items()}, "floor", ".1f", 13)
    print(
        f"{r['protocol']:<21} {r['workload']:<4} {r['sse_events']:>6} "
        f"{r['body_bytes'] // 1024:>6} {ms['bare']:>7.1f} {floor} "
        f"{_pair(ours, 'ours', '.1f', 13)} {_pair(r, 'x_bare', '.2f', 11)} "
        f"{_pair(r, 'x_c9_floor', '.2f', 11)} {_pair(sdk_ms, 'sdk', '.0f', 15)} "
        f"{_pair(r, 'sdk_speedup', '.1f', 11)}",
        flush=True,
    )
    if "reading_arguments_x_bare_whole" in r:
        reading = {f"r_{k}": ms[f"normalizer_reading_arguments_{k}"] for k in ("whole", "4KB")}
        print(
            f"{'':<21} {'... reading every live value:':<44} "
            f"{_pair(reading, 'r', '.1f', 13)} {_pair(r, 'reading_arguments_x_bare', '.2f', 11)} "
            f"{_pair(r, 'reading_arguments_x_c9_floor', '.2f', 11)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
