"""The conformance report as data: built from a run, merged across runs, written to disk.

The model is separate from the engine's objects (adapters, cases with their bodies,
checks with their functions) so that a report read back from ``report.jsonl`` is the same
object a run builds: reports from several environments (one per third-party library)
can then be merged into one matrix without re-running anything. The renderers
(``jsonl``, ``markdown``, ``html``, ``junit``) only read this model.

Ordering is part of the model: adapters in run order, cases in load order, checks in
catalogue order, and results sorted by those three, so that the same input always gives
the same bytes and committed reports diff cleanly.
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from stream_harness.conformance.expectations import BUNDLED_EXPECTATIONS, Expectations, outcome_for

# The outcome vocabulary lives in conformance/outcomes.py; renderers import it from here.
from stream_harness.conformance.outcomes import FAILING as FAILING
from stream_harness.conformance.outcomes import OUTCOMES as OUTCOMES
from stream_harness.conformance.outcomes import Outcome as Outcome
from stream_harness.conformance.outcomes import fault_outcome
from stream_harness.contract import facts
from stream_harness.recordings.inputs import display_path
from stream_harness.reporting.runs import ResultRead, RunRead, SettingsRead

if TYPE_CHECKING:
    from stream_harness.conformance.cases import Case, Skipped
    from stream_harness.conformance.shard import Shard

Level: TypeAlias = Literal["event", "message"]

# What each outcome means, for the guide at the top of README.md and report.html; the
# known-failure line names the run's own expectation folders (outcome_meanings).
OUTCOME_MEANING: dict[Outcome, str] = {
    "passed": "the check found nothing wrong",
    "failed": "a new failure: the check found a violation that is not listed as known (CI fails)",
    "timeout": "the adapter did not return within the run timeout (--run-timeout): its failure, not listed as known (CI fails)",
    "crashed": "the adapter crashed (raised out of its own code, its process died, or it broke the protocol): its failure, not listed as known (CI fails)",
    "errored": "the check itself raised: a harness bug, not the adapter's (CI fails)",
    "known_failure": "failed, and the adapter's expectation file lists it with an upstream issue (CI passes)",
    "fixed": "listed as a known failure, but passed: time to drop the expectation entry",
}


def outcome_meanings(report: Report) -> dict[Outcome, str]:
    """:data:`OUTCOME_MEANING` with the known-failure line naming where this run's known
    failures were listed (:attr:`Report.expectations`): the user's folder, not a path
    inside the installed package."""
    if not report.expectations:
        return dict(OUTCOME_MEANING)
    where = [p if p == BUNDLED_EXPECTATIONS else f"{p}/<adapter>.yaml" for p in report.expectations]
    known = (
        "failed, and an expectation file lists it with an upstream issue (CI passes): "
        + ", else ".join(where)
    )
    return {**OUTCOME_MEANING, "known_failure": known}


class ReportError(ValueError):
    """A report that cannot be read or merged; the message is one line naming the culprit."""


class ReportModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CheckInfo(ReportModel):
    id: str
    title: str
    enforces: str
    level: Level


class AdapterInfo(ReportModel):
    name: str
    level: Level
    version: str
    protocols: tuple[str, ...]


class CaseInfo(ReportModel):
    id: str
    cassette: str
    interaction: int
    protocol: str
    status: int
    sha256: str
    # Anomalies the reference recovered from on this body (stream_harness.providers.reference warnings).
    warnings: tuple[str, ...] = ()
    # sha256 of the expected events the checks compared against (the reviewed golden, or
    # the reference's events): rows kept from an earlier run are stale once it changes.
    # None in reports written before it was recorded.
    expected_sha256: str | None = None


class SkippedInfo(ReportModel):
    where: str
    reason: str


class FailureInfo(ReportModel):
    message: str
    split: str | None = None
    command: str | None = None
    expected: str | None = None  # JSON text, in full
    observed: str | None = None  # JSON text, in full
    path: str | None = None  # where expected and observed first differ
    # A stdio adapter's stray stdout while running the case (bounded; absent when none).
    stdout_noise: str | None = None

    def fields(self) -> list[tuple[str, str]]:
        """The parts a reader follows after the message, labelled, in the order every
        report form shows them; the ones this failure lacks are left out."""
        optional = [
            ("split", self.split),
            ("reproduce", self.command),
            ("first difference at", self.path),
            ("stdout besides the protocol", self.stdout_noise),
        ]
        shown = [(label, value) for label, value in optional if value]
        values = [("expected", self.expected), ("observed", self.observed)]
        return shown + [(label, value) for label, value in values if value is not None]


class ShardInfo(ReportModel):
    """Which part of a sharded run a report holds (``--shard K/N``); absent in a whole run.

    ``pairs`` counts the (adapter, case) pairs this shard ran, ``total_pairs`` the run's,
    so that ``stream-harness merge`` can tell that its shards add up to the whole.
    """

    index: int = Field(ge=1)
    count: int = Field(ge=1)
    pairs: int = Field(ge=0)
    total_pairs: int = Field(ge=0)

    @model_validator(mode="after")
    def _within(self) -> ShardInfo:
        if self.index > self.count:
            raise ValueError(f"shard {self.index}/{self.count}: K is more than N")
        if self.pairs > self.total_pairs:
            raise ValueError(
                f"shard {self.index}/{self.count}: more pairs ({self.pairs}) than the run has ({self.total_pairs})"
            )
        return self

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


class Result(ReportModel):
    adapter: str
    case: str
    check: str
    outcome: Outcome
    failures: tuple[FailureInfo, ...] = ()
    issue: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.adapter, self.case, self.check)


class AgentRow(ReportModel):
    """One (agent, scenario, protocol, check) verdict of the agent contract
    (specs/agent-contract.md), beside the stream rows. Checks that do not apply are not
    rows, as for the stream checks."""

    agent: str
    agent_version: str = ""
    scenario: str
    protocol: str
    check: str
    title: str
    outcome: Outcome
    message: str = ""
    advice: str = ""  # a failure's one line on what to change in the agent
    command: str | None = None
    faults: tuple[str, ...] = ()
    conventions: dict[str, Any] = Field(default_factory=dict)
    settings: str = ""
    issue: str | None = None
    # An explored row (``agents --explore``): schedules drawn, judged, failed, the seed,
    # the shrunk failing schedule and the scenario file saved for it.
    explored: dict[str, Any] | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.agent, self.scenario, self.protocol, self.check)


def kept_agent_rows(previous: Iterable[AgentRow], new: Iterable[AgentRow]) -> tuple[AgentRow, ...]:
    """The rows of an earlier report a new agent run leaves in place: those of the agents
    it did not run, and those of the other kind of run of an agent it did (an exploration,
    ``agents --explore``, replaces that agent's explored rows and keeps its rows of the
    scenarios as written, and the other way round), so one report carries both."""
    ran = {(a.agent, a.explored is not None) for a in new}
    return tuple(a for a in previous if (a.agent, a.explored is not None) not in ran)


class Counts(ReportModel):
    passed: int = Field(ge=0)
    failed: int = Field(ge=0)
    errored: int = Field(ge=0)
    known_failure: int = Field(ge=0)
    fixed: int = Field(ge=0)
    timeout: int = Field(default=0, ge=0)
    crashed: int = Field(default=0, ge=0)

    @classmethod
    def of(cls, results: Iterable[Result | AgentRow]) -> Counts:
        tally = dict.fromkeys(OUTCOMES, 0)
        for r in results:
            tally[r.outcome] += 1
        return cls(**tally)

    @property
    def total(self) -> int:
        return sum(getattr(self, o) for o in OUTCOMES)

    @property
    def did_fail(self) -> bool:
        """CI's verdict: known failures and fixes do not break the build (specs/checks.md)."""
        return self.failing > 0

    @property
    def failing(self) -> int:
        return sum(getattr(self, o) for o in FAILING)


