"""Binding the scenarios' calls to the agent's own tools (agents/binding.py), and the
request shapes app mode reads (the offered tools, the protocol of a path)."""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_harness.agents.app import served_protocol
from stream_harness.agents.binding import (
    BindingError,
    OfferedTool,
    ToolBinding,
    bind_scenario,
    fit_arguments,
    offered_tools,
    parse_tool_mapping,
)
from stream_harness.agents.exchange import PATHS, ToolSchema, encode_request
from stream_harness.agents.scenario.model import bundled_agent_scenarios, load_agent_scenario
from stream_harness.agents.scenario.render import PROTOCOLS
from stream_harness.loop.messages import UserMessage

REFUND = OfferedTool(
    "refund_order",
    "Refund an order to the customer.",
    {
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "cents": {"type": "integer", "minimum": 1}},
        "required": ["order_id", "cents"],
    },
)
LOOKUP = OfferedTool(
    "lookup_order",
    "Read an order's status.",
    {
        "type": "object",
        "properties": {"order_id": {"type": "string", "minLength": 3}},
        "required": ["order_id"],
    },
)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_offered_tools_are_read_back_from_every_protocols_request(protocol):
    tools = [ToolSchema(t.name, t.description, t.schema) for t in (REFUND, LOOKUP)]
    _, body = encode_request(protocol, "m", [UserMessage(content="hi")], tools)
    read = offered_tools(body)
    assert [t.name for t in read] == ["refund_order", "lookup_order"]
    assert read[0].schema["required"] == ["order_id", "cents"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_protocol_of_each_request_path_is_found(protocol):
    assert served_protocol(PATHS[protocol].format(model="m").split("?")[0]) == protocol


def test_auto_binds_the_payment_to_the_effect_tool_and_the_weather_to_the_read_tool():
    scenario = load_agent_scenario(bundled_agent_scenarios() / "three_tool_turns.yaml")
    bound = bind_scenario(scenario, [LOOKUP, REFUND], ToolBinding())
    assert {t.name: t.side_effect for t in bound.tools} == {
        "lookup_order": False,
        "refund_order": True,
    }
    calls = [c for r in bound.spec.responses if r.script for c in r.script.tool_calls]
    assert [c.name for c in calls] == ["lookup_order", "refund_order", "lookup_order"]
    for call in calls:
        schema = (REFUND if call.name == "refund_order" else LOOKUP).schema
        jsonschema.validate(call.arguments, schema)
    # the scripted values are reused where a type matches, so different calls stay different
    assert calls[1].arguments == {"order_id": "cus_ada_lovelace", "cents": 4200}


def test_a_mapping_wins_over_the_roles():
    scenario = load_agent_scenario(bundled_agent_scenarios() / "three_tool_turns.yaml")
    bound = bind_scenario(scenario, [LOOKUP, REFUND], ToolBinding({"charge_card": "lookup_order"}))
    calls = [c.name for r in bound.spec.responses if r.script for c in r.script.tool_calls]
    assert calls[1] == "lookup_order"


def test_a_tool_offered_under_the_scenarios_name_stays_bound_to_it():
    scenario = load_agent_scenario(bundled_agent_scenarios() / "three_tool_turns.yaml")
    same = OfferedTool("charge_card", "", {"type": "object"})
    bound = bind_scenario(scenario, [same, REFUND, LOOKUP], ToolBinding())
    assert "charge_card" in {t.name for t in bound.tools}


@pytest.mark.parametrize("bad", ["charge_card", "=x", "charge_card="])
def test_a_malformed_tool_mapping_is_one_line_naming_it(bad):
    with pytest.raises(BindingError, match=f"--tool {bad}: give SCENARIO_TOOL=YOUR_TOOL"):
        parse_tool_mapping([bad])


def test_a_mapping_of_a_tool_no_scenario_has_is_refused():
    scenario = load_agent_scenario(bundled_agent_scenarios() / "three_tool_turns.yaml")
    with pytest.raises(BindingError, match="no scenario has a tool 'charge'"):
        ToolBinding({"charge": "x"}).check([scenario])


_SCHEMAS = st.fixed_dictionaries(
    {
        "type": st.just("object"),
        "properties": st.dictionaries(
            st.sampled_from(["a", "b", "city", "amount"]),
            st.sampled_from(
                [
                    {"type": "string", "minLength": 2, "maxLength": 9},
                    {"type": "integer", "minimum": 3, "maximum": 7},
                    {"type": "number"},
                    {"type": "boolean"},
                    {"enum": ["x", "y"]},
                    {"type": "array", "items": {"type": "string"}, "minItems": 1},
                    {"type": ["string", "null"]},
                    {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                ]
            ),
            max_size=4,
        ),
    }
).map(lambda s: {**s, "required": sorted(s["properties"])})


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])  # a loaded CI box
@given(
    _SCHEMAS,
    st.dictionaries(
        st.sampled_from(["a", "city", "n"]), st.one_of(st.text(max_size=5), st.integers())
    ),
)
def test_fitted_arguments_are_valid_for_the_offered_schema(schema, scripted):
    jsonschema.validate(fit_arguments(scripted, schema), schema)


def test_the_payment_chooses_first_when_every_offered_tool_changes_something():
    scenario = load_agent_scenario(bundled_agent_scenarios() / "three_tool_turns.yaml")
    send = OfferedTool("send_invoice", "Send an invoice.", {"type": "object"})
    bound = bind_scenario(scenario, [send, REFUND], ToolBinding())
    # the payment takes the first effect-like tool; the weather the one left, as no payment
    assert {t.name: t.side_effect for t in bound.tools} == {
        "send_invoice": True,
        "refund_order": False,
    }


def test_an_agent_offering_no_tools_leaves_the_scenario_as_written():
    scenario = load_agent_scenario(bundled_agent_scenarios() / "three_tool_turns.yaml")
    assert bind_scenario(scenario, [], ToolBinding()) is scenario
