"""Using stream-harness from another project: configuration, never green on nothing, one
verdict, failures that replay, output that fits a CI log, the scaffold."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stream_harness.cli.main import main
from stream_harness.conformance import SuiteError, prepare, run_conformance
from stream_harness.conformance.checks import CHECKS
from stream_harness.conformance.config import Config, ConfigError, load_config
from stream_harness.contract.diff import first_difference, short_diff, value_at
from stream_harness.contract.facts import bundled_cassettes, specs_dir
from stream_harness.reporting.console import annotation, choose_format, plain_matrix

CASSETTE = bundled_cassettes() / "openai-completions" / "tool_call_single.yaml"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- where data and configuration come from ---------------------------------------------


def test_bundled_data_is_found_as_package_data() -> None:
    assert (specs_dir() / "stop_reasons.yaml").is_file()
    assert (bundled_cassettes() / "anthropic-messages").is_dir()


def test_the_table_is_read_with_paths_relative_to_its_file(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.stream-harness]\ncassettes = ["recorded"]\nadapters = ["mine:A"]\nexamples = 7\nout = "reports/conf"\n',
        encoding="utf-8",
    )
    sub = project / "tests"
    sub.mkdir()
    config = load_config(sub)
    assert config.cassettes == (Path("recorded"),)
    assert (
        config.adapters == ("mine:A",)
        and config.examples == 7
        and config.out == Path("reports/conf")
    )
    # flags over the table; a flag not given keeps the table's value
    merged = config.with_overrides(examples=3, cassettes=None)
    assert merged.examples == 3 and merged.cassettes == (Path("recorded"),)


@pytest.mark.parametrize(
    ("table", "needle"),
    [
        ("examples = -1", "examples"),
        ("cassetes = ['x']", "unknown key 'cassetes'"),
        ("adapters = 3", "adapters"),
        ("out = ''", "out"),
    ],
)
def test_a_bad_table_is_one_line_naming_file_and_key(
    project: Path, table: str, needle: str
) -> None:
    (project / "pyproject.toml").write_text(f"[tool.stream-harness]\n{table}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=needle) as info:
        load_config()
    assert "pyproject.toml" in str(info.value) and "\n" not in str(info.value)


def test_the_cli_reports_a_bad_table_with_exit_2(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pyproject.toml").write_text(
        "[tool.stream-harness]\nexamples = 'many'\n", encoding="utf-8"
    )
    code, _, err = run(capsys, "check")
    assert code == 2 and "examples" in err and "Traceback" not in err


# -- never green on nothing ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--cassettes", "missing"], "missing: no such cassette folder or file"),
        (["--cassettes", "empty"], "empty: no cassettes in it"),
        (["--cassettes", "bad.yaml"], "bad.yaml"),
        (["--cassettes", "notastream.yaml"], "nothing to check"),
        (["--adapter", "nowhere:Thing"], "cannot import nowhere"),
        (["--check", "nope"], "unknown check id 'nope'"),
        (["--check", "overflow-classification", "--cassettes", str(CASSETTE)], "no check applies"),
        (["--split", "cuts:3"], "--split and --truncate replay one case"),
        (
            [
                "--cassettes",
                str(CASSETTE),
                "--interaction",
                "0",
                "--check",
                "split-invariance",
                "--split",
                "cuts:0",
            ],
            "outside the body",
        ),
    ],
)
def test_check_on_nothing_or_bad_input_exits_2_with_one_line(
    project: Path, capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    (project / "empty").mkdir()
    (project / "bad.yaml").write_text("interactions: [", encoding="utf-8")
    (project / "notastream.yaml").write_text(
        "version: 1\ninteractions:\n- request: {method: GET, uri: 'https://example.com/', body: null, headers: {}}\n"
        "  response: {status: {code: 200, message: OK}, headers: {}, body: {string: 'plain'}}\n",
        encoding="utf-8",
    )
    for command in ("check",) if "--split" in argv else ("check", "report"):
        code, out, err = run(capsys, command, *argv)
        assert code == 2, (command, out, err)
        lines = err.strip().splitlines()
        assert needle in lines[-1] and "Traceback" not in err


def test_run_conformance_raises_on_nothing_to_check(project: Path) -> None:
    (project / "empty").mkdir()
    with pytest.raises(SuiteError, match="no cassettes"):
        run_conformance("reference", cassettes=["empty"])


def test_a_suite_states_how_much_it_checks(project: Path) -> None:
    suite = prepare(Config(cassettes=(CASSETTE,), examples=4))
    assert suite.planned > 0
    assert suite.describe().startswith(
        f"1 cassette(s), 1 case(s), {len(CHECKS)} check(s), 1 adapter(s)"
    )


def test_scenarios_are_not_cassettes_and_not_errors(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "lint", str(bundled_cassettes()))
    assert code == 0 and "agent-loop scenario" in err


# -- one verdict; failures that replay ---------------------------------------------------

BROKEN = """
from stream_harness.adapters.protocol import AdapterResult, ReferenceAdapter


