"""A3 on google-generative-ai pairs an id-less call and result within the turn that replays
its response, never by name and order across the whole request (issue 33).

Gemini's ``functionCall.id`` is optional, and agno and LangGraph send every call back
without one. A request that replays several turns (three_tool_turns: get_weather in turns
1 and 3; a retry that kept the cut attempt's Paris before the resend's Paris and Rome)
carries several id-less calls of one name: the n-th of them in the whole request is not the
n-th of the turn. Each agent here is a scripted Gemini client over real HTTP against the
scenario server; a correct one passes A3 and one that sends back the wrong thing fails it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import httpx
from tests.agents.test_agent_checks import Scripted, scenario, verdict

from stream_harness.agents.conformance.checks import AgentRun
from stream_harness.agents.conformance.explore import explored_scenario
from stream_harness.agents.conformance.runner import observe
from stream_harness.agents.exchange import read_request
from stream_harness.agents.protocol import AgentOutcome, AgentTask
from stream_harness.agents.scenario.model import AgentScenario

GOOGLE = "google-generative-ai"
USER = {"role": "user", "parts": [{"text": "x"}]}
Call = tuple[str, dict[str, Any]]  # (tool name, arguments): Gemini's id-less functionCall


def model(*calls: Call) -> dict[str, Any]:
    return {"role": "model", "parts": [{"functionCall": {"name": n, "args": a}} for n, a in calls]}


def answers(*outs: tuple[str, str]) -> dict[str, Any]:
    parts = [{"functionResponse": {"name": n, "response": {"r": out}}} for n, out in outs]
    return {"role": "user", "parts": parts}


class Gemini(Scripted):
    """A scripted agent speaking google-generative-ai: ``post(contents)``."""

    protocols = frozenset({GOOGLE})

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        url = task.base_url + "/v1beta/models/model:streamGenerateContent?alt=sse"

        def post(contents: list[dict[str, Any]]) -> bytes:
            try:
                return httpx.post(url, json={"contents": contents}).content
            except httpx.TransportError:
                return b""

        return self.steps(task, post)


def turns(task: AgentTask, post: Callable[..., Any], asked: Sequence[Sequence[Call]]) -> None:
    """A loop that runs each response's calls and replays it as one model turn followed by
    its results, ``asked[i]`` being what response ``i`` asked for; the last turns' replay
    is changed by the test (the calls sent back as the agent's bug has them)."""
    contents: list[dict[str, Any]] = [USER]
    post(contents)
    tools = {t.name: t for t in task.tools}
    for calls in asked:
        outs = [(n, tools[n].call(a)) for n, a in calls]
        contents += [model(*calls), answers(*outs)]
        post(contents)


def a3(agent: Gemini, played: AgentScenario) -> tuple[str, str]:
    run: AgentRun = observe(agent, played, GOOGLE)
    outcome = verdict(run, "A3")
    return outcome.status, outcome.message


PARIS: Call = ("get_weather", {"city": "Paris"})
ROME: Call = ("get_weather", {"city": "Rome"})
ZERO: Call = ("get_weather", {"city": 0})  # `mutate: {args: wrong_type}` of PARIS
CHARGE: Call = ("charge_card", {"amount_cents": 4200, "customer": "cus_ada_lovelace"})


def test_the_turn_of_each_gemini_call_and_result_is_read_back() -> None:
    body = {"contents": [USER, model(PARIS, ROME), answers(("get_weather", "18"))]}
    view = read_request(GOOGLE, body)
    assert [c.turn for c in view.calls] == [1, 1]
    assert [r.turn for r in view.results] == [2]


def test_a3_pairs_a_later_turn_s_call_with_its_own_turn_not_the_first() -> None:
    # The agno[retries=1] and langgraph[max_retries=5] findings: response 0's get_weather
    # was delivered as {"city": 0}; request 3 replays turn 1's {"city": 0} and turn 3's
    # {"city": "Paris"}, and call_w2 was paired with the first.
    played = explored_scenario(
        scenario("three_tool_turns"), ((0, {"mutate": {"args": "wrong_type"}}),)
    )

    def honest(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        turns(task, post, [[ZERO], [CHARGE], [PARIS]])
        return AgentOutcome(output="All done: 18 C, charged r-1001.")

    status, message = a3(Gemini(honest), played)
    assert status == "passed", message

    def first_args_again(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        turns(task, post, [[ZERO], [CHARGE], [ZERO]])  # turn 3 sent back with turn 1's args
        return AgentOutcome(output="All done: 18 C, charged r-1001.")

    status, message = a3(Gemini(first_args_again), played)
    assert status == "failed"
    assert "call_w2" in message and '{"city":0}' in message


LENGTH_IN_ROME = {"place": {"call": 2, "at": "last_value"}, "ending": "length"}


def test_a3_pairs_a_resent_response_with_its_own_turn_not_the_cut_attempt_s() -> None:
    # The agno[retries=1] finding on parallel_tool_calls: response 0 was cut by the output
    # limit inside Rome (Gemini delivers Paris whole), the agent ran Paris and replayed
    # that turn; the resend's Paris and Rome follow in a turn of their own. Rome was paired
    # with the second Paris of the request (the first turn's).
    played = explored_scenario(scenario("parallel_tool_calls"), ((0, LENGTH_IN_ROME),))

    def kept_cut_turn(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        turns(task, post, [[PARIS], [PARIS, ROME]])
        return AgentOutcome(output="Paris 18 C, Rome 24 C.")

    status, message = a3(Gemini(kept_cut_turn), played)
    assert status == "passed", message

    def swapped(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        turns(task, post, [[PARIS], [ROME, PARIS]])  # the resend's turn in the wrong order
        return AgentOutcome(output="Paris 18 C, Rome 24 C.")

    status, message = a3(Gemini(swapped), played)
    assert status == "failed"
    assert "Rome" in message and "Paris" in message


def test_a3_pairs_a_call_served_without_an_id_within_its_turn() -> None:
    # The langgraph[ModelRetryMiddleware.max_retries=2] finding: charge_card served without
    # an id (`mutate: {id: missing}`) matched every id-less call of the request by its
    # empty id, and was found "sent back as get_weather".
    played = explored_scenario(scenario("three_tool_turns"), ((1, {"mutate": {"id": "missing"}}),))

    def honest(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        turns(task, post, [[PARIS], [CHARGE], [PARIS]])
        return AgentOutcome(output="All done: 18 C, charged r-1001.")

    status, message = a3(Gemini(honest), played)
    assert status == "passed", message

    def no_result(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        contents: list[dict[str, Any]] = [USER]
        post(contents)
        weather, charge = task.tools
        contents += [model(PARIS), answers(("get_weather", weather.call(PARIS[1])))]
        post(contents)
        charge.call(CHARGE[1])
        contents += [model(CHARGE), {"role": "user", "parts": [{"text": "go on"}]}]
        post(contents)  # the charge replayed, its result never sent
        return AgentOutcome(output="All done: 18 C, charged r-1001.")

    status, message = a3(Gemini(no_result), played)
    assert status == "failed"
    assert "0 results" in message and "charge_card" in message
