"""How long the full conformance run takes: every built-in adapter, bundled cassettes.

Issue target: every built-in adapter over the bundled cassettes with 100 splits each in
under 60 s on 2 cores. Run: ``python benchmarks/bench_conformance.py`` (needs the ``sdk``
extra for the SDK adapters); writes ``benchmarks/results/conformance.json``. CPU time is
reported next to wall time because a shared machine inflates the latter.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import time
from pathlib import Path

from stream_harness.adapters.protocol import AdapterLoadError
from stream_harness.conformance import bundled_cassettes, load_adapter, load_cases
from stream_harness.conformance.expectations import expectations_for
from stream_harness.conformance.runner import RunConfig, run_adapters

EXAMPLES = 100
RESULTS = Path(__file__).resolve().parent / "results" / "conformance.json"


def cpu_seconds() -> float:
    self_ = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return self_.ru_utime + self_.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    adapters = []
    for name in ("reference", "anthropic-sdk", "openai-sdk"):
        try:
            adapters.append(load_adapter(name))
        except AdapterLoadError as exc:
            print(f"skipping {name}: {exc}")
    cases, _ = load_cases([bundled_cassettes()])
    expectations = [expectations_for(a.name) for a in adapters]
    config = RunConfig(examples=EXAMPLES)
    rows = {}
    for jobs in (1, os.cpu_count() or 1):
        cpu0, wall0 = cpu_seconds(), time.perf_counter()
        runs = run_adapters(adapters, cases, config, expectations, jobs=jobs)
        wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
        results = sum(len(r.results) for r in runs)
        rows[f"jobs={jobs}"] = {
            "wall_s": round(wall, 2),
            "cpu_s": round(cpu, 2),
            "results": results,
        }
        print(f"jobs={jobs}: {wall:.1f} s wall, {cpu:.1f} s CPU, {results} results")
    out = {
        "adapters": [a.name for a in adapters],
        "cases": len(cases),
        "examples": EXAMPLES,
        "target_wall_s": 60,
        "runs": rows,
        "load_average": os.getloadavg(),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(terse=True),
        },
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
