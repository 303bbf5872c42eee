"""What a report reads of a run, as structural types.

:func:`~stream_harness.reporting.report.build_report` is handed the runner's objects
(``conformance.runner.AdapterRun`` and ``RunConfig``), but reports read results and must not
be able to produce them or be tied to how (tests/test_import_graph.py forbids reporting to
import the runner or the checks, for typing too). These protocols name the attributes the
report copies; the runner's classes fit them as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from stream_harness.adapters.protocol import Adapter
from stream_harness.conformance.outcomes import Outcome
from stream_harness.conformance.shard import Shard


class CheckRead(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def enforces(self) -> str: ...

    @property
    def level(self) -> Literal["event", "message"]: ...


class FailureRead(Protocol):
    @property
    def message(self) -> str: ...

    @property
    def split(self) -> str | None: ...

    @property
    def command(self) -> str | None: ...

    @property
    def expected(self) -> str | None: ...

    @property
    def observed(self) -> str | None: ...

    @property
    def path(self) -> str | None: ...

    @property
    def stdout_noise(self) -> str | None: ...


class ResultRead(Protocol):
    @property
    def adapter(self) -> str: ...

    @property
    def case(self) -> str: ...

    @property
    def check(self) -> str: ...

    @property
    def outcome(self) -> Outcome: ...

    @property
    def failures(self) -> Sequence[FailureRead]: ...

    @property
    def issue(self) -> str | None: ...


class RunRead(Protocol):
    """One adapter's run: the runner's ``AdapterRun``."""

    @property
    def adapter(self) -> Adapter: ...

    @property
    def version(self) -> str: ...

    @property
    def results(self) -> Sequence[ResultRead]: ...


class SettingsRead(Protocol):
    """The run's parameters: the runner's ``RunConfig``."""

    @property
    def checks(self) -> Sequence[CheckRead]: ...

    @property
    def seed(self) -> int: ...

    @property
    def examples(self) -> int: ...

    @property
    def single_cut_limit(self) -> int: ...

    @property
    def shard(self) -> Shard | None: ...

    def replayed(self) -> str | None: ...
