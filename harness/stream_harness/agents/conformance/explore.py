"""Exploration: fault schedules drawn by hypothesis over an agent scenario, failures shrunk.

A bundled agent scenario puts its one fault where its author put it, so an agent that
gets that one place right passes. Exploration does for the agent half what the chunkings
do for the stream half: a *schedule* (a list of ``(response index, fault)``, data) is
drawn over a fault-free base scenario, applied as a scenario of its own, run and judged
like any scenario; a schedule that fails a check is shrunk by hypothesis to the smallest
one that fails it (fewest faults, earliest response, simplest kind, shortest place) and
can be written as a scenario file that reproduces it with the ordinary command.

The run is in three steps so that agent runs, which mostly wait, can run in jobs:
hypothesis draws the N schedules of each (agent, base, protocol) without running
anything; the runs are made by :func:`~stream_harness.agents.conformance.runner.observe_in_jobs`;
then, only for the units where something failed, the same seeded draw is replayed over
the cached verdicts with hypothesis's shrink phase on, which runs only the shrink
candidates. The shrink is bounded (runs and wall time) and says when it was cut.

Every fault a schedule can hold is drawn by :func:`fault_strategy`, the one place to
extend when the scenario format grows new faults.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import queue
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import yaml
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from stream_harness.agents.conformance.checks import (
    CHECK_IDS,
    CHECKS,
    AgentRun,
    CheckOutcome,
    judge,
)
from stream_harness.agents.conformance.runner import (
    ANY_EXPLORED,
    AgentExpectation,
    AgentResult,
    ResultStatus,
    Unit,
    observe,
    observe_in_jobs,
    planned_units,
)
from stream_harness.agents.protocol import AgentAdapter, AgentLimits
from stream_harness.agents.scenario.faults import (
    ENDINGS,
    ERROR_KINDS,
    NAMED_PLACES,
    ByteAt,
    InCall,
    Resolved,
    canonical_yaml,
    compact,
    fault_space,
    normalize,
    unexpressible,
)
from stream_harness.agents.scenario.model import (
    AgentScenario,
    AgentScenarioSpec,
    FaultSpec,
    ResponseSpec,
    ScenarioError,
    ScriptSpec,
    load_agent_scenario,
    resolve_scenarios_argument,
    scenario_argument,
)
from stream_harness.conformance.reproduce import agents_command
from stream_harness.recordings.inputs import display_path

Fault = dict[str, Any]
Schedule = tuple[tuple[int, Fault], ...]

KINDS: Final = ("status", "stream", "mutate", "overflow", "pace")
"""Fault kinds, simplest first: hypothesis shrinks a ``sampled_from`` towards its first
element, so a shrunk schedule names the simplest kind that still fails. An HTTP error
before any byte is the simplest; then a response ended early (a place and an ending, the
model of :mod:`stream_harness.agents.scenario.faults`), a call served wrong (``mutate``), a context
overflow; a slow but complete response (``pace``) is last because it is the one kind that
fails nothing by itself."""

STATUSES: Final = (500, 429, 503, 529, 408, 502, 400, 401, 403, 404)
"""Retryable first (the shrink prefers them), then the statuses no client resends."""

WAIT_BUDGET_S: Final = 1.0
"""The longest real wait a drawn ``retry-after`` may owe a row (its hint, up to its cap,
times its time scale). A framework row runs on real time with caps of 60 to 120 s: a
hint at its cap would cost a minute a schedule and outlast the run's timeout, judging
the clock rather than the agent. Values above the cap stay drawable where the row owes
no wait for them (``give_up``, ``backoff``)."""

PAST_DATE: Final = "Wed, 21 Oct 2015 07:28:00 GMT"
FUTURE_DATE: Final = "Fri, 01 Jan 2100 00:00:00 GMT"
PACES: Final = (0.0, 0.002, 0.01)
DRAW_RANGE: Final = 2**16 - 1
"""The range of a drawn index (an early end, a byte, an offset, a mutation): taken modulo
the number there is, so every response draws the same choices."""
STREAM_WEIGHT: Final = 3
MAX_FAULTS: Final = 3
SHRINK_RUNS: Final = 60
SHRINK_WALL_S: Final = 120.0


# -- strategies ----------------------------------------------------------------------------------


def _convention(conventions: Mapping[str, Any], protocol: str, name: str) -> Any:
    """The row's policy for ``protocol``, read as the checks read it (AgentRun.convention)."""
    probe = AgentRun("", None, protocol, (), (), (), None, conventions=conventions)  # type: ignore[arg-type]
    return probe.convention(name)


def retry_after_values(conventions: Mapping[str, Any], protocol: str) -> list[tuple[str, str]]:
    """``(header, value)`` pairs below, at and above the row's cap and as HTTP-dates, minus
    those that would owe the row a wait longer than :data:`WAIT_BUDGET_S`."""
    raw_cap = _convention(conventions, protocol, "retry_after_cap_s")
    cap = float("inf") if raw_cap is None else float(raw_cap)
    scale = float(_convention(conventions, protocol, "time_scale"))
    over = _convention(conventions, protocol, "retry_after_over_cap")
    seconds = [1.0, 0.0]
    if cap != float("inf"):
        seconds += [cap / 2, cap, cap + 1]
    seconds.append(3600.0)
    out: list[tuple[str, str]] = []
    for value in dict.fromkeys(seconds):
        owed = min(value, cap) if value <= cap or over == "capped" else 0.0
        if owed * scale > WAIT_BUDGET_S:
            continue
        out.append(("retry-after", f"{value:g}"))
        out.append(("retry-after-ms", f"{value * 1000:g}"))
    out.append(("retry-after", PAST_DATE))
    future_owed = cap if over == "capped" else (0.0 if cap != float("inf") else float("inf"))
    if future_owed * scale <= WAIT_BUDGET_S:
        out.append(("retry-after", FUTURE_DATE))
    return out


