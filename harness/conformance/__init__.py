"""The conformance engine: cases, checks, adapters, and the one call adapter authors need.

An adapter's author runs the whole suite from their own tests, as hypothesis ships its
provider conformance test::

    from harness.conformance import run_conformance

    def test_my_adapter_conforms():
        run_conformance(MyAdapter())   # raises AssertionError listing every new failure
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from harness.adapter import (
    Adapter,
    AdapterLoadError,
    AdapterResult,
    ReferenceAdapter,
    load_adapter,
)
from harness.conformance.cases import Case, load_cases
from harness.conformance.checks import CHECKS, CHECKS_BY_ID, Check, Failure
from harness.conformance.expectations import Expectations, expectations_for
from harness.conformance.runner import AdapterRun, CaseResult, RunConfig, run_adapter


def bundled_cassettes() -> Path:
    return Path(__file__).resolve().parent.parent.parent / "cassettes"


def run_conformance(
    adapter: Adapter,
    *,
    cassettes: Iterable[str | Path] | None = None,
    checks: Sequence[str] | None = None,
    examples: int = 20,
    seed: int = 0,
    expectations: Expectations | None = None,
) -> AdapterRun:
    """Run every applicable check on every case; raise AssertionError on new failures.

    ``cassettes`` defaults to the bundled ones; ``checks`` to the whole catalogue. Known
    failures from ``expectations`` (default: ``specs/expectations/<adapter.name>.yaml``)
    do not fail the call.
    """
    roots = [Path(p) for p in cassettes] if cassettes is not None else [bundled_cassettes()]
    cases, _ = load_cases(roots, bundled_root=bundled_cassettes())
    chosen = [CHECKS_BY_ID[c] for c in checks] if checks is not None else list(CHECKS)
    exp = expectations if expectations is not None else expectations_for(adapter.name)
    run = run_adapter(adapter, cases, RunConfig(examples=examples, seed=seed, checks=chosen), exp)
    bad = [r for r in run.results if not r.ok]
    if bad:
        lines = [f"{len(bad)} conformance failure(s) for adapter {adapter.name!r}:"]
        for r in bad[:50]:
            first = r.failures[0] if r.failures else None
            lines.append(f"- [{r.check}] {r.case}: {first.message if first else r.outcome}")
            if first and first.command:
                lines.append(f"    reproduce: {first.command}")
        raise AssertionError("\n".join(lines))
    return run


__all__ = [
    "CHECKS",
    "CHECKS_BY_ID",
    "Adapter",
    "AdapterLoadError",
    "AdapterResult",
    "AdapterRun",
    "Case",
    "CaseResult",
    "Check",
    "Expectations",
    "Failure",
    "ReferenceAdapter",
    "RunConfig",
    "bundled_cassettes",
    "load_adapter",
    "load_cases",
    "run_adapter",
    "run_conformance",
]
