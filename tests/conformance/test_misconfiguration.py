"""Nothing misconfigured is green: each mistake is one line naming the file and the problem.

Issue 24, points 1 and 2: a near-miss table name, an unknown key, a suite option given
without the suite, an out-of-range number, an expectation file that matches nothing, an
adapter that fails to import or construct, two adapters with one name, and a project
adapter loaded from wherever the command runs.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.protocol import AdapterLoadError
from stream_harness.cli.main import main
from stream_harness.conformance import SuiteError, run_conformance
from stream_harness.conformance.config import MAX_EXAMPLES, Config, ConfigError, load_config
from stream_harness.conformance.expectations import ExpectationsError, load_expectations
from stream_harness.conformance.suite import prepare

ONE_CASE = "openai-completions/text_plain.yaml"


def _bundled_case() -> str:
    from stream_harness.contract.facts import bundled_cassettes

    return str(bundled_cassettes() / ONE_CASE)


@pytest.mark.parametrize(
    "table", ["stream_harness", "stream-harnes", "Stream-Harness", "streamharness"]
)
def test_a_near_miss_table_is_an_error_naming_the_right_one(project: Path, table: str) -> None:
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "p"\nversion = "0"\n[tool.{table}]\nexamples = 3\n'
    )
    with pytest.raises(
        ConfigError,
        match=rf"\[tool\.{table}\] is not read: did you mean \[tool\.stream-harness\]\?",
    ):
        load_config()


def test_an_unrelated_tool_table_is_not_a_near_miss(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[project]\nname = "p"\nversion = "0"\n[tool.ruff]\nline-length = 3\n'
    )
    assert load_config() == Config()


def test_an_unknown_key_suggests_the_known_one(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.stream-harness]\nexampels = 3\n")
    with pytest.raises(ConfigError, match=r"unknown key 'exampels' \(did you mean 'examples'\?"):
        load_config()


def test_a_near_miss_table_fails_the_cli_with_exit_2(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pyproject.toml").write_text('[tool.stream_harness]\ncassettes = ["nowhere"]\n')
    assert main(["check", "--format", "plain"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did you mean [tool.stream-harness]?" in err[0]


@pytest.mark.parametrize("examples", [-3, MAX_EXAMPLES + 1])
def test_examples_out_of_range_are_refused_by_every_front_end(
    project: Path, examples: int, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(
        SuiteError,
        match=rf"examples must be a whole number from 0 to {MAX_EXAMPLES}, got {examples}",
    ):
        run_conformance("reference", cassettes=[_bundled_case()], examples=examples)
    assert main(["check", "--examples", str(examples), "--format", "plain"]) == 2
    assert f"--examples must be a whole number from 0 to {MAX_EXAMPLES}" in capsys.readouterr().err
    (project / "pyproject.toml").write_text(f"[tool.stream-harness]\nexamples = {examples}\n")
    with pytest.raises(ConfigError, match="examples: expected a whole number from 0"):
        load_config()


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (project / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, "test_nothing.py"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    "option",
    [
        "--harness-adapter=nosuch:X",
        "--harness-examples=3",
        "--harness-single-cut-limit=9",
        "--harness-check=contract",
        "--harness-expectations=x",
    ],
)
def test_a_suite_option_without_harness_is_a_usage_error(project: Path, option: str) -> None:
    done = _pytest(project, option)
    assert done.returncode == 4, done.stdout + done.stderr
    assert f"{option.split('=')[0]} has no effect without --harness" in done.stderr


def test_plugin_numbers_are_checked_as_the_cli_checks_them(project: Path) -> None:
    done = _pytest(project, "--harness", "--harness-examples=-3")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "--harness-examples must be a whole number from 0 to" in done.stderr
    plain = _pytest(project)
    assert plain.returncode == 0 and "1 passed" in plain.stdout


def test_an_expectation_file_with_an_unknown_key_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("adapter: mine\nknown_failure:\n  - {check: contract, case: '*', issue: x}\n")
    with pytest.raises(ExpectationsError, match=r"unknown key 'known_failure'"):
        load_expectations(path, "mine")
    path.write_text(
        "adapter: mine\nknown_failures:\n  - {check: contract, case: '*', issue: x, reasn: y}\n"
    )
    with pytest.raises(ExpectationsError, match=r"unknown field 'reasn'"):
        load_expectations(path, "mine")
    path.write_text("adapter: theirs\nknown_failures: []\n")
    with pytest.raises(
        ExpectationsError, match=r"names adapter 'theirs', but is the file of 'mine'"
    ):
        load_expectations(path, "mine")


def test_the_bundled_expectation_files_all_load() -> None:
    """Every shipped file passes the strict reading (shared fields sit under causes)."""
    from stream_harness.conformance.expectations import adapter_from_file_name, expectations_dir

    files = sorted(expectations_dir().glob("*.yaml"))
    assert len(files) > 20
    for path in files:
        load_expectations(path, adapter_from_file_name(path.name))


def test_an_expectation_file_for_no_adapter_that_ran_is_a_warning(project: Path) -> None:
    folder = project / "stream_expectations"
    folder.mkdir()
    (folder / "refrence.yaml").write_text("adapter: refrence\nknown_failures: []\n")
    with pytest.warns(
        UserWarning, match=r"refrence.yaml: no adapter of this run is named 'refrence'"
    ):
        run_conformance("reference", cassettes=[_bundled_case()], examples=1, expectations=folder)


ADAPTER_OK = """
from stream_harness import ReferenceAdapter


