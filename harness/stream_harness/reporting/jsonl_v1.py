"""Reading ``report.jsonl`` format version 1, converted on read to the one report model.

Version 1 (written before issue 36) numbered every line by ``seq`` and repeated each
agent row's facts (version, settings, conventions, check title, reproduce command) on
every result; version 2 (:mod:`stream_harness.reporting.jsonl`) states them once. Old
committed reports and shards must still ``merge`` and be kept by ``report``, so this
module keeps the version 1 line models and reader, and nothing writes version 1 any more.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError

from stream_harness.reporting.report import (
    AdapterInfo,
    AgentRow,
    CaseInfo,
    CheckInfo,
    Counts,
    Report,
    ReportError,
    ReportModel,
    Result,
    ShardInfo,
    SkippedInfo,
)

FORMAT_VERSION = 1


class HeaderLine(ReportModel):
    kind: Literal["header"]
    version: Literal[1]
    tool: Literal["stream-harness"]
    tool_version: str
    started: datetime
    seed: int
    examples: int
    single_cut_limit: int = 1024  # absent from reports written before it was a setting
    replayed: str | None = None  # a reproduce run's one split or truncation
    checks: tuple[CheckInfo, ...]
    adapters: tuple[AdapterInfo, ...]
    cases: tuple[CaseInfo, ...]
    skipped: tuple[SkippedInfo, ...] = ()
    environment: dict[str, str] = Field(default_factory=dict)
    shard: ShardInfo | None = None  # absent in a whole run's report
    # Where known failures were looked up, as the user knows the folders (Report.expectations).
    expectations: tuple[str, ...] = ()


class ResultLine(Result):
    kind: Literal["result"]
    seq: int = Field(ge=1)


class AgentResultLine(AgentRow):
    """An agent row (specs/agent-contract.md), after the stream results, ``seq`` continuing."""

    kind: Literal["agent_result"]
    seq: int = Field(ge=1)


class FooterLine(ReportModel):
    kind: Literal["footer"]
    finished: datetime
    counts: Counts
    did_fail: bool


Line = Annotated[
    HeaderLine | ResultLine | AgentResultLine | FooterLine, Field(discriminator="kind")
]
LINE_ADAPTER: TypeAdapter[HeaderLine | ResultLine | AgentResultLine | FooterLine] = TypeAdapter(
    Line
)


def with_every_outcome(footer: dict[str, Any]) -> dict[str, Any]:
    """The footer with a zero count for each outcome it does not name: a report written
    before an outcome existed (``timeout``, ``crashed``) had none of it."""
    counts = footer.get("counts")
    if not isinstance(counts, dict):
        return footer
    return {**footer, "counts": {**dict.fromkeys(Counts.model_fields, 0), **counts}}


def one_line(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str(p) for p in first["loc"])
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}" if where else f"{first['msg']}{more}"


def json_lines(lines: list[str], name: str) -> Iterator[tuple[str, Any]]:
    """Each non-blank line's place (``name:number``) and JSON value, in either format; a
    line that is not JSON, or any line after the footer, is a ReportError."""
    ended = False
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = f"{name}:{number}"
        if ended:
            raise ReportError(f"{where}: a line after the footer")
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ReportError(f"{where}: not JSON: {exc.msg}") from None
        yield where, obj
        # Read on only if the caller took it (a footer it refused has raised).
        ended = isinstance(obj, dict) and obj.get("kind") == "footer"


def parse(lines: list[str], name: str) -> Report:
    """The version 1 report in ``lines``; ``name`` (a path) prefixes every error."""
    header: HeaderLine | None = None
    footer: FooterLine | None = None
    rows: list[Result] = []
    agent_rows: list[AgentRow] = []
    for where, obj in json_lines(lines, name):
        if header is None:
            if not isinstance(obj, dict) or obj.get("kind") != "header":
                raise ReportError(f"{where}: the first line is not a report header")
            if obj.get("version") != FORMAT_VERSION:
                raise ReportError(
                    f"{where}: report format version {obj.get('version')!r} (this tool reads {FORMAT_VERSION})"
                )
        if isinstance(obj, dict) and obj.get("kind") == "footer":
            obj = with_every_outcome(obj)
        try:
            line = LINE_ADAPTER.validate_python(obj)
        except ValidationError as exc:
            raise ReportError(f"{where}: not a report line: {one_line(exc)}") from None
        if isinstance(line, HeaderLine):
            if header is not None:
                raise ReportError(f"{where}: a second header")
            header = line
        elif isinstance(line, AgentResultLine):
            if line.seq != len(rows) + len(agent_rows) + 1:
                raise ReportError(
                    f"{where}: result seq {line.seq} where {len(rows) + len(agent_rows) + 1} was expected (lines lost or reordered)"
                )
            agent_rows.append(AgentRow(**line.model_dump(exclude={"kind", "seq"})))
        elif isinstance(line, ResultLine):
            if agent_rows:
                raise ReportError(f"{where}: a stream result after the agent results")
            if line.seq != len(rows) + 1:
                raise ReportError(
                    f"{where}: result seq {line.seq} where {len(rows) + 1} was expected (lines lost or reordered)"
                )
            rows.append(Result(**line.model_dump(exclude={"kind", "seq"})))
        else:
            footer = line
    return assemble(name, header, footer, rows, agent_rows, lost="")


def assemble(
    name: str,
    header: Any,
    footer: Any,
    rows: list[Result],
    agent_rows: list[AgentRow],
    *,
    lost: str,
) -> Report:
    """The report a file's header, rows and footer make, in either format (the header's run
    facts have the same names in both); ``lost`` is what the footer mismatch adds."""
    if header is None:
        raise ReportError(f"{name}: empty, no report header")
    if footer is None:
        raise ReportError(
            f"{name}: no footer line, the report is incomplete (was the run interrupted?)"
        )
    try:
        report = Report(
            tool_version=header.tool_version,
            started=header.started,
            finished=footer.finished,
            seed=header.seed,
            examples=header.examples,
            single_cut_limit=header.single_cut_limit,
            replayed=header.replayed,
            checks=header.checks,
            adapters=header.adapters,
            cases=header.cases,
            skipped=header.skipped,
            environment=header.environment,
            expectations=header.expectations,
            results=tuple(rows),
            shard=header.shard,
            agent_results=tuple(agent_rows),
        )
    except ValidationError as exc:
        raise ReportError(f"{name}: inconsistent report: {one_line(exc)}") from None
    if footer.counts != report.counts or footer.did_fail != report.did_fail:
        raise ReportError(f"{name}: the footer's counts do not match the result lines{lost}")
    return report
