"""Where the time of a stdio (cross-language) adapter goes, and the full JS suite.

Issue 17 asks for the whole matrix, Python and JS, at 100 splits within 15 minutes on 2
cores, and for where the time goes: process start, environment checks, serialization. This
measures, per JS adapter (adapters-js/, needs node and ``npm ci`` there) and for the toy
Python adapter of the tests:

- ``start_s``: spawn + handshake (the library import dominates);
- ``run_ms``: one ``run`` round trip on a small body, whole and in 1-byte chunks, and the
  same body through the in-process reference for the harness's own share;
- ``serialize_us``: building the ``run`` request (JSON + base64) and parsing a reply;
- ``suite_s``: the conformance suite over every bundled case at 100 splits with
  ``--jobs 2`` (wall and CPU), the number a matrix row costs.

Run: ``python benchmarks/bench_stdio.py [--no-suite]``; writes
``benchmarks/results/stdio.json``. Wall times on a shared machine: read them with the
load average that is recorded next to them.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import sys
import time
from pathlib import Path

from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.processes.js import SCRIPTS, missing
from stream_harness.adapters.processes.stdio import StdioAdapter, run_request
from stream_harness.adapters.protocol import AdapterLoadError, ReferenceAdapter
from stream_harness.conformance import bundled_cassettes, load_cases
from stream_harness.conformance.expectations import expectations_for
from stream_harness.conformance.runner import RunConfig, run_adapters
from stream_harness.recordings.cassette import load_cassette

RESULTS = Path(__file__).resolve().parent / "results" / "stdio.json"
TOY = Path(__file__).resolve().parent.parent / "tests" / "stdio_toy_adapter.py"
BODIES = {
    "anthropic-messages": "anthropic-messages/tool_call.yaml",
    "openai-completions": "openai-completions/parallel_tool_calls_interleaved.yaml",
    "openai-responses": "openai-responses/function_call.yaml",
    "google-generative-ai": "google-generative-ai/tool_call.yaml",
    "bedrock-converse-stream": "bedrock-converse-stream/tool_call.yaml",
}


def cpu_seconds() -> float:
    self_ = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return self_.ru_utime + self_.ru_stime + children.ru_utime + children.ru_stime


def body(protocol: str) -> tuple[bytes, int, dict[str, list[str]]]:
    r = load_cassette(bundled_cassettes() / BODIES[protocol]).interactions[0].response
    return r.body, r.status, r.headers


def median_ms(fn: object, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - t) * 1000)
    return round(statistics.median(times), 2)


def measure(adapter_factory: object, label: str) -> dict[str, object]:
    t = time.perf_counter()
    adapter = adapter_factory()  # type: ignore[operator]
    start_s = time.perf_counter() - t
    protocol = sorted(adapter.protocols)[0]
    data, status, headers = body(protocol)
    one_byte = [data[i : i + 1] for i in range(len(data))]
    adapter.run(protocol, [data], status=status, headers=headers)  # JIT-cold first run
    row = {
        "start_s": round(start_s, 3),
        "protocol": protocol,
        "body_bytes": len(data),
        "run_whole_ms": median_ms(
            lambda: adapter.run(protocol, [data], status=status, headers=headers), 30
        ),
        "run_1byte_ms": median_ms(
            lambda: adapter.run(protocol, one_byte, status=status, headers=headers), 5
        ),
    }
    adapter.close()
    print(f"{label}: {row}")
    return row


def main() -> None:
    suite = "--no-suite" not in sys.argv
    rows: dict[str, object] = {}
    # The harness's own share: the reference in-process on the same bodies.
    ref = ReferenceAdapter()
    for protocol in ("anthropic-messages", "openai-completions"):
        data, status, headers = body(protocol)
        rows[f"reference (in-process) {protocol}"] = {
            "run_whole_ms": median_ms(
                lambda p=protocol, d=data, s=status, h=headers: ref.run(
                    p, [d], status=s, headers=h
                ),
                200,
            ),
        }
    data, status, headers = body("openai-completions")
    one_byte = [data[i : i + 1] for i in range(len(data))]
    t = time.perf_counter()
    for _ in range(1000):
        json.dumps(run_request(1, "openai-completions", one_byte, status, headers))
    rows["serialize 1-byte request"] = {
        "us": round((time.perf_counter() - t) * 1000, 1),
        "body_bytes": len(data),
    }
    rows["toy-python"] = measure(lambda: StdioAdapter([sys.executable, str(TOY)]), "toy-python")
    problem = missing()
    names = [] if problem else sorted(SCRIPTS)
    if problem:
        print(f"JS adapters skipped: {problem}")
    present = []
    for name in names:
        try:
            rows[name] = measure(lambda name=name: load_adapter(name), name)  # type: ignore[misc]
            present.append(name)
        except AdapterLoadError as exc:
            print(f"skipping {name}: {exc}")
    suites: dict[str, object] = {}
    if suite and present:
        cases, _ = load_cases([bundled_cassettes()], bundled_root=bundled_cassettes())
        for name in present:
            adapter = load_adapter(name)
            cpu0, wall0 = cpu_seconds(), time.perf_counter()
            runs = run_adapters(
                [adapter], cases, RunConfig(examples=100), [expectations_for(name)], jobs=2
            )
            wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
            results = runs[0].results
            passed = sum(r.outcome in ("passed", "fixed") for r in results)
            known = sum(r.outcome == "known_failure" for r in results)
            suites[name] = {
                "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "results": len(results),
                "passed": passed, "known": known, "new_failures": len(results) - passed - known,
            }  # fmt: skip
            print(f"suite {name}: {suites[name]}")
            adapter.close()  # type: ignore[attr-defined]
    out = {
        "rows": rows,
        "suites_100_splits_jobs_2": suites,
        "load_average": os.getloadavg(),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(terse=True),
        },
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
