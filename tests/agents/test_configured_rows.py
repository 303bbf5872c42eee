"""Rows at the configurations users set (``agno[retries=1]``): declared once, with the
conventions they imply and their sources, in specs/agent_conventions.yaml; run by the
matrix in their base row's group; named everywhere a row name goes; refused in one line
when not declared. Parametrized over the declarations, so a new configuration is covered
by adding it to the facts file.
"""

from __future__ import annotations

import copy
import importlib
import tomllib
from typing import Any

import pytest

from framework_stub_server import REFUSALS, served, stub_server
from stream_harness.adapters.processes.js import missing as js_missing
from stream_harness.agents import configuration
from stream_harness.agents.configuration import (
    declared,
    is_known_row,
    options_of,
    row_name,
    split_row,
)
from stream_harness.agents.conformance.runner import reproduce
from stream_harness.agents.frameworks import FRAMEWORKS, support
from stream_harness.agents.js import JS_AGENTS
from stream_harness.agents.loading import AgentLoadError, load_agent
from stream_harness.agents.protocol import AgentLimits, AgentTask, AgentTool
from stream_harness.agents.registry import AGENTS
from stream_harness.cli.main import main
from stream_harness.conformance.expectations import adapter_from_file_name, expectation_file_name
from stream_harness.contract.facts import load_yaml, spec_path


def _declared() -> list[tuple[str, str]]:
    table = load_yaml("agent_conventions")["frameworks"]
    return sorted(
        (base, c) for base, entry in table.items() for c in (entry.get("configurations") or {})
    )


DECLARED = _declared()
ROWS = [row_name(b, c) for b, c in DECLARED]


def _load(row: str) -> Any:
    """The row as ``load_agent`` builds it; where its framework is not installed (load_agent
    then refuses it in one line), built the same way past that check: the configuration is
    the harness's, not the framework's, and is checked everywhere."""
    base, config = split_row(row)
    if base not in FRAMEWORKS or support.missing_framework(base) is None:
        return load_agent(row)
    module, _, cls = AGENTS[base].partition(":")
    factory = getattr(importlib.import_module(module), cls)
    if config is None:
        return factory()
    adapter = factory(options=options_of(config))
    configuration.configure(adapter, base, config)
    return adapter


def test_the_rows_the_issue_names_are_declared() -> None:
    """Agent-level and model-level retries of agno, pydantic-ai, LangGraph, the OpenAI
    Agents SDK and Strands, and the AI SDK's maxRetries (issue 33, item 4)."""
    bases = {b for b, _ in DECLARED}
    assert {
        "agno", "pydantic-ai-agent", "langgraph", "openai-agents", "strands", "js-ai-sdk-agent"
    } <= bases  # fmt: skip
    assert {"agno[retries=1]", "agno[model.retries=1]", "js-ai-sdk-agent[maxRetries=5]"} <= set(
        ROWS
    )
    for base in bases - {"js-ai-sdk-agent"}:
        assert len(declared(base)) >= 2, base


@pytest.mark.parametrize(("base", "config"), DECLARED, ids=ROWS)
def test_each_declared_configuration_loads_as_a_row_of_its_own(base: str, config: str) -> None:
    row = row_name(base, config)
    if base in JS_AGENTS and js_missing():
        pytest.skip(f"{row}: {js_missing()}")
    adapter: Any = _load(row)
    try:
        assert adapter.name == row
        assert f"configuration {config}: " in adapter.settings
        if base in FRAMEWORKS:  # what the framework is built with
            assert adapter.options == options_of(config)
        else:  # what the script is started with
            assert "--options" in adapter.argv
        entry = declared(base)[config]
        implied = dict(entry.get("conventions") or {})
        sources = {**(entry.get("sources") or {})}
        # Every implied value has its source, and the checks read it on every protocol
        # (a per-protocol override, with its own source, where the client differs).
        assert set(implied) <= set(sources), row
        by_protocol = adapter.conventions["by_protocol"]
        for protocol, policy in by_protocol.items():
            override = (entry.get("protocols") or {}).get(protocol) or {}
            assert set(override) - {"sources"} <= set(override.get("sources") or {}), protocol
            for key, value in {**implied, **override}.items():
                if key != "sources":
                    assert policy[key] == value, (protocol, key)
        for key, value in implied.items():
            assert adapter.conventions[key] == value
    finally:
        close = getattr(adapter, "close", None)
        if callable(close):
            close()


def test_a_configuration_leaves_the_base_row_as_it_was() -> None:
    base: Any = _load("agno")
    configured = _load("agno[retries=1]")
    assert base.name == "agno" and base.options == {}
    assert "configuration" not in base.settings
    assert base.conventions["by_protocol"]["openai-completions"]["max_retries"] == 2
    assert configured.conventions["by_protocol"]["openai-completions"]["max_retries"] == 5
    assert configured.conventions["by_protocol"]["google-generative-ai"]["max_retries"] == 1


