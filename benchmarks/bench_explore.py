"""Explored fault schedules per minute, per agent row (``stream-harness agents --explore``).

Issue 33's goals on 2 cores: 300 schedules a minute for the reference, 60 for a framework
row, and 200 schedules per (row, protocol) for every agent row within 15 minutes with
``matrix --jobs 2``. Run: ``python benchmarks/bench_explore.py [--jobs N] [--examples N]
[--protocol P] [AGENT ...]`` (default: reference on every protocol, pydantic-ai-agent and
js-openai-agents on openai-completions; 10 schedules per (row, base, protocol) over the
bundled fault-free bases; 4 jobs, the matrix's ``--agent-jobs`` default); writes
``benchmarks/results/explore.json`` (the rows measured, over those of earlier runs). Wall clock, one command: the figure includes drawing,
every run's scenario server, and shrinking what failed (shrink runs are counted as
schedules too, and shown apart). The mean seconds of a run per first fault kind say what
dominates: the waits a fault makes the agent do (retry backoff, pacing), not our CPU.
"""

from __future__ import annotations

import json
import platform
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

from stream_harness.agents.conformance.explore import (
    ExploreOptions,
    explorable,
    explore,
    fault_word,
)
from stream_harness.agents.conformance.runner import expectations_for_agents
from stream_harness.agents.loading import load_agent
from stream_harness.agents.scenario.faults import FaultSpec
from stream_harness.agents.scenario.model import find_agent_scenarios, load_agent_scenario
from stream_harness.contract.facts import bundled_cassettes

RESULTS = Path(__file__).resolve().parent / "results" / "explore.json"
DEFAULT_ROWS = {
    "reference": None,
    "pydantic-ai-agent": "openai-completions",
    "js-openai-agents": "openai-completions",
}


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _flag(args: list[str], name: str, default: str | None) -> str | None:
    if name not in args:
        return default
    at = args.index(name)
    value = args[at + 1]
    del args[at : at + 2]
    return value


def main() -> None:
    args = sys.argv[1:]
    jobs = int(_flag(args, "--jobs", "4") or 4)
    examples = int(_flag(args, "--examples", "10") or 10)
    protocol = _flag(args, "--protocol", None)
    rows = {a: protocol for a in args} if args else dict(DEFAULT_ROWS)
    bases = [
        s
        for s in map(
            load_agent_scenario, find_agent_scenarios(bundled_cassettes() / "agent-scenarios")
        )
        if not s.faults and explorable(s) is None
    ]
    out: dict[str, dict[str, object]] = {}
    for spec, only in rows.items():
        cpu0, wall0 = cpu_seconds(), time.perf_counter()
        agent = load_agent(spec)
        expectations, _ = expectations_for_agents([agent.name], None, {b.name for b in bases})
        units, results = explore(
            [(spec, agent)],
            bases,
            ExploreOptions(examples=examples),
            protocols=[only] if only else None,
            expectations=expectations,
            jobs=jobs,
            spawn=lambda s: load_agent(s),
        )
        close = getattr(agent, "close", None)
        if callable(close):
            close()
        wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
        runs = sum(len(u.verdicts) for u in units)
        shrink = sum(u.shrink_runs for u in units)
        by_kind: dict[str, list[float]] = defaultdict(list)
        for u in units:
            for key, seconds in u.elapsed.items():
                first = json.loads(key)[0][1]
                kind = fault_word(FaultSpec.model_validate(first)) or "pace"
                by_kind[kind].append(seconds)
        out[spec] = {
            "protocols": sorted({u.protocol for u in units}),
            "jobs": jobs,
            "examples_per_unit": examples,
            "units": len(units),
            "schedules": runs,
            "shrink_runs": shrink,
            "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1),
            "schedules_per_min": round(runs / wall * 60, 1),
            "failing_rows": sum(r.failing for r in results),
            "known_failure_rows": sum(r.status == "known_failure" for r in results),
            "mean_run_s_by_first_fault": {
                k: round(sum(v) / len(v), 3) for k, v in sorted(by_kind.items())
            },
        }
        print(
            f"{spec}: {runs} schedules ({shrink} shrinking) in {wall:.1f} s wall, {cpu:.1f} s CPU: "
            f"{runs / wall * 60:.0f} a minute; slowest kinds "
            + ", ".join(
                f"{k} {s:.2f} s"
                for k, s in sorted(
                    out[spec]["mean_run_s_by_first_fault"].items(),  # type: ignore[attr-defined]
                    key=lambda kv: -kv[1],
                )[:3]
            )
        )
    # Rows of an earlier run for other agents stay: one row can be measured again alone.
    earlier = json.loads(RESULTS.read_text())["rows"] if RESULTS.is_file() else {}
    RESULTS.write_text(
        json.dumps(
            {
                "machine": platform.platform(),
                "python": platform.python_version(),
                "rows": {**earlier, **out},
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