def stream_faults(scenario: AgentScenario, response_index: int, protocol: str) -> list[FaultSpec]:
    """Every early end response ``response_index`` can take in ``protocol``, simplest first:
    by ending (:data:`~stream_harness.agents.scenario.faults.ENDINGS` order: fin, rst, clean_eof,
    length, error_event, finish; error kinds in their order), then by place (a byte, right
    after the text, inside call 1 at each named place then at a character offset, inside
    call 2, ..., where the content ends). From :func:`fault_space`, so that nothing the
    protocol cannot serve is offered; a ``{byte: 0}`` or ``{call: N, at: 1}`` place stands
    for the byte or offset the strategy draws. Left out: ``length`` where the content ends
    of a response with calls (the calls were delivered whole: running them and refusing
    them are both right, and the copy of the response that follows serves them again)."""
    response = scenario.spec.responses[response_index]
    script = response.script or ScriptSpec()
    tools = scenario.spec.tools
    calls = [
        (c.arguments, tools[c.name].schema_ if c.name in tools else {}) for c in script.tool_calls
    ]
    space = [
        f
        for f in fault_space(
            calls, protocol, delta_size=script.delta_size, has_text=bool(script.text)
        )
        if f.ending is not None and not (f.ending == "length" and f.place is None and calls)
    ]
    for n in range(1, len(calls) + 1):
        for ending in ENDINGS:
            for kind in ERROR_KINDS if ending == "error_event" else (None,):
                offset = Resolved(InCall(call=n, at=1), ending, kind)
                if unexpressible(offset, protocol) is None:
                    space.append(FaultSpec(place=InCall(call=n, at=1), ending=ending, kind=kind))
    return sorted(space, key=_simplest)


def _simplest(fault: FaultSpec) -> tuple[int, int, tuple[int, int, int]]:
    ending = ENDINGS.index(fault.ending) if fault.ending is not None else len(ENDINGS)
    kind = ERROR_KINDS.index(fault.kind) if fault.kind is not None else 0
    return ending, kind, _place_rank(fault.place)


def _place_rank(place: Any) -> tuple[int, int, int]:
    """A byte, after the text, inside call 1 (named places in their order, then an
    offset), call 2, ..., where the content ends."""
    if isinstance(place, ByteAt):
        return (0, 0, 0)
    if place == "after_text":
        return (1, 0, 0)
    if isinstance(place, InCall):
        at = len(NAMED_PLACES) if isinstance(place.at, int) else NAMED_PLACES.index(place.at)
        return (2, place.call, at)
    return (3, 0, 0)


def mutations(scenario: AgentScenario, response_index: int, protocol: str) -> list[FaultSpec]:
    """The calls response ``response_index`` can serve wrong (:func:`fault_space`'s
    ``mutate`` faults), in its order: call 1 first, arguments before ids; an id only the
    ways the protocol's servers serve one (specs/call_ids.yaml: no id-less call where every
    server sends an id)."""
    response = scenario.spec.responses[response_index]
    script = response.script or ScriptSpec()
    tools = scenario.spec.tools
    calls = [
        (c.arguments, tools[c.name].schema_ if c.name in tools else {}) for c in script.tool_calls
    ]
    return [
        f
        for f in fault_space(calls, protocol, delta_size=script.delta_size)
        if f.mutate is not None
    ]


def _dump(fault: FaultSpec) -> Fault:
    return fault.model_dump(mode="json", exclude_defaults=True)


