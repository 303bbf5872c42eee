"""A failure in the lines a person reads, said once for every place that shows one.

The console (``reporting/console.py``) and the AssertionError of ``run_conformance``
both show a new failure: what broke, where the expected and observed values first
differ, and the command that replays it. Written twice, the two drifted apart; written
here, below reporting in the import order, a user sees the same lines in a terminal, a
CI log and a failing pytest. The results are taken by shape, so the runner's
``CaseResult`` and the report's ``Result`` are shown alike (and the report copies the
runner's results by the same shape, reporting/runs.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from stream_harness.conformance.outcomes import Outcome
from stream_harness.contract.diff import short_diff_of_texts


class ShownFailure(Protocol):
    @property
    def message(self) -> str: ...
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


class ShownResult(Protocol):
    @property
    def adapter(self) -> str: ...
    @property
    def case(self) -> str: ...
    @property
    def check(self) -> str: ...
    @property
    def outcome(self) -> Outcome: ...
    @property
    def failures(self) -> Sequence[ShownFailure]: ...


# How a line names what went wrong: the harness's error, the adapter's hang or crash, a failure.
_LABELS = {"errored": "ERROR", "timeout": "TIMEOUT", "crashed": "CRASHED"}


def failure_lines(r: ShownResult) -> list[str]:
    """A new failure in plain lines: what, where it differs, how to replay it."""
    first = r.failures[0] if r.failures else None
    label = _LABELS.get(r.outcome, "FAIL")
    lines = [
        f"{label} [{r.adapter}] {r.check} :: {r.case}: {first.message if first else r.outcome}"
    ]
    if first is not None:
        diff = short_diff_of_texts(first.expected, first.observed, first.path)
        if diff:
            lines.append(f"    {diff}")
        if first.command:
            lines.append(f"    reproduce: {first.command}")
        if first.stdout_noise:
            # Indented like the lines above, so that a multi-line quote stays in its failure.
            noise = first.stdout_noise.replace("\n", "\n      ")
            lines.append(f"    stdout besides the protocol: {noise}")
    return lines