class Named(ReferenceAdapter):
    name = "same"
"""


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "def broken(:\n",
            r"adapter 'mod:Adapter': importing mod raised SyntaxError: .*mod\.py:1\)",
        ),
        (
            "raise RuntimeError('no config here')\n",
            r"importing mod raised RuntimeError: no config here \(.*mod\.py:1\)",
        ),
        (
            "class Adapter:\n    def __init__(self):\n        raise ValueError('needs a key')\n",
            r"constructing it raised ValueError: needs a key \(.*mod\.py:3\)",
        ),
    ],
)
def test_an_adapter_that_fails_to_load_is_one_line_and_exit_2(
    project: Path, source: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "mod.py").write_text(source)
    sys.modules.pop("mod", None)
    with pytest.raises(AdapterLoadError, match=expected):
        load_adapter("mod:Adapter", project=project)
    sys.modules.pop("mod", None)
    assert main(["check", "--adapter", "mod:Adapter", "--format", "plain"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    sys.modules.pop("mod", None)


def test_two_adapters_with_one_name_are_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "named.py").write_text(ADAPTER_OK + "\n\nclass Other(Named):\n    pass\n")
    sys.modules.pop("named", None)
    with pytest.raises(SuiteError, match=r"'named:Named' and 'named:Other' are both named 'same'"):
        prepare(Config(cassettes=(Path(_bundled_case()),), adapters=("named:Named", "named:Other")))
    args = [
        "check",
        "--adapter",
        "named:Named",
        "--adapter",
        "named:Other",
        "--cassettes",
        _bundled_case(),
    ]
    assert main([*args, "--format", "plain"]) == 2
    assert "are both named 'same'" in capsys.readouterr().err
    sys.modules.pop("named", None)


def test_a_project_adapter_loads_from_a_subfolder_without_changing_sys_path(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "proj_adapter.py").write_text(ADAPTER_OK)
    (project / "pyproject.toml").write_text(
        '[tool.stream-harness]\nadapters = ["proj_adapter:Named"]\n'
    )
    sub = project / "tests" / "deeper"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    sys.modules.pop("proj_adapter", None)
    before = list(sys.path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = run_conformance(
            "proj_adapter:Named", cassettes=[_bundled_case()], examples=1, config=load_config()
        )
    assert run.adapter.name == "same"
    assert sys.path == before
    sys.modules.pop("proj_adapter", None)


def test_a_cut_body_whose_arguments_differ_says_where() -> None:
    """Issue 24.4: not "1 blocks expected, 1 kept" when the one block kept is wrong."""
    from stream_harness.conformance.checks.stream import _content_difference

    want = [
        {"type": "tool_call", "id": "c1", "name": "weather", "arguments": {"city": "São Paulo"}}
    ]
    have = [{"type": "tool_call", "id": "c1", "name": "weather", "arguments": {"city": "São"}}]
    text = _content_difference(want, have)
    assert text == 'differs at content[0].arguments.city: expected "São Paulo", observed "São"'
    assert _content_difference(want, []) == "was lost: 1 blocks expected, 0 kept"
    assert _content_difference(want, want + want).startswith("gained blocks")
