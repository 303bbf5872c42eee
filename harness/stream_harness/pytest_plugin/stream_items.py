"""``pytest --harness``: the conformance suite as test items, one per (adapter, case, check).

Imports of the engine are deferred (see stream_harness.pytest_plugin.options).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from stream_harness.pytest_plugin.options import _SELECTED, NODE_ROOT, _config, adapter_segment

if TYPE_CHECKING:
    from stream_harness.conformance.cases import Case
    from stream_harness.conformance.checks.engine import Check
    from stream_harness.conformance.runner import CaseResult, RunConfig
    from stream_harness.conformance.suite import LoadedAdapter, Suite


class HarnessFailure(Exception):
    def __init__(self, result: CaseResult) -> None:
        super().__init__(result.failures[0].message if result.failures else result.outcome)
        self.result = result


class HarnessItem(pytest.Item):
    def __init__(
        self, *, loaded: LoadedAdapter, case: Case, check: Check, run_config: RunConfig, **kw: Any
    ) -> None:
        super().__init__(**kw)
        self.loaded = loaded
        self.case = case
        self.check = check
        self.run_config = run_config

    def runtest(self) -> None:
        from stream_harness.conformance.runner import run_one

        ctx = self.run_config.context(self.case, self.loaded.adapter, self.loaded.spec)
        result = run_one(self.check, ctx, self.loaded.expectations)
        if not result.ok:  # failed, timeout, crashed or errored (conformance/outcomes.py)
            raise HarnessFailure(result)
        if result.outcome == "known_failure":
            pytest.xfail(f"known failure: {result.issue}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, HarnessFailure):
            # The lines the console and run_conformance show, with the rules the check enforces.
            from stream_harness.conformance.failure_text import failure_lines

            result = excinfo.value.result
            lines = failure_lines(result)
            lines.insert(
                1,
                f"    enforces {self.check.enforces} (specs/contract.md); adapter as given: {self.loaded.spec}",
            )
            for more in result.failures[1:]:
                lines.append(f"  and: {more.message}")
            return "\n".join(lines)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.case.cassette, None, f"[{self.loaded.spec}] {self.check.id} :: {self.case.id}"


class HarnessCollector(pytest.Collector):
    """The suite as one collector, so that bad input is a collection error, never a pass.

    Its node id is ``stream-harness``; an item's is
    ``stream-harness::<adapter>::<check>[<case>]``, which ``-k``, ``--lf``/``--ff`` and the
    command line (``pytest "stream-harness::reference::contract[ollama/plain_text.yaml#0]"``,
    or any prefix of it) select like any test's.
    """

    def collect(self) -> Iterator[pytest.Collector]:
        from stream_harness.conformance.suite import prepare

        suite = prepare(_config(self.config))
        for loaded in suite.adapters:
            yield AdapterCollector.from_parent(
                self, name=adapter_segment(loaded.spec), loaded=loaded, suite=suite
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        from stream_harness.conformance.config import ConfigError
        from stream_harness.conformance.suite import SuiteError

        if isinstance(excinfo.value, SuiteError | ConfigError):
            return f"stream-harness: {excinfo.value}"
        return str(super().repr_failure(excinfo))


class AdapterCollector(pytest.Collector):
    """One adapter's items: ``<check>[<case>]``."""

    def __init__(self, *, loaded: LoadedAdapter, suite: Suite, **kw: Any) -> None:
        super().__init__(**kw)
        self.loaded = loaded
        self.suite = suite

    def collect(self) -> Iterator[pytest.Item]:
        for case in self.suite.cases:
            if case.protocol not in self.loaded.adapter.protocols:
                continue
            expected = case.expected_events()
            for check in self.suite.run_config.checks:
                if check.applicable(self.loaded.adapter, case, expected):
                    name = f"{check.id}[{case.id}]"
                    yield HarnessItem.from_parent(
                        self,
                        name=name,
                        # Given as text, so pytest parses the [case] part as parameters
                        # exactly as it parses an id read back from its cache (--lf, --ff).
                        nodeid=f"{self.nodeid}::{name}",
                        loaded=self.loaded,
                        case=case,
                        check=check,
                        run_config=self.suite.run_config,
                    )


def _selected(nodeid: str, selected: list[str]) -> bool:
    return not selected or any(
        nodeid == s or nodeid.startswith((s + "::", s + "[")) for s in selected
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """First of this hook's plain implementations, so -k, -m, --lf and --ff (theirs run
    later or wrap it) see the harness items as they see collected tests."""
    if not config.getoption("--harness"):
        return
    collector = HarnessCollector.from_parent(session, name=NODE_ROOT, nodeid=NODE_ROOT)
    # Collected through pytest's own hooks, so a SuiteError is reported as a collection
    # error and the run stops ("1 error during collection"), as a broken test module does.
    report = session.ihook.pytest_make_collect_report(collector=collector)
    session.ihook.pytest_collectreport(report=report)
    if report.passed:
        selected = config.stash.get(_SELECTED, [])
        items.extend(
            item
            for node in report.result
            for item in session.genitems(node)
            if _selected(item.nodeid, selected)
        )
