"""``report`` and ``check`` run in a user's project (a folder in tmp_path with its own
``[tool.stream-harness]`` table), as a team's CI runs them: what they write and say names the
project's folders, never the installed package's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

from stream_harness.cli.main import main
from stream_harness.conformance import expectations as expectations_module

CASSETTE = REPO_ROOT / "cassettes" / "openai-completions" / "tool_call_single.yaml"
TABLE = """\
[tool.stream-harness]
cassettes = ["cassettes"]
expectations = "stream_expectations"
out = "conformance_report"
"""
FAST = ["--examples", "1", "--jobs", "1", "--check", "contract", "--format", "plain"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "cassettes").mkdir(parents=True)
    (root / "stream_expectations").mkdir()
    (root / "sub").mkdir()
    shutil.copy(CASSETTE, root / "cassettes" / CASSETTE.name)
    (root / "pyproject.toml").write_text(TABLE, encoding="utf-8")
    monkeypatch.delenv("STREAM_HARNESS_CONFIG", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.chdir(root / "sub")  # a subfolder: the table's paths are the root's
    return root


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """As from a wheel: the bundled files sit in site-packages (this checkout's tests run
    from an editable install, whose bundled folder is the repository's specs/)."""
    monkeypatch.setattr(expectations_module, "bundle_is_writable", lambda: False)
    monkeypatch.delenv("STREAM_HARNESS_SPECS", raising=False)


def test_report_readme_and_html_name_the_projects_expectation_folder(
    project: Path, installed: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--adapter", "reference", *FAST]) == 0
    capsys.readouterr()
    out = project / "conformance_report"
    readme = (out / "README.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    assert (
        r"`known_failure`: failed, and an expectation file lists it with an upstream issue "
        r"(CI passes): stream\_expectations/\<adapter\>.yaml, else the files bundled with stream-harness"
    ) in readme
    assert (
        "stream_expectations/&lt;adapter&gt;.yaml, else the files bundled with stream-harness"
        in html
    )
    for text in (readme, html, (out / "report.jsonl").read_text(encoding="utf-8")):
        assert "site-packages" not in text and "specs/expectations" not in text
        assert "../stream_expectations" not in text  # relative to the project root, not the cwd


def test_check_help_names_the_configured_folder(
    project: Path, installed: None, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert (
        "(default: stream_expectations, from pyproject.toml's [tool.stream-harness], "
        "then the files bundled with stream-harness)"
    ) in help_text
    assert "site-packages" not in help_text and "specs/expectations" not in help_text


def test_without_a_configured_folder_the_bundled_ones_are_named_not_their_path(
    project: Path, installed: None, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pyproject.toml").write_text(
        TABLE.replace('expectations = "stream_expectations"\n', "")
    )
    assert main(["report", "--adapter", "reference", *FAST]) == 0
    capsys.readouterr()
    readme = (project / "conformance_report" / "README.md").read_text(encoding="utf-8")
    assert "(CI passes): the files bundled with stream-harness" in readme
    assert "site-packages" not in readme


ADAPTERS = """\
from stream_harness.adapters.protocol import ReferenceAdapter


class Old(ReferenceAdapter):
    name = "old-adapter"


class New(ReferenceAdapter):
    name = "new-adapter"
"""


def _rows(project: Path) -> list[str]:
    from stream_harness.reporting import load_report

    return [a.name for a in load_report(project / "conformance_report" / "report.jsonl").adapters]


def _two_adapter_report(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "mine.py").write_text(ADAPTERS, encoding="utf-8")
    assert main(["report", "--adapter", "mine:Old", "--adapter", "mine:New", *FAST]) == 0
    capsys.readouterr()
    assert _rows(project) == ["old-adapter", "new-adapter"]


def test_report_drops_the_rows_of_an_adapter_that_no_longer_exists(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _two_adapter_report(project, capsys)
    # old-adapter is gone: no built-in, entry point or configured adapter has the name
    assert main(["report", "--adapter", "mine:New", *FAST]) == 0
    err = capsys.readouterr().err
    assert _rows(project) == ["new-adapter"]
    assert (
        "dropped the rows of old-adapter from conformance_report/report.jsonl: "
        "no adapter of that name any more (--keep keeps them)"
    ) in err.replace(str(project) + "/", "")
    assert "kept the rows" not in err


def test_report_keep_keeps_them_and_says_which(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _two_adapter_report(project, capsys)
    assert main(["report", "--adapter", "mine:New", "--keep", *FAST]) == 0
    err = capsys.readouterr().err
    assert _rows(project) == ["old-adapter", "new-adapter"]
    assert "kept the rows of old-adapter from" in err
    assert "kept as asked (--keep), though no adapter has the name: old-adapter" in err
    assert "dropped" not in err


def test_a_configured_adapter_not_run_this_time_still_exists(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _two_adapter_report(project, capsys)
    table = TABLE + 'adapters = ["mine:Old", "mine:New"]\n'
    (project / "pyproject.toml").write_text(table, encoding="utf-8")
    assert main(["report", "--adapter", "mine:New", *FAST]) == 0
    err = capsys.readouterr().err
    assert _rows(project) == ["old-adapter", "new-adapter"], err
    assert "kept the rows of old-adapter" in err and "dropped" not in err


def test_a_built_in_adapter_not_installed_here_still_exists() -> None:
    from stream_harness.adapters.loading import is_known_name

    assert is_known_name("litellm") and is_known_name("reference")
    assert is_known_name("portkey[anthropic-messages->openai-completions]")
    assert not is_known_name("old-adapter")
    assert not is_known_name("nonsense[anthropic-messages->openai-completions]")
