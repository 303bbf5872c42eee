"""``agents --explore``: schedules drawn by hypothesis, shrunk in the issue's order, saved
as scenarios that reproduce alone, and exit codes that agree with the verdict."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import find, given, settings
from hypothesis import strategies as st

from stream_harness.agents import reference as reference_module
from stream_harness.agents.conformance.explore import (
    FUTURE_DATE,
    PAST_DATE,
    ExploreOptions,
    Schedule,
    apply,
    explorable,
    explore,
    explored_scenario,
    fewest_faults,
    known_failure,
    retry_after_values,
    scenario_yaml,
    schedule_key,
    schedules,
)
from stream_harness.agents.conformance.runner import AgentExpectation
from stream_harness.agents.loading import load_agent
from stream_harness.agents.reference import ReferenceAgent
from stream_harness.agents.scenario.faults import (
    WHOLE_CALLS,
    canonical_yaml,
    compact,
    normalize,
    place_offset,
    unexpressible,
)
from stream_harness.agents.scenario.model import (
    AgentScenario,
    FaultSpec,
    ScriptSpec,
    bundled_agent_scenarios,
    load_agent_scenario,
)
from stream_harness.cli.main import main
from stream_harness.contract.events import ToolCallEndEvent
from stream_harness.reporting.jsonl import load_report

BASES = sorted(
    p.stem
    for p in bundled_agent_scenarios().glob("*.yaml")
    if not load_agent_scenario(p).faults and explorable(load_agent_scenario(p)) is None
)
REFERENCE = dict(ReferenceAgent().conventions)

# A user's agent that never retries but declares the SDKs' two retries: A9 fails on any
# retryable error, so its shrunk schedule is known exactly.
NO_RETRY = (
    "from stream_harness.agents.reference import ReferenceAgent\n"
    "from stream_harness.loop.retry import RetryPolicy\n"
    "class NoRetry(ReferenceAgent):\n"
    "    name = 'no-retry'\n"
    "    def __init__(self):\n"
    "        super().__init__(retry=RetryPolicy(max_retries=0))\n"
    "        self.conventions = {**self.conventions, 'max_retries': 2}\n"
)


def base(name: str = "weather_tool_call") -> AgentScenario:
    return load_agent_scenario(bundled_agent_scenarios() / f"{name}.yaml")


def smallest(predicate: Any, scenario: AgentScenario | None = None) -> Schedule:
    strategy = schedules(scenario or base(), "openai-completions", REFERENCE)
    found: Schedule = find(
        strategy, predicate, settings=settings(database=None, derandomize=True, max_examples=1000)
    )
    # the engine's last pass: drop faults that play no part
    return fewest_faults(found, lambda s: object() if predicate(s) else None)[0]  # type: ignore[return-value]


def test_the_bundled_fault_free_scenarios_are_the_default_bases() -> None:
    assert {"weather_tool_call", "three_tool_turns", "parallel_tool_calls"} <= set(BASES)


@pytest.mark.parametrize(
    ("predicate", "expected"),
    [
        # fewest faults, earliest response, simplest kind: an HTTP error, the first status
        (lambda s: True, ((0, {"status": 500}),)),
        (lambda s: len(s) >= 2, ((0, {"status": 500}), (0, {"status": 500}))),
        (lambda s: any(i == 1 for i, _ in s), ((1, {"status": 500}),)),
        # an early end: the simplest ending (fin) at the shortest place (byte 0), no pace
        (
            lambda s: any("ending" in f for _, f in s),
            ((0, {"place": {"byte": 0}, "ending": "fin"}),),
        ),
        # inside a call: the first named place before any character offset
        (
            lambda s: any("call" in f.get("place", ()) for _, f in s),
            ((0, {"place": {"call": 1, "at": "last_value"}, "ending": "fin"}),),
        ),
        (
            lambda s: any(
                isinstance(f.get("place", {}).get("at"), int)
                for _, f in s
                if isinstance(f.get("place"), dict)
            ),
            ((0, {"place": {"call": 1, "at": 1}, "ending": "fin"}),),
        ),
        # an ending, then its error kind, keeps its order: finish needs a call, error_event a kind
        (
            lambda s: any(f.get("ending") == "finish" for _, f in s),
            ((0, {"place": {"call": 1, "at": "last_value"}, "ending": "finish"}),),
        ),
        (
            lambda s: any(f.get("ending") == "error_event" for _, f in s),
            ((0, {"place": "after_text", "ending": "error_event", "kind": "overloaded"}),),
        ),
        (lambda s: any("mutate" in f for _, f in s), ((0, {"mutate": {"args": "wrong_type"}}),)),
        (
            lambda s: any("retry-after" in f.get("headers", {}) for _, f in s),
            ((0, {"status": 500, "headers": {"retry-after": "1"}}),),
        ),
    ],
)
def test_a_schedule_shrinks_to_fewest_earliest_simplest_shortest(
    predicate: Any, expected: Schedule
) -> None:
    assert smallest(predicate) == expected


@pytest.mark.parametrize("what", ["place", "mutate"])
def test_a_response_without_calls_draws_no_place_in_a_call_and_no_mutation(what: str) -> None:
    # weather_tool_call's last response is text only: a cut in its arguments is no fault.
    last = len(base().spec.responses) - 1
    with pytest.raises(Exception, match="No examples found"):
        smallest(lambda s: any(i == last and "call" in str(f.get(what, "")) for i, f in s))


AGENT_PROTOCOLS = sorted({p for name in BASES for p in base(name).protocols})


@pytest.mark.parametrize("protocol", AGENT_PROTOCOLS)
@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_the_strategy_never_draws_a_fault_the_protocol_cannot_serve(
    protocol: str, data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from([n for n in BASES if protocol in base(n).protocols]))
    scenario = base(name)
    schedule = data.draw(schedules(scenario, protocol, REFERENCE))
    for index, fault in schedule:
        spec = FaultSpec.model_validate(fault)
        calls = len((scenario.spec.responses[index].script or ScriptSpec()).tool_calls)
        resolved = normalize(spec, calls)
        assert resolved is None or unexpressible(resolved, protocol) is None, fault
        assert spec.mutate is None or unexpressible(spec.mutate, protocol) is None, fault
    explored = explored_scenario(scenario, schedule)
    assert protocol in explored.protocols and protocol not in explored.unexpressible
    explored.served(protocol)  # renders, every place found in its call


@pytest.mark.parametrize("protocol", ["openai-completions", "google-generative-ai"])
def test_a_planted_bug_shrinks_to_the_minimal_named_place_and_ending(protocol: str) -> None:
    # A toy agent that repairs the JSON of a call cut inside its last value (every key is
    # there) and runs it, but only when the connection was reset or the body ended: every
    # drawn schedule that plants such a cut fails, and the shrink lands on the first named
    # place (last_value, not a character offset) and the simplest ending that fails (rst).
    scenario = base("three_tool_turns")

    def runs_a_repaired_call(schedule: Schedule) -> bool:
        for index, fault in schedule:
            place = fault.get("place")
            if (
                not isinstance(place, dict)
                or "call" not in place
                or fault["ending"] not in ("rst", "clean_eof")
            ):
                continue
            script = scenario.spec.responses[index].script
            assert script is not None
            arguments = script.tool_calls[place["call"] - 1].arguments
            text = compact(arguments)
            cut = place_offset(
                arguments, place["at"], script.delta_size, whole=protocol in WHOLE_CALLS
            )
            assert cut is not None
            if cut > text.rindex(":"):
                return True
        return False

    strategy = schedules(scenario, protocol, REFERENCE)
    found = find(
        strategy,
        runs_a_repaired_call,
        settings=settings(database=None, derandomize=True, max_examples=2000),
    )
    found = fewest_faults(found, lambda s: object() if runs_a_repaired_call(s) else None)[0]  # type: ignore[arg-type,return-value]
    assert found == ((0, {"place": {"call": 1, "at": "last_value"}, "ending": "rst"}),)


@pytest.mark.parametrize(
    ("conventions", "drawn", "not_drawn"),
    [
        # the reference: cap 60 s at a 0.01 time scale, every hint is cheap
        (REFERENCE, {"1", "60", "61", "3600", PAST_DATE, FUTURE_DATE}, set()),
        # the openai client: cap 120 s, gives up above it, real time
        (
            {"retry_after_cap_s": 120, "retry_after_over_cap": "give_up", "time_scale": 1.0},
            {"1", "121", "3600", PAST_DATE, FUTURE_DATE},
            {"60", "120"},
        ),
        # the anthropic 2.x client: no cap at all, so no long hint can be afforded
        (
            {"retry_after_cap_s": None, "time_scale": 1.0},
            {"1", PAST_DATE},
            {"3600", FUTURE_DATE},
        ),
    ],
)
def test_retry_after_values_sit_below_at_and_above_the_rows_cap(
    conventions: dict[str, Any], drawn: set[str], not_drawn: set[str]
) -> None:
    values = retry_after_values(conventions, "openai-completions")
    seconds = {v for h, v in values if h == "retry-after"}
    assert drawn <= seconds and not (not_drawn & seconds)
    assert ("retry-after-ms", "1000") in values


@pytest.mark.parametrize("name", BASES)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_a_schedule_written_as_a_file_loads_back_as_the_same_scenario(
    name: str, data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    scenario = base(name)
    protocol = data.draw(st.sampled_from(scenario.protocols))
    schedule = data.draw(schedules(scenario, protocol, REFERENCE))
    path = tmp_path_factory.mktemp("explored") / "found.yaml"
    path.write_text(scenario_yaml(scenario, schedule, "why"))
    loaded = load_agent_scenario(path)
    assert loaded.spec.responses == apply(scenario, schedule).responses
    faulted = [
        r
        for r in loaded.spec.responses
        if r.fault not in (FaultSpec(), FaultSpec(pace=r.fault.pace))
    ]
    copies = sum(1 for _, f in schedule if set(f) != {"pace"} and "mutate" not in f)
    assert len(faulted) == copies + len({i for i, f in schedule if "mutate" in f})
    loaded.served(protocol)  # renders in its protocol
    # each fault is written as its canonical YAML, one line in the model of places and endings
    text = path.read_text()
    for response in loaded.spec.responses:
        if response.fault != FaultSpec():
            calls = len((response.script or ScriptSpec()).tool_calls)
            line = f"fault: {canonical_yaml(response.fault, calls=calls)}\n"
            assert line in text
            assert FaultSpec.model_validate(yaml.safe_load(line)["fault"]) == response.fault


def test_the_reference_passes_its_explored_schedules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    plain = ["agents", "--agent", "reference", "--scenarios", "three_tool_turns", "--protocol",
             "anthropic-messages", "--out", str(out)]  # fmt: skip
    assert main(plain) == 0
    code = main([*plain, "--explore", "12"])
    text = capsys.readouterr().out
    assert code == 0, text
    # 12 drawn, each distinct schedule run once (hypothesis may draw one twice)
    run = int(
        re.search(r"explored (\d+) schedules over 1 \(agent, base, protocol\) units, seed 0", text)[
            1
        ]
    )  # type: ignore[index]
    assert 10 <= run <= 12
    assert text.splitlines()[-1].startswith("OK: 1 explored units, ")
    rows = load_report(out / "report.jsonl").agent_results
    explored = [r for r in rows if r.explored is not None]
    assert explored and {r.scenario for r in explored} == {"three_tool_turns~explored"}
    assert all(r.explored["schedules"] == run for r in explored if r.explored)
    assert {r.outcome for r in explored} == {"passed"}
    # the rows of the scenario as written stay beside the explored ones
    assert {r.scenario for r in rows if r.explored is None} == {"three_tool_turns"}


@pytest.mark.parametrize("protocol", ["openai-completions", "google-generative-ai"])
def test_a_call_served_without_an_id_is_paired_through_the_id_the_agent_gives_it(
    protocol: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found exploring the reference: a call served without an id (mutate {id: missing}) is
    # replayed under an id of the agent's own, with its result under that id; A3 looked
    # for a result of the id "" and failed the reference on every protocol (the two here
    # are those whose servers send id-less calls, specs/call_ids.yaml).
    path = tmp_path / "idless.yaml"
    path.write_text(scenario_yaml(base(), ((0, {"mutate": {"id": "missing"}}),), "id-less"))
    assert "fault: {mutate: {id: missing}}\n" in path.read_text()
    argv = ["agents", "--agent", "reference", "--scenarios", str(path), "--protocol", protocol,
            "--check", "A3", "--out", str(tmp_path / "out")]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().out
    rows = load_report(tmp_path / "out" / "report.jsonl").agent_results
    assert [(r.check, r.outcome) for r in rows] == [("A3", "passed")]


def test_a_schedule_reusing_an_id_skips_a3_as_the_bundled_scenario_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found exploring the reference (seed 2): two calls of one response under one id; A3
    # pairs by id, which that makes ambiguous (reused_call_id skips A3 for the same reason).
    path = tmp_path / "reused.yaml"
    schedule: Schedule = ((0, {"mutate": {"call": 2, "id": "reused"}}),)
    path.write_text(scenario_yaml(base("parallel_tool_calls"), schedule, "reused"))
    assert load_agent_scenario(path).spec.skip_checks == ["A3"]
    argv = ["agents", "--agent", "reference", "--scenarios", str(path), "--protocol",
            "openai-completions", "--out", str(tmp_path / "out")]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().out
    rows = load_report(tmp_path / "out" / "report.jsonl").agent_results
    assert "A3" not in {r.check for r in rows} and {r.outcome for r in rows} <= {
        "passed",
        "skipped",
    }


def _no_retry_argv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, explore: str) -> list[str]:
    """``agents --explore`` of NO_RETRY on A9, run from ``tmp_path`` where its module is."""
    (tmp_path / "no_retry.py").write_text(NO_RETRY)
    monkeypatch.chdir(tmp_path)
    return ["agents", "--agent", "no_retry:NoRetry", "--scenarios", "weather_tool_call",
            "--protocol", "openai-completions", "--check", "A9", "--explore", explore]  # fmt: skip


def test_a_shrunk_failure_is_saved_and_its_command_reproduces_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = [
        *_no_retry_argv(tmp_path, monkeypatch, "10"),
        "--save-failures",
        "found",
        "--out",
        "report",
    ]
    assert main(argv) == 1
    text = capsys.readouterr().out
    assert text.splitlines()[-1].startswith("FAILED:")
    saved = sorted((tmp_path / "found").glob("*.yaml"))
    assert len(saved) == 1 and "A9" in saved[0].name
    # shrunk to one HTTP 500 before the first response: the minimal schedule
    responses = load_agent_scenario(saved[0]).spec.responses
    assert [r.fault for r in responses] == [FaultSpec(status=500)] + [FaultSpec()] * len(
        base().spec.responses
    )
    row = next(r for r in load_report(tmp_path / "report" / "report.jsonl").agent_results)
    assert row.outcome == "failed" and row.explored is not None
    assert row.explored["schedule"] == [{"response": 0, "fault": {"status": 500}}]
    command = next(line for line in text.splitlines() if "reproduce:" in line).split("reproduce: ")[
        1
    ]
    assert command == row.command and "--explore" not in command
    assert main(shlex.split(command)[1:]) == 1
    again = capsys.readouterr().out
    assert "FAIL no-retry" in again and " A9 " in again


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        (["--explore", "0"], "--explore must be >= 1"),
        (["--save-failures", "x"], "--save-failures: only with --explore N"),
        (["--explore", "2", "--shard", "1/2"], "--explore: not with --shard"),
        (["--prior-report", "r.jsonl"], "--prior-report: only with --explore N"),
        (["--explore", "2", "--prior-report", "nope.jsonl"], "--prior-report: nope.jsonl: no such"),
        (["--explore", "2", "--prior-report", "BROKEN"], "broken.jsonl:1: not JSON"),
        (
            ["--explore", "2", "--scenarios", "ALL_FAULTED"],
            "cannot be explored: every response carries a fault already",
        ),
        (
            ["--explore", "2", "--scenarios", "weather_tool_call", "--check", "A4"],
            "nothing was checked",
        ),
    ],
)
def test_bad_or_empty_explorations_are_one_line_and_exit_2(
    extra: list[str], problem: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    faulted = tmp_path / "all_faulted.yaml"
    faulted.write_text("kind: agent\nresponses:\n  - {script: {}, fault: {status: 500}}\n")
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    extra = [str(faulted) if e == "ALL_FAULTED" else e for e in extra]
    extra = [str(broken) if e == "BROKEN" else e for e in extra]
    code = main(["agents", "--agent", "reference", "--protocol", "openai-completions", *extra])
    err = capsys.readouterr().err
    assert code == 2 and problem in err
    assert len([line for line in err.splitlines() if "note:" not in line]) == 1


@pytest.mark.parametrize(
    ("schedule", "known"),
    [
        (((0, {"no_terminal_event": True}),), True),
        (((0, {"no_terminal_event": True, "pace": 0.01}), (1, {"pace": 0.01})), True),
        (((0, {"status": 500}),), False),
        # the model's spelling of it, and a clean end at a byte of the body (pydantic-ai)
        (((1, {"ending": "clean_eof"}),), True),
        (((1, {"place": {"byte": 365}, "ending": "clean_eof"}),), True),
        (((1, {"place": {"byte": 365}, "ending": "fin"}),), False),
        (((0, {"place": "after_text", "ending": "clean_eof"}),), True),
        (((0, {"place": {"call": 1, "at": "half"}, "ending": "clean_eof"}),), False),
        (((0, {"no_terminal_event": True}), (1, {"status": 500})), False),
    ],
)
def test_a_known_failure_covers_schedules_of_its_scenarios_fault_kinds(
    schedule: Schedule, known: bool
) -> None:
    expectations = [AgentExpectation("fw", "no_terminal_event", "A5", None, "takes it as done")]
    reason = known_failure(expectations, "fw", "openai-completions", "weather_tool_call")
    assert bool(reason("A5", schedule)) is known
    assert reason("A3", schedule) == ""  # another check is never covered


@pytest.mark.parametrize(
    ("entry_scenario", "faults", "base", "schedule", "known"),
    [
        # any base, every word of the shrunk schedule listed
        ("~explored", ["http_500", "clean_eof"], "weather_tool_call",
         ((0, {"status": 500}), (0, {"place": {"byte": 805}, "ending": "clean_eof"})), True),
        # a word missing from the list: new
        ("~explored", ["clean_eof"], "weather_tool_call",
         ((0, {"status": 500}), (0, {"place": {"byte": 805}, "ending": "clean_eof"})), False),
        # an entry for one base covers that base only
        ("weather_tool_call~explored", ["http_404"], "weather_tool_call", ((0, {"status": 404}),), True),
        ("tool_raises~explored", ["http_404"], "weather_tool_call", ((0, {"status": 404}),), False),
        # a fault inside a call's arguments is its own word
        ("~explored", ["fin"], "weather_tool_call",
         ((0, {"place": {"call": 1, "at": "half"}, "ending": "fin"}),), False),
        ("~explored", ["fin_in_call"], "weather_tool_call",
         ((0, {"place": {"call": 1, "at": "half"}, "ending": "fin"}),), True),
    ],
)  # fmt: skip
def test_an_entry_with_faults_covers_explored_schedules_made_of_those_words(
    entry_scenario: str, faults: list[str], base: str, schedule: Schedule, known: bool
) -> None:
    entry = AgentExpectation(
        "fw", entry_scenario, "A8", "openai-completions", "why", frozenset(faults)
    )
    reason = known_failure([entry], "fw", "openai-completions", base)
    assert (reason("A8", schedule) == "why") is known
    assert reason("A1", schedule) == ""
    other = known_failure([entry], "fw", "anthropic-messages", base)
    assert other("A8", schedule) == ""  # the entry's protocol only


def test_a_known_failure_of_the_base_as_written_covers_every_schedule_on_it() -> None:
    # thinking_signature carries no fault: a row that never sends the signature back
    # fails A4 as written and under a 500 alike (found exploring autogen).
    entry = AgentExpectation("fw", "thinking_signature", "A4", "anthropic-messages", "drops it")
    reason = known_failure([entry], "fw", "anthropic-messages", "thinking_signature")
    assert reason("A4", ((0, {"status": 500}),)).startswith("drops it (known on thinking_signature")
    assert (
        known_failure([entry], "fw", "anthropic-messages", "weather_tool_call")(
            "A4", ((0, {"status": 500}),)
        )
        == ""
    )


def test_units_shrink_side_by_side_in_jobs_to_the_same_schedules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "no_retry.py").write_text(NO_RETRY)
    monkeypatch.chdir(tmp_path)
    rows = {}
    for jobs in ("1", "2"):
        argv = ["agents", "--agent", "no_retry:NoRetry", "--scenarios", "weather_tool_call",
                "--protocol", "openai-completions", "--protocol", "anthropic-messages",
                "--check", "A9", "--explore", "6", "--jobs", jobs, "--out", f"report-{jobs}"]  # fmt: skip
        assert main(argv) == 1
        capsys.readouterr()
        report = load_report(tmp_path / f"report-{jobs}" / "report.jsonl")
        rows[jobs] = sorted((r.protocol, r.outcome, str(r.explored)) for r in report.agent_results)
    assert rows["1"] == rows["2"] and len(rows["1"]) == 2
    assert all("'schedule': [{'response': 0, 'fault': {'status': 500}}]" in r[2] for r in rows["2"])


@pytest.mark.parametrize(
    ("date", "at_least", "at_most"), [(FUTURE_DATE, 1e9, float("inf")), (PAST_DATE, 0.0, 0.0)]
)
def test_an_http_date_hint_is_served_as_the_seconds_until_it(
    date: str, at_least: float, at_most: float
) -> None:
    # Found exploring pydantic-ai: a far HTTP-date read as no hint at all made A9 owe a retry
    # that the openai client rightly refuses (the hint is above its 120 s cap).
    scenario = base()
    spec = apply(scenario, ((0, {"status": 429, "headers": {"retry-after": date}}),))
    served = AgentScenario(scenario.path, "x", spec, scenario.tools).served("openai-responses")
    assert served[0].retry_after is not None and at_least <= served[0].retry_after <= at_most


def test_a_shrink_past_its_budget_is_cut_says_so_and_keeps_a_failing_schedule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "no_retry.py").write_text(NO_RETRY)
    monkeypatch.syspath_prepend(str(tmp_path))
    agent = load_agent("no_retry:NoRetry", tmp_path)
    options = ExploreOptions(
        examples=8, seed=1, shrink_runs=1
    )  # a seed whose first failure is not minimal
    units, results = explore([("no_retry:NoRetry", agent)], [base()], options,
                             protocols=["openai-completions"], checks=["A9"])  # fmt: skip
    (unit,) = units
    assert unit.shrink_runs == 1 and unit.shrink_cut is not None
    assert unit.shrink_cut.startswith("shrink cut after 1 runs")
    (row,) = results
    assert row.status == "failed" and row.explored is not None
    assert row.explored["shrink_cut"] == unit.shrink_cut
    # what was kept still fails A9 when run again alone
    (finding,) = unit.findings
    assert any(
        v.check == "A9" and v.status == "failed"
        for v in unit.verdicts[schedule_key(finding.schedule)]
    )


class _Repairing:
    """A normalizer whose finished calls all parse: the planted bug of a toy agent that
    runs the recovery cascade's guess of arguments that were not valid JSON (A13)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def feed(self, chunk: bytes) -> list[Any]:
        return [self._run_it(e) for e in self.inner.feed(chunk)]

    def close(self) -> list[Any]:
        return [self._run_it(e) for e in self.inner.close()]

    @staticmethod
    def _run_it(event: Any) -> Any:
        if isinstance(event, ToolCallEndEvent) and event.strict is False:
            return event.model_copy(update={"strict": True})
        return event