class Report(ReportModel):
    tool_version: str
    started: datetime
    finished: datetime
    seed: int
    examples: int
    checks: tuple[CheckInfo, ...]
    adapters: tuple[AdapterInfo, ...]
    cases: tuple[CaseInfo, ...]
    skipped: tuple[SkippedInfo, ...] = ()
    environment: dict[str, str] = Field(default_factory=dict)
    results: tuple[Result, ...] = ()
    # Reports written before the limit was a setting swept bodies up to 1 KB.
    single_cut_limit: int = 1024
    shard: ShardInfo | None = None  # one shard of a sharded run; None: the whole run
    # What a reproduce run replayed instead of drawing splits (RunConfig.replayed).
    replayed: str | None = None
    # Where the known failures were looked up, in order, as the user knows them: the
    # project's expectations folder relative to its root, then the bundled ones (their
    # path in a checkout, BUNDLED_EXPECTATIONS when installed). Empty in older reports.
    expectations: tuple[str, ...] = ()
    # Agent rows (stream-harness agents --out), in run order; none in a stream-only report.
    agent_results: tuple[AgentRow, ...] = ()

    @model_validator(mode="after")
    def _results_name_known_things(self) -> Report:
        # A row naming an adapter, case or check the header does not list cannot be placed
        # in the matrix; a duplicate row would be counted twice. Both mean a broken report.
        for kind, names in (
            ("check", [c.id for c in self.checks]),
            ("adapter", [a.name for a in self.adapters]),
            ("case", [c.id for c in self.cases]),
        ):
            dup = _first_duplicate(names)
            if dup is not None:
                raise ValueError(f"{kind} {dup!r} is listed twice")
        checks = {c.id for c in self.checks}
        adapters = {a.name for a in self.adapters}
        cases = {c.id for c in self.cases}
        seen: set[tuple[str, str, str]] = set()
        for r in self.results:
            if r.adapter not in adapters:
                raise ValueError(
                    f"result names adapter {r.adapter!r}, which the report does not list"
                )
            if r.check not in checks:
                raise ValueError(f"result names check {r.check!r}, which the report does not list")
            if r.case not in cases:
                raise ValueError(f"result names case {r.case!r}, which the report does not list")
            if r.key in seen:
                raise ValueError(
                    f"two results for adapter {r.adapter!r}, case {r.case!r}, check {r.check!r}"
                )
            seen.add(r.key)
        agent_keys = [a.key for a in self.agent_results]
        if len(set(agent_keys)) != len(agent_keys):
            twice = next(k for i, k in enumerate(agent_keys) if k in agent_keys[:i])
            raise ValueError(f"two agent results for {twice}")
        return self

    @property
    def counts(self) -> Counts:
        return Counts.of([*self.results, *self.agent_results])

    @property
    def did_fail(self) -> bool:
        return self.counts.did_fail

    @property
    def verdict(self) -> str:
        """The one verdict every renderer prints, and the exit status follows (1 iff FAILED)."""
        c = self.counts
        faults = "".join(
            f", {n} {label}" for n, label in ((c.timeout, "timed out"), (c.crashed, "crashed")) if n
        )
        head = (
            f"FAILED: {c.failed} new failure(s){faults}, {c.errored} errored"
            if c.did_fail
            else "passed"
        )
        return (
            f"{head} ({c.total} results: {c.passed} passed, {c.known_failure} known failures, "
            f"{c.fixed} fixed)"
        )

    @property
    def agent_only(self) -> bool:
        """A report of agent rows alone (``agents --out``, their shards merged): its
        header's stream settings (seed, splits, single-cut limit) describe no run."""
        return (
            bool(self.agent_results) and not self.cases and not self.adapters and not self.results
        )

    @property
    def scope(self) -> str:
        """How much was checked: a verdict means nothing without it."""
        cassettes = len({c.cassette for c in self.cases})
        agents = ""
        if self.agent_results:
            runs = {(a.agent, a.scenario, a.protocol) for a in self.agent_results}
            names = {a.agent for a in self.agent_results}
            scenarios = {a.scenario for a in self.agent_results}
            agents = (
                f"{len(runs)} agent run(s) of {len(names)} agent(s) on {len(scenarios)} scenario(s)"
            )
        if self.agent_only:
            return agents + (
                f"; shard {self.shard.label}: {self.shard.pairs} of the run's "
                f"{self.shard.total_pairs} (agent, scenario, protocol) runs (`stream-harness merge` combines the shards)"
                if self.shard is not None
                else ""
            )
        agents = f"; {agents}" if agents else ""
        return (
            f"{cassettes} cassette(s), {len(self.cases)} case(s), {len(self.checks)} check(s), "
            f"{len(self.adapters)} adapter(s), "
            + (
                self.replayed
                or f"{self.examples} random split(s) per split-sensitive check, every single cut of "
                f"bodies up to {self.single_cut_limit} bytes, seed {self.seed}"
            )
            + agents
            + (
                f"; shard {self.shard.label}: {self.shard.pairs} of the run's "
                f"{self.shard.total_pairs} (adapter, case) pairs (`stream-harness merge` combines the shards)"
                if self.shard is not None
                else ""
            )
        )


