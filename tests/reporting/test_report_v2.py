"""report.jsonl format version 2 (issue 36): each fact once, stable sorted rows, version 1
still read and converted.

The stability tests diff two renderings line by line, as ``git diff`` would show a
regenerated committed report: what may change is named, everything else must not.
"""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import jsonschema
import pytest

from report_fixtures import C1, FINISHED, STARTED, make_report, v1_text
from stream_harness.reporting import jsonl, merge_reports
from stream_harness.reporting.keep import keep_previous
from stream_harness.reporting.report import AgentRow, CaseInfo, Report, ReportError, Result

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "specs" / "report.schema.json").read_text(
        encoding="utf-8"
    )
)
CONVENTIONS = {
    "max_retries": 2,
    "sources": {"max_retries": "openai/_constants.py DEFAULT_MAX_RETRIES = 2"},
}


def agent_row(
    agent: str, scenario: str, protocol: str, check: str, outcome: str = "passed", **extra: object
) -> AgentRow:
    fields: dict[str, object] = {
        "agent": agent,
        "agent_version": f"{agent}==1.0",
        "scenario": scenario,
        "protocol": protocol,
        "check": check,
        "title": f"title of {check}",
        "outcome": outcome,
        "command": (
            f"stream-harness agents --agent {agent} --scenarios cassettes/agent-scenarios/{scenario}.yaml "
            f"--protocol {protocol} --check {check}"
        ),
        "faults": ("cut_at",),
        "conventions": CONVENTIONS,
        "settings": "delays x0.01",
    }
    return AgentRow.model_validate({**fields, **extra})


def agent_rows(scenarios: Sequence[str] = ("cut_at_byte", "retry_after")) -> tuple[AgentRow, ...]:
    return tuple(
        agent_row(agent, scenario, protocol, check)
        for agent in ("fw", "reference")  # sorted, as a report is read back
        for scenario in scenarios
        for protocol in ("anthropic-messages", "openai-completions")
        for check in ("A1", "A2", "A10")
    )


def full_report(**update: object) -> Report:
    return make_report().model_copy(update={"agent_results": agent_rows(), **update})


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    """The lines ``git diff`` would show removed and added."""
    removed, added = [], []
    for line in difflib.ndiff(before.splitlines(), after.splitlines()):
        if line.startswith("- "):
            removed.append(line[2:])
        elif line.startswith("+ "):
            added.append(line[2:])
    return removed, added


def test_agent_facts_are_written_once_in_the_header_and_rows_hold_only_their_own() -> None:
    text = jsonl.render(full_report())
    lines = [json.loads(line) for line in text.splitlines()]
    header = lines[0]
    assert [a["name"] for a in header["agents"]] == ["fw", "reference"]
    assert header["agents"][0] == {
        "name": "fw",
        "version": "fw==1.0",
        "settings": "delays x0.01",
        "protocols": ["anthropic-messages", "openai-completions"],
        "conventions": CONVENTIONS,
    }
    # Checks in their natural order (A10 after A2), scenarios by id.
    assert [c["id"] for c in header["agent_checks"]] == ["A1", "A2", "A10"]
    assert header["scenarios"][0] == {
        "id": "cut_at_byte", "file": "cassettes/agent-scenarios/cut_at_byte.yaml", "faults": ["cut_at"],
    }  # fmt: skip
    # A run's checks that passed with nothing the header does not say share one line.
    rows = [line for line in lines if line["kind"].startswith("agent_")]
    assert len(rows) == 2 * 2 * 2  # agents x scenarios x protocols
    assert rows[0] == {
        "kind": "agent_passed", "agent": "fw", "scenario": "cut_at_byte",
        "protocol": "anthropic-messages", "checks": ["A1", "A2", "A10"],
    }  # fmt: skip
    # The conventions' text appears once per agent (two here), not once per row (24).
    assert text.count("DEFAULT_MAX_RETRIES") == 2
    for line in lines:
        jsonschema.validate(line, SCHEMA)


def test_a_row_that_differs_from_its_agent_keeps_its_own_facts_and_its_extra_details() -> None:
    odd = agent_row(
        "fw", "retry_after", "openai-completions", "A2", "failed",
        message="retried after partial output", conventions={"max_retries": 5},
        command="stream-harness agents --agent fw --check A2 --timeout 3", faults=("cut_at", "status_429"),
        issue="https://example.org/1",
    )  # fmt: skip
    rows = tuple(odd if r.key == odd.key else r for r in agent_rows())
    report = full_report(agent_results=rows)
    text = jsonl.render(report)
    line = next(json.loads(t) for t in text.splitlines() if '"message":"retried' in t)
    assert line["conventions"] == {"max_retries": 5}
    assert line["command"].endswith("--timeout 3")
    assert line["faults"] == ["cut_at", "status_429"]
    assert line["issue"] == "https://example.org/1"
    assert "agent_version" not in line and "title" not in line and "settings" not in line
    back = jsonl.parse(text, "r.jsonl")
    assert back.agent_results == report.agent_results
    # A row whose command the header rebuilds gets it back exactly.
    assert back.agent_results[0].command == rows[0].command


