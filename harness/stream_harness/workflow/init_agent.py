"""``stream-harness init --agent``: an agent test in a user's project, green before any edit.

It writes a small agent on the official openai client (``agent_app.py``, the stand-in for
the user's own: replace the import in the test) and ``tests/test_agent.py``, which runs it
on every bundled agent scenario and on two one-line faults through the ``agent_scenario``
fixture. The same program runs unchanged under ``stream-harness agents --app``. An
existing file is never overwritten.
"""

from __future__ import annotations

from pathlib import Path

AGENT_APP = '''"""A small agent on the official openai client, as it runs in production.

stream-harness points the client at its scenario server through OPENAI_BASE_URL and
OPENAI_API_KEY; the only harness code is the one-line report of each tool run
(@side_effect, record_tool_run), which does nothing outside a test.
"""

import json
import os
import sys

import openai

from stream_harness.agents import record_tool_run, side_effect

TOOLS = [
    {"type": "function", "function": {"name": "issue_payment", "description": "Charge the customer.",
     "parameters": {"type": "object", "properties": {"customer": {"type": "string"},
                    "amount_cents": {"type": "integer"}}, "required": ["customer", "amount_cents"]}}},
    {"type": "function", "function": {"name": "forecast", "description": "The weather in a city.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
]


@side_effect
def issue_payment(customer: str, amount_cents: int) -> dict:
    return {"paid": amount_cents, "customer": customer}


def forecast(city: str) -> dict:
    record_tool_run("forecast", {"city": city})
    return {"city": city, "sky": "cloudy"}


def turn(client: openai.OpenAI, messages: list) -> tuple[str, list]:
    text, calls, finish = "", {}, None
    for chunk in client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS, stream=True):
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for d in choice.delta.tool_calls or ():
                call = calls.setdefault(d.index, {"id": "", "name": "", "arguments": ""})
                call["id"] += d.id or ""
                call["name"] += (d.function and d.function.name) or ""
                call["arguments"] += (d.function and d.function.arguments) or ""
            finish = choice.finish_reason or finish
    if finish is None:
        raise ConnectionError("the stream ended without a finish_reason")
    return text, list(calls.values())


def main(prompt: str) -> str:
    client, messages = openai.OpenAI(), [{"role": "user", "content": prompt}]
    for _ in range(12):
        for attempt in range(3):  # a stream that fails while read is ours to retry
            try:
                text, calls = turn(client, messages)
                break
            except (openai.APIConnectionError, ConnectionError, openai.APIError) as exc:
                if isinstance(exc, openai.APIStatusError) or attempt == 2:
                    raise  # the client has retried what is retryable already
        if not calls:
            return text
        messages.append({"role": "assistant", "content": text or None, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in calls]})
        for c in calls:
            result = {"issue_payment": issue_payment, "forecast": forecast}[c["name"]](**json.loads(c["arguments"]))
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": json.dumps(result)})
    raise RuntimeError("too many steps")


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else os.environ["STREAM_HARNESS_PROMPT"]))
'''

AGENT_TEST = """import pytest
from agent_app import main  # your agent's entry point: main(prompt) -> its answer

from stream_harness.agents.fault_builders import rate_limit, truncate


@pytest.mark.agent_scenarios()  # every bundled scenario; your tools bound to them by role
def test_agent_on_the_bundled_scenarios(agent_scenario):
    agent_scenario.run(main)
    agent_scenario.assert_conformant()


@pytest.mark.agent_scenarios(rate_limit(retry_after=1), truncate())
def test_agent_on_one_line_faults(agent_scenario):
    agent_scenario.run(main)
    agent_scenario.assert_conformant()
"""


def init_agent(root: Path) -> list[tuple[Path, str]]:
    """The files ``init --agent`` writes under ``root``."""
    return [(root / "agent_app.py", AGENT_APP), (root / "tests" / "test_agent.py", AGENT_TEST)]