def _first_duplicate(names: Iterable[str]) -> str | None:
    seen: set[str] = set()
    for n in names:
        if n in seen:
            return n
        seen.add(n)
    return None


def sorted_results(
    results: Iterable[Result], adapters: Sequence[str], cases: Sequence[str], checks: Sequence[str]
) -> tuple[Result, ...]:
    a = {name: i for i, name in enumerate(adapters)}
    k = {name: i for i, name in enumerate(cases)}
    c = {name: i for i, name in enumerate(checks)}
    big = len(a) + len(k) + len(c)  # unknown names sort last; the validator then names them
    return tuple(
        sorted(
            results,
            key=lambda r: (
                a.get(r.adapter, big),
                r.adapter,
                k.get(r.case, big),
                r.case,
                c.get(r.check, big),
                r.check,
            ),
        )
    )


def _utc(moment: datetime) -> datetime:
    """Whole seconds in UTC: sub-second noise only makes committed reports differ more."""
    if moment.tzinfo is None:  # the engine's callers pass UTC; a naive time is taken as UTC
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(microsecond=0)


def timestamp(moment: datetime) -> str:
    """How the human-facing renderers print a time: to the second, in UTC."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def default_environment() -> dict[str, str]:
    return {"python": platform.python_version(), "platform": platform.platform()}


def build_report(
    runs: Sequence[RunRead],
    cases: Sequence[Case],
    skipped: Sequence[Skipped],
    config: SettingsRead,
    *,
    started: datetime,
    finished: datetime,
    environment: Mapping[str, str] | None = None,
    expectations: Sequence[str] = (),
) -> Report:
    """The report of one run: what ran, on what, with which parameters, and every result.

    ``expectations``: where the run looked its known failures up, as shown to the user
    (:func:`stream_harness.conformance.suite.expectation_folders_shown`)."""
    checks = tuple(
        CheckInfo(id=c.id, title=c.title, enforces=c.enforces, level=c.level) for c in config.checks
    )
    adapters = tuple(
        AdapterInfo(
            name=run.adapter.name,
            level=run.adapter.level,
            version=run.version,
            protocols=tuple(sorted(run.adapter.protocols)),
        )
        for run in runs
    )
    case_infos = tuple(_case_info(c) for c in cases)
    results = [_result(r) for run in runs for r in run.results]
    env = dict(environment) if environment is not None else default_environment()
    shard = _shard_info(runs, cases, config.shard) if config.shard is not None else None
    return Report(
        tool_version=facts.version(),
        started=_utc(started),
        finished=_utc(finished),
        seed=config.seed,
        examples=config.examples,
        single_cut_limit=config.single_cut_limit,
        replayed=config.replayed(),
        checks=checks,
        adapters=adapters,
        cases=case_infos,
        skipped=tuple(SkippedInfo(where=s.where, reason=s.reason) for s in skipped),
        environment=dict(sorted(env.items())),
        expectations=tuple(expectations),
        results=sorted_results(
            results, [a.name for a in adapters], [c.id for c in case_infos], [c.id for c in checks]
        ),
        shard=shard,
    )


def _case_info(c: Case) -> CaseInfo:
    return CaseInfo(
        id=c.id,
        # relative to the repository or working directory: a committed report must
        # not depend on where it was generated
        cassette=display_path(c.cassette),
        interaction=c.interaction,
        protocol=c.protocol,
        status=c.status,
        sha256=c.sha256,
        warnings=tuple(c.warnings()),
        expected_sha256=c.expected_sha256(),
    )


def _result(r: ResultRead) -> Result:
    return Result(
        adapter=r.adapter,
        case=r.case,
        check=r.check,
        outcome=r.outcome,
        failures=tuple(
            FailureInfo(
                message=f.message,
                split=f.split,
                command=f.command,
                expected=f.expected,
                observed=f.observed,
                path=f.path,
                stdout_noise=f.stdout_noise,
            )
            for f in r.failures
        ),
        issue=r.issue,
    )


def _shard_info(runs: Sequence[RunRead], cases: Sequence[Case], shard: Shard) -> ShardInfo:
    """How many of the run's (adapter, case) pairs this shard holds, of how many."""
    pairs = [
        (run.adapter.name, c.id)
        for run in runs
        for c in cases
        if c.protocol in run.adapter.protocols
    ]
    return ShardInfo(
        index=shard.index,
        count=shard.count,
        pairs=sum(1 for a, c in pairs if shard.owns(a, c)),
        total_pairs=len(pairs),
    )


