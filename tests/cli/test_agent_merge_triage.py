"""``stream-harness merge`` of agent shards: the known failures follow the expectation
files where the merge runs (as stream rows' do), and an agent-only report says what it
checked in agent terms, not "0 cassette(s)" and a single-cut limit no run used."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_sources import lazy_agent_source
from stream_harness.agents.conformance import runner as agent_runner
from stream_harness.cli.main import main
from stream_harness.reporting.jsonl import load_report

KNOWN = "lazy:\n  - {scenario: weather_tool_call, check: A12, reason: it never asks the model}\n"


@pytest.fixture
def shards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two shards of the lazy agent (it fails A12) on one scenario, run with no known
    failure at all (an empty folder for the bundled ones, no config)."""
    (tmp_path / "lazy_agent.py").write_text(lazy_agent_source())
    bundled = tmp_path / "bundled"
    bundled.mkdir()
    monkeypatch.setattr(agent_runner, "agent_expectations_dir", lambda: bundled)
    monkeypatch.setenv("STREAM_HARNESS_CONFIG", "")
    monkeypatch.delitem(sys.modules, "lazy_agent", raising=False)
    monkeypatch.chdir(tmp_path)
    for k in (1, 2):
        argv = [
            "agents",
            "--agent",
            "lazy_agent:Lazy",
            "--project",
            ".",
            "--scenarios",
            "weather_tool_call",
        ]
        assert main([*argv, "--shard", f"{k}/2", "--allow-empty-shard", "--out", f"s{k}"]) in (0, 1)
    return tmp_path


def _outcomes(folder: Path) -> set[str]:
    return {
        r.outcome for r in load_report(folder / "report.jsonl").agent_results if r.check == "A12"
    }


def test_a_known_failure_added_after_the_shards_ran_is_known_in_the_merge(
    shards: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _outcomes(shards / "s1") | _outcomes(shards / "s2") == {"failed"}
    (shards / "known.yaml").write_text(KNOWN)
    code = main(
        ["merge", "out", "s1", "s2", "--agent-expectations", "known.yaml", "--format", "plain"]
    )
    out = capsys.readouterr().out
    assert code == 0 and "verdict: passed" in out
    assert _outcomes(shards / "out") == {"known_failure"}
    issues = {
        r.issue
        for r in load_report(shards / "out" / "report.jsonl").agent_results
        if r.check == "A12"
    }
    assert issues == {"it never asks the model"}


def test_a_known_failure_the_files_no_longer_list_fails_in_the_merge(
    shards: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (shards / "known.yaml").write_text(KNOWN)
    for k in (1, 2):  # the shards re-run with the entry: known there
        argv = [
            "agents",
            "--agent",
            "lazy_agent:Lazy",
            "--project",
            ".",
            "--scenarios",
            "weather_tool_call",
        ]
        main(
            [
                *argv,
                "--expect",
                "known.yaml",
                "--shard",
                f"{k}/2",
                "--allow-empty-shard",
                "--out",
                f"k{k}",
            ]
        )
    assert _outcomes(shards / "k1") | _outcomes(shards / "k2") == {"known_failure"}
    assert main(["merge", "out", "k1", "k2", "--format", "plain"]) == 1
    assert _outcomes(shards / "out") == {"failed"}
    assert "verdict: FAILED" in capsys.readouterr().out


def test_an_agent_only_merge_says_what_it_checked_in_agent_terms(
    shards: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["merge", "out", "s1", "s2", "--format", "plain"])
    out = capsys.readouterr().out
    checked = next(line for line in out.splitlines() if line.startswith("stream-harness: checked "))
    assert checked.startswith(
        "stream-harness: checked 1 agent run(s) of 1 agent(s) on 1 scenario(s)"
    )
    readme = (shards / "out" / "README.md").read_text()
    html = (shards / "out" / "report.html").read_text()
    for text in (checked, readme, html):
        assert "cassette(s)" not in text and "single cut" not in text and "random split" not in text


def test_agent_shards_of_two_runs_are_told_apart_in_agent_terms(
    shards: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "agents",
        "--agent",
        "lazy_agent:Lazy",
        "--project",
        ".",
        "--scenarios",
        "weather_tool_call",
    ]
    main(
        [
            *argv,
            "--scenarios",
            "tool_raises",
            "--shard",
            "2/2",
            "--allow-empty-shard",
            "--out",
            "other",
        ]
    )
    capsys.readouterr()
    assert main(["merge", "out", "s1", "other"]) == 2
    err = capsys.readouterr().err
    assert "(agent, scenario, protocol) runs here" in err and "(adapter, case)" not in err


def test_one_whole_report_is_re_triaged_in_place(
    shards: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The committed matrix takes 40 minutes to run: an expectation file edited after it is
    # applied to the report as it stands, in its own folder.
    argv = [
        "agents",
        "--agent",
        "lazy_agent:Lazy",
        "--project",
        ".",
        "--scenarios",
        "weather_tool_call",
    ]
    assert main([*argv, "--out", "whole"]) == 1
    assert _outcomes(shards / "whole") == {"failed"}
    capsys.readouterr()
    (shards / "known.yaml").write_text(KNOWN)
    code = main(
        ["merge", "whole", "whole", "--agent-expectations", "known.yaml", "--format", "plain"]
    )
    out = capsys.readouterr().out
    assert code == 0 and "verdict: passed" in out and "re-triaged" in out
    assert _outcomes(shards / "whole") == {"known_failure"}
    # two inputs are still shards only: a whole report among them is refused in one line
    assert main(["merge", "out2", "whole", "s1"]) == 2
    assert "not a shard's report" in capsys.readouterr().err
