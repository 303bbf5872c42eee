"""The expectation file format as README.md ("Known failures") documents it: the example
there loads and means what it says, and every error it lists is one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

from stream_harness.conformance.expectations import (
    Expectations,
    ExpectationsError,
    KnownFailure,
    expectations_dir,
    load_expectations,
)
from stream_harness.conformance.suite import expectations_for_adapter


def _readme_example() -> str:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("**Known failures.**") : readme.index("**In CI logs.**")]
    found = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert found, "the Known failures section has no yaml example"
    return found.group(1)


def test_the_readme_example_loads_with_the_cause_merged_in(tmp_path: Path) -> None:
    path = tmp_path / "my-adapter.yaml"
    path.write_text(_readme_example(), encoding="utf-8")
    known = load_expectations(path, "my-adapter").known
    assert [(k.check, k.case) for k in known] == [
        ("split-invariance", "openai-completions/parallel_tool_calls.yaml#0"),
        ("truncation", "openai-completions/*"),
    ]
    assert known[1].issue == "https://github.com/me/my-client/issues/12"
    assert known[1].reason == "a body cut mid-stream ends in done"
    assert not known[0].is_pattern and known[1].is_pattern


def test_the_first_matching_entry_is_the_one_reported(tmp_path: Path) -> None:
    path = tmp_path / "my-adapter.yaml"
    path.write_text(_readme_example(), encoding="utf-8")
    expectations = load_expectations(path, "my-adapter")
    hit = expectations.lookup("truncation", "openai-completions/x.yaml#0")
    assert hit is not None and hit.case == "openai-completions/*"
    assert (
        expectations.lookup("Truncation", "openai-completions/x.yaml#0") is None
    )  # case-sensitive


def test_the_indexed_lookup_answers_as_a_scan_in_file_order() -> None:
    # lookup indexes entries by check and splits listed cases from patterns; the first
    # entry of the file that matches must still win, whichever kind comes first.
    known = (
        KnownFailure("truncation", "p/*", "pattern-first"),
        KnownFailure("truncation", "p/a#0", "listed-after-pattern"),
        KnownFailure("truncation", "q/a#0", "listed-first"),
        KnownFailure("truncation", "q/*", "pattern-after-listed"),
        KnownFailure("trunc*", "r/?#0", "check-pattern"),
        KnownFailure("truncation", "r/b#0", "listed-after-check-pattern"),
        KnownFailure("stop-reason", "q/a#0", "other-check"),
    )
    expectations = Expectations("a", known)
    for check in ("truncation", "stop-reason", "split-invariance"):
        for case in ("p/a#0", "p/b#1", "q/a#0", "q/b#0", "r/b#0", "r/bc#0", "s/a#0"):
            scan = next((k for k in known if k.matches(check, case)), None)
            assert expectations.lookup(check, case) is scan, (check, case)
    assert expectations.lookup("truncation", "q/a#0") is known[2]
    assert expectations.lookup("truncation", "r/b#0") is known[4]


def test_causes_are_never_read_and_known_failures_may_be_absent(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("causes:\n  unused: [1, 2]\n", encoding="utf-8")
    assert load_expectations(path, "mine").known == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("known_failures: [\n", "not valid YAML"),
        ("- a list\n", "expected a mapping"),
        ("known_failures: {check: x}\n", "known_failures must be a list"),
        (
            "known_failures:\n  - {check: contract, case: '*'}\n",
            "needs string fields check, case and issue",
        ),
        (
            "known_failures:\n  - {check: 7, case: '*', issue: x}\n",
            "needs string fields check, case and issue",
        ),
        ("adapter: mine\nknown_failure: []\n", "unknown key 'known_failure'"),
        ("known_failures:\n  - {check: c, case: '*', issue: x, why: y}\n", "unknown field 'why'"),
        ("adapter: theirs\n", "names adapter 'theirs'"),
    ],
)
def test_each_documented_error_names_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ExpectationsError, match=re.escape(message)) as info:
        load_expectations(path, "mine")
    assert str(info.value).startswith(f"{path}: ")


def test_a_file_of_yours_replaces_the_bundled_one_for_its_adapter(tmp_path: Path) -> None:
    bundled = load_expectations(expectations_dir() / "openai-sdk.yaml", "openai-sdk")
    assert bundled.known, "the bundled openai-sdk file lists known failures"
    (tmp_path / "openai-sdk.yaml").write_text("adapter: openai-sdk\nknown_failures: []\n")
    assert expectations_for_adapter("openai-sdk", tmp_path).known == ()
    assert expectations_for_adapter("openai-sdk", tmp_path / "elsewhere").known == bundled.known
