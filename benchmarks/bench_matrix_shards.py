"""The matrix as N shards, merged, against one report: ``matrix --shard K/N`` then ``merge``.

Issue 24 (point 7): shards of the full matrix merged give the report of one run. This runs
``stream-harness matrix --shard K/N`` for K = 1..N one after another (as N CI machines
would, each with the environments cached), merges them with ``stream-harness merge``, and
compares the merged report with a reference report (default: the committed
``conformance_report/report.jsonl``) result by result: the same (adapter, case, check)
keys and the same outcome for each. Wall time per shard and of the merge, the shards'
sizes and the comparison go into ``results/matrix_shards.json`` under ``--label``::

    python benchmarks/bench_matrix_shards.py --shards 4
    python benchmarks/bench_matrix_shards.py --shards 3 -- --group sdks --examples 20

Arguments after ``--`` go to every ``stream-harness matrix`` as they are.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stream_harness.reporting import Report, load_report

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "matrix_shards.json"
COMMITTED = HERE.parent / "conformance_report" / "report.jsonl"


def cli() -> list[str]:
    """The stream-harness command of this Python's environment."""
    beside = Path(sys.executable).parent / "stream-harness"
    return [str(beside)] if beside.is_file() else [sys.executable, "-m", "stream_harness.cli.main"]


def _run(argv: Sequence[str], what: str) -> tuple[float, int, str]:
    started = time.monotonic()
    done = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    if done.returncode not in (0, 1):
        tail = " / ".join((done.stderr or done.stdout or "").strip().splitlines()[-3:])
        raise SystemExit(f"bench_matrix_shards: {what} failed (exit {done.returncode}): {tail}")
    return wall, done.returncode, done.stdout


def compare(merged: Report, reference: Report, groups: Sequence[str] = ()) -> dict[str, Any]:
    """Result by result: keys only one side has, and keys whose outcome differs.

    With ``groups`` (a ``--group`` run), the reference is cut to the merged report's adapters.
    """
    ours = {r.key: r.outcome for r in merged.results}
    rows = {a.name for a in merged.adapters}
    theirs = {r.key: r.outcome for r in reference.results if not groups or r.adapter in rows}
    differing = sorted(k for k in ours.keys() & theirs.keys() if ours[k] != theirs[k])
    return {
        "reference_results": len(theirs),
        "merged_results": len(ours),
        "same_outcome": sum(1 for k in ours.keys() & theirs.keys() if ours[k] == theirs[k]),
        "only_in_merged": len(ours.keys() - theirs.keys()),
        "only_in_reference": len(theirs.keys() - ours.keys()),
        "different_outcome": len(differing),
        "examples_of_differences": [
            {
                "adapter": a,
                "case": c,
                "check": k,
                "merged": ours[(a, c, k)],
                "reference": theirs[(a, c, k)],
            }
            for a, c, k in differing[:20]
        ],
    }


def measure(
    command: list[str], shards: int, jobs: int, extra: Sequence[str], reference: Path, work: Path
) -> dict[str, Any]:
    load_before = os.getloadavg()
    runs = []
    for k in range(1, shards + 1):
        out = work / f"shard-{k}"
        argv = [
            *command,
            "matrix",
            "--jobs",
            str(jobs),
            "--shard",
            f"{k}/{shards}",
            "--out",
            str(out),
            "--format",
            "plain",
            *extra,
        ]
        wall, code, _ = _run(argv, f"shard {k}/{shards}")
        report = load_report(out / "report.jsonl")
        assert report.shard is not None
        runs.append(
            {"shard": f"{k}/{shards}", "wall_s": round(wall, 1), "exit": code, "results": len(report.results),
             "pairs": report.shard.pairs, "total_pairs": report.shard.total_pairs}
        )  # fmt: skip
        print(
            f"shard {k}/{shards}: {wall:.0f} s, {len(report.results)} results, {report.shard.pairs} pairs, exit {code}",
            flush=True,
        )
    merged_dir = work / "merged"
    argv = [
        *command,
        "merge",
        str(merged_dir),
        *(str(work / f"shard-{k}") for k in range(1, shards + 1)),
        "--fresh",
        "--format",
        "plain",
    ]
    merge_wall, merge_code, _ = _run(argv, "merge")
    merged = load_report(merged_dir / "report.jsonl")
    groups = [extra[i + 1] for i, a in enumerate(extra) if a == "--group" and i + 1 < len(extra)]
    return {
        "command": f"stream-harness matrix --jobs {jobs} --shard K/{shards} {' '.join(extra)}".strip()
        + f"; stream-harness merge OUT shard-1..{shards}",
        "shards": runs,
        "shards_wall_s": round(sum(r["wall_s"] for r in runs), 1),
        "merge_wall_s": round(merge_wall, 1),
        "merge_exit": merge_code,
        "verdict": merged.verdict,
        "rows": len(merged.adapters),
        "cases": len(merged.cases),
        "examples": merged.examples,
        "reference": str(reference),
        "comparison": compare(merged, load_report(reference), groups),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "work": str(work),
    }


def main(argv: Sequence[str] | None = None) -> None:
    given = list(sys.argv[1:] if argv is None else argv)
    extra = given[given.index("--") + 1 :] if "--" in given else []
    own = given[: given.index("--")] if "--" in given else given
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--shards", type=int, default=4)
    p.add_argument("--jobs", type=int, default=2, help="matrix --jobs of each shard")
    p.add_argument("--label", default="latest", help="where the run goes in the results file")
    p.add_argument(
        "--reference",
        type=Path,
        default=COMMITTED,
        help="the report the merged one is compared with",
    )
    p.add_argument(
        "--command", default=None, help="the stream-harness command (default: this environment's)"
    )
    p.add_argument("--results", type=Path, default=RESULTS)
    args = p.parse_args(own)
    command = shlex.split(args.command) if args.command else cli()
    work = Path(tempfile.mkdtemp(prefix="bench-matrix-shards-"))
    row = measure(command, args.shards, args.jobs, extra, args.reference, work)
    c = row["comparison"]
    print(
        f"{args.shards} shards: {row['shards_wall_s']:.0f} s in all, merge {row['merge_wall_s']:.1f} s; {row['verdict']}\n"
        f"against {args.reference}: {c['same_outcome']} of {c['reference_results']} results with the same outcome, "
        f"{c['different_outcome']} different, {c['only_in_merged']} only merged, {c['only_in_reference']} only in the reference"
    )
    data = json.loads(args.results.read_text()) if args.results.is_file() else {}
    data[args.label] = row
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {args.results} [{args.label}] (shard folders in {work})")


if __name__ == "__main__":
    main()
