"""Running agent adapters over agent scenarios: one server per run, then the checks.

For each (agent, scenario, protocol) the scenario is rendered in the protocol, served by
a fresh :class:`~stream_harness.agents.server.AgentServer` (so nothing of one run leaks
into the next), the adapter runs the prompt against it with the scenario's tools wired
to the ledger, and :func:`~stream_harness.agents.conformance.checks.judge` reads what the
server saw. An adapter that raises or runs past its limit is a crash, recorded, never a
crash of the harness.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import yaml

from stream_harness.agents.binding import Binder, binding_of
from stream_harness.agents.conformance.checks import CHECK_IDS, CHECKS, AgentRun, judge
from stream_harness.agents.protocol import (
    AgentAdapter,
    AgentLimits,
    AgentOutcome,
    AgentRunTimedOut,
    AgentTask,
    AgentTool,
)
from stream_harness.agents.scenario.model import (
    AgentScenario,
    bundled_agent_scenarios,
    scenario_argument,
)
from stream_harness.agents.scenario.render import PROTOCOLS, Served
from stream_harness.agents.server import AgentServer, LedgerTool, ScriptedAnswer
from stream_harness.agents.stdio import StdioAgentHung
from stream_harness.conformance.expectations import (
    adapter_from_file_name,
    expectation_file_name,
    unclaimed_files,
)
from stream_harness.conformance.reproduce import agents_command
from stream_harness.conformance.shard import Shard
from stream_harness.contract.facts import agent_expectations_dir
from stream_harness.recordings.inputs import display_path

ResultStatus = Literal[
    "passed", "failed", "timeout", "crashed", "skipped", "known_failure", "fixed"
]
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
    # ``--explore``: the schedules drawn and judged, and the shrunk failing one
    # (harness/stream_harness/agents/conformance/explore.py); None for a scenario run as written.
    explored: Mapping[str, Any] | None = None
    advice: str = ""  # the check's line on what to change in the agent, on a failure

    @property
    def failing(self) -> bool:
        return self.status in ("failed", "timeout", "crashed", "fixed")


class ExpectationError(ValueError):
    """An expectations file that cannot be read; one line."""


# The scenario name of an entry that covers explored rows of every base (with ``faults``).
ANY_EXPLORED: Final = "~explored"


@dataclass(frozen=True, slots=True)
class AgentExpectation:
    agent: str
    scenario: str
    check: str
    protocol: str | None
    reason: str
    # An entry for explored rows (scenario ``<base>~explored`` or ``~explored``): the fault
    # words (``clean_eof``, ``http_500``, ...) of the schedules it covers; a shrunk
    # schedule is covered when each of its words is listed.
    faults: frozenset[str] | None = None

    def matches(self, agent: str, scenario: str, protocol: str, check: str) -> bool:
        return (
            self.agent == agent
            and self.scenario == scenario
            and self.check == check
            and self.protocol in (None, protocol)
        )

    def covers_explored(
        self, agent: str, scenario: str, protocol: str, check: str, kinds: Collection[str]
    ) -> bool:
        """An explored row (``<base>~explored``) whose shrunk schedule has the fault words
        ``kinds``, by this entry's own ``faults`` list."""
        return (
            self.faults is not None
            and self.agent == agent
            and self.scenario in (scenario, ANY_EXPLORED)
            and self.check == check
            and self.protocol in (None, protocol)
            and bool(kinds)
            and set(kinds) <= self.faults
        )


