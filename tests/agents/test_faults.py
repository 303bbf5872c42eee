"""Fault placement as data: the old keys are sugar for the new model, every fault the model
offers renders, and what each rendering says it delivered is what our normalizer reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
import yaml

from stream_harness.agents.conformance.checks import judge
from stream_harness.agents.conformance.runner import observe
from stream_harness.agents.protocol import AgentOutcome, AgentTask
from stream_harness.agents.scenario.faults import (
    ByteAt,
    CallFault,
    FaultSpec,
    InCall,
    canonical_yaml,
    compact,
    fault_space,
    id_way,
    normalize,
    place_offset,
    unexpressible,
)
from stream_harness.agents.scenario.model import ScenarioError, load_agent_scenario
from stream_harness.agents.scenario.render import (
    PROTOCOLS,
    Fault,
    Script,
    ScriptedCall,
    Served,
    render,
    served_from_bytes,
)
from stream_harness.agents.server import AgentServer, ScriptedAnswer
from stream_harness.cli.main import main
from stream_harness.contract.facts import bundled_cassettes, load_yaml

ARGS = {"customer": 'cus_"ada"', "amount_cents": 4200, "note": "x"}
SCHEMA = {
    "type": "object",
    "properties": {"customer": {"type": "string"}, "amount_cents": {"type": "integer"}},
    "required": ["customer", "amount_cents"],
}
CALLS = (
    ScriptedCall("call_1", "charge_card", {"customer": "cus_ada", "amount_cents": 4200}),
    ScriptedCall("call_2", "charge_card", ARGS),
)
SCRIPT = Script(text="Charging now.", tool_calls=CALLS)


def fault_of(spec: FaultSpec) -> Fault:
    return Fault(
        cut_at=spec.cut_at,
        cut_in_tool_args=spec.cut_in_tool_args,
        error_event=spec.error_event_after_200,
        length_stop_in_tool_call=spec.length_stop_in_tool_call,
        no_terminal_event=spec.no_terminal_event,
        place=spec.place,
        ending=spec.ending,
        error_kind=spec.kind,
    )


def account(s: Served) -> tuple[Any, ...]:
    calls = tuple((c.id, c.name, dict(c.arguments), c.delivered) for c in s.calls)
    return (s.chunks, s.cut, s.reset, s.complete, s.stop, calls, s.text, s.retryable)


SUGAR = [
    FaultSpec(cut_at=90),
    FaultSpec(cut_in_tool_args=True),
    FaultSpec(cut_in_tool_args=2),
    FaultSpec(error_event_after_200="overloaded"),
    FaultSpec(length_stop_in_tool_call=True),
    FaultSpec(no_terminal_event=True),
]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("sugar", SUGAR, ids=lambda f: canonical_yaml(f))
def test_an_old_key_renders_as_the_new_model_it_stands_for(protocol: str, sugar: FaultSpec) -> None:
    spelled = yaml.safe_load(canonical_yaml(sugar, calls=len(CALLS)))
    assert not set(spelled) & set(sugar.model_dump(exclude_defaults=True))
    new = FaultSpec.model_validate(spelled)
    assert account(render(protocol, SCRIPT, fault_of(sugar))) == account(
        render(protocol, SCRIPT, fault_of(new))
    )


def test_named_places_fall_where_their_names_say() -> None:
    text = compact(ARGS)
    assert text == '{"customer":"cus_\\"ada\\"","amount_cents":4200,"note":"x"}'

    def head(at: Any) -> str:
        offset = place_offset(ARGS, at, 12)
        assert offset is not None
        return text[:offset]

    assert head("last_value") == '{"customer":"cus_\\"ada\\"","amount_cents":4200,"note":"'
    assert head("number") == '{"customer":"cus_\\"ada\\"","amount_cents":42'
    assert head("escape") == '{"customer":"cus_\\'
    assert not head("string").endswith("\\")  # never inside an escape
    assert head("between_keys") == '{"customer":"cus_\\"ada\\"",'
    assert head(5) == text[:5]
    assert place_offset({"a": 1}, "last_value", 12) is None  # one character: no inside
    assert place_offset({"a": "b"}, "escape", 12) is None
    assert place_offset({"a": 1}, "between_keys", 12) is None
    assert place_offset({"a": 1}, 99, 12) is None


def test_a_length_stop_inside_the_last_value_leaves_every_key_but_a_wrong_amount() -> None:
    """The issue's case: the cut keeps every required key, so only "not delivered" stops it."""
    call = ScriptedCall("c", "charge_card", {"customer": "cus_ada", "amount_cents": 4200})
    script = Script(tool_calls=(call,))
    fault = Fault(place=InCall(call=1, at="last_value"), ending="length")
    served = render("openai-completions", script, fault)
    streamed = "".join(
        d["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
        for chunk in served.chunks
        if chunk.startswith(b"data: {") and b'"arguments":"' in chunk
        for d in [json.loads(chunk[6:])]
    )
    assert streamed == '{"customer":"cus_ada","amount_cents":42'
    assert served.stop == "length" and not served.calls[0].delivered


def space() -> list[tuple[str, FaultSpec]]:
    calls = [(c.arguments, SCHEMA) for c in CALLS]
    out = [(p, f) for p in PROTOCOLS for f in fault_space(calls, p) if f.mutate is None]
    # A byte place is valid at every byte; three of them stand for all.
    return [
        (p, f.model_copy(update={"place": ByteAt(byte=b)}) if isinstance(f.place, ByteAt) else f)
        for p, f in out
        for b in ((1, 77, 300) if isinstance(f.place, ByteAt) else (0,))
    ]


@pytest.mark.parametrize(
    ("protocol", "fault"),
    space(),
    ids=lambda x: x if isinstance(x, str) else canonical_yaml(x).replace(" ", ""),
)
def test_every_fault_offered_renders_and_says_what_the_normalizer_reads(
    protocol: str, fault: FaultSpec
) -> None:
    served = render(protocol, SCRIPT, fault_of(fault))
    read = served_from_bytes(
        protocol, 200, dict(served.headers), b"".join(served.chunks), cut=served.cut
    )
    assert read.complete == served.complete
    assert read.retryable == served.retryable
    assert served.reset == (fault.ending == "rst" and served.cut)
    scripted = {c.id: c for c in served.calls}
    per_call_end = protocol != "openai-completions" or served.complete
    for call in read.calls:
        if per_call_end:
            assert call.delivered == scripted[call.id].delivered, call.id
        assert call.strict == scripted[call.id].strict, call.id
    assert not any(c.delivered for c in served.calls if c.id not in {c.id for c in read.calls})


@pytest.mark.parametrize(
    "fault",
    [
        FaultSpec(place=InCall(call=1, at="last_value"), ending="finish"),
        FaultSpec(place=InCall(call=2, at="number"), ending="length"),
        FaultSpec(ending="length"),
        FaultSpec(place="after_text", ending="error_event", kind="rate_limit"),
        FaultSpec(place=ByteAt(byte=120), ending="rst"),
        FaultSpec(mutate=CallFault(call=2, id="reused")),
    ],
    ids=lambda f: canonical_yaml(f),
)
def test_the_canonical_yaml_loads_back_to_the_same_fault(fault: FaultSpec) -> None:
    text = canonical_yaml(fault)
    assert "\n" not in text
    assert FaultSpec.model_validate(yaml.safe_load(text)) == fault


def test_finish_on_a_cut_call_and_complete_call_then_length() -> None:
    finished = render(
        "anthropic-messages", SCRIPT, Fault(place=InCall(call=1, at="last_value"), ending="finish")
    )
    assert finished.complete and finished.stop == "tool_use"
    # Delivered, its text not JSON (A13 judges it); call 2 never came.
    assert [(c.delivered, c.strict) for c in finished.calls] == [(True, False)]
    then_length = render("anthropic-messages", SCRIPT, Fault(ending="length"))
    assert then_length.stop == "length" and not then_length.complete
    assert [c.delivered for c in then_length.calls] == [True, True]


def test_gemini_cannot_finish_a_cut_call_and_says_so() -> None:
    fault = FaultSpec(place=InCall(call=1, at="last_value"), ending="finish")
    why = unexpressible(normalize(fault, 1) or pytest.fail(), "google-generative-ai")
    assert why is not None and "whole calls" in why
    with pytest.raises(ValueError, match="whole calls"):
        render("google-generative-ai", SCRIPT, fault_of(fault))
    assert not any(
        f.ending == "finish" for f in fault_space([(ARGS, SCHEMA)], "google-generative-ai")
    )


def write(
    tmp_path: Path, fault: str, calls: str = "[{id: c1, name: pay, arguments: {a: 1}}]"
) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(
        "kind: agent\ntools: {pay: {schema: {type: object, required: [a]}}}\n"
        f"responses:\n  - script: {{tool_calls: {calls}}}\n    fault: {fault}\n"
    )
    return path


@pytest.mark.parametrize(
    ("fault", "where", "says"),
    [
        ("{place: {call: 1, at: 3}}", "responses.0.fault", "a place needs an ending"),
        ("{ending: error_event}", "responses.0.fault", "needs a kind"),
        ("{ending: finish}", "responses.0.fault", "needs a place inside a call"),
        ("{place: {byte: 3}, ending: length}", "responses.0.fault", "a byte place takes"),
        ("{place: {call: 2, at: 3}, ending: fin}", "responses.0.fault.place.call", "not 2"),
        (
            "{place: {call: 1, at: escape}, ending: fin}",
            "responses.0.fault.place.at",
            "no place 'escape'",
        ),
        ("{mutate: {call: 1, id: reused}}", "responses.0.fault.mutate.id", "no call was served"),
        ("{ending: rst, cut_at: 4}", "responses.0.fault", "one fault per response"),
        ("{place: {call: 1, at: middle}, ending: fin}", "responses.0.fault.place", ""),
    ],
)
def test_a_bad_fault_is_one_line_naming_its_field(
    tmp_path: Path, fault: str, where: str, says: str
) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_agent_scenario(write(tmp_path, fault))
    message = str(caught.value)
    assert "\n" not in message and f": {where}" in message and says in message, message


def test_mutations_serve_the_call_wrong_on_purpose(tmp_path: Path) -> None:
    calls = "[{id: c1, name: pay, arguments: {a: 1}}, {id: c2, name: pay, arguments: {a: 2}}]"
    for fault, want in [
        ("{mutate: {call: 2, id: reused}}", [("c1", {"a": 1}), ("c1", {"a": 2})]),
        ("{mutate: {call: 1, id: missing}}", [("", {"a": 1}), ("c2", {"a": 2})]),
        ("{mutate: {call: 1, id: fresh}}", [("c1_r0", {"a": 1}), ("c2", {"a": 2})]),
        ("{mutate: {call: 1, args: wrong_type}}", [("c1", {"a": "1"}), ("c2", {"a": 2})]),
        ("{mutate: {call: 2, args: missing_required}}", [("c1", {"a": 1}), ("c2", {})]),
    ]:
        scenario = load_agent_scenario(write(tmp_path, fault, calls))
        served = scenario.served("openai-completions")[0]
        assert [(c.id, dict(c.arguments)) for c in served.calls] == want, fault
        assert all(c.delivered for c in served.calls) and served.complete


ID_FACTS = load_yaml("call_ids")["protocols"]
ID_FAULTS = [
    CallFault(call=1, id="missing"),
    CallFault(call=2, id="reused"),
    CallFault(call=1, id="reused"),
    CallFault(call=1, id="fresh"),
]


def test_every_agent_protocol_says_with_a_source_which_ids_its_servers_send() -> None:
    assert set(ID_FACTS) == set(PROTOCOLS)
    for protocol, ways in ID_FACTS.items():
        assert set(ways) == {id_way(m) for m in ID_FAULTS}, protocol
        for way, fact in ways.items():
            assert isinstance(fact["sent"], bool) and fact["source"].strip(), (protocol, way)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_fault_space_serves_a_call_id_only_the_ways_the_protocols_servers_do(
    protocol: str,
) -> None:
    offered = {
        id_way(f.mutate)
        for f in fault_space([(ARGS, SCHEMA), (ARGS, SCHEMA)], protocol)
        if f.mutate is not None and f.mutate.id is not None
    }
    # fault_space draws no cross-response reuse (a scenario writes it, as reused_call_id does)
    sent = {w for w, fact in ID_FACTS[protocol].items() if fact["sent"]} - {"reused_across"}
    assert offered == sent
    for mutate in ID_FAULTS:
        why = unexpressible(mutate, protocol)
        assert (why is None) == ID_FACTS[protocol][id_way(mutate)]["sent"], mutate


@pytest.mark.parametrize(
    ("protocol", "says"),
    [
        ("anthropic-messages", "anthropic-messages always sends a call id ("),
        ("openai-responses", "openai-responses always sends a call id ("),
        ("bedrock-converse-stream", "bedrock-converse-stream always sends a call id ("),
    ],
)
def test_a_scenario_asking_for_an_id_less_call_is_skipped_where_no_server_sends_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], protocol: str, says: str
) -> None:
    path = write(tmp_path, "{mutate: {call: 1, id: missing}}")
    scenario = load_agent_scenario(path)
    assert scenario.unexpressible[protocol].startswith(says)
    assert protocol not in scenario.protocols
    assert {"openai-completions", "google-generative-ai"} <= set(scenario.protocols)
    assert main(["agents", "--serve", str(path), "--protocol", protocol]) == 2
    assert capsys.readouterr().err.startswith(f"stream-harness: --protocol {protocol}: {says}")
    argv = ["agents", "--agent", "reference", "--scenarios", str(path), "--protocol", protocol]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"stream-harness: skipped s on {protocol}: {says}"), err


