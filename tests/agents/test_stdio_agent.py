"""An agent in another process, over the stdio protocol's agent messages."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from stream_harness.agents.loading import AgentLoadError, load_agent
from stream_harness.agents.scenario import load_agent_scenario
from stream_harness.agents.stdio import StdioAgent
from stream_harness.conformance.agent_checks import judge
from stream_harness.conformance.agent_runner import observe
from stream_harness.contract.facts import bundled_cassettes

TOY = Path(__file__).with_name("stdio_toy_agent.py")
PAYMENT = bundled_cassettes() / "agent-scenarios" / "retry_after_payment.yaml"


def command(*extra: str) -> str:
    return "cmd:" + shlex.join([sys.executable, str(TOY), *extra])


def test_a_stdio_agent_runs_and_is_judged_like_any_other() -> None:
    agent = load_agent(command())
    assert isinstance(agent, StdioAgent)
    try:
        assert agent.name == "toy-stdio" and agent.version() == "0.1"
        assert "anthropic-messages" in agent.protocols and agent.conventions["time_scale"] == 0.01
        scenario = load_agent_scenario(PAYMENT)
        for protocol in ("anthropic-messages", "openai-completions"):  # one process, two runs
            run = observe(agent, scenario, protocol)
            assert run.crash is None and run.outcome is not None
            assert run.outcome.output == "Done: receipt r-1001."
            assert [e.tool for e in run.ledger] == ["charge_card"]  # called from the other process
            assert all(v.status != "failed" for v in judge(run))
    finally:
        agent.close()


def test_an_out_of_step_reply_is_a_crash_of_that_run() -> None:
    agent = load_agent(command("--broken"))
    try:
        run = observe(agent, load_agent_scenario(PAYMENT), "openai-completions")
        assert run.crash is not None and "expected agent_outcome for seq 1" in run.crash
        assert next(v for v in judge(run) if v.check == "A12").status == "failed"
    finally:
        if isinstance(agent, StdioAgent):
            agent.close()


def test_a_command_that_does_not_speak_the_protocol_is_one_line() -> None:
    with pytest.raises(AgentLoadError, match="did not start"):
        load_agent("cmd:" + shlex.join([sys.executable, "-c", "pass"]))
