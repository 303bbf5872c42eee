"""The agent_scenario fixture on the shop agent (tests/agents/apps/shop_agent.py): the
clean agent passes the fault builders' scenarios, each planted bug fails the check that
names it, a run with unwired tools is told so."""

from __future__ import annotations

import asyncio
import contextlib
import io
import sys
from pathlib import Path

import pytest

from stream_harness.agents.binding import ToolBinding
from stream_harness.agents.conformance.fixture import AgentScenarioFixture
from stream_harness.agents.fault_builders import (
    cut_tool_args,
    no_finish,
    overflow,
    rate_limit,
    truncate,
)
from stream_harness.agents.scenario.model import bundled_agent_scenarios

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import shop_agent

pytest_plugins = ["pytester"]


@pytest.mark.agent_scenarios(
    rate_limit(retry_after=1), truncate(), cut_tool_args(), no_finish(), overflow()
)
def test_the_clean_agent_is_conformant(agent_scenario, monkeypatch):
    monkeypatch.setattr(shop_agent, "BUG", "")
    agent_scenario.run(shop_agent.main)
    agent_scenario.assert_conformant()


@pytest.mark.parametrize(
    ("bug", "draft", "check"),
    [
        ("cut_args", cut_tool_args(), "A1"),
        ("no_finish", no_finish(), "A5"),
        ("no_retry_after", rate_limit(retry_after=1), "A10"),
        ("retry_400", overflow(), "A7"),
        ("double_charge", truncate(), "A2"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_each_planted_bug_fails_its_check(bug, draft, check, monkeypatch, tmp_path):
    fixture = AgentScenarioFixture(draft.load(tmp_path), "openai-completions", ToolBinding())
    monkeypatch.setattr(shop_agent, "BUG", bug)
    fixture.run(shop_agent.main)
    with pytest.raises(AssertionError, match=rf"\n  {check} "):
        fixture.assert_conformant()


def test_tools_that_report_nothing_are_a_wiring_problem_not_a_pass(monkeypatch, tmp_path):
    fixture = AgentScenarioFixture(truncate().load(tmp_path), "openai-completions", ToolBinding())
    monkeypatch.setattr(shop_agent, "BUG", "")
    monkeypatch.setattr(shop_agent, "issue_payment", lambda customer, amount_cents: {"paid": 1})
    fixture.run(shop_agent.main)
    with pytest.raises(
        AssertionError, match="wiring: the agent went on after a call to issue_payment"
    ):
        fixture.assert_conformant()


def test_judging_before_running_says_so(tmp_path):
    fixture = AgentScenarioFixture(truncate().load(tmp_path), "openai-completions", ToolBinding())
    with pytest.raises(RuntimeError, match=r"agent_scenario.run\(your_agent\) first"):
        fixture.assert_conformant()


def test_the_marker_reads_a_scenario_beside_the_test_file_and_refuses_an_unknown_one(pytester):
    bundled = bundled_agent_scenarios() / "three_tool_turns.yaml"
    (pytester.path / "mine.yaml").write_text(bundled.read_text())
    pytester.makepyfile(
        test_ids="""
        import pytest

        @pytest.mark.agent_scenarios("mine.yaml", "overflow_400", protocols=["openai-completions", "anthropic-messages"])
        def test_ids(agent_scenario):
            assert agent_scenario.prompt
        """,
        test_unknown="""
        import pytest

        @pytest.mark.agent_scenarios("no_such_scenario")
        def test_unknown(agent_scenario):
            pass
        """,
    )
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:randomly")
    result.stdout.fnmatch_lines(
        [
            "*test_ids?openai-completions/mine?*",
            "*test_ids?anthropic-messages/mine?*",
            "*test_ids?openai-completions/overflow_400?*",
            "*agent_scenarios: no_such_scenario: no such file or folder*",
        ]
    )


def test_an_async_agent_is_awaited_and_its_return_value_is_the_output(tmp_path):
    fixture = AgentScenarioFixture(truncate().load(tmp_path), "openai-completions", ToolBinding())

    async def agent(prompt: str) -> str:
        return await asyncio.to_thread(shop_agent_answer, prompt)

    fixture.run(agent)
    fixture.assert_conformant()
    assert fixture.observed is not None and fixture.observed.outcome is not None
    assert "Done: receipt r-1001." in (fixture.observed.outcome.output or "")


def shop_agent_answer(prompt: str) -> str:
    """The shop agent's answer returned instead of printed."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        shop_agent.main(prompt)
    return printed.getvalue().strip()