def test_a_call_id_reused_within_a_response_keeps_the_responses_item_ids_unique() -> None:
    reused = Script(
        tool_calls=(
            ScriptedCall("call_1", "charge_card", {"amount_cents": 1}),
            ScriptedCall("call_1", "charge_card", {"amount_cents": 2}),
            ScriptedCall("", "charge_card", {"amount_cents": 3}),
        )
    )
    served = render("openai-responses", reused, Fault())
    added = [
        json.loads(line[6:])["item"]
        for chunk in served.chunks
        for line in chunk.decode().splitlines()
        if line.startswith("data: ") and '"response.output_item.added"' in line
    ]
    assert [(i["id"], i.get("call_id")) for i in added] == [
        ("fc_call_1", "call_1"),
        ("fc_call_1_1", "call_1"),
        ("fc_2", None),
    ]
    # distinct ids keep the bytes they always had: fc_<call id>
    plain = render("openai-responses", SCRIPT, Fault())
    body = b"".join(plain.chunks)
    assert b'"fc_call_1"' in body and b'"fc_call_2"' in body and b"fc_call_2_" not in body


@pytest.mark.parametrize(
    ("ending", "error"), [("fin", httpx.RemoteProtocolError), ("rst", httpx.ReadError)]
)
def test_a_fin_and_an_rst_reach_the_client_as_themselves(
    ending: str, error: type[Exception]
) -> None:
    served = render(
        "anthropic-messages",
        SCRIPT,
        Fault(place=InCall(call=1, at="number"), ending=ending),  # type: ignore[arg-type]
    )
    answer = ScriptedAnswer(200, served.headers, served.chunks, served.cut, reset=served.reset)
    with AgentServer([answer], []) as server, pytest.raises(error):
        with httpx.stream("POST", server.url + "/v1/messages", json={}) as reply:
            for _ in reply.iter_raw():
                pass