def fault_strategy(
    scenario: AgentScenario,
    response_index: int,
    protocol: str,
    conventions: Mapping[str, Any],
) -> st.SearchStrategy[Fault]:
    """One fault for response ``response_index`` of ``scenario`` in ``protocol``: a dict of
    FaultSpec fields in the model of :mod:`stream_harness.agents.scenario.faults`: an HTTP status
    (with a retry hint of :func:`retry_after_values`), an early end (a place and an ending,
    :func:`stream_faults`: a byte of the body, right after the text, a named place or a
    character offset inside a call's arguments, where the content ends; every ending and
    error kind the protocol can serve there), a call served wrong (:func:`mutations`), a
    context overflow, or pacing. Nothing :func:`unexpressible` in the protocol is drawn."""
    response = scenario.spec.responses[response_index]
    script = response.script or ScriptSpec()
    body = sum(
        len(c) for c in scenario.served(protocol)[_served_index(scenario, response_index)].chunks
    )
    hints = retry_after_values(conventions, protocol)
    ends = stream_faults(scenario, response_index, protocol)
    mutated = mutations(scenario, response_index, protocol)
    # An early end holds most of the space (every ending at every place): it takes
    # STREAM_WEIGHT slots of the kinds drawn, all after "status", so that it is drawn about
    # as often as the rest together and still shrinks to the simplest kind but one.
    kinds = [
        w
        for k in KINDS
        if mutated or k != "mutate"
        for w in [k] * (STREAM_WEIGHT if k == "stream" else 1)
    ]

    @st.composite
    def draw(d: st.DrawFn) -> Fault:
        # Every parameter is drawn whatever the kind and the response, so that every kind
        # takes as many choices: hypothesis orders candidates by length first, and a kind
        # needing fewer draws (an overflow) would otherwise count as simpler than an HTTP
        # 500, a response without calls simpler than the first. The indices are drawn over
        # a fixed range (a range of one value is no choice at all) and shrink towards 0.
        kind = d(st.sampled_from(kinds))
        status = d(st.sampled_from(STATUSES))
        hint = d(st.one_of(st.none(), st.sampled_from(hints))) if hints else None
        ending = d(st.sampled_from(ENDINGS))
        error = d(st.sampled_from(ERROR_KINDS))
        at = d(st.integers(0, DRAW_RANGE))
        # The ending and its kind are choices of their own, stable across responses (a
        # shrink to an earlier response keeps them); the place is an index into those
        # that response takes with them, simplest first (any early end if none does).
        endings = [f for f in ends if f.ending == ending and f.kind in (None, error)] or ends
        end = endings[at % len(endings)]
        cut = d(st.integers(0, DRAW_RANGE)) % max(body, 1)
        offset = d(st.integers(0, DRAW_RANGE))
        wrong = d(st.integers(0, DRAW_RANGE))
        pace = d(st.sampled_from(PACES))
        fault: Fault
        if kind == "status":
            fault = {"status": status}
            if hint is not None:
                fault["headers"] = {hint[0]: hint[1]}
            return fault  # a paced error body: A10 would time the wait from its end
        if kind == "overflow":
            return {"status": 400, "overflow": True}
        if kind == "pace":
            return {"pace": PACES[1:][pace == PACES[-1]]}
        if kind == "mutate":
            fault = _dump(mutated[wrong % len(mutated)])
        else:
            place = end.place
            if isinstance(place, ByteAt):
                place = ByteAt(byte=cut)
            elif isinstance(place, InCall) and isinstance(place.at, int):
                size = len(compact(script.tool_calls[place.call - 1].arguments))
                place = InCall(call=place.call, at=1 + offset % max(size - 1, 1))
            fault = _dump(end.model_copy(update={"place": place}))
        if pace:
            fault["pace"] = pace
        return fault

    return draw()


def _served_index(scenario: AgentScenario, response_index: int) -> int:
    """Where response ``response_index`` starts in :meth:`AgentScenario.served` (repeats expanded)."""
    return sum(r.repeat for r in scenario.spec.responses[:response_index])


def schedules(
    scenario: AgentScenario,
    protocol: str,
    conventions: Mapping[str, Any],
    *,
    max_faults: int = MAX_FAULTS,
) -> st.SearchStrategy[Schedule]:
    """Lists of ``(response index, fault)``, one to ``max_faults`` long, sorted by response:
    a list shrinks by dropping elements (fewest faults) and an index towards 0 (earliest)."""
    targets = explorable_responses(scenario)
    per_index = {i: fault_strategy(scenario, i, protocol, conventions) for i in targets}

    @st.composite
    def entry(d: st.DrawFn) -> tuple[int, Fault]:
        i = d(st.sampled_from(targets))
        return i, d(per_index[i])

    return st.lists(entry(), min_size=1, max_size=max_faults).map(_normal)


def _normal(entries: list[tuple[int, Fault]]) -> Schedule:
    return tuple(sorted(entries, key=lambda e: e[0]))


def explorable_responses(scenario: AgentScenario) -> list[int]:
    """The responses a schedule may fault: the scripted ones that carry no fault already."""
    return [
        i
        for i, r in enumerate(scenario.spec.responses)
        if r.cassette is None and r.fault == FaultSpec()
    ]


def explorable(scenario: AgentScenario) -> str | None:
    """Why ``scenario`` cannot be a base of exploration (None: it can)."""
    if scenario.recorded:
        return "it serves recorded responses (their paths are relative to the file)"
    if not explorable_responses(scenario):
        return "every response carries a fault already"
    return None


# -- schedules as scenarios ------------------------------------------------------------------


def apply(base: AgentScenario, schedule: Schedule) -> AgentScenarioSpec:
    """The base scenario with the schedule: each fault goes on a copy of its response put
    before it (a client that resends then gets the response the base meant), as the
    bundled scenarios script a fault; a ``pace`` alone slows the response itself, and a
    ``mutate`` serves the response itself wrong (the response is complete: a copy before
    it would serve its calls twice, each one delivered)."""
    responses: list[ResponseSpec] = []
    for i, response in enumerate(base.spec.responses):
        own: Fault = {}
        for index, fault in schedule:
            if index != i:
                continue
            if set(fault) == {"pace"} or "mutate" in fault:
                own.update(fault)
                continue
            copy = response.model_copy(
                update={"fault": FaultSpec.model_validate(fault), "repeat": 1}
            )
            responses.append(_fresh_ids(copy, len(responses)))
        if own:
            response = response.model_copy(update={"fault": FaultSpec.model_validate(own)})
        responses.append(response)
    update: dict[str, Any] = {"responses": responses, "name": None}
    reused = any(f.get("mutate", {}).get("id") == "reused" for _, f in schedule)
    if reused and "A3" not in base.spec.skip_checks:
        # A3 pairs results by id, which a reused id makes ambiguous (as reused_call_id says)
        update["skip_checks"] = [*base.spec.skip_checks, "A3"]
    return base.spec.model_copy(update=update)


