"""``--skip-unusable``: other projects' recordings hold files that cannot be used (token
exchanges, broken YAML); with the flag each is skipped and named with its reason, on
stderr and in the summary, by ``check``, ``report`` and ``matrix`` alike. Skipping every
input is still nothing checked: exit 2."""

from __future__ import annotations

import argparse
import shutil
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

from stream_harness.cli.main import main
from stream_harness.reporting import Report, write_report
from stream_harness.reporting.report import AdapterInfo, CaseInfo, CheckInfo, Result, SkippedInfo

CASSETTE = REPO_ROOT / "cassettes" / "openai-completions" / "tool_call_single.yaml"
TOKEN = """\
interactions:
- request:
    body: '{"grant_type": "client_credentials"}'
    headers: {}
    method: POST
    uri: https://auth.example.com/oauth/token
  response:
    body: {string: '{"access_token": "<filtered>"}'}
    headers: {content-type: [application/json]}
    status: {code: 200, message: OK}
version: 1
"""
FAST = [
    "--adapter",
    "reference",
    "--check",
    "contract",
    "--examples",
    "1",
    "--jobs",
    "1",
    "--format",
    "plain",
]
SKIPPED = [
    "skipped auth/token.yaml: nothing to check: not a stream nor an error response",
    "skipped broken.yaml: does not load: invalid YAML at line 2 column 1: did not find expected node content",
]


def _unusable(folder: Path) -> Path:
    (folder / "auth").mkdir(parents=True)
    (folder / "auth" / "token.yaml").write_text(TOKEN, encoding="utf-8")
    (folder / "broken.yaml").write_text("interactions: [\n", encoding="utf-8")
    return folder


@pytest.fixture
def recordings(tmp_path: Path) -> Path:
    folder = _unusable(tmp_path / "recordings")
    shutil.copy(CASSETTE, folder / CASSETTE.name)
    return folder


def test_without_the_flag_an_unusable_file_is_an_error(
    recordings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--cassettes", str(recordings), *FAST]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "token.yaml: nothing to check" in err


@pytest.mark.parametrize("command", ["check", "report"])
def test_each_skipped_file_is_one_line_with_its_reason_on_stderr_and_in_the_summary(
    recordings: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    out = ["--out", str(tmp_path / "out")] if command == "report" else []
    assert main([command, "--cassettes", str(recordings), "--skip-unusable", *FAST, *out]) == 0
    captured = capsys.readouterr()
    assert [line for line in captured.err.splitlines() if line.startswith("skipped ")] == SKIPPED
    assert [line for line in captured.out.splitlines() if line.startswith("skipped ")] == SKIPPED
    assert "verdict: passed" in captured.out


def test_skipping_everything_is_still_nothing_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _unusable(tmp_path / "recordings")
    assert main(["check", "--cassettes", str(folder), "--skip-unusable", *FAST]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert (
        "no conformance cases in" in err
        and "every input was skipped (auth/token.yaml: nothing to check" in err
    )
    assert err.endswith("; and 1 more)")


T0 = datetime(2026, 1, 1, tzinfo=UTC)
CASE = CaseInfo(
    id="a/x.yaml#0",
    cassette="a/x.yaml",
    interaction=0,
    protocol="anthropic-messages",
    status=200,
    sha256="ab" * 32,
)


def _group_report(adapter: str) -> Report:
    return Report(
        tool_version="0.1.0", started=T0, finished=T0, seed=0, examples=5,
        checks=(CheckInfo(id="expected", title="t", enforces="C6", level="message"),),
        adapters=(AdapterInfo(name=adapter, level="message", version="1", protocols=("anthropic-messages",)),),
        cases=(CASE,),
        skipped=(SkippedInfo(where="auth/token.yaml", reason="nothing to check: not a stream nor an error response"),),
        results=(Result(adapter=adapter, case=CASE.id, check="expected", outcome="passed"),),
    )  # fmt: skip


def test_matrix_accepts_the_flag_and_forwards_it_to_every_group(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from stream_harness.matrix.groups import configure_parser, matrix_command

    pins = tmp_path / "matrix.toml"
    pins.write_text(
        '[groups.one]\nrequirements = []\nadapters = ["one"]\n\n'
        '[groups.two]\nrequirements = []\nadapters = ["two"]\n'
    )
    calls: list[list[str]] = []

    def runner(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        argv = list(argv)
        calls.append(argv)
        if len(argv) > 1 and argv[1] == "report":
            write_report(
                _group_report(argv[argv.index("--adapter") + 1]),
                Path(argv[argv.index("--out") + 1]),
            )
        elif "venv" in argv:
            Path(argv[-1]).mkdir(parents=True, exist_ok=True)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr("stream_harness.matrix.groups.find_uv", lambda: None)
    monkeypatch.setenv("STREAM_HARNESS_CONFIG", "")
    parser = argparse.ArgumentParser()
    configure_parser(parser)
    args = parser.parse_args(["--pins", str(pins), "--skip-unusable", "--examples", "5", "--format", "plain",
                              "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "out")])  # fmt: skip
    assert matrix_command(args, runner=runner) == 0
    reports = [argv for argv in calls if len(argv) > 1 and argv[1] == "report"]
    assert len(reports) == 2 and all("--skip-unusable" in argv for argv in reports)
    captured = capsys.readouterr()
    line = "skipped auth/token.yaml: nothing to check: not a stream nor an error response"
    assert f"matrix: {line}" in captured.err.splitlines()  # once: the groups' lists merge
    assert captured.err.count(line) == 1
    assert line in captured.out.splitlines()


def test_matrix_forwards_run_timeout_and_refuses_a_bad_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 24, point 3: the per-run timeout of in-process adapters reaches every group.
    from stream_harness.matrix.groups import configure_parser, matrix_command

    pins = tmp_path / "matrix.toml"
    pins.write_text('[groups.one]\nrequirements = []\nadapters = ["one"]\n')
    calls: list[list[str]] = []

    def runner(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        argv = list(argv)
        calls.append(argv)
        if len(argv) > 1 and argv[1] == "report":
            write_report(_group_report("one"), Path(argv[argv.index("--out") + 1]))
        elif "venv" in argv:
            Path(argv[-1]).mkdir(parents=True, exist_ok=True)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr("stream_harness.matrix.groups.find_uv", lambda: None)
    monkeypatch.setenv("STREAM_HARNESS_CONFIG", "")
    parser = argparse.ArgumentParser()
    configure_parser(parser)
    common = [
        "--pins",
        str(pins),
        "--examples",
        "5",
        "--format",
        "plain",
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    args = parser.parse_args([*common, "--run-timeout", "2.5", "--out", str(tmp_path / "out")])
    assert matrix_command(args, runner=runner) == 0
    (report,) = [argv for argv in calls if len(argv) > 1 and argv[1] == "report"]
    assert report[report.index("--run-timeout") + 1] == "2.5"
    calls.clear()
    args = parser.parse_args([*common, "--run-timeout", "0", "--out", str(tmp_path / "out2")])
    assert matrix_command(args, runner=runner) == 2
    assert "--run-timeout must be a number of seconds > 0" in capsys.readouterr().err
    assert calls == []  # refused before building or running anything
