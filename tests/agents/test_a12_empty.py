"""A12 accepts "empty" as naming the fault exactly when the body ended before its first
complete event (issue 33).

js-langgraph raises ``Error: Received empty response from chat model call.`` for
``place: {byte: 0}, ending: clean_eof``: true, and what a client sees for any end of the
body before the first event's end (an SSE event's blank line, an event-stream frame's last
byte), since it read nothing it could dispatch. Once an event went out, the response was
not empty, and the same words fail A12. The first event's end is found here from the bytes
as each wire format defines it, not by the framing the check uses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.agents.test_agent_checks import USER, Scripted, scenario, verdict

from stream_harness.agents.conformance.explore import explored_scenario
from stream_harness.agents.conformance.runner import observe
from stream_harness.agents.protocol import AgentOutcome, AgentTask
from stream_harness.agents.scenario.render import PROTOCOLS

EMPTY = "Received empty response from chat model call."


def first_event_end(protocol: str, body: bytes) -> int:
    """The byte count at which the body's first event is complete."""
    if protocol == "bedrock-converse-stream":
        return int.from_bytes(body[:4], "big")  # an event-stream prelude's total length
    return body.index(b"\n\n") + 2  # an SSE event ends at its blank line


def says_empty(ending: str, protocol: str, byte: int) -> tuple[str, str]:
    base = scenario("weather_tool_call")
    cut = explored_scenario(base, ((0, {"place": {"byte": byte}, "ending": ending}),))

    def steps(task: AgentTask, post: Callable[..., Any]) -> AgentOutcome:
        post([USER])  # answered by position whatever the path: the protocol's bytes
        return AgentOutcome(error_type="Error", error_message=EMPTY)

    agent = Scripted(steps)
    agent.protocols = frozenset({protocol})
    outcome = verdict(observe(agent, cut, protocol), "A12")
    return outcome.status, outcome.message


def first_end(protocol: str) -> int:
    served = scenario("weather_tool_call").served(protocol)[0]
    return first_event_end(protocol, b"".join(served.chunks))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a12_accepts_empty_for_a_clean_end_before_the_first_event_ends(protocol: str) -> None:
    end = first_end(protocol)
    for byte in (0, 1, end - 1):
        status, message = says_empty("clean_eof", protocol, byte)
        assert status == "passed", f"byte {byte} of {end}: {message}"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a12_fails_empty_once_the_first_event_went_out(protocol: str) -> None:
    status, message = says_empty("clean_eof", protocol, first_end(protocol))
    assert status == "failed"
    assert EMPTY in message and "transport fault" in message


def test_a12_accepts_empty_for_a_dropped_connection_before_the_first_event() -> None:
    protocol = "anthropic-messages"
    assert says_empty("fin", protocol, 0)[0] == "passed"
    assert says_empty("fin", protocol, first_end(protocol) + 5)[0] == "failed"
