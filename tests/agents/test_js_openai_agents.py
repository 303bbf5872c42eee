"""The js-openai-agents row's own wiring (adapters-js/agents/openai-agents.mjs).

The registry-wide JS test runs the bundled weather_tool_call on each protocol; what it
cannot show is the one thing the script adds to the task: the Agents SDK sends a plain
JSON schema exactly as given when strict mode is off, so a tool schema without an object
root (valid JSON Schema, and what a scenario may write) would reach the API without
``type: object``, which OpenAI rejects. The script gives every tool an object root, as
the Python row's ``schema()`` does. Needs Node and the adapters-js install; skips without.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stream_harness.adapters.processes.js import missing
from stream_harness.agents.conformance.runner import observe
from stream_harness.agents.js import js_agent
from stream_harness.agents.scenario.model import load_agent_scenario

pytestmark = pytest.mark.skipif(missing() is not None, reason=f"JS agents unavailable: {missing()}")

SCENARIO = """\
kind: agent
description: A tool whose schema has properties but no object root.
prompt: What is the weather in Paris?
tools:
  get_weather:
    description: The current weather in a city.
    schema: {properties: {city: {type: string}}}
    returns: {sky: cloudy}
responses:
  - script:
      tool_calls: [{id: call_w1, name: get_weather, arguments: {city: Paris}}]
  - script: {text: "Cloudy in Paris."}
"""


def _declared_parameters(protocol: str, body: dict[str, Any]) -> dict[str, Any]:
    (declared,) = body["tools"]
    if protocol == "openai-completions":
        return dict(declared["function"]["parameters"])
    return dict(declared["parameters"])


@pytest.mark.parametrize("protocol", ["openai-completions", "openai-responses"])
def test_a_tool_schema_without_an_object_root_is_sent_with_one(
    tmp_path: Path, protocol: str
) -> None:
    path = tmp_path / "rootless_schema.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    agent = js_agent("js-openai-agents")
    try:
        run = observe(agent, load_agent_scenario(path), protocol)
    finally:
        agent.close()
    assert run.outcome is not None and run.outcome.output == "Cloudy in Paris.", run.crash
    parameters = _declared_parameters(protocol, json.loads(run.requests[0].body))
    assert parameters["type"] == "object"
    assert parameters["properties"] == {"city": {"type": "string"}}
    assert [(e.tool, e.arguments) for e in run.ledger] == [("get_weather", {"city": "Paris"})]