# ---------------------------------------------------------------------------
# Merging reports from several environments
# ---------------------------------------------------------------------------

M = TypeVar("M", bound=ReportModel)


def _union(kind: str, items: Iterable[tuple[str, M]], same: Iterable[str]) -> list[M]:
    """Items by name in order of first appearance; a name seen with different ``same`` fields is an error."""
    fields = tuple(same)
    out: dict[str, M] = {}
    for name, item in items:
        prior = out.get(name)
        if prior is None:
            out[name] = item
            continue
        for f in fields:
            if getattr(prior, f) != getattr(item, f):
                raise ReportError(
                    f"cannot merge: {kind} {name!r} has {f} {getattr(prior, f)!r} in one report and {getattr(item, f)!r} in another"
                )
    return list(out.values())


def merge_reports(reports: Sequence[Report]) -> Report:
    """Adapters from several runs side by side over the same cases.

    The runs must agree on what makes results comparable: the harness version, the seed
    and example count, each check's definition, each case's bytes (by sha256; the
    cassette path may differ between machines), and each adapter's version. Identical
    duplicate rows (the same report merged twice) collapse; conflicting ones raise.
    Environments that differ keep every value, joined with `` | ``.
    """
    if not reports:
        raise ReportError("cannot merge: no reports given")
    for attr in ("tool_version", "seed", "examples", "single_cut_limit"):
        values = sorted({str(getattr(r, attr)) for r in reports})
        if len(values) > 1:
            raise ReportError(f"cannot merge: reports differ in {attr} ({', '.join(values)})")
    shard = _same_shard(reports)
    checks = _union(
        "check", ((c.id, c) for r in reports for c in r.checks), ("title", "enforces", "level")
    )
    adapters = _union(
        "adapter",
        ((a.name, a) for r in reports for a in r.adapters),
        ("level", "version", "protocols"),
    )
    cases = _union(
        "case",
        ((c.id, c) for r in reports for c in r.cases),
        ("protocol", "status", "sha256", "expected_sha256"),
    )
    skipped = list(dict.fromkeys(s for r in reports for s in r.skipped))
    rows = _merged_results(reports)
    agent_rows = _merged_agent_rows(reports)
    environment = _merged_environment(reports)
    return Report(
        tool_version=reports[0].tool_version,
        started=min(r.started for r in reports),
        finished=max(r.finished for r in reports),
        seed=reports[0].seed,
        examples=reports[0].examples,
        single_cut_limit=reports[0].single_cut_limit,
        checks=tuple(checks),
        adapters=tuple(adapters),
        cases=tuple(cases),
        skipped=tuple(skipped),
        environment={k: " | ".join(v) for k, v in sorted(environment.items())},
        expectations=tuple(dict.fromkeys(e for r in reports for e in r.expectations)),
        results=sorted_results(
            rows.values(),
            [a.name for r in reports for a in r.adapters],
            [c.id for r in reports for c in r.cases],
            [c.id for r in reports for c in r.checks],
        ),
        agent_results=tuple(agent_rows.values()),
        shard=shard,
    )


