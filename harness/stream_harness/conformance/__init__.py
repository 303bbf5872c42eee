"""The conformance engine: cases, checks, adapters, and the one call adapter authors need.

An adapter's author runs the whole suite from their own tests, as hypothesis ships its
provider conformance test::

    from stream_harness.conformance import run_conformance

    def test_my_adapter_conforms():
        run_conformance(MyAdapter())   # raises AssertionError listing every new failure
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.protocol import (
    Adapter,
    AdapterLoadError,
    AdapterResult,
    ReferenceAdapter,
)
from stream_harness.conformance.cases import Case, CaseLoadError, load_cases
from stream_harness.conformance.checks import CHECKS, CHECKS_BY_ID
from stream_harness.conformance.checks.engine import Check, Failure
from stream_harness.conformance.config import Config, ConfigError, load_config, load_project_config
from stream_harness.conformance.expectations import Expectations, expectations_for
from stream_harness.conformance.failure_text import failure_lines
from stream_harness.conformance.runner import AdapterRun, CaseResult, RunConfig, run_adapter
from stream_harness.conformance.suite import Suite, SuiteError, prepare
from stream_harness.contract.facts import bundled_cassettes


def run_conformance(
    adapter: Adapter | str,
    *,
    cassettes: Iterable[str | Path] | None = None,
    checks: Sequence[str] | None = None,
    examples: int | None = None,
    seed: int | None = None,
    single_cut_limit: int | None = None,
    expectations: str | Path | None = None,
    config: Config | None = None,
    run_timeout: float | None = None,
    project: str | Path | None = None,
) -> AdapterRun:
    """Run every applicable check on every case; raise AssertionError on new failures.

    Arguments left out come from ``[tool.stream-harness]`` in the project's pyproject.toml,
    then the defaults: the bundled cassettes, the whole catalogue, 100 random splits. The
    project is ``project`` (its root folder, or the TOML file itself) when given, else the
    one holding the file that calls this (the nearest pyproject.toml above it), never the
    current directory's: ``pytest proj/tests`` from a monorepo's root must check proj's
    cassettes, not pass on the bundled ones. ``config`` replaces the lookup altogether.
    ``adapter`` is an adapter object or a spec string (``module:object``, imported from the
    project's folder). Raises :class:`SuiteError` when nothing would be checked (no
    cassettes, none loads, no check applies) or the configuration is bad, and
    AssertionError listing every new failure with its difference and reproduce command.
    """
    try:
        if config is not None:
            base = config
        elif project is not None:
            base = load_project_config(Path(project))
        else:
            base = load_config(_caller_file())
    except ConfigError as exc:
        raise SuiteError(str(exc)) from None
    merged = base.with_overrides(
        cassettes=cassettes,
        checks=checks,
        examples=examples,
        seed=seed,
        expectations=expectations,
        single_cut_limit=single_cut_limit,
        run_timeout=run_timeout,
    )
    suite = prepare(merged, [adapter])
    loaded = suite.adapters[0]
    run = run_adapter(
        loaded.adapter, suite.cases, suite.run_config, loaded.expectations, spec=loaded.spec
    )
    bad = [r for r in run.results if not r.ok]
    if bad:
        lines = [
            f"{len(bad)} conformance failure(s) for adapter {loaded.spec!r} ({suite.describe()}):"
        ]
        for r in bad[:50]:
            lines += failure_lines(r)
        if len(bad) > 50:
            lines.append(f"... and {len(bad) - 50} more")
        raise AssertionError("\n".join(lines))
    return run


def _caller_file() -> Path | None:
    """The file of the code that called :func:`run_conformance` (a test module, a script),
    or None when there is none on disk (a REPL, ``python -c``): then the current directory."""
    frame = sys._getframe(2)
    path = Path(frame.f_code.co_filename)
    return path if path.is_file() else None


__all__ = [
    "CHECKS",
    "CHECKS_BY_ID",
    "Adapter",
    "AdapterLoadError",
    "AdapterResult",
    "AdapterRun",
    "Case",
    "CaseLoadError",
    "CaseResult",
    "Check",
    "Config",
    "Expectations",
    "Failure",
    "ReferenceAdapter",
    "RunConfig",
    "Suite",
    "SuiteError",
    "bundled_cassettes",
    "expectations_for",
    "load_adapter",
    "load_cases",
    "prepare",
    "run_adapter",
    "run_conformance",
]
