"""What installing stream-harness costs a project's test runs that do not use it.

The pytest plugin loads (entry point ``pytest11``) in every pytest run of every project
that installs stream-harness. Target: at most **50 ms of CPU** added to a run without
``--harness``. The script makes a scratch project of 50 trivial tests, runs pytest in it
with the plugin and with ``-p no:stream_harness`` in turns, and compares the child
processes' CPU time (user + system, from ``getrusage``: neighbours on the machine do not
count), best of N each, and the plugin module's own import time (``-X importtime``).

    python benchmarks/bench_plugin_overhead.py [--runs 15]

Results: ``benchmarks/results/plugin_overhead.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

TARGET_MS = 50.0
RESULTS = Path(__file__).resolve().parent / "results" / "plugin_overhead.json"


def _cpu_of(argv: list[str], cwd: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"pytest failed in the scratch project:\n{done.stdout}\n{done.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _import_ms(cwd: Path) -> float:
    """The plugin's modules (the entry module and the parts it registers), each imported as
    pytest imports them: the sum of their top-level import times."""
    parts = ("options", "agent_items", "stream_items", "markers")
    code = "import pytest; " + "; ".join(
        f"import stream_harness.pytest_plugin.{part}" for part in parts
    )
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    found = [
        int(m.group(1))
        for line in done.stderr.splitlines()
        if (
            m := re.match(
                r"import time:\s+\d+ \|\s+(\d+) \| stream_harness\.pytest_plugin(\.\w+)?$", line
            )
        )
    ]
    if not found:
        raise SystemExit("no import time line for stream_harness.pytest_plugin")
    return sum(found) / 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "test_plain.py").write_text(
            "".join(f"def test_{i}():\n    assert {i} + 1 > {i}\n\n" for i in range(50)),
            encoding="utf-8",
        )
        base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
        with_plugin, without = [], []
        for _ in range(args.runs):  # in turns, so drift in the machine's load hits both
            with_plugin.append(_cpu_of(base, root))
            without.append(_cpu_of([*base, "-p", "no:stream_harness"], root))
        imports = sorted(_import_ms(root) for _ in range(5))
    best_with, best_without = min(with_plugin), min(without)
    added_ms = (best_with - best_without) * 1000
    median_added = (
        sorted(with_plugin)[len(with_plugin) // 2] - sorted(without)[len(without) // 2]
    ) * 1000
    result = {
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "runs": args.runs,
        "cpu_s_with_plugin_best": round(best_with, 4),
        "cpu_s_without_plugin_best": round(best_without, 4),
        "added_cpu_ms_best": round(added_ms, 1),
        "added_cpu_ms_median": round(median_added, 1),
        "plugin_import_ms_median": round(imports[len(imports) // 2], 2),
        "target_ms": TARGET_MS,
        "met": added_ms <= TARGET_MS,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(
        f"pytest run of 50 tests, CPU best of {args.runs}: with the plugin {best_with * 1000:.0f} ms, "
        f"without {best_without * 1000:.0f} ms; added {added_ms:.1f} ms (median {median_added:.1f} ms); "
        f"plugin import {result['plugin_import_ms_median']} ms; target <= {TARGET_MS:.0f} ms: "
        f"{'met' if result['met'] else 'MISSED'}"
    )
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