class Repairing:
    """A client that repairs whatever arguments it got and runs them (what the issue saw
    framework rows do): one request, the call's streamed arguments closed by hand."""

    name = "repairing"
    protocols = frozenset({"openai-completions"})
    settings = "repairs truncated JSON"
    conventions: ClassVar[dict[str, Any]] = {}

    def version(self) -> str:
        return "0"

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        body = {"model": task.model, "messages": [{"role": "user", "content": "x"}], "stream": True}
        with httpx.stream("POST", task.base_url + "/v1/chat/completions", json=body) as reply:
            raw = b"".join(reply.iter_raw())
        streamed = "".join(
            d["choices"][0]["delta"]["tool_calls"][0]["function"].get("arguments", "")
            for line in raw.split(b"\n\n")
            if line.startswith(b"data: {")
            for d in [json.loads(line[6:])]
            if d.get("choices") and d["choices"][0]["delta"].get("tool_calls")
        )
        task.tools[0].call(json.loads(streamed + "}"))  # {"customer":...,"amount_cents":42}
        return AgentOutcome(output="Charged.")


def test_a1_and_a6_catch_a_repaired_call_cut_inside_its_last_value() -> None:
    path = bundled_cassettes() / "agent-scenarios" / "cut_in_last_value_length.yaml"
    run = observe(Repairing(), load_agent_scenario(path), "openai-completions")
    assert [e.arguments for e in run.ledger] == [
        {"customer": "cus_ada_lovelace", "amount_cents": 42}
    ]
    verdicts = {v.check: v.status for v in judge(run)}
    assert verdicts["A1"] == verdicts["A6"] == "failed"


