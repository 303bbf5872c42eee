"""The fuzz run at scale: ``stream-harness fuzz`` at 10,000 mutations per protocol.

Not a speed target: the figures are how many mutations of the bundled cassettes each
protocol's reference normalizer went through, what they were (by kind), what was found,
and how long it took (wall time, on a shared machine). CI runs a small count
(tests/conformance/test_fuzz.py, tests/conformance/test_robustness.py); this is the long exploration.

Run: ``python benchmarks/bench_fuzz.py [--examples N] [--seed S] [--out PATH]``; results
go to ``benchmarks/results/fuzz.json`` (reproducers of any finding beside it) and a table
on stdout. The same as ``stream-harness fuzz --examples N --out PATH``, plus the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

from stream_harness.conformance.fuzz import run_fuzz

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "fuzz.json"))
    args = parser.parse_args()
    out = Path(args.out)
    doc = run_fuzz(ROOT / "cassettes", [], examples=args.examples, seed=args.seed, out=out)
    doc["python"] = platform.python_version()
    doc["machine"] = platform.machine()
    doc["cpus"] = os.cpu_count()
    doc["command"] = (
        f"python benchmarks/bench_fuzz.py --examples {args.examples} --seed {args.seed}"
    )
    out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(f"{'protocol':<26}{'mutations':>10}{'findings':>10}{'seconds':>10}")
    for proto in doc["protocols"]:
        print(
            f"{proto['protocol']:<26}{proto['mutations']:>10}"
            f"{len(proto['findings']):>10}{proto['seconds']:>10}"
        )
    print(f"total {doc['seconds']} s -> {out}")
    return 1 if any(p["findings"] for p in doc["protocols"]) else 0


if __name__ == "__main__":
    sys.exit(main())
