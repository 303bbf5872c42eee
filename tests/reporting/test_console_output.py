"""Console output: off a terminal nothing is wrapped or cut, whatever the width; on a
terminal the matrix leaves out columns that are n/a for every row shown.

The subprocess tests run the installed command with its output piped, as a CI log gets
it, with ``COLUMNS=40`` so that rich's layout would fold or cut anything longer.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

from report_fixtures import beta_run, make_report
from stream_harness.conformance import AdapterRun, CaseResult
from stream_harness.reporting.console import render

CASSETTE = REPO_ROOT / "cassettes" / "openai-completions" / "tool_call_single.yaml"
LONG_DIR = "a-very-long-folder-name-that-no-forty-column-layout-could-ever-hold-on-one-line"
LONG_ADAPTER = "my-extremely-long-adapter-name-" + "x" * 90
ADAPTER_MODULE = f'''
from stream_harness.adapters.protocol import ReferenceAdapter


class Long(ReferenceAdapter):
    name = "{LONG_ADAPTER}"
'''


def _run(
    cwd: Path, *argv: str, extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "40", "STREAM_HARNESS_CONFIG": "", **(extra or {})}
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run(
        [sys.executable, "-m", "stream_harness.cli.main", *argv],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def _assert_uncut(text: str) -> None:
    assert "…" not in text and "..." not in text, text


# CI systems set these for colours in their logs; rich then takes the pipe for a terminal.
@pytest.mark.parametrize("extra", [{}, {"FORCE_COLOR": "1"}, {"TTY_COMPATIBLE": "1"}])
def test_summary_piped_to_a_file_neither_wraps_nor_cuts(
    tmp_path: Path, extra: dict[str, str]
) -> None:
    folder = tmp_path / "cassettes" / LONG_DIR / "openai-completions"
    folder.mkdir(parents=True)
    shutil.copy(
        CASSETTE, folder / "tool_call_single_with_an_equally_long_file_name_for_good_measure.yaml"
    )
    done = _run(tmp_path, "summary", "--cassettes", "cassettes", extra=extra)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    name = f"{LONG_DIR}/openai-completions/tool_call_single_with_an_equally_long_file_name_for_good_measure.yaml"
    assert lines[0].startswith(f"{name}#0: openai-completions, http 200, done, stop tool_use")
    assert lines[0].endswith("contract ok")
    assert lines[1:] == ["1 interactions, 0 with contract violations or load errors"]
    _assert_uncut(done.stdout)


def test_summary_format_plain_gives_the_same_lines_as_a_pipe(tmp_path: Path) -> None:
    from stream_harness.reporting.summary import run_summary

    out = io.StringIO()
    shutil.copytree(
        CASSETTE.parent,
        tmp_path / "c",
        ignore=lambda _d, names: [n for n in names if n != CASSETTE.name],
    )
    assert run_summary(tmp_path / "c", "plain", out) == 0
    assert (
        out.getvalue()
        .splitlines()[0]
        .startswith(f"{CASSETTE.name}#0: openai-completions, http 200")
    )


@pytest.mark.parametrize("form", ["auto", "plain", "rich"])
def test_check_piped_keeps_a_long_adapter_name_on_one_line(tmp_path: Path, form: str) -> None:
    (tmp_path / "longadapter.py").write_text(ADAPTER_MODULE, encoding="utf-8")
    done = _run(
        tmp_path, "check", "--adapter", "longadapter:Long", "--cassettes", str(CASSETTE),
        "--check", "contract", "--check", "expected", "--examples", "1", "--jobs", "1", "--format", form,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    _assert_uncut(done.stdout)
    assert any(LONG_ADAPTER in line for line in done.stdout.splitlines()), done.stdout
    scope = next(
        line for line in done.stdout.splitlines() if line.startswith("stream-harness: checked")
    )
    assert scope.endswith("seed 0")  # the scope line is whole, not folded at 40 columns


class Terminal(io.StringIO):
    """What rich takes for a terminal (rich asks the file ``isatty()``)."""

    def isatty(self) -> bool:
        return True


def _header(report_text: str) -> str:
    return next(
        line for line in report_text.splitlines() if "adapter" in line and "version" in line
    )


def test_on_a_terminal_a_column_na_for_every_row_is_not_drawn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    out = Terminal()
    render(make_report([beta_run()]), "rich", out)  # beta: contract applies to none of its cases
    header = _header(out.getvalue())
    assert "split-invariance" in header and "truncation" in header
    assert "contract" not in header
    assert "not shown: n/a for every adapter above: contract" in out.getvalue()
    both = Terminal()
    render(make_report(), "rich", both)  # alpha has contract results: the column stays
    assert "contract" in _header(both.getvalue())


def test_a_gateway_row_name_is_shown_whole_in_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    beta = beta_run()
    name = "litellm-proxy[anthropic-messages->openai-completions]"
    beta.adapter.name = name  # type: ignore[misc]
    results = [
        CaseResult(name, r.case, r.check, r.outcome, r.failures, r.issue) for r in beta.results
    ]
    out = Terminal()
    render(make_report([AdapterRun(beta.adapter, beta.version, results)]), "rich", out)
    assert name in out.getvalue()