def load_agent_expectations(path: Path, *, agent: str | None = None) -> list[AgentExpectation]:
    """``{agent: [{scenario, check, protocol?, reason}]}``: known failures, each with why.

    With ``agent`` (the file is ``<agent>.yaml`` of a folder), the file may name no other
    agent: an entry under another name would silently apply to nothing. A check or
    protocol that does not exist is an error too (a typo would turn a known failure into a
    new one, or, worse, an entry that can never match and never goes stale).
    """
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ExpectationError(f"{path}: cannot read: {exc}") from None
    if not isinstance(raw, dict):
        raise ExpectationError(f"{path}: a mapping of agent name -> list of known failures")
    out: list[AgentExpectation] = []
    for name, entries in raw.items():
        if agent is not None and str(name) != agent:
            raise ExpectationError(
                f"{path}: names agent {name!r}, but is the file of {agent!r} "
                f"(one <agent>.yaml per agent)"
            )
        if not isinstance(entries, list | None):
            raise ExpectationError(f"{path}: {name}: a list of known failures")
        for i, e in enumerate(entries or []):
            if not isinstance(e, dict) or not {"scenario", "check", "reason"} <= set(e):
                raise ExpectationError(f"{path}: {name}.{i}: needs scenario, check and reason")
            extra = sorted(set(map(str, e)) - _ENTRY_KEYS)
            if extra:
                raise ExpectationError(
                    f"{path}: {name}.{i}: unknown field {extra[0]!r} "
                    f"(known: {', '.join(sorted(_ENTRY_KEYS))})"
                )
            if str(e["check"]) not in CHECK_IDS:
                raise ExpectationError(
                    f"{path}: {name}.{i}: unknown check {e['check']!r} (known: {', '.join(CHECK_IDS)})"
                )
            protocol = e.get("protocol")
            if protocol is not None and protocol not in PROTOCOLS:
                raise ExpectationError(
                    f"{path}: {name}.{i}: unknown protocol {protocol!r} (known: {', '.join(PROTOCOLS)})"
                )
            faults = e.get("faults")
            scenario = str(e["scenario"])
            if faults is not None:
                if not (
                    isinstance(faults, list)
                    and faults
                    and all(isinstance(f, str) and f for f in faults)
                ):
                    raise ExpectationError(
                        f"{path}: {name}.{i}: faults must be a list of fault words "
                        "(clean_eof, http_500, fin_in_call, ...)"
                    )
                if not scenario.endswith(ANY_EXPLORED):
                    raise ExpectationError(
                        f"{path}: {name}.{i}: faults is for explored rows: the scenario must be "
                        f"'<base>{ANY_EXPLORED}' or '{ANY_EXPLORED}', got {scenario!r}"
                    )
            out.append(
                AgentExpectation(
                    str(name),
                    scenario,
                    str(e["check"]),
                    protocol,
                    str(e["reason"]),
                    frozenset(map(str, faults)) if faults is not None else None,
                )
            )
    return out


_ENTRY_KEYS: Final = frozenset({"scenario", "check", "protocol", "reason", "faults"})


def agent_expectation_files(agents: Iterable[str], user: Path | None) -> dict[str, Path]:
    """Each agent's expectations file: the user's folder's ``<agent>.yaml`` when it has one,
    else the bundled one (``specs/agent-expectations/``), as for the stream rows."""
    found: dict[str, Path] = {}
    for agent in agents:
        name = expectation_file_name(agent)
        for folder in (user, agent_expectations_dir()):
            if folder is not None and folder.is_dir() and (folder / name).is_file():
                found[agent] = folder / name
                break
    return found


