"""The report model: what build_report records, its ordering, its matrix, and merging."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from report_fixtures import (
    C1,
    C2,
    C3,
    ENV,
    EXPECTED_COUNTS,
    EXPECTED_MATRIX,
    FINISHED,
    STARTED,
    alpha_run,
    beta_run,
    make_report,
)
from stream_harness import __version__
from stream_harness.conformance import CaseResult
from stream_harness.conformance.checks.engine import Failure
from stream_harness.conformance.expectations import Expectations, KnownFailure
from stream_harness.reporting import (
    ReportError,
    build_report,
    merge_reports,
    reclassify,
    update_report,
)
from stream_harness.reporting.report import matrix, problems, stale_adapters


def test_header_metadata_comes_from_the_run() -> None:
    report = make_report()
    assert report.tool_version == __version__
    assert (report.seed, report.examples) == (7, 5)
    # whole seconds, UTC: the 123456 microseconds of STARTED are dropped
    assert report.started == datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
    assert report.finished == FINISHED
    assert [c.id for c in report.checks] == ["contract", "split-invariance", "truncation"]
    first = report.checks[0]
    assert (first.id, first.level, first.enforces) == ("contract", "event", "C1-C12")
    assert [(a.name, a.level, a.version, a.protocols) for a in report.adapters] == [
        ("alpha", "event", "1.0", ("anthropic-messages", "openai-completions")),
        ("beta", "message", "2.5", ("openai-completions",)),
    ]
    assert [(c.id, c.protocol, c.status, c.interaction) for c in report.cases] == [
        (C1, "openai-completions", 200, 0),
        (C2, "anthropic-messages", 200, 0),
        (C3, "openai-completions", 500, 1),
    ]
    assert report.cases[2].cassette == "cassettes/openai-completions/error.yaml"
    assert [(s.where, s.reason) for s in report.skipped] == [
        ("misc/oauth.yaml#0", "not a stream nor an error response")
    ]
    assert report.environment == ENV


def test_failures_and_issues_are_carried_over() -> None:
    report = make_report()
    row = next(
        r for r in report.results if (r.adapter, r.case, r.check) == ("alpha", C2, "contract")
    )
    assert row.outcome == "failed"
    assert row.failures[0].split == "cuts:17"
    assert row.failures[0].observed == '{"type":"toolcall_delta"}'
    known = next(
        r
        for r in report.results
        if (r.adapter, r.case, r.check) == ("alpha", C2, "split-invariance")
    )
    assert known.issue == "https://github.com/example/lib/issues/1"


def test_counts_and_verdict() -> None:
    report = make_report()
    assert report.counts.model_dump() == EXPECTED_COUNTS
    assert report.counts.total == 13
    assert report.did_fail


def test_known_failures_and_fixes_alone_do_not_fail() -> None:
    run = alpha_run()
    run.results = [r for r in run.results if r.outcome in ("passed", "known_failure", "fixed")]
    assert not make_report([run]).did_fail


def test_an_errored_check_alone_fails_the_run() -> None:
    run = alpha_run()
    run.results = [r for r in run.results if r.outcome in ("passed", "errored")]
    report = make_report([run])
    assert report.counts.failed == 0 and report.counts.errored == 1
    assert report.did_fail


def test_results_are_sorted_by_adapter_case_and_check_order_whatever_the_input_order() -> None:
    forward = make_report([alpha_run(), beta_run()])
    shuffled_alpha, shuffled_beta = alpha_run(), beta_run()
    shuffled_alpha.results.reverse()
    shuffled_beta.results = shuffled_beta.results[2:] + shuffled_beta.results[:2]
    assert make_report([shuffled_alpha, shuffled_beta]).results == forward.results
    keys = [(r.adapter, r.case, r.check) for r in forward.results][:4]
    assert keys == [
        ("alpha", C1, "contract"),
        ("alpha", C1, "split-invariance"),
        ("alpha", C1, "truncation"),
        ("alpha", C2, "contract"),
    ]


def test_matrix_cells_match_the_hand_worked_grid() -> None:
    cells = {(c.adapter, c.check): (c.status, c.text) for row in matrix(make_report()) for c in row}
    assert cells == EXPECTED_MATRIX


def test_problems_group_every_non_pass_in_matrix_order() -> None:
    groups = [(a, c, [(r.case, r.outcome) for r in rs]) for a, c, rs in problems(make_report())]
    assert groups == [
        ("alpha", "contract", [(C2, "failed"), (C3, "errored")]),
        ("alpha", "split-invariance", [(C2, "known_failure"), (C3, "fixed")]),
        ("beta", "split-invariance", [(C3, "failed")]),
        ("beta", "truncation", [(C1, "known_failure")]),
    ]


@pytest.mark.parametrize(
    ("row", "named"),
    [
        (CaseResult("alpha", C1, "expected", "passed"), "check 'expected'"),
        (CaseResult("alpha", "nowhere.yaml#0", "contract", "passed"), "case 'nowhere.yaml#0'"),
        (CaseResult("alpha", C1, "contract", "failed"), "two results"),
    ],
)
def test_a_result_the_header_cannot_place_is_refused(row: CaseResult, named: str) -> None:
    run = alpha_run()
    run.results.append(row)
    with pytest.raises(ValidationError, match=named):
        make_report([run])


# --- merging ------------------------------------------------------------------------


def test_merging_two_single_adapter_reports_equals_the_joint_report() -> None:
    merged = merge_reports([make_report([alpha_run()]), make_report([beta_run()])])
    assert merged == make_report([alpha_run(), beta_run()])


def test_merge_keeps_the_span_of_both_runs_and_every_environment() -> None:
    early = make_report(
        [alpha_run()],
        started=datetime(2025, 1, 1, tzinfo=UTC),
        finished=datetime(2025, 1, 1, 1, tzinfo=UTC),
    )
    late = make_report(
        [beta_run()],
        started=datetime(2025, 2, 1, tzinfo=UTC),
        finished=datetime(2025, 2, 1, 1, tzinfo=UTC),
        environment={"python": "3.12.1", "platform": "Linux-test"},
    )
    merged = merge_reports([early, late])
    assert merged.started == datetime(2025, 1, 1, tzinfo=UTC)
    assert merged.finished == datetime(2025, 2, 1, 1, tzinfo=UTC)
    assert merged.environment == {"platform": "Linux-test", "python": "3.11.9 | 3.12.1"}
    assert [a.name for a in merged.adapters] == ["alpha", "beta"]
    assert merged.counts.model_dump() == EXPECTED_COUNTS


def test_merging_a_report_with_itself_changes_nothing() -> None:
    report = make_report()
    assert merge_reports([report, report]) == report


def test_conflicting_duplicate_rows_are_an_error_naming_them() -> None:
    other = alpha_run()
    other.results = [
        dataclasses.replace(r, outcome="passed", failures=())
        if (r.case, r.check) == (C2, "contract")
        else r
        for r in other.results
    ]
    with pytest.raises(
        ReportError,
        match=r"1 conflicting result\(s\) for \(alpha, anthropic-messages/tool.yaml#0, contract\): failed vs passed",
    ):
        merge_reports([make_report([alpha_run()]), make_report([other])])


def test_merge_refuses_reports_that_are_not_comparable() -> None:
    base = make_report([alpha_run()])
    with pytest.raises(ReportError, match=r"differ in seed \(7, 8\)"):
        merge_reports([base, base.model_copy(update={"seed": 8})])
    changed_case = base.cases[0].model_copy(update={"sha256": "0" * 64})
    with pytest.raises(ReportError, match=re.escape(f"case '{C1}' has sha256")):
        merge_reports([base, base.model_copy(update={"cases": (changed_case, *base.cases[1:])})])
    newer = base.adapters[0].model_copy(update={"version": "1.1"})
    with pytest.raises(
        ReportError, match=r"adapter 'alpha' has version '1\.0' in one report and '1\.1' in another"
    ):
        merge_reports([base, base.model_copy(update={"adapters": (newer,)})])
    with pytest.raises(ReportError, match="no reports"):
        merge_reports([])


def test_merge_ignores_where_the_cassette_lived() -> None:
    base = make_report([alpha_run()])
    moved = tuple(c.model_copy(update={"cassette": "/elsewhere/" + c.cassette}) for c in base.cases)
    merged = merge_reports([base, make_report([beta_run()]).model_copy(update={"cases": moved})])
    assert [c.cassette for c in merged.cases] == [c.cassette for c in base.cases]


def test_a_real_engine_run_builds_a_report_that_round_trips(tmp_path: Path) -> None:
    from stream_harness.conformance import (
        CHECKS_BY_ID,
        ReferenceAdapter,
        RunConfig,
        bundled_cassettes,
        load_cases,
        run_adapter,
    )
    from stream_harness.reporting import load_report, write_report

    if not bundled_cassettes().is_dir():
        pytest.skip("no bundled cassettes")
    cases, skipped = load_cases([bundled_cassettes()])
    config = RunConfig(
        examples=1,
        seed=3,
        checks=[CHECKS_BY_ID["contract"], CHECKS_BY_ID["stop-reason"]],
        single_cut_limit=0,
    )
    run = run_adapter(ReferenceAdapter(), cases, config)
    report = build_report([run], cases, skipped, config, started=STARTED, finished=FINISHED)
    assert len(report.results) == len(run.results) > 0
    assert {(r.adapter, r.case, r.check, r.outcome) for r in report.results} == {
        (r.adapter, r.case, r.check, r.outcome) for r in run.results
    }
    write_report(report, tmp_path)
    assert load_report(tmp_path / "report.jsonl") == report


# --- updating a report with a re-run of some adapters ----------------------------------


def test_update_replaces_the_rerun_adapters_and_keeps_the_others_in_place() -> None:
    previous = make_report([alpha_run(), beta_run()])
    rerun = alpha_run()
    rerun.results = [
        dataclasses.replace(r, outcome="passed", failures=(), issue=None) for r in rerun.results
    ]
    updated = update_report(previous, make_report([rerun]))
    assert [a.name for a in updated.adapters] == ["alpha", "beta"]  # the previous order
    alpha_rows = [r for r in updated.results if r.adapter == "alpha"]
    assert {r.outcome for r in alpha_rows} == {"passed"} and len(alpha_rows) == 9
    assert [r for r in updated.results if r.adapter == "beta"] == [
        r for r in previous.results if r.adapter == "beta"
    ]
    # The same rows whichever way they came: equal to building the joint report directly.
    assert updated == make_report([rerun, beta_run()])


def test_update_with_every_adapter_rerun_is_the_new_report() -> None:
    new = make_report([beta_run(), alpha_run()])
    assert update_report(make_report(), new) == new


def test_update_refuses_a_previous_report_of_other_cases_or_checks() -> None:
    previous = make_report()
    # C3 is an openai-completions case, beta's only protocol: beta's rows are stale.
    with pytest.raises(
        ReportError,
        match=r"the cases differ: beta: 1 of its cases added, removed or changed \(.*error\.yaml#1\)",
    ):
        update_report(
            previous.model_copy(
                update={
                    "cases": previous.cases[:2],
                    "results": tuple(r for r in previous.results if r.case != C3),
                }
            ),
            make_report([alpha_run()]),
        )
    changed = previous.cases[0].model_copy(update={"sha256": "f" * 64})
    with pytest.raises(ReportError, match="the cases differ"):
        update_report(
            previous.model_copy(update={"cases": (changed, *previous.cases[1:])}),
            make_report([alpha_run()]),
        )
    with pytest.raises(ReportError, match=r"differ in examples"):
        update_report(previous.model_copy(update={"examples": 99}), make_report([alpha_run()]))
    with pytest.raises(ReportError, match=r"the checks differ"):
        update_report(
            previous.model_copy(update={"checks": previous.checks[:2]}), make_report([alpha_run()])
        )


def test_a_case_of_another_protocol_leaves_an_adapters_rows_standing() -> None:
    """beta runs only openai-completions: an Anthropic case added since (C2) does not
    make its rows stale, so a re-run of alpha keeps them, over all three cases."""
    full = make_report()
    previous = full.model_copy(
        update={
            "cases": tuple(c for c in full.cases if c.id != C2),
            "results": tuple(r for r in full.results if r.case != C2),
        }
    )
    updated = update_report(previous, make_report([alpha_run()]))
    assert [a.name for a in updated.adapters] == ["alpha", "beta"]
    assert [c.id for c in updated.cases] == [c.id for c in full.cases]
    assert [r for r in updated.results if r.adapter == "beta"] == [
        r for r in full.results if r.adapter == "beta"
    ]


def test_changed_expected_events_make_rows_stale_and_only_those_are_dropped() -> None:
    previous = make_report()
    assert all(c.expected_sha256 for c in previous.cases)  # build_report records it
    digested = previous.model_copy(
        update={
            "cases": tuple(
                c.model_copy(update={"expected_sha256": "a" * 64}) for c in previous.cases
            )
        }
    )
    new = make_report([]).model_copy(
        update={
            "cases": tuple(
                c.model_copy(update={"expected_sha256": "b" * 64 if c.id == C2 else "a" * 64})
                for c in previous.cases
            )
        }
    )
    # C2 is Anthropic: alpha's rows are stale, beta's stand.
    assert set(stale_adapters(digested, new)) == {"alpha"}
    assert "anthropic-messages/tool.yaml#0" in stale_adapters(digested, new)["alpha"]
    updated = update_report(digested, new)
    assert [a.name for a in updated.adapters] == ["beta"]
    assert {r.adapter for r in updated.results} == {"beta"}
    # A report that recorded no digest (written before it was) cannot tell: rows are kept.
    undigested = previous.model_copy(
        update={
            "cases": tuple(c.model_copy(update={"expected_sha256": None}) for c in previous.cases)
        }
    )
    assert stale_adapters(undigested, new) == {}


# --- recomputing outcomes from the expectation files ---------------------------------


@pytest.mark.parametrize(("label", "said"), [("timeout", "1 timed out"), ("crashed", "1 crashed")])
def test_an_adapter_timeout_or_crash_is_its_own_failing_outcome(label: str, said: str) -> None:
    # Issue 36, point 6: the adapter's hang or crash fails the run like a failure, under its
    # own label in the verdict and the cell; "errored" stays the harness's own.
    run = alpha_run()
    run.results = [r for r in run.results if r.outcome == "passed"]
    run.results.append(CaseResult("alpha", C3, "contract", label, (Failure("it did not finish"),)))  # type: ignore[arg-type]
    report = make_report([run])
    assert report.did_fail and report.counts.errored == 0 and getattr(report.counts, label) == 1
    assert report.verdict.startswith(f"FAILED: 0 new failure(s), {said}, 0 errored"), report.verdict
    cell = next(c for c in matrix(report)[0] if c.check == "contract")
    assert cell.status == "fail" and f"1 {label}" in cell.text
    unlisted = reclassify(report, lambda name: Expectations(name))
    assert next(r.outcome for r in unlisted.results if r.case == C3) == label
    listed = reclassify(
        report, lambda name: Expectations(name, (KnownFailure("contract", C3, "https://x/1"),))
    )
    assert next(r.outcome for r in listed.results if r.case == C3) == "known_failure"
    assert not listed.did_fail


def test_reclassify_follows_the_expectation_files_as_they_are_now() -> None:
    report = make_report([alpha_run()])
    before = {(r.case, r.check): r.outcome for r in report.results}
    assert before[(C2, "contract")] == "failed"
    assert before[(C2, "split-invariance")] == "known_failure"
    assert before[(C3, "contract")] == "errored"
    files = {
        "alpha": Expectations(
            "alpha",
            (
                KnownFailure("contract", C2, "https://github.com/x/y/issues/9"),  # now known
                KnownFailure("truncation", C1, "https://github.com/x/y/issues/10"),  # passes: fixed
                KnownFailure("truncation", "openai-*", "https://github.com/x/y/issues/11"),
                KnownFailure("contract", "*", "https://github.com/x/y/issues/12"),  # errored stays
            ),
        )
    }
    after = reclassify(report, files.__getitem__)
    outcome = {(r.case, r.check): (r.outcome, r.issue) for r in after.results}
    assert outcome[(C2, "contract")] == ("known_failure", "https://github.com/x/y/issues/9")
    # The entry that made it known is gone from the files: failed again, failures kept.
    assert outcome[(C2, "split-invariance")] == ("failed", None)
    assert next(r.failures for r in after.results if (r.case, r.check) == (C2, "split-invariance"))
    assert outcome[(C1, "truncation")] == ("fixed", "https://github.com/x/y/issues/10")
    # A pattern entry covers a class of cases: a passing member is not news.
    assert outcome[(C3, "truncation")] == ("passed", None)
    assert outcome[(C3, "contract")][0] == "errored"
    assert outcome[(C1, "contract")] == ("passed", None)
