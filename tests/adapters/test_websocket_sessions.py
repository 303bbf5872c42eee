"""Several turns on one WebSocket connection (specs/protocols/openai-responses-websocket.md,
"Sessions"): the replay's comparison of each client ``response.create`` with the recorded
one, a cassette read as user turns, and the session checks on the reference, on clients
with one planted bug, and on the openai SDK's ``responses.connect()`` (loopback only)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.protocol import (
    Adapter,
    AdapterLoadError,
    AdapterResult,
    ReferenceAdapter,
)
from stream_harness.adapters.registry import adapter_spec
from stream_harness.adapters.ws_session import (
    ChainState,
    SessionTurn,
    reference_session,
    session_plan,
)
from stream_harness.conformance import (
    CHECKS_BY_ID,
    RunConfig,
    bundled_cassettes,
    load_cases,
    run_adapter,
)
from stream_harness.recordings.cassette import load_cassette
from stream_harness.server.loopback import LoopbackServer
from stream_harness.server.ws_session import CheckedSession, create_differences, parse_create

WEBSOCKET = bundled_cassettes() / "openai-responses-websocket"
SESSION_CHECKS = ("session-turns", "session-chaining", "previous-response-recovery")


def _plan(name: str):  # type: ignore[no-untyped-def]
    turns = load_cassette(WEBSOCKET / f"{name}.yaml").interactions
    return session_plan(
        [parse_create(t.request.body) for t in turns], [t.response.body for t in turns]
    )


def test_a_create_is_compared_on_the_chain_id_and_the_input_items() -> None:
    recorded = {
        "type": "response.create",
        "previous_response_id": "resp_1",
        "input": [{"role": "user", "content": "Hi"}],
    }
    assert create_differences(recorded, dict(recorded)) == []
    assert (
        create_differences(recorded, {**recorded, "input": "Hi"}) == []
    )  # a bare string is that message
    assert create_differences(recorded, {**recorded, "previous_response_id": None}) == [
        "sent no previous_response_id, recorded 'resp_1'"
    ]
    resent = {
        **recorded,
        "input": [{"role": "user", "content": "Earlier"}, {"role": "user", "content": "Hi"}],
    }
    assert create_differences(recorded, resent) == ["sent 2 input item(s), recorded 1"]
    fresh = {"type": "response.create", "previous_response_id": None, "input": "Hi"}
    assert create_differences(fresh, {**fresh, "previous_response_id": "resp_0"}) == [
        "sent previous_response_id 'resp_0', recorded none (the full context, a new chain)"
    ]
    # An output message resent as input is the same message as its short form.
    output = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Yo", "annotations": []}],
    }
    assert (
        create_differences(
            {"input": [{"role": "assistant", "content": "Yo"}]},
            {"type": "response.create", "input": [output]},
        )
        == []
    )


def test_a_cassette_read_as_user_turns() -> None:
    chained = _plan("chained_turns")
    assert [t.chained for t in chained.turns] == [False, True, True] and chained.answered_by == (
        0,
        1,
        2,
    )
    # The resend after previous_response_not_found is the client's, not a user turn; what
    # its user held before the connection is the first turn's context.
    refused = _plan("previous_response_not_found")
    assert len(refused.turns) == 1 and refused.refused == {0} and refused.answered_by == (1,)
    assert [m["content"] for m in refused.turns[0].context] == [
        "My name is Ada.",
        "Nice to meet you, Ada.",
    ]
    mid = _plan("recovery_after_chained_turn")
    assert (
        len(mid.turns) == 2
        and mid.refused == {1}
        and mid.answered_by == (0, 2)
        and mid.turns[0].context == ()
    )
    assert _plan("response_already_in_flight").concurrent


def _sent(adapter_session, name: str) -> CheckedSession:  # type: ignore[no-untyped-def]
    plan = _plan(name)
    server_side = CheckedSession(list(plan.logs), [dict(c) for c in plan.creates])
    with LoopbackServer(server_side) as server:
        adapter_session("openai-responses-websocket", server.url, plan.turns)
    return server_side


def test_the_reference_resends_its_whole_history_after_the_chain_is_lost() -> None:
    server_side = _sent(ReferenceAdapter().run_session, "recovery_after_chained_turn")
    assert server_side.differences == {}
    resent = server_side.sent[2]
    assert resent["previous_response_id"] is None
    assert [i.get("role") for i in resent["input"]] == ["user", "assistant", "user"]
    assert resent["input"][1]["type"] == "message"  # the output item as the response returned it


class _SameParent(ChainState):
    def recovery(self, turn: SessionTurn) -> dict[str, object]:
        return self.request(turn)  # the same id again: what the SDK's README says not to do


class RetriesSameParent:
    """A client that answers previous_response_not_found by sending the same request again."""

    name = "retries-same-parent"
    level = "event"
    sessions = True
    recovers_previous_response = True

    def __init__(self) -> None:
        self._ref = ReferenceAdapter()
        self.protocols = self._ref.protocols

    def version(self) -> str:
        return "mutant"

    def run(self, protocol: str, chunks: Sequence[bytes], **kwargs: object) -> AdapterResult:
        return self._ref.run(protocol, chunks, **kwargs)  # type: ignore[arg-type]

    def run_session(
        self, protocol: str, base_url: str, turns: Sequence[SessionTurn]
    ) -> list[AdapterResult]:
        chain = _SameParent(turns[0].context)
        runs = reference_session(protocol, base_url, turns, chain=chain)
        return [AdapterResult(message=getattr(e[-1], "message", None), events=e) for e in runs]


def _outcomes(adapter: object, check: str) -> dict[str, tuple[str, str]]:
    cases, _ = load_cases([WEBSOCKET])
    run = run_adapter(adapter, cases, RunConfig(examples=2, checks=[CHECKS_BY_ID[check]]))  # type: ignore[arg-type]
    return {r.case: (r.outcome, r.failures[0].message if r.failures else "") for r in run.results}


def test_retrying_the_same_parent_is_no_recovery() -> None:
    found = _outcomes(RetriesSameParent(), "previous-response-recovery")
    assert set(found) == {
        "openai-responses-websocket/previous_response_not_found.yaml#0",
        "openai-responses-websocket/recovery_after_chained_turn.yaml#0",
    }
    for outcome, message in found.values():
        assert outcome == "failed" and "sent previous_response_id" in message


def _sdk() -> Adapter:
    try:
        return load_adapter(adapter_spec("openai-sdk-websocket"))
    except AdapterLoadError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("check", SESSION_CHECKS)
def test_the_openai_sdk_row_across_turns(check: str) -> None:
    sdk = _sdk()
    found = _outcomes(sdk, check)
    if check == "previous-response-recovery":
        # The SDK leaves the resend to its user (its lib/responses_websocket/README.md):
        # a declared convention, so the check does not apply to the row.
        assert sdk.recovers_previous_response is False and found == {}
        return
    assert found and {o for o, _ in found.values()} == {"passed"}, found


def test_the_openai_sdk_sends_the_chain_id_it_was_given() -> None:
    server_side = _sent(_sdk().run_session, "chained_turns")  # type: ignore[attr-defined]
    assert server_side.differences == {} and len(server_side.sent) == 3
    assert [s.get("previous_response_id") for s in server_side.sent[1:]] == [
        c["previous_response_id"] for c in _plan("chained_turns").creates[1:]
    ]


def _js() -> Adapter:
    try:
        return load_adapter(adapter_spec("js-openai-websocket"))
    except AdapterLoadError as exc:
        pytest.skip(str(exc))


def test_the_node_sdk_row_plays_a_session_over_the_stdio_protocol() -> None:
    js = _js()
    try:
        assert js.sessions is True  # declared in its started reply
        plan = _plan("chained_turns")
        server_side = CheckedSession(list(plan.logs), [dict(c) for c in plan.creates])
        with LoopbackServer(server_side) as server:
            results = js.run_session("openai-responses-websocket", server.url, plan.turns)  # type: ignore[attr-defined]
        assert server_side.differences == {} and len(server_side.sent) == 3
        texts = [
            "".join(
                b.content
                for b in r.message.content
                if hasattr(b, "content") and isinstance(b.content, str)
            )
            for r in results
            if r.message is not None
        ]
        assert texts[1:] == ["It is 18 °C and sunny in Lyon.", "Tomorrow looks similar."], results
        found = _outcomes(js, "session-turns")
        assert found and {o for o, _ in found.values()} == {"passed"}, found
    finally:
        js.close()  # type: ignore[attr-defined]