def expectations_for_agents(
    agents: Sequence[str], user: Path | None, scenarios: Collection[str]
) -> tuple[list[AgentExpectation], list[str]]:
    """The known failures of ``agents`` (the ones that run) and warnings, one line each.

    ``user`` is ``--expect`` (or the project's ``agent_expectations``): a folder of
    ``<agent>.yaml`` files, each replacing the bundled file of its agent, or one file
    ``{agent: [...]}`` whose agents' entries replace those agents' bundled files. Entries
    that can apply to nothing are warned about, not fatal: an agent that did not run (a
    file of a folder named for none of them), or a scenario that is neither in this run nor
    bundled (a misspelt or renamed scenario).
    """
    warnings: list[str] = []
    user_dir = user if user is not None and user.is_dir() else None
    if user is not None and user_dir is None and not user.is_file():
        raise ExpectationError(f"{user}: no such expectations file or folder")
    given: dict[str, list[AgentExpectation]] = {}
    if user is not None and user_dir is None:
        for e in load_agent_expectations(user):
            given.setdefault(e.agent, []).append(e)
        for name in given:
            if name not in agents:
                warnings.append(
                    f"{user}: no agent of this run is named {name!r}; its known failures apply "
                    f"to nothing (ran: {', '.join(agents)})"
                )
    if user_dir is not None:
        for path in unclaimed_files(user_dir, agents):
            warnings.append(
                f"{path}: no agent of this run is named {adapter_from_file_name(path.name)!r}; "
                f"its known failures apply to nothing (ran: {', '.join(agents)})"
            )
    files = agent_expectation_files([a for a in agents if a not in given], user_dir)
    out: list[AgentExpectation] = []
    for agent in agents:
        if agent in given:
            out += given[agent]
        elif agent in files:
            out += load_agent_expectations(files[agent], agent=agent)
    known = set(scenarios) | bundled_scenario_names()
    for e in out:
        # An explored entry names its base (`weather_tool_call~explored`) or none (`~explored`).
        base = e.scenario.removesuffix(ANY_EXPLORED) if e.faults is not None else e.scenario
        if base and base not in known:
            warnings.append(
                f"known failure of {e.agent} names scenario {e.scenario!r}, which is neither "
                f"in this run nor bundled: it applies to nothing"
            )
    return out, warnings


def bundled_scenario_names() -> set[str]:
    """The names of the bundled agent scenarios (their file names: none sets ``name``)."""
    folder = bundled_agent_scenarios()
    return {p.stem for p in folder.glob("*.yaml")} if folder.is_dir() else set()


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
        ScriptedAnswer(
            s.status, s.headers, s.chunks, s.cut, s.pace, m.encode() if m else None, s.reset
        )
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
    binding = binding_of(adapter)  # app mode: bind the calls to the agent's own tools
    binder = Binder(scenario, protocol, binding) if binding is not None else None
    rebind = binder.hook(scripted_answers) if binder is not None else None

    with AgentServer(answers, ledger_tools, rebind=rebind, any_tool=binder is not None) as server:
        task = task_for(scenario, protocol, server, limits)

        def target() -> None:
            try:
                box["outcome"] = adapter.run_agent(task)
            except BaseException as exc:  # the adapter's own crash is a result
                box["crash"] = f"{type(exc).__name__}: {exc}"
                # A stdio agent's reply that never came, a framework's run past its bound.
                box["hung"] = isinstance(exc, StdioAgentHung | AgentRunTimedOut)

        started = time.monotonic()
        worker = threading.Thread(target=target, daemon=True, name=f"agent-{scenario.name}")
        worker.start()
        worker.join(limits.timeout_s + GRACE_S)
        elapsed = time.monotonic() - started
        hung = worker.is_alive() or bool(box.get("hung"))
        if worker.is_alive():
            box["crash"] = f"no outcome within {limits.timeout_s + GRACE_S:g} s (hung)"
        outcome = box.get("outcome")
        if outcome is not None and not isinstance(outcome, AgentOutcome):
            box["crash"] = f"run_agent returned {type(outcome).__name__}, not an AgentOutcome"
            outcome = None
        if binder is not None and binder.bound:
            scenario, served = binder.scenario, binder.served
            box.setdefault("crash", binder.wiring_problem(server.ledger, len(server.requests)))
        return AgentRun(
            agent=adapter.name,
            scenario=scenario,
            protocol=protocol,
            served=served,
            requests=list(server.requests),
            ledger=list(server.ledger),
            outcome=outcome,
            crash=box.get("crash"),
            hung=hung,
            elapsed=elapsed,
            conventions=dict(adapter.conventions),
            answered=list(server.replies_.answered),
        )


