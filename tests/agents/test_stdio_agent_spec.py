"""The agent messages of specs/adapter-protocol.md ("Agent runs") against their schemas.

The counterpart of tests/adapters/test_stdio_spec.py's examples test for the ``agent_*``
kinds: every example the page shows validates, the schemas refuse what they must, the
harness's own requests satisfy them, and an agent's reply that breaks them is a crash of
that run naming the field, never an outcome read as empty.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from stream_harness.agents.conformance.runner import observe
from stream_harness.agents.loading import AgentLoadError, load_agent
from stream_harness.agents.scenario.model import load_agent_scenario
from stream_harness.agents.scenario.render import PROTOCOLS
from stream_harness.agents.stdio import StdioAgent, StdioAgentError, check_message
from stream_harness.contract.facts import bundled_cassettes, specs_dir

TOY = Path(__file__).with_name("stdio_toy_agent.py")
WEATHER = bundled_cassettes() / "agent-scenarios" / "weather_tool_call.yaml"


def _agent_examples() -> list[tuple[str, Any]]:
    """Every ```json block of the page that shows an agent message, with its kind."""
    text = (specs_dir() / "adapter-protocol.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```json\n(.*?)```", text, flags=re.S):
        data = json.loads(block)
        kind = str(data.get("cmd", data.get("kind", "")))
        if kind.startswith("agent_"):
            out.append((kind, data))
    return out


def test_every_agent_example_on_the_page_is_a_valid_message() -> None:
    examples = _agent_examples()
    # Every kind is shown, so this cannot pass on a page that lost its examples.
    assert {kind for kind, _ in examples} == {
        "agent_start",
        "agent_started",
        "agent_run",
        "agent_outcome",
    }
    for kind, data in examples:
        check_message(kind, data)


@pytest.mark.parametrize(
    ("kind", "data", "where"),
    [
        ("agent_start", {"cmd": "agent_start", "version": 2}, "version"),
        (
            "agent_started",
            {"kind": "agent_started", "version": 1, "name": "x", "protocols": ["gemini"]},
            "protocols/0",
        ),
        ("agent_outcome", {"kind": "agent_outcome", "seq": 1, "error": "Boom"}, "(top)"),
        ("agent_run", {"cmd": "agent_run", "seq": 1, "task": {}}, "task"),
    ],
)
def test_the_schemas_refuse_what_the_page_must_not_show(kind: str, data: Any, where: str) -> None:
    with pytest.raises(StdioAgentError, match=f"{kind} message invalid at {re.escape(where)}"):
        check_message(kind, data)


def test_the_schemas_list_the_protocols_the_harness_renders() -> None:
    # The one list the schemas repeat (a JSON Schema cannot read a Python tuple).
    for kind in ("agent_started", "agent_run"):
        schema = json.loads((specs_dir() / "adapter-protocol" / f"{kind}.schema.json").read_text())
        props = schema["properties"]
        enum = (
            props["protocols"]["items"]["enum"]
            if kind == "agent_started"
            else props["task"]["properties"]["protocol"]["enum"]
        )
        assert tuple(enum) == PROTOCOLS


def test_the_harness_requests_satisfy_the_schemas() -> None:
    agent = StdioAgent([sys.executable, str(TOY)], validate=True)
    try:
        run = observe(agent, load_agent_scenario(WEATHER), "openai-completions")
        assert run.crash is None and run.outcome is not None and run.outcome.output
    finally:
        agent.close()


def test_a_reply_that_breaks_the_schema_is_a_crash_naming_it(tmp_path: Path) -> None:
    script = tmp_path / "misspelt_agent.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, sys
            for line in sys.stdin:
                msg = json.loads(line)
                if msg["cmd"] == "agent_start":
                    print(json.dumps({"kind": "agent_started", "version": 1, "name": "misspelt",
                                      "protocols": ["openai-completions"]}), flush=True)
                elif msg["cmd"] == "agent_run":
                    print(json.dumps({"kind": "agent_outcome", "seq": msg["seq"], "error": "Boom"}), flush=True)
                else:
                    break
            """
        )
    )
    agent = load_agent("cmd:" + shlex.join([sys.executable, str(script)]))
    try:
        run = observe(agent, load_agent_scenario(WEATHER), "openai-completions")
        assert run.crash is not None and "agent_outcome message invalid" in run.crash
        assert "'error' was unexpected" in run.crash
    finally:
        if isinstance(agent, StdioAgent):
            agent.close()
    script.write_text(
        script.read_text().replace('"protocols": ["openai-completions"]', '"protocols": []')
    )
    with pytest.raises(AgentLoadError, match="agent_started message invalid at protocols"):
        load_agent("cmd:" + shlex.join([sys.executable, str(script)]))
