"""The one atomic writer: every file stream-harness writes gets the mode a plain open() gives.

Cassettes, blessed goldens and every file of a report folder are committed or published;
mkstemp's private 0600 would make them unreadable to the web server or the colleague who
checks them out from an artifact. The tests set the umask themselves (process-wide, so
restored after each test) and compare with ``0o666 & ~umask``.
"""

from __future__ import annotations

import argparse
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

from sse_cassettes import write_sse_cassette
from stream_harness.cli.main import main
from stream_harness.recordings.atomic import write_atomic
from stream_harness.recordings.cassette import dump_cassette, load_cassette
from stream_harness.workflow.bless import add_bless_parser, bless_command

HELLO = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}\n\n'
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n'
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("umask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_the_mode_follows_the_umask_as_open_would(
    tmp_path: Path, umask: int, expected: int
) -> None:
    previous = os.umask(umask)
    try:
        write_atomic(tmp_path / "a.txt", "text")
        with open(tmp_path / "plain.txt", "w") as handle:  # what the user's tools would give
            handle.write("text")
    finally:
        os.umask(previous)
    assert mode(tmp_path / "a.txt") == expected == mode(tmp_path / "plain.txt")


def test_a_private_file_left_by_an_older_version_becomes_readable(
    tmp_path: Path, umask_022: None
) -> None:
    target = tmp_path / "README.md"
    target.write_text("old")
    target.chmod(0o600)
    write_atomic(target, "new")
    assert target.read_text() == "new" and mode(target) == 0o644


def test_text_and_bytes_are_written_as_given_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    write_atomic(tmp_path / "sub" / "t.txt", "a\r\nb\n\udcff", errors="backslashreplace")
    write_atomic(tmp_path / "sub" / "b.bin", b"\x00\xff")
    assert (tmp_path / "sub" / "t.txt").read_bytes() == b"a\r\nb\n\\udcff"
    assert (tmp_path / "sub" / "b.bin").read_bytes() == b"\x00\xff"
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["b.bin", "t.txt"]


def test_a_failed_write_keeps_the_old_file_and_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "x.txt"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(target, "\udcff")  # strict: a lone surrogate cannot be encoded
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]


def test_a_cassette_is_0644(tmp_path: Path, umask_022: None) -> None:
    source = write_sse_cassette(tmp_path / "src.yaml", HELLO)
    target = tmp_path / "out" / "copy.yaml"
    dump_cassette(load_cassette(source), target)
    assert mode(target) == 0o644


def test_a_blessed_golden_is_0644(tmp_path: Path, umask_022: None) -> None:
    cassette = write_sse_cassette(tmp_path / "cassettes" / "anthropic-messages" / "hi.yaml", HELLO)
    parser = argparse.ArgumentParser(prog="stream-harness")
    add_bless_parser(parser.add_subparsers())
    expected = tmp_path / "expected"
    assert (
        bless_command(parser.parse_args(["bless", str(cassette), "--expected-dir", str(expected)]))
        == 0
    )
    written = list(expected.rglob("*.jsonl"))
    assert written and all(mode(p) == 0o644 for p in written)


def test_every_file_report_writes_is_0644(
    tmp_path: Path, umask_022: None, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "conformance_report"
    cassette = REPO_ROOT / "cassettes" / "openai-completions" / "tool_call_single.yaml"
    code = main(["report", "--adapter", "reference", "--cassettes", str(cassette), "--examples", "1",
                 "--jobs", "1", "--out", str(out), "--format", "plain"])  # fmt: skip
    capsys.readouterr()
    assert code == 0
    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert {p.name for p in files} >= {"report.jsonl", "README.md", "report.html", "junit.xml"}
    assert {p.name: oct(mode(p)) for p in files} == {p.name: oct(0o644) for p in files}