def reproduce(
    agent_spec: str,
    scenario: AgentScenario,
    protocol: str,
    check: str,
    limits: AgentLimits | None = None,
) -> str:
    """The command that replays one agent check, with the run's bounds (conformance/reproduce.py)."""
    return agents_command(
        agent=agent_spec,
        scenarios=scenario_argument(scenario.path),
        protocol=protocol,
        check=check,
        limits=limits,
    )


Unit = tuple[str, AgentAdapter, AgentScenario, str]


def _unclosed_generators(record: logging.LogRecord) -> bool:
    """Drop asyncio's "error occurred during closing of asynchronous generator" reports.

    With frameworks' event loops in several threads at once, an HTTP client's response
    generator left open by a failed stream is finalised from whichever loop collects it
    (measured: pydantic-ai on google-genai, 4 jobs, a traceback a failing run on stderr,
    none with 1 job; the verdicts of all 130 runs identical). The run's outcome is already
    recorded; the traceback says nothing about the agent under test.
    """
    return "during closing of asynchronous generator" not in record.getMessage().lower()


def observe_in_jobs(
    units: Sequence[Unit],
    jobs: int,
    spawn: Callable[[str], AgentAdapter],
    limits: AgentLimits | None,
) -> list[AgentRun]:
    """:func:`observe` on ``units`` by ``jobs`` threads, the runs in the units' order.

    The first job uses the adapters given; every other makes its own on first need, and
    one that cannot (a framework that refuses a second instance) puts its unit back and
    stops, leaving the work to the others. Threads are daemons and the main thread waits
    interruptibly: a Ctrl-C ends the run at once, and the spawned adapters (stdio
    processes) are closed whatever happens.
    """
    work: queue.Queue[int] = queue.Queue()
    for i in range(len(units)):
        work.put(i)
    runs: list[AgentRun | None] = [None] * len(units)
    spawned: list[AgentAdapter] = []
    lock = threading.Lock()
    finished = threading.Semaphore(0)
    # Set on an interrupt: a job whose run just failed (its process killed) takes no next
    # unit, which would start a fresh process for the exit hooks to wait on and kill.
    stopping = threading.Event()

    def job(first: bool) -> None:
        own: dict[str, AgentAdapter] = {}
        try:
            while not stopping.is_set():
                try:
                    i = work.get_nowait()
                except queue.Empty:
                    return
                spec, adapter, scenario, protocol = units[i]
                if not first:
                    if spec not in own:
                        try:
                            own[spec] = spawn(spec)
                        except Exception:
                            work.put(i)
                            return
                        with lock:
                            spawned.append(own[spec])
                    adapter = own[spec]
                runs[i] = observe(adapter, scenario, protocol, limits)
        finally:
            finished.release()

    threads = [
        threading.Thread(target=job, args=(k == 0,), daemon=True, name=f"agent-job-{k + 1}")
        for k in range(jobs)
    ]
    asyncio_log = logging.getLogger("asyncio")
    asyncio_log.addFilter(_unclosed_generators)
    interrupted = False
    try:
        for t in threads:
            t.start()
        for _ in threads:
            finished.acquire()
        # A job that gave up on spawning may have left its unit after the others ended.
        while not work.empty():
            i = work.get_nowait()
            _, adapter, scenario, protocol = units[i]
            runs[i] = observe(adapter, scenario, protocol, limits)
    except BaseException:  # Ctrl-C, SIGTERM: the caller stops every process at once
        interrupted = True
        stopping.set()
        raise
    finally:
        asyncio_log.removeFilter(_unclosed_generators)
        for adapter in [] if interrupted else spawned:
            close = getattr(adapter, "close", None)
            if callable(close):
                with contextlib.suppress(Exception):
                    close()
    assert all(r is not None for r in runs)
    return [r for r in runs if r is not None]