def test_the_agents_run_order_does_not_change_the_bytes() -> None:
    # `agents --agent fw --out` over a report appends fw's rows after the others': in run
    # order every fw row would move in the diff.
    report = full_report()
    fw_last = tuple(sorted(report.agent_results, key=lambda r: r.agent != "fw"))
    shuffled = report.model_copy(update={"agent_results": tuple(reversed(report.agent_results))})
    text = jsonl.render(report)
    assert jsonl.render(report.model_copy(update={"agent_results": fw_last})) == text
    assert jsonl.render(shuffled) == text
    keys = [a.key for a in jsonl.parse(text, "r.jsonl").agent_results]
    assert keys == sorted(keys, key=lambda k: (k[0], k[1], k[2], int(k[3][1:])))


def test_a_regeneration_with_the_same_verdicts_changes_only_the_header_and_footer() -> None:
    before = jsonl.render(full_report())
    later = full_report(
        started=STARTED + timedelta(days=1), finished=FINISHED + timedelta(days=1, minutes=3)
    )
    after = jsonl.render(later)
    removed, added = changed_lines(before, after)
    assert removed == [before.splitlines()[0], before.splitlines()[-1]]
    assert added == [after.splitlines()[0], after.splitlines()[-1]]


def test_one_new_case_and_one_new_scenario_add_their_own_rows_and_nothing_else() -> None:
    base = full_report()
    new_case = "anthropic-messages/new.yaml#0"
    cases = list(base.cases)
    cases.insert(1, CaseInfo(id=new_case, cassette="cassettes/anthropic-messages/new.yaml",
                             interaction=0, protocol="anthropic-messages", status=200, sha256="0" * 64))  # fmt: skip
    new_rows = [
        Result(adapter="alpha", case=new_case, check=c.id, outcome="passed") for c in base.checks
    ]
    grown = base.model_copy(
        update={
            "cases": tuple(cases),
            "results": (*base.results, *new_rows),
            "agent_results": agent_rows(("cut_at_byte", "new_scenario", "retry_after")),
        }
    )
    Report.model_validate(grown.model_dump())  # still a consistent report
    before, after = jsonl.render(base), jsonl.render(grown)
    removed, added = changed_lines(before, after)
    # Header and footer change (the new case is listed, the counts grow); no row line goes.
    assert removed == [before.splitlines()[0], before.splitlines()[-1]]
    body = [json.loads(line) for line in added[1:-1]]
    # The new case's passed line, and one line per new run: 2 agents x 2 protocols.
    assert len(body) == 1 + 2 * 2
    assert body[0]["checks"] == [r.check for r in new_rows]
    assert all(
        line.get("case") == new_case or line.get("scenario") == "new_scenario" for line in body
    )


def test_a_version_1_report_is_converted_on_read_and_says_so_in_one_stderr_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = full_report()
    path = tmp_path / "report.jsonl"
    path.write_text(v1_text(report), encoding="utf-8")
    assert jsonl.load_report(path) == report
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"stream-harness: {path}: report format version 1, converted on read (what is written from it is version 2)"
    ]
    # A v2 file reads silently.
    path.write_text(jsonl.render(report), encoding="utf-8")
    assert jsonl.load_report(path) == report
    assert capsys.readouterr().err == ""


