"""What a report reads of a run, as structural types.

:func:`~stream_harness.reporting.report.build_report` is handed the runner's objects
(``conformance.runner.AdapterRun`` and ``RunConfig``), but reports read results and must not
be able to produce them or be tied to how (tests/test_import_graph.py forbids reporting to
import the runner or the checks, for typing too). These protocols name what the report
copies; the runner's classes fit them as they are, and its results are read by the shape
the console shows them by (``conformance.failure_text``), plus what a report keeps besides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from stream_harness.adapters.protocol import Adapter
from stream_harness.conformance.failure_text import ShownFailure, ShownResult
from stream_harness.conformance.shard import Shard


class FailureRead(ShownFailure, Protocol):
    @property
    def split(self) -> str | None: ...


class ResultRead(ShownResult, Protocol):
    @property
    def failures(self) -> Sequence[FailureRead]: ...
    @property
    def issue(self) -> str | None: ...


class RunRead(Protocol):
    """One adapter's run: the runner's ``AdapterRun``."""

    adapter: Adapter
    version: str

    @property
    def results(self) -> Sequence[ResultRead]: ...


class CheckRead(Protocol):
    """A check of the run (``conformance.checks.Check``), as the report's header lists it."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def enforces(self) -> str: ...  # the contract rule or spec table it enforces
    @property
    def level(self) -> Literal["event", "message"]: ...


class SettingsRead(Protocol):
    """The run's parameters: the runner's ``RunConfig``."""

    seed: int
    examples: int
    single_cut_limit: int
    shard: Shard | None

    @property
    def checks(self) -> Sequence[CheckRead]: ...
    def replayed(self) -> str | None: ...
