"""The checks where they were silent (issue 33 item 3): A13, A12's outcome text, A2 and A3
across restarts, and the advice every failure carries (issue 34 item 5).

Each broken agent is a scripted client over real HTTP against the scenario server, as in
test_agent_checks.py; the call whose arguments are not valid JSON is a recorded response
(a cassette written here), so these checks are tested without a scripted fault for it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from tests.agents.test_agent_checks import (
    PROTOCOL,
    USER,
    Scripted,
    assistant,
    result,
    scenario,
    verdict,
    weather_history,
)

from stream_harness.agents.frameworks.support import raised, run_guarded
from stream_harness.agents.protocol import AgentLimits, AgentOutcome, AgentTask
from stream_harness.agents.reference import ReferenceAgent
from stream_harness.agents.scenario import load_agent_scenario
from stream_harness.conformance.agent_checks import CHECKS, judge
from stream_harness.conformance.agent_runner import observe
from stream_harness.conformance.explore import explored_scenario

PAYMENT = {"amount_cents": 4200, "customer": "cus_ada_lovelace"}
BROKEN_ARGS = '{"amount_cents": 4200, "customer": "cus_ada'  # ends, but is not JSON


def _sse(data: Any) -> str:
    return f"data: {json.dumps(data) if not isinstance(data, str) else data}\n\n"


def _completion(call_id: str, raw_arguments: str) -> str:
    """An openai-completions stream whose one call ends normally (finish_reason
    tool_calls, [DONE]) with ``raw_arguments`` as its whole argument text."""
    head = {"id": "chatcmpl-x", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return _sse({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    call = {"index": 0, "id": call_id, "type": "function"}
    return "".join(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"tool_calls": [{**call, "function": {"name": "charge_card", "arguments": ""}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": raw_arguments}}]}),
            chunk({}, "tool_calls"),
            _sse("[DONE]"),
        ]
    )


def malformed_scenario(tmp_path: Path) -> Path:
    cassette = {
        "version": 1,
        "interactions": [
            {
                "request": {"body": "", "headers": {}, "method": "POST", "uri": "https://api.openai.com/v1/chat/completions"},
                "response": {
                    "body": {"string": _completion("call_bad", BROKEN_ARGS)},
                    "headers": {"content-type": ["text/event-stream"]},
                    "status": {"code": 200, "message": "OK"},
                },
            }
        ]
    }  # fmt: skip
    (tmp_path / "malformed.yaml").write_text(yaml.safe_dump(cassette))
    data = {
        "kind": "agent",
        "prompt": "Charge Ada 42 dollars.",
        "tools": {
            "charge_card": {
                "schema": {"type": "object"},
                "side_effect": True,
                "returns": {"charged": True},
            }
        },
        "responses": [
            {"cassette": "malformed.yaml"},
            {"script": {"text": "I could not read my own call; nothing was charged."}},
        ],
    }
    path = tmp_path / "malformed_arguments.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(
    "ran_with",
    [{"amount_cents": 4200, "customer": "cus_ada"}, {}],
    ids=["the repaired guess", "an empty object"],
)
def test_a13_catches_a_call_run_on_arguments_that_were_not_json(
    tmp_path: Path, ran_with: dict[str, Any]
) -> None:
    loaded = load_agent_scenario(malformed_scenario(tmp_path))

    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        out = task.tools[0].call(ran_with)
        post([USER, assistant(("call_bad", "charge_card", ran_with)), result("call_bad", out)])
        return AgentOutcome(output="I could not read my own call; nothing was charged.")

    bad = observe(Scripted(steps), loaded, PROTOCOL)
    a13 = verdict(bad, "A13")
    assert a13.status == "failed"
    assert "call_bad" in a13.message and "cus_ada" in a13.message
    assert a13.advice.startswith("Parse a call's completed arguments strictly")
    assert verdict(bad, "A1").status == "passed"  # the arguments were complete: A13's failure


def test_a13_the_reference_answers_the_call_instead_of_running_it(tmp_path: Path) -> None:
    loaded = load_agent_scenario(malformed_scenario(tmp_path))
    run = observe(ReferenceAgent(), loaded, PROTOCOL)
    assert run.ledger == []
    assert verdict(run, "A13").status == "passed"
    assert [v for v in judge(run) if v.status == "failed"] == []
    sent = run.view(1)
    assert [r.id for r in sent.results] == ["call_bad"]
    assert "not valid JSON" in sent.results[0].content


def test_a13_does_not_apply_where_every_call_was_json() -> None:
    run = observe(ReferenceAgent(), scenario("weather_tool_call"), PROTOCOL)
    assert verdict(run, "A13").status == "skipped"


@pytest.mark.parametrize(
    ("name", "error_type", "message", "status"),
    [
        ("http_401_not_retried", "KeyError", "'choices'", "failed"),
        ("http_401_not_retried", "AuthenticationError", "Error code: 401", "passed"),
        ("cut_at_byte", "KeyError", "'choices'", "failed"),
        ("cut_at_byte", "RemoteProtocolError", "peer closed connection without sending complete message body", "passed"),
        ("cut_at_byte", "ClientPayloadError", "Response payload is not completed", "passed"),  # aiohttp
    ],
)
def test_a12_an_error_outcome_must_say_what_was_served(
    name: str, error_type: str, message: str, status: str
) -> None:
    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])  # the failure, then the run ends (A9 judges the missing retry)
        return AgentOutcome(error_type=error_type, error_message=message)

    outcome = verdict(observe(Scripted(steps), scenario(name), PROTOCOL), "A12")
    assert outcome.status == status, outcome.message
    if status == "failed":
        assert f"{error_type}: {message}" in outcome.message  # the text raised ...
        assert ("401" if name.startswith("http") else "transport fault") in outcome.message  # ... and served


@pytest.mark.parametrize(
    ("name", "served"),
    [("error_event_overloaded", "The server is overloaded"), ("http_529_no_retry_after", "529")],
)
def test_a12_shows_the_error_served_beside_the_unrelated_one_raised(name: str, served: str) -> None:
    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        post(weather_history(task))  # the overloaded answer, not retried
        return AgentOutcome(error_type="ValueError", error_message="unexpected chunk")

    outcome = verdict(observe(Scripted(steps), scenario(name), PROTOCOL), "A12")
    assert outcome.status == "failed"
    assert served in outcome.message and "ValueError: unexpected chunk" in outcome.message


def restart_scenario(tmp_path: Path) -> Path:
    """The payment call, a cut, then the same call again under a fresh id: what a
    provider serves to an agent that restarted the run."""
    call = {"name": "charge_card", "arguments": PAYMENT}
    data = {
        "kind": "agent",
        "prompt": "Charge Ada 42 dollars and confirm.",
        "protocols": [PROTOCOL],
        "tools": {"charge_card": {"side_effect": True, "returns": {"charged": True}}},
        "responses": [
            {"script": {"tool_calls": [{"id": "call_c1", **call}]}},
            {"script": {"text": "Your card was charged."}, "fault": {"cut_at": 200}},
            {"script": {"tool_calls": [{"id": "call_c2", **call}]}},
            {"script": {"text": "Done."}},
        ],
    }
    path = tmp_path / "restart.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a2_catches_a_payment_charged_again_under_a_fresh_id_after_a_restart(
    tmp_path: Path,
) -> None:
    first, second = ("call_c1", "charge_card", PAYMENT), ("call_c2", "charge_card", PAYMENT)

    def restarts(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        out = task.tools[0].call(PAYMENT)
        post([USER, assistant(first), result("call_c1", out)])  # cut: the run restarts
        post([USER])  # the same call again, as call_c2 ...
        again = task.tools[0].call(PAYMENT)  # ... and charged again
        post([USER, assistant(second), result("call_c2", again)])
        return AgentOutcome(output="Done.")

    def asks_twice(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        out = task.tools[0].call(PAYMENT)
        history = [USER, assistant(first), result("call_c1", out)]
        post(history)  # cut: resent as it was
        post(history)  # the model asks for the same payment again, having seen the first
        again = task.tools[0].call(PAYMENT)
        post([*history, assistant(second), result("call_c2", again)])
        return AgentOutcome(output="Done.")

    loaded = load_agent_scenario(restart_scenario(tmp_path))
    bad = verdict(observe(Scripted(restarts), loaded, PROTOCOL), "A2")
    assert bad.status == "failed"
    assert "2 times for 1 call(s) served (1 of them the same call served again" in bad.message
    assert verdict(observe(Scripted(asks_twice), loaded, PROTOCOL), "A2").status == "passed"


PARIS = ("call_p1", "get_weather", {"city": "Paris"})
ROME = ("call_r1", "get_weather", {"city": "Rome"})


def test_a3_names_a_delivered_call_that_never_ran_and_never_got_a_result() -> None:
    def drops_rome(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        a = task.tools[0].call(PARIS[2])
        post([USER, assistant(PARIS), result(PARIS[0], a)])
        return AgentOutcome(output="Paris 18 C, Rome 24 C.")

    outcome = verdict(observe(Scripted(drops_rome), scenario("parallel_tool_calls"), PROTOCOL), "A3")
    assert outcome.status == "failed"
    assert "call_r1" in outcome.message and "never ran" in outcome.message


def test_a3_names_arguments_sent_back_other_than_delivered() -> None:
    def rewrites(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        a = task.tools[0].call(PARIS[2])
        # Rome is refused, not run, and sent back with arguments the model never gave.
        rome = (ROME[0], ROME[1], {"city": "Rome", "country": "IT"})
        post([USER, assistant(PARIS, rome), result(PARIS[0], a), result(ROME[0], "refused")])
        return AgentOutcome(output="Paris 18 C, Rome 24 C.")

    outcome = verdict(observe(Scripted(rewrites), scenario("parallel_tool_calls"), PROTOCOL), "A3")
    assert outcome.status == "failed"
    assert "country" in outcome.message and "delivered as" in outcome.message


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.id)
def test_every_check_has_one_line_of_advice(check: Any) -> None:
    assert check.advice and "\n" not in check.advice and check.advice.endswith(".")


def test_a_passing_check_carries_no_advice() -> None:
    run = observe(ReferenceAgent(), scenario("weather_tool_call"), PROTOCOL)
    assert {v.advice for v in judge(run)} == {""}


def test_a_framework_s_raise_is_recorded_with_the_exceptions_that_caused_it() -> None:
    # A framework's own error wraps the client's, which says what was served (A12 reads it).
    try:
        try:
            raise ConnectionError("peer closed connection")
        except ConnectionError as exc:
            raise RuntimeError("model request failed") from exc
    except RuntimeError as exc:
        outcome = raised(exc)
    assert outcome.error_type == "RuntimeError"
    assert outcome.error_message == (
        "model request failed (caused by ConnectionError: peer closed connection)"
    )


@pytest.mark.parametrize(("order", "status"), [(("Paris", "Rome"), "passed"), (("Rome", "Paris"), "failed")])
def test_a3_pairs_id_less_gemini_replays_by_name_and_order(order: tuple[str, str], status: str) -> None:
    # Gemini's functionCall.id is optional: two calls of one tool sent back without ids pair
    # with the calls served by their order (LangGraph sends them so, and correctly).
    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        url = task.base_url + "/v1beta/models/model:streamGenerateContent?alt=sse"
        user = {"role": "user", "parts": [{"text": "x"}]}
        httpx.post(url, json={"contents": [user]})
        outs = {city: task.tools[0].call({"city": city}) for city in ("Paris", "Rome")}
        calls = [{"functionCall": {"name": "get_weather", "args": {"city": c}}} for c in order]
        answers = [
            {"functionResponse": {"name": "get_weather", "response": {"r": outs[c]}}} for c in order
        ]
        contents = [user, {"role": "model", "parts": calls}, {"role": "user", "parts": answers}]
        httpx.post(url, json={"contents": contents})
        return AgentOutcome(output="Paris 18 C, Rome 24 C.")

    agent = Scripted(steps)
    agent.protocols = frozenset({"google-generative-ai"})
    run = observe(agent, scenario("parallel_tool_calls"), "google-generative-ai")
    assert verdict(run, "A3").status == status, verdict(run, "A3").message


def test_a12_a_clean_end_inside_an_event_is_a_transport_fault_not_an_error_served() -> None:
    # Found exploring pydantic-ai: the body ended cleanly inside the second event of the
    # stream (a malformed last frame, stop "error"), and A12 took the last whole event's
    # type (`chat.completion.chunk`, `response.created`) for the error the agent had to name.
    base = scenario("weather_tool_call")
    whole = observe(ReferenceAgent(), base, PROTOCOL).served[0]
    body = b"".join(whole.chunks)
    second = body.index(b"data:", body.index(b"data:") + 1)
    inside = second + 30  # inside the second event's JSON
    cut = explored_scenario(base, ((0, {"place": {"byte": inside}, "ending": "clean_eof"}),))

    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        return AgentOutcome(
            error_type="UnexpectedModelBehavior",
            error_message="Streamed response ended without content or tool calls",
        )

    run = observe(Scripted(steps), cut, PROTOCOL)
    assert run.served[0].stop == "error" and run.served[0].fault.startswith("clean_eof")
    assert verdict(run, "A12").status == "passed", verdict(run, "A12").message
    # the reference names the malformed frame it read ("malformed JSON in SSE event #1")
    reference = observe(ReferenceAgent(), cut, PROTOCOL)
    assert reference.outcome is not None and "malformed" in (reference.outcome.error_message or "")
    assert verdict(reference, "A12").status == "passed", verdict(reference, "A12").message

    def unrelated(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        return AgentOutcome(error_type="KeyError", error_message="'choices'")

    failed = verdict(observe(Scripted(unrelated), cut, PROTOCOL), "A12")
    assert failed.status == "failed" and "transport fault (clean_eof" in failed.message

    def undecodable(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])  # pydantic-ai's words on Gemini for the same cut
        return AgentOutcome(error_type="ModelAPIError", error_message="Failed to decode response as JSON")

    assert verdict(observe(Scripted(undecodable), cut, PROTOCOL), "A12").status == "passed"


class _Waits(Scripted):
    """A framework row whose run waits past the task's bound (as one honouring a one-hour
    retry-after does), run as every framework adapter runs it (``run_guarded``)."""

    def __init__(self, inner: BaseException | None = None) -> None:
        super().__init__(lambda task, post: AgentOutcome())
        self.inner = inner

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        async def build() -> str:
            body = {"model": task.model, "messages": [USER], "stream": True}
            httpx.post(task.base_url + "/v1/chat/completions", json=body, timeout=5)
            if self.inner is not None:
                raise self.inner
            await asyncio.sleep(30)
            return "never"

        return run_guarded(build, task, lambda out: AgentOutcome(output=out))


def test_a_run_past_its_bound_is_labelled_timeout_not_an_error_it_raised() -> None:
    run = observe(_Waits(), scenario("http_401_not_retried"), PROTOCOL, AgentLimits(timeout_s=0.5))
    assert run.hung and run.outcome is None
    assert "no outcome within 0.5 s" in (run.crash or "")
    # a TimeoutError the framework raised itself is its outcome, judged as any other
    own = observe(_Waits(TimeoutError("read timed out")), scenario("http_401_not_retried"), PROTOCOL)
    assert not own.hung and own.outcome is not None and own.outcome.error_type == "TimeoutError"
