"""``stream-harness bless``: expected events written from the reference, with a diff shown.

Every test writes under a temporary ``--expected-dir``; the repository's specs/expected is
only read (as the reviewed truth for a bundled cassette).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

from sse_cassettes import write_sse_cassette
from stream_harness.recordings.cassette import load_cassette
from stream_harness.recordings.golden import expected_path
from stream_harness.workflow.bless import add_bless_parser, bless_command

HELLO = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}\n\n'
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}\n\n'
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)


def _bless(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="stream-harness")
    add_bless_parser(parser.add_subparsers())
    return bless_command(parser.parse_args(["bless", *argv]))


def _cassette(tmp_path: Path, *bodies: bytes) -> Path:
    return write_sse_cassette(tmp_path / "cassettes" / "anthropic-messages" / "hello.yaml", *bodies)


def _blessed(tmp_path: Path, *bodies: bytes) -> tuple[Path, Path]:
    """A cassette of ``bodies``, blessed once into a fresh expected folder: both paths."""
    cassette = _cassette(tmp_path, *bodies)
    root = tmp_path / "expected"
    assert _bless(str(cassette), "--expected-dir", str(root)) == 0
    return cassette, root


def test_new_expected_file_holds_the_reference_events_and_the_diff_shows_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette, root = _blessed(tmp_path, HELLO)
    target = root / "anthropic-messages" / "hello.jsonl"
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert [e["type"] for e in lines] == ["start", "text_start", "text_delta", "text_end", "done"]
    assert lines[2]["delta"] == "Hello"
    assert lines[4]["reason"] == "stop"
    assert lines[4]["message"]["usage"]["output"] == 2
    out = capsys.readouterr()
    assert out.out.startswith("--- /dev/null\n+++ b/")
    assert out.out.count("\n+{") == 5
    assert "hello.jsonl: new" in out.err
    # Blessing again changes nothing and shows no diff.
    assert _bless(str(cassette), "--expected-dir", str(root)) == 0
    out = capsys.readouterr()
    assert out.out == ""
    assert "hello.jsonl: unchanged" in out.err


def test_check_shows_the_change_without_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette, root = _blessed(tmp_path, HELLO)
    before = (root / "anthropic-messages" / "hello.jsonl").read_text()
    capsys.readouterr()
    _cassette(tmp_path, HELLO.replace(b'"text":"Hello"', b'"text":"Howdy"'))
    assert _bless(str(cassette), "--expected-dir", str(root), "--check") == 1
    diff = capsys.readouterr().out
    removed = [line for line in diff.splitlines() if line.startswith("-{")]
    added = [line for line in diff.splitlines() if line.startswith("+{")]
    # The delta, the block's end and the final message changed; nothing else.
    assert len(removed) == len(added) == 3
    assert all("Hello" in line for line in removed) and all("Howdy" in line for line in added)
    assert (root / "anthropic-messages" / "hello.jsonl").read_text() == before
    assert _bless(str(cassette), "--expected-dir", str(root)) == 0
    assert "Howdy" in (root / "anthropic-messages" / "hello.jsonl").read_text()


def test_expected_files_of_dropped_interactions_are_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette, root = _blessed(tmp_path, HELLO, HELLO)
    folder = root / "anthropic-messages"
    assert sorted(p.name for p in folder.iterdir()) == ["hello.1.jsonl", "hello.jsonl"]
    capsys.readouterr()
    _cassette(tmp_path, HELLO)
    assert _bless(str(cassette), "--expected-dir", str(root)) == 0
    assert sorted(p.name for p in folder.iterdir()) == ["hello.jsonl"]
    out = capsys.readouterr()
    assert "+++ /dev/null" in out.out
    assert "hello.1.jsonl: removed" in out.err


def test_a_bundled_cassette_blesses_to_its_reviewed_expected_file(tmp_path: Path) -> None:
    source = REPO_ROOT / "cassettes" / "anthropic-messages" / "tool_call.yaml"
    copy = tmp_path / "cassettes" / "anthropic-messages" / "tool_call.yaml"
    copy.parent.mkdir(parents=True)
    shutil.copy(source, copy)
    root = tmp_path / "expected"
    assert _bless(str(copy), "--expected-dir", str(root)) == 0
    reviewed = expected_path(source, 0).read_text(encoding="utf-8")
    assert (root / "anthropic-messages" / "tool_call.jsonl").read_text(encoding="utf-8") == reviewed


def test_events_holding_a_secret_are_not_blessed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "sk-" + "proj-" + "Ab1" * 16
    cassette = _cassette(
        tmp_path, HELLO.replace(b'"text":"Hello"', b'"text":"' + key.encode() + b'"')
    )
    root = tmp_path / "expected"
    assert _bless(str(cassette), "--expected-dir", str(root)) == 1
    assert not root.exists()
    err = capsys.readouterr().err
    assert "openai-project-key" in err and key not in err


def test_an_unreadable_cassette_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "cassettes" / "anthropic-messages" / "bad.yaml"
    bad.parent.mkdir(parents=True)
    bad.write_text("interactions: [\n")
    assert _bless(str(bad), "--expected-dir", str(tmp_path / "expected")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.yaml" in err and "invalid YAML" in err


def test_bless_keeps_the_cassette_itself_untouched(tmp_path: Path) -> None:
    cassette = _cassette(tmp_path, HELLO)
    before = cassette.read_bytes()
    assert _bless(str(cassette), "--expected-dir", str(tmp_path / "expected")) == 0
    assert cassette.read_bytes() == before
    assert load_cassette(cassette).interactions[0].response.body == HELLO
