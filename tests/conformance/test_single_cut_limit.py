"""The single-cut sweep as a setting: which splits it adds, where it is read from, and that
a report says what it was made with (results made with different sweeps do not merge)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stream_harness.adapters.protocol import ReferenceAdapter
from stream_harness.cli.main import main
from stream_harness.conformance.cases import load_cases
from stream_harness.conformance.checks.engine import ONE_BYTE_LIMIT, CheckContext
from stream_harness.conformance.config import DEFAULT_SINGLE_CUT_LIMIT, ConfigError, load_config
from stream_harness.contract.facts import bundled_cassettes
from stream_harness.reporting import ReportError, load_report, merge_reports

CASSETTE = bundled_cassettes() / "openai-completions" / "tool_call_single.yaml"
MID_SIZED = bundled_cassettes() / "mistral-chat" / "stream_cut.yaml"  # a 997-byte body


def _context(limit: int, examples: int = 5) -> CheckContext:
    (case,), _ = load_cases([MID_SIZED])
    return CheckContext(case, ReferenceAdapter(), examples=examples, single_cut_limit=limit)


def test_every_single_cut_up_to_the_limit_and_the_one_byte_split_regardless() -> None:
    n = len(_context(0).case.body)
    assert DEFAULT_SINGLE_CUT_LIMIT < n <= ONE_BYTE_LIMIT  # the case sits between the two
    for limit, singles in ((n, n - 1), (n - 1, 0), (0, 0)):
        splits = _context(limit).splits()
        assert [k for k in range(1, n) if [k] in splits] == (list(range(1, n)) if singles else [])
        assert list(range(1, n)) in splits  # one byte per chunk: one run, always tried
        assert len(splits) >= singles + 5


def test_the_limit_comes_from_the_table_and_a_bad_one_is_one_line(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        "[tool.stream-harness]\nsingle_cut_limit = 4096\n", encoding="utf-8"
    )
    assert load_config().single_cut_limit == 4096
    (project / "pyproject.toml").write_text(
        "[tool.stream-harness]\nsingle_cut_limit = -3\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError, match="single_cut_limit") as info:
        load_config()
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("command", ["check", "report", "matrix"])
def test_a_negative_flag_is_exit_2(
    project: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    assert main([command, "--single-cut-limit", "-1"]) == 2
    err = capsys.readouterr().err
    assert "--single-cut-limit must be >= 0" in err and len(err.strip().splitlines()) == 1


def test_a_report_says_its_limit_and_reports_of_different_limits_do_not_merge(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for limit, out in ((0, "a"), (2048, "b")):
        code = main(
            [
                "report",
                "--cassettes",
                str(CASSETTE),
                "--examples",
                "2",
                "--single-cut-limit",
                str(limit),
                "--out",
                out,
                "--jobs",
                "1",
            ]
        )
        assert code == 0
    a, b = load_report(Path("a/report.jsonl")), load_report(Path("b/report.jsonl"))
    assert (a.single_cut_limit, b.single_cut_limit) == (0, 2048)
    assert "bodies up to 2048 bytes" in Path("b/README.md").read_text(encoding="utf-8")
    with pytest.raises(ReportError, match="single_cut_limit"):
        merge_reports([a, b])
    # A report written before the limit was a setting was made with the 1 KB sweep.
    lines = Path("a/report.jsonl").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    del header["single_cut_limit"]
    Path("old.jsonl").write_text(
        "\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8"
    )
    assert load_report(Path("old.jsonl")).single_cut_limit == 1024