def _merged_results(reports: Sequence[Report]) -> dict[tuple[str, str, str], Result]:
    """Every report's stream results by key; an identical duplicate collapses, a conflict raises."""
    rows: dict[tuple[str, str, str], Result] = {}
    conflicts: list[str] = []
    for report in reports:
        for row in report.results:
            prior = rows.setdefault(row.key, row)
            # ``is`` first: a row seen once is itself, and pydantic's ``==`` on 50,000 rows
            # was a third of ``report --keep``'s merge.
            if prior is not row and prior != row:
                conflicts.append(
                    f"({row.adapter}, {row.case}, {row.check}): {prior.outcome} vs {row.outcome}"
                )
    if conflicts:
        shown = "; ".join(conflicts[:5])
        more = f"; and {len(conflicts) - 5} more" if len(conflicts) > 5 else ""
        raise ReportError(f"cannot merge: {len(conflicts)} conflicting result(s) for {shown}{more}")
    return rows


def _merged_agent_rows(reports: Sequence[Report]) -> dict[tuple[str, str, str, str], AgentRow]:
    """Every report's agent rows by key, the same way as :func:`_merged_results`."""
    agent_rows: dict[tuple[str, str, str, str], AgentRow] = {}
    conflicts: list[str] = []
    for report in reports:
        for agent_row in report.agent_results:
            prior_agent = agent_rows.setdefault(agent_row.key, agent_row)
            if prior_agent is not agent_row and prior_agent != agent_row:
                conflicts.append(f"{agent_row.key}: {prior_agent.outcome} vs {agent_row.outcome}")
    if conflicts:
        raise ReportError(
            f"cannot merge: conflicting agent result(s) for {'; '.join(conflicts[:5])}"
        )
    return agent_rows


