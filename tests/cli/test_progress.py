"""Progress without a terminal: a long run prints a line every so often to stderr, so a CI
log shows it is alive (issue 24, point 3). The interval is set small by
STREAM_HARNESS_PROGRESS_EVERY and the run made longer than it by an adapter that sleeps: no
assertion on speed beyond "a run longer than the interval printed at least one line"."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from stream_harness.cli.main import main
from stream_harness.contract.facts import bundled_cassettes
from stream_harness.reporting.progress import ENV

SLOW = '''
import time

from stream_harness import ReferenceAdapter


class Slow:
    """The reference, 0.6 s a run: one run outlasts the test's interval three times."""

    name = "slow"
    level = "event"

    def __init__(self):
        self._reference = ReferenceAdapter()
        self.protocols = self._reference.protocols

    def version(self):
        return "0"

    def run(self, protocol, chunks, *, status=200, headers=None):
        time.sleep(0.6)
        return self._reference.run(protocol, chunks, status=status, headers=headers)
'''

CASE = str(bundled_cassettes() / "openai-completions" / "text_plain.yaml")


def _check(project: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    (project / "progress_slow_adapter.py").write_text(SLOW, encoding="utf-8")
    # At least one run of 0.6 s, against an interval of 0.2 s.
    code = main(["check", "--adapter", "progress_slow_adapter:Slow", "--cassettes", CASE, "--check", "contract",
                 "--examples", "1", "--jobs", "1", "--format", "plain"])  # fmt: skip
    out, err = capsys.readouterr()
    return code, out, err


def test_a_run_without_a_terminal_prints_progress_lines(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, "0.2")
    started = time.monotonic()
    code, out, err = _check(project, capsys)
    took = time.monotonic() - started
    assert code == 0, out + err
    assert took > 0.6, "the run was meant to take longer than the interval"
    lines = [line for line in err.splitlines() if line.startswith("progress: ")]
    assert lines, f"no progress line in a run of {took:.1f} s: {err}"
    assert all(" of 1 (adapter, case) pair(s) judged, " in line for line in lines), lines
    assert not any(
        "progress" in line for line in out.splitlines()
    )  # stdout keeps the summary alone


def test_an_interval_of_0_turns_the_lines_off(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, "0")
    code, _, err = _check(project, capsys)
    assert code == 0 and "progress: " not in err, err


@pytest.mark.parametrize("value", ["soon", "-1", "inf"])
def test_a_bad_interval_is_one_line_and_exit_2(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(ENV, value)
    assert main(["check", "--format", "plain"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"stream-harness: {ENV} must be a number of seconds >= 0"
    ), err