def _fresh_ids(response: ResponseSpec, n: int) -> ResponseSpec:
    """The faulted copy's calls under ids of their own: a model answering again gives new
    ids, and a truncated call (a length stop) that an agent answers with an error result
    must not share its id with the call the next response completes."""
    if response.script is None or not response.script.tool_calls:
        return response
    calls = [c.model_copy(update={"id": f"{c.id}_f{n}"}) for c in response.script.tool_calls]
    script = response.script.model_copy(update={"tool_calls": calls})
    return response.model_copy(update={"script": script})


def describe(schedule: Schedule) -> str:
    """``response 0: status 429 retry-after 3600; response 1: place {call: 1, at: half},
    ending length`` (for messages): each fault as its canonical YAML."""
    parts = []
    for index, fault in schedule:
        text = canonical_yaml(FaultSpec.model_validate(fault))[1:-1]
        parts.append(f"response {index}: {text}")
    return "; ".join(parts)


def schedule_key(schedule: Schedule) -> str:
    """A schedule as one hashable string (its faults are dicts)."""
    return json.dumps(schedule, sort_keys=True)


def schedule_id(schedule: Schedule) -> str:
    return hashlib.sha256(schedule_key(schedule).encode()).hexdigest()[:8]


def explored_scenario(base: AgentScenario, schedule: Schedule) -> AgentScenario:
    """The schedule as a scenario (validated as a file would be), named after its base."""
    spec = apply(base, schedule)
    name = f"{base.name}~{schedule_id(schedule)}"
    return AgentScenario(base.path, name, spec, base.tools)


def scenario_yaml(base: AgentScenario, schedule: Schedule, note: str) -> str:
    """A scenario file of the schedule: the base written out whole, so it loads alone,
    each fault as its canonical YAML (:func:`~stream_harness.agents.scenario.faults.canonical_yaml`,
    one line in the model of places and endings)."""
    spec = apply(base, schedule)
    data = spec.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data = {"kind": "agent", **{k: v for k, v in data.items() if k != "kind"}}
    data["description"] = note
    faults: dict[str, str] = {}
    for k, (response, written) in enumerate(zip(spec.responses, data["responses"], strict=True)):
        if "fault" in written:
            calls = len((response.script or ScriptSpec()).tool_calls)
            faults[f"__fault_{k}__"] = canonical_yaml(response.fault, calls=calls)
            written["fault"] = f"__fault_{k}__"
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    for placeholder, fault in faults.items():
        text = text.replace(f"fault: {placeholder}\n", f"fault: {fault}\n")
    return text


# -- running ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finding:
    """A shrunk failing schedule of one check."""

    check: str
    schedule: Schedule
    message: str
    known: str = ""  # the covering expectation's reason: a known failure
    saved: str | None = None  # the scenario file written (--save-failures)
    command: str = ""


@dataclass
class UnitExploration:
    """What exploring one (agent, base, protocol) found."""

    spec: str
    agent: str
    base: AgentScenario
    protocol: str
    conventions: Mapping[str, Any]
    settings: str
    checks: tuple[str, ...] = ()  # --check: only these are judged (all when empty)
    drawn: list[Schedule] = field(default_factory=list)
    verdicts: dict[str, list[CheckOutcome]] = field(default_factory=dict)  # by schedule_key
    judged: dict[str, Schedule] = field(default_factory=dict)  # the schedules run, by key
    elapsed: dict[str, float] = field(default_factory=dict)  # each run's seconds, by key
    findings: list[Finding] = field(default_factory=list)
    shrink_runs: int = 0
    shrink_cut: str | None = None
    # A check's shrunk schedule from an earlier report, run beside the draws: while it
    # still fails the check it stays the check's finding (settled, not shrunk again).
    priors: dict[str, Schedule] = field(default_factory=dict)
    settled: set[str] = field(default_factory=set)
    # The schedules first run as shrink candidates: they find the smallest failure, but
    # the rows count only the draws and priors, which do not depend on how far a shrink
    # got in its budget (a row judged by a candidate alone came and went between runs).
    shrunk: set[str] = field(default_factory=set)

    def run(
        self, adapter: AgentAdapter, schedule: Schedule, limits: AgentLimits | None
    ) -> list[CheckOutcome]:
        key = schedule_key(schedule)
        found = self.verdicts.get(key)
        if found is None:
            run = observe(adapter, explored_scenario(self.base, schedule), self.protocol, limits)
            found = self.record(schedule, judge(run), run.elapsed)
        return found

    def record(
        self, schedule: Schedule, verdicts: list[CheckOutcome], elapsed: float
    ) -> list[CheckOutcome]:
        """Keep the verdicts of the checks asked for: the draws and the shrink judge alike,
        so that a run with ``--check`` shrinks as the same run's row of that check did."""
        key = schedule_key(schedule)
        kept = [v for v in verdicts if not self.checks or v.check in self.checks]
        self.elapsed[key] = elapsed
        self.verdicts[key] = kept
        self.judged[key] = schedule
        return kept


class _Failed(AssertionError):
    """A schedule failing a check; one subclass per check, so that hypothesis shrinks each
    check's failures apart (its distinct failures are told apart by exception type)."""

    schedule: Schedule
    verdict: CheckOutcome


_FAILURES: Final = {c: type(f"{c}Failed", (_Failed,), {}) for c in CHECK_IDS}