def _merged_environment(reports: Sequence[Report]) -> dict[str, list[str]]:
    """Each environment key's values across the reports, in order of first appearance."""
    environment: dict[str, list[str]] = {}
    for report in reports:
        for key, value in report.environment.items():
            values = environment.setdefault(key, [])
            if value not in values:
                values.append(value)
    return environment


def _same_shard(reports: Sequence[Report]) -> ShardInfo | None:
    """The shard of reports that ran side by side on one shard of the run (the matrix's
    groups under ``--shard K/N``): their pairs add up. Shards of one run are combined by
    :func:`stream_harness.reporting.shards.merge_shards`, not here."""
    labels = sorted({r.shard.label if r.shard else "none" for r in reports})
    if len(labels) > 1:
        raise ReportError(f"cannot merge: reports differ in shard ({', '.join(labels)})")
    first = reports[0].shard
    if first is None:
        return None
    return first.model_copy(
        update={
            "pairs": sum(r.shard.pairs for r in reports if r.shard),
            "total_pairs": sum(r.shard.total_pairs for r in reports if r.shard),
        }
    )


def _case_keys(
    cases: Iterable[CaseInfo], protocols: Iterable[str]
) -> dict[str, tuple[str, str | None]]:
    wanted = set(protocols)
    return {c.id: (c.sha256, c.expected_sha256) for c in cases if c.protocol in wanted}


def stale_adapters(previous: Report, new: Report) -> dict[str, str]:
    """The adapters of ``previous`` that ``new`` did not re-run and whose rows no longer
    describe ``new``'s cases, each with the reason.

    An adapter's rows are judged on the cases of the protocols it runs, not on every
    case: a cassette added for another protocol leaves a library's rows as true as they
    were, so the matrix need not re-run it. A case whose bytes or expected events changed
    (the expected digest compared where both reports recorded one) makes the rows stale.
    """
    ran = {a.name for a in new.adapters}
    stale: dict[str, str] = {}
    for adapter in previous.adapters:
        if adapter.name in ran:
            continue
        before = _case_keys(previous.cases, adapter.protocols)
        now = _case_keys(new.cases, adapter.protocols)
        changed = sorted(
            case
            for case in before.keys() | now.keys()
            if case not in before
            or case not in now
            or before[case][0] != now[case][0]
            or (None not in (before[case][1], now[case][1]) and before[case][1] != now[case][1])
        )
        if changed:
            more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
            stale[adapter.name] = (
                f"{len(changed)} of its cases added, removed or changed ({', '.join(changed[:3])}{more})"
            )
    return stale