def test_a_toy_agent_that_runs_repaired_arguments_shrinks_to_the_minimal_named_place_and_ending(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Only a call that finishes with arguments cut short (ending finish, a place inside a
    # call) makes the toy agent run what it should not: the shrink lands on the first
    # named place and that ending, whatever the draws that found it.
    original = reference_module.get_normalizer
    monkeypatch.setattr(reference_module, "get_normalizer", lambda p: _Repairing(original(p)))
    options = ExploreOptions(examples=60, save_failures=tmp_path / "found")
    units, _ = explore([("reference", ReferenceAgent())], [base()], options,
                       protocols=["openai-completions"], checks=["A13"])  # fmt: skip
    (unit,) = units
    (finding,) = unit.findings
    assert finding.check == "A13" and not unit.shrink_cut
    assert finding.schedule == (
        (0, {"place": {"call": 1, "at": "last_value"}, "ending": "finish"}),
    )
    # saved in canonical YAML, and its command fails the same check
    assert finding.saved is not None
    assert (
        "fault: {place: {call: 1, at: last_value}, ending: finish}\n"
        in Path(finding.saved).read_text()
    )
    assert main([*shlex.split(finding.command)[1:], "--out", str(tmp_path / "again")]) == 1
    assert " A13 " in capsys.readouterr().out


def _no_retry_explore(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, priors: Any) -> Any:
    (tmp_path / "no_retry.py").write_text(NO_RETRY)
    monkeypatch.syspath_prepend(str(tmp_path))
    agent = load_agent("no_retry:NoRetry", tmp_path)
    options = ExploreOptions(examples=6, priors=priors)
    units, results = explore([("no_retry:NoRetry", agent)], [base()], options,
                             protocols=["openai-completions"], checks=["A9"])  # fmt: skip
    (unit,) = units
    (row,) = results
    return unit, row


def test_a_prior_failure_that_still_fails_is_kept_as_it_was_not_shrunk_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 36: a rerun whose verdicts did not change reports the same schedule. Shrinking
    # alone would find the minimal 500 on response 0; an earlier report's 503 on response 1
    # still fails A9 (a retryable error never resent), so it stays the finding.
    key = ("no-retry", "weather_tool_call", "openai-completions", "A9")
    earlier: Schedule = ((1, {"status": 503}),)
    unit, row = _no_retry_explore(tmp_path, monkeypatch, {key: earlier})
    assert unit.settled == {"A9"} and unit.shrink_runs == 0  # nothing left to shrink
    assert row.status == "failed" and row.explored is not None
    assert row.explored["schedule"] == [{"response": 1, "fault": {"status": 503}}]
    assert row.message.startswith("shrunk to response 1: status: 503: response 1 failed")


@pytest.mark.parametrize(
    "earlier",
    [
        ((0, {"pace": 0.01}),),  # passes now: the draws decide
        ((7, {"status": 503}),),  # a response the base no longer has
        ((0, {"status": "soon"}),),  # not a fault
    ],
)
def test_a_prior_that_passes_or_no_longer_fits_leaves_the_check_to_the_draws(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, earlier: Any
) -> None:
    key = ("no-retry", "weather_tool_call", "openai-completions", "A9")
    unit, row = _no_retry_explore(tmp_path, monkeypatch, {key: earlier})
    assert unit.settled == set()
    assert row.explored is not None
    assert row.explored["schedule"] == [{"response": 0, "fault": {"status": 500}}]


def test_a_rerun_with_the_first_runs_report_reports_the_same_schedule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = _no_retry_argv(tmp_path, monkeypatch, "6")
    assert main([*argv, "--out", "one"]) == 1
    capsys.readouterr()
    first = load_report(tmp_path / "one" / "report.jsonl").agent_results
    assert main([*argv, "--out", "two", "--prior-report", "one/report.jsonl"]) == 1
    assert (
        "replayed 1 earlier shrunk failure(s): 1 still fail as they did" in capsys.readouterr().out
    )
    again = load_report(tmp_path / "two" / "report.jsonl").agent_results
    assert [(r.outcome, r.message) for r in again] == [(r.outcome, r.message) for r in first]
    lines = [(tmp_path / d / "report.jsonl").read_text().splitlines()[1:-1] for d in ("one", "two")]
    assert lines[0] == lines[1]  # only the header and footer differ


def test_a_rows_counts_are_its_draws_not_the_shrinks_candidates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A check judged only by a shrink candidate made a row in one run and none in the next,
    # where a prior settled the failure and nothing was shrunk (64 such rows, issue 36).
    unit, row = _no_retry_explore(tmp_path, monkeypatch, {})
    assert unit.shrink_runs > 0 and len(unit.shrunk) == unit.shrink_runs
    assert row.explored is not None
    drawn = len({schedule_key(s) for s in unit.drawn})
    assert row.explored["schedules"] == drawn
    assert row.explored["judged"] <= drawn and row.explored["failed"] <= drawn
