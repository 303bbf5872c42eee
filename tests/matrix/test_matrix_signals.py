"""The matrix in a log and on a signal: a progress line every so often while groups run,
and an interrupted matrix ends the group processes it started (issue 24, point 3)."""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.matrix.test_matrix import PINS, FakeRunner, _report

from stream_harness.matrix import groups
from stream_harness.reporting.progress import ENV


def test_a_long_matrix_run_without_a_terminal_prints_progress_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class SlowRunner(FakeRunner):
        def __call__(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
            if len(argv) > 1 and argv[1] == "report":
                time.sleep(0.6)  # a group's run: longer than the interval
            return super().__call__(argv)

    monkeypatch.setenv(ENV, "0.2")
    monkeypatch.setattr("stream_harness.matrix.groups.find_uv", lambda: None)
    pins = tmp_path / "matrix.toml"
    pins.write_text(PINS, encoding="utf-8")
    parser = argparse.ArgumentParser()
    groups.configure_parser(parser)
    args = parser.parse_args(
        [
            "--pins",
            str(pins),
            "--group",
            "one",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert (
        groups.matrix_command(args, runner=SlowRunner({"one": _report("one", "1.0", "passed")}))
        == 0
    )
    err = capsys.readouterr().err
    assert any(
        line.startswith("matrix: still running, ") and "(last: one: running one)" in line
        for line in err.splitlines()
    ), err


@pytest.mark.skipif(not hasattr(groups.os, "wait4"), reason="the runner's own reaping path")
def test_ending_the_running_commands_ends_them_and_starts_no_more() -> None:
    """What an interrupted matrix does: SIGTERM to each group's process (which ends its
    own workers and adapters as the CLI does), and nothing started after."""
    results: list[subprocess.CompletedProcess[str]] = []
    sleeper = [sys.executable, "-c", "import time; time.sleep(3600)"]
    thread = threading.Thread(
        target=lambda: results.append(groups.subprocess_runner(sleeper)), daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not groups._RUNNING and time.monotonic() < deadline:
            time.sleep(0.02)
        assert groups._RUNNING, "the command did not start"
        groups.end_running()
        thread.join(30)
        assert not thread.is_alive() and results[0].returncode == -15
        later = groups.subprocess_runner(sleeper)
        assert later.returncode != 0 and "interrupted" in later.stderr
    finally:
        groups._ENDING.clear()
        for proc in list(groups._RUNNING):
            proc.kill()
