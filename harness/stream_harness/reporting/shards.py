"""Combining the shards of one run (``--shard K/N``) into the report a single run writes.

Each shard's ``report.jsonl`` lists the whole run in its header (every adapter, case and
check, in run order) and the results of its own (adapter, case) pairs, with
``shard: {index, count, pairs, total_pairs}``. Shards combine only when they describe
the same run: the same harness version, seed, splits, checks, adapters (and their
versions), cases (by bytes and expected events), skipped inputs and N, and when they are
exactly shards 1..N, each once. Anything else is refused in one line naming the shard and
the setting, because a merged report that quietly lacks a shard, or mixes two runs, would
read as a complete, greener one. Agent shards (``stream-harness agents --shard``) combine
the same way, their unit being the (agent, scenario, protocol) run and ``pairs`` counting
those runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from stream_harness.agents.conformance.runner import agent_unit_key
from stream_harness.conformance.shard import shard_of
from stream_harness.reporting.jsonl import load_report
from stream_harness.reporting.report import Report, ReportError, merge_reports

# The settings every shard must share, as (name in messages, how to read it off a report).
_SETTINGS: tuple[tuple[str, str], ...] = (
    ("tool version", "tool_version"),
    ("seed", "seed"),
    ("examples", "examples"),
    ("single-cut limit", "single_cut_limit"),
)


def _describe(value: object) -> str:
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return repr(value)


def _first_difference(
    kind: str, ours: Sequence[BaseModel], theirs: Sequence[BaseModel], key: str
) -> str | None:
    """Where two header lists (checks, adapters, cases, skipped) first differ, in words."""
    names_ours = [str(getattr(m, key)) for m in ours]
    names_theirs = [str(getattr(m, key)) for m in theirs]
    if names_ours != names_theirs:
        only_ours = [n for n in names_ours if n not in names_theirs]
        only_theirs = [n for n in names_theirs if n not in names_ours]
        if only_ours or only_theirs:
            parts = []
            if only_theirs:
                parts.append(f"{len(only_theirs)} {kind}(s) only here, e.g. {only_theirs[0]!r}")
            if only_ours:
                parts.append(f"{len(only_ours)} {kind}(s) only there, e.g. {only_ours[0]!r}")
            return f"{kind}s differ ({'; '.join(parts)})"
        return f"{kind}s are in another order"
    for a, b in zip(ours, theirs, strict=True):
        if a != b:
            fields = [f for f in type(a).model_fields if getattr(a, f) != getattr(b, f)]
            # A cassette's path depends on where the shard ran, not on what it checked.
            fields = [f for f in fields if f != "cassette"]
            if fields:
                f = fields[0]
                return (
                    f"{kind} {getattr(a, key)!r} has {f} {_describe(getattr(b, f))} here and "
                    f"{_describe(getattr(a, f))} there"
                )
    return None


def merge_shards(named: Sequence[tuple[str, Report]]) -> Report:
    """The shards' reports (each with the name it was read from) as the whole run's report.

    Raises :class:`ReportError` with one line naming the shard and what is wrong.
    """
    if not named:
        raise ReportError("cannot merge: no shard reports given")
    for name, report in named:
        if report.shard is None:
            raise ReportError(f"{name}: not a shard's report (written without --shard)")
    first_name, first = named[0]
    assert first.shard is not None
    count = first.shard.count
    by_index: dict[int, str] = {}
    for name, report in named:
        assert report.shard is not None
        if report.shard.count != count:
            raise ReportError(
                f"{name}: shard {report.shard.label}, but {first_name} is shard {first.shard.label}: "
                "the shards of one run have the same N"
            )
        if report.shard.index in by_index:
            raise ReportError(
                f"{by_index[report.shard.index]} and {name} are both shard {report.shard.label}"
            )
        by_index[report.shard.index] = name
    missing = [k for k in range(1, count + 1) if k not in by_index]
    if missing:
        given = ", ".join(str(k) for k in sorted(by_index))
        raise ReportError(
            f"shard(s) {', '.join(f'{k}/{count}' for k in missing)} missing (given: {given}): "
            "a merge of some shards would read as the whole run"
        )
    for name, report in named[1:]:
        problem = _setting_difference(first, report)
        if problem:
            raise ReportError(f"{name}: not a shard of the same run as {first_name}: {problem}")
    pairs = 0
    for name, report in named:
        assert report.shard is not None
        pairs += report.shard.pairs
        for row in report.results:
            home = shard_of(row.adapter, row.case, count)
            if home != report.shard.index:
                raise ReportError(
                    f"{name}: the result for ({row.adapter}, {row.case}, {row.check}) belongs to "
                    f"shard {home}/{count}, not {report.shard.label} (edited, or split another way)"
                )
        for agent_row in report.agent_results:
            home = shard_of(
                *agent_unit_key(agent_row.agent, agent_row.scenario, agent_row.protocol), count
            )
            if home != report.shard.index:
                raise ReportError(
                    f"{name}: the agent result for ({agent_row.agent}, {agent_row.scenario}, "
                    f"{agent_row.protocol}, {agent_row.check}) belongs to shard {home}/{count}, "
                    f"not {report.shard.label} (edited, or split another way)"
                )
    if pairs != first.shard.total_pairs:
        raise ReportError(
            f"the shards ran {pairs} {_unit(first)} between them where the run has "
            f"{first.shard.total_pairs}"
        )
    # In shard order, so that environment values that differ are joined in the same order
    # however the folders were listed.
    reports = {report.shard.index: report for _, report in named if report.shard is not None}
    return merge_reports([reports[k].model_copy(update={"shard": None}) for k in sorted(reports)])


def _unit(report: Report) -> str:
    """What a shard's ``pairs`` count: an agent shard's unit is one agent run."""
    return (
        "(agent, scenario, protocol) runs"
        if report.agent_only or not report.cases
        else "(adapter, case) pairs"
    )


def _setting_difference(ours: Report, theirs: Report) -> str | None:
    for label, attr in _SETTINGS:
        if getattr(ours, attr) != getattr(theirs, attr):
            return f"{label} {getattr(theirs, attr)!r} here, {getattr(ours, attr)!r} there"
    assert ours.shard is not None and theirs.shard is not None
    if ours.shard.total_pairs != theirs.shard.total_pairs:
        return f"the run has {theirs.shard.total_pairs} {_unit(ours)} here, {ours.shard.total_pairs} there"
    for kind, key, a, b in (
        ("check", "id", ours.checks, theirs.checks),
        ("adapter", "name", ours.adapters, theirs.adapters),
        ("case", "id", ours.cases, theirs.cases),
        ("skipped input", "where", ours.skipped, theirs.skipped),
    ):
        problem = _first_difference(kind, a, b, key)
        if problem:
            return problem
    return None


def replaces_whole_report(out: Path) -> str | None:
    """Why a shard must not be written to ``out``: it holds a whole run's report (the
    committed ``conformance_report/``, the default folder), which the shard would replace
    with a part. None when ``out`` is free, holds a shard's report, or an unreadable one
    (which any run replaces)."""
    path = out / "report.jsonl"
    if not path.is_file():
        return None
    try:
        previous = load_report(path)
    except ReportError:
        return None
    if previous.shard is not None:
        return None
    return (
        f"{path} holds a whole run's report, which a shard would replace with a part of it: "
        "write each shard to its own folder (--out shard-K) and `stream-harness merge` them"
    )
