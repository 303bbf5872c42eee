"""The WebSocket checks: a turn's messages re-sent across continuation frames (message
boundaries instead of byte boundaries), and sessions: several turns on one connection, the
client's side checked too.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence

from stream_harness.adapters.protocol import AdapterResult, running_case, safe_run
from stream_harness.adapters.ws_session import SessionPlan, session_plan
from stream_harness.conformance.cases import Case
from stream_harness.contract.events import Event
from stream_harness.providers.registry import get as get_protocol
from stream_harness.recordings.cassette import CassetteError, load_cassette
from stream_harness.server.loopback import LoopbackServer
from stream_harness.server.ws_session import CheckedSession, parse_create
from stream_harness.wire.websocket import refragment_log

from .engine import Check, CheckContext, Failure, differing, message_key, outcome_of, summary_of


def _websocket_turn(case: Case, expected: list[Event]) -> bool:
    return case.status < 400 and get_protocol(case.protocol).framing.name == "websocket-json"


def message_cuts(seed: str, n: int, payload: bytes) -> list[int]:
    """Where message ``n`` is cut into frames under one seeded re-framing: inside its
    first multi-byte UTF-8 character when it has one (a text frame need not end on a
    character), and one to four random offsets."""
    rng = random.Random(f"{seed}:{n}")
    if len(payload) < 2:
        return []
    cuts = {rng.randrange(1, len(payload)) for _ in range(rng.randint(1, 4))}
    wide = next((i for i, b in enumerate(payload) if b >= 0xC0), None)
    if wide is not None and wide + 1 < len(payload):
        cuts.add(wide + 1)
    return sorted(cuts)


def check_message_framing(ctx: CheckContext) -> list[Failure]:
    """Every message of a WebSocket turn re-sent across continuation frames (RFC 6455
    5.4), some cut inside a UTF-8 character: the same final message as the recorded
    framing. The socket's counterpart of split-invariance, whose byte splits do not reach
    a client behind a WebSocket library."""
    whole = ctx.whole()
    if whole.crashed:
        return [
            differing(
                f"the adapter crashed on the recorded turn: {whole.crashed}",
                {"crashed": None},
                outcome_of(whole),
            )
        ]
    baseline = message_key(whole)
    rounds = 1 if ctx.replaying else max(1, min(ctx.examples, 20))
    for r in range(rounds):
        body = refragment_log(
            ctx.case.body, functools.partial(message_cuts, f"frames:{ctx.seed}:{ctx.case.id}:{r}")
        )
        result = ctx.run_body(body)
        if message_key(result) != baseline:
            return [
                differing(
                    f"the turn re-framed into continuation frames (round {r}) gives a different "
                    f"final message ({summary_of(result)} instead of {summary_of(whole)})",
                    outcome_of(whole),
                    outcome_of(result),
                    command=ctx.command("message-framing"),
                )
            ]
    return []


# WebSocket sessions: several turns on one connection, the client's side checked too

_session_cache: dict[str, SessionPlan | None] = {}


def session_of(case: Case) -> SessionPlan | None:
    """The case's cassette read as a session, on its first turn only (a session check runs
    once a connection): two turns or more, one response at a time; else None."""
    if case.interaction != 0 or get_protocol(case.protocol).framing.name != "websocket-json":
        return None
    key = str(case.cassette)
    if key not in _session_cache:
        try:
            turns = load_cassette(case.cassette).interactions
        except CassetteError:
            turns = ()
        plan = session_plan(
            [parse_create(t.request.body) for t in turns], [t.response.body for t in turns]
        )
        _session_cache[key] = plan if len(turns) >= 2 and not plan.concurrent else None
    return _session_cache[key]


def _session(case: Case, expected: list[Event]) -> bool:
    plan = session_of(case)
    return plan is not None and len(plan.turns) >= 2 and not plan.refused


def _chained_session(case: Case, expected: list[Event]) -> bool:
    plan = session_of(case)
    return _session(case, expected) and plan is not None and any(t.chained for t in plan.turns[1:])


def _refused_session(case: Case, expected: list[Event]) -> bool:
    plan = session_of(case)
    return plan is not None and any(r + 1 < len(plan.logs) for r in plan.refused)


def play_session_case(
    ctx: CheckContext, plan: SessionPlan
) -> tuple[list[AdapterResult], CheckedSession] | Failure:
    """The adapter's ``run_session`` against a loopback replay of the whole connection that
    compares each ``response.create`` with the recorded one."""
    run = getattr(ctx.adapter, "run_session", None)
    if run is None:
        return Failure("the adapter says it runs sessions but has no run_session method")
    server_side = CheckedSession(list(plan.logs), [dict(c) for c in plan.creates])
    with LoopbackServer(server_side) as server:
        try:
            with running_case(ctx.case.id):
                results = list(run(ctx.case.protocol, server.url, plan.turns))
        except Exception as exc:
            return differing(
                f"the adapter crashed in run_session: {type(exc).__name__}: {exc}",
                {"crashed": None},
                {"crashed": str(exc)},
            )
    return results, server_side


def _played(
    ctx: CheckContext,
) -> tuple[SessionPlan, list[AdapterResult], CheckedSession] | Failure:
    """The case's session plan, played (:func:`play_session_case`)."""
    plan = session_of(ctx.case)
    assert plan is not None
    played = play_session_case(ctx, plan)
    if isinstance(played, Failure):
        return played
    results, server_side = played
    return plan, results, server_side


