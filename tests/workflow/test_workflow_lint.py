"""``stream-harness lint``: the command's output and exit status, malformed cassettes, and
streams the reference does not normalize cleanly. (Secrets of every kind are in
test_workflow_secrets.py.)"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from sse_cassettes import write_sse_cassette
from stream_harness.contract.events import StartEvent, TextDeltaEvent
from stream_harness.workflow.lint import add_lint_parser, lint_command, lint_paths

GOOD = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","model":"m","usage":{}}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)
OPENAI_KEY = "sk-" + "Zq9" * 16


def _lint(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="stream-harness")
    add_lint_parser(parser.add_subparsers())
    return lint_command(parser.parse_args(["lint", *argv]))


def test_clean_folder_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_sse_cassette(tmp_path / "anthropic-messages" / "ok.yaml", GOOD)
    assert _lint(str(tmp_path)) == 0
    out = capsys.readouterr()
    assert out.out == ""
    assert "1 file(s), 1 interaction(s), 0 finding(s)" in out.err


def test_one_line_per_finding_naming_file_and_interaction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    leaky = GOOD.replace(b'"model":"m"', b'"model":"' + OPENAI_KEY.encode() + b'"')
    path = write_sse_cassette(tmp_path / "anthropic-messages" / "leak.yaml", GOOD, leaky)
    assert _lint(str(tmp_path)) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{path}: interaction 1: openai-key in response body: sk-Z...(51 chars)"]


def test_a_secret_outside_what_the_loader_reads_is_found_in_the_file_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sse_cassette(tmp_path / "x.yaml", GOOD)
    path.write_text(f"recorded_with: {OPENAI_KEY}\n" + path.read_text())
    assert _lint(str(path)) == 1
    [line] = capsys.readouterr().out.splitlines()
    assert line.startswith(f"{path}: openai-key in file text: line ")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("interactions: [\n", "malformed: invalid YAML"),
        ("version: 1\n", "malformed: not a cassette: no 'interactions' key"),
        ("interactions: []\nversion: 1\n", "malformed: no interactions"),
        (
            "interactions:\n- request: {method: POST, uri: 'http://x', body: ''}\n  response: {status: {code: 200}, body: {string: ''}}\n"
            "- request: {method: POST, uri: 'http://x', body: ''}\n  response: {body: {string: ''}}\nversion: 1\n",
            "interaction 1: malformed: response has no 'status' mapping",
        ),
    ],
)
def test_malformed_cassettes(
    text: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    assert _lint(str(tmp_path)) == 1
    [line] = capsys.readouterr().out.splitlines()
    assert line.startswith(f"{path}: {expected}")


def test_a_contract_breaking_normalization_is_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A normalizer bug stand-in: a delta for a block that never started, and no terminal.
    def broken(protocol: str, chunks: object, **_: object) -> Iterator[object]:
        yield StartEvent()
        yield TextDeltaEvent(content_index=0, delta="x")

    monkeypatch.setattr(
        importlib.import_module("stream_harness.workflow.lint"), "normalize", broken
    )
    path = write_sse_cassette(tmp_path / "anthropic-messages" / "x.yaml", GOOD)
    assert _lint(str(tmp_path)) == 1
    lines = capsys.readouterr().out.splitlines()
    prefix = f"{path}: interaction 0: contract in anthropic-messages events: "
    assert all(line.startswith(prefix) for line in lines)
    rules = sorted(line[len(prefix) :].split(":")[0] for line in lines)
    assert rules == ["C2", "C3 (event #1)"]


def test_a_normalizer_that_raises_is_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def raising(protocol: str, chunks: object, **_: object) -> Iterator[object]:
        raise RuntimeError("boom\nsecond line")
        yield  # pragma: no cover

    monkeypatch.setattr(
        importlib.import_module("stream_harness.workflow.lint"), "normalize", raising
    )
    path = write_sse_cassette(tmp_path / "anthropic-messages" / "x.yaml", GOOD)
    assert _lint(str(tmp_path)) == 1
    [line] = capsys.readouterr().out.splitlines()
    assert (
        line
        == f"{path}: interaction 0: normalize in response body: anthropic-messages normalizer raised RuntimeError: boom second line"
    )


def test_broken_wire_bytes_and_unknown_protocols_are_notes_not_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_sse_cassette(
        tmp_path / "anthropic-messages" / "cut.yaml",
        GOOD.replace(b'{"type":"message_stop"}', b'{"type":"message_st'),
    )
    write_sse_cassette(
        tmp_path / "other" / "legacy.yaml",
        b"event: completion\ndata: {}\n\n",
        uri="https://api.anthropic.com/v1/complete",
    )
    assert _lint(str(tmp_path)) == 0
    err = capsys.readouterr().err
    assert "cut.yaml: interaction 0: the anthropic-messages stream is malformed" in err
    assert "legacy.yaml: interaction 0: not normalized (cannot tell the protocol" in err


def test_the_folder_name_or_the_option_decides_the_protocol(tmp_path: Path) -> None:
    # An OpenAI body under anthropic-messages/ is read as Anthropic: it normalizes to an
    # error ("stream ended without a terminal event"), which is clean for the contract.
    openai = b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    write_sse_cassette(
        tmp_path / "anthropic-messages" / "x.yaml",
        openai,
        uri="https://proxy.example/v1/chat/completions",
    )
    assert lint_paths([tmp_path]).findings == []
    assert lint_paths([tmp_path], protocol="openai-completions").findings == []


def test_hidden_and_excluded_files_are_skipped(tmp_path: Path) -> None:
    (tmp_path / ".x.yaml.123.tmp").mkdir()
    (tmp_path / ".x.yaml.123.tmp" / "vcrpy.yaml").write_text("not: a cassette\n")
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s.yaml").write_text("description: a scenario, not a cassette\n")
    write_sse_cassette(tmp_path / "anthropic-messages" / "ok.yaml", GOOD)
    report = lint_paths([tmp_path], exclude=["scenarios/*"])
    assert (report.files, report.findings) == (1, [])


def test_bad_arguments_exit_two(tmp_path: Path) -> None:
    assert _lint(str(tmp_path / "missing")) == 2
    assert _lint(str(tmp_path), "--protocol", "nope") == 2
