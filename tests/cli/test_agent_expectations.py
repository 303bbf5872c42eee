"""Known failures of the agent rows: bundled by default, replaced by a project's folder or
file, with a misspelt agent, scenario or check named; and ``agents --shard`` merged back."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_sources import lazy_agent_source
from stream_harness.agents.configuration import is_known_row
from stream_harness.agents.conformance import runner as agent_runner
from stream_harness.agents.conformance.runner import (
    ExpectationError,
    agent_unit_key,
    bundled_scenario_names,
    load_agent_expectations,
)
from stream_harness.cli.main import main
from stream_harness.conformance.expectations import adapter_from_file_name
from stream_harness.conformance.shard import shard_of
from stream_harness.contract.facts import agent_expectations_dir, bundled_cassettes
from stream_harness.reporting.jsonl import load_report

SCENARIOS = bundled_cassettes() / "agent-scenarios"
ONE = str(SCENARIOS / "weather_tool_call.yaml")
LAZY = lazy_agent_source()
KNOWN = "lazy:\n  - {scenario: weather_tool_call, check: A12, reason: it never asks the model}\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with the lazy agent (it fails A12 on weather_tool_call), no config of its
    own, and a scratch folder standing in for the bundled agent expectations."""
    (tmp_path / "lazy_agent.py").write_text(LAZY)
    bundled = tmp_path / "bundled"
    bundled.mkdir()
    monkeypatch.setattr(agent_runner, "agent_expectations_dir", lambda: bundled)
    monkeypatch.setenv("STREAM_HARNESS_CONFIG", "")
    return tmp_path


def run(project: Path, *extra: str) -> int:
    argv = ["agents", "--agent", "lazy_agent:Lazy", "--project", str(project), "--scenarios", ONE]
    return main([*argv, *extra])


