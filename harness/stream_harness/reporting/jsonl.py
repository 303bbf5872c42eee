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
Rows are sorted by their keys in the header's order and carry no running number and no
time, so a regeneration with the same verdicts changes the header and footer lines only,
and a new case adds its own lines and nothing else. Last, a ``footer`` with the counts:
without it a report is refused as incomplete, and rows lost or reordered are refused too
(counts that disagree, keys out of order), rather than read as a shorter, greener report.

Version 1 files (a ``seq`` on every line, facts repeated per row) are read through
:mod:`stream_harness.reporting.jsonl_v1` and converted, with one line on stderr saying so.
``specs/report.schema.json`` is generated from the line models here (:func:`write_schema`).
"""

from __future__ import annotations

import functools
import json
import re
import shlex
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import Field, TypeAdapter, ValidationError
from pydantic_core import to_jsonable_python

from stream_harness.conformance.reproduce import agents_command
from stream_harness.reporting import jsonl_v1
from stream_harness.reporting.jsonl_v1 import (
    FooterLine,
    assemble,
    json_lines,
    one_line,
    with_every_outcome,
)
from stream_harness.reporting.report import (
    AgentRow,
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


# Version 1's header, its fields in their places (the schema's order), and every agent
# row's facts once. No docstring: it would be the schema's description of the header.
class HeaderLine(jsonl_v1.HeaderLine):
    version: Literal[2]  # type: ignore[assignment]
    agents: tuple[AgentInfo, ...] = ()
    agent_checks: tuple[AgentCheckInfo, ...] = ()
    scenarios: tuple[ScenarioInfo, ...] = ()


class ResultLine(Result):
    """A stream result; ``failures`` and ``issue`` are left out when empty."""

    kind: Literal["result"]


class AgentResultLine(AgentRow):
    """An agent result: its key, its outcome, and only the fields the header does not give
    (the schema marks the rest optional; see the module docstring)."""

    kind: Literal["agent_result"]


HEADER: TypeAdapter[HeaderLine] = TypeAdapter(HeaderLine)
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
def _command_head(agent: str, scenarios: str) -> str | None:
    """What :func:`agents_command` writes before the protocol and check for this agent and
    scenario file, so that 15,000 rows are not each quoted whole again; None when its
    command does not end with them (it is then asked for each row)."""
    probe = agents_command(agent=agent, scenarios=scenarios, protocol="PROTOCOL", check="CHECK")
    head, sep, rest = probe.partition(" --protocol PROTOCOL --check CHECK")
    return head if sep and not rest else None


def _command(agent: str, scenarios: str, protocol: str, check: str) -> str:
    """The reproduce command a row without its own is given: :func:`agents_command`'s."""
    head = _command_head(agent, scenarios)
    if head is None:
        return agents_command(agent=agent, scenarios=scenarios, protocol=protocol, check=check)
    return f"{head} --protocol {_quote(protocol)} --check {_quote(check)}"


def _scenario_file(command: str | None) -> str | None:
    if not command:
        return None
    try:
        parts = shlex.split(command)
    except ValueError:
        return None
    for i, part in enumerate(parts[:-1]):
        if part == "--scenarios":
            return parts[i + 1]
    return None


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
    scenarios = tuple(
        ScenarioInfo(
            id=scenario,
            file=_most_common(_scenario_file(r.command) for r in rs),
            faults=tuple(_most_common(list(r.faults) for r in rs)),
        )
        for scenario, rs in sorted(by_scenario.items())
    )
    return agents, checks, scenarios


class _AgentDefaults:
    """What the header says of each agent row's fields, and the order rows are written in."""

    def __init__(self, header: HeaderLine) -> None:
        self.agents = {a.name: a for a in header.agents}
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
        self, agent: str, scenario: str, protocol: str, check: str, where: str
    ) -> dict[str, Any]:
        """The fields a row of these keys takes from the header."""
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
        command = _command(agent, scene.file, protocol, check) if scene.file is not None else None
        return {
            **{field: getattr(info, name) for field, name in AGENT_FACTS},
            "title": title.title,
            "faults": list(scene.faults),
            "command": command,
        }


def _agent_line(row: AgentRow, defaults: _AgentDefaults) -> dict[str, Any]:
    # The conventions are compared as objects, not dumped: they are most of a row's bytes,
    # and a row almost always has its agent's.
    dumped = row.model_dump(mode="json", exclude={"conventions"})
    given = defaults.given(row.agent, row.scenario, row.protocol, row.check, "agent row")
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


