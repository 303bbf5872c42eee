"""The agent-framework adapters, Python and JS, each run against fixed, valid streaming bodies.

The loopback stub (tests/framework_stub_server.py) answers the first request with a
bundled ``get_weather`` tool call and the second with a bundled final text, in each
protocol's real SSE bytes, and keeps a ledger of tool executions. A framework that is not
installed here skips with the reason (each has its own pinned environment, specs/matrix.toml;
the test extra holds none of them); the registry's shape is checked everywhere. The JS
rows (adapters-js/agents/, one long-lived Node process each for the whole module) run
wherever Node and the folder's ``npm ci`` install are, and skip with the reason elsewhere.
"""

from __future__ import annotations

import copy
import importlib
import json
import tomllib
from typing import Any

import pytest

from framework_stub_server import (
    BODIES,
    LEDGER_RESULT,
    REFUSALS,
    final_answer_script,
    script,
    served,
    stub_server,
    tool_results,
)
from stream_harness.adapters.processes.js import missing as js_missing
from stream_harness.agents.frameworks import FRAMEWORKS, support
from stream_harness.agents.frameworks.support import conventions_for
from stream_harness.agents.js import JS_AGENTS
from stream_harness.agents.loading import AgentLoadError, load_agent
from stream_harness.agents.protocol import AgentAdapter, AgentLimits, AgentTask, AgentTool
from stream_harness.agents.registry import AGENTS
from stream_harness.contract.facts import load_yaml, spec_path

KNOWN_PROTOCOLS = set(BODIES)

# Arguments differ between the bundled tool calls ({"city"}, {"city", "unit"},
# {"location", "unit"}), so the declared schema allows each and requires none.
WEATHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "the city"},
        "location": {"type": "string", "description": "the place"},
        "unit": {"type": "string", "description": "c or f"},
    },
}


_STARTED: dict[str, Any] = {}


def load(name: str) -> Any:
    """The adapter named ``name``; a JS row's process is started once and kept (it is
    stopped at exit with every stdio process)."""
    if name in JS_AGENTS:
        problem = js_missing()
        if problem:
            pytest.skip(f"{name}: {problem}")
        if name not in _STARTED:
            _STARTED[name] = load_agent(name)
        return _STARTED[name]
    module, _, cls = AGENTS[name].partition(":")
    return getattr(importlib.import_module(module), cls)()


def speaks(adapter: Any, protocol: str) -> None:
    if protocol not in adapter.protocols:
        pytest.skip(f"{adapter.name} does not speak {protocol}")


@pytest.mark.parametrize("name", sorted(FRAMEWORKS) + sorted(JS_AGENTS))
def test_each_registered_adapter_loads_without_its_framework_and_declares_itself(name: str) -> None:
    adapter = load(name)
    assert isinstance(adapter, AgentAdapter)
    assert adapter.name == name
    assert adapter.protocols and set(adapter.protocols) <= KNOWN_PROTOCOLS
    assert adapter.settings.strip()
    conventions = adapter.conventions
    if name in JS_AGENTS:  # its entry's clients cover exactly what its process speaks
        assert set(conventions["by_protocol"]) == set(adapter.protocols), name
    # The policies the checks read, each with the line of source it comes from.
    for key in ("max_retries", "retries_after_partial_output", "retry_after_honoured"):
        assert key in conventions, key
    sources = conventions["sources"]
    assert {"max_retries", "retries_after_partial_output", "retry_after"} <= set(sources)
    assert all(isinstance(v, str) and v for v in sources.values())
    assert isinstance(adapter.version(), str)


def test_strands_imports_every_model_when_built_not_while_runs_go_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two whole-matrix runs lost a Strands run to two threads' first imports meeting
    (``partially initialized module 'httpx2'``); building the adapter imports each
    protocol's model, one at a time, and a framework not installed builds all the same."""
    from stream_harness.agents.frameworks import strands

    imported: list[tuple[str, bool]] = []

    def record(name: str) -> Any:
        imported.append((name, support._IMPORTING.locked()))
        raise ImportError(name)

    monkeypatch.setattr(support.importlib, "import_module", record)
    strands.StrandsAdapter()
    names = [n for n, _ in imported]
    for model in ("openai", "anthropic", "gemini", "bedrock"):
        assert f"strands.models.{model}" in names
    assert all(locked for _, locked in imported)


