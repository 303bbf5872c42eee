"""Running adapters x cases x checks into results, the raw material of every report."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from harness.conformance.adapters import Adapter
from harness.conformance.cases import Case
from harness.conformance.checks import CHECKS, Check, CheckContext, Failure
from harness.conformance.expectations import Expectations

Outcome = Literal["passed", "failed", "errored", "known_failure", "fixed"]


@dataclass(frozen=True, slots=True)
class CaseResult:
    adapter: str
    case: str
    check: str
    outcome: Outcome
    failures: tuple[Failure, ...] = ()
    issue: str | None = None  # the upstream issue of a known failure

    @property
    def ok(self) -> bool:
        """Passing for CI purposes: a known failure does not break the build, a fix does not either."""
        return self.outcome in ("passed", "known_failure", "fixed")


@dataclass
class RunConfig:
    examples: int = 100
    seed: int = 0
    checks: Sequence[Check] = CHECKS
    single_cut_limit: int = 1024


@dataclass
class AdapterRun:
    adapter: Adapter
    version: str
    results: list[CaseResult] = field(default_factory=list)


def run_adapter(
    adapter: Adapter,
    cases: Iterable[Case],
    config: RunConfig,
    expectations: Expectations | None = None,
    progress: Callable[[], None] | None = None,
) -> AdapterRun:
    try:
        version = adapter.version()
    except Exception as exc:  # a broken version() is still a result, not a crash of the run
        version = f"unknown ({type(exc).__name__})"
    run = AdapterRun(adapter, version)
    for case in cases:
        if case.protocol not in adapter.protocols:
            if progress:
                progress()
            continue
        ctx = CheckContext(case, adapter, examples=config.examples, seed=config.seed, single_cut_limit=config.single_cut_limit)
        expected = ctx.expected
        for check in config.checks:
            if not check.applicable(adapter, case, expected):
                continue
            run.results.append(_run_one(check, ctx, adapter.name, case.id, expectations))
        if progress:
            progress()
    return run


def _run_one(check: Check, ctx: CheckContext, adapter: str, case_id: str, expectations: Expectations | None) -> CaseResult:
    try:
        failures = tuple(check.run(ctx))
    except Exception as exc:
        tb = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return CaseResult(adapter, case_id, check.id, "errored", (Failure(f"the check raised: {tb}"),))
    known = expectations.lookup(check.id, case_id) if expectations else None
    if failures:
        if known is not None:
            return CaseResult(adapter, case_id, check.id, "known_failure", failures, known.issue)
        return CaseResult(adapter, case_id, check.id, "failed", failures)
    if known is not None:
        return CaseResult(adapter, case_id, check.id, "fixed", (), known.issue)
    return CaseResult(adapter, case_id, check.id, "passed")
