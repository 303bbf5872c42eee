"""`stream-harness loop` on bad input (issue 13): one line naming the file and the problem,
exit 2, never a traceback; `--check` is never green on nothing, and its exit status always
agrees with the verdict it prints."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from stream_harness.cli import loop as cli
from stream_harness.cli.loop import add_loop_parser, loop_command

GOOD = "responses: [{script: {text: hi}}]\nexpect: {end_reason: completed}\n"
MISMATCH = "responses: [{script: {text: hi}}]\nexpect: {turns: 2}\n"


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    add_loop_parser(parser.add_subparsers())
    return loop_command(parser.parse_args(["loop", *argv]))


BAD_FILES: dict[str, bytes] = {
    "garbage": bytes(range(128, 256)) * 3,
    "nul": b'a: "\x00"\n',
    "empty": b"",
    "scalar": b"just a string\n",
    "unclosed": b"responses: [\n",
    "invalid": b"responses: []\nconfig: {retry: {cap: -1}}\n",
    "cut_and_eof": b"responses: [{script: {text: hi}, cut_after: 1, eof_after: 1}]\n",
    "bad_safety_schema": b"tools: {t: {concurrency_safe: {type: 12}}}\nresponses: []\n",
    "garbage_cassette": b"responses: [{cassette: garbage.yaml}]\n",
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_a_bad_file_is_one_line_and_exit_2(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "garbage.yaml").write_bytes(BAD_FILES["garbage"])
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(BAD_FILES[name])
    assert _run([str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith(f"stream-harness: {path}: ")
    assert "Traceback" not in captured.err


def test_a_missing_file_and_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run([str(tmp_path / "absent.yaml")]) == 2
    assert _run([str(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"stream-harness: {tmp_path / 'absent.yaml'}: No such file or directory",
        f"stream-harness: {tmp_path}: Is a directory",
    ]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_an_unreadable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "secret.yaml"
    path.write_text(GOOD, encoding="utf-8")
    path.chmod(0)
    assert _run([str(path)]) == 2
    assert capsys.readouterr().err == f"stream-harness: {path}: Permission denied\n"


def test_check_on_nothing_is_never_green(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("not a scenario", encoding="utf-8")
    assert _run(["--check", str(tmp_path)]) == 2
    assert _run(["--check", str(tmp_path / "notes.txt")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"stream-harness: {tmp_path}: no scenario files (*.yaml)",
        f"stream-harness: {tmp_path / 'notes.txt'}: not a directory",
    ]


@pytest.mark.parametrize(
    ("files", "code", "verdict"),
    [
        ({"a": GOOD}, 0, "OK"),
        ({"a": GOOD, "b": MISMATCH}, 1, "FAILED"),
        ({"a": GOOD, "b": MISMATCH, "c": "responses: 3\n"}, 2, "ERROR"),
    ],
)
def test_check_exit_status_agrees_with_its_verdict(
    files: dict[str, str],
    code: int,
    verdict: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, text in files.items():
        (tmp_path / f"{name}.yaml").write_text(text, encoding="utf-8")
    assert _run(["--check", str(tmp_path)]) == code
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith(f"{verdict}: ") and last.endswith(f"({len(files)} scenarios)")


def test_a_run_that_raises_is_one_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(GOOD, encoding="utf-8")

    def broken(scenario: object) -> object:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(cli, "run_scenario", broken)
    assert _run([str(path)]) == 2
    assert capsys.readouterr().err == (
        f"stream-harness: {path}: the run failed: RuntimeError: simulated bug\n"
    )
    assert _run(["--check", str(tmp_path)]) == 2
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"ERROR {path}: the run failed: RuntimeError: simulated bug"
    assert out[-1].startswith("ERROR: 0 passed")


def test_bundled_scenarios_run_by_name_and_check_without_a_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stream_harness.cli.main import main

    monkeypatch.chdir(tmp_path)  # nothing named like a scenario here
    assert main(["loop", "--check"]) == 0
    assert "OK:" in capsys.readouterr().out
    assert main(["loop", "retry_after_header"]) == 0
    assert '"type":"agent_start"' in capsys.readouterr().out
    assert main(["loop", "no_such_scenario"]) == 2