def update_report(previous: Report, new: Report) -> Report:
    """``new`` plus the rows of ``previous`` for the adapters ``new`` did not run.

    So that re-running the default adapters (``stream-harness report``) over a committed
    matrix (``stream-harness matrix``) refreshes their rows without dropping the
    third-party ones, which only their own environments can produce. A kept adapter's rows
    must describe the same run: the same checks, the same cases (bytes and expected
    events) of its protocols, plus what :func:`merge_reports` requires; adapters whose
    rows are stale (:func:`stale_adapters`) are dropped, and when none can be kept
    :class:`ReportError` says why.
    """
    # Agent rows of agents ``new`` did not run are kept as they were: no stream case
    # decides whether they are stale (their scenarios are rendered, not recorded).
    kept = kept_agent_rows(previous.agent_results, new.agent_results)
    if kept:
        new = new.model_copy(update={"agent_results": new.agent_results + kept})
        previous = previous.model_copy(update={"agent_results": kept})
    ran = {a.name for a in new.adapters}
    candidates = tuple(a for a in previous.adapters if a.name not in ran)
    if not candidates:
        return new
    ours, theirs = {c.id for c in new.checks}, {c.id for c in previous.checks}
    if ours != theirs:
        raise ReportError(f"the checks differ ({len(ours ^ theirs)} added, removed or changed)")
    stale = stale_adapters(previous, new)
    kept_adapters = tuple(a for a in candidates if a.name not in stale)
    if not kept_adapters:
        name, why = next(iter(stale.items()))
        raise ReportError(f"the cases differ: {name}: {why}")
    kept_names = {a.name for a in kept_adapters}
    new_cases = {c.id for c in new.cases}
    rest = previous.model_copy(
        update={
            "adapters": kept_adapters,
            # The kept adapters' cases are new's (checked above); new's own CaseInfo wins.
            "cases": tuple(c for c in new.cases),
            "results": tuple(
                r for r in previous.results if r.adapter in kept_names and r.case in new_cases
            ),
            # The kept rows are reclassified by the caller with this run's files, and the
            # inputs passed over are this run's, as its cases are.
            "expectations": new.expectations,
            "skipped": new.skipped,
            # ``new`` holds the kept agent rows already: not merged a second time.
            "agent_results": (),
        }
    )
    merged = merge_reports([new, rest])
    # Rows keep the previous report's order (a re-run changes no line it need not), and
    # adapters it did not have come last.
    place = {a.name: i for i, a in enumerate(previous.adapters)}
    adapters = sorted(merged.adapters, key=lambda a: place.get(a.name, len(place)))
    return merged.model_copy(
        update={
            "adapters": tuple(adapters),
            "results": sorted_results(
                merged.results,
                [a.name for a in adapters],
                [c.id for c in merged.cases],
                [c.id for c in merged.checks],
            ),
        }
    )


def reclassify(report: Report, expectations: Callable[[str], Expectations]) -> Report:
    """The report with known failures and fixes recomputed from the expectation files.

    An outcome is a function of the check's failures and of ``specs/expectations``
    (:func:`stream_harness.conformance.expectations.outcome_for`), so rows kept from an earlier
    run (another environment's, for the matrix) follow the files as they are now, without
    re-running anything. ``errored`` rows stay as they are; a ``timeout`` or ``crashed``
    row becomes a known failure once listed, and keeps its label otherwise.
    """
    files = {a.name: expectations(a.name) for a in report.adapters}
    rows = []
    for r in report.results:
        if r.outcome == "errored":
            rows.append(r)
            continue
        known = files[r.adapter].lookup(r.check, r.case)
        if r.outcome in ("timeout", "crashed"):
            outcome, issue = fault_outcome(r.outcome, known)
        else:
            outcome, issue = outcome_for(bool(r.failures), known)
        # Most rows keep their triage: no copy of 25,000 rows for `report`'s kept matrix.
        same = outcome == r.outcome and issue == r.issue
        rows.append(r if same else r.model_copy(update={"outcome": outcome, "issue": issue}))
    return report.model_copy(update={"results": tuple(rows)})


