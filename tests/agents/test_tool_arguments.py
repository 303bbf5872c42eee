"""A row's tools receive what its framework passes, as a user's own tool would.

The adapters build each task tool as a user writes one (``support.user_function``: one
named parameter per schema property), so a framework's way of calling it is the row's
behaviour, not an artefact of our wrapper. The case that shows the difference: a
single-parameter tool whose call the model streamed as a raw string. smolagents calls
``tool("Paris")`` there, which a user's ``forward(self, city)`` binds to ``city``; a
wrapper taking only ``**arguments`` raised instead, and the row showed a failure no user
sees. The other frameworks refuse or reject such arguments themselves: what reaches the
tool, if anything, is the argument bound to its parameter.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from framework_stub_server import Served, script, stub_server
from stream_harness.adapters.processes.js import missing as js_missing
from stream_harness.agents.frameworks import FRAMEWORKS
from stream_harness.agents.frameworks.support import missing_framework, user_function
from stream_harness.agents.js import JS_AGENTS
from stream_harness.agents.loading import load_agent
from stream_harness.agents.protocol import AgentLimits, AgentTask, AgentTool
from stream_harness.contract.events import ToolCall

PROTOCOL = "openai-completions"
CITY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "the city"}},
    "required": ["city"],
}

# What each row's framework hands its tool for a raw-string argument of a single-parameter
# tool, observed in each row's pinned environment (2026-11-28): smolagents binds it to the
# parameter (``tool("Paris")``); the AI SDK and the OpenAI Agents SDK for JS pass the value
# on as the tool's input, unvalidated (their JSON schemas are not checked without a
# validator); LlamaIndex calls the tool with no arguments at all (its parse of a non-object
# is ``{}``: a user's ``get_weather(city)`` would raise there, the row's tool, whose
# parameters are all optional, runs); the others call no tool (agno, langgraph,
# openai-agents, strands, autogen, js-langgraph and js-mastra refuse the arguments;
# pydantic-ai's ``Tool.from_schema`` raises its own TypeError, ``run_in_executor()
# argument after ** must be a mapping``). google-adk speaks no Chat Completions.
PASSED: dict[str, list[Any]] = {
    "smolagents": [{"city": "Paris"}],
    "llamaindex": [{}],
    "js-ai-sdk-agent": ["Paris"],
    "js-ai-sdk-tool-loop-agent": ["Paris"],
    "js-openai-agents": ["Paris"],
}
REFUSED: frozenset[str] = frozenset(
    {
        "agno",
        "langgraph",
        "openai-agents",
        "strands",
        "autogen",
        "pydantic-ai-agent",
        "js-langgraph",
        "js-mastra",
    }
)


class Ledger:
    """Stands in for the scenario server's ledger: what the tool function was given."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def tool(self, schema: dict[str, Any]) -> AgentTool:
        ledger = self

        class Recording(AgentTool):
            def call(self, arguments: Any, *, timeout: float = 30.0) -> str:
                ledger.calls.append(dict(arguments))
                return "ok"

        return Recording("get_weather", "Weather.", schema, "http://127.0.0.1:9/_ledger")


def test_a_raw_string_binds_to_the_single_parameter_as_in_a_users_function() -> None:
    ledger = Ledger()
    call = user_function(ledger.tool(CITY_SCHEMA))
    call("Paris")  # smolagents' tool(arguments) with a raw string
    call(city="Lyon")  # every framework's keyword call
    call()  # a missing argument reaches the tool as a user's defaulted parameter sees it
    call(city="Nice", unit="c")  # a key outside the schema is passed on, not dropped
    assert ledger.calls == [{"city": "Paris"}, {"city": "Lyon"}, {}, {"city": "Nice", "unit": "c"}]
    with pytest.raises(TypeError):  # two positional values for one parameter, as for a user
        call("Paris", "Lyon")


def test_the_parameters_follow_the_schema_and_keys_that_are_no_identifiers_still_pass() -> None:
    ledger = Ledger()
    schema = {"type": "object", "properties": {"b": {}, "a": {}, "not-an-id": {}}}
    call = user_function(ledger.tool(schema))
    call(1, 2, **{"not-an-id": 3})
    assert ledger.calls == [{"b": 1, "a": 2, "not-an-id": 3}]


def _raw_string_call() -> Served:
    """A Chat Completions tool call whose arguments are the JSON string ``"Paris"``."""
    head = {
        "id": "chatcmpl-raw",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "gpt-4o-mini",
    }
    call = {"index": 0, "id": "call_raw1", "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps("Paris")}}  # fmt: skip
    chunks = [
        {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}, "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]  # fmt: skip
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    calls = (ToolCall(id="call_raw1", name="get_weather", arguments={}),)
    return Served(body.encode(), "text/event-stream", calls, "")


def _rows() -> list[str]:
    return sorted(FRAMEWORKS) + sorted(JS_AGENTS)


@pytest.mark.parametrize("name", _rows())
def test_each_rows_tool_receives_what_its_framework_passes(name: str) -> None:
    if name in JS_AGENTS and js_missing():
        pytest.skip(f"{name}: {js_missing()}")
    missing = missing_framework(name)
    if missing is not None:
        pytest.skip(str(missing))
    adapter = load_agent(name)
    try:
        if PROTOCOL not in adapter.protocols:
            pytest.skip(f"{name} does not speak {PROTOCOL}")
        final = script(PROTOCOL)[1]
        responses = [_raw_string_call(), final, final, final]
        try:
            with stub_server(responses) as server:
                task = AgentTask(
                    scenario="raw-string-argument", protocol=PROTOCOL, base_url=server.url,
                    model="gpt-4o-mini", prompt="Weather in Paris?",
                    tools=(AgentTool("get_weather", "Weather.", CITY_SCHEMA, f"{server.url}/_ledger"),),
                    system=None, limits=AgentLimits(max_turns=4, timeout_s=60.0),
                )  # fmt: skip
                outcome = adapter.run_agent(task)
        except ImportError as exc:
            pytest.skip(f"{name} not installed here: {exc}")
    finally:
        close = getattr(adapter, "close", None)
        if callable(close):
            close()
    executed = [entry["arguments"] for entry in server.ledger]
    # Never a raise of our own wrapper (a TypeError about positional arguments) shown as
    # the framework's, and each row's tool gets what its framework passes.
    assert "positional argument" not in (outcome.error_message or ""), outcome
    assert name in PASSED or name in REFUSED, f"{name}: observe it and add it to PASSED or REFUSED"
    assert executed == PASSED.get(name, []), (executed, outcome)
