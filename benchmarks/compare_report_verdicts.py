"""Two ``report.jsonl`` files (any format version) compared verdict by verdict.

Issue 36: the committed report converted from format version 1 to 2 must keep every
earlier verdict. Each file is read twice: as raw JSON lines, independently of the
tool's reader ((adapter, case, check) or (agent, scenario, protocol, check) -> outcome),
and through :func:`stream_harness.reporting.load_report`, whose rows must be equal field
by field (messages, failures, reproduce commands, conventions, issues), so that a
conversion that lost a detail is caught as well as one that changed an outcome.

Run: ``python benchmarks/compare_report_verdicts.py OLD NEW [--out PATH]``; the counts go
to ``benchmarks/results/report_verdicts.json``. Exit status 0 when every verdict and
every row agree, 1 when any differs (the first ones are printed), 2 on unreadable input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from stream_harness.reporting import ReportError, load_report

ROOT = Path(__file__).resolve().parents[1]

Key = tuple[str, ...]


def raw_verdicts(path: Path) -> tuple[int, dict[Key, str]]:
    """The format version and every row's outcome, from the JSON lines alone."""
    verdicts: dict[Key, str] = {}
    version = 0
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            obj = json.loads(line)
            if obj["kind"] == "header":
                version = obj["version"]
            for key, outcome in _line_verdicts(obj):
                assert key not in verdicts, f"{path}: {key} twice"
                verdicts[key] = outcome
    return version, verdicts


def _line_verdicts(obj: dict[str, Any]) -> list[tuple[Key, str]]:
    """The (key, outcome) pairs one line states: a result line its own, a grouped line
    (``passed``, ``agent_passed``) one passed verdict per check it lists."""
    kind = obj["kind"]
    if kind == "result":
        return [(("stream", obj["adapter"], obj["case"], obj["check"]), obj["outcome"])]
    if kind == "agent_result":
        key = ("agent", obj["agent"], obj["scenario"], obj["protocol"], obj["check"])
        return [(key, obj["outcome"])]
    if kind == "passed":
        return [(("stream", obj["adapter"], obj["case"], c), "passed") for c in obj["checks"]]
    if kind == "agent_passed":
        unit = ("agent", obj["agent"], obj["scenario"], obj["protocol"])
        return [((*unit, c), "passed") for c in obj["checks"]]
    return []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument(
        "--out", default=str(ROOT / "benchmarks" / "results" / "report_verdicts.json")
    )
    args = parser.parse_args()
    try:
        old_version, old = raw_verdicts(args.old)
        new_version, new = raw_verdicts(args.new)
        old_report = load_report(args.old, note=lambda line: None)
        new_report = load_report(args.new, note=lambda line: None)
    except (OSError, ValueError, KeyError, ReportError) as exc:
        print(f"compare_report_verdicts: {exc}", file=sys.stderr)
        return 2
    changed = sorted(k for k in old.keys() & new.keys() if old[k] != new[k])
    lost = sorted(old.keys() - new.keys())
    added = sorted(new.keys() - old.keys())
    old_rows: dict[Key, Any] = {("stream", *r.key): r for r in old_report.results}
    old_rows.update({("agent", *a.key): a for a in old_report.agent_results})
    new_rows: dict[Key, Any] = {("stream", *r.key): r for r in new_report.results}
    new_rows.update({("agent", *a.key): a for a in new_report.agent_results})
    differing = sorted(k for k in old_rows.keys() & new_rows.keys() if old_rows[k] != new_rows[k])
    same_header = all(
        getattr(old_report, f) == getattr(new_report, f)
        for f in (
            "checks",
            "adapters",
            "cases",
            "skipped",
            "seed",
            "examples",
        )
    )
    results: dict[str, Any] = {
        "old": {
            "path": str(args.old),
            "version": old_version,
            "rows": len(old),
            "bytes": args.old.stat().st_size,
        },
        "new": {
            "path": str(args.new),
            "version": new_version,
            "rows": len(new),
            "bytes": args.new.stat().st_size,
        },
        "verdicts_compared": len(old.keys() & new.keys()),
        "outcomes_changed": len(changed),
        "rows_lost": len(lost),
        "rows_added": len(added),
        "rows_differing_in_any_field": len(differing),
        "header_facts_equal": same_header,
        # When each run happened is not a fact to keep: shown, never compared.
        "times_old": [str(old_report.started), str(old_report.finished)],
        "times_new": [str(new_report.started), str(new_report.finished)],
        "counts_old": old_report.counts.model_dump(),
        "counts_new": new_report.counts.model_dump(),
    }
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    for what, keys in (
        ("changed", changed),
        ("lost", lost),
        ("added", added),
        ("differ", differing),
    ):
        for key in keys[:5]:
            print(f"{what}: {key}")
    ok = not (changed or lost or added or differing) and same_header
    print(
        f"{'same' if ok else 'DIFFERENT'}: {results['verdicts_compared']} verdicts compared "
        f"(v{old_version} {len(old)} rows, {results['old']['bytes']:,} bytes; v{new_version} {len(new)} rows, "
        f"{results['new']['bytes']:,} bytes); {len(changed)} outcomes changed, {len(lost)} lost, {len(added)} added, "
        f"{len(differing)} rows differing in any field; header facts equal: {same_header}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
