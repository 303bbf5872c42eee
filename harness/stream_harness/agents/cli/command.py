"""``stream-harness agents``: agent loops checked against the agent contract.

``stream-harness agents --agent SPEC [--scenarios PATH] [--protocol P] [--check A3] [--out DIR]``
runs each agent on each scenario in each protocol it supports, through the scenario
server, and judges every run (specs/agent-contract.md). Exit 0 when every check passed or
failed as expected, 1 when one failed (or an expected failure passed: the expectations
file is stale), 2 for bad input: an unknown agent or flag value, an unreadable scenario,
or nothing to check (no scenario, no protocol in common): a check of nothing is never
green. The last line states the verdict the exit status gives; each failure prints the
command that reproduces it alone (one agent, one scenario, one protocol, one check).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from stream_harness.adapters.processes.stdio import stop_all as stop_all_stdio_processes
from stream_harness.agents.app import AppError
from stream_harness.agents.binding import BindingError
from stream_harness.agents.cli.app_mode import (
    add_app_arguments,
    app_adapter,
    app_reproduce,
    spawn_app,
)
from stream_harness.agents.cli.explore import (
    add_explore_arguments,
    explore_bases,
    explore_problem,
    read_priors,
    run_exploration,
)
from stream_harness.agents.cli.options import import_root, with_project
from stream_harness.agents.conformance.checks import CHECK_IDS
from stream_harness.agents.conformance.runner import (
    AgentExpectation,
    AgentResult,
    ExpectationError,
    agent_unit_key,
    expectations_for_agents,
    planned_units,
    run_agent_checks,
    scripted_answers,
)
from stream_harness.agents.loading import AgentLoadError, load_agent
from stream_harness.agents.protocol import AgentAdapter, AgentLimits
from stream_harness.agents.reporting.console import render_agent_results
from stream_harness.agents.scenario.model import (
    AgentScenario,
    ScenarioError,
    bundled_agent_scenarios,
    find_agent_scenarios,
    load_agent_scenario,
    resolve_scenarios_argument,
)
from stream_harness.agents.scenario.render import PROTOCOLS
from stream_harness.agents.server import AgentServer, LedgerTool
from stream_harness.conformance.config import ConfigError, load_config
from stream_harness.conformance.expectations import ExpectationsError
from stream_harness.conformance.shard import Shard, ShardError, parse_shard
from stream_harness.contract import facts
from stream_harness.contract.names import known_names
from stream_harness.reporting.console import FORMATS, choose_format
from stream_harness.reporting.files import write_report
from stream_harness.reporting.jsonl import load_report
from stream_harness.reporting.report import (
    AgentRow,
    Report,
    ReportError,
    ShardInfo,
    default_environment,
    kept_agent_rows,
)


def add_agents_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "agents",
        help="run agent loops on agent scenarios with faults and check the agent contract",
        description="Check agent loops against the agent contract (specs/agent-contract.md).",
    )
    p.add_argument(
        "--agent",
        action="append",
        help="an agent adapter: a registered name (reference), one at a declared configuration (agno[retries=1]), module:object or cmd:COMMAND; repeatable",
    )
    p.add_argument(
        "--scenarios",
        action="append",
        help="an agent scenario file or folder, or a bundled scenario's name (no_terminal_event); repeatable (default: the bundled ones)",
    )
    p.add_argument(
        "--protocol", action="append", choices=PROTOCOLS, help="only this protocol; repeatable"
    )
    p.add_argument(
        "--check", action="append", help=f"only this check ({', '.join(CHECK_IDS)}); repeatable"
    )
    p.add_argument(
        "--expect",
        help="known failures: a folder of <agent>.yaml files, each replacing the bundled file of "
        "its agent, or one YAML file {agent: [{scenario, check, protocol?, reason}]} (default: "
        "[tool.stream-harness] agent_expectations, then the files bundled with stream-harness)",
    )
    p.add_argument(
        "--shard",
        metavar="K/N",
        help="run only shard K of N of the (agent, scenario, protocol) runs, split as `check "
        "--shard` splits pairs; `stream-harness merge` combines the shards' reports",
    )
    p.add_argument(
        "--project",
        help="folder put on the import path for module:object (default: the folder of the "
        "pyproject.toml that configures the run, as `check` imports adapters, else .); "
        "repeated in every reproduce command",
    )
    p.add_argument(
        "--out",
        help="report folder: the agent rows go into its report.jsonl, README.md, report.html and "
        "junit.xml beside the stream rows already there (those of other agents are kept)",
    )
    p.add_argument(
        "--allow-empty-shard",
        action="store_true",
        help="with --shard: a shard with no run is written and passes (a driver that merges "
        "the shards counts the whole)",
    )
    p.add_argument(
        "--format", choices=FORMATS, default="auto",
        help="console output: a table on a terminal, plain lines in logs, github annotations (default: auto)",
    )  # fmt: skip
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per run (default 60)")
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="runs at once (default 1), each job with its own adapters (a stdio agent: one "
        "process per job); agent runs mostly wait, so more jobs than cores pays",
    )
    p.add_argument(
        "--max-turns", type=int, default=10, help="turns per run asked of the agent (default 10)"
    )
    p.add_argument(
        "--serve",
        metavar="SCENARIO",
        help="instead of checking: serve this agent scenario (one --protocol) on 127.0.0.1 for an "
        "agent started by hand, until Ctrl-C, then print the requests and the ledger as JSON",
    )
    p.add_argument(
        "--port", type=int, default=0, help="with --serve: the port (default: a free one, printed)"
    )
    add_app_arguments(p)
    add_explore_arguments(p)
    p.set_defaults(func=agents_command)
    return p


def _error(message: str) -> int:
    """Bad input: one line on stderr, as `check` says it (never twice, on both streams)."""
    print(f"stream-harness: {message}", file=sys.stderr)
    return 2


class _BadInput(Exception):
    """Bad input found while a run is prepared: its message is what :func:`_error` prints."""


def agents_command(args: argparse.Namespace) -> int:
    if args.serve:
        return serve_scenario(args)
    try:
        return _check_agents(args)
    except _BadInput as exc:
        return _error(str(exc))


def _check_agents(args: argparse.Namespace) -> int:
    """Every agent on every scenario in every protocol, judged; bad input raises
    :class:`_BadInput` at the first problem, in the order the flags are read."""
    _check_flags(args)
    scenarios = _scenarios(args)
    try:
        config = load_config()
    except ConfigError as exc:
        raise _BadInput(str(exc)) from exc
    args.import_root = import_root(args.project, config.source)
    adapters = _adapters(args, scenarios)
    try:
        shard = parse_shard(args.shard) if args.shard else None
    except ShardError as exc:
        raise _BadInput(str(exc)) from exc
    user = Path(args.expect) if args.expect else config.agent_expectations
    expectations = _expectations(args, user, adapters, scenarios)
    limits = AgentLimits(max_turns=args.max_turns, timeout_s=args.timeout)
    if args.explore is not None:
        scenarios, problem = explore_bases(scenarios, bool(args.scenarios))
        if problem is not None:
            raise _BadInput(problem)
        args.priors, problem = read_priors(args.prior_report)
        if problem is not None:
            raise _BadInput(problem)
    units = planned_units(adapters, scenarios, args.protocol)
    _say_unexpressible(scenarios, args.protocol or ())
    results = _results(adapters, scenarios, args, expectations, limits, shard)
    results = with_project(results, args.project)
    versions = {adapter.name: _version(adapter) for _, adapter in adapters}
    info = None
    if shard is not None:
        owned = sum(1 for _, a, sc, pr in units if shard.owns(*agent_unit_key(a.name, sc.name, pr)))
        info = ShardInfo(index=shard.index, count=shard.count, pairs=owned, total_pairs=len(units))
    return _finish(results, args, versions, info)


def _say_unexpressible(scenarios: Sequence[AgentScenario], protocols: Sequence[str]) -> None:
    """A scenario that ``--protocol`` names a protocol for which cannot be served there (a
    fault its wire cannot carry, a call id no server of it sends: specs/call_ids.yaml) is
    skipped there, and the user who asked for that protocol is told why."""
    for scenario in scenarios:
        for protocol in protocols:
            why = scenario.unexpressible.get(protocol)
            if why is not None:
                print(
                    f"stream-harness: skipped {scenario.name} on {protocol}: {why}", file=sys.stderr
                )


def _check_flags(args: argparse.Namespace) -> None:
    """The flags that need no file read: what to check, and the limits of a run."""
    if not args.agent and not args.app:
        raise _BadInput(
            "--agent: name at least one agent (reference, module:object or cmd:COMMAND), or --app CMD"
        )
    if args.tool and not args.app:
        raise _BadInput("--tool: binds tools for --app only (an adapter wires task.tools itself)")
    unknown = sorted(set(args.check or ()) - set(CHECK_IDS))
    if unknown:
        raise _BadInput(
            f"--check: unknown check(s) {', '.join(unknown)} ({known_names(unknown[0], CHECK_IDS)})"
        )
    if args.timeout <= 0 or args.max_turns < 1:
        raise _BadInput("--timeout must be > 0 and --max-turns >= 1")
    if args.jobs < 1:
        raise _BadInput(f"--jobs must be >= 1, got {args.jobs}")
    problem = explore_problem(args)
    if problem is not None:
        raise _BadInput(problem)


def _scenarios(args: argparse.Namespace) -> list[AgentScenario]:
    """The scenarios ``--scenarios`` names (default: the bundled ones), each file once."""
    roots: list[Path] = []
    for given in args.scenarios or ():
        found_root = resolve_scenarios_argument(given)
        if found_root is None:
            raise _BadInput(
                f"--scenarios: {given}: no such file or folder, nor a bundled agent scenario"
            )
        roots.append(found_root)
    roots = roots or [bundled_agent_scenarios()]
    files: list[Path] = []
    for root in roots:
        found = find_agent_scenarios(root)
        if not found:
            raise _BadInput(f"--scenarios: {root}: no agent scenario (*.yaml) to check")
        files += [f for f in found if f not in files]
    scenarios: list[AgentScenario] = []
    for file in files:
        try:
            scenarios.append(load_agent_scenario(file))
        except ScenarioError as exc:
            raise _BadInput(str(exc)) from exc
    return scenarios


def _adapters(
    args: argparse.Namespace, scenarios: list[AgentScenario]
) -> list[tuple[str, AgentAdapter]]:
    """The ``--agent`` adapters, then the ``--app`` one, each with the spec that names it."""
    adapters: list[tuple[str, AgentAdapter]] = []
    for spec in args.agent or ():
        try:
            adapters.append((spec, load_agent(spec, args.import_root)))
        except AgentLoadError as exc:
            raise _BadInput(str(exc)) from exc
    if args.app:
        try:
            adapters.append(app_adapter(args, scenarios))
        except (AppError, BindingError) as exc:
            raise _BadInput(str(exc)) from exc
    return adapters


def _expectations(
    args: argparse.Namespace,
    user: Path | None,
    adapters: list[tuple[str, AgentAdapter]],
    scenarios: list[AgentScenario],
) -> list[AgentExpectation]:
    """The known failures of the agents run (``user``'s, else the bundled files); their
    warnings go to stderr."""
    names = list(dict.fromkeys(adapter.name for _, adapter in adapters))
    try:
        expectations, warnings = expectations_for_agents(names, user, {s.name for s in scenarios})
    except (ExpectationError, ExpectationsError) as exc:
        raise _BadInput(f"--expect: {exc}" if args.expect else str(exc)) from exc
    for warning in warnings:
        print(f"stream-harness: warning: {warning}", file=sys.stderr)
    return expectations


def _results(
    adapters: list[tuple[str, AgentAdapter]],
    scenarios: list[AgentScenario],
    args: argparse.Namespace,
    expectations: list[AgentExpectation],
    limits: AgentLimits,
    shard: Shard | None,
) -> list[AgentResult]:
    """The runs (or the exploration), every agent process closed after, killed at once
    when interrupted."""
    try:
        if args.explore is not None:
            spawn = lambda spec: spawn_app(adapters, spec) or load_agent(spec, args.import_root)  # noqa: E731
            explored = run_exploration(
                adapters, scenarios, args, expectations, limits, spawn, args.priors
            )
            return app_reproduce(explored, args)
        return app_reproduce(_run(adapters, scenarios, args, expectations, limits, shard), args)
    except BaseException:
        # Interrupted: every agent process (one a job) asked to stop at once and killed
        # 2 s later, rather than 2 s each while their runs ignore the request.
        stop_all_stdio_processes()
        raise
    finally:
        for _, adapter in adapters:
            close = getattr(adapter, "close", None)
            if callable(close):
                close()  # a stdio agent's process


def _run(
    adapters: list[tuple[str, AgentAdapter]],
    scenarios: list[AgentScenario],
    args: argparse.Namespace,
    expectations: list[AgentExpectation],
    limits: AgentLimits,
    shard: Shard | None = None,
) -> list[AgentResult]:
    return run_agent_checks(
        adapters,
        scenarios,
        protocols=args.protocol,
        checks=args.check,
        expectations=expectations,
        limits=limits,
        shard=shard,
        jobs=args.jobs,
        spawn=lambda spec: spawn_app(adapters, spec) or load_agent(spec, args.import_root),
    )


def _version(adapter: AgentAdapter) -> str:
    try:
        return str(adapter.version())
    except Exception as exc:  # the framework's own metadata: shown, never fatal
        return f"unknown ({type(exc).__name__})"


def _finish(
    results: list[AgentResult],
    args: argparse.Namespace,
    versions: dict[str, str],
    shard: ShardInfo | None = None,
) -> int:
    judged = [r for r in results if r.status != "skipped"]
    if not judged and shard is not None and args.allow_empty_shard and args.out:
        problem = write_agent_report(Path(args.out), results, versions, shard)
        if problem is not None:
            return _error(problem)
        print(f"OK: nothing in shard {shard.label} (--allow-empty-shard)")
        return 0
    if not judged:
        where = f" in shard {shard.label}: use fewer shards" if shard is not None else ""
        return _error(
            "nothing was checked (no scenario in a protocol the agents support, or every check "
            f"skipped){where}"
        )
    render_agent_results(results, choose_format(args.format))
    if args.out:
        problem = write_agent_report(Path(args.out), results, versions, shard)
        if problem is not None:
            return _error(problem)
    counts = Counter(r.status for r in results)
    summary = ", ".join(f"{n} {status.replace('_', ' ')}" for status, n in sorted(counts.items()))
    runs = len({(r.agent, r.scenario, r.protocol) for r in results})
    what = "explored units" if any(r.explored is not None for r in results) else "agent runs"
    if any(r.failing for r in results):
        print(f"FAILED: {runs} {what}, {summary}")
        return 1
    print(f"OK: {runs} {what}, {summary}")
    return 0


def agent_rows(results: list[AgentResult], versions: dict[str, str]) -> tuple[AgentRow, ...]:
    """The report's agent rows: every judged result (checks that did not apply are no row)."""
    return tuple(
        AgentRow(
            agent=r.agent,
            agent_version=versions.get(r.agent, ""),
            scenario=r.scenario,
            protocol=r.protocol,
            check=r.check,
            title=r.title,
            outcome=r.status,
            message=r.message,
            advice=r.advice,
            command=r.command,
            faults=r.faults,
            conventions=dict(r.conventions),
            settings=r.settings,
            issue=r.reason or None,
            explored=dict(r.explored) if r.explored is not None else None,
        )
        for r in results
        if r.status != "skipped"
    )


def write_agent_report(
    out: Path,
    results: list[AgentResult],
    versions: dict[str, str],
    shard: ShardInfo | None = None,
) -> str | None:
    """Merge the agent rows into the report in ``out`` (or start one); a problem as one line.

    A shard's rows start a report of their own (``shard`` in its header, so that
    ``stream-harness merge`` combines the shards); a shard is never merged into a folder
    that holds a report, whose rows it would mix with a part of a run.
    """
    rows = agent_rows(results, versions)
    now = datetime.now(UTC).replace(microsecond=0)
    existing = out / "report.jsonl"
    try:
        if shard is not None and existing.exists():
            return (
                f"--out: {existing} holds a report already; write each shard to a folder of its "
                "own (--out shard-K) and `stream-harness merge` them"
            )
        if existing.exists():
            previous = load_report(existing)
            kept = kept_agent_rows(previous.agent_results, rows)
            report = previous.model_copy(update={"agent_results": kept + rows, "finished": now})
        else:
            report = Report(
                tool_version=facts.version(),
                started=now,
                finished=now,
                seed=0,
                examples=0,
                checks=(),
                adapters=(),
                cases=(),
                environment=default_environment(),
                agent_results=rows,
                shard=shard,
            )
        write_report(report, out)
    except ReportError as exc:
        return f"--out: {exc}"
    except OSError as exc:
        return f"--out: {out}: {exc.strerror or exc}"
    return None


def serve_scenario(args: argparse.Namespace) -> int:
    """``--serve``: the scenario server alone, for an agent the harness does not start."""
    try:
        scenario = load_agent_scenario(args.serve)
    except ScenarioError as exc:
        return _error(str(exc))
    protocols = args.protocol or list(scenario.protocols)
    if len(protocols) == 1 and protocols[0] in scenario.unexpressible:
        return _error(f"--protocol {protocols[0]}: {scenario.unexpressible[protocols[0]]}")
    if len(protocols) != 1 or protocols[0] not in scenario.protocols:
        return _error(f"--serve: give one --protocol of {', '.join(scenario.protocols)}")
    _, answers = scripted_answers(scenario, protocols[0])
    tools = [LedgerTool(t.name, t.default, t.runs) for t in scenario.tools]
    try:
        server = AgentServer(answers, tools, port=args.port).start()
    except OSError as exc:
        return _error(f"--port: {exc.strerror or exc}")
    print(
        f"serving agent scenario {scenario.name} in {protocols[0]} on {server.url} "
        f"(ledger: {server.ledger_url}; Ctrl-C stops)",
        flush=True,
    )
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        record = server.replies_.record()
        server.stop()
    print(json.dumps(record, indent=2))
    return 0
