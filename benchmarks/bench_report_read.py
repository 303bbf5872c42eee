"""Reading the committed report as ``report`` and ``merge`` do: wall clock and peak RSS.

Issue 36, item 4: with the full matrix the committed ``conformance_report/`` must stay
under 15 MB and its ``report.jsonl`` under 10 MB, and reading it for ``report`` (which
keeps the rows it did not re-run) or ``merge`` must take under 1 s and under 150 MB. Each
pass runs in a fresh process, so the peak RSS (``ru_maxrss``) is that of one reader:

- **read**: ``load_report`` of the file, as ``merge`` and the readers do;
- **keep**: ``keep_previous`` with a new report holding the first adapter's rows only
  (prepared beforehand in another process and read first, so not in the peak), as
  ``stream-harness report`` over the committed folder does (read, reclassify from the
  expectation files, merge the kept rows).

The time is wall clock inside the child around the read alone (imports excluded, they
are the same for every command), with its CPU time beside it (the stable measure on a
shared machine) and the load average when the run started; the RSS is the child's peak, with its RSS after the
imports beside it. The best of ``--repeat`` runs is kept (the machine is shared), and the
folder's file sizes are recorded with them.

Run: ``python benchmarks/bench_report_read.py [--report conformance_report/report.jsonl]
[--label after]``; results go to ``benchmarks/results/report_read.json`` under ``--label``.
Exit status 0 whether or not the targets are met (the table says which).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 1.0
TARGET_RSS_MB = 150.0
TARGET_FOLDER_MB = 15.0
TARGET_JSONL_MB = 10.0

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from stream_harness.reporting.jsonl import load_report
from stream_harness.reporting.keep import keep_previous
path, mode = Path(sys.argv[1]), sys.argv[2]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
quiet = lambda line: None
if mode == "prepare":
    from stream_harness.reporting.jsonl import render
    whole = load_report(path, note=quiet)
    first = whole.adapters[0].name
    new = whole.model_copy(update={
        "adapters": whole.adapters[:1],
        "results": tuple(r for r in whole.results if r.adapter == first),
        "agent_results": (),
    })
    Path(sys.argv[3]).write_text(render(new), encoding="utf-8")
    print(json.dumps({}))
    sys.exit(0)
if mode == "keep":
    new = load_report(sys.argv[3], note=quiet)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start, cpu = time.perf_counter(), time.process_time()
    report, notes = keep_previous(new, path.parent)
    rows = len(report.results) + len(report.agent_results)
else:
    start, cpu = time.perf_counter(), time.process_time()
    report = load_report(path, note=quiet)
    rows = len(report.results) + len(report.agent_results)
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "peak_rss_mb": peak / 1024, "rss_after_imports_mb": base / 1024, "rows": rows}))
"""


def run_child(report: Path, mode: str, new: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(report), mode, str(new)],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", default=str(ROOT / "conformance_report" / "report.jsonl"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--label", default="current")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "report_read.json"))
    args = parser.parse_args()
    report = Path(args.report)
    folder = report.parent
    sizes = {p.name: p.stat().st_size for p in sorted(folder.iterdir()) if p.is_file()}
    folder_bytes = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    results: dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "report": str(report),
        "lines": sum(1 for _ in report.open(encoding="utf-8")),
        "sizes_bytes": sizes,
        "folder_bytes": folder_bytes,
        # The machine is shared: the wall clock is read beside the load of the neighbours.
        "load_average_1min": os.getloadavg()[0],
    }
    scratch = Path(tempfile.mkdtemp(prefix="bench-report-read-"))
    new = scratch / "new.jsonl"  # the first adapter's rows: what a `report` re-run brings
    run_child(report, "prepare", new)
    for mode in ("read", "keep"):
        runs = [run_child(report, mode, new) for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r["seconds"])
        results[mode] = {
            "best_seconds": round(best["seconds"], 3),
            "all_seconds": [round(r["seconds"], 3) for r in runs],
            "best_cpu_seconds": round(min(r["cpu_seconds"] for r in runs), 3),
            "peak_rss_mb": round(max(r["peak_rss_mb"] for r in runs), 1),
            "rss_after_imports_mb": round(best["rss_after_imports_mb"], 1),
            "rows": best["rows"],
        }
    shutil.rmtree(scratch)
    out = Path(args.out)
    previous = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    previous[args.label] = results
    out.write_text(json.dumps(previous, indent=2) + "\n", encoding="utf-8")

    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    jsonl_mb = sizes.get(report.name, 0) / 1e6
    print(f"{report}: {results['lines']} lines, {jsonl_mb:.1f} MB "
          f"(target < {TARGET_JSONL_MB:g} MB: {verdict(jsonl_mb < TARGET_JSONL_MB)})")  # fmt: skip
    print(f"{folder}: {folder_bytes / 1e6:.1f} MB "
          f"(target < {TARGET_FOLDER_MB:g} MB: {verdict(folder_bytes / 1e6 < TARGET_FOLDER_MB)})")  # fmt: skip
    for mode in ("read", "keep"):
        r = results[mode]
        ok = r["best_seconds"] < TARGET_SECONDS and r["peak_rss_mb"] < TARGET_RSS_MB
        print(
            f"{mode}: {r['best_seconds']:.3f} s wall, {r['best_cpu_seconds']:.3f} s CPU (runs {r['all_seconds']}), peak RSS {r['peak_rss_mb']} MB "
            f"({r['rss_after_imports_mb']} MB after imports), {r['rows']} rows: "
            f"target < {TARGET_SECONDS:g} s and < {TARGET_RSS_MB:g} MB {verdict(ok)}"
        )
    print(f"results: {out} [{args.label}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
