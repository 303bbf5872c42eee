"""The whole matrix, measured: ``stream-harness matrix --jobs 2`` over the bundled cassettes.

Issue 17's target is the full matrix (every group of ``specs/matrix.toml``, Python and
JS, the gateways) at 100 splits within 15 minutes on 2 cores with ``--jobs 2``.
``bench_matrix.py`` projects it from samples; this runs it, with the environments as they
are cached (build them first with one run), and records the wall time, each group's wall
and CPU time as the matrix measured them (``os.wait4``: the group's processes and all they
waited for) and the verdict into ``results/matrix_full.json`` under ``--label``::

    python benchmarks/bench_matrix_full.py --label after
    python benchmarks/bench_matrix_full.py --label sweep-1024 -- --single-cut-limit 1024

Arguments after ``--`` go to ``stream-harness matrix`` as they are.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stream_harness.reporting import load_report

RESULTS = Path(__file__).resolve().parent / "results" / "matrix_full.json"
_GROUP = re.compile(r"ran in (\d+) s(?:, (\d+) s of CPU)?")


def cli() -> list[str]:
    """The stream-harness command of this Python's environment."""
    beside = Path(sys.executable).parent / "stream-harness"
    return [str(beside)] if beside.is_file() else [sys.executable, "-m", "stream_harness.cli.main"]


def measure(extra: Sequence[str], jobs: int) -> dict[str, Any]:
    out = Path(tempfile.mkdtemp(prefix="bench-matrix-full-"))
    try:
        argv = [*cli(), "matrix", "--jobs", str(jobs), "--fresh", "--out", str(out), *extra]
        load_before = os.getloadavg()
        started = time.monotonic()
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        wall = time.monotonic() - started
        if done.returncode not in (0, 1) or not (out / "report.jsonl").is_file():
            tail = " / ".join((done.stderr or "").strip().splitlines()[-3:])
            raise SystemExit(
                f"bench_matrix_full: the matrix did not run (exit {done.returncode}): {tail}"
            )
        report = load_report(out / "report.jsonl")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    groups: dict[str, dict[str, float | None]] = {}
    for key, value in report.environment.items():
        if key.startswith("group "):
            found = _GROUP.search(value)
            if found:
                cpu = found.group(2)
                groups[key.removeprefix("group ")] = {
                    "wall_s": float(found.group(1)),
                    "cpu_s": float(cpu) if cpu is not None else None,
                }
    c = report.counts
    return {
        "command": " ".join(["stream-harness matrix --jobs", str(jobs), "--fresh", *extra]),
        "wall_s": round(wall, 1),
        "groups_cpu_s": round(sum(g["cpu_s"] or 0.0 for g in groups.values()), 1),
        "groups": dict(sorted(groups.items(), key=lambda kv: -(kv[1]["wall_s"] or 0.0))),
        "results": c.total,
        "verdict": report.verdict,
        "rows": len(report.adapters),
        "cases": len(report.cases),
        "examples": report.examples,
        "single_cut_limit": report.single_cut_limit,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }


def main(argv: Sequence[str] | None = None) -> None:
    given = list(sys.argv[1:] if argv is None else argv)
    extra = given[given.index("--") + 1 :] if "--" in given else []
    own = given[: given.index("--")] if "--" in given else given
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--label", default="latest", help="where the run goes in the results file")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--results", type=Path, default=RESULTS)
    args = p.parse_args(own)
    row = measure(extra, args.jobs)
    print(
        f"full matrix: {row['wall_s']:.0f} s wall, {row['groups_cpu_s']:.0f} s CPU in the groups; "
        f"{row['rows']} rows, {row['results']} results; {row['verdict']}"
    )
    for name, g in row["groups"].items():
        print(f"  {name}: {g['wall_s']:.0f} s, CPU {g['cpu_s']} s")
    data = json.loads(args.results.read_text()) if args.results.is_file() else {}
    data[args.label] = row
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {args.results} [{args.label}]")


if __name__ == "__main__":
    main()
