"""README.md: metadata, the matrix rows, failures with their reproduce commands, escaping."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from report_fixtures import (
    C2,
    C3,
    FIXED_ISSUE,
    HOSTILE,
    KNOWN_ISSUE,
    REPRO,
    alpha_run,
    beta_run,
    make_report,
)
from stream_harness.conformance import CaseResult
from stream_harness.reporting import load_report
from stream_harness.reporting.markdown import code, render, text
from stream_harness.reporting.report import FailureInfo, Report, Result


def test_metadata_and_matrix_rows() -> None:
    md = render(make_report())
    assert md.startswith("# stream-harness conformance report\n")
    assert "- Run: 2025-03-01 12:00:00 UTC to 2025-03-01 12:04:30 UTC" in md
    assert "- Seed: 7; random splits per check: 5" in md
    assert "- Adapters: alpha 1.0 (event level), beta 2.5 (message level)" in md
    lines = md.splitlines()
    assert "| adapter | contract | split-invariance | truncation |" in lines
    assert "| alpha 1.0 | **1/3 (1 failed, 1 errored)** | 2/3 (1 known, 1 fixed) | 3/3 |" in lines
    assert "| beta 2.5 | n/a | **1/2 (1 failed)** | 1/2 (1 known) |" in lines
    assert (
        "- Verdict: **FAILED**: 2 new failure(s), 1 errored (13 results: 7 passed, 2 known failures, 1 fixed)"
        in lines
    )


def test_new_failures_in_full_known_ones_by_finding_and_fixes_apart() -> None:
    md = render(make_report([alpha_run()]))
    new = md[md.index("## New failures") : md.index("## Known failures, by finding")]
    section = new[new.index("### alpha / contract") :]
    assert (
        f"- `{C2}`: **failed**: C3: toolcall\\_delta for content\\_index 1 before its start"
        in section
    )
    assert f"  - reproduce: `{REPRO}`" in section
    assert f"- `{C3}`: **errored**: the check raised: KeyError: 'x'" in section
    assert "split-invariance" not in new  # a known failure and a fix are not new failures
    known = md[md.index("## Known failures, by finding") : md.index("## Fixed")]
    assert f"- <{KNOWN_ISSUE}>: 1 result (split-invariance) in alpha\n" in known
    assert f"  - reproduce: `{REPRO}`" in known
    fixed = md[md.index("## Fixed") : md.index("## Wire anomalies")]
    assert (
        f"- alpha / split-invariance `{C3}`: passed although listed as known (<{FIXED_ISSUE}>)"
        in fixed
    )


def test_known_failures_are_one_entry_per_finding_and_the_page_stays_small() -> None:
    # Issue 36, point 5: 2,000 known failures of 4 findings are 4 entries with their
    # counts and one reproduce command each, not 2,000 entries; report.jsonl keeps the rows.
    issues = [f"https://github.com/example/lib/issues/{n}" for n in range(10, 14)]
    failure = FailureInfo(
        message="cut stream ended in done " + "x" * 300, split="cuts:3", command=REPRO
    )
    small = make_report([alpha_run()])
    cases = [
        small.cases[0].model_copy(update={"id": f"openai-completions/case_{i}.yaml#0"})
        for i in range(1000)
    ]
    rows = [
        Result(
            adapter="alpha",
            case=c.id,
            check=check,
            outcome="known_failure",
            failures=(failure,),
            issue=issues[i % 4],
        )
        for i, c in enumerate(cases)
        for check in ("contract", "truncation")
    ]
    report = Report.model_validate(
        {**small.model_dump(), "cases": cases, "results": rows, "adapters": small.adapters[:1]}
    )
    md = render(report)
    known = md[md.index("## Known failures, by finding") : md.index("## Fixed")]
    assert known.count("  - reproduce: ") == 4, known
    for issue in issues:
        assert known.count(f"<{issue}>: 500 results (contract, truncation) in alpha\n") == 1
    assert "2000 known failure(s) of 4 finding(s)" in known
    assert len(md.encode()) < 20_000, len(md.encode())


def test_skipped_inputs_are_listed_with_their_reasons() -> None:
    md = render(make_report())
    assert md.rstrip().endswith(
        "## Skipped inputs\n\n- `misc/oauth.yaml#0`: not a stream nor an error response"
    )


def test_hostile_text_is_escaped_and_table_rows_keep_their_shape() -> None:
    run = beta_run()
    run.adapter.name = "be|ta<b>"
    run.results = [
        CaseResult("be|ta<b>", r.case, r.check, r.outcome, r.failures, r.issue) for r in run.results
    ]
    md = render(make_report([run]))
    assert "<script>" not in md
    assert "\\<script\\>" in md
    outside_code = re.sub(r"`[^`]*`", "", md)  # code spans show markup literally, which is safe
    assert "<b>" not in outside_code
    assert "be\\|ta\\<b\\>" in md
    row = next(line for line in md.splitlines() if line.startswith("| be"))
    # adapter + 2 checks = 3 cells, 4 separators: contract applied to no adapter, so no column
    assert row.replace("\\|", "").count("|") == 4
    assert "- not shown, applied to no adapter: contract" in md
    assert "- `javascript:alert(1)`: 1 result" in md and "<javascript:" not in md  # not a link
    assert HOSTILE not in md


def test_code_span_fences_outgrow_backticks_inside() -> None:
    assert code("plain") == "`plain`"
    assert code("a`b") == "``a`b``"
    assert code("`x``") == "``` `x`` ```"
    assert text("a*b_c\nd") == "a\\*b\\_c d"


def test_the_committed_reports_readme_is_a_summary_under_300_kb() -> None:
    # Issue 36, point 5, on real data: 45 adapters, 15 agents, ~2,000 known failures.
    committed = Path(__file__).resolve().parents[2] / "conformance_report" / "report.jsonl"
    if not committed.is_file():
        pytest.skip("no committed conformance_report/report.jsonl in this checkout")
    report = load_report(committed)
    md = render(report)
    assert len(md.encode()) < 300_000, len(md.encode())
    known = md[md.index("## Known failures, by finding") : md.index("## Fixed")]
    findings = {r.issue for r in report.results if r.outcome == "known_failure"}
    assert known.count("  - reproduce: ") == len(findings)  # one command per finding, not per row
