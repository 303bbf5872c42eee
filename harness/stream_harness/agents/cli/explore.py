"""``stream-harness agents --explore N``: the flags, and the run in place of the scenarios as written.

The engine is :mod:`stream_harness.agents.conformance.explore`; this module reads the flags,
picks the bases (the given scenarios, else the bundled ones that carry no fault: a
schedule is the whole fault of its scenario) and prints each shrunk schedule.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from stream_harness.agents.conformance.explore import (
    ExploreOptions,
    Schedule,
    explorable,
    explore,
    prior_schedules,
)
from stream_harness.agents.conformance.runner import AgentExpectation, AgentResult
from stream_harness.agents.protocol import AgentAdapter, AgentLimits
from stream_harness.agents.scenario.model import AgentScenario
from stream_harness.reporting.jsonl import load_report
from stream_harness.reporting.report import ReportError


def add_explore_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--explore",
        type=int,
        metavar="N",
        help="draw N fault schedules per (agent, base scenario, protocol) with hypothesis, run "
        "them and shrink every failure to a minimal schedule (bases: --scenarios, else the "
        "bundled scenarios that carry no fault)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="with --explore: the seed of the draws (default 0)"
    )
    p.add_argument(
        "--save-failures",
        metavar="DIR",
        help="with --explore: write each shrunk failure as an agent scenario file in DIR, whose "
        "reproduce command runs it alone",
    )
    p.add_argument(
        "--prior-report",
        metavar="REPORT",
        help="with --explore: run the shrunk schedules of REPORT's explored failures (a "
        "report.jsonl) beside the draws; one that still fails its check is that check's "
        "finding again, not shrunk anew, so a rerun reports the same schedule while the "
        "failure reproduces (as hypothesis replays its example database)",
    )


def explore_problem(args: argparse.Namespace) -> str | None:
    """A bad combination of the exploration flags, as one line (None: fine)."""
    if args.explore is None:
        if args.save_failures:
            return "--save-failures: only with --explore N"
        if args.prior_report:
            return "--prior-report: only with --explore N"
        return None
    if args.explore < 1:
        return f"--explore must be >= 1, got {args.explore}"
    if args.shard:
        return "--explore: not with --shard (explore fewer schedules instead)"
    if args.save_failures and Path(args.save_failures).is_file():
        return f"--save-failures: {args.save_failures} is a file, not a folder"
    if args.prior_report and not Path(args.prior_report).is_file():
        return f"--prior-report: {args.prior_report}: no such report file"
    return None


def read_priors(path: str | None) -> tuple[dict[tuple[str, str, str, str], Schedule], str | None]:
    """The shrunk schedules of ``path``'s explored failures, or why the report cannot be
    read (one line)."""
    if not path:
        return {}, None
    try:
        report = load_report(Path(path))
    except (ReportError, ValueError, OSError) as exc:
        return {}, f"--prior-report: {exc}"
    rows = (
        (r.agent, r.scenario, r.protocol, r.check, r.explored)
        for r in report.agent_results
        if r.explored is not None and r.outcome in ("failed", "known_failure")
    )
    return prior_schedules(rows), None


def explore_bases(
    scenarios: Sequence[AgentScenario], given: bool
) -> tuple[list[AgentScenario], str | None]:
    """The bases and, when there is none, why (one line). Of given scenarios, those that
    cannot be explored are left out with a note on stderr (a folder may mix them), and none
    left is an error, never a silent pass; by default the bases are the bundled scenarios
    without a fault (a schedule is then the whole fault of its scenario)."""
    if not given:
        return [s for s in scenarios if not s.faults and explorable(s) is None], None
    bases = []
    why = ""
    for s in scenarios:
        reason = explorable(s)
        if reason is None:
            bases.append(s)
            continue
        why = f"{s.path}: cannot be explored: {reason}"
        print(f"stream-harness: note: {why}", file=sys.stderr)
    if not bases:
        return [], f"--explore: no scenario to explore ({why})"
    return bases, None


def run_exploration(
    adapters: Sequence[tuple[str, AgentAdapter]],
    bases: Sequence[AgentScenario],
    args: argparse.Namespace,
    expectations: Sequence[AgentExpectation],
    limits: AgentLimits,
    spawn: Callable[[str], AgentAdapter],
    priors: Mapping[tuple[str, str, str, str], Schedule] | None = None,
) -> list[AgentResult]:
    options = ExploreOptions(
        examples=args.explore,
        seed=args.seed,
        save_failures=Path(args.save_failures) if args.save_failures else None,
        priors=dict(priors or {}),
    )
    units, results = explore(
        adapters,
        bases,
        options,
        protocols=args.protocol,
        checks=args.check,
        expectations=expectations,
        limits=limits,
        jobs=args.jobs,
        spawn=spawn,
    )
    drawn = sum(len(u.verdicts) - u.shrink_runs for u in units)
    shrunk = sum(u.shrink_runs for u in units)
    print(
        f"explored {drawn} schedules over {len(units)} (agent, base, protocol) units, seed "
        f"{args.seed}; {shrunk} more runs shrinking failures"
    )
    replayed = sum(len(u.priors) for u in units)
    if replayed:
        again = sum(len(u.settled) for u in units)
        print(f"replayed {replayed} earlier shrunk failure(s): {again} still fail as they did")
    for u in units:
        if u.shrink_cut:
            print(f"  {u.agent} {u.base.name} [{u.protocol}]: {u.shrink_cut}")
        for f in u.findings:
            if f.saved:
                print(f"  saved {f.saved}")
    return results
