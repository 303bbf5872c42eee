"""The ``agent_scenario`` pytest fixture: one scenario served, the user's agent run in the
test's own process with every SDK pointed at it, and ``assert_conformant()``.

.. code-block:: python

    @pytest.mark.agent_scenarios()                      # every bundled scenario
    def test_my_agent(agent_scenario):
        agent_scenario.run(my_agent.main)               # called with the prompt
        agent_scenario.assert_conformant()

The run goes through the same :func:`~stream_harness.agents.conformance.runner.observe`
as any agent row (so binding to the agent's own tools, the ledger and the wiring check
are the same), the variables of specs/app_env.yaml set for the duration of the call; the
verdict is :func:`~stream_harness.agents.conformance.checks.judge`'s. The marker takes
bundled scenario names, files, folders or fault builders (:mod:`stream_harness.agents.fault_builders`),
``protocols`` and ``tools`` (the ``--tool`` mapping); ids read ``protocol/scenario``, so
``-k retry_after`` and xdist work as on any parametrized test.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import io
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from stream_harness.agents.app import app_environment, client_conventions, client_of
from stream_harness.agents.binding import ToolBinding
from stream_harness.agents.conformance.checks import CHECKS, AgentRun, judge
from stream_harness.agents.conformance.runner import observe
from stream_harness.agents.fault_builders import Draft
from stream_harness.agents.protocol import AgentLimits, AgentOutcome, AgentTask
from stream_harness.agents.scenario.model import (
    AgentScenario,
    bundled_agent_scenarios,
    find_agent_scenarios,
    load_agent_scenario,
    resolve_scenarios_argument,
)
from stream_harness.agents.scenario.render import PROTOCOLS

DEFAULT_PROTOCOLS: Final = ("openai-completions",)
MARKER: Final = "agent_scenarios"


class ScenarioChoiceError(ValueError):
    """A marker argument that names no scenario; one line."""


@dataclass(frozen=True, slots=True)
class Choice:
    """One (scenario, protocol) the marker asked for; the scenario is loaded in the test."""

    source: str | Draft
    protocol: str
    tools: Mapping[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        name = self.source.name if isinstance(self.source, Draft) else Path(self.source).stem
        return f"{self.protocol}/{name}"


def choices(
    args: Sequence[Any], kwargs: Mapping[str, Any], base: Path | None = None
) -> list[Choice]:
    """The marker's (scenario, protocol) pairs: each scenario in each of ``protocols``
    (default openai-completions, the official client most agents use) it is served in.
    A relative path is looked up beside the test file (``base``) first, as the
    ``harness_cassettes`` marker does, then from the working directory."""
    protocols = tuple(kwargs.get("protocols") or DEFAULT_PROTOCOLS)
    unknown = [p for p in protocols if p not in PROTOCOLS]
    if unknown:
        raise ScenarioChoiceError(
            f"{MARKER}: unknown protocol(s) {unknown} (known: {', '.join(PROTOCOLS)})"
        )
    tools = dict(kwargs.get("tools") or {})
    sources: list[str | Draft] = []
    for given in args or (str(bundled_agent_scenarios()),):
        if isinstance(given, Draft):
            sources.append(given)
            continue
        beside = base / str(given) if base is not None else None
        root = (
            beside
            if beside is not None and beside.exists()
            else resolve_scenarios_argument(str(given))
        )
        if root is None:
            raise ScenarioChoiceError(
                f"{MARKER}: {given}: no such file or folder, nor a bundled agent scenario"
            )
        sources += [str(p) for p in find_agent_scenarios(root)]
    out = []
    for source in sources:
        served_in = (
            PROTOCOLS if isinstance(source, Draft) else load_agent_scenario(source).protocols
        )
        out += [Choice(source, p, tools) for p in protocols if p in served_in]
    if not out:
        raise ScenarioChoiceError(f"{MARKER}: no scenario is served in {', '.join(protocols)}")
    return out


@contextlib.contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """``os.environ`` as ``values`` for the block, then restored exactly."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@dataclass
class FunctionAgent:
    """The user's callable as an agent row: called with the prompt, its environment set."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    tool_binding: ToolBinding
    name: str = "agent"
    protocols: frozenset[str] = frozenset(PROTOCOLS)
    conventions: Mapping[str, Any] = field(default_factory=dict)
    settings: str = "the test's own agent, in process"

    def version(self) -> str:
        return "in-process"

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        env = app_environment(
            task.base_url, prompt=task.prompt, protocol=task.protocol, scenario=task.scenario
        )
        printed = io.StringIO()
        with environment(env), contextlib.redirect_stdout(printed):
            try:
                value = self.fn(*(self.args or (task.prompt,)))
                if inspect.isawaitable(value):  # an async agent: run on this run's thread
                    value = asyncio.run(_awaited(value))
            except SystemExit as exc:
                value = exc.code
            except Exception as exc:  # the agent raising is an outcome the checks judge
                return AgentOutcome(
                    output=printed.getvalue() or None,
                    error_type=type(exc).__name__,
                    error_message=str(exc),
                )
        if isinstance(value, int) and not isinstance(value, bool) and value != 0:
            return AgentOutcome(
                output=printed.getvalue() or None,
                error_type=f"returned {value}",
                error_message=printed.getvalue().strip().splitlines()[-1:][0]
                if printed.getvalue().strip()
                else "",
            )
        shown = "" if value is None or isinstance(value, int) else str(value)
        return AgentOutcome(output=printed.getvalue() + shown)


async def _awaited(value: Any) -> Any:
    return await value


@dataclass
class AgentScenarioFixture:
    """What ``agent_scenario`` gives a test: the scenario, ``run(fn)`` and the verdict."""

    scenario: AgentScenario
    protocol: str
    binding: ToolBinding
    timeout: float = 60.0
    observed: AgentRun | None = None

    @property
    def prompt(self) -> str:
        return self.scenario.spec.prompt

    def run(self, fn: Callable[..., Any], *args: Any) -> AgentRun:
        """Run ``fn(prompt)`` (or ``fn(*args)``) once against the scenario; what it raises
        or returns is its outcome, what it printed its output."""
        agent = FunctionAgent(fn, args, self.binding)
        run = observe(agent, self.scenario, self.protocol, AgentLimits(timeout_s=self.timeout))
        agent_header = run.requests[0].headers.get("user-agent", "") if run.requests else ""
        run.conventions = client_conventions(client_of(agent_header))
        self.observed = run
        return run

    def failures(self) -> list[str]:
        if self.observed is None:
            raise RuntimeError("agent_scenario.run(your_agent) first: nothing was run to judge")
        titles = {c.id: c.title for c in CHECKS}
        verdicts = judge(self.observed)
        if not any(v.status != "skipped" for v in verdicts):
            return ["no check applied to the run: nothing was checked"]
        return [
            f"{v.check} {titles[v.check]}: {v.message}" for v in verdicts if v.status == "failed"
        ]

    def assert_conformant(self) -> None:
        """Raise AssertionError with every failed check's message, one a line."""
        failed = self.failures()
        if failed:
            where = f"{self.scenario.name} [{self.protocol}]"
            raise AssertionError(
                f"agent failed {len(failed)} check(s) on {where}:\n  " + "\n  ".join(failed)
            )


def make_fixture(choice: Choice, folder: Path) -> AgentScenarioFixture:
    source = choice.source
    scenario = source.load(folder) if isinstance(source, Draft) else load_agent_scenario(source)
    binding = ToolBinding(choice.tools, auto=True)
    binding.check([scenario])
    return AgentScenarioFixture(scenario, choice.protocol, binding)