class Broken:
    name = "broken"
    level = "message"
    protocols = frozenset({"openai-completions"})

    def version(self):
        return "1"

    def run(self, protocol, chunks, *, status=200, headers=None):
        # loses the tool call's city: an "expected" failure with a precise path
        result = ReferenceAdapter().run(protocol, [b"".join(chunks).replace(b"Paulo", b"Paul")], status=status, headers=headers)
        return AdapterResult(message=result.message)
"""


def test_a_failure_carries_expected_observed_path_and_a_command_that_replays_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = CASSETTE.read_bytes()
    if b"Paulo" not in body:
        pytest.skip("the cassette no longer names Paulo")
    (project / "brokenmod.py").write_text(BROKEN, encoding="utf-8")
    local = project / "cassettes" / "tool.yaml"
    local.parent.mkdir()
    local.write_bytes(body)
    code, out, _ = run(
        capsys,
        "report",
        "--adapter",
        "brokenmod:Broken",
        "--cassettes",
        "cassettes",
        "--check",
        "expected",
        "--format",
        "plain",
    )
    assert code == 1 and "verdict: FAILED: 1 new failure(s)" in out
    row = next(
        json.loads(line)
        for line in (project / "conformance_report" / "report.jsonl").read_text().splitlines()
        if '"outcome":"failed"' in line
    )
    failure = row["failures"][0]
    assert failure["path"].startswith("content[") and failure["path"].endswith(".arguments.city")
    assert "Paulo" in failure["expected"] and 'Paul"' in failure["observed"]
    command = failure["command"]
    assert (
        command
        == "stream-harness check --adapter brokenmod:Broken --cassettes cassettes/tool.yaml --interaction 0 --check expected"
    )
    assert f"reproduce: {command}" in out and 'Paulo", observed "S' in out
    # the command, run as printed from the user's folder, fails the same way
    code, out, _ = run(capsys, *command.split()[1:], "--format", "plain")
    assert code == 1 and "FAIL [broken] expected :: tool.yaml#0" in out
    junit = (project / "conformance_report" / "junit.xml").read_text()
    assert 'failures="1"' in junit


def test_plain_output_cuts_nothing_and_github_annotates(project: Path) -> None:
    from report_fixtures import make_report

    report = make_report()
    lines = plain_matrix(report)
    assert lines and all("…" not in line for line in lines)
    failed = next(r for r in report.results if r.outcome == "failed")
    note = annotation(report, failed)
    assert note.startswith("::error file=") and "\n" not in note


def test_format_auto_follows_github_actions_and_the_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Pipe:
        def isatty(self) -> bool:
            return False

    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert choose_format("auto", Pipe()) == "plain"  # type: ignore[arg-type]
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert choose_format("auto", Pipe()) == "github"  # type: ignore[arg-type]
    assert choose_format("rich", Pipe()) == "rich"  # type: ignore[arg-type]


# -- the first difference ---------------------------------------------------------------


def test_first_difference_names_the_path() -> None:
    want = {
        "content": [{"type": "text"}, {"type": "tool_call", "arguments": {"city": "Paris"}}],
        "stop_reason": "tool_use",
    }
    got = {
        "content": [{"type": "text"}, {"type": "tool_call", "arguments": {"city": "Pari"}}],
        "stop_reason": "tool_use",
    }
    assert first_difference(want, got) == "content[1].arguments.city"
    assert value_at(got, "content[1].arguments.city") == "Pari"
    assert first_difference(want, want) is None
    assert first_difference([1], [1, 2]) == "[1]"
    assert value_at([1], "[1]") == "<missing>"
    assert first_difference({"a b": 1}, {"a b": 2}) == '["a b"]'
    assert value_at({"a b": 2}, '["a b"]') == 2
    assert short_diff("x", "y") == 'at $: expected "x", observed "y"'


# -- the scaffold -------------------------------------------------------------------------


def test_init_scaffolds_a_project_whose_tests_pass(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "init")
    assert code == 0 and "created: pyproject.toml" not in out  # it existed: the table was added
    assert "[tool.stream-harness]" in (project / "pyproject.toml").read_text()
    assert (
        project / "cassettes" / "openai-completions" / "example_tool_call.expected.jsonl"
    ).is_file()
    again, out, _ = run(capsys, "init")
    assert again == 0 and "left alone" in out
    env = {k: v for k, v in os.environ.items() if k != "STREAM_HARNESS_CONFIG"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "tests"],
        cwd=project, capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "22 passed" in done.stdout  # run_conformance, and the whole body + 20 splits


def _builds(project: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """What `pip install -e .` first asks setuptools for: the project's metadata, which is
    where automatic discovery fails (here with this environment's setuptools, offline)."""
    (tmp_path / "egg").mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-c", "import setuptools; setuptools.setup()", "egg_info", "--egg-base", str(tmp_path / "egg")],
        cwd=project, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_init_in_an_empty_folder_writes_a_pyproject_that_installs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 24.6: the scaffold's data folders beside its module must not make setuptools'
    automatic discovery fail (several top-level packages)."""
    folder = tmp_path / "My Project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.delenv("STREAM_HARNESS_CONFIG", raising=False)
    code, out, _ = run(capsys, "init")
    assert code == 0 and "created: pyproject.toml" in out
    assert 'name = "My-Project"' in (folder / "pyproject.toml").read_text()
    done = _builds(folder, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert load_config().adapters == ("stream_adapter:MyAdapter",)


def test_init_beside_automatic_discovery_says_what_to_exclude(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "init")
    assert code == 0 and "note: cassettes/ and stream_expectations/ are data folders" in out


def test_wire_anomalies_the_reference_recovered_from_reach_the_report(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from stream_harness.conformance import (
        CHECKS_BY_ID,
        ReferenceAdapter,
        RunConfig,
        load_cases,
        run_adapter,
    )
    from stream_harness.reporting import build_report
    from stream_harness.reporting.markdown import render

    cassette = bundled_cassettes() / "anthropic-messages" / "server_tool_index_reuse.yaml"
    cases, skipped = load_cases([cassette])
    config = RunConfig(examples=0, checks=[CHECKS_BY_ID["expected"]])
    now = datetime(2026, 1, 1, tzinfo=UTC)
    report = build_report(
        [run_adapter(ReferenceAdapter(), cases, config)],
        cases,
        skipped,
        config,
        started=now,
        finished=now,
    )
    assert report.cases[0].warnings and "reused index" in report.cases[0].warnings[0]
    assert "reused index" in render(report).split("## Wire anomalies")[1]


def test_no_module_finds_data_by_walking_up_from_its_own_file() -> None:
    """Everything read at run time is package data (stream_harness.contract.facts); a path built from
    ``__file__`` works in a checkout and breaks in an installed wheel."""
    import ast

    package = Path(__file__).resolve().parent.parent / "harness"
    offenders = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if any(
            isinstance(node, ast.Name) and node.id == "__file__"
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    ]
    assert offenders == []
