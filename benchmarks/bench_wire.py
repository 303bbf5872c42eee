"""Speed of the framing decoders against the bare cost of splitting and parsing.

The budget (issue: normalizers within 2x of ``body.split(b"\\n")`` + ``json.loads`` per
payload) leaves the SSE decoder little room, so this measures it alone and with the
``json.loads`` a normalizer adds, on a 20,000-event Anthropic-shaped body fed whole and
in 64-byte chunks (the adversarial case: most chunks end mid-line) and in larger ones.
Timing: CPU time, best of N, GC off, cases taking turns (as bench_normalizers.py).
The other decoders are measured for information.

Run: ``python benchmarks/bench_wire.py [--out PATH] [--repeat N]``; results go to a
JSON file (default ``benchmarks/results/wire.json``) and a table on stdout.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import sys
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

from stream_harness.wire import (
    EventStreamDecoder,
    JSONArrayDecoder,
    JSONLinesDecoder,
    SSEDecoder,
    SSEEvent,
    encode_message,
)

EVENTS = 20_000


def anthropic_body(n: int = EVENTS) -> bytes:
    """n events shaped like Anthropic's: named, JSON padded with spaces, some non-ASCII."""
    parts = [
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_01","type":"message",'
        b'"role":"assistant","content":[],"model":"claude-sonnet-4-5","usage":{"input_tokens":10,'
        b'"output_tokens":1}}    }\n\n'
    ]
    for i in range(n - 2):
        parts.append(
            b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
            b'"delta":{"type":"text_delta","text":"word %d \xc3\xa9t\xc3\xa9 "}            }\n\n'
            % i
        )
    parts.append(b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
    return b"".join(parts)


def chunked(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


def best_ms(cases: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Best CPU time of each case (the machine is shared: being descheduled is not cost),
    cyclic GC off during a run as ``timeit`` does; the cases take turns, so load drifting
    hits them alike and the ratios stay fair."""
    best = dict.fromkeys(cases, float("inf"))
    for _ in range(repeat):
        for name, fn in cases.items():
            gc.collect()
            gc.disable()
            try:
                start = time.process_time()
                fn()
                best[name] = min(best[name], time.process_time() - start)
            finally:
                gc.enable()
    return {name: seconds * 1000 for name, seconds in best.items()}


def run_decoder(make: Callable[[], Any], chunks: Iterable[bytes]) -> list[Any]:
    decoder = make()
    feed = decoder.feed
    out: list[Any] = []
    for chunk in chunks:
        out += feed(chunk)
    out += decoder.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "wire.json")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    repeat: int = args.repeat

    body = anthropic_body()
    loads = json.loads

    def baseline() -> None:
        for line in body.split(b"\n"):
            if line.startswith(b"data: "):
                loads(line[6:])

    def sse_and_json(chunks: list[bytes]) -> Callable[[], None]:
        def run() -> None:
            for event in run_decoder(SSEDecoder, chunks):
                assert isinstance(event, SSEEvent)
                loads(event.data)

        return run

    whole = [body]
    assert len(run_decoder(SSEDecoder, whole)) == EVENTS
    assert run_decoder(SSEDecoder, chunked(body, 64)) == run_decoder(SSEDecoder, whole)

    cases: dict[str, Callable[[], object]] = {"baseline split+json.loads": baseline}
    for label, chunks in [
        ("whole", whole),
        ("64B", chunked(body, 64)),
        ("1KiB", chunked(body, 1024)),
        ("4KiB", chunked(body, 4096)),
        ("16KiB", chunked(body, 16384)),
    ]:
        cases[f"SSEDecoder {label}"] = partial(run_decoder, SSEDecoder, chunks)
        cases[f"SSEDecoder+json.loads {label}"] = sse_and_json(chunks)

    # The other framings, for information (same payloads, their own wire shapes).
    payloads = [line[6:] for line in body.split(b"\n") if line.startswith(b"data: ")]
    ndjson = b"\n".join(payloads) + b"\n"
    array = b"[" + b"\n,\r\n".join(payloads) + b"\n]"
    frames = b"".join(
        encode_message({":event-type": "contentBlockDelta", ":message-type": "event"}, p)
        for p in payloads
    )
    for name, make, data in [
        ("JSONLinesDecoder (incl. json.loads)", JSONLinesDecoder, ndjson),
        ("JSONArrayDecoder (incl. json.loads)", JSONArrayDecoder, array),
        ("EventStreamDecoder", EventStreamDecoder, frames),
    ]:
        assert len(run_decoder(make, [data])) == EVENTS
        cases[f"{name} whole"] = partial(run_decoder, make, [data])
        cases[f"{name} 64B"] = partial(run_decoder, make, chunked(data, 64))

    results = best_ms(cases, repeat)
    base = results["baseline split+json.loads"]
    report = {
        "events": EVENTS,
        "body_bytes": len(body),
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "repeat": repeat,
        "ms": {k: round(v, 2) for k, v in results.items()},
        "ratio_to_baseline": {k: round(v / base, 2) for k, v in results.items()},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    width = max(map(len, results))
    for key, value in results.items():
        print(f"{key:<{width}}  {value:8.2f} ms  {value / base:5.2f}x")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