def _seeded(run_seed: int, unit: UnitExploration) -> int:
    """One seed per unit, so that units draw differently and each is reproducible alone."""
    text = f"{run_seed}/{unit.agent}/{unit.base.name}/{unit.protocol}"
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def draw_schedules(unit: UnitExploration, n: int, run_seed: int) -> None:
    """Hypothesis's first ``n`` draws for ``unit`` (its generate phase, nothing run)."""
    strategy = schedules(unit.base, unit.protocol, unit.conventions)

    @seed(_seeded(run_seed, unit))
    @settings(**_settings(n, (Phase.generate,)))
    @given(strategy)
    def collect(schedule: Schedule) -> None:
        unit.drawn.append(schedule)

    collect()


def _settings(n: int, phases: tuple[Phase, ...]) -> dict[str, Any]:
    return {
        "max_examples": n,
        "database": None,
        "derandomize": False,  # @seed makes it deterministic, also outside CI's profile
        "phases": phases,
        "deadline": None,
        "suppress_health_check": list(HealthCheck),
        "report_multiple_bugs": True,
        "print_blob": False,
    }


def shrink(
    unit: UnitExploration,
    adapter: AgentAdapter,
    n: int,
    run_seed: int,
    limits: AgentLimits | None,
    known: Callable[[str, Schedule], str],
    *,
    max_runs: int = SHRINK_RUNS,
    max_wall_s: float = SHRINK_WALL_S,
) -> None:
    """Replay the unit's seeded draw over the cached verdicts with hypothesis's shrink
    phase, each check's failure shrunk apart; new runs (shrink candidates) stop at
    ``max_runs`` or ``max_wall_s``, after which an unseen candidate counts as passing
    (the shrink keeps what it had, and the unit says it was cut)."""
    strategy = schedules(unit.base, unit.protocol, unit.conventions)
    started = time.monotonic()

    def verdicts(schedule: Schedule) -> list[CheckOutcome]:
        """The schedule's verdicts; none (passing) for a new one once the budget is spent."""
        if schedule_key(schedule) not in unit.verdicts:
            if unit.shrink_runs >= max_runs or time.monotonic() - started > max_wall_s:
                unit.shrink_cut = (
                    f"shrink cut after {unit.shrink_runs} runs, {time.monotonic() - started:.0f} s"
                )
                return []
            unit.shrink_runs += 1
            unit.shrunk.add(schedule_key(schedule))
        return unit.run(adapter, schedule, limits)

    @seed(_seeded(run_seed, unit))
    @settings(**_settings(n, (Phase.generate, Phase.shrink)))
    @given(strategy)
    def check(schedule: Schedule) -> None:
        for verdict in verdicts(schedule):
            if verdict.status == "failed" and verdict.check not in unit.settled:
                failure = _FAILURES[verdict.check](verdict.message)
                failure.schedule, failure.verdict = schedule, verdict
                raise failure

    def still_fails(check: str) -> Callable[[Schedule], CheckOutcome | None]:
        def fails(schedule: Schedule) -> CheckOutcome | None:
            return next(
                (v for v in verdicts(schedule) if v.check == check and v.status == "failed"), None
            )

        return fails

    try:
        check()
    except _Failed as exc:
        _found(unit, [exc], known, still_fails)
    except BaseExceptionGroup as group:
        failures = [e for e in _leaves(group) if isinstance(e, _Failed)]
        if len(failures) != len(list(_leaves(group))):
            raise
        _found(unit, failures, known, still_fails)
    except HypothesisException as exc:  # a flaky agent: the same schedule passed and failed
        unit.shrink_cut = f"shrink stopped: {type(exc).__name__}"
        _found(unit, [], known, still_fails)


def fewest_faults(
    schedule: Schedule, fails: Callable[[Schedule], CheckOutcome | None]
) -> tuple[Schedule, CheckOutcome | None]:
    """Drop each fault in turn while the schedule still fails: hypothesis deletes list
    elements well with random shrink passes, but under CI's derandomized profile it can
    keep a fault that plays no part (measured: two HTTP 500s kept before the one cut in
    arguments that fails). What is left fails (the last verdict) or nothing was dropped."""
    last = None
    i = 0
    while i < len(schedule) and len(schedule) > 1:
        fewer = schedule[:i] + schedule[i + 1 :]
        verdict = fails(fewer)
        if verdict is not None:
            schedule, last = fewer, verdict
        else:
            i += 1
    return schedule, last


def _leaves(group: BaseExceptionGroup[Any]) -> Iterator[BaseException]:
    for e in group.exceptions:
        if isinstance(e, BaseExceptionGroup):
            yield from _leaves(e)
        else:
            yield e


def _found(
    unit: UnitExploration,
    failures: Sequence[_Failed],
    known: Callable[[str, Schedule], str],
    still_fails: Callable[[str], Callable[[Schedule], CheckOutcome | None]],
) -> None:
    """The shrunk failures, one a check: the first failing check of each shrunk schedule,
    then any other check the drawn schedules failed (shrunk or not, never lost); a check
    a prior settled has its finding already."""
    seen: set[str] = set(unit.settled)
    for f in failures:
        check = f.verdict.check
        if check not in seen:
            seen.add(check)
            schedule, verdict = fewest_faults(f.schedule, still_fails(check))
            message = (verdict or f.verdict).message
            unit.findings.append(Finding(check, schedule, message, known(check, schedule)))
    for drawn in unit.drawn:
        for v in unit.verdicts.get(schedule_key(drawn), ()):
            if v.status == "failed" and v.check not in seen:
                # Hypothesis shrank another check's failure here: this one gets the last pass.
                seen.add(v.check)
                schedule, verdict = fewest_faults(drawn, still_fails(v.check))
                message = (verdict or v).message
                unit.findings.append(Finding(v.check, schedule, message, known(v.check, schedule)))


