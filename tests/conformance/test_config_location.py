"""Issue 35.1: the configuration of a run is the project's that holds the test, wherever
pytest is started from (a monorepo's root, the project root, its tests/ folder), never the
current folder's (whose table, or none and the bundled cassettes, is not the project's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stream_harness.cli.main import main
from stream_harness.conformance import SuiteError, run_conformance
from stream_harness.conformance.config import ConfigError, config_for_paths, load_config

# Appended to the scaffolded test file: which cases run_conformance checked, said by a test.
ONLY_OURS = """

def test_only_this_projects_cases_are_checked() -> None:
    run = run_conformance("stream_adapter:MyAdapter", examples=2)
    assert {r.case for r in run.results} == {"openai-completions/example_tool_call.yaml#0"}
"""

# A monorepo root whose own table would be wrong for the project (a folder that does not
# exist: reading it is a collection error, never a silent pass).
MONOREPO_ROOT = """[tool.pytest.ini_options]
addopts = "-p no:randomly -p no:cacheprovider"

[tool.stream-harness]
cassettes = ["not-the-projects-cassettes"]
"""


@pytest.fixture
def monorepo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Path:
    """<tmp>/mono (pytest's rootdir, its own table) holding <tmp>/mono/proj, scaffolded by init."""
    monkeypatch.delenv("STREAM_HARNESS_CONFIG", raising=False)
    root = tmp_path / "mono"
    (root / "proj").mkdir(parents=True)
    (root / "pyproject.toml").write_text(MONOREPO_ROOT, encoding="utf-8")
    assert main(["init", "--dir", str(root / "proj")]) == 0
    capsys.readouterr()
    with (root / "proj" / "tests" / "test_stream_harness.py").open("a", encoding="utf-8") as f:
        f.write(ONLY_OURS)
    return root


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "STREAM_HARNESS_CONFIG"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", *args],
        cwd=cwd, capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("where", "target"), [(".", "proj/tests"), ("proj", "tests"), ("proj/tests", ".")]
)
def test_the_scaffolded_tests_check_the_projects_cases_from_any_folder(
    monorepo: Path, where: str, target: str
) -> None:
    done = _pytest(monorepo / where, target)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "23 passed" in done.stdout, done.stdout


def test_the_suite_items_are_the_projects_when_run_from_a_parent_folder(monorepo: Path) -> None:
    done = _pytest(monorepo, "proj/tests", "--harness", "--collect-only")
    assert done.returncode == 0, done.stdout + done.stderr
    items = [line for line in done.stdout.splitlines() if line.startswith("stream-harness::")]
    assert items and all(
        "[openai-completions/example_tool_call.yaml#0]" in line for line in items
    ), done.stdout


def test_paths_of_two_projects_are_one_line_naming_both(
    monorepo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = monorepo / "other"
    other.mkdir()
    assert main(["init", "--dir", str(other)]) == 0
    capsys.readouterr()
    with pytest.raises(
        ConfigError,
        match=r"belong to 2 projects .*mono/other/pyproject.toml.*mono/proj/pyproject.toml",
    ):
        config_for_paths([monorepo / "proj" / "tests", other / "tests"])
    done = _pytest(monorepo, "proj/tests", "other/tests", "--harness")
    assert (
        done.returncode != 0
        and "stream-harness: the paths given belong to 2 projects" in done.stdout
    )


def test_run_conformance_takes_the_project_root(
    monorepo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(monorepo)  # the monorepo's table would name a folder that is not there
    run = run_conformance("stream_adapter:MyAdapter", project=monorepo / "proj", examples=2)
    assert {r.case for r in run.results} == {"openai-completions/example_tool_call.yaml#0"}
    same = run_conformance(
        "stream_adapter:MyAdapter", project=monorepo / "proj" / "pyproject.toml", examples=2
    )
    assert same.results == run.results


def test_run_conformance_reads_the_callers_project_not_the_current_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Called from this test file (in the checkout, whose pyproject.toml has no table),
    from a folder whose table would break the run: the caller's project is the one read."""
    monkeypatch.delenv("STREAM_HARNESS_CONFIG", raising=False)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.stream-harness]\ncassettes = ["missing"]\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    assert load_config().cassettes == (Path("missing"),)  # what the current folder says
    run = run_conformance("reference", examples=0, checks=["contract"])
    assert run.results and all(r.ok for r in run.results)


@pytest.mark.parametrize("given", ["nowhere", "."])
def test_a_project_root_without_a_pyproject_is_one_line(tmp_path: Path, given: str) -> None:
    with pytest.raises(SuiteError, match=r"no such folder or file|no pyproject.toml in it"):
        run_conformance("reference", project=tmp_path / given)


def test_a_project_without_a_table_still_imports_its_adapter_from_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STREAM_HARNESS_CONFIG", raising=False)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\nversion = "0"\n', encoding="utf-8"
    )
    config = load_config(tmp_path / "tests" / "test_x.py")
    assert config.source == (tmp_path / "pyproject.toml").resolve() and config.cassettes == ()
