"""README.md: metadata, the matrix rows, failures with their reproduce commands, escaping."""

from __future__ import annotations

import re

from report_fixtures import C2, C3, HOSTILE, KNOWN_ISSUE, REPRO, alpha_run, beta_run, make_report
from stream_harness.conformance import CaseResult
from stream_harness.reporting.markdown import code, render, text


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


def test_failures_are_grouped_with_the_first_message_and_the_reproduce_command() -> None:
    md = render(make_report([alpha_run()]))
    section = md[md.index("### alpha / contract") : md.index("### alpha / split-invariance")]
    assert (
        f"- `{C2}`: **failed**: C3: toolcall\\_delta for content\\_index 1 before its start"
        in section
    )
    assert f"  - reproduce: `{REPRO}`" in section
    assert f"- `{C3}`: **errored**: the check raised: KeyError: 'x'" in section
    known = md[md.index("### alpha / split-invariance") :]
    assert f"  - issue: <{KNOWN_ISSUE}>" in known
    assert "**fixed**" in known


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
    assert row.replace("\\|", "").count("|") == 5  # adapter + 3 checks = 4 cells, 5 separators
    assert "issue: `javascript:alert(1)`" in md  # not a link
    assert HOSTILE not in md


def test_code_span_fences_outgrow_backticks_inside() -> None:
    assert code("plain") == "`plain`"
    assert code("a`b") == "``a`b``"
    assert code("`x``") == "``` `x`` ```"
    assert text("a*b_c\nd") == "a\\*b\\_c d"