def test_serving_a_fault_in_a_protocol_that_cannot_express_it_says_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = bundled_cassettes() / "agent-scenarios" / "invalid_json_args_finished.yaml"
    assert "google-generative-ai" not in load_agent_scenario(path).protocols
    code = main(["agents", "--serve", str(path), "--protocol", "google-generative-ai"])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "stream-harness: --protocol google-generative-ai: google-generative-ai sends whole "
        "calls: no call finishes with its arguments cut short"
    )


class StopsAtTheLimit:
    """Takes a length-stopped response as the answer, its complete call never run (what the
    AI SDK rows do on complete_call_then_length)."""

    name = "stops-at-the-limit"
    protocols = frozenset({"openai-completions"})
    settings = "none"
    conventions: ClassVar[dict[str, Any]] = {}

    def version(self) -> str:
        return "0"

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        body = {"model": task.model, "messages": [{"role": "user", "content": "x"}], "stream": True}
        with httpx.stream("POST", task.base_url + "/v1/chat/completions", json=body) as reply:
            reply.read()
        return AgentOutcome(output="Charging now.")


def test_a12_says_a_length_stop_came_after_a_complete_call() -> None:
    path = bundled_cassettes() / "agent-scenarios" / "complete_call_then_length.yaml"
    run = observe(StopsAtTheLimit(), load_agent_scenario(path), "openai-completions")
    a12 = next(v for v in judge(run) if v.check == "A12")
    assert a12.status == "failed"
    assert a12.message == (
        "the run reported success on response 0, cut by the output limit after a tool call"
    )