def test_a_version_1_report_merges_with_a_version_2_one_and_is_kept_by_a_rerun(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = full_report()
    alpha_only = whole.model_copy(
        update={
            "adapters": tuple(a for a in whole.adapters if a.name == "alpha"),
            "results": tuple(r for r in whole.results if r.adapter == "alpha"),
            "agent_results": (),
        }
    )
    beta_only = whole.model_copy(
        update={
            "adapters": tuple(a for a in whole.adapters if a.name == "beta"),
            "results": tuple(r for r in whole.results if r.adapter == "beta"),
        }
    )
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old.write_text(v1_text(beta_only), encoding="utf-8")
    new.write_text(jsonl.render(alpha_only), encoding="utf-8")
    merged = merge_reports([jsonl.load_report(new), jsonl.load_report(old)])
    assert {r.key: r.outcome for r in merged.results} == {r.key: r.outcome for r in whole.results}
    assert sorted(merged.agent_results, key=lambda a: a.key) == sorted(
        whole.agent_results, key=lambda a: a.key
    )
    # `report` over a folder holding a version 1 report keeps the adapters it did not run.
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.jsonl").write_text(v1_text(beta_only), encoding="utf-8")
    kept, notes = keep_previous(alpha_only, out, keep_missing=True)
    assert notes[0].startswith("kept the rows of beta")
    assert {r.key for r in kept.results} == {r.key for r in whole.results}
    assert "converted on read" in capsys.readouterr().err


def test_a_row_naming_an_agent_the_header_does_not_list_is_refused_naming_the_line() -> None:
    lines = jsonl.render(full_report()).splitlines()
    at = next(i for i, line in enumerate(lines) if '"kind":"agent_passed"' in line)
    lines[at] = lines[at].replace('"agent":"fw"', '"agent":"ghost"')
    with pytest.raises(
        ReportError, match=rf"r.jsonl:{at + 1}: names agent 'ghost', which the header does not list"
    ):
        jsonl.parse("\n".join(lines) + "\n", "r.jsonl")


def test_the_schema_accepts_a_row_without_the_facts_but_not_without_its_keys() -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    row = {
        "kind": "agent_result",
        "agent": "fw",
        "scenario": "s",
        "protocol": "p",
        "check": "A1",
        "outcome": "passed",
    }
    assert validator.is_valid(row)
    assert not validator.is_valid({k: v for k, v in row.items() if k != "check"})
    result = {
        "kind": "result",
        "adapter": "alpha",
        "case": C1,
        "check": "contract",
        "outcome": "passed",
    }
    assert validator.is_valid(result)
    assert not validator.is_valid({**result, "seq": 1})


def test_a_footer_written_before_an_outcome_existed_counts_zero_of_it() -> None:
    # Outcomes grow (timeout, crashed): an older footer that does not name one still reads.
    agents_only = full_report(adapters=(), cases=(), results=())
    lines = jsonl.render(agents_only).splitlines()
    footer = json.loads(lines[-1])
    assert footer["counts"]["fixed"] == 0
    del footer["counts"]["fixed"]
    back = jsonl.parse("\n".join([*lines[:-1], json.dumps(footer)]) + "\n", "r.jsonl")
    assert back == agents_only
    footer["counts"]["passed"] += 1  # the counts it names are still checked
    with pytest.raises(ReportError, match="counts do not match"):
        jsonl.parse("\n".join([*lines[:-1], json.dumps(footer)]) + "\n", "r.jsonl")


def test_the_committed_report_is_version_2_within_the_size_budget() -> None:
    # Issue 36, item 4: the committed matrix is most of the repository's bytes. Sizes only
    # (stat, no read): the reading time is benchmarks/bench_report_read.py's.
    folder = Path(__file__).resolve().parents[2] / "conformance_report"
    with (folder / "report.jsonl").open(encoding="utf-8") as lines:
        assert json.loads(lines.readline())["version"] == 2
    assert (folder / "report.jsonl").stat().st_size < 10_000_000
    assert sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) < 15_000_000


def test_the_verdict_comparison_ignores_when_a_run_happened_but_not_a_changed_outcome(
    tmp_path: Path,
) -> None:
    # benchmarks/compare_report_verdicts.py is what says the committed report kept every
    # earlier verdict; two runs of one matrix never share their times, so those must not
    # count against it, while one changed outcome must.
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "compare_report_verdicts.py"
    old, new, changed = tmp_path / "old.jsonl", tmp_path / "new.jsonl", tmp_path / "changed.jsonl"
    old.write_text(jsonl.render(full_report()), encoding="utf-8")
    later = full_report(
        started=STARTED + timedelta(days=1), finished=FINISHED + timedelta(days=1, minutes=3)
    )
    new.write_text(jsonl.render(later), encoding="utf-8")
    rows = list(later.agent_results)
    rows[0] = rows[0].model_copy(update={"outcome": "failed"})
    changed.write_text(
        jsonl.render(later.model_copy(update={"agent_results": tuple(rows)})), encoding="utf-8"
    )

    def compare(a: Path, b: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(script), str(a), str(b), "--out", str(tmp_path / "out.json")],
            capture_output=True,
            text=True,
            check=False,
        )

    same = compare(old, new)
    assert same.returncode == 0, same.stdout + same.stderr
    assert same.stdout.splitlines()[-1].startswith("same: ")
    assert json.loads((tmp_path / "out.json").read_text())["header_facts_equal"] is True
    differ = compare(new, changed)
    assert differ.returncode == 1
    assert "1 outcomes changed" in differ.stdout
