"""``pytest --harness --harness-agent X``: agent conformance as test items, one per (agent,
scenario, protocol, check).

Imports of the engine are deferred (see stream_harness.pytest_plugin.options).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stream_harness.pytest_plugin.options import HarnessMarkerError, _config, adapter_segment

AGENTS_ROOT = "stream-harness-agents"


class AgentCheckFailure(Exception):
    pass


class AgentRunCache:
    """One observed run per (agent, scenario, protocol), shared by that run's check items:
    an agent run is the expensive part, its checks are reads of what was observed."""

    def __init__(self) -> None:
        self.runs: dict[tuple[str, str, str], Any] = {}

    def get(self, agent: Any, scenario: Any, protocol: str) -> Any:
        from stream_harness.agents.conformance.runner import observe

        key = (agent.name, str(scenario.path), protocol)
        if key not in self.runs:
            self.runs[key] = observe(agent, scenario, protocol)
        return self.runs[key]


class AgentsCollector(pytest.Collector):
    """``stream-harness-agents::<agent>::<check>[<scenario>-<protocol>]``; bad input (an
    agent that does not load, a scenario that does not parse, no scenario) is a collection
    error, never a pass."""

    def collect(self) -> Iterator[pytest.Item]:
        from stream_harness.agents.conformance.checks import CHECKS
        from stream_harness.agents.loading import load_agent
        from stream_harness.agents.scenario.model import (
            bundled_agent_scenarios,
            find_agent_scenarios,
            load_agent_scenario,
        )

        given = self.config.getoption("--harness-agent-scenarios")
        root = Path(given) if given else bundled_agent_scenarios()
        if not root.exists():
            raise HarnessMarkerError(f"--harness-agent-scenarios: {root}: no such file or folder")
        files = find_agent_scenarios(root)
        if not files:
            raise HarnessMarkerError(
                f"--harness-agent-scenarios: {root}: no agent scenario (*.yaml)"
            )
        scenarios = [load_agent_scenario(f) for f in files]
        cache = AgentRunCache()
        loaded = [
            (spec, load_agent(spec, self.config.rootpath))
            for spec in self.config.getoption("--harness-agent")
        ]
        known = _agent_known_failures(self.config, [a.name for _, a in loaded], scenarios)
        for spec, agent in loaded:
            for scenario in scenarios:
                for protocol in scenario.protocols:
                    if protocol not in agent.protocols:
                        continue
                    for check in CHECKS:
                        if not scenario.applies(check.id):
                            continue
                        name = f"{check.id}[{scenario.name}-{protocol}]"
                        item = AgentCheckItem.from_parent(
                            self,
                            name=name,
                            nodeid=f"{self.nodeid}::{adapter_segment(spec)}::{name}",
                            spec=spec,
                            agent=agent,
                            scenario=scenario,
                            protocol=protocol,
                            check=check,
                            cache=cache,
                        )
                        entry = next(
                            (
                                e
                                for e in known
                                if e.matches(agent.name, scenario.name, protocol, check.id)
                            ),
                            None,
                        )
                        if entry is not None:
                            # Strict: a known failure that passes fails, as `agents` exits 1 on it.
                            item.add_marker(
                                pytest.mark.xfail(
                                    strict=True, reason=f"known failure: {entry.reason}"
                                )
                            )
                        yield item

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        from stream_harness.agents.loading import AgentLoadError
        from stream_harness.agents.scenario.model import ScenarioError

        if isinstance(excinfo.value, AgentLoadError | ScenarioError | HarnessMarkerError):
            return f"stream-harness: {excinfo.value}"
        return str(super().repr_failure(excinfo))


def _agent_known_failures(
    config: pytest.Config, agents: list[str], scenarios: list[Any]
) -> list[Any]:
    """The agents' known failures as `stream-harness agents` reads them: the project's
    ``agent_expectations``, then the bundled ``specs/agent-expectations/``."""
    from stream_harness.agents.conformance.runner import ExpectationError, expectations_for_agents
    from stream_harness.conformance.expectations import ExpectationsError

    try:
        known, notes = expectations_for_agents(
            agents, _config(config).agent_expectations, {s.name for s in scenarios}
        )
    except (ExpectationError, ExpectationsError) as exc:
        raise HarnessMarkerError(str(exc)) from None
    for note in notes:
        warnings.warn(f"stream-harness: {note}", UserWarning, stacklevel=2)
    return known


class AgentCheckItem(pytest.Item):
    def __init__(
        self,
        *,
        spec: str,
        agent: Any,
        scenario: Any,
        protocol: str,
        check: Any,
        cache: AgentRunCache,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self.spec, self.agent, self.scenario = spec, agent, scenario
        self.protocol, self.check, self.cache = protocol, check, cache

    def runtest(self) -> None:
        from stream_harness.agents.conformance.checks import judge
        from stream_harness.agents.conformance.runner import reproduce

        run = self.cache.get(self.agent, self.scenario, self.protocol)
        verdict = next(v for v in judge(run) if v.check == self.check.id)
        if verdict.status == "skipped":
            if self.get_closest_marker("xfail") is not None:
                # Listed as a known failure, yet no longer judged: returning makes the
                # strict xfail an XPASS, a failure, as a known failure that passes is; the
                # expectations file stays true.
                return
            pytest.skip(verdict.message)
        if verdict.status == "failed":
            command = reproduce(self.spec, self.scenario, self.protocol, self.check.id)
            advice = f"\n    advice: {verdict.advice}" if verdict.advice else ""
            # A run that hung or crashed fails under its own label, as in the CLI's rows.
            label = ("TIMEOUT " if run.hung else "CRASHED ") if run.crash is not None else ""
            raise AgentCheckFailure(
                f"{label}{self.check.id} {self.check.title}: {verdict.message}{advice}"
                f"\n    reproduce: {command}"
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, AgentCheckFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return (
            self.scenario.path,
            None,
            f"[{self.spec}] {self.check.id} :: {self.scenario.name} [{self.protocol}]",
        )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Ahead of -k, -m, --lf and --ff as the stream items are, and after them (the order
    stream_harness.pytest_plugin registers its parts in)."""
    if not config.getoption("--harness"):
        return
    if config.getoption("--harness-agent"):
        agents = AgentsCollector.from_parent(session, name=AGENTS_ROOT, nodeid=AGENTS_ROOT)
        report = session.ihook.pytest_make_collect_report(collector=agents)
        session.ihook.pytest_collectreport(report=report)
        if report.passed:
            items.extend(item for node in report.result for item in session.genitems(node))
