"""``report.jsonl``: the machine-readable report, one JSON object per line (Bowtie style).

Format version 2 (issue 36). Line 1 is the header: what ran (tool, seed, checks,
adapters, cases) and every agent row's facts, each stated once (an agent's version,
settings, conventions with their sources and protocols; each agent check's title; each
scenario's file and faults). Then one ``result`` line per (adapter, case, check) and one
``agent_result`` line per (agent, scenario, protocol, check), holding its keys, its
outcome and what belongs to that result alone (message, failures, issue, advice...), and
nothing the header already says: a field is written only where it differs from what the
header (or the model's default) gives, and a reproduce command only where it is not the
one :func:`stream_harness.conformance.reproduce.agents_command` rebuilds from the keys.
The checks of one (adapter, case), or of one (agent, scenario, protocol) run, that passed
with nothing more to say share one ``passed`` (``agent_passed``) line, first among that
pair's or run's lines: 45,000 of the committed matrix's 52,000 results are such passes.
The reader gives back one row per check, so no consumer sees the grouping, and reads the
first layout of this version (one line per result) as well. Rows are sorted by their keys
in the header's order and carry no running number and no time, so a regeneration with the same verdicts changes the header and footer lines only,
and a new case adds its own lines and nothing else. Last, a ``footer`` with the counts:
without it a report is refused as incomplete, and rows lost or reordered are refused too
(counts that disagree, keys out of order), rather than read as a shorter, greener report.

Version 1 files (a ``seq`` on every line, facts repeated per row) are read through
:mod:`stream_harness.reporting.jsonl_v1` and converted, with one line on stderr saying so.
``specs/report.schema.json`` is generated from the line models here (:func:`write_schema`).
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import shlex
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import Field, TypeAdapter, ValidationError, model_validator
from pydantic_core import to_jsonable_python

from stream_harness.conformance.reproduce import agents_command, case_parts
from stream_harness.reporting import jsonl_v1
from stream_harness.reporting.jsonl_v1 import (
    assemble,
    json_lines,
    one_line,
    with_every_outcome,
)
from stream_harness.reporting.report import (
    AgentRow,
    CaseInfo,
    FailureInfo,
    Report,
    ReportError,
    ReportModel,
    Result,
    sorted_results,
)

FORMAT_VERSION: Final = 2
READ_VERSIONS: Final = (1, 2)
TOOL = "stream-harness"

# The fields that name an agent row (its key) and its verdict: always written.
AGENT_KEY: Final = ("agent", "scenario", "protocol", "check")
# An agent row's facts that are the agent's (the same on all its rows), as (AgentRow field,
# AgentInfo field): stated once in the header. A per-agent fact added to AgentRow goes
# here and into AgentInfo; a per-result detail needs nothing (it is written in the row).
AGENT_FACTS: Final = (
    ("agent_version", "version"),
    ("settings", "settings"),
    ("conventions", "conventions"),
)


class AgentInfo(ReportModel):
    """What one agent row (an agent as configured) is, stated once for all its results."""

    name: str
    version: str = ""
    settings: str = ""
    protocols: tuple[str, ...] = ()
    # The framework's conventions with their sources (specs/agent_conventions.yaml).
    conventions: dict[str, Any] = Field(default_factory=dict)


class AgentCheckInfo(ReportModel):
    id: str
    title: str


class ScenarioInfo(ReportModel):
    id: str
    # The scenario file the reproduce commands name; None when the rows named none.
    file: str | None = None
    faults: tuple[str, ...] = ()
    # An explored scenario's (``<base>~explored``) draws: its rows' commands replay the
    # exploration (``--explore N --seed S``, the seed each row's). Left out when None.
    explore: int | None = None


# Version 1's header, its fields in their places (the schema's order), and every agent
# row's facts once. No docstring: it would be the schema's description of the header.
class HeaderLine(jsonl_v1.HeaderLine):
    version: Literal[2]  # type: ignore[assignment]
    agents: tuple[AgentInfo, ...] = ()
    agent_checks: tuple[AgentCheckInfo, ...] = ()
    scenarios: tuple[ScenarioInfo, ...] = ()


class FailureLine(FailureInfo):
    """A failure as written: a reproduce command that starts with the words every command of
    its case does (:func:`stream_harness.conformance.reproduce.case_parts`, rebuilt from the
    keys and the header's case) is written as the ``options`` after them ("" for none)."""

    options: str | None = None


class ResultLine(Result):
    """A stream result; ``failures`` and ``issue`` are left out when empty."""

    kind: Literal["result"]
    failures: tuple[FailureLine, ...] = ()


class AgentResultLine(AgentRow):
    """An agent result: its key, its outcome, and only the fields the header does not give
    (the schema marks the rest optional; see the module docstring)."""

    kind: Literal["agent_result"]


class PassedLine(ReportModel):
    """The stream checks of one (adapter, case) that passed with nothing more to say, in
    one line: each would be a ``result`` line of its keys and ``passed`` alone."""

    kind: Literal["passed"]
    adapter: str
    case: str
    checks: tuple[str, ...] = Field(min_length=1)


class AgentPassedLine(ReportModel):
    """The agent checks of one (agent, scenario, protocol) run that passed with nothing
    the header does not give, in one line. ``explored`` is an explored run's summary once
    (its seed); ``judged``, each check's count in ``checks`` order, is only read (the
    first layout of this version): the counts are now in the footer."""

    kind: Literal["agent_passed"]
    agent: str
    scenario: str
    protocol: str
    checks: tuple[str, ...] = Field(min_length=1)
    explored: dict[str, Any] | None = None
    judged: tuple[int, ...] | None = None

    @model_validator(mode="after")
    def _one_count_per_check(self) -> AgentPassedLine:
        if self.judged is not None and self.explored is None:
            raise ValueError("judged is given with explored, and only with it")
        if self.judged is not None and len(self.judged) != len(self.checks):
            raise ValueError(f"{len(self.judged)} judged count(s) for {len(self.checks)} check(s)")
        return self


class ExploredCounts(ReportModel):
    """What one explored run (agent, ``<base>~explored``, protocol) counted: schedules run,
    shrink runs, whether the shrink was cut, and per check how many schedules judged and
    failed it. A framework's timing can change them between two runs of the same verdicts,
    so they are in the footer, beside the time, not in the rows (issue 36)."""

    agent: str
    scenario: str
    protocol: str
    schedules: int | None = None
    shrink_runs: int | None = None
    shrink_cut: str | None = None
    judged: dict[str, int] = Field(default_factory=dict)
    failed: dict[str, int] = Field(default_factory=dict)


class FooterLine(jsonl_v1.FooterLine):
    explored: tuple[ExploredCounts, ...] = ()


HEADER: TypeAdapter[HeaderLine] = TypeAdapter(HeaderLine)
PASSED: TypeAdapter[PassedLine] = TypeAdapter(PassedLine)
AGENT_PASSED: TypeAdapter[AgentPassedLine] = TypeAdapter(AgentPassedLine)
FOOTER: TypeAdapter[FooterLine] = TypeAdapter(FooterLine)


def _dumps(obj: Mapping[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _check_order(check: str) -> tuple[Any, ...]:
    """A1, A2, ..., A10: digits compared as numbers, so that A10 follows A9."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", check))


def _most_common(values: Iterable[Any]) -> Any:
    """The value most rows share (ties: the first seen), keyed by its JSON text; an object
    seen before (the rows of one agent share their conventions) is not dumped again."""
    texts: dict[str, Any] = {}
    seen: dict[int, str] = {}
    tally: Counter[str] = Counter()
    for value in values:
        text = seen.get(id(value)) if isinstance(value, dict) else None
        if text is None:
            text = json.dumps(value, sort_keys=True)
            if isinstance(value, dict):
                seen[id(value)] = text
        texts.setdefault(text, value)
        tally[text] += 1
    return texts[tally.most_common(1)[0][0]]


@functools.cache
def _quote(word: str) -> str:
    return shlex.quote(word)


@functools.cache
def _command_ends(
    agent: str, scenarios: str, explore: tuple[int, int] | None
) -> tuple[str, str] | None:
    """What :func:`agents_command` writes before and after the protocol and check for this
    agent, scenario file and exploration, so that 40,000 rows are not each quoted whole
    again; None when its command does not hold them so (it is then asked for each row)."""
    probe = agents_command(
        agent=agent, scenarios=scenarios, protocol="PROTOCOL", check="CHECK", explore=explore
    )
    head, sep, tail = probe.partition(" --protocol PROTOCOL --check CHECK")
    return (head, tail) if sep and "PROTOCOL" not in tail and "CHECK" not in tail else None


def _command(
    agent: str, scenarios: str, protocol: str, check: str, explore: tuple[int, int] | None = None
) -> str:
    """The reproduce command a row without its own is given: :func:`agents_command`'s."""
    ends = _command_ends(agent, scenarios, explore)
    if ends is None:
        return agents_command(
            agent=agent, scenarios=scenarios, protocol=protocol, check=check, explore=explore
        )
    return f"{ends[0]} --protocol {_quote(protocol)} --check {_quote(check)}{ends[1]}"


# A reproduce command's protocol and check: the rest of it is the same on all the rows of
# one agent and scenario, and is parsed once.
_PROTOCOL_CHECK: Final = re.compile(r" --protocol \S+ --check \S+")


def _scenario_arguments(command: str | None) -> tuple[str | None, int | None]:
    """The scenario file and the ``--explore`` draws a reproduce command names."""
    if not command:
        return None, None
    return _scenario_arguments_of(_PROTOCOL_CHECK.sub("", command, count=1))


@functools.lru_cache(maxsize=4096)
def _scenario_arguments_of(command: str) -> tuple[str | None, int | None]:
    try:
        parts = shlex.split(command)
    except ValueError:
        return None, None
    found: dict[str, str] = {}
    for i, part in enumerate(parts[:-1]):
        if part in ("--scenarios", "--explore"):
            found.setdefault(part, parts[i + 1])
    explore = found.get("--explore", "")
    return found.get("--scenarios"), int(explore) if explore.isdigit() else None


def _saved(explored: object) -> str | None:
    """The scenario file an explored row's shrunk failure was saved to, if any: its
    reproduce command replays that file alone."""
    saved = explored.get("saved") if isinstance(explored, dict) else None
    return saved if isinstance(saved, str) else None


def agent_facts(
    rows: Iterable[AgentRow],
) -> tuple[tuple[AgentInfo, ...], tuple[AgentCheckInfo, ...], tuple[ScenarioInfo, ...]]:
    """The header's agents (by name), agent checks (A1, A2, ..., A10) and scenarios (by id):
    each with the value most of its rows share, so a row that differs keeps its own.

    Sorted rather than in run order: ``agents --agent X --out`` over the committed report
    appends X's rows to the others, and in run order every row of X would move."""
    by_agent: dict[str, list[AgentRow]] = {}
    by_check: dict[str, list[str]] = {}
    by_scenario: dict[str, list[AgentRow]] = {}
    for row in rows:
        by_agent.setdefault(row.agent, []).append(row)
        by_check.setdefault(row.check, []).append(row.title)
        by_scenario.setdefault(row.scenario, []).append(row)
    agents = tuple(
        AgentInfo.model_validate(
            {
                "name": name,
                "protocols": sorted({r.protocol for r in rs}),
                **{
                    info: to_jsonable_python(_most_common(getattr(r, field) for r in rs))
                    for field, info in AGENT_FACTS
                },
            }
        )
        for name, rs in sorted(by_agent.items())
    )
    checks = tuple(
        AgentCheckInfo(id=check, title=_most_common(titles))
        for check, titles in sorted(by_check.items(), key=lambda kv: _check_order(kv[0]))
    )
    scenarios = tuple(_scenario_info(scenario, rs) for scenario, rs in sorted(by_scenario.items()))
    return agents, checks, scenarios


def _scenario_info(scenario: str, rows: list[AgentRow]) -> ScenarioInfo:
    """A scenario's file, draws and faults: those most of its rows name. Rows whose
    command replays a saved failure (each its own file) do not vote on the file."""
    voters = [r for r in rows if _saved(r.explored) is None] or rows
    arguments = [_scenario_arguments(r.command) for r in voters]
    return ScenarioInfo(
        id=scenario,
        file=_most_common(file for file, _ in arguments),
        faults=tuple(_most_common(list(r.faults) for r in rows)),
        explore=_most_common(explore for _, explore in arguments),
    )


class _AgentDefaults:
    """What the header says of each agent row's fields, and the order rows are written in."""

    def __init__(self, header: HeaderLine) -> None:
        self.agents = {a.name: a for a in header.agents}
        # Each agent's facts as row fields, made once (40,000 rows are read with them).
        self.facts = {
            a.name: {field: getattr(a, name) for field, name in AGENT_FACTS} for a in header.agents
        }
        self.checks = {c.id: c for c in header.agent_checks}
        self.scenarios = {s.id: s for s in header.scenarios}
        self.agent_place = {a.name: i for i, a in enumerate(header.agents)}
        self.check_place = {c.id: i for i, c in enumerate(header.agent_checks)}
        self.scenario_place = {s.id: i for i, s in enumerate(header.scenarios)}
        # The model's own defaults, as JSON, for the fields the header says nothing of.
        self.plain = {
            name: to_jsonable_python(field.get_default(call_default_factory=True))
            for name, field in AgentRow.model_fields.items()
            if not field.is_required()
        }

    def place(self, row: AgentRow) -> tuple[Any, ...]:
        # Whatever the key holds beyond the four (an explored run's schedule, should it
        # become part of the key) sorts after them, as text.
        return (
            self.agent_place[row.agent],
            self.scenario_place[row.scenario],
            row.protocol,
            self.check_place[row.check],
            *(str(part) for part in row.key[len(AGENT_KEY) :]),
        )

    def given(
        self, agent: str, scenario: str, protocol: str, check: str, where: str, explored: object
    ) -> dict[str, Any]:
        """The fields a row of these keys (and this ``explored`` summary) takes from the
        header. Its reproduce command: an explored failure's, the file it was saved to; an
        explored row's, the exploration's; any other row's, the scenario file's."""
        info = self.agents.get(agent)
        title = self.checks.get(check)
        scene = self.scenarios.get(scenario)
        for kind, name, found in (
            ("agent", agent, info),
            ("agent check", check, title),
            ("scenario", scenario, scene),
        ):
            if found is None:
                raise ReportError(f"{where}: names {kind} {name!r}, which the header does not list")
        assert info is not None and title is not None and scene is not None
        saved = _saved(explored)
        seed = explored.get("seed") if isinstance(explored, dict) else None
        command: str | None = None
        if saved is not None:
            command = _command(agent, saved, protocol, check)
        elif scene.file is not None and scene.explore is not None and type(seed) is int:
            command = _command(agent, scene.file, protocol, check, (scene.explore, seed))
        elif scene.file is not None:
            command = _command(agent, scene.file, protocol, check)
        return {
            **self.facts[agent],
            "title": title.title,
            "faults": list(scene.faults),
            "command": command,
        }


def _agent_line(row: AgentRow, defaults: _AgentDefaults) -> dict[str, Any]:
    # The conventions are compared as objects, not dumped: they are most of a row's bytes,
    # and a row almost always has its agent's.
    dumped = row.model_dump(mode="json", exclude={"conventions"})
    given = defaults.given(
        row.agent, row.scenario, row.protocol, row.check, "agent row", dumped["explored"]
    )
    shared = given.pop("conventions")
    if row.conventions is not shared and row.conventions != shared:
        as_json = to_jsonable_python(row.conventions)  # a tuple in them equals the header's list
        if as_json != shared:
            dumped["conventions"] = as_json
    line: dict[str, Any] = {"kind": "agent_result"}
    line.update((k, dumped[k]) for k in AGENT_KEY)
    line["outcome"] = dumped["outcome"]
    for name, value in dumped.items():
        if name in line:
            continue
        if name in given:
            if value != given[name]:
                line[name] = value
        elif name not in defaults.plain or value != defaults.plain[name]:
            line[name] = value
    return line


def header_of(report: Report) -> HeaderLine:
    agents, agent_checks, scenarios = agent_facts(report.agent_results)
    return HeaderLine(
        kind="header",
        version=FORMAT_VERSION,
        tool=TOOL,
        tool_version=report.tool_version,
        started=report.started,
        seed=report.seed,
        examples=report.examples,
        single_cut_limit=report.single_cut_limit,
        replayed=report.replayed,
        checks=report.checks,
        adapters=report.adapters,
        cases=report.cases,
        skipped=report.skipped,
        environment=report.environment,
        shard=report.shard,
        expectations=report.expectations,
        agents=agents,
        agent_checks=agent_checks,
        scenarios=scenarios,
    )


def in_written_order(report: Report, header: HeaderLine | None = None) -> Report:
    """``report`` with its rows in the order report.jsonl writes them (the header's order
    of adapters, cases, checks; of agents, scenarios, protocols, agent checks), so that
    every file shows them alike however the runs that made them arrived: the matrix's
    groups and jobs finish in any order, and junit.xml listed agent rows as they came.
    ``header``: :func:`header_of` the report when the caller has it (0.6 s on the matrix's)."""
    header = header or header_of(report)
    results = sorted_results(
        report.results,
        [a.name for a in report.adapters],
        [c.id for c in report.cases],
        [c.id for c in report.checks],
    )
    agent_rows = sorted(report.agent_results, key=_AgentDefaults(header).place)
    return report.model_copy(update={"results": tuple(results), "agent_results": tuple(agent_rows)})


def render(report: Report, header: HeaderLine | None = None) -> str:
    header = header or header_of(report)
    # A report without agents (or not sharded) carries no empty agent lists or "shard": null.
    omit = {k for k in ("shard", "agents", "agent_checks", "scenarios") if not getattr(header, k)}
    dumped = header.model_dump(mode="json", exclude=omit)
    for scenario in dumped.get("scenarios", ()):
        if scenario["explore"] is None:  # a scenario that was not explored says nothing of it
            del scenario["explore"]
    lines = [_dumps(dumped)]
    results = sorted_results(
        report.results,
        [a.name for a in report.adapters],
        [c.id for c in report.cases],
        [c.id for c in report.checks],
    )
    lines.extend(_stream_lines(results, {c.id: c for c in report.cases}))
    defaults = _AgentDefaults(header)
    explored: dict[tuple[str, str, str], dict[str, Any]] = {}
    agent_rows = [
        _without_counts(r, explored) for r in sorted(report.agent_results, key=defaults.place)
    ]
    lines.extend(_agent_lines(agent_rows, defaults))
    counts = report.counts
    footer = FooterLine(
        kind="footer", finished=report.finished, counts=counts, did_fail=counts.did_fail,
        explored=tuple(ExploredCounts.model_validate(e) for e in explored.values()),
    )  # fmt: skip
    dumped = footer.model_dump(mode="json", exclude={"explored"})
    if footer.explored:
        dumped["explored"] = [
            e.model_dump(mode="json", exclude_defaults=True) for e in footer.explored
        ]
    lines.append(_dumps(dumped))
    return "\n".join(lines) + "\n"


# What a result line holds when it says nothing but that the check passed.
_PLAIN_RESULT: Final = frozenset({"kind", "adapter", "case", "check", "outcome"})
_PLAIN_AGENT_RESULT: Final = frozenset({"kind", *AGENT_KEY, "outcome"})
# An explored row's counts of its own check; the rest of its summary is its run's.
_EXPLORED_PER_CHECK: Final = ("judged", "failed")
# An explored row's counts of its whole run (the footer's, with the per-check ones).
_EXPLORED_PER_RUN: Final = ("schedules", "shrink_runs", "shrink_cut")


def _without_counts(row: AgentRow, counts: dict[tuple[str, str, str], dict[str, Any]]) -> AgentRow:
    """``row`` with its explored counts moved into ``counts``, its run's footer entry. The
    rows of one run share its counts of the run; a row whose own differ from its run's
    first (never written by an exploration, but a hand-made report may hold one), or that
    has no count of its check, keeps its counts in its line, so that nothing is lost."""
    explored = row.explored
    moved = (*_EXPLORED_PER_RUN, *_EXPLORED_PER_CHECK)
    if explored is None or type(explored.get("judged")) is not int:
        return row
    run: dict[str, Any] = {k: explored[k] for k in _EXPLORED_PER_RUN if k in explored}
    key = (row.agent, row.scenario, row.protocol)
    entry = counts.setdefault(
        key, {"agent": row.agent, "scenario": row.scenario, "protocol": row.protocol, **run}
    )
    if {k: entry[k] for k in _EXPLORED_PER_RUN if k in entry} != run:
        return row
    entry.setdefault("judged", {})[row.check] = explored["judged"]
    failed = explored.get("failed", 0)
    if failed:
        entry.setdefault("failed", {})[row.check] = failed
    return row.model_copy(
        update={"explored": {k: v for k, v in explored.items() if k not in moved}}
    )


def _with_counts(rows: list[AgentRow], counts: Iterable[ExploredCounts]) -> None:
    """The footer's explored counts put back into the rows they were moved from (in place):
    a row whose check the entry counts and whose line kept no count of its own."""
    by_run = {(c.agent, c.scenario, c.protocol): c for c in counts}
    if not by_run:
        return
    moved = (*_EXPLORED_PER_RUN, *_EXPLORED_PER_CHECK)
    for row in rows:
        entry = by_run.get((row.agent, row.scenario, row.protocol))
        if entry is None or row.explored is None or row.check not in entry.judged:
            continue
        if any(k in row.explored for k in moved):
            continue
        for name in _EXPLORED_PER_RUN:
            value = getattr(entry, name)
            if value is not None:
                row.explored[name] = value
        row.explored["judged"] = entry.judged[row.check]
        row.explored["failed"] = entry.failed.get(row.check, 0)


def _stream_lines(results: Iterable[Result], cases: Mapping[str, CaseInfo]) -> Iterator[str]:
    """Per (adapter, case): one ``passed`` line for its checks that passed with nothing to
    say, first, then a ``result`` line for each other check, in check order, each failure's
    command as its options (:class:`FailureLine`)."""
    for (adapter, case), rows in itertools.groupby(results, key=lambda r: (r.adapter, r.case)):
        passed: list[str] = []
        others: list[dict[str, Any]] = []
        for row in rows:
            # kind first, so that a person scanning the file sees it at the left.
            line = {"kind": "result", **row.model_dump(mode="json", exclude_defaults=True)}
            if line.keys() == _PLAIN_RESULT and line["outcome"] == "passed":
                passed.append(row.check)
                continue
            if "failures" in line and row.case in cases:
                head = _case_head(row.adapter, cases[row.case], row.check)
                line["failures"] = [_failure_line(f, head) for f in line["failures"]]
            others.append(line)
        if passed:
            yield _dumps({"kind": "passed", "adapter": adapter, "case": case, "checks": passed})
        yield from (_dumps(line) for line in others)


def _case_head(adapter: str, case: CaseInfo, check: str) -> str:
    """What every ``check`` command of this case and check starts with."""
    parts = case_parts(
        adapter=adapter, cassette=case.cassette, interaction=case.interaction, check=check
    )
    return shlex.join(parts)


def _failure_line(failure: dict[str, Any], head: str) -> dict[str, Any]:
    """A dumped failure with its command written as its options after ``head`` (in the
    command's place), when it starts with it."""
    command = failure.get("command")
    if not isinstance(command, str) or not (command == head or command.startswith(head + " ")):
        return failure
    options = command[len(head) + 1 :]
    return {("options" if k == "command" else k): (options if k == "command" else v)
            for k, v in failure.items()}  # fmt: skip


def _agent_lines(rows: Iterable[AgentRow], defaults: _AgentDefaults) -> Iterator[str]:
    """Per (agent, scenario, protocol) run: one ``agent_passed`` line for its checks that
    passed with nothing the header does not give (an explored run's: sharing the summary of
    its exploration), first, then an ``agent_result`` line for each other check."""
    for (agent, scenario, protocol), unit in itertools.groupby(
        rows, key=lambda r: (r.agent, r.scenario, r.protocol)
    ):
        grouped: dict[str, Any] = {"kind": "agent_passed", "agent": agent}
        grouped.update(scenario=scenario, protocol=protocol, checks=[])
        others: list[dict[str, Any]] = []
        for row in unit:
            line = _agent_line(row, defaults)
            summary = _passed_summary(line)
            if summary is None or (grouped["checks"] and summary[0] != grouped.get("explored")):
                others.append(line)
                continue
            grouped["checks"].append(row.check)
            if summary[0] is not None:
                grouped["explored"] = summary[0]
                if summary[1] is not None:
                    grouped.setdefault("judged", []).append(summary[1])
        if grouped["checks"]:
            yield _dumps(grouped)
        yield from (_dumps(line) for line in others)


def _passed_summary(
    line: Mapping[str, Any],
) -> tuple[dict[str, Any] | None, int | None] | None:
    """For an agent result line its run's ``agent_passed`` line can stand for: its
    exploration's summary without the check's own counts (None: not explored) and how many
    schedules judged the check. None for any other line."""
    if line["outcome"] != "passed":
        return None
    extra = line.keys() - _PLAIN_AGENT_RESULT
    if not extra:
        return None, 0
    explored = line.get("explored")
    if extra != {"explored"} or not isinstance(explored, dict):
        return None
    if not any(k in explored for k in _EXPLORED_PER_CHECK):
        return dict(explored), None  # its counts are in the footer
    judged, failed = (explored.get(k) for k in _EXPLORED_PER_CHECK)
    if type(judged) is not int or type(failed) is not int or failed != 0:
        return None
    return {k: v for k, v in explored.items() if k not in _EXPLORED_PER_CHECK}, judged


def _explored(summary: Mapping[str, Any], judged: int) -> dict[str, Any]:
    """A passed explored row's summary, rebuilt: its run's, with the check's counts after
    ``schedules`` (where the exploration writes them)."""
    out: dict[str, Any] = {}
    for name, value in summary.items():
        out[name] = value
        if name == "schedules":
            out.update(judged=judged, failed=0)
    out.setdefault("judged", judged)
    out.setdefault("failed", 0)
    return out


def _sharing_fields_set(row: AgentRow, first: AgentRow) -> AgentRow:
    """``row`` holding ``first``'s set of the fields given, when equal, instead of its own
    copy: a set per row was 17 MB of the 160 MB peak reading the committed report, over the
    150 MB budget. Frozen models never change the set, so sharing it changes nothing."""
    if row.model_fields_set == first.model_fields_set:
        object.__setattr__(row, "__pydantic_fields_set__", first.model_fields_set)
    return row


class _V2Reader:
    """The rows of a version 2 report, line by line: each line's place checked against the
    previous one's (keys out of order are refused), grouped lines expanded to one row per
    check, and the rows given back in their sorted order."""

    def __init__(self, header: HeaderLine) -> None:
        self.defaults = _AgentDefaults(header)
        self.stream_place = _stream_order(header)
        self.cases = {c.id: c for c in header.cases}
        self.rows: list[tuple[tuple[int, int, int], Result]] = []
        self.agent_rows: list[tuple[tuple[Any, ...], AgentRow]] = []
        self.last_stream: tuple[int, int, int] | None = None
        self.last_agent: tuple[Any, ...] | None = None

    def stream_line(self, place: tuple[int, int, int], where: str) -> None:
        if self.agent_rows:
            raise ReportError(f"{where}: a stream result after the agent results")
        if self.last_stream is not None and place <= self.last_stream:
            raise ReportError(f"{where}: result out of order or repeated (lines reordered?)")
        self.last_stream = place

    def agent_line(self, place: tuple[Any, ...], where: str) -> None:
        if self.last_agent is not None and place <= self.last_agent:
            raise ReportError(f"{where}: agent result out of order or repeated (lines reordered?)")
        self.last_agent = place

    def result(self, obj: dict[str, Any], where: str) -> None:
        del obj["kind"]
        keys = [obj.get(k) for k in ("adapter", "case", "check")]
        if isinstance(obj.get("failures"), list) and all(isinstance(k, str) for k in keys):
            adapter, case, check = (str(k) for k in keys)
            self.stream_place(adapter, case, check, where)  # a case the header lists
            head = _case_head(adapter, self.cases[case], check)
            obj["failures"] = [self.failure(f, head, where) for f in obj["failures"]]
        row = Result.model_validate(obj)
        place = self.stream_place(row.adapter, row.case, row.check, where)
        self.stream_line(place, where)
        self.rows.append((place, row))

    @staticmethod
    def failure(failure: object, head: str, where: str) -> object:
        """A written failure with its command rebuilt from its options."""
        if not isinstance(failure, dict) or "options" not in failure:
            return failure
        options = failure.pop("options")
        if "command" in failure or not isinstance(options, str):
            raise ReportError(f"{where}: a failure's options must be text, without a command")
        failure["command"] = f"{head} {options}" if options else head
        return failure

    def passed(self, obj: dict[str, Any], where: str) -> None:
        line = PASSED.validate_python(obj)
        self.stream_line(self.stream_place(line.adapter, line.case, None, where), where)
        places = [self.stream_place(line.adapter, line.case, c, where) for c in line.checks]
        if places != sorted(set(places)):
            raise ReportError(f"{where}: checks out of order or repeated")
        for place, check in zip(places, line.checks, strict=True):
            row = Result(adapter=line.adapter, case=line.case, check=check, outcome="passed")
            self.rows.append((place, row))

    def agent_result(self, obj: dict[str, Any], where: str) -> None:
        del obj["kind"]
        row = self.agent_row(obj, where)
        place = self.defaults.place(row)
        self.agent_line(place, where)
        self.agent_rows.append((place, row))

    def agent_passed(self, obj: dict[str, Any], where: str) -> None:
        line = AGENT_PASSED.validate_python(obj)
        keys = {"agent": line.agent, "scenario": line.scenario, "protocol": line.protocol}
        rows: list[AgentRow] = []
        for i, check in enumerate(line.checks):
            row_obj: dict[str, Any] = {**keys, "check": check, "outcome": "passed"}
            if line.explored is not None and line.judged is not None:
                row_obj["explored"] = _explored(line.explored, line.judged[i])
            elif line.explored is not None:
                row_obj["explored"] = dict(line.explored)
            if not rows:
                rows.append(self.agent_row(row_obj, where))
                continue
            # The run's other rows differ from its first in their check, its title, their
            # command and explored counts only: copied, not validated again (40,000 rows).
            given = self.defaults.given(
                line.agent, line.scenario, line.protocol, check, where, row_obj.get("explored")
            )
            update = {k: given[k] for k in ("title", "command")}
            rows.append(
                _sharing_fields_set(rows[0].model_copy(update={**update, **row_obj}), rows[0])
            )
        places = [self.defaults.place(row) for row in rows]
        if places != sorted(set(places)):
            raise ReportError(f"{where}: checks out of order or repeated")
        self.agent_line((*places[0][:3], -1), where)
        self.agent_rows.extend(zip(places, rows, strict=True))

    def agent_row(self, obj: dict[str, Any], where: str) -> AgentRow:
        keys = [obj.get(k) for k in AGENT_KEY]
        if not all(isinstance(k, str) for k in keys):
            raise ReportError(f"{where}: an agent result without {', '.join(AGENT_KEY)}")
        agent, scenario, protocol, check = (str(k) for k in keys)
        given = self.defaults.given(agent, scenario, protocol, check, where, obj.get("explored"))
        # A row without its own conventions shares the header's nested values
        # (validating dict[str, Any] copies the top level only).
        return AgentRow.model_validate({**given, **obj})

    def sorted_rows(self) -> tuple[list[Result], list[AgentRow]]:
        # A grouped line's rows are placed among their run's other lines by their keys.
        self.rows.sort(key=lambda pr: pr[0])
        self.agent_rows.sort(key=lambda pr: pr[0])
        return [r for _, r in self.rows], [r for _, r in self.agent_rows]


def _parse_v2(lines: list[str], name: str) -> Report:
    """The version 2 report in ``lines``; ``name`` (a path) prefixes every error."""
    header: HeaderLine | None = None
    footer: FooterLine | None = None
    reader: _V2Reader | None = None
    for where, obj in json_lines(lines, name):
        kind = obj.get("kind") if isinstance(obj, dict) else None
        try:
            if reader is None:
                if kind != "header":
                    raise ReportError(f"{where}: the first line is not a report header")
                header = HEADER.validate_python(obj)
                reader = _V2Reader(header)
            elif kind in ("result", "passed", "agent_result", "agent_passed"):
                getattr(reader, kind)(obj, where)
            elif kind == "header":
                raise ReportError(f"{where}: a second header")
            elif kind == "footer":
                footer = FOOTER.validate_python(with_every_outcome(obj))
            else:
                raise ReportError(f"{where}: not a report line: kind {kind!r}")
        except ValidationError as exc:
            raise ReportError(f"{where}: not a report line: {one_line(exc)}") from None
    rows, agent_rows = reader.sorted_rows() if reader is not None else ([], [])
    if footer is not None:
        _with_counts(agent_rows, footer.explored)
    return assemble(name, header, footer, rows, agent_rows, lost=" (lines lost?)")


def _stream_order(
    header: HeaderLine,
) -> Callable[[str, str, str | None, str], tuple[int, int, int]]:
    """A stream row's place in the header's order (a check of None: before the case's
    checks, where its ``passed`` line goes); a name the header does not list is an error
    naming it (before its place could be judged)."""
    places = (
        ("adapter", {x.name: i for i, x in enumerate(header.adapters)}),
        ("case", {x.id: i for i, x in enumerate(header.cases)}),
        ("check", {x.id: i for i, x in enumerate(header.checks)}),
    )

    def place(adapter: str, case: str, check: str | None, where: str) -> tuple[int, int, int]:
        found = []
        for (kind, index), name in zip(places, (adapter, case, check), strict=True):
            i = -1 if name is None else index.get(name)
            if i is None:
                raise ReportError(
                    f"{where}: result names {kind} {name!r}, which the header does not list"
                )
            found.append(i)
        return (found[0], found[1], found[2])

    return place


def _say(line: str) -> None:
    print(f"stream-harness: {line}", file=sys.stderr)


def load_report(path: Path | str, *, note: Callable[[str], None] = _say) -> Report:
    """Read a ``report.jsonl`` back, version 2 or (converted, ``note`` told) version 1; any
    problem raises :class:`ReportError` in one line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ReportError(f"{path}: not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    return parse(text, str(path), note=note)


def parse(text: str, name: str, *, note: Callable[[str], None] = _say) -> Report:
    """The report in ``text``, of whichever version its header names."""
    lines = text.splitlines()
    first = next((i for i, raw in enumerate(lines) if raw.strip()), None)
    if first is None:
        raise ReportError(f"{name}: empty, no report header")
    try:
        obj = json.loads(lines[first])
    except json.JSONDecodeError as exc:
        raise ReportError(f"{name}:{first + 1}: not JSON: {exc.msg}") from None
    if not isinstance(obj, dict) or obj.get("kind") != "header":
        raise ReportError(f"{name}:{first + 1}: the first line is not a report header")
    version = obj.get("version")
    if version == jsonl_v1.FORMAT_VERSION:
        report = jsonl_v1.parse(lines, name)
        note(
            f"{name}: report format version 1, converted on read (what is written from it is version {FORMAT_VERSION})"
        )
        return report
    if version != FORMAT_VERSION:
        readable = " and ".join(str(v) for v in READ_VERSIONS)
        raise ReportError(
            f"{name}:{first + 1}: report format version {version!r} (this tool reads {readable})"
        )
    return _parse_v2(lines, name)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of one report line (version 2), committed as specs/report.schema.json."""
    adapter: TypeAdapter[
        HeaderLine | ResultLine | PassedLine | AgentResultLine | AgentPassedLine | FooterLine
    ] = TypeAdapter(
        HeaderLine | ResultLine | PassedLine | AgentResultLine | AgentPassedLine | FooterLine
    )
    schema = adapter.json_schema()
    # An agent result holds its keys and outcome; every other field may come from the header.
    schema["$defs"]["AgentResultLine"]["required"] = ["kind", *AGENT_KEY, "outcome"]
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "stream-harness conformance report line (report.jsonl, format version 2)"
    schema["description"] = (
        "Each line of report.jsonl is one JSON object: first a header (version 2) listing what "
        "ran and every agent row's facts once (agents, agent_checks, scenarios), then the stream "
        "rows sorted by (adapter, case, check) in the header's order, then the agent rows "
        "sorted by (agent, scenario, protocol, check) in the header's order (agents by name, "
        "scenarios by id, checks A1, A2, ..., A10), then a footer. The checks of one (adapter, "
        "case) that passed with nothing more to say are one passed line, first among that "
        "pair's lines, the others a result line each; likewise one agent_passed line per "
        "(agent, scenario, protocol) run, first, then an agent_result line per other check. A "
        "result line leaves out every field that equals what the header gives (an agent's "
        "version, settings and conventions, a check's title, a scenario's faults, the reproduce "
        "command rebuilt from the keys, the scenario's file and an explored row's saved file "
        "or exploration) or the field's default. No line carries a sequence "
        "number or a time except the header (started) and footer (finished). A report without "
        "its footer is incomplete. Version 1 (seq on every line, facts repeated per row) is "
        "still read, and converted."
    )
    return schema


def render_schema() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


def write_schema(path: Path | str = "specs/report.schema.json") -> None:
    """Regenerate the committed schema (run from the repository root).

    ``python -c "from stream_harness.reporting.jsonl import write_schema; write_schema()"``; not a
    ``__main__`` block, because the package imports this module and ``-m`` would load it twice.
    """
    Path(path).write_text(render_schema(), encoding="utf-8")
