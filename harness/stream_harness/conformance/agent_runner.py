"""Running agent adapters over agent scenarios: one server per run, then the checks.

For each (agent, scenario, protocol) the scenario is rendered in the protocol, served by
a fresh :class:`~stream_harness.server.agent.AgentServer` (so nothing of one run leaks
into the next), the adapter runs the prompt against it with the scenario's tools wired
to the ledger, and :func:`~stream_harness.conformance.agent_checks.judge` reads what the
server saw. An adapter that raises or runs past its limit is a crash, recorded, never a
crash of the harness.
"""

from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from stream_harness.agents.protocol import (
    AgentAdapter,
    AgentLimits,
    AgentOutcome,
    AgentTask,
    AgentTool,
)
from stream_harness.agents.render import Served
from stream_harness.agents.scenario import AgentScenario
from stream_harness.conformance.agent_checks import CHECKS, AgentRun, judge
from stream_harness.server.agent import AgentServer, LedgerTool, ScriptedAnswer

ResultStatus = Literal["passed", "failed", "skipped", "known_failure", "fixed"]
GRACE_S = 5.0  # seconds past the task's own timeout before a run counts as hung


@dataclass(frozen=True, slots=True)
class AgentResult:
    """One (agent, scenario, protocol, check) verdict, with what reproduces it."""

    agent: str
    scenario: str
    path: str
    protocol: str
    check: str
    title: str
    status: ResultStatus
    message: str
    command: str
    faults: tuple[str, ...]
    conventions: Mapping[str, Any]
    settings: str
    elapsed: float
    reason: str = ""  # the expectation's reason, for a known failure

    @property
    def failing(self) -> bool:
        return self.status in ("failed", "fixed")


class ExpectationError(ValueError):
    """An expectations file that cannot be read; one line."""


@dataclass(frozen=True, slots=True)
class AgentExpectation:
    agent: str
    scenario: str
    check: str
    protocol: str | None
    reason: str

    def matches(self, agent: str, scenario: str, protocol: str, check: str) -> bool:
        return (
            self.agent == agent
            and self.scenario == scenario
            and self.check == check
            and self.protocol in (None, protocol)
        )


def load_agent_expectations(path: Path) -> list[AgentExpectation]:
    """``{agent: [{scenario, check, protocol?, reason}]}``: known failures, each with why."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ExpectationError(f"{path}: cannot read: {exc}") from None
    if not isinstance(raw, dict):
        raise ExpectationError(f"{path}: a mapping of agent name -> list of known failures")
    out: list[AgentExpectation] = []
    for agent, entries in raw.items():
        for i, e in enumerate(entries or []):
            if not isinstance(e, dict) or not {"scenario", "check", "reason"} <= set(e):
                raise ExpectationError(f"{path}: {agent}.{i}: needs scenario, check and reason")
            out.append(
                AgentExpectation(
                    str(agent),
                    str(e["scenario"]),
                    str(e["check"]),
                    e.get("protocol"),
                    str(e["reason"]),
                )
            )
    return out


def task_for(
    scenario: AgentScenario, protocol: str, server: AgentServer, limits: AgentLimits
) -> AgentTask:
    tools = tuple(
        AgentTool(t.name, t.description, t.schema, server.ledger_url) for t in scenario.tools
    )
    return AgentTask(
        scenario=scenario.name,
        protocol=protocol,
        base_url=server.url,
        model=scenario.spec.model,
        prompt=scenario.spec.prompt,
        tools=tools,
        system=scenario.spec.system,
        limits=limits,
    )


def scripted_answers(
    scenario: AgentScenario, protocol: str
) -> tuple[list[Served], list[ScriptedAnswer]]:
    """The scenario's responses in ``protocol``: what each delivers, and the bytes to serve."""
    served = scenario.served(protocol)
    matches = [r.match for r in scenario.spec.responses for _ in range(r.repeat)]
    answers = [
        ScriptedAnswer(s.status, s.headers, s.chunks, s.cut, s.pace, m.encode() if m else None)
        for s, m in zip(served, matches, strict=True)
    ]
    return served, answers


