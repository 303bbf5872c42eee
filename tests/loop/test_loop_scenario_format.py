"""A bad scenario is one line naming the file and the field, never a traceback."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

from stream_harness.cli.loop import add_loop_parser, loop_command
from stream_harness.loop.scenario import ScenarioError, load_scenario

CASSETTE = REPO_ROOT / "cassettes" / "anthropic-messages" / "plain_text.yaml"

# (name, YAML text, expected field, expected words in the problem)
BAD = [
    ("not_a_mapping", "- just\n- a list\n", "", "a scenario is a YAML mapping"),
    ("yaml_syntax", "responses: [\n", "line 2", "expected"),
    ("no_responses", "prompt: hi\n", "responses", "a required key, missing"),
    (
        "unknown_key",
        "responses: []\nexpct: {}\n",
        "expct",
        "unknown key 'expct' (did you mean 'expect'? known:",
    ),
    (
        "two_sources",
        "responses: [{raise: boom, script: {text: hi}}]\n",
        "responses.0",
        "exactly one of",
    ),
    ("no_source", "responses: [{latency: 1}]\n", "responses.0", "exactly one of"),
    (
        "negative_latency",
        "responses: [{raise: boom, latency: -1}]\n",
        "responses.0.latency",
        "expected a number >= 0, got -1",
    ),
    (
        "zero_limit",
        "config: {concurrency_limit: 0}\nresponses: []\n",
        "config.concurrency_limit",
        "expected a number >= 1, got 0",
    ),
    (
        "bad_doom_action",
        "config: {doom_loop: {action: maybe}}\nresponses: []\n",
        "config.doom_loop.action",
        "expected one of ask, deny or allow, got 'maybe'",
    ),
    (
        "abort_both",
        "responses: []\nfaults: {abort: {at: 1, after_event: 2}}\n",
        "faults.abort",
        "exactly one of",
    ),
    (
        "modifier_both",
        "tools: {t: {modifies: [{set: {a: 1}, append: {b: 2}}]}}\nresponses: []\n",
        "tools.t.modifies.0",
        "exactly one of",
    ),
    (
        "bad_schema",
        "tools: {t: {schema: {type: 12}}}\nresponses: []\n",
        "tools.t.schema",
        "invalid JSON Schema",
    ),
    (
        "missing_cassette",
        "responses: [{cassette: nowhere.yaml}]\n",
        "responses.0.cassette",
        "nowhere.yaml",
    ),
    (
        "bad_interaction",
        f"responses: [{{cassette: {CASSETTE}, interaction: 7}}]\n",
        "responses.0.interaction",
        "has 1 interactions",
    ),
    ("no_protocol", "responses: [{status: 529}]\n", "responses.0.protocol", "needs a protocol"),
    (
        "unknown_protocol",
        "responses: [{status: 529, protocol: carrier-pigeon}]\n",
        "responses.0.protocol",
        "unknown protocol 'carrier-pigeon'",
    ),
    (
        "bad_split",
        "protocol: openai-completions\nresponses: [{body: 'data: x', split: 'slices:3'}]\n",
        "responses.0.split",
        "slices",
    ),
    (
        "bad_inline_event",
        "responses: [{events: [{type: start}, {type: text_delta, delta: hi}]}]\n",
        "responses.0.events.1",
        "text_delta.content_index: a required key, missing",
    ),
    (
        "bad_expectation",
        "responses: []\nexpect: {end_reason: finished}\n",
        "expect.end_reason",
        "expected one of ",
    ),
]


@pytest.mark.parametrize(("name", "text", "where", "words"), BAD, ids=[b[0] for b in BAD])
def test_bad_scenario_is_one_line(
    tmp_path: Path, name: str, text: str, where: str, words: str
) -> None:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    error = caught.value
    assert error.where == where
    assert words in error.problem
    # pydantic's own wording names the library, not the file's keys.
    for raw in ("Field required", "Extra inputs", "Input should", "Value error"):
        assert raw not in error.problem
    line = str(error)
    assert "\n" not in line and line.startswith(f"{path}: ")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="No such file"):
        load_scenario(tmp_path / "absent.yaml")


def _run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    add_loop_parser(parser.add_subparsers())
    return loop_command(parser.parse_args(["loop", *argv]))


def test_cli_bad_scenario_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("responses: [{raise: boom, script: {text: hi}}]\n", encoding="utf-8")
    assert _run_cli([str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("stream-harness: ")
    assert "Traceback" not in captured.err


def test_cli_check_reports_unloadable_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.yaml").write_text("responses: 3\n", encoding="utf-8")
    (tmp_path / "good.yaml").write_text(
        "responses: [{script: {text: hi}}]\nexpect: {end_reason: completed, turns: 1, history: [user, 'assistant:stop']}\n",
        encoding="utf-8",
    )
    assert _run_cli(["--check", str(tmp_path)]) == 2
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ERROR ") and "bad.yaml: responses" in out[0]
    assert out[1] == "ok    good"
    assert out[-1] == "ERROR: 1 passed, 0 failed, 1 not loadable or not runnable (2 scenarios)"


def test_cli_check_fails_on_a_mismatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "s.yaml").write_text(
        "responses: [{script: {text: hi}}]\nexpect: {turns: 2}\n", encoding="utf-8"
    )
    assert _run_cli(["--check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "expect.turns: expected 2, got 1" in out


def test_cli_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run_cli([]) == 2
    assert _run_cli(["--check", str(tmp_path / "absent")]) == 2
    assert _run_cli(["--check", str(tmp_path)]) == 2  # no scenario files
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "stream-harness: give a SCENARIO file or --check DIR",
        f"stream-harness: {tmp_path / 'absent'}: not a directory",
        f"stream-harness: {tmp_path}: no scenario files (*.yaml)",
    ]


def test_cli_prints_agent_events_as_json_lines(capsys: pytest.CaptureFixture[str]) -> None:
    from stream_harness.loop.events import agent_event_from_json

    path = REPO_ROOT / "cassettes" / "scenarios" / "retry_after_header.yaml"
    assert _run_cli([str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    events = [agent_event_from_json(line) for line in lines]
    assert events[0].type == "agent_start" and events[-1].type == "agent_end"
    assert [e.type for e in events if e.type == "retry"] == ["retry"]
    retry = json.loads(next(line for line in lines if '"retry"' in line))
    assert (
        retry["delay"] == 17.0 and retry["hinted"] is True and retry["error_kind"] == "rate_limit"
    )
    # The JSON lines read back into the same events.
    assert [e.model_dump_json() for e in events] == lines