# -- known failures ------------------------------------------------------------------------------


def fault_word(fault: FaultSpec, calls: int = 1) -> str | None:
    """The report's word for one fault, by class: ``http_429``, ``overflow``, an ending
    with its error kind, and ``_in_call`` when it ends inside a call's arguments
    (``fin_in_call``, ``error_event_overloaded``, ``clean_eof``), a mutation
    (``args_wrong_type``, ``id_fresh``); None for pacing alone. Only a place inside a call
    changes what is delivered (part of a call); the byte, the call and the named place are
    left out, and so is a place outside calls: a clean end at a byte of the final text or
    right after the text is the bundled ``no_terminal_event``'s failure (found exploring
    pydantic-ai and js-openai-agents, whose findings say half a sentence, or the text
    before the calls, becomes the result)."""
    if fault.overflow:
        return "overflow"
    if fault.status is not None:
        return f"http_{fault.status}"
    resolved = normalize(fault, calls)
    if resolved is not None:
        head = f"{resolved.ending}_{resolved.kind}" if resolved.kind else resolved.ending
        place = resolved.place
        return head + ("_in_call" if isinstance(place, InCall) else "")
    if fault.mutate is not None:
        return f"args_{fault.mutate.args}" if fault.mutate.args else f"id_{fault.mutate.id}"
    return None


def fault_kinds(schedule: Schedule) -> set[str]:
    """The report's words for the schedule's faults (:func:`fault_word`)."""
    words = (fault_word(FaultSpec.model_validate(fault)) for _, fault in schedule)
    return {w for w in words if w is not None}


def scenario_fault_kinds(scenario: AgentScenario) -> set[str]:
    """The words of a scenario's faults, as :func:`fault_kinds` says a schedule's (the old
    keys read in the model: ``no_terminal_event`` is ``clean_eof``)."""
    words = (
        fault_word(r.fault, len((r.script or ScriptSpec()).tool_calls))
        for r in scenario.spec.responses
    )
    return {w for w in words if w is not None}


def known_failure(
    expectations: Sequence[AgentExpectation], agent: str, protocol: str, base: str
) -> Callable[[str, Schedule], str]:
    """A failure of check C under a schedule is known when the agent's expectations
    cover it (:func:`explored_reason`)."""

    def reason(check: str, schedule: Schedule) -> str:
        return explored_reason(
            expectations, agent, f"{base}{ANY_EXPLORED}", protocol, check, fault_kinds(schedule)
        )

    return reason


@functools.cache
def _scenario_faults(name: str) -> frozenset[str] | None:
    """The fault words of a scenario named by an expectation (None: no such file); cached,
    as the files do not change during a run."""
    path = resolve_scenarios_argument(name)
    try:
        if path and path.is_file():
            return frozenset(scenario_fault_kinds(load_agent_scenario(path)))
    except ScenarioError:
        pass
    return None


def explored_reason(
    expectations: Sequence[AgentExpectation],
    agent: str,
    scenario: str,
    protocol: str,
    check: str,
    kinds: Collection[str],
) -> str:
    """Why an explored row (``scenario`` is ``<base>~explored``) whose shrunk schedule has
    the fault words ``kinds`` fails check C as a known failure, "" when it is new. Known
    when an entry lists C (on this protocol) with ``faults`` covering every word
    (:meth:`AgentExpectation.covers_explored`), or for the base itself (a base carries no
    fault: failing C as written, it fails C under any schedule), or for a scenario whose own
    faults include every word: the bundled no_terminal_event known failure covers an explored missing
    terminal event, not an explored 500. The runner and the merge's triage both ask here."""
    if not kinds:
        return ""
    base = scenario.removesuffix(ANY_EXPLORED)
    for e in expectations:
        if e.covers_explored(agent, scenario, protocol, check, kinds):
            return e.reason
        if e.faults is not None or e.agent != agent or e.check != check:
            continue
        if e.protocol not in (None, protocol):
            continue
        if e.scenario == base:
            # The base as written (no fault) already fails C: so does every schedule on it.
            return f"{e.reason} (known on {base} as written)"
        faults = _scenario_faults(e.scenario)
        if faults is not None and set(kinds) <= faults:
            return f"{e.reason} (known on {e.scenario})"
    return ""


# -- the whole exploration --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExploreOptions:
    examples: int
    seed: int = 0
    save_failures: Path | None = None
    shrink_runs: int = SHRINK_RUNS
    shrink_wall_s: float = SHRINK_WALL_S
    # Shrunk schedules of an earlier report, by (agent, base, protocol, check): see
    # :func:`prior_schedules`.
    priors: Mapping[tuple[str, str, str, str], Schedule] = field(default_factory=dict)