@pytest.mark.parametrize(
    "row", ["pydantic-ai-agent[http.retries=2]", "strands[client_args.max_retries=5]"]
)
def test_a_setting_with_nowhere_to_go_on_a_protocol_takes_that_protocol_off_the_row(
    row: str,
) -> None:
    """pydantic-ai's retrying httpx transport and Strands' client_args have no place on
    Bedrock (a boto3 client): run there, the row would be its base row judged by the
    configuration's declared retries, so it does not speak bedrock-converse-stream."""
    assert "bedrock-converse-stream" in _load(split_row(row)[0]).protocols
    configured = _load(row)
    assert "bedrock-converse-stream" not in configured.protocols
    assert configured.protocols == _load(split_row(row)[0]).protocols - {"bedrock-converse-stream"}
    assert (
        "bedrock-converse-stream" in _load("strands[ModelRetryStrategy.max_attempts=3]").protocols
    )


def test_every_declared_configuration_runs_in_its_base_rows_matrix_group_and_back() -> None:
    groups = tomllib.loads(spec_path("matrix.toml").read_text(encoding="utf-8"))["groups"]
    listed = {a: g for g, entry in groups.items() for a in entry.get("agents", [])}
    configured = {a for a in listed if split_row(a)[1] is not None}
    assert configured == set(ROWS)
    for row in configured:
        assert listed[row] == listed[split_row(row)[0]], row


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("agno[retries=9]", "unknown configuration 'retries=9' of 'agno' (known: agno[model.retries=1], agno[retries=1])"),
        ("smolagents[retries=1]", "unknown configuration 'retries=1' of 'smolagents' (known: none)"),
        ("nosuch[retries=1]", "'nosuch' is not a known name"),
    ],
)  # fmt: skip
def test_an_unknown_configuration_is_one_line_listing_the_known_ones(
    name: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(AgentLoadError) as raised:
        load_agent(name)
    assert expected in str(raised.value) and "\n" not in str(raised.value)
    # The CLI: the same line, exit 2, no traceback, nothing run.
    assert main(["agents", "--agent", name, "--scenarios", "weather_tool_call"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and expected in err and "Traceback" not in err


def test_a_declared_setting_the_adapter_cannot_apply_is_refused_not_ignored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = copy.deepcopy(load_yaml("agent_conventions"))
    table["frameworks"]["agno"]["configurations"]["delay=1"] = {"settings": "a typo"}
    monkeypatch.setattr(configuration.facts, "load_yaml", lambda name: table)
    monkeypatch.setattr(support.facts, "load_yaml", lambda name: table)
    with pytest.raises(AgentLoadError) as raised:
        load_agent("agno[delay=1]")
    message = str(raised.value)
    assert "\n" not in message and "no option 'delay'" in message and "model.retries" in message


@pytest.mark.parametrize("row", ROWS)
def test_a_configured_row_name_works_where_a_row_name_goes(row: str) -> None:
    assert is_known_row(row)
    # Its expectations file, and back.
    assert adapter_from_file_name(expectation_file_name(row)) == row
    # Its reproduce command, quoted for a shell (brackets are glob characters).
    scenario: Any = type("S", (), {"path": spec_path("matrix.toml")})()
    assert f"--agent '{row}'" in reproduce(row, scenario, "openai-completions", "A9")


def test_options_are_read_from_the_name() -> None:
    assert options_of("retries=1") == {"retries": 1}
    assert options_of("a.b=0.5,c=true,d=x") == {"a.b": 0.5, "c": True, "d": "x"}
    assert split_row("agno[retries=1]") == ("agno", "retries=1")
    assert split_row("agno") == ("agno", None)
    with pytest.raises(configuration.ConfigurationError):
        options_of("retries")


def _task(protocol: str, url: str) -> AgentTask:
    tool = AgentTool(
        "get_weather", "Weather.", {"type": "object", "properties": {}}, f"{url}/_ledger"
    )
    return AgentTask(
        scenario="stub", protocol=protocol, base_url=url, model="gpt-4o-mini",
        prompt="Weather?", tools=(tool,), system=None,
        limits=AgentLimits(max_turns=4, timeout_s=60.0),
    )  # fmt: skip


def test_the_configured_setting_reaches_the_framework_and_its_declared_retries_hold() -> None:
    """pydantic-ai's documented retrying transport retries what raise_for_status raises,
    a 400 too, inside each of the openai client's attempts: the declared max_retries (8)
    is what the row does, and the row at its defaults sends the 400 once."""
    pytest.importorskip("pydantic_ai.retries")
    protocol = "openai-completions"
    refusal = served(protocol, REFUSALS[protocol])
    for row, sent in (("pydantic-ai-agent", 1), ("pydantic-ai-agent[http.retries=2]", None)):
        adapter = load_agent(row)
        limit = adapter.conventions["by_protocol"][protocol]["max_retries"]
        with stub_server([refusal] * 12) as server:
            outcome = adapter.run_agent(_task(protocol, server.url))
        assert outcome.raised, outcome
        assert len(server.model_requests) == (sent or 1 + limit), row


def test_a_configurations_unknown_retry_after_over_cap_is_refused_like_the_rows_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = copy.deepcopy(load_yaml("agent_conventions"))
    entry = table["frameworks"]["agno"]["configurations"]["retries=1"]
    entry["conventions"]["retry_after_over_cap"] = "gives_up"
    monkeypatch.setattr(support.facts, "load_yaml", lambda name: table)
    with pytest.raises(support.ConventionsError) as raised:
        support.conventions_for("agno")
    assert str(raised.value).startswith(
        "specs/agent_conventions.yaml: frameworks.agno.configurations.retries=1.conventions.retry_after_over_cap is "
    )
