"""Agent scenarios per second, per agent row: the whole agent matrix's budget.

Issue 25's target: the whole agent matrix (every agent row on every bundled agent scenario
in every protocol) within 10 minutes on 2 cores. Run: ``python benchmarks/bench_agents.py
[--jobs N] [AGENT ...]`` (default: the reference row, one job); writes
``benchmarks/results/agents.json``. ``--jobs`` is ``stream-harness agents --jobs``: runs at
once, each job with its own adapter (a JS row: its own Node process, whose CPU is counted
with the children's).
Each run starts its own scenario server, so the figure includes the HTTP round trips, the
ledger calls and the scaled retry sleeps (pacing faults sleep for real: slow_pacing costs
about a second whatever the agent). CPU time is reported next to wall time because a shared
machine inflates the latter, and the load average beside both (compare a before and an
after only when measured back to back, under the same load). ``--label NAME`` keeps the
rows under that name beside the others in the results file (``before``/``after``).
"""

from __future__ import annotations

import json
import os
import platform
import resource
import sys
import time
from pathlib import Path
from typing import Any

from stream_harness.agents.conformance.runner import run_agent_checks
from stream_harness.agents.loading import load_agent
from stream_harness.agents.scenario.model import find_agent_scenarios, load_agent_scenario
from stream_harness.contract.facts import bundled_cassettes

RESULTS = Path(__file__).resolve().parent / "results" / "agents.json"
BUDGET_S = 600.0


def cpu_seconds() -> float:
    """This process and its reaped children (a stdio agent's processes once closed)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    args = sys.argv[1:]
    jobs = 1
    if "--jobs" in args:
        at = args.index("--jobs")
        jobs = int(args[at + 1])
        del args[at : at + 2]
    label = "latest"
    if "--label" in args:
        at = args.index("--label")
        label = args[at + 1]
        del args[at : at + 2]
    specs = args or ["reference"]
    scenarios = [
        load_agent_scenario(p)
        for p in find_agent_scenarios(bundled_cassettes() / "agent-scenarios")
    ]
    rows: dict[str, dict[str, Any]] = {}
    for spec in specs:
        load0 = os.getloadavg()[0]
        cpu0, wall0 = cpu_seconds(), time.perf_counter()
        agent = load_agent(spec)
        results = run_agent_checks(
            [(spec, agent)], scenarios, jobs=jobs, spawn=lambda s: load_agent(s)
        )
        close = getattr(agent, "close", None)
        if callable(close):
            close()
        wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
        runs = len({(r.scenario, r.protocol) for r in results})
        failed = sum(r.failing for r in results)
        rows[spec] = {
            "jobs": jobs,
            "runs": runs,
            "wall_s": round(wall, 2),
            "cpu_s": round(cpu, 2),
            "runs_per_s": round(runs / wall, 2),
            "failed": failed,
            "load_average": [round(load0, 2), round(os.getloadavg()[0], 2)],
            "measured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        print(
            f"{spec}: {runs} runs in {wall:.1f} s wall ({cpu:.1f} s CPU): {runs / wall:.2f} runs/s, {failed} failed "
            f"(load average {load0:.1f} -> {os.getloadavg()[0]:.1f})"
        )
    total = sum(float(r["wall_s"]) for r in rows.values())
    print(f"total {total:.1f} s of a {BUDGET_S:.0f} s budget")
    data = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    data.update(
        {"machine": platform.platform(), "python": platform.python_version(), "budget_s": BUDGET_S}
    )
    if label == "latest":
        data["rows"] = {**data.get("rows", {}), **rows}
    else:
        data.setdefault("labels", {}).setdefault(label, {}).update(rows)
    RESULTS.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