def test_the_conventions_table_covers_each_adapters_protocols_with_the_clients_its_group_pins() -> (
    None
):
    table = load_yaml("agent_conventions")
    groups = tomllib.loads(spec_path("matrix.toml").read_text(encoding="utf-8"))["groups"]
    pins = {
        agent: {r.split("==")[0].split("[")[0]: r.split("==")[1] for r in g["requirements"]}
        for g in groups.values()
        for agent in g.get("agents", [])
    }
    # Every Python row has its entry; JS rows keep theirs here too (agents/js.py reads them),
    # their protocols checked against the script's handshake by the JS registry test.
    assert set(FRAMEWORKS) <= set(table["frameworks"]) <= set(FRAMEWORKS) | set(JS_AGENTS)
    for name, entry in table["frameworks"].items():
        if name in FRAMEWORKS:
            assert set(entry["clients"]) == set(load(name).protocols), name
        # Every value of the framework's own has its source line.
        assert set(entry.get("conventions", {})) <= set(entry["sources"]), name
        for client in entry["clients"].values():
            assert client in table["clients"], (name, client)
            if client.startswith("anthropic-") and name in FRAMEWORKS:
                # The anthropic client's policy changed between majors: the entry named
                # must be the one of the version the group pins.
                assert pins[name]["anthropic"].split(".")[0] == client.split("-")[1], name
        for protocol, override in entry.get("protocols", {}).items():
            assert set(override) - {"sources"} <= set(override.get("sources", {})), (name, protocol)


@pytest.mark.parametrize(
    "where",
    ["clients", "conventions", "protocols"],
)
def test_an_unknown_retry_after_over_cap_is_one_line_naming_the_file_and_key(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """wt-fwb's old ``ignored`` / ``gives_up`` would read as "not capped" and change A9 and
    A10 verdicts silently: the file is refused instead, wherever the value is declared."""
    table = copy.deepcopy(load_yaml("agent_conventions"))
    assert conventions_for("strands")  # the bundled file is accepted as it is
    strands = table["frameworks"]["strands"]
    if where == "clients":
        table["clients"]["anthropic-0"]["retry_after_over_cap"] = "ignored"
        key = "clients.anthropic-0.retry_after_over_cap"
    elif where == "conventions":
        strands["conventions"]["retry_after_over_cap"] = "gives_up"
        key = "frameworks.strands.conventions.retry_after_over_cap"
    else:
        strands["protocols"]["google-generative-ai"]["retry_after_over_cap"] = "gives_up"
        key = "frameworks.strands.protocols.google-generative-ai.retry_after_over_cap"
    monkeypatch.setattr(support.facts, "load_yaml", lambda name: table)
    with pytest.raises(support.ConventionsError) as raised:
        conventions_for("agno")  # any row: the whole file is refused
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"specs/agent_conventions.yaml: {key} is ")
    assert "backoff, capped, give_up" in message


def test_every_registered_adapter_has_one_pinned_matrix_group_and_back() -> None:
    data = tomllib.loads(spec_path("matrix.toml").read_text(encoding="utf-8"))
    owners: dict[str, str] = {}
    for group, entry in data["groups"].items():
        for agent in entry.get("agents", []):
            assert agent not in owners, f"{agent} in {owners.get(agent)} and {group}"
            owners[agent] = group
            if agent == "reference":  # our own loop, in the group of the reference stream adapter
                continue
            if entry.get("npm"):  # pinned by the npm folder's package.json and lock file
                assert entry["requirements"] == [], group
            else:
                assert entry["requirements"] and all("==" in r for r in entry["requirements"]), (
                    group
                )
    # A configured row (agno[retries=1]) runs in its base row's group.
    bases = {name.partition("[")[0]: group for name, group in owners.items()}
    assert set(bases) == set(FRAMEWORKS) | set(JS_AGENTS) | {"reference"}
    assert all(owners[n] == bases[n.partition("[")[0]] for n in owners)


def _task(protocol: str, url: str) -> AgentTask:
    weather = AgentTool(
        name="get_weather",
        description="Current weather for a place.",
        parameters=WEATHER_SCHEMA,
        ledger_url=f"{url}/_ledger",
    )
    return AgentTask(
        scenario="stub-tool-then-text",
        protocol=protocol,
        base_url=url,
        model={
            "google-generative-ai": "gemini-2.5-flash",
            "anthropic-messages": "claude-sonnet-4-5",
        }.get(protocol, "gpt-4o-mini"),
        prompt="What is the weather in Paris?",
        tools=(weather,),
        system="You are a weather assistant.",
        limits=AgentLimits(max_turns=4, timeout_s=60.0),
    )


# Frameworks that fail these fixed, valid bodies for a reason of their own: findings,
# strict so that a fix shows up.
FINDINGS: dict[tuple[str, str], str] = {
    ("agno", "anthropic-messages"): (
        "agno's streamed run output joins the text of every turn with no separator: "
        '"I\'ll look up the weather in Paris.Hello! How can I help you today?"'
    ),
    ("js-mastra", "anthropic-messages"): (
        "Mastra's stream.text joins the text of every step: the tool turn's preamble comes "
        "before the answer (conformance_report/findings/js-mastra-step-text-joined.md)"
    ),
}


