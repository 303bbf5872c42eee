"""``matrix --explore``: each agent group's exploration budget from the pins file, passed to
its ``agents`` run, and the explored rows kept beside the rows of the scenarios as written."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.matrix.test_matrix import _report
from tests.matrix.test_matrix_agents import AGENT_PINS, AgentRunner, _agent_report, _args, pins

from stream_harness.matrix.groups import MatrixError, default_pins, load_groups, matrix_command
from stream_harness.reporting import load_report, write_report

__all__ = ["pins"]  # the fixture, imported to be used here


def test_every_bundled_agent_group_has_an_exploration_budget() -> None:
    agent_groups = [g for g in load_groups(default_pins()) if g.agents]
    assert agent_groups and all(g.explore is not None and g.explore >= 1 for g in agent_groups)


@pytest.mark.parametrize(
    "pins_text",
    [
        AGENT_PINS + "explore = 0\n",
        AGENT_PINS + 'explore = "many"\n',
        AGENT_PINS.replace("[groups.agent-fw]", "explore = 5\n[groups.agent-fw]"),  # a stream group
    ],
)
def test_a_bad_budget_is_one_error_naming_it(tmp_path: Path, pins_text: str) -> None:
    path = tmp_path / "matrix.toml"
    path.write_text(pins_text)
    with pytest.raises(MatrixError, match=r"explore must be a number of schedules >= 1"):
        load_groups(path)


def test_explore_runs_the_scenarios_as_written_and_the_budget_into_one_report(
    tmp_path: Path, pins: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One command makes the whole agent half: each group's bundled scenarios and its
    # exploration are two runs, and their rows one report (no earlier report to keep).
    pins.write_text(AGENT_PINS + "explore = 7\n")
    plain = _agent_report("fw-agent", "passed")
    row = plain.agent_results[0].model_copy(
        update={"scenario": "weather_tool_call~explored", "explored": {"schedules": 7}}
    )
    explored = plain.model_copy(update={"agent_results": (row,)})
    runner = AgentRunner(
        {"one": _report("one", "1.0", "passed"), "two": _report("two", "2.0", "passed")},
        {"fw-agent": plain, "fw-agent~explore": explored},
    )
    code = matrix_command(_args(pins, tmp_path, "--explore", "--fresh"), runner=runner)
    calls = [c for c in runner.calls if len(c) > 1 and c[1] == "agents"]
    assert len(calls) == 2
    bundled = next(c for c in calls if "--explore" not in c)
    agents = next(c for c in calls if "--explore" in c)
    assert "--save-failures" not in bundled
    assert agents[agents.index("--explore") + 1] == "7" and "--seed" in agents
    assert agents[agents.index("--save-failures") + 1] == str(
        (tmp_path / "report" / "explored").resolve()
    )
    assert code == 0
    report = load_report(tmp_path / "report" / "report.jsonl")
    assert {(r.scenario, r.explored is not None) for r in report.agent_results} == {
        ("weather_tool_call", False),
        ("weather_tool_call~explored", True),
    }
    assert any(k.endswith("(explored)") for k in report.environment), report.environment
    assert "agent-fw (explored)" in capsys.readouterr().out


def test_explore_of_agent_groups_alone_keeps_the_other_rows_of_the_report(
    tmp_path: Path, pins: Path
) -> None:
    pins.write_text(AGENT_PINS + "explore = 7\n")
    plain = _agent_report("fw-agent", "passed")
    write_report(plain, tmp_path / "report")
    row = plain.agent_results[0].model_copy(
        update={"scenario": "weather_tool_call~explored", "explored": {"schedules": 7}}
    )
    explored = plain.model_copy(update={"agent_results": (row,)})
    runner = AgentRunner(
        {"one": _report("one", "1.0", "passed")}, {"fw-agent": plain, "fw-agent~explore": explored}
    )
    code = matrix_command(_args(pins, tmp_path, "--group", "agent-fw", "--explore"), runner=runner)
    assert code == 0
    rows = load_report(tmp_path / "report" / "report.jsonl").agent_results
    assert {(r.scenario, r.explored is not None) for r in rows} == {
        ("weather_tool_call", False),
        ("weather_tool_call~explored", True),
    }


def test_explore_is_refused_with_a_shard(
    tmp_path: Path, pins: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner = AgentRunner({}, {})
    code = matrix_command(_args(pins, tmp_path, "--explore", "--shard", "1/2"), runner=runner)
    assert code == 2 and "--explore: not with --shard" in capsys.readouterr().err