def _sent_differences(
    plan: SessionPlan, server_side: CheckedSession, turns: Sequence[int]
) -> list[str]:
    out = []
    for i in turns:
        if i >= len(server_side.sent):
            out.append(
                f"turn {i}: the client sent no response.create (it sent {len(server_side.sent)} of {len(plan.logs)})"
            )
            break
        out.extend(f"turn {i}: {d}" for d in server_side.differences.get(i, []))
    return out


def _sent_failures(
    ctx: CheckContext,
    plan: SessionPlan,
    server_side: CheckedSession,
    problems: list[str],
    check: str,
) -> list[Failure]:
    """The check's one failure naming each difference in what the client sent, or none."""
    if not problems:
        return []
    return [
        differing(
            "; ".join(problems),
            {"sent": list(plan.creates)},
            {"sent": server_side.sent},
            command=ctx.command(check),
        )
    ]


def check_session_turns(ctx: CheckContext) -> list[Failure]:
    """Each turn played on one connection gives the result the same turn gives alone (on a
    fresh connection): no blocks, usage or stop reason of an earlier turn carried over."""
    played = _played(ctx)
    if isinstance(played, Failure):
        return [played]
    plan, results, _ = played
    cassette = load_cassette(ctx.case.cassette).interactions
    for i, recorded in enumerate(plan.answered_by):
        turn = cassette[recorded]
        alone = safe_run(
            ctx.adapter,
            ctx.case.protocol,
            [turn.response.body],
            status=turn.response.status,
            headers=turn.response.headers,
            case=ctx.case.id,
        )
        if i >= len(results):
            return [
                differing(
                    f"turn {i} of {len(plan.turns)}: the session gave no result (it stopped after turn {len(results) - 1})",
                    outcome_of(alone),
                    {"terminal": "none"},
                    command=ctx.command("session-turns"),
                )
            ]
        if message_key(results[i]) != message_key(alone):
            return [
                differing(
                    f"turn {i} of {len(plan.turns)} on one connection differs from the same turn alone "
                    f"({summary_of(results[i])} instead of {summary_of(alone)})",
                    outcome_of(alone),
                    outcome_of(results[i]),
                    command=ctx.command("session-turns"),
                )
            ]
    return []


def check_session_chaining(ctx: CheckContext) -> list[Failure]:
    """Each ``response.create`` the client sends on the connection is the recorded one: a
    chained turn carries the previous response's id and only the new input items."""
    played = _played(ctx)
    if isinstance(played, Failure):
        return [played]
    plan, _, server_side = played
    problems = _sent_differences(plan, server_side, range(len(plan.logs)))
    return _sent_failures(ctx, plan, server_side, problems, "session-chaining")


def check_previous_response_recovery(ctx: CheckContext) -> list[Failure]:
    """After a ``previous_response_not_found`` error, the client's next ``response.create``
    resends the whole context with no ``previous_response_id``, and the resent turn's result
    is the recorded one's."""
    played = _played(ctx)
    if isinstance(played, Failure):
        return [played]
    plan, results, server_side = played
    problems = _sent_differences(plan, server_side, range(len(plan.logs)))
    for i, recorded in enumerate(plan.answered_by):
        if recorded - 1 in plan.refused and i < len(results) and results[i].terminal != "done":
            problems.append(
                f"turn {i} ended in {results[i].terminal}; the recorded resend completes"
            )
    return _sent_failures(ctx, plan, server_side, problems, "previous-response-recovery")


CHECKS: tuple[Check, ...] = (
    Check("message-framing", "a WebSocket turn's messages split across continuation frames give the same final message", "C13", "message", _websocket_turn, check_message_framing),
    Check("session-turns", "each turn on one WebSocket connection equals the same turn alone: no state carried over", "C1, C6, C13", "message", _session, check_session_turns, needs="sessions", needs_default=False),
    Check("session-chaining", "a chained turn sends the previous response's id and only the new input items", "C13", "message", _chained_session, check_session_chaining, needs="sessions", needs_default=False),
    Check("previous-response-recovery", "after previous_response_not_found the client resends the full context without previous_response_id", "C15", "message", _refused_session, check_previous_response_recovery, needs="recovers_previous_response", needs_default=False),
)  # fmt: skip