def _cases() -> list[Any]:
    """(row, protocol) pairs: a Python row's own protocols (known without its framework);
    every protocol for a JS row, whose protocols its process declares (``speaks`` skips)."""
    cases = []
    for name in sorted(FRAMEWORKS) + sorted(JS_AGENTS):
        protocols = sorted(KNOWN_PROTOCOLS) if name in JS_AGENTS else sorted(load(name).protocols)
        for protocol in protocols:
            finding = FINDINGS.get((name, protocol))
            marks = [pytest.mark.xfail(reason=finding, strict=True)] if finding else []
            cases.append(pytest.param(name, protocol, id=f"{name}-{protocol}", marks=marks))
    return cases


@pytest.mark.parametrize(("name", "protocol"), _cases())
def test_a_tool_call_then_a_final_text(name: str, protocol: str) -> None:
    adapter = load(name)
    speaks(adapter, protocol)
    # An agent whose runs end only through a final_answer tool gets one as its last turn.
    final_tool = adapter.conventions.get("ends_only_through_final_answer_tool", False)
    served = final_answer_script(protocol) if final_tool else script(protocol)
    try:
        with stub_server(served) as server:
            outcome = adapter.run_agent(_task(protocol, server.url))
    except ImportError as exc:
        pytest.skip(f"{name} not installed here: {exc}")
    tool_call, final = served
    (call,) = tool_call.tool_calls
    assert not outcome.raised, f"{outcome.error_type}: {outcome.error_message}"
    # The tool ran once, through the ledger, with the arguments served.
    assert server.ledger == [{"tool": "get_weather", "arguments": call.arguments}]
    # The second request carries the tool's result, paired to the served call id.
    requests = server.model_requests
    assert len(requests) == 2, [r["path"] for r in requests]
    if adapter.conventions.get("tool_results_as_text"):
        # Replayed as text: the call (with its served id) in the assistant's turn, the
        # result in the next user turn (smolagents' memory format).
        texts = [
            (m["role"], json.dumps(m["content"], ensure_ascii=False))
            for m in requests[1]["body"]["messages"]
        ]
        roles = [r for r, _ in texts]
        at = roles.index("assistant")
        assert call.id in texts[at][1] and LEDGER_RESULT in texts[at + 1][1], texts[at:]
        assert outcome.output == final.text
        return
    results = tool_results(protocol, requests[1]["body"])
    assert len(results) == 1, results
    call_id, tool_name, text = results[0]
    if protocol == "google-generative-ai":
        # Gemini pairs by name; an id, when sent, must be the served one.
        assert tool_name == "get_weather" and call_id in (None, call.id)
    else:
        assert call_id == call.id
    assert LEDGER_RESULT in text
    assert outcome.output == final.text


@pytest.mark.parametrize(("name", "protocol"), [c.values[:2] for c in _cases()])
def test_a_400_before_any_output_ends_the_run_as_the_frameworks_raise(
    name: str, protocol: str
) -> None:
    adapter = load(name)
    speaks(adapter, protocol)
    refusal = served(protocol, REFUSALS[protocol])
    assert refusal.status == 400
    try:
        with stub_server([refusal]) as server:
            outcome = adapter.run_agent(_task(protocol, server.url))
    except ImportError as exc:
        pytest.skip(f"{name} not installed here: {exc}")
    # A 400 is retried by no SDK client: one request, no tool, and the run ends raised
    # (the row names the framework's exception), never as an answer.
    assert outcome.raised and outcome.error_type, outcome
    assert outcome.output is None
    assert server.ledger == []
    assert len(server.model_requests) == 1, [r["path"] for r in server.model_requests]


@pytest.mark.parametrize(("name", "protocol"), _cases())  # the answer is compared too
def test_a_failing_tool_is_handled_as_the_adapters_conventions_say(
    name: str, protocol: str
) -> None:
    adapter = load(name)
    speaks(adapter, protocol)
    policy = adapter.conventions.get("tool_failure")
    if policy is None:
        pytest.skip(f"{name} declares no tool_failure convention")
    final_tool = adapter.conventions.get("ends_only_through_final_answer_tool", False)
    responses = final_answer_script(protocol) if final_tool else script(protocol)
    try:
        with stub_server(responses, ledger_error="weather service down") as server:
            outcome = adapter.run_agent(_task(protocol, server.url))
    except ImportError as exc:
        pytest.skip(f"{name} not installed here: {exc}")
    (call,) = responses[0].tool_calls
    # The tool ran once, and failed, whatever the framework then does.
    assert server.ledger == [{"tool": "get_weather", "arguments": call.arguments}]
    if policy == "raises":
        assert outcome.raised and outcome.output is None, outcome
        assert len(server.model_requests) == 1
    else:
        # The failure went back to the model, which answered: the run ends normally.
        assert not outcome.raised, f"{outcome.error_type}: {outcome.error_message}"
        assert len(server.model_requests) == 2
        assert outcome.output == responses[1].text


@pytest.mark.parametrize("name", sorted(JS_AGENTS))
def test_a_js_row_without_node_is_one_line_naming_what_is_missing(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STREAM_HARNESS_NODE", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(AgentLoadError) as caught:
        load_agent(name)
    message = str(caught.value)
    assert "\n" not in message and "node is not on PATH" in message and name in message
