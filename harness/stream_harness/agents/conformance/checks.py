"""The agent contract (specs/agent-contract.md): numbered checks on one observed agent run.

Each check reads only what the harness observed, never the agent's own account: the
responses served (and what each really delivered, :class:`~stream_harness.agents.scenario.render.Served`),
the requests the agent sent (their bodies read back per protocol), the ledger of tool
executions and the outcome the adapter returned. Policies frameworks legitimately
differ on (how many retries, whether to retry after partial output, eager tools, the
retry-after cap, how delays were shortened) come from the row's declared conventions,
so a difference of policy is shown beside the row, never failed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from stream_harness.agents.exchange import RequestView, SentCall, SentResult, read_request
from stream_harness.agents.protocol import AgentOutcome
from stream_harness.agents.scenario.model import AgentScenario, canonical
from stream_harness.agents.scenario.render import Served, ServedCall
from stream_harness.agents.server import Execution
from stream_harness.conformance.generated_ids import steady_text
from stream_harness.providers.registry import get as get_protocol
from stream_harness.server.loopback import Hit
from stream_harness.wire import FramingError

Status = Literal["passed", "failed", "skipped"]

NAME_PAIRED: Final = frozenset({"google-generative-ai"})
"""Protocols whose requests may pair a result with its call by name and order instead of
an id (Gemini's functionResponse.id is optional): A3 accepts an id-less result there."""

DEFAULT_CONVENTIONS: Final[Mapping[str, Any]] = {
    "max_retries": 2,
    "retry_after_cap_s": 60.0,
    "time_scale": 1.0,
    "retries_after_partial_output": True,
    "eager_tools": False,
    "retry_after_over_cap": "capped",
    "retried_statuses": None,
    "retry_after_honoured": True,
    "partial_output_retries": None,
    "throttled_max_retries": None,
    "retries_span_run": False,
}
"""What a row that declares nothing is held to: the Stainless SDKs' two retries
(research/provider-facts.md 5.6), real time, and seed 000's ``Math.min(retryAfter, 60 s)``:
a hint above the cap is waited up to the cap, then retried (``capped``)."""


@dataclass
class AgentRun:
    """Everything observed of one (agent, scenario, protocol) run."""

    agent: str
    scenario: AgentScenario
    protocol: str
    served: Sequence[Served]
    requests: Sequence[Hit]
    ledger: Sequence[Execution]
    outcome: AgentOutcome | None
    crash: str | None = None  # the adapter raised or ran past its time
    hung: bool = False  # the crash was a run past its time: labelled timeout, not crashed
    elapsed: float = 0.0
    conventions: Mapping[str, Any] = field(default_factory=dict)
    answered: Sequence[int | None] | None = None
    """The response index each request got (None: past the script); by default request k
    got response k. A scenario that matches responses by content changes the order."""

    def in_turn_order(self) -> list[Execution]:
        """The executions by turn (the request they followed), then tool and arguments:
        the order a check reports the first problem in. Calls of one turn that run side by
        side finish in any order (LangGraph ran call_p1 or call_r1 first, run to run), and
        a message naming whichever ran first read differently with the same verdict."""
        return sorted(self.ledger, key=lambda e: (e.after_request, e.tool, canonical(e.arguments)))

    def index(self, k: int) -> int | None:
        if self.answered is not None:
            return self.answered[k] if k < len(self.answered) else None
        return k if k < len(self.served) else None

    def answers(self, upto: int | None = None) -> list[tuple[int, Served]]:
        """(request index, the response it got) for the requests answered from the script."""
        out = []
        for k in range(min(len(self.requests), len(self.requests) if upto is None else upto)):
            served = self.answer(k)
            if served is not None:
                out.append((k, served))
        return out

    def past_script(self) -> int:
        """Requests answered with no scripted response left."""
        return sum(1 for k in range(len(self.requests)) if self.index(k) is None)

    def unplayed_after(self, k: int) -> bool:
        """Some scripted response was not yet played by request ``k``."""
        played = {self.index(j) for j in range(k + 1)}
        return any(i not in played for i in range(len(self.served)))

    def convention(self, name: str) -> Any:
        """The row's policy for this run's protocol: one framework drives a different
        client per protocol (google-genai never retries where the openai client retries
        twice), so ``by_protocol[protocol]`` comes before the row's top-level value."""
        by_protocol = self.conventions.get("by_protocol")
        if isinstance(by_protocol, Mapping):
            policy = by_protocol.get(self.protocol)
            if isinstance(policy, Mapping) and name in policy:
                return policy[name]
        return self.conventions.get(name, DEFAULT_CONVENTIONS[name])

    def retry_after_cap(self) -> float:
        """The row's retry-after cap in seconds; a declared ``null`` is no cap at all."""
        cap = self.convention("retry_after_cap_s")
        return float("inf") if cap is None else float(cap)

    def view(self, k: int) -> RequestView:
        return read_request(self.protocol, _json(self.requests[k].body))

    def answer(self, k: int) -> Served | None:
        """The response request ``k`` got (None: past the script)."""
        i = self.index(k)
        return self.served[i] if i is not None else None

    def call_for(self, execution: Execution) -> tuple[int, ServedCall] | None:
        """The delivered call an execution carried out: the latest response before it with
        a delivered call of that name and those exact arguments."""
        wanted = canonical(execution.arguments)
        for k, served in reversed(self.answers(execution.after_request)):
            for call in served.calls:
                if (
                    call.delivered
                    and call.strict
                    and call.name == execution.tool
                    and canonical(call.arguments) == wanted
                ):
                    return k, call
        return None

    def malformed_for(self, execution: Execution) -> tuple[int, ServedCall] | None:
        """The delivered call whose argument text was not valid JSON that an execution no
        valid call explains carried out: the latest of that tool's name before it (its
        arguments, repaired, replaced by ``{}`` or defaults or a raw string, need not be
        the served guess), or None (A13)."""
        if self.call_for(execution) is not None:
            return None
        for k, served in reversed(self.answers(execution.after_request)):
            for call in served.calls:
                if call.delivered and not call.strict and call.name == execution.tool:
                    return k, call
        return None


def _json(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    check: str
    status: Status
    message: str = ""
    advice: str = ""
    """On a failure, the check's one line on what to change in the agent."""


CheckFn = Callable[[AgentRun], str | None]
"""A check returns None when it holds, else one line saying what went wrong."""


@dataclass(frozen=True, slots=True)
class AgentCheck:
    id: str
    title: str
    fn: CheckFn
    applies: Callable[[AgentRun], bool] = lambda run: True
    advice: str = ""
    """What to change in the agent when the check fails: one line, shown under each
    failure (console, pytest, report), kept here beside the check it answers."""


def _fmt_args(arguments: Any) -> str:
    text = canonical(arguments)
    return text if len(text) <= 80 else text[:77] + "..."


# -- A1 no tool runs on incomplete arguments --------------------------------------------------


def a1_complete_arguments(run: AgentRun) -> str | None:
    for e in run.in_turn_order():
        if run.call_for(e) is None and run.malformed_for(e) is None:  # A13 judges those
            served = [
                f"{c.name}{_fmt_args(c.arguments)}{'' if c.delivered else ' (not delivered)'}"
                for _, s in run.answers(e.after_request)
                for c in s.calls
            ]
            return (
                f"ran {e.tool}{_fmt_args(e.arguments)}, which no fully delivered call carried "
                f"(served: {', '.join(served) or 'no calls'})"
            )
    return None


# -- A2 no side effect twice -------------------------------------------------------------------


def a2_effect_once(run: AgentRun) -> str | None:
    effects = {t.name for t in run.scenario.tools if t.side_effect}
    counts: dict[tuple[str, str], int] = {}
    for e in run.ledger:
        if e.tool in effects:
            key = (e.tool, canonical(e.arguments))
            counts[key] = counts.get(key, 0) + 1
    for (tool, args), n in counts.items():
        distinct = _distinct_calls(run, tool, args)
        if n > distinct:
            served = sum(
                1
                for _, s in run.answers()
                for c in s.calls
                if c.delivered and c.name == tool and canonical(c.arguments) == args
            )
            resent = (
                f" ({served - distinct} of them the same call served again after a restart)"
                if served > distinct
                else ""
            )
            return (
                f"side effect {tool}{args} happened {n} times for {distinct} call(s) served{resent}"
            )
    return None


def _distinct_calls(run: AgentRun, tool: str, args: str) -> int:
    """How many distinct calls of ``tool`` with ``args`` were delivered. A call served again
    under a fresh id after a retry restarted the run is the same call: it is distinct only
    when the request it answered carried an earlier one (the conversation moved past it and
    the model asked again). Unreadable requests count every id, as before."""
    seen: list[str] = []
    distinct = 0
    for k, s in run.answers():
        for c in s.calls:
            if not (c.delivered and c.name == tool and canonical(c.arguments) == args):
                continue
            if c.id in seen:
                continue
            view = run.view(k)
            carried = any(
                x.id in seen or (not x.id and x.name == tool and canonical(x.arguments) == args)
                for x in view.calls
            )
            if not seen or not view.readable or carried:
                distinct += 1
            seen.append(c.id)
    return distinct


# -- A3 results back, paired, assistant turn replayed ----------------------------------------


def _next_request(run: AgentRun, after: int) -> int | None:
    return after if after < len(run.requests) else None


def a3_results_paired(run: AgentRun) -> str | None:
    for e in run.in_turn_order():
        found = run.call_for(e)
        if found is None:
            continue  # A1's failure, not this one's
        j, call = found
        k = _next_request(run, e.after_request)
        if k is None:
            if run.outcome is not None and not run.outcome.raised:
                return f"call {call.id} ({call.name}) ran, but no request carried its result back"
            continue
        view = run.view(k)
        if not view.readable:
            return f"request {k} is not {run.protocol} JSON; cannot find the result of {call.id}"
        answered = run.answer(j)
        delivered = [c for c in answered.calls if c.delivered] if answered else [call]
        nth = _nth_of_name(delivered, delivered.index(call))
        call = _as_replayed(run, view, call)
        turn = _replay_turn(run, j, view)
        # An id-less call pairs by id with nothing: "" would match every id-less result
        # (Gemini's), found exploring LangGraph (`mutate: {id: missing}`).
        results = [r for r in view.results if call.id and r.id == call.id]
        if not results:
            results = [r for r in turn.results if r.name == call.name][nth : nth + 1]
        if len(results) != 1:
            return f"request {k} carries {len(results)} results for call {call.id} ({call.name}), not 1"
        sent = _sent(view, turn, call, nth)
        if len(sent) != 1:
            return f"request {k} replays call {call.id} {len(sent)} times, not once"
        if sent[0].name != call.name or canonical(sent[0].arguments) != canonical(call.arguments):
            return (
                f"request {k} replays call {call.id} as {sent[0].name}{_fmt_args(sent[0].arguments)}, "
                f"served {call.name}{_fmt_args(call.arguments)}"
            )
    return _calls_answered(run)


def _as_replayed(run: AgentRun, view: RequestView, call: ServedCall) -> ServedCall:
    """A call served without an id (``mutate: {id: missing}``) under the id the agent gave
    it: the request's replayed call of that name and those arguments whose id no response
    served (the latest). An agent must give an id-less call one of its own to send its
    result back (openai-completions, anthropic-messages and the rest require one), so it
    is paired through that id; the call itself unchanged when it has an id or none fits."""
    if call.id or not view.readable:
        return call
    served = {c.id for _, s in run.answers() for c in s.calls if c.id}
    own = [
        c
        for c in view.calls
        if c.id
        and c.id not in served
        and c.name == call.name
        and canonical(c.arguments) == canonical(call.arguments)
    ]
    return replace(call, id=own[-1].id) if own else call


@dataclass(frozen=True, slots=True)
class _Turn:
    """The id-less calls and results a request pairs with one response's calls by name and
    order (empty off a name-paired protocol)."""

    calls: tuple[SentCall, ...] = ()
    results: tuple[SentResult, ...] = ()


def _replay_turn(run: AgentRun, j: int, view: RequestView) -> _Turn:
    """On a name-paired protocol, where ``view`` (a request after request ``j``) replays
    response ``j``: the first turn carrying calls that request ``j`` did not carry already
    (the model turn appended for the response), its id-less calls, and the id-less results
    in the turns after it up to the next turn carrying calls (the function turn). Pairing
    by name and order across the whole request took turn 1's ``get_weather`` for turn 3's
    (three_tool_turns) and a retried response's Paris for its resend's Rome
    (parallel_tool_calls): found exploring agno and LangGraph on Gemini."""
    if run.protocol not in NAME_PAIRED:
        return _Turn()
    before = run.view(j)
    carried = before.messages if before.readable else 0
    turns = sorted({c.turn for c in view.calls if c.turn >= carried})
    if not turns:
        return _Turn()  # the response's turn was not appended: dropped (a retry, a restart)
    t = turns[0]
    upto = min((c.turn for c in view.calls if c.turn > t), default=view.messages)
    return _Turn(
        tuple(c for c in view.calls if c.turn == t and not c.id),
        tuple(r for r in view.results if t < r.turn < upto and not r.id),
    )


def _nth_of_name(calls: Sequence[ServedCall], i: int) -> int:
    """The place of ``calls[i]`` among the response's calls of its name: on a name-paired
    protocol an id-less replay or result pairs by name and order within its turn (Gemini:
    Paris, then Rome)."""
    return sum(1 for c in calls[:i] if c.name == calls[i].name)


def _sent(view: RequestView, turn: _Turn, call: ServedCall, nth: int) -> list[SentCall]:
    """The replays of ``call`` in a request: by id, or the ``nth`` id-less call of that
    name in the turn replaying its response (a name-paired protocol)."""
    found = [c for c in view.calls if call.id and c.id == call.id]
    return found or [c for c in turn.calls if c.name == call.name][nth : nth + 1]


def _answered(view: RequestView, turn: _Turn, call: ServedCall, nth: int) -> bool:
    if call.id and any(r.id == call.id for r in view.results):
        return True
    return nth < len([r for r in turn.results if r.name == call.name])


def _calls_answered(run: AgentRun) -> str | None:
    """Every delivered call of a completed response, run or not, is either answered in the
    conversation that continues it or dropped with its whole turn (a restart, a retry):
    a call left out of a turn replayed with others, or replayed without a result, is named;
    so are arguments sent back other than those delivered."""
    for k, served in run.answers():
        if not served.complete or not served.calls or k + 1 >= len(run.requests):
            continue
        view = run.view(k + 1)
        if not view.readable:
            continue
        turn = _replay_turn(run, k, view)
        delivered = [_as_replayed(run, view, c) for c in served.calls if c.delivered]
        nth = [_nth_of_name(delivered, i) for i in range(len(delivered))]
        replayed = [_sent(view, turn, c, n) for c, n in zip(delivered, nth, strict=True)]
        if not any(replayed):
            continue  # the turn was dropped whole: a restart (A2 judges what ran twice)
        for call, n, sent in zip(delivered, nth, replayed, strict=True):
            if not sent and not call.strict:
                continue  # a call that was not valid JSON may be dropped and asked again (A13)
            if not sent:
                return (
                    f"call {call.id} ({call.name}) of response {k} never ran and got no result: "
                    f"request {k + 1} replays the turn without it"
                )
            if not _answered(view, turn, call, n):
                ran = any(run.call_for(e) == (k, call) for e in run.ledger)
                return (
                    f"request {k + 1} replays call {call.id} ({call.name}) of response {k} "
                    f"without a result for it (it {'ran' if ran else 'never ran'})"
                )
            if call.strict and (
                sent[0].name != call.name
                or canonical(sent[0].arguments) != canonical(call.arguments)
            ):
                return (
                    f"request {k + 1} sends back call {call.id} as "
                    f"{sent[0].name}{_fmt_args(sent[0].arguments)}, delivered as "
                    f"{call.name}{_fmt_args(call.arguments)}"
                )
    return None


# -- A4 thinking and signatures sent back ------------------------------------------------------


def a4_thinking_replayed(run: AgentRun) -> str | None:
    for k, served in run.answers():
        if not (served.complete and served.thinking_signature and served.calls):
            continue
        if k + 1 >= len(run.requests):
            continue
        view = run.view(k + 1)
        if served.thinking_signature not in view.thinking_signatures:
            return (
                f"request {k + 1} does not send back the thinking block of response {k} with its "
                f"signature {served.thinking_signature} (sent: {list(view.thinking_signatures)})"
            )
    return None


def _has_thinking(run: AgentRun) -> bool:
    return any(s.thinking_signature and s.calls for s in run.served)


# -- A5 no terminal event, never a completed turn ------------------------------------------------


def _last_answered(run: AgentRun) -> tuple[int, Served | None]:
    k = len(run.requests) - 1
    return k, run.answer(k) if k >= 0 else None


def a5_terminal_event(run: AgentRun) -> str | None:
    eager = bool(run.convention("eager_tools"))
    for e in run.in_turn_order():
        found = run.call_for(e)
        if found is None or eager:
            continue
        k, call = found
        answered = run.answer(k)
        if answered is not None and answered.stop in ("none", "error"):
            return f"call {call.id} ({call.name}) ran though response {k} ended without its terminal event"
    k, last = _last_answered(run)
    if (
        run.outcome is not None
        and not run.outcome.raised
        and last is not None
        and last.stop in ("none", "error")
    ):
        return (
            f"the run reported success (output {run.outcome.output!r}) but the last response "
            f"({k}, {last.fault}) never completed"
        )
    return None


# -- A6 a length stop inside a tool call is not a call ---------------------------------------------


def a6_length_stop(run: AgentRun) -> str | None:
    for e in run.in_turn_order():
        for k, s in run.answers(e.after_request):
            if s.stop == "length" and any(c.name == e.tool and not c.delivered for c in s.calls):
                if run.call_for(e) is None:
                    return f"ran {e.tool}{_fmt_args(e.arguments)} from response {k}, cut by the output limit"
    return None


# -- A7 overflow is not retried as transient --------------------------------------------------------


def a7_overflow(run: AgentRun) -> str | None:
    for k, s in run.answers():
        if not s.overflow:
            continue
        if k + 1 < len(run.requests):
            before, after = run.view(k), run.view(k + 1)
            if (
                before.readable
                and after.readable
                and len(run.requests[k + 1].body) >= len(run.requests[k].body)
            ):
                return f"request {k + 1} resends the request that overflowed ({k}) no smaller: retried as transient"
        elif run.outcome is not None and not run.outcome.raised:
            return "the context overflow ended the run as a success"
    return None


# -- A8 non-retryable errors are not retried -----------------------------------------------------------


def _resends(run: AgentRun, k: int) -> bool:
    """Request ``k + 1`` repeats request ``k`` (the same conversation, nothing added)."""
    if k + 1 >= len(run.requests):
        return False
    a, b = run.view(k), run.view(k + 1)
    if a.readable and b.readable:
        return (a.messages, a.results, a.calls) == (b.messages, b.results, b.calls)
    return run.requests[k].body == run.requests[k + 1].body


def a8_no_retry_of_permanent(run: AgentRun) -> str | None:
    for k, s in run.answers():
        if s.status >= 400 and not s.retryable and not s.overflow and _resends(run, k):
            return (
                f"response {k} was HTTP {s.status} (not retryable), and request {k + 1} resent it"
            )
    return None


# -- A9 retryable errors retried, a bounded number of times -----------------------------------------


def a9_bounded_retry(run: AgentRun) -> str | None:
    limit = int(run.convention("max_retries"))
    throttled_limit = _declared_count(run, "throttled_max_retries", limit)
    partial_ok = bool(run.convention("retries_after_partial_output"))
    partial_limit = _declared_count(run, "partial_output_retries", limit)
    per_run = bool(run.convention("retries_span_run"))
    streak, throttled, spent = 0, False, 0
    for k in range(len(run.requests)):
        s = run.answer(k)
        if s is None:
            break
        if not s.retryable:
            # A resend of a permanent error (A8's and A7's to judge) still spends a
            # budget that spans the run.
            streak, throttled = 0, False
            spent += per_run and _resends(run, k)
            continue
        throttled = throttled or _throttle(s)
        if _resends(run, k):
            streak += 1
            spent += 1
            most = max(limit, throttled_limit) if throttled else limit
            if streak > most:
                return f"request {k + 1} is retry {streak} of one request; the row declares at most {most}"
            continue
        # Partial output: the 200 response had been handed over and began streaming (a
        # cut, an error event, a missing terminal event), text or not: the SDK clients
        # retry only before that point, the stream's failure is the caller's.
        partial = s.status == 200
        nothing_after = k + 1 >= len(run.requests)
        owed = partial_limit if partial else limit
        budget_left = (spent if per_run else streak) < owed
        streak, throttled = 0, False
        if _gives_up_over_cap(run, s) or _status_not_retried(run, s):
            continue
        if nothing_after and budget_left and (partial_ok or not partial) and run.unplayed_after(k):
            return (
                f"response {k} failed retryably ({s.fault}) and was not retried, "
                f"though the row declares up to {owed} retries"
            )
    return None


def _throttle(s: Served) -> bool:
    """A 429, or a stream's rate-limit error event: what a layer that retries throttles
    only (Strands' ModelRetryStrategy) retries around the client's own retries."""
    return s.status == 429 or s.fault.startswith("error_event_rate_limit")


def _declared_count(run: AgentRun, name: str, default: int) -> int:
    """A count the row may leave undeclared (``None``: ``default``, the row's max_retries)."""
    value = run.convention(name)
    return default if value is None else int(value)


def _status_not_retried(run: AgentRun, s: Served) -> bool:
    """An HTTP status outside the statuses the row's client retries (``retried_statuses``;
    google-genai retries 408, 429, 500, 502, 503, 504, never Anthropic's 529): a declared
    policy, not a failure to retry. None: every retryable status (408, 409, 429, >= 500)."""
    statuses = run.convention("retried_statuses")
    return statuses is not None and s.status >= 400 and s.status not in set(statuses)


def _over_cap(run: AgentRun, s: Served) -> bool:
    """The response carries a retry-after above the row's cap (a ``null`` cap: none is)."""
    return s.retry_after is not None and s.retry_after > run.retry_after_cap()


def _gives_up_over_cap(run: AgentRun, s: Served) -> bool:
    """A retry-after above the row's cap, on a row whose client then raises at once
    (``retry_after_over_cap: give_up``): not retrying is the declared policy (A12 still
    judges the outcome)."""
    return _over_cap(run, s) and run.convention("retry_after_over_cap") == "give_up"


# -- A10 retry-after honoured up to a cap -------------------------------------------------------------


def a10_retry_after(run: AgentRun) -> str | None:
    scale = float(run.convention("time_scale"))
    cap = run.retry_after_cap()
    capped = run.convention("retry_after_over_cap") == "capped"
    for k, s in run.answers():
        if s.retry_after is None or not _resends(run, k):
            continue
        if _over_cap(run, s) and not capped:
            # backoff: the client waits as if there were no hint; give_up: the client
            # raised, so a resend is a framework's retry of an error, not of the hint.
            continue
        answered = run.requests[k]
        # From the start of the reply's last write (Hit.last_write): the client cannot
        # have read the reply before it, so a loaded machine only lengthens the wait seen.
        waited = run.requests[k + 1].arrived - (
            answered.last_write or answered.finished or answered.arrived
        )
        expected = min(s.retry_after, cap) * scale
        if waited < expected * 0.9:
            return (
                f"request {k + 1} came {waited:.3f} s after a retry-after of {s.retry_after:g} s "
                f"(expected at least {expected:.3f} s with the row's time scale {scale:g})"
            )
    return None


def _has_retry_after(run: AgentRun) -> bool:
    """A10 applies to a hint served to a row whose client reads hints at all: one that
    declares ``retry_after_honoured: false`` (google-genai waits by jittered backoff, 1 to
    2 s first) would pass or fail a 2 s hint by the draw of its jitter."""
    honoured = run.convention("retry_after_honoured") is not False
    return honoured and any(s.retry_after is not None for s in run.served)


# -- A11 text already shown is not shown twice ----------------------------------------------------------


def a11_text_once(run: AgentRun) -> str | None:
    if run.outcome is None or not run.outcome.output:
        return None
    output = run.outcome.output
    for k, s in run.answers():
        if s.complete or not s.text:
            continue
        final = [x.text for j, x in run.answers() if j > k and x.complete]
        if not final:
            continue  # no retry completed: a failed response taken as the answer is A5's
        allowed = max(t.count(s.text) for t in final)
        if output.count(s.text) > allowed:
            return (
                f"the output shows {s.text!r} {output.count(s.text)} times: the text of failed "
                f"response {k} was kept and shown again after the retry"
            )
    return None


# -- A12 the run ends, with an outcome that says what happened -------------------------------------------


def _declared_retry(run: AgentRun, k: int) -> bool:
    """Request ``k`` resends a retryable failure within the row's declared retries: a
    scenario whose failures outlast the script (retries_exhausted's 8) is not a loop for a
    row that declares more retries (llamaindex's Anthropic client: 10); A9 bounds them."""
    j = k
    while j > 0 and _resends(run, j - 1):
        j -= 1
    failed = [run.answer(i) for i in range(j, k)]
    return 0 < k - j <= int(run.convention("max_retries")) and all(
        s is not None and s.retryable for s in failed
    )


def a12_outcome(run: AgentRun) -> str | None:
    if run.crash is not None:
        return f"the adapter did not return an outcome: {run.crash}"
    assert run.outcome is not None
    looping = [k for k in range(len(run.requests)) if run.index(k) is None]
    if any(not _declared_retry(run, k) for k in looping):
        return (
            f"{len(run.requests)} model requests for {len(run.served)} scripted responses "
            f"({run.past_script()} past the script): the loop did not stop"
        )
    if looping:  # retries that outlasted the script: the run ends on its refusal
        if not run.outcome.raised:
            return "the run reported success after its retries ran past the script"
        return None
    k, last = _last_answered(run)
    if last is None:
        # What it ended with instead is the lead (a setup error, a refused connection).
        if run.outcome.raised:
            ended = f"it raised {run.outcome.error_type}: {run.outcome.error_message}"
        else:
            ended = f"it returned {run.outcome.output!r}"
        return f"the agent sent no model request ({ended})"
    if not run.outcome.raised:
        if last.stop in ("none", "error"):
            return None  # A5's failure
        if last.stop == "length" and last.calls:
            where = "inside" if any(not c.delivered for c in last.calls) else "after"
            return f"the run reported success on response {k}, cut by the output limit {where} a tool call"
        if last.stop == "length":
            return None  # a text cut by the limit: returning it is the row's policy
        if not last.complete:
            return f"the run reported success on response {k}, which failed ({last.fault})"
        if last.calls:
            return f"the run reported success while response {k} still asked for tools"
        expected = last.text.strip()
        if expected and expected not in (run.outcome.output or ""):
            return f"the output {run.outcome.output!r} is not the final text {expected!r}"
    elif last.complete and not last.calls and not run.unplayed_after(k):
        return (
            f"the run raised {run.outcome.error_type}: {run.outcome.error_message} after the "
            "final response completed"
        )
    elif last.stop in ("http", "error", "none"):
        return _error_unrelated(run.outcome, k, last)
    return None


TRANSPORT_WORDS: Final = (
    "connection", "connect", "disconnect", "closed", "incomplete", "chunk", "eof", "ended",
    "end of", "terminat", "premature", "peer", "reset", "protocol", "network", "timeout",
    "timed out", "stream", "socket", "interrupt", "truncat", "read error", "payload",
    "transfer", "not enough data", "readerror",
)  # fmt: skip
"""Words by which an exception names a transport fault (a dropped connection, a body that
ended without its terminal event): httpx's ``RemoteProtocolError: peer closed connection
without sending complete message body (incomplete chunked read)``, aiohttp's
``ClientPayloadError: Response payload is not completed`` (``TransferEncodingError: Not
enough data to satisfy transfer length header``), the SDKs' ``APIConnectionError``, a
framework's "stream ended", httpx's ``ReadError`` (a connection reset, whose message is
empty: rst_in_number).
A12 asks only that the outcome name the fault, not how."""

PARSE_WORDS: Final = ("malformed", "decode", "parse")
"""Words by which an exception names the frame it could not read: what a clean end of the
body inside an event leaves (the reference's "malformed JSON in SSE event #1",
pydantic-ai's "Failed to decode response as JSON"); accepted for that fault only."""

EMPTY_WORDS: Final = ("empty",)
"""Words by which an exception says the response had nothing in it: js-langgraph's
``Error: Received empty response from chat model call.`` for a body that ended at byte 0.
True of a body that ended before its first complete event, and accepted for that only
(:func:`_no_event_delivered`): after an event went out the response was not empty."""

_GENERIC_ERROR_WORDS: Final = frozenset({"error", "errors", "none", "null"})


def _error_words(served: Served) -> list[str]:
    """What identifies the error a response served: its HTTP status, and the type, code,
    status and message of the error object in its body or in its last event (Anthropic's
    ``overloaded_error``/``Overloaded``, OpenAI's ``server_error``, Gemini's
    ``UNAVAILABLE``), whichever the framework chose to show."""
    words = [str(served.status)] if served.status >= 400 else []
    body = b"".join(served.chunks)
    candidates: list[Any] = [_json(body)] if served.status >= 400 else []
    for line in reversed(body.splitlines()):
        if line.startswith(b"data:"):
            candidates.append(_json(line[5:].strip()))
            break
    for data in candidates:
        if not isinstance(data, Mapping):
            continue
        for obj in (data, data.get("error")):
            if isinstance(obj, Mapping):
                for key in ("type", "code", "status", "message"):
                    value = obj.get(key)
                    if isinstance(value, str | int) and not isinstance(value, bool):
                        words.append(str(value))
    return [w for w in words if _squash(w) and _squash(w) not in _GENERIC_ERROR_WORDS]


def _squash(text: str) -> str:
    """Lower case letters and digits only: ``overloaded_error`` meets ``OverloadedError``."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _error_unrelated(outcome: AgentOutcome, k: int, served: Served) -> str | None:
    """None when the run's error names what response ``k`` served (A12), else both texts."""
    raised = f"{outcome.error_type}: {outcome.error_message or ''}"
    # A clean end of the body inside an event ends in a malformed frame (stop "error"), yet
    # no provider error was served: its last event is no error object to name, and a client
    # that names the frame it could not read names the fault (PARSE_WORDS).
    if served.stop == "none" or served.fault.startswith("clean_eof"):
        named = TRANSPORT_WORDS + (PARSE_WORDS if served.stop == "error" else ())
        named += EMPTY_WORDS if _no_event_delivered(served) else ()
        if any(w in raised.lower() for w in named):
            return None
        what = f"a transport fault ({served.fault}: the body ended without its terminal event)"
    else:
        words = _error_words(served)
        squashed = _squash(raised)
        if not words or any(_squash(w) in squashed for w in words):
            return None
        kind = "HTTP" if served.stop == "http" else "stream error event"
        what = f"{kind} " + " ".join(dict.fromkeys(words))
    return (
        f"the run raised {_clip(raised)}, which does not say what response {k} served: "
        f"{_clip(what)}"
    )


def _no_event_delivered(served: Served) -> bool:
    """The body ended before the end of its first event (an SSE event's blank line, an
    event-stream frame's last byte): a cut at byte 0 and one inside the first event are the
    same to a client, which read nothing it could dispatch. The events are the frames the
    protocol's own framing (providers/registry.py) makes of the bytes sent, as a client's
    decoder makes them; ``close()`` is not asked, since what it flushes at the end of the
    body is the unfinished event, which no client was delivered."""
    decoder = get_protocol(served.protocol).framing.decoder()
    frames = decoder.feed(b"".join(served.chunks))
    return not any(not isinstance(f, FramingError) for f in frames)


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- A13 no call runs on arguments that were not valid JSON ---------------------------------------


def a13_valid_json_arguments(run: AgentRun) -> str | None:
    for e in run.in_turn_order():
        found = run.malformed_for(e)
        if found is not None:
            k, call = found
            return (
                f"ran {e.tool}{_fmt_args(e.arguments)} for call {call.id} of response {k}, whose "
                f"arguments were not valid JSON ({_clip(call.raw or '', 80)!r}): a repaired or "
                "replaced guess is not a call"
            )
    return None


def _has_malformed_call(run: AgentRun) -> bool:
    return any(c.delivered and not c.strict for s in run.served for c in s.calls)


CHECKS: Final[tuple[AgentCheck, ...]] = (
    AgentCheck(
        "A1",
        "no tool runs on incomplete arguments",
        a1_complete_arguments,
        advice="Run a tool only from a call whose end arrived (toolcall_end, a closed block); "
        "never from the live, partial arguments of a stream that was cut.",
    ),
    AgentCheck(
        "A2",
        "no side effect happens twice for one call",
        a2_effect_once,
        advice="On a retry, resend the conversation with the results already obtained instead "
        "of restarting the run; make side-effect tools idempotent (a key per call).",
    ),
    AgentCheck(
        "A3",
        "every executed call's result goes back once, paired, with the turn replayed",
        a3_results_paired,
        advice="Send back the assistant turn as received (its calls, ids and arguments "
        "unchanged) followed by exactly one result per call id, errors included.",
    ),
    AgentCheck(
        "A4",
        "thinking blocks go back with their signatures",
        a4_thinking_replayed,
        _has_thinking,
        advice="Keep thinking blocks in history and send them back byte for byte with their "
        "signatures on the turn that carries the tool results.",
    ),
    AgentCheck(
        "A5",
        "a stream without its terminal event is never a completed turn",
        a5_terminal_event,
        advice="Treat a stream that ends without its terminal event (or in an error event) as "
        "a failed request: retry it or raise, never take its content as the answer.",
    ),
    AgentCheck(
        "A6",
        "a length stop inside a tool call is not a call",
        a6_length_stop,
        advice="On a length stop (max_tokens, finish_reason length), run none of the response's "
        "calls; answer them as truncated or raise.",
    ),
    AgentCheck(
        "A7",
        "an overflow is surfaced, never retried as transient",
        a7_overflow,
        advice="Classify the context-overflow error as overflow: compact the conversation or "
        "raise, never resend the same request.",
    ),
    AgentCheck(
        "A8",
        "non-retryable errors are not retried",
        a8_no_retry_of_permanent,
        advice="Retry only 408, 409, 429, 5xx and broken streams; raise other 4xx at once.",
    ),
    AgentCheck(
        "A9",
        "retryable errors are retried, a bounded number of times",
        a9_bounded_retry,
        advice="Retry retryable failures (also a broken 200 stream) up to the declared "
        "max_retries, then raise; or declare the policy the agent really has.",
    ),
    AgentCheck(
        "A10",
        "retry-after is honoured up to a cap",
        a10_retry_after,
        _has_retry_after,
        advice="Wait at least the retry-after (or retry-after-ms) hint, up to the declared cap, "
        "before resending.",
    ),
    AgentCheck(
        "A11",
        "text already shown is not shown twice after a retry",
        a11_text_once,
        advice="Discard the text of a failed attempt (or mark it replaced) before the retry "
        "streams its own.",
    ),
    AgentCheck(
        "A12",
        "the run ends with an outcome that says what happened",
        a12_outcome,
        advice="End every run with the final text or an error that carries the provider's "
        "error as served (status, type, message) or names the transport fault.",
    ),
    AgentCheck(
        "A13",
        "no call runs on arguments that were not valid JSON",
        a13_valid_json_arguments,
        _has_malformed_call,
        advice="Parse a call's completed arguments strictly before running it; when they are "
        "not valid JSON, send an error result back (or ask again), never a repaired guess.",
    ),
)
CHECK_IDS: Final = tuple(c.id for c in CHECKS)


def judge(run: AgentRun) -> list[CheckOutcome]:
    """Every check on one run; a crash fails A12 and skips the rest (nothing to judge)."""
    out: list[CheckOutcome] = []
    for check in CHECKS:
        if not run.scenario.applies(check.id) or not check.applies(run):
            out.append(CheckOutcome(check.id, "skipped", "does not apply to this scenario"))
            continue
        if run.crash is not None and check.id != "A12":
            out.append(CheckOutcome(check.id, "skipped", "the adapter crashed"))
            continue
        problem = check.fn(run)
        if problem:
            # What the scenario and the server said is ours; an id the agent made up is not.
            ours = run.scenario.spec.model_dump_json().encode()
            served = b"".join([ours, *(c for s in run.served for c in s.chunks)])
            message = steady_text(problem, served)
            out.append(CheckOutcome(check.id, "failed", message, check.advice))
        else:
            out.append(CheckOutcome(check.id, "passed"))
    return out