def prior_schedules(
    rows: Iterable[tuple[str, str, str, str, object]],
) -> dict[tuple[str, str, str, str], Schedule]:
    """The shrunk schedules of an earlier report's explored failures, each ``(agent,
    scenario, protocol, check, explored)`` of a failing row, by (agent, base, protocol,
    check). A rerun runs them first, as hypothesis replays its example database: while
    one still fails its check it is that check's finding again, so a rerun whose verdicts
    did not change reports the same schedule (issue 36), however the draws went; one that
    now passes leaves the check to the draws. A row without a readable schedule is left out."""
    out: dict[tuple[str, str, str, str], Schedule] = {}
    for agent, scenario, protocol, check, explored in rows:
        if not scenario.endswith(ANY_EXPLORED) or not isinstance(explored, Mapping):
            continue
        written = explored.get("schedule")
        if not isinstance(written, list) or not written:
            continue
        try:
            schedule = tuple((int(f["response"]), dict(f["fault"])) for f in written)
        except (TypeError, KeyError, ValueError):
            continue
        out[(agent, scenario.removesuffix(ANY_EXPLORED), protocol, check)] = schedule
    return out


def _usable_priors(unit: UnitExploration, options: ExploreOptions) -> dict[str, Schedule]:
    """The unit's priors that still fit its base: faults on responses the schedules may
    fault, each a valid fault the scenario can be written with (a base edited since, or a
    fault model changed, leaves a prior out rather than failing the run)."""
    targets = set(explorable_responses(unit.base))
    out: dict[str, Schedule] = {}
    for (agent, base, protocol, check), schedule in options.priors.items():
        if (agent, base, protocol) != (unit.agent, unit.base.name, unit.protocol):
            continue
        if unit.checks and check not in unit.checks:
            continue
        if any(i not in targets for i, _ in schedule):
            continue
        try:
            for _, fault in schedule:
                FaultSpec.model_validate(fault)
            explored_scenario(unit.base, schedule)
        except (ValueError, ScenarioError):
            continue
        out[check] = schedule
    return out


def _settle(unit: UnitExploration, known: Callable[[str, Schedule], str]) -> None:
    """Each prior that failed its check again becomes the check's finding."""
    for check, schedule in unit.priors.items():
        verdict = next(
            (
                v
                for v in unit.verdicts.get(schedule_key(schedule), ())
                if v.check == check and v.status == "failed"
            ),
            None,
        )
        if verdict is not None:
            unit.settled.add(check)
            unit.findings.append(Finding(check, schedule, verdict.message, known(check, schedule)))


def explore(
    adapters: Sequence[tuple[str, AgentAdapter]],
    bases: Sequence[AgentScenario],
    options: ExploreOptions,
    *,
    protocols: Sequence[str] | None = None,
    checks: Sequence[str] | None = None,
    expectations: Sequence[AgentExpectation] = (),
    limits: AgentLimits | None = None,
    jobs: int = 1,
    spawn: Callable[[str], AgentAdapter] | None = None,
) -> tuple[list[UnitExploration], list[AgentResult]]:
    """Explore every (agent, base, protocol): draw, run (in jobs), shrink, save, judge."""
    planned = planned_units(adapters, [b for b in bases if explorable(b) is None], protocols)
    units = [
        UnitExploration(
            spec,
            adapter.name,
            base,
            protocol,
            dict(adapter.conventions),
            adapter.settings,
            tuple(checks or ()),
        )
        for spec, adapter, base, protocol in planned
    ]
    for unit in units:
        draw_schedules(unit, options.examples, options.seed)
        unit.priors = _usable_priors(unit, options)
    work: list[tuple[UnitExploration, Schedule]] = [
        (u, s)
        for u in units
        for s in {schedule_key(s): s for s in [*u.drawn, *u.priors.values()]}.values()
    ]
    runs: list[Unit] = [
        (spec, adapter, explored_scenario(u.base, s), u.protocol)
        for u, s in work
        for spec, adapter in [next(p for p in adapters if p[0] == u.spec)]
    ]
    if jobs > 1 and spawn is not None and len(runs) > 1:
        observed = observe_in_jobs(runs, jobs, spawn, limits)
    else:
        observed = [observe(a, sc, pr, limits) for _, a, sc, pr in runs]
    for (unit, schedule), run in zip(work, observed, strict=True):
        unit.record(schedule, judge(run), run.elapsed)
    for unit in units:
        _settle(unit, known_failure(expectations, unit.agent, unit.protocol, unit.base.name))
    failing = [
        u
        for u in units
        if any(
            v.status == "failed" and v.check not in u.settled
            for vs in u.verdicts.values()
            for v in vs
        )
    ]

    def shrink_unit(unit: UnitExploration, adapter: AgentAdapter) -> None:
        shrink(
            unit,
            adapter,
            options.examples,
            options.seed,
            limits,
            known_failure(expectations, unit.agent, unit.protocol, unit.base.name),
            max_runs=options.shrink_runs,
            max_wall_s=options.shrink_wall_s,
        )

    in_jobs(failing, shrink_unit, dict(adapters), jobs if spawn is not None else 1, spawn)
    for unit in units:
        if checks:
            unit.findings = [f for f in unit.findings if f.check in checks]
        unit.findings = [_with_command(unit, f, options) for f in unit.findings]
    results = [r for u in units for r in unit_results(u, options)]
    return units, [r for r in results if not checks or r.check in checks]