def render(report: Report) -> str:
    header = header_of(report)
    # A report without agents (or not sharded) carries no empty agent lists or "shard": null.
    omit = {k for k in ("shard", "agents", "agent_checks", "scenarios") if not getattr(header, k)}
    lines = [_dumps(header.model_dump(mode="json", exclude=omit))]
    results = sorted_results(
        report.results,
        [a.name for a in report.adapters],
        [c.id for c in report.cases],
        [c.id for c in report.checks],
    )
    for row in results:
        # kind first, so that a person scanning the file sees it at the left.
        lines.append(
            _dumps({"kind": "result", **row.model_dump(mode="json", exclude_defaults=True)})
        )
    defaults = _AgentDefaults(header)
    for agent_row in sorted(report.agent_results, key=defaults.place):
        lines.append(_dumps(_agent_line(agent_row, defaults)))
    counts = report.counts
    footer = FooterLine(
        kind="footer", finished=report.finished, counts=counts, did_fail=counts.did_fail
    )
    lines.append(_dumps(footer.model_dump(mode="json")))
    return "\n".join(lines) + "\n"


def _parse_v2(lines: list[str], name: str) -> Report:
    """The version 2 report in ``lines``; ``name`` (a path) prefixes every error."""
    header: HeaderLine | None = None
    footer: FooterLine | None = None
    defaults: _AgentDefaults | None = None
    rows: list[Result] = []
    agent_rows: list[AgentRow] = []
    stream_place: Callable[[Result, str], tuple[int, int, int]] | None = None
    last_stream: tuple[int, int, int] | None = None
    last_agent: tuple[Any, ...] | None = None
    for where, obj in json_lines(lines, name):
        kind = obj.get("kind") if isinstance(obj, dict) else None
        try:
            if header is None or defaults is None or stream_place is None:
                if kind != "header":
                    raise ReportError(f"{where}: the first line is not a report header")
                header = HEADER.validate_python(obj)
                defaults = _AgentDefaults(header)
                stream_place = _stream_order(header)
            elif kind == "result":
                del obj["kind"]
                row = Result.model_validate(obj)
                place = stream_place(row, where)
                if agent_rows:
                    raise ReportError(f"{where}: a stream result after the agent results")
                if last_stream is not None and place <= last_stream:
                    raise ReportError(
                        f"{where}: result out of order or repeated (lines reordered?)"
                    )
                last_stream = place
                rows.append(row)
            elif kind == "agent_result":
                del obj["kind"]
                keys = [obj.get(k) for k in AGENT_KEY]
                if not all(isinstance(k, str) for k in keys):
                    raise ReportError(f"{where}: an agent result without {', '.join(AGENT_KEY)}")
                agent, scenario, protocol, check = (str(k) for k in keys)
                given = defaults.given(agent, scenario, protocol, check, where)
                # A row without its own conventions shares the header's nested values
                # (validating dict[str, Any] copies the top level only).
                agent_row = AgentRow.model_validate({**given, **obj})
                agent_place = defaults.place(agent_row)
                if last_agent is not None and agent_place <= last_agent:
                    raise ReportError(
                        f"{where}: agent result out of order or repeated (lines reordered?)"
                    )
                last_agent = agent_place
                agent_rows.append(agent_row)
            elif kind == "header":
                raise ReportError(f"{where}: a second header")
            elif kind == "footer":
                footer = FOOTER.validate_python(with_every_outcome(obj))
            else:
                raise ReportError(f"{where}: not a report line: kind {kind!r}")
        except ValidationError as exc:
            raise ReportError(f"{where}: not a report line: {one_line(exc)}") from None
    return assemble(name, header, footer, rows, agent_rows, lost=" (lines lost?)")


def _stream_order(header: HeaderLine) -> Callable[[Result, str], tuple[int, int, int]]:
    """A stream row's place in the header's order; a name the header does not list is an
    error naming it (before its place could be judged)."""
    places = (
        ("adapter", {x.name: i for i, x in enumerate(header.adapters)}),
        ("case", {x.id: i for i, x in enumerate(header.cases)}),
        ("check", {x.id: i for i, x in enumerate(header.checks)}),
    )

    def place(row: Result, where: str) -> tuple[int, int, int]:
        found = []
        for (kind, index), name in zip(places, (row.adapter, row.case, row.check), strict=True):
            i = index.get(name)
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
    adapter: TypeAdapter[HeaderLine | ResultLine | AgentResultLine | FooterLine] = TypeAdapter(
        HeaderLine | ResultLine | AgentResultLine | FooterLine
    )
    schema = adapter.json_schema()
    # An agent result holds its keys and outcome; every other field may come from the header.
    schema["$defs"]["AgentResultLine"]["required"] = ["kind", *AGENT_KEY, "outcome"]
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "stream-harness conformance report line (report.jsonl, format version 2)"
    schema["description"] = (
        "Each line of report.jsonl is one JSON object: first a header (version 2) listing what "
        "ran and every agent row's facts once (agents, agent_checks, scenarios), then result "
        "lines sorted by (adapter, case, check) in the header's order, then agent_result lines "
        "sorted by (agent, scenario, protocol, check) in the header's order (agents by name, "
        "scenarios by id, checks A1, A2, ..., A10), then a footer. A "
        "result line leaves out every field that equals what the header gives (an agent's "
        "version, settings and conventions, a check's title, a scenario's faults, the reproduce "
        "command rebuilt from the keys) or the field's default. No line carries a sequence "
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