def observe(
    adapter: AgentAdapter, scenario: AgentScenario, protocol: str, limits: AgentLimits | None = None
) -> AgentRun:
    """Run ``adapter`` once on ``scenario`` in ``protocol`` and return what was observed."""
    limits = limits or AgentLimits()
    served, answers = scripted_answers(scenario, protocol)
    ledger_tools = [LedgerTool(t.name, t.default, t.runs) for t in scenario.tools]
    box: dict[str, Any] = {}

    with AgentServer(answers, ledger_tools) as server:
        task = task_for(scenario, protocol, server, limits)

        def target() -> None:
            try:
                box["outcome"] = adapter.run_agent(task)
            except BaseException as exc:  # the adapter's own crash is a result
                box["crash"] = f"{type(exc).__name__}: {exc}"

        started = time.monotonic()
        worker = threading.Thread(target=target, daemon=True, name=f"agent-{scenario.name}")
        worker.start()
        worker.join(limits.timeout_s + GRACE_S)
        elapsed = time.monotonic() - started
        if worker.is_alive():
            box["crash"] = f"no outcome within {limits.timeout_s + GRACE_S:g} s (hung)"
        outcome = box.get("outcome")
        if outcome is not None and not isinstance(outcome, AgentOutcome):
            box["crash"] = f"run_agent returned {type(outcome).__name__}, not an AgentOutcome"
            outcome = None
        return AgentRun(
            agent=adapter.name,
            scenario=scenario,
            protocol=protocol,
            served=served,
            requests=list(server.requests),
            ledger=list(server.ledger),
            outcome=outcome,
            crash=box.get("crash"),
            elapsed=elapsed,
            conventions=dict(adapter.conventions),
            answered=list(server.replies_.answered),
        )


def reproduce(agent_spec: str, scenario: AgentScenario, protocol: str, check: str) -> str:
    return shlex.join(
        [
            "stream-harness",
            "agents",
            "--agent",
            agent_spec,
            "--scenarios",
            str(scenario.path),
            "--protocol",
            protocol,
            "--check",
            check,
        ]
    )


def run_agent_checks(
    adapters: Sequence[tuple[str, AgentAdapter]],
    scenarios: Sequence[AgentScenario],
    *,
    protocols: Sequence[str] | None = None,
    checks: Sequence[str] | None = None,
    expectations: Sequence[AgentExpectation] = (),
    limits: AgentLimits | None = None,
) -> list[AgentResult]:
    """Every (agent spec + adapter, scenario, protocol) run and judged, in that order."""
    titles = {c.id: c.title for c in CHECKS}
    results: list[AgentResult] = []
    for spec, adapter in adapters:
        for scenario in scenarios:
            for protocol in scenario.protocols:
                if protocols and protocol not in protocols:
                    continue
                if protocol not in adapter.protocols:
                    continue
                run = observe(adapter, scenario, protocol, limits)
                for verdict in judge(run):
                    if checks and verdict.check not in checks:
                        continue
                    status: ResultStatus = verdict.status
                    reason = ""
                    known = next(
                        (
                            e
                            for e in expectations
                            if e.matches(adapter.name, scenario.name, protocol, verdict.check)
                        ),
                        None,
                    )
                    if known is not None:
                        reason = known.reason
                        if status == "failed":
                            status = "known_failure"
                        elif status == "passed":
                            status = "fixed"  # a stale expectation fails, so the file stays true
                    results.append(
                        AgentResult(
                            agent=adapter.name,
                            scenario=scenario.name,
                            path=str(scenario.path),
                            protocol=protocol,
                            check=verdict.check,
                            title=titles[verdict.check],
                            status=status,
                            message=verdict.message,
                            command=reproduce(spec, scenario, protocol, verdict.check),
                            faults=tuple(scenario.faults),
                            conventions=dict(adapter.conventions),
                            settings=adapter.settings,
                            elapsed=run.elapsed,
                            reason=reason,
                        )
                    )
    return results