# ---------------------------------------------------------------------------
# The matrix every human-facing renderer shows
# ---------------------------------------------------------------------------

CellStatus: TypeAlias = Literal["pass", "known", "fail", "na"]


@dataclass(frozen=True, slots=True)
class Cell:
    """One adapter x check cell: its counts, its colour class, and its text."""

    adapter: str
    check: str
    counts: Counts

    @property
    def status(self) -> CellStatus:
        c = self.counts
        if c.total == 0:
            return "na"
        if c.failing:
            return "fail"
        if c.known_failure:
            return "known"
        return "pass"

    @property
    def text(self) -> str:
        """``12/12``, ``10/12 (2 known)``: passes over results, then what the rest were."""
        c = self.counts
        if c.total == 0:
            return "n/a"
        notes = [
            f"{n} {label}"
            for n, label in (
                (c.known_failure, "known"),
                (c.failed, "failed"),
                (c.timeout, "timeout"),
                (c.crashed, "crashed"),
                (c.errored, "errored"),
                (c.fixed, "fixed"),
            )
            if n
        ]
        head = f"{c.passed + c.fixed}/{c.total}"
        return f"{head} ({', '.join(notes)})" if notes else head


def matrix(report: Report) -> list[list[Cell]]:
    """Rows in adapter order, columns in check order."""
    groups: dict[tuple[str, str], list[Result]] = {}
    for r in report.results:
        groups.setdefault((r.adapter, r.check), []).append(r)
    return [
        [Cell(a.name, c.id, Counts.of(groups.get((a.name, c.id), []))) for c in report.checks]
        for a in report.adapters
    ]


def problems(report: Report) -> list[tuple[str, str, list[Result]]]:
    """Every result that is not a plain pass, grouped by (adapter, check) in matrix order."""
    return grouped_results(report, lambda r: r.outcome != "passed")


def grouped_results(
    report: Report, keep: Callable[[Result], bool]
) -> list[tuple[str, str, list[Result]]]:
    """The results ``keep`` picks, grouped by (adapter, check) in matrix order."""
    groups: dict[tuple[str, str], list[Result]] = {}
    for r in report.results:
        if keep(r):
            groups.setdefault((r.adapter, r.check), []).append(r)
    return [
        (a.name, c.id, groups[(a.name, c.id)])
        for a in report.adapters
        for c in report.checks
        if (a.name, c.id) in groups
    ]


@dataclass(frozen=True)
class AgentSummary:
    """One agent row as every renderer shows it: what ran, and its counts per check."""

    agent: str
    version: str
    settings: str
    conventions: dict[str, Any]
    counts: Counts
    by_check: dict[str, Counts]
    problems: tuple[AgentRow, ...]  # failed, known failures and fixes, in row order


def agent_summaries(report: Report) -> list[AgentSummary]:
    """The agents of ``report`` in the order their rows come."""
    order = list(dict.fromkeys(a.agent for a in report.agent_results))
    out: list[AgentSummary] = []
    for agent in order:
        rows = [a for a in report.agent_results if a.agent == agent]
        checks = list(dict.fromkeys(a.check for a in rows))
        out.append(
            AgentSummary(
                agent=agent,
                version=rows[0].agent_version,
                settings=rows[0].settings,
                conventions=dict(rows[0].conventions),
                counts=Counts.of(rows),
                by_check={c: Counts.of(a for a in rows if a.check == c) for c in checks},
                problems=tuple(a for a in rows if a.outcome != "passed"),
            )
        )
    return out