def in_jobs(
    units: Sequence[UnitExploration],
    work: Callable[[UnitExploration, AgentAdapter], None],
    adapters: Mapping[str, AgentAdapter],
    jobs: int,
    spawn: Callable[[str], AgentAdapter] | None,
) -> None:
    """``work`` on each unit, ``jobs`` units at once: a shrink runs one candidate at a time
    (each depends on the last verdict), so units shrink side by side instead, each job with
    adapters of its own as in :func:`observe_in_jobs` (the first job: the ones given). Each
    unit's shrink is seeded and touches only the unit, so the outcome does not depend on
    the interleaving."""
    if jobs <= 1 or spawn is None or len(units) <= 1:
        for unit in units:
            work(unit, adapters[unit.spec])
        return
    todo: queue.Queue[UnitExploration] = queue.Queue()
    for unit in units:
        todo.put(unit)
    spawned: list[AgentAdapter] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def job(first: bool) -> None:
        own: dict[str, AgentAdapter] = dict(adapters) if first else {}
        try:
            while not errors:
                try:
                    unit = todo.get_nowait()
                except queue.Empty:
                    return
                if unit.spec not in own:
                    try:
                        own[unit.spec] = spawn(unit.spec)
                    except Exception:
                        todo.put(unit)  # a framework that refuses a second instance
                        return
                    with lock:
                        spawned.append(own[unit.spec])
                work(unit, own[unit.spec])
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)

    threads = [
        threading.Thread(target=job, args=(k == 0,), daemon=True, name=f"explore-shrink-{k + 1}")
        for k in range(min(jobs, len(units)))
    ]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        while not errors and not todo.empty():  # left by jobs that could not spawn
            unit = todo.get_nowait()
            work(unit, adapters[unit.spec])
    finally:
        for adapter in spawned:
            close = getattr(adapter, "close", None)
            if callable(close):
                with contextlib.suppress(Exception):
                    close()
    if errors:
        raise errors[0]


def explore_command(unit: UnitExploration, options: ExploreOptions, check: str) -> str:
    """The command that replays this unit's exploration (same seed, same draws)."""
    return agents_command(
        agent=unit.spec,
        scenarios=scenario_argument(unit.base.path),
        protocol=unit.protocol,
        check=check,
        explore=(options.examples, options.seed),
    )


def _with_command(unit: UnitExploration, finding: Finding, options: ExploreOptions) -> Finding:
    """The finding with its reproduce command: the saved scenario's when ``--save-failures``
    wrote one (the scenario alone, no exploration), else the exploration's."""
    if options.save_failures is None:
        return replace(finding, command=explore_command(unit, options, finding.check))
    slug = "".join(c if c.isalnum() or c in "-_" else "-" for c in unit.agent)
    name = (
        f"{slug}-{unit.base.name}-{unit.protocol}-{finding.check}-{schedule_id(finding.schedule)}"
    )
    path = options.save_failures / f"{name}.yaml"
    command = agents_command(
        agent=unit.spec, scenarios=display_path(path), protocol=unit.protocol, check=finding.check
    )
    note = (
        f"Found by `stream-harness agents --explore {options.examples} --seed {options.seed}` "
        f"on {unit.base.name} and shrunk: {describe(finding.schedule)}. {unit.agent} failed "
        f"{finding.check} [{unit.protocol}]: {finding.message} Reproduce: {command}"
    )
    options.save_failures.mkdir(parents=True, exist_ok=True)
    path.write_text(scenario_yaml(unit.base, finding.schedule, note), encoding="utf-8")
    return replace(finding, saved=display_path(path), command=command)


def unit_results(unit: UnitExploration, options: ExploreOptions) -> list[AgentResult]:
    """One result per check of the unit, as the report's rows: failed with the shrunk
    schedule when a schedule failed it (a known failure when an expectation covers it),
    passed when every schedule that judged it passed, no row when none judged it."""
    titles = {c.id: c.title for c in CHECKS}
    findings = {f.check: f for f in unit.findings}
    run = {k: vs for k, vs in unit.verdicts.items() if k not in unit.shrunk}
    out: list[AgentResult] = []
    for check in CHECK_IDS:
        judged = [
            k
            for k, vs in run.items()
            if any(v.check == check and v.status != "skipped" for v in vs)
        ]
        failed = [
            k for k, vs in run.items() if any(v.check == check and v.status == "failed" for v in vs)
        ]
        finding = findings.get(check)
        if not judged and finding is None:
            continue
        explored: dict[str, Any] = {
            "schedules": len(run),
            "judged": len(judged),
            "failed": len(failed),
            "seed": options.seed,
            "shrink_runs": unit.shrink_runs,
        }
        if unit.shrink_cut:
            explored["shrink_cut"] = unit.shrink_cut
        if finding is not None:
            explored["schedule"] = [{"response": i, "fault": f} for i, f in finding.schedule]
            if finding.saved:
                explored["saved"] = finding.saved
            status: ResultStatus = "known_failure" if finding.known else "failed"
            # How many schedules failed lives in ``explored`` (a run's count, which the
            # framework's timing can change): the message says only what fails and how.
            message = f"shrunk to {describe(finding.schedule)}: {finding.message}"
            command = finding.command
        else:
            status, message = "passed", ""
            command = explore_command(unit, options, check)
        out.append(
            AgentResult(
                agent=unit.agent,
                scenario=f"{unit.base.name}~explored",
                path=display_path(unit.base.path),
                protocol=unit.protocol,
                check=check,
                title=titles[check],
                status=status,
                message=message,
                command=command,
                faults=tuple(sorted(fault_kinds(finding.schedule))) if finding else (),
                conventions=dict(unit.conventions),
                settings=unit.settings,
                elapsed=0.0,
                reason=finding.known if finding else "",
                explored=explored,
            )
        )
    return out