def planned_units(
    adapters: Sequence[tuple[str, AgentAdapter]],
    scenarios: Sequence[AgentScenario],
    protocols: Sequence[str] | None,
) -> list[tuple[str, AgentAdapter, AgentScenario, str]]:
    """The (agent spec, adapter, scenario, protocol) runs a whole (unsharded) run makes:
    each scenario in each of its protocols the agent speaks (and ``protocols`` keeps)."""
    return [
        (spec, adapter, scenario, protocol)
        for spec, adapter in adapters
        for scenario in scenarios
        for protocol in scenario.protocols
        if (not protocols or protocol in protocols) and protocol in adapter.protocols
    ]


def agent_unit_key(agent: str, scenario: str, protocol: str) -> tuple[str, str]:
    """The (name, case) pair :func:`stream_harness.conformance.shard.shard_of` hashes for
    one agent run: the agent's row name and ``<protocol>/<scenario>``, the run's keys in
    the report. One run is the unit (every check of a run is judged from the one
    observation), as the (adapter, case) pair is for the stream checks."""
    return agent, f"{protocol}/{scenario}"


def run_agent_checks(
    adapters: Sequence[tuple[str, AgentAdapter]],
    scenarios: Sequence[AgentScenario],
    *,
    protocols: Sequence[str] | None = None,
    checks: Sequence[str] | None = None,
    expectations: Sequence[AgentExpectation] = (),
    limits: AgentLimits | None = None,
    shard: Shard | None = None,
    jobs: int = 1,
    spawn: Callable[[str], AgentAdapter] | None = None,
) -> list[AgentResult]:
    """Every (agent spec + adapter, scenario, protocol) run and judged, in that order;
    with ``shard``, only the runs that fall to it (:func:`agent_unit_key`).

    ``jobs`` runs at once, each job with adapters of its own made by ``spawn(spec)`` (one
    process per job for a stdio agent), because most of an agent run is waiting (retry
    delays, paced streams, timeouts), not CPU. Results keep the planned order.
    """
    titles = {c.id: c.title for c in CHECKS}
    results: list[AgentResult] = []
    units = [
        unit
        for unit in planned_units(adapters, scenarios, protocols)
        if shard is None or shard.owns(*agent_unit_key(unit[1].name, unit[2].name, unit[3]))
    ]
    if jobs > 1 and spawn is not None and len(units) > 1:
        runs = observe_in_jobs(units, jobs, spawn, limits)
    else:
        runs = [observe(a, sc, pr, limits) for _, a, sc, pr in units]
    for (spec, adapter, scenario, protocol), run in zip(units, runs, strict=True):
        for verdict in judge(run):
            if checks and verdict.check not in checks:
                continue
            status: ResultStatus = verdict.status
            if status == "failed" and run.crash is not None:
                status = (
                    "timeout" if run.hung else "crashed"
                )  # the run's own label (conformance/outcomes.py)
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
                if status in ("failed", "timeout", "crashed"):
                    status = "known_failure"
                elif status == "passed":
                    status = "fixed"  # a stale expectation fails, so the file stays true
                elif status == "skipped":
                    # The check no longer applies to the run (a convention now declared,
                    # a scenario changed): the entry describes nothing and is as stale.
                    # Its message (why it was skipped) tells the two kinds of stale apart.
                    status = "fixed"
            results.append(
                AgentResult(
                    agent=adapter.name,
                    scenario=scenario.name,
                    path=display_path(scenario.path),
                    protocol=protocol,
                    check=verdict.check,
                    title=titles[verdict.check],
                    status=status,
                    message=verdict.message,
                    command=reproduce(spec, scenario, protocol, verdict.check, limits),
                    faults=tuple(scenario.faults),
                    conventions=dict(adapter.conventions),
                    settings=adapter.settings,
                    elapsed=run.elapsed,
                    reason=reason,
                    advice=verdict.advice,
                )
            )
    return results
