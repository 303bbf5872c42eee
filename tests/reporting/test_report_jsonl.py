"""report.jsonl: the schema, the line layout, the round trip, and refusing broken files."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest

from report_fixtures import C1, EXPECTED_COUNTS, alpha_run, beta_run, make_report
from stream_harness.conformance import Failure
from stream_harness.reporting import ReportError, load_report, write_report
from stream_harness.reporting.jsonl import json_schema, render, render_schema

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "specs" / "report.schema.json"


def test_committed_schema_matches_the_models() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render_schema(), (
        "specs/report.schema.json is stale: regenerate with "
        '`python -c "from stream_harness.reporting.jsonl import write_schema; write_schema()"`'
    )


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(json_schema())


def test_every_line_validates_against_the_committed_schema(tmp_path: Path) -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    write_report(make_report(), tmp_path)
    lines = [
        json.loads(line)
        for line in (tmp_path / "report.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    for line in lines:
        validator.validate(line)
    # Per (adapter, case): its checks that passed with nothing to say in one "passed" line,
    # first, then one "result" line per other check.
    assert [line["kind"] for line in lines] == [
        "header", "passed", "passed", "result", "result", "passed", "result", "result",
        "passed", "result", "passed", "result", "footer",
    ]  # fmt: skip
    # Version 2: no running number on a row (one new case would renumber every later row).
    assert all("seq" not in line for line in lines)
    header, footer = lines[0], lines[-1]
    assert (header["version"], header["tool"], header["seed"], header["examples"]) == (
        2,
        "stream-harness",
        7,
        5,
    )
    assert header["started"] == "2025-03-01T12:00:00Z"
    assert header["checks"][0] == {
        "id": "contract",
        "title": "event sequence follows the contract grammar",
        "enforces": "C1-C12",
        "level": "event",
    }
    assert header["adapters"][1] == {
        "name": "beta",
        "level": "message",
        "version": "2.5",
        "protocols": ["openai-completions"],
    }
    assert set(header["cases"][0]) == {
        "id",
        "cassette",
        "interaction",
        "protocol",
        "status",
        "sha256",
        "expected_sha256",
        "warnings",
    }
    assert header["environment"] == {"platform": "Linux-test", "python": "3.11.9"}
    # Passing rows are their keys: empty failures and no issue are left out, and the checks
    # of one case share the line, in check order.
    assert lines[1] == {
        "kind": "passed", "adapter": "alpha", "case": C1,
        "checks": ["contract", "split-invariance", "truncation"],
    }  # fmt: skip
    assert footer == {
        "kind": "footer",
        "finished": "2025-03-01T12:04:30Z",
        "counts": EXPECTED_COUNTS,
        "did_fail": True,
    }


def test_schema_rejects_a_line_of_unknown_kind_or_outcome() -> None:
    validator = jsonschema.Draft202012Validator(json_schema())
    line = json.loads(render(make_report()).splitlines()[1])
    assert validator.is_valid(line)
    assert not validator.is_valid({**line, "outcome": "flaky"})
    assert not validator.is_valid({**line, "kind": "note"})
    assert not validator.is_valid({**line, "extra": 1})


def test_write_then_load_gives_the_same_report(tmp_path: Path) -> None:
    report = make_report()
    paths = write_report(report, tmp_path / "out")
    assert [p.name for p in paths] == ["report.jsonl", "README.md", "report.html", "junit.xml"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        p.name for p in paths
    )  # no temp files left
    assert load_report(paths[0]) == report


def test_a_lone_surrogate_in_a_message_survives_the_round_trip(tmp_path: Path) -> None:
    run = beta_run()
    run.results[0] = run.results[0].__class__(
        "beta",
        C1,
        "split-invariance",
        "failed",
        (Failure(b"bad \xff byte".decode("utf-8", "surrogateescape")),),
    )
    report = make_report([run])
    write_report(report, tmp_path)
    assert load_report(tmp_path / "report.jsonl") == report


def test_output_is_byte_identical_for_the_same_input_and_differs_only_in_timestamps(
    tmp_path: Path,
) -> None:
    first = write_report(make_report(), tmp_path / "a")
    again = write_report(make_report(), tmp_path / "b")
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in again]
    later = render(
        make_report(
            started=datetime(2026, 1, 1, tzinfo=UTC), finished=datetime(2026, 1, 2, tzinfo=UTC)
        )
    ).splitlines()
    now = render(make_report()).splitlines()
    assert later[1:-1] == now[1:-1]
    assert {k: v for k, v in json.loads(later[0]).items() if k != "started"} == {
        k: v for k, v in json.loads(now[0]).items() if k != "started"
    }


def _drop_footer(lines: list[str]) -> list[str]:
    return lines[:-1]


def _gap(lines: list[str]) -> list[str]:
    return [lines[0], *lines[2:]]


def _swap(lines: list[str]) -> list[str]:
    return [lines[0], lines[2], lines[1], *lines[3:]]


def _tamper_counts(lines: list[str]) -> list[str]:
    footer = json.loads(lines[-1])
    footer["counts"]["failed"] = 0
    footer["did_fail"] = False
    return [*lines[:-1], json.dumps(footer)]


def _after_footer(lines: list[str]) -> list[str]:
    return [*lines, lines[1]]


def _not_json(lines: list[str]) -> list[str]:
    return [lines[0], "{oops", *lines[1:]]


def _newer_version(lines: list[str]) -> list[str]:
    return [lines[0].replace('"version":2', '"version":3', 1), *lines[1:]]


def _no_header(lines: list[str]) -> list[str]:
    return lines[1:]


def _unknown_adapter(lines: list[str]) -> list[str]:
    return [lines[0], lines[1].replace('"adapter":"alpha"', '"adapter":"gamma"'), *lines[2:]]


def _empty(lines: list[str]) -> list[str]:
    return []


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (_drop_footer, "no footer line, the report is incomplete"),
        (_gap, "the footer's counts do not match the result lines (lines lost?)"),
        (_swap, ":3: result out of order or repeated"),
        (_tamper_counts, "the footer's counts do not match the result lines"),
        (_after_footer, ":14: a line after the footer"),
        (_not_json, ":2: not JSON"),
        (_newer_version, ":1: report format version 3 (this tool reads 1 and 2)"),
        (_no_header, ":1: the first line is not a report header"),
        (_unknown_adapter, ":2: result names adapter 'gamma', which the header does not list"),
        (_empty, "empty, no report header"),
    ],
)
def test_a_broken_report_is_refused_in_one_line_naming_the_file(
    tmp_path: Path, mutate: Callable[[list[str]], list[str]], message: str
) -> None:
    path = tmp_path / "report.jsonl"
    path.write_text("\n".join(mutate(render(make_report()).splitlines())) + "\n", encoding="utf-8")
    with pytest.raises(ReportError) as info:
        load_report(path)
    text = str(info.value)
    assert text.startswith(str(path))
    assert message in text
    assert "\n" not in text


def test_a_missing_file_is_a_report_error(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="cannot read"):
        load_report(tmp_path / "nope.jsonl")


def test_a_loaded_report_can_be_merged(tmp_path: Path) -> None:
    from stream_harness.reporting import merge_reports

    write_report(make_report([alpha_run()]), tmp_path / "a")
    write_report(make_report([beta_run()]), tmp_path / "b")
    merged = merge_reports(
        [load_report(tmp_path / "a" / "report.jsonl"), load_report(tmp_path / "b" / "report.jsonl")]
    )
    assert merged == make_report()