def test_the_bundled_file_of_an_agent_is_read_by_default(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(project) == 1
    (project / "bundled" / "lazy.yaml").write_text(KNOWN)
    assert run(project) == 0
    assert "1 known failure" in capsys.readouterr().out


def test_a_users_folder_replaces_the_bundled_file_of_the_same_agent(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "bundled" / "lazy.yaml").write_text(KNOWN)
    mine = project / "mine"
    mine.mkdir()
    (mine / "lazy.yaml").write_text("lazy: []\n")
    assert run(project, "--expect", str(mine)) == 1  # the bundled entry no longer applies
    (mine / "lazy.yaml").write_text(KNOWN)
    (mine / "lazzy.yaml").write_text(KNOWN.replace("lazy:", "lazzy:"))
    assert run(project, "--expect", str(mine)) == 0
    assert "lazzy.yaml: no agent of this run is named 'lazzy'" in capsys.readouterr().err


def test_the_projects_table_names_the_folder(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "known").mkdir()
    (project / "known" / "lazy.yaml").write_text(KNOWN)
    config = project / "pyproject.toml"
    config.write_text('[tool.stream-harness]\nagent_expectations = "known"\n')
    monkeypatch.setenv("STREAM_HARNESS_CONFIG", str(config))
    assert run(project) == 0
    assert "1 known failure" in capsys.readouterr().out


def test_an_expectation_that_cannot_apply_is_named(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = project / "bad.yaml"
    bad.write_text("lazy:\n  - {scenario: weather_tool_call, check: A99, reason: typo}\n")
    assert run(project, "--expect", str(bad)) == 2
    err = capsys.readouterr().err
    assert "unknown check 'A99'" in err and len(err.strip().splitlines()) == 1
    (project / "bundled" / "lazy.yaml").write_text(KNOWN.replace("lazy:", "lasy:"))
    assert run(project) == 2
    assert "names agent 'lasy', but is the file of 'lazy'" in capsys.readouterr().err
    bad.write_text(KNOWN + "  - {scenario: wether_tool_call, check: A1, reason: typo}\n")
    assert run(project, "--expect", str(bad)) == 0
    assert "names scenario 'wether_tool_call'" in capsys.readouterr().err
    assert run(project, "--expect", str(project / "nowhere")) == 2
    assert "no such expectations file or folder" in capsys.readouterr().err


def test_an_expectation_whose_check_is_no_longer_judged_is_stale_and_fails(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # weather_tool_call serves no retry-after: A10 is skipped on it, so a known failure
    # listed there describes nothing the run judged.
    stale = project / "stale.yaml"
    stale.write_text(KNOWN + "  - {scenario: weather_tool_call, check: A10, reason: was slow}\n")
    assert run(project, "--expect", str(stale)) == 1
    out = capsys.readouterr().out
    assert "FAIL lazy weather_tool_call [openai-completions] A10" in out
    assert "not judged (" in out and "but is listed as a known failure" in out


def test_every_bundled_agent_expectation_names_a_real_agent_scenario_and_check() -> None:
    folder = agent_expectations_dir()
    assert folder.name == "agent-expectations" and folder.is_dir()
    scenarios = bundled_scenario_names()
    assert len(scenarios) >= 30
    for path in sorted(folder.glob("*.yaml")):
        agent = adapter_from_file_name(path.name)
        # A row at a declared configuration (agno[retries=1]) is a row of its own.
        assert is_known_row(agent), f"{path.name}: no agent {agent!r} in the registry"
        for entry in load_agent_expectations(path, agent=agent):  # checks and protocols exist
            base = entry.scenario.removesuffix("~explored") if entry.faults else entry.scenario
            assert base in scenarios or (entry.faults and not base), (
                f"{path.name}: no scenario {entry.scenario!r}"
            )


def test_agent_shards_split_the_runs_and_merge_into_the_whole_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    for name in ("weather_tool_call", "tool_raises", "http_400_not_retried"):
        (scenarios / f"{name}.yaml").write_text((SCENARIOS / f"{name}.yaml").read_text())
    base = ["agents", "--agent", "reference", "--scenarios", str(scenarios)]
    assert main([*base, "--out", str(tmp_path / "whole")]) == 0
    for k in (1, 2, 3):
        code = main(
            [*base, "--shard", f"{k}/3", "--allow-empty-shard", "--out", str(tmp_path / f"s{k}")]
        )
        assert code == 0
    whole = load_report(tmp_path / "whole" / "report.jsonl")
    parts = [load_report(tmp_path / f"s{k}" / "report.jsonl") for k in (1, 2, 3)]
    runs = {(a.agent, a.scenario, a.protocol) for a in whole.agent_results}
    for k, part in enumerate(parts, start=1):
        assert part.shard is not None and part.shard.total_pairs == len(runs)
        assert all(
            shard_of(*agent_unit_key(a.agent, a.scenario, a.protocol), 3) == k
            for a in part.agent_results
        )
    assert sum(len(p.agent_results) for p in parts) == len(whole.agent_results)
    assert min(len(p.agent_results) for p in parts) < len(whole.agent_results)
    capsys.readouterr()
    ins = [str(tmp_path / f"s{k}") for k in (1, 2, 3)]
    assert main(["merge", str(tmp_path / "merged"), *ins]) == 0
    merged = load_report(tmp_path / "merged" / "report.jsonl")
    assert merged.shard is None
    key = lambda a: (a.key, a.outcome)  # noqa: E731
    assert sorted(map(key, merged.agent_results)) == sorted(map(key, whole.agent_results))
    assert main(["merge", str(tmp_path / "m2"), *ins[:2]]) == 2
    assert "shard(s) 3/3 missing" in capsys.readouterr().err
    # A shard never mixes into a folder that holds a report.
    assert main([*base, "--shard", "1/3", "--out", str(tmp_path / "whole")]) == 2
    assert "holds a report already" in capsys.readouterr().err


def test_a_bad_shard_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agents", "--agent", "reference", "--shard", "3/2"]) == 2
    err = capsys.readouterr().err
    assert "--shard '3/2'" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("{scenario: weather_tool_call, check: A1, faults: [clean_eof], reason: r}",
         "faults is for explored rows: the scenario must be '<base>~explored' or '~explored'"),
        ("{scenario: '~explored', check: A1, faults: [], reason: r}", "faults must be a list of fault words"),
        ("{scenario: '~explored', check: A1, faults: clean_eof, reason: r}", "faults must be a list of fault words"),
    ],
)  # fmt: skip
def test_a_bad_explored_entry_is_one_line(tmp_path: Path, entry: str, problem: str) -> None:
    path = tmp_path / "lazy.yaml"
    path.write_text(f"lazy:\n  - {entry}\n")
    with pytest.raises(ExpectationError) as raised:
        load_agent_expectations(path)
    assert problem in str(raised.value) and "\n" not in str(raised.value)
