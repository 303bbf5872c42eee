"""Each agent check fails on an agent broken in the way it names, and the reference passes.

The broken agents are small: a misconfigured reference loop (retries a 400, ignores
retry-after while declaring it honours it) or a scripted client that sends what a buggy
framework sends (runs truncated arguments, charges twice after a restart, loses a
parallel result, takes a stream without its terminal event as the answer, shows the text
of a failed attempt twice, loops past the script). Each test asserts the one check that
must catch it, and that the same scenario passes that check for the reference.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from stream_harness.agents.conformance.checks import (
    DEFAULT_CONVENTIONS,
    AgentRun,
    CheckOutcome,
    judge,
)
from stream_harness.agents.conformance.runner import AgentExpectation, observe, run_agent_checks
from stream_harness.agents.protocol import AgentOutcome, AgentTask
from stream_harness.agents.reference import ReferenceAgent
from stream_harness.agents.scenario.model import AgentScenario, load_agent_scenario
from stream_harness.contract.facts import bundled_cassettes
from stream_harness.loop.retry import RetryPolicy

SCENARIOS = bundled_cassettes() / "agent-scenarios"
PROTOCOL = "openai-completions"


def scenario(name: str) -> AgentScenario:
    return load_agent_scenario(SCENARIOS / f"{name}.yaml")


def verdict(run: AgentRun, check: str) -> CheckOutcome:
    return next(v for v in judge(run) if v.check == check)


class Scripted:
    """An agent that sends the requests and runs the tools its ``steps`` say, in order."""

    protocols = frozenset({PROTOCOL})
    settings = "a scripted misbehaviour"

    def __init__(
        self, steps: Callable[[AgentTask, Callable[..., Any]], AgentOutcome], **conventions: Any
    ) -> None:
        self.name = "broken"
        self.steps = steps
        self.conventions: Mapping[str, Any] = conventions

    def version(self) -> str:
        return "0"

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        def post(messages: list[dict[str, Any]]) -> bytes:
            body = {"model": task.model, "messages": messages, "stream": True}
            try:
                with httpx.stream(
                    "POST", task.base_url + "/v1/chat/completions", json=body
                ) as reply:
                    return b"".join(reply.iter_raw())
            except httpx.TransportError:
                return b""

        return self.steps(task, post)


USER = {"role": "user", "content": "x"}


def assistant(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, n, a in calls
        ],
    }


def result(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


CHARGE = ("call_c1", "charge_card", {"amount_cents": 4200, "customer": "cus_ada_lovelace"})


def weather_history(task: AgentTask) -> list[Any]:
    """The weather tool run once through the ledger, and the history a correct loop then
    sends: the prompt, the call as served (call_w1), its result paired to it."""
    out = task.tools[0].call({"city": "Paris"})
    return [USER, assistant(("call_w1", "get_weather", {"city": "Paris"})), result("call_w1", out)]


def test_a1_catches_a_tool_run_on_truncated_arguments() -> None:
    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])  # cut inside the arguments
        task.tools[0].call({"amount_cents": 42})  # what a partial-JSON repair makes of them
        return AgentOutcome(output="done")

    bad = observe(Scripted(steps), scenario("cut_in_tool_args"), PROTOCOL)
    assert verdict(bad, "A1").status == "failed"
    assert "amount_cents" in verdict(bad, "A1").message
    good = observe(ReferenceAgent(), scenario("cut_in_tool_args"), PROTOCOL)
    assert verdict(good, "A1").status == "passed"


def test_a2_catches_a_payment_charged_twice_by_a_restart() -> None:
    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        out = task.tools[0].call(CHARGE[2])
        post([USER, assistant(CHARGE), result(CHARGE[0], out)])  # cut: the agent restarts the run
        task.tools[0].call(CHARGE[2])  # ... and replays the first turn's tool
        post([USER, assistant(CHARGE), result(CHARGE[0], out)])
        return AgentOutcome(output="Done: receipt r-1001.")

    bad = observe(Scripted(steps), scenario("retry_after_payment"), PROTOCOL)
    assert verdict(bad, "A2").status == "failed"
    assert "2 times for 1 call" in verdict(bad, "A2").message
    assert (
        verdict(observe(ReferenceAgent(), scenario("retry_after_payment"), PROTOCOL), "A2").status
        == "passed"
    )


def test_a3_catches_a_lost_parallel_result() -> None:
    paris = ("call_p1", "get_weather", {"city": "Paris"})
    rome = ("call_r1", "get_weather", {"city": "Rome"})

    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        a = task.tools[0].call(paris[2])
        task.tools[0].call(rome[2])
        post([USER, assistant(paris, rome), result(paris[0], a)])  # Rome's result lost
        return AgentOutcome(output="Paris 18 C, Rome 24 C.")

    bad = observe(Scripted(steps), scenario("parallel_tool_calls"), PROTOCOL)
    assert verdict(bad, "A3").status == "failed"
    assert "call_r1" in verdict(bad, "A3").message


@pytest.mark.parametrize("rome_first", [False, True])
def test_parallel_calls_that_both_fail_are_named_alike_whichever_ran_first(
    rome_first: bool,
) -> None:
    # Issue 36: calls of one turn run side by side finish in any order; the check names
    # the first problem in turn order (tool, arguments), not in the order they ran.
    paris = ("call_p1", "get_weather", {"city": "Paris"})
    rome = ("call_r1", "get_weather", {"city": "Rome"})

    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        for call in (rome, paris) if rome_first else (paris, rome):
            task.tools[0].call(call[2])
        post([USER, assistant(paris, rome)])  # both results lost
        return AgentOutcome(output="Paris 18 C, Rome 24 C.")

    bad = observe(Scripted(steps), scenario("parallel_tool_calls"), PROTOCOL)
    assert [e.arguments["city"] for e in bad.ledger] == (
        ["Rome", "Paris"] if rome_first else ["Paris", "Rome"]
    )
    assert (
        verdict(bad, "A3").message
        == "request 1 carries 0 results for call call_p1 (get_weather), not 1"
    )


def test_a3_catches_a_result_paired_to_the_wrong_id() -> None:
    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        out = task.tools[0].call({"city": "Paris"})
        call = ("call_w1", "get_weather", {"city": "Paris"})
        post([USER, assistant(call), result("call_other", out)])
        return AgentOutcome(output="It is 18 C and cloudy in Paris.")

    bad = observe(Scripted(steps), scenario("weather_tool_call"), PROTOCOL)
    assert verdict(bad, "A3").status == "failed"


def test_a5_catches_a_stream_without_terminal_event_taken_as_the_answer() -> None:
    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        post(weather_history(task))
        return AgentOutcome(output="It is 18 C and cloudy in Paris.")

    bad = observe(Scripted(steps), scenario("no_terminal_event"), PROTOCOL)
    assert verdict(bad, "A5").status == "failed"
    assert (
        verdict(observe(ReferenceAgent(), scenario("no_terminal_event"), PROTOCOL), "A5").status
        == "passed"
    )


def test_a6_catches_a_length_stopped_call_that_runs() -> None:
    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        task.tools[0].call({"amount_cents": 4200})
        return AgentOutcome(output="done")

    bad = observe(Scripted(steps), scenario("length_stop_in_tool_call"), PROTOCOL)
    assert verdict(bad, "A6").status == "failed"


def test_a7_catches_an_overflow_retried_as_transient() -> None:
    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        history = weather_history(task)
        post(history)  # the overflow ...
        post(history)  # ... resent unchanged, as a rate limit would be
        return AgentOutcome(output="Summary.")

    bad = observe(Scripted(steps), scenario("overflow_400"), PROTOCOL)
    assert verdict(bad, "A7").status == "failed"
    assert (
        verdict(observe(ReferenceAgent(), scenario("overflow_400"), PROTOCOL), "A7").status
        == "passed"
    )


def test_a8_catches_a_400_retried() -> None:
    agent = ReferenceAgent(retry=RetryPolicy(base=0.0, message_patterns=("HTTP",)))
    bad = observe(agent, scenario("http_400_not_retried"), PROTOCOL)
    assert verdict(bad, "A8").status == "failed"
    assert (
        verdict(observe(ReferenceAgent(), scenario("http_400_not_retried"), PROTOCOL), "A8").status
        == "passed"
    )


def test_a9_catches_more_retries_than_declared_and_none_at_all() -> None:
    eager = ReferenceAgent(retry=RetryPolicy(max_retries=6, base=0.0))
    eager.conventions = {**eager.conventions, "max_retries": 2}
    assert verdict(observe(eager, scenario("retries_exhausted"), PROTOCOL), "A9").status == "failed"
    never = ReferenceAgent(retry=RetryPolicy(max_retries=0))
    never.conventions = {**never.conventions, "max_retries": 2}
    assert (
        verdict(observe(never, scenario("http_529_no_retry_after"), PROTOCOL), "A9").status
        == "failed"
    )


def test_a10_catches_retry_after_ignored() -> None:
    hasty = ReferenceAgent(time_scale=0.01, retry=RetryPolicy(base=0.0, cap=0.0))
    # Declared in real time (it waits nothing at all): the wait owed is the hint's full
    # seconds, far above any delay a loaded machine adds, so the verdict cannot flake.
    hasty.conventions = {**hasty.conventions, "retry_after_cap_s": 60.0, "time_scale": 1.0}
    bad = observe(hasty, scenario("http_429_retry_after"), PROTOCOL)
    assert verdict(bad, "A10").status == "failed"
    good = observe(ReferenceAgent(), scenario("http_429_retry_after"), PROTOCOL)
    assert verdict(good, "A10").status == "passed"


def test_a10_measures_the_wait_from_the_reply_s_last_write_not_its_logging() -> None:
    """The flake of issue 35 item 7, made deterministic: the server's thread logs
    ``finished`` after its last write and may wait for the CPU in between, while the client
    has already read the reply and started its 20 ms (2 s x 0.01) wait. A run whose
    ``finished`` came late (as if logged just before the retry arrived) still passes: the wait
    counts from the start of the last write, which no client can precede."""
    good = observe(ReferenceAgent(), scenario("http_429_retry_after"), PROTOCOL)
    k = next(k for k, s in good.answers() if s.retry_after is not None)
    hit = good.requests[k]
    assert (
        hit.last_write is not None and hit.finished is not None and hit.last_write <= hit.finished
    )
    late = dataclasses.replace(hit, finished=good.requests[k + 1].arrived - 0.001)
    requests = [*good.requests[:k], late, *good.requests[k + 1 :]]
    assert verdict(dataclasses.replace(good, requests=requests), "A10").status == "passed"


def test_a11_catches_text_shown_twice_after_a_retry() -> None:
    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        history = weather_history(task)
        post(history)
        post(history)
        return AgentOutcome(output="It is 18 C and It is 18 C and cloudy in Paris.")

    bad = observe(Scripted(steps), scenario("error_event_overloaded"), PROTOCOL)
    assert verdict(bad, "A11").status == "failed"


def test_a12_catches_a_loop_past_the_script_and_a_crash() -> None:
    def loops(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        for _ in range(5):
            post([USER])
        return AgentOutcome(error_type="RuntimeError", error_message="gave up")

    assert (
        verdict(observe(Scripted(loops), scenario("http_401_not_retried"), PROTOCOL), "A12").status
        == "failed"
    )

    def crashes(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        raise RuntimeError("framework bug")

    crashed = observe(Scripted(crashes), scenario("weather_tool_call"), PROTOCOL)
    assert verdict(crashed, "A12").status == "failed"
    assert "framework bug" in verdict(crashed, "A12").message


def test_a12_says_what_a_run_that_sent_no_request_ended_with() -> None:
    """Strands once sent no request in a whole-matrix run and the row said only that; what
    the run raised instead (a setup error, a refused connection) is the lead."""

    def gives_up(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        return AgentOutcome(error_type="ConnectError", error_message="connection refused")

    def returns(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        return AgentOutcome(output="nothing to do")

    raised = verdict(observe(Scripted(gives_up), scenario("weather_tool_call"), PROTOCOL), "A12")
    assert raised.status == "failed"
    assert raised.message == (
        "the agent sent no model request (it raised ConnectError: connection refused)"
    )
    returned = verdict(observe(Scripted(returns), scenario("weather_tool_call"), PROTOCOL), "A12")
    assert returned.message == "the agent sent no model request (it returned 'nothing to do')"


def test_a_crashed_run_is_its_own_failing_row_unless_listed() -> None:
    # Issue 36, point 6: the framework's crash is that row's failure with its own label
    # (never errored, never a plain "failed"), and a listed one is a known failure.
    def crashes(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        raise RuntimeError("framework bug")

    adapters = [("scripted", Scripted(crashes))]
    results = run_agent_checks(adapters, [scenario("weather_tool_call")], protocols=[PROTOCOL])  # type: ignore[list-item]
    a12 = next(r for r in results if r.check == "A12")
    assert a12.status == "crashed" and a12.failing and "framework bug" in a12.message
    assert all(r.status in ("skipped", "crashed") for r in results), {
        r.check: r.status for r in results
    }
    listed = [AgentExpectation("broken", "weather_tool_call", "A12", None, "upstream issue")]
    again = run_agent_checks(
        adapters, [scenario("weather_tool_call")], protocols=[PROTOCOL], expectations=listed
    )  # type: ignore[list-item]
    assert next(r for r in again if r.check == "A12").status == "known_failure"


def test_a4_catches_thinking_dropped() -> None:
    agent = Scripted(lambda task, post: AgentOutcome(output="x"))
    agent.protocols = frozenset({"anthropic-messages"})

    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        for _ in range(2):  # the second request carries no thinking block
            httpx.post(
                task.base_url + "/v1/messages",
                json={"messages": [{"role": "user", "content": "x"}]},
            )
        task.tools[0].call({"city": "Paris"})
        return AgentOutcome(output="It is 18 C and cloudy in Paris.")

    agent.steps = steps
    bad = observe(agent, scenario("thinking_signature"), "anthropic-messages")
    assert verdict(bad, "A4").status == "failed"
    good = observe(ReferenceAgent(), scenario("thinking_signature"), "anthropic-messages")
    assert verdict(good, "A4").status == "passed"


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: Path(p).stem)
def test_the_reference_passes_every_bundled_scenario(path: Path) -> None:
    loaded = load_agent_scenario(path)
    for protocol in loaded.protocols:
        run = observe(ReferenceAgent(), loaded, protocol)
        failed = [v for v in judge(run) if v.status == "failed"]
        assert not failed, (protocol, failed)
        assert any(v.status == "passed" for v in judge(run))


def test_a_side_request_gets_the_response_matched_by_content_and_the_checks_follow() -> None:
    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])  # the conversation: response 1 (the call), not the title
        post([{"role": "user", "content": "Generate a short title for: x"}])  # response 0
        post(weather_history(task))
        return AgentOutcome(output="It is 18 C and cloudy in Paris.")

    run = observe(Scripted(steps), scenario("side_request_by_content"), PROTOCOL)
    assert run.answered == [1, 0, 2]
    assert all(v.status != "failed" for v in judge(run)), judge(run)
    reference = observe(ReferenceAgent(), scenario("side_request_by_content"), PROTOCOL)
    assert reference.answered == [1, 2]
    assert all(v.status != "failed" for v in judge(reference))


def _declaring(run: AgentRun, **policy: Any) -> AgentRun:
    """The same observed run judged under a row that declares ``policy`` for its protocol."""
    return dataclasses.replace(run, conventions={"by_protocol": {run.protocol: policy}})


def _never(**conventions: Any) -> ReferenceAgent:
    """The reference loop that never retries, declaring ``conventions`` over its own."""
    agent = ReferenceAgent(retry=RetryPolicy(max_retries=0))
    agent.conventions = {**agent.conventions, "max_retries": 2, **conventions}
    return agent


def test_a9_reads_the_policy_of_the_run_s_protocol() -> None:
    """One framework drives a different client per protocol (google-genai never retries):
    ``by_protocol[protocol]`` decides, and only for that protocol."""
    run = scenario("http_529_no_retry_after")
    here = _never(by_protocol={PROTOCOL: {"max_retries": 0}})
    assert verdict(observe(here, run, PROTOCOL), "A9").status == "passed"
    elsewhere = _never(by_protocol={"google-generative-ai": {"max_retries": 0}})
    assert verdict(observe(elsewhere, run, PROTOCOL), "A9").status == "failed"


def test_a9_partial_output_is_any_failure_after_the_200_stream_began() -> None:
    """A cut 60 bytes in delivered no text, yet the SDK clients had handed the stream over:
    a row declaring no retry after partial output is not failed for it; one declaring
    retries is."""
    run = scenario("cut_at_byte")
    declared = _never(retries_after_partial_output=False)
    assert verdict(observe(declared, run, PROTOCOL), "A9").status == "passed"
    assert verdict(observe(_never(), run, PROTOCOL), "A9").status == "failed"
    # An HTTP 529 is no stream handed over: the same declaration still owes its retry.
    status = observe(declared, scenario("http_529_no_retry_after"), PROTOCOL)
    assert verdict(status, "A9").status == "failed"


def test_a9_and_a10_read_what_the_row_does_with_a_hint_above_its_cap() -> None:
    """``retry_after_over_cap``: ``give_up`` (the openai SDK raises on a hint above 120 s)
    alone excuses not retrying; ``backoff`` (anthropic 0.x) owes no wait above the cap;
    ``capped``, the default (seed 000's ``Math.min``), owes the cap."""
    assert DEFAULT_CONVENTIONS["retry_after_over_cap"] == "capped"
    never = observe(
        ReferenceAgent(retry=RetryPolicy(max_retries=0)), scenario("retry_after_capped"), PROTOCOL
    )
    for policy, status in (("give_up", "passed"), ("capped", "failed"), ("backoff", "failed")):
        run = _declaring(never, max_retries=2, retry_after_cap_s=120, retry_after_over_cap=policy)
        assert verdict(run, "A9").status == status, policy
    hasty = ReferenceAgent(time_scale=0.01, retry=RetryPolicy(base=0.0, cap=0.0))
    quick = observe(hasty, scenario("retry_after_capped"), PROTOCOL)
    for policy, status in (("backoff", "passed"), ("give_up", "passed"), ("capped", "failed")):
        run = _declaring(quick, retry_after_cap_s=60, retry_after_over_cap=policy)
        assert verdict(run, "A10").status == status, policy
    # A row that declares nothing is held to the cap.
    assert verdict(_declaring(quick), "A10").status == "failed"
    # A declared null cap is no cap (anthropic 2.x sleeps any hint): the hour is owed.
    uncapped = _declaring(quick, retry_after_cap_s=None, retry_after_over_cap="backoff")
    assert verdict(uncapped, "A10").status == "failed"


def test_a9_accepts_a_status_outside_the_client_s_declared_list() -> None:
    """google-genai retries 408, 429, 500, 502, 503, 504: a 529 it does not retry is its
    declared policy; without the list the same run fails A9."""
    run = scenario("http_529_no_retry_after")
    listed = _never(retried_statuses=[408, 429, 500, 502, 503, 504])
    assert verdict(observe(listed, run, PROTOCOL), "A9").status == "passed"
    with_529 = _never(retried_statuses=[429, 529])
    assert verdict(observe(with_529, run, PROTOCOL), "A9").status == "failed"


def test_a10_does_not_judge_a_row_that_declares_it_reads_no_hint() -> None:
    """A client that waits by jittered backoff (google-genai) would pass or fail a 2 s hint
    by chance: A10 is skipped for it, and still fails the same run when not declared."""
    hasty = ReferenceAgent(time_scale=0.01, retry=RetryPolicy(base=0.0, cap=0.0))
    # Declared in real time (it waits nothing at all): the wait owed is the hint's full
    # seconds, far above any delay a loaded machine adds, so the verdict cannot flake.
    hasty.conventions = {**hasty.conventions, "retry_after_cap_s": 60.0, "time_scale": 1.0}
    run = scenario("http_429_retry_after")
    assert verdict(observe(hasty, run, PROTOCOL), "A10").status == "failed"
    hasty.conventions = {**hasty.conventions, "retry_after_honoured": False}
    assert verdict(observe(hasty, run, PROTOCOL), "A10").status == "skipped"


def test_a12_takes_retries_past_the_script_within_the_declared_budget_for_no_loop() -> None:
    persistent = ReferenceAgent(retry=RetryPolicy(max_retries=10, base=0.0))
    run = observe(persistent, scenario("retries_exhausted"), PROTOCOL)
    assert run.past_script() > 0  # 8 scripted 529s, then the ninth request
    assert verdict(_declaring(run, max_retries=10), "A12").status == "passed"
    assert verdict(_declaring(run, max_retries=2), "A12").status == "failed"


_HEAD = """kind: agent
description: an A9 budget test
prompt: What is the weather in Paris?
tools:
  get_weather:
    description: The current weather in a city.
    schema: {type: object, properties: {city: {type: string}}, required: [city]}
    returns: {city: Paris, temperature_c: 18, sky: cloudy}
responses:
"""
_CALL = "{text: Look., tool_calls: [{id: call_w1, name: get_weather, arguments: {city: Paris}}]}"
_DONE = '{text: "It is 18 C and cloudy in Paris."}'


def _budget_run(tmp_path: Path, responses: list[str], posts: int, tool_after: int = -1) -> AgentRun:
    """``posts`` requests of the prompt (the weather history from request ``tool_after``
    on, after running the tool), then the run raises: what a framework that gave up sends."""
    file = tmp_path / "budget.yaml"
    file.write_text(_HEAD + "".join(f"  - {r}\n" for r in responses))

    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        history = None
        for k in range(posts):
            if k == tool_after:
                history = weather_history(task)
            post(history or [USER])
        return AgentOutcome(error_type="APIError", error_message="the stream broke")

    return observe(Scripted(steps), load_agent_scenario(file), PROTOCOL)


def test_a9_owes_a_broken_stream_only_the_row_s_partial_output_retries(tmp_path: Path) -> None:
    """agno's Model.retries=1 over the openai client: 5 resends of a failed status, but a
    stream cut once the 200 began is resent by agno's layer alone, once."""
    cut = "{script: " + _DONE + ", fault: {place: {byte: 0}, ending: fin}}"
    run = _budget_run(tmp_path, [cut, cut, "{script: " + _DONE + "}"], posts=2)
    assert verdict(_declaring(run, max_retries=5), "A9").status == "failed"
    once = _declaring(run, max_retries=5, partial_output_retries=1)
    assert verdict(once, "A9").status == "passed"
    twice = _declaring(run, max_retries=5, partial_output_retries=2)
    assert "up to 2 retries" in verdict(twice, "A9").message


def test_a9_counts_a_run_s_retries_across_it_when_the_row_says_so(tmp_path: Path) -> None:
    """agno's Agent.retries=1 restarts the whole run: a 408 on the first request, resent by
    the restart, leaves no retry for a cut on the third; counted per request it would. A
    restart after a later request failed resends the first, not the failed one: still owed."""
    responses = [
        "{script: {}, fault: {status: 408}}",
        "{script: " + _CALL + "}",
        "{script: " + _DONE + ", fault: {place: {byte: 0}, ending: fin}}",
        "{script: " + _DONE + "}",
    ]
    run = _budget_run(tmp_path, responses, posts=3, tool_after=2)
    policy = {"max_retries": 1, "partial_output_retries": 1}
    assert verdict(_declaring(run, **policy), "A9").status == "failed"
    assert verdict(_declaring(run, **policy, retries_span_run=True), "A9").status == "passed"
    file = tmp_path / "restart.yaml"
    failing = "{script: {}, fault: {status: 500}}"
    file.write_text(
        _HEAD
        + "".join(
            f"  - {r}\n"
            for r in ["{script: " + _CALL + "}", failing, failing, "{script: " + _DONE + "}"]
        )
    )

    def restart(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])
        post(weather_history(task))  # the 500
        post([USER])  # the run again from its first request: the 500 of the next response
        return AgentOutcome(error_type="APIError", error_message="HTTP 500")

    restarted = observe(Scripted(restart), load_agent_scenario(file), PROTOCOL)
    spanning = _declaring(restarted, **policy, retries_span_run=True)
    assert "response 2 failed retryably" in verdict(spanning, "A9").message
    # A resend of a permanent 400 (the restart of a run that raised) spends it too.
    cut = "{script: " + _DONE + ", fault: {place: {byte: 0}, ending: fin}}"
    after_400 = _budget_run(
        tmp_path, ["{script: {}, fault: {status: 400}}", cut, "{script: " + _DONE + "}"], posts=2
    )
    assert verdict(_declaring(after_400, **policy), "A9").status == "failed"
    assert verdict(_declaring(after_400, **policy, retries_span_run=True), "A9").status == "passed"


