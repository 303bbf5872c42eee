"""The command line: one-line errors with exit 2, never a traceback; the main commands work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stream_harness.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
CASSETTE = ROOT / "cassettes" / "anthropic-messages" / "tool_call.yaml"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["normalize", "/nonexistent/x.yaml"], "/nonexistent/x.yaml: cannot read"),
        (["normalize", str(CASSETTE), "--split", "bytes:0"], "bad --split 'bytes:0'"),
        (["normalize", str(CASSETTE), "--interaction", "9"], "no interaction 9"),
        (
            ["normalize", str(CASSETTE), "--protocol", "smoke-signals"],
            "unknown protocol 'smoke-signals'",
        ),
        (["normalize", str(ROOT / "README.md")], "cannot tell the protocol"),
        (["normalize", str(CASSETTE), "--adapter", "nope:Nope"], "cannot import nope"),
        (["check", "--adapter", "nope"], "unknown adapter 'nope'"),
        (["check", "--check", "made-up"], "unknown check id"),
        (["check", "--cassettes", "/nonexistent"], "/nonexistent: no such cassette folder"),
    ],
)
def test_bad_input_is_one_line_on_stderr_with_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err


def test_a_malformed_cassette_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("interactions:\n- request: {}\n  response: 7\nversion: 1\n")
    code, _, err = run(capsys, "normalize", str(bad))
    assert code == 2 and str(bad) in err and len(err.strip().splitlines()) == 1


def test_normalize_prints_the_same_events_for_any_split(capsys: pytest.CaptureFixture[str]) -> None:
    outputs = []
    for split in ("whole", "bytes:1", "bytes:7", "random:3", "cuts:10,11,500"):
        code, out, _ = run(capsys, "normalize", str(CASSETTE), "--split", split)
        assert code == 0
        outputs.append(out)
    assert len(set(outputs)) == 1
    lines = [json.loads(line) for line in outputs[0].splitlines()]
    assert lines[0]["type"] == "start" and lines[-1]["type"] == "done"
    assert lines[-1]["message"]["stop_reason"] == "tool_use"


def test_check_passes_the_reference_and_report_writes_four_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = ROOT / "cassettes" / "openai-completions"
    code, out, _ = run(
        capsys, "check", "--cassettes", str(folder), "--examples", "2", "--jobs", "1"
    )
    assert code == 0, out
    code, _, _ = run(
        capsys,
        "report",
        "--adapter",
        "reference",
        "--cassettes",
        str(folder),
        "--examples",
        "2",
        "--jobs",
        "1",
        "--out",
        str(tmp_path),
    )
    assert code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "README.md",
        "junit.xml",
        "report.html",
        "report.jsonl",
    ]


def test_summary_lists_every_bundled_cassette(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "summary", "--cassettes", str(ROOT / "cassettes" / "google-generative-ai")
    )
    assert code == 0
    assert "violations" not in out.split("interactions,")[0]
    assert "0 with contract violations" in out


def test_report_keeps_the_rows_of_adapters_it_did_not_rerun(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The main job over a committed matrix refreshes its own rows and keeps the
    third-party ones, unless the run differs or --fresh says otherwise."""
    pytest.importorskip("openai")
    from stream_harness.reporting import load_report

    common = [
        "--cassettes",
        str(ROOT / "cassettes" / "openai-completions" / "tool_call_single.yaml"),
        "--jobs",
        "1",
        "--out",
        str(tmp_path),
    ]

    def adapters() -> list[str]:
        return [a.name for a in load_report(tmp_path / "report.jsonl").adapters]

    # (openai-sdk fails truncation here: exit 1, with its rows written all the same)
    first, _, _ = run(
        capsys,
        "report",
        "--adapter",
        "reference",
        "--adapter",
        "openai-sdk",
        "--examples",
        "2",
        *common,
    )
    assert adapters() == ["reference", "openai-sdk"]
    failed = load_report(tmp_path / "report.jsonl").did_fail
    assert first == (1 if failed else 0)
    # The kept rows count in the verdict: the exit status follows the report written.
    code, out, err = run(capsys, "report", "--adapter", "reference", "--examples", "2", *common)
    assert code == first and adapters() == ["reference", "openai-sdk"]
    assert "kept the rows of openai-sdk" in err
    assert f"verdict: {load_report(tmp_path / 'report.jsonl').verdict}" in out
    code, out, err = run(capsys, "report", "--adapter", "reference", "--examples", "3", *common)
    assert code == 0 and adapters() == ["reference"]
    assert "not keeping the other adapters" in err and "differ in examples (2, 3)" in " ".join(
        err.split()
    )
    run(
        capsys,
        "report",
        "--adapter",
        "reference",
        "--adapter",
        "openai-sdk",
        "--examples",
        "2",
        *common,
    )
    code, out, err = run(
        capsys, "report", "--adapter", "reference", "--examples", "2", "--fresh", *common
    )
    assert code == 0 and adapters() == ["reference"] and "kept" not in err
