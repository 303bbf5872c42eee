"""``report.jsonl``: the machine-readable report, one JSON object per line (Bowtie style).

Line 1 is the header (what ran: tool, seed, checks, adapters, cases), then one ``result``
line per (adapter, case, check) numbered by ``seq``, then a ``footer`` with the counts.
A stream of lines rather than one document, so that a long run can be followed while it
writes and an interrupted one is recognisable: without its footer (or with a gap in
``seq``) a report is refused rather than read as a shorter, greener one.
``specs/report.schema.json`` is generated from the line models here
(``python -m stream_harness.reporting.jsonl``).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
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
TOOL = "stream-harness"


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


def _dumps(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def render(report: Report) -> str:
    header = HeaderLine(
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
    )
    # A whole run's header stays as it was before sharding existed (no "shard": null).
    omit = {"shard"} if report.shard is None else set()
    lines = [_dumps(header.model_dump(mode="json", exclude=omit))]
    for seq, row in enumerate(report.results, start=1):
        # kind and seq first, so that a person scanning the file sees them at the left.
        lines.append(_dumps({"kind": "result", "seq": seq, **row.model_dump(mode="json")}))
    first = len(report.results) + 1
    for seq, agent_row in enumerate(report.agent_results, start=first):
        lines.append(
            _dumps({"kind": "agent_result", "seq": seq, **agent_row.model_dump(mode="json")})
        )
    counts = report.counts
    footer = FooterLine(
        kind="footer", finished=report.finished, counts=counts, did_fail=counts.did_fail
    )
    lines.append(_dumps(footer.model_dump(mode="json")))
    return "\n".join(lines) + "\n"


def _one_line(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str(p) for p in first["loc"])
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}" if where else f"{first['msg']}{more}"


def parse(text: str, name: str) -> Report:
    """The report in ``text``; ``name`` (a path) prefixes every error."""
    header: HeaderLine | None = None
    footer: FooterLine | None = None
    rows: list[Result] = []
    agent_rows: list[AgentRow] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{name}:{number}"
        if footer is not None:
            raise ReportError(f"{where}: a line after the footer")
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ReportError(f"{where}: not JSON: {exc.msg}") from None
        if header is None:
            if not isinstance(obj, dict) or obj.get("kind") != "header":
                raise ReportError(f"{where}: the first line is not a report header")
            if obj.get("version") != FORMAT_VERSION:
                raise ReportError(
                    f"{where}: report format version {obj.get('version')!r} (this tool reads {FORMAT_VERSION})"
                )
        try:
            line = LINE_ADAPTER.validate_python(obj)
        except ValidationError as exc:
            raise ReportError(f"{where}: not a report line: {_one_line(exc)}") from None
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
        raise ReportError(f"{name}: inconsistent report: {_one_line(exc)}") from None
    if footer.counts != report.counts or footer.did_fail != report.did_fail:
        raise ReportError(f"{name}: the footer's counts do not match the result lines")
    return report


def load_report(path: Path | str) -> Report:
    """Read a ``report.jsonl`` back; any problem raises :class:`ReportError` in one line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ReportError(f"{path}: not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    return parse(text, str(path))


def json_schema() -> dict[str, Any]:
    """The JSON Schema of one report line, committed as specs/report.schema.json."""
    schema = LINE_ADAPTER.json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "stream-harness conformance report line (report.jsonl)"
    schema["description"] = (
        "Each line of report.jsonl is one JSON object: first a header, then result lines "
        "numbered by seq from 1, then agent_result lines (if any) continuing the numbering, "
        "then a footer. A report without its footer is incomplete."
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