def test_a9_allows_more_resends_once_a_429_was_among_the_failures(tmp_path: Path) -> None:
    """Strands' ModelRetryStrategy retries a throttled call around the client's own two
    retries: 500, 500, 429 then a fourth request is within it; three 500s and a fourth
    request are not."""
    done = "{script: " + _DONE + "}"
    throttled = _budget_run(
        tmp_path,
        [
            "{script: {}, fault: {status: 500}, repeat: 2}",
            "{script: {}, fault: {status: 429}}",
            done,
        ],
        posts=4,
    )
    assert verdict(_declaring(throttled, max_retries=2), "A9").status == "failed"
    assert (
        verdict(_declaring(throttled, max_retries=2, throttled_max_retries=8), "A9").status
        == "passed"
    )
    errors = _budget_run(tmp_path, ["{script: {}, fault: {status: 500}, repeat: 3}", done], posts=4)
    failed = verdict(_declaring(errors, max_retries=2, throttled_max_retries=8), "A9")
    assert "retry 3 of one request; the row declares at most 2" in failed.message
    # A rate-limit error event inside the 200 stream is a throttle too.
    limited = "{script: " + _DONE + ", fault: {ending: error_event, kind: rate_limit}, repeat: 3}"
    events = _budget_run(tmp_path, [limited, done], posts=4)
    assert verdict(_declaring(events, max_retries=2), "A9").status == "failed"
    assert (
        verdict(_declaring(events, max_retries=2, throttled_max_retries=8), "A9").status == "passed"
    )
