"""``stream-harness report --shard K/N`` and ``stream-harness merge``: the shards of a run,
merged, are the report of the run.

The run: the reference and an adapter that breaks on some splits (new failures, known
failures from an expectation file, passes) over a few bundled cassettes of two protocols,
once whole and once as three shards.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from report_fixtures import v1_text
from stream_harness.cli.main import main
from stream_harness.contract.facts import bundled_cassettes
from stream_harness.reporting import load_report, write_report
from stream_harness.reporting.files import REPORT_FILES
from stream_harness.reporting.report import Result

README = Path(__file__).resolve().parents[2] / "README.md"

BROKEN = '''
from stream_harness import ReferenceAdapter


class Broken(ReferenceAdapter):
    """Drops a chunk's last byte when it ends an SSE event: breaks on some splits only."""

    name = "broken"

    def version(self):
        return "1"

    def run(self, protocol, chunks, *, status=200, headers=None):
        kept = [c[:-1] if len(chunks) > 1 and c.endswith(b"\\n\\n") else c for c in chunks]
        return super().run(protocol, kept, status=status, headers=headers)
'''

KNOWN = """
adapter: broken
known_failures:
  - check: split-invariance
    case: "*tool*"
    issue: https://example.com/issues/1
    reason: drops the last byte of a chunk
"""

CASSETTES = [
    "openai-completions/tool_call_single.yaml",
    "openai-completions/parallel_tool_calls_interleaved.yaml",
    "openai-completions/length_stop.yaml",
    "openai-completions/eof_without_done.yaml",
    "anthropic-messages/tool_call.yaml",
    "anthropic-messages/overloaded_midstream.yaml",
]
# The only things that may differ between a run and its merged shards: when they ran.
TIMES = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(Z| UTC)?")


def _run_args(project: Path) -> list[str]:
    args = ["--adapter", "reference", "--adapter", "broken_adapter:Broken", "--examples", "4"]
    args += ["--expectations", str(project / "expect"), "--jobs", "1", "--format", "plain"]
    for name in CASSETTES:
        args += ["--cassettes", str(project / "cassettes" / name)]
    return args


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project folder with the whole run in ``whole/`` and its three shards in ``s1..s3``."""
    root = tmp_path_factory.mktemp("sharded")
    (root / "broken_adapter.py").write_text(BROKEN)
    (root / "expect").mkdir()
    (root / "expect" / "broken.yaml").write_text(KNOWN)
    for name in CASSETTES:
        (root / "cassettes" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(bundled_cassettes() / name, root / "cassettes" / name)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        mp.setenv("STREAM_HARNESS_CONFIG", "")
        codes = [main(["report", *_run_args(root), "--out", "whole"])]
        for k in (1, 2, 3):
            codes.append(main(["report", *_run_args(root), "--out", f"s{k}", "--shard", f"{k}/3"]))
    assert codes[0] == 1, "the whole run should find new failures"
    return root


@pytest.fixture
def in_project(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(project)
    monkeypatch.setenv("STREAM_HARNESS_CONFIG", "")
    return project


def _normalised(path: Path) -> str:
    return TIMES.sub("<time>", path.read_text(encoding="utf-8"))


def test_three_shards_merged_are_the_whole_run_in_every_file(
    in_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = load_report(in_project / "whole" / "report.jsonl")
    outcomes = {r.outcome for r in whole.results}
    assert {"passed", "failed", "known_failure"} <= outcomes, "the run should exercise every triage"
    parts = [load_report(in_project / f"s{k}" / "report.jsonl") for k in (1, 2, 3)]
    assert all(p.results and p.shard is not None for p in parts)
    assert sum(len(p.results) for p in parts) == len(whole.results)
    capsys.readouterr()
    assert (
        main(["merge", "merged", "s1", "s2", "s3", "--expectations", "expect"]) == 1
    )  # as the whole run: new failures
    out = capsys.readouterr().out
    assert f"verdict: {whole.verdict}" in out
    for name in REPORT_FILES:
        assert _normalised(in_project / "merged" / name) == _normalised(
            in_project / "whole" / name
        ), name


def test_the_shards_merge_in_any_order_and_from_their_report_files(in_project: Path) -> None:
    assert (
        main(["merge", "merged2", "s3/report.jsonl", "s1", "s2", "--expectations", "expect"]) == 1
    )
    assert _normalised(in_project / "merged2" / "report.jsonl") == _normalised(
        in_project / "whole" / "report.jsonl"
    )


def test_known_failures_are_those_of_the_expectation_files_the_merge_reads(
    in_project: Path,
) -> None:
    """As the matrix does: the shards' failures are facts, their triage is the merge's."""
    assert main(["merge", "untriaged", "s1", "s2", "s3"]) == 1
    whole = load_report(in_project / "whole" / "report.jsonl")
    merged = load_report(in_project / "untriaged" / "report.jsonl")
    known = {r.key for r in whole.results if r.outcome == "known_failure"}
    assert known and all(r.outcome == "failed" for r in merged.results if r.key in known)
    assert [r.failures for r in merged.results] == [r.failures for r in whole.results]


def test_a_shard_says_it_is_one_in_every_form(in_project: Path) -> None:
    shard = load_report(in_project / "s2" / "report.jsonl").shard
    assert shard is not None and (shard.index, shard.count) == (2, 3)
    assert 0 < shard.pairs < shard.total_pairs == 2 * len(CASSETTES)
    for name in ("README.md", "report.html", "junit.xml"):
        assert f"shard 2/3: {shard.pairs} of the run" in (in_project / "s2" / name).read_text()
    assert '"shard"' not in (in_project / "whole" / "report.jsonl").read_text()


def _rewrite(project: Path, source: str, target: str, **update: object) -> None:
    report = load_report(project / source / "report.jsonl")
    write_report(report.model_copy(update=update), project / target)


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (["s1", "s2"], r"shard\(s\) 3/3 missing \(given: 1, 2\)"),
        (["s1", "s2", "s3", "s2"], r"s2/report.jsonl and s2/report.jsonl are both shard 2/3"),
        (
            ["s1", "s2", "s3", "whole"],
            r"whole/report.jsonl: not a shard's report \(written without --shard\)",
        ),
        (["s1", "s2", "nowhere"], r"nowhere: no such shard report folder or report.jsonl"),
    ],
)
def test_missing_duplicate_and_foreign_shards_are_refused(
    in_project: Path, capsys: pytest.CaptureFixture[str], inputs: list[str], message: str
) -> None:
    capsys.readouterr()
    assert main(["merge", "refused", *inputs]) == 2
    err = capsys.readouterr().err.strip()
    assert re.search(message, err), err
    assert len(err.splitlines()) == 1
    assert not (in_project / "refused").exists()


@pytest.mark.parametrize(
    ("update", "message"),
    [
        (
            {"examples": 5},
            r"s2x/report.jsonl: not a shard of the same run as s1/report.jsonl: examples 5 here, 4 there",
        ),
        ({"seed": 1}, r"seed 1 here, 0 there"),
        ({"single_cut_limit": 64}, r"single-cut limit 64 here, 256 there"),
        ({"tool_version": "9.9"}, r"tool version '9.9' here"),
    ],
)
def test_shards_of_different_settings_are_refused_naming_the_setting(
    in_project: Path, capsys: pytest.CaptureFixture[str], update: dict[str, object], message: str
) -> None:
    _rewrite(in_project, "s2", "s2x", **update)
    capsys.readouterr()
    assert main(["merge", "refused", "s1", "s2x", "s3"]) == 2
    err = capsys.readouterr().err.strip()
    assert re.search(message, err), err
    assert len(err.splitlines()) == 1


def test_shards_of_another_adapter_version_or_other_bytes_are_refused(
    in_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = load_report(in_project / "s3" / "report.jsonl")
    adapters = tuple(
        a.model_copy(update={"version": "2"}) if a.name == "broken" else a for a in report.adapters
    )
    _rewrite(in_project, "s3", "s3v", adapters=adapters)
    cases = (report.cases[0].model_copy(update={"sha256": "0" * 64}), *report.cases[1:])
    _rewrite(in_project, "s3", "s3c", cases=cases)
    checks = report.checks[:-1]
    _rewrite(
        in_project,
        "s3",
        "s3k",
        checks=checks,
        results=tuple(r for r in report.results if r.check != report.checks[-1].id),
    )
    capsys.readouterr()
    assert main(["merge", "refused", "s1", "s2", "s3v"]) == 2
    assert "adapter 'broken' has version '2' here and '1' there" in capsys.readouterr().err
    assert main(["merge", "refused", "s1", "s2", "s3c"]) == 2
    assert f"case {report.cases[0].id!r} has sha256" in capsys.readouterr().err
    assert main(["merge", "refused", "s1", "s2", "s3k"]) == 2
    assert (
        f"checks differ (1 check(s) only there, e.g. {report.checks[-1].id!r})"
        in capsys.readouterr().err
    )


def test_a_result_in_the_wrong_shard_or_a_different_n_is_refused(
    in_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = load_report(in_project / "s1" / "report.jsonl")
    two = load_report(in_project / "s2" / "report.jsonl")
    moved: Result = two.results[0]
    _rewrite(in_project, "s1", "s1m", results=(*one.results, moved))
    capsys.readouterr()
    assert main(["merge", "refused", "s1m", "s2", "s3"]) == 2
    err = capsys.readouterr().err
    assert (
        f"s1m/report.jsonl: the result for ({moved.adapter}, {moved.case}, {moved.check}) belongs to shard 2/3, not 1/3"
        in err
    )
    assert one.shard is not None
    _rewrite(in_project, "s1", "s1n", shard=one.shard.model_copy(update={"count": 4}))
    assert main(["merge", "refused", "s1", "s2", "s3", "s1n"]) == 2
    assert (
        "s1n/report.jsonl: shard 1/4, but s1/report.jsonl is shard 1/3: the shards of one run have the same N"
        in capsys.readouterr().err
    )


def test_merge_does_not_write_into_a_shard(
    in_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (in_project / "s1" / "report.jsonl").read_text()
    assert main(["merge", "s1", "s1", "s2", "s3"]) == 2
    assert "s1: is shard input s1/report.jsonl" in capsys.readouterr().err
    assert (in_project / "s1" / "report.jsonl").read_text() == before


def test_a_shard_run_does_not_keep_rows_from_the_report_in_its_folder(in_project: Path) -> None:
    """A shard holds its part only; rows kept from an earlier report would merge as its own."""
    shutil.copytree(in_project / "s1", in_project / "s1-again", dirs_exist_ok=True)
    args = [
        "report",
        "--adapter",
        "reference",
        "--cassettes",
        str(in_project / "cassettes" / CASSETTES[0]),
    ]
    args += [
        "--examples",
        "4",
        "--jobs",
        "1",
        "--format",
        "plain",
        "--out",
        "s1-again",
        "--shard",
        "1/1",
    ]
    assert main(args) == 0
    report = load_report(in_project / "s1-again" / "report.jsonl")
    assert [a.name for a in report.adapters] == ["reference"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--shard", "0/2"], r"^stream-harness: --shard '0/2': K must be from 1 to N \(2\)$"),
        (["--shard", "2"], r"^stream-harness: --shard '2': expected K/N"),
        (
            ["--allow-empty-shard"],
            r"^stream-harness: --allow-empty-shard has no effect without --shard$",
        ),
    ],
)
@pytest.mark.parametrize("command", ["check", "report"])
def test_bad_shard_flags_are_one_line_and_exit_2(
    in_project: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    flags: list[str],
    message: str,
) -> None:
    out = ["--out", "bad-out"] if command == "report" else []
    assert (
        main([command, "--cassettes", str(in_project / "cassettes" / CASSETTES[0]), *out, *flags])
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert re.search(message, err), err


def test_an_empty_shard_fails_unless_allowed_and_merges(
    in_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One pair split two ways: one shard has it, the other nothing."""
    cassette = in_project / "cassettes" / CASSETTES[0]
    base = [
        "report",
        "--adapter",
        "reference",
        "--cassettes",
        str(cassette),
        "--examples",
        "2",
        "--jobs",
        "1",
        "--format",
        "plain",
        "--check",
        "contract",
    ]
    codes = {k: main([*base, "--out", f"e{k}", "--shard", f"{k}/2"]) for k in (1, 2)}
    err = capsys.readouterr().err
    assert sorted(codes.values()) == [0, 2], codes
    empty = next(k for k, code in codes.items() if code == 2)
    assert (
        f"nothing to check in shard {empty}/2" in err
        and "the run's 1 (adapter, case) pair(s)" in err
    )
    assert main([*base, "--out", f"e{empty}", "--shard", f"{empty}/2", "--allow-empty-shard"]) == 0
    assert load_report(in_project / f"e{empty}" / "report.jsonl").results == ()
    assert main(["merge", "e-merged", "e1", "e2"]) == 0
    assert len(load_report(in_project / "e-merged" / "report.jsonl").results) == 1


def test_shards_with_nothing_in_them_merge_to_an_error(
    in_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = load_report(in_project / "s1" / "report.jsonl")
    assert report.shard is not None
    empty = report.shard.model_copy(update={"index": 1, "count": 1, "pairs": 0, "total_pairs": 0})
    _rewrite(in_project, "s1", "nothing", results=(), shard=empty)
    capsys.readouterr()
    assert main(["merge", "none-merged", "nothing"]) == 2
    assert "nothing was checked" in capsys.readouterr().err


# -- the README's GitHub Actions example -------------------------------------------------


def _workflow() -> dict[str, object]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Sharded runs") :]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None, "the sharding section has no yaml block"
    loaded = yaml.safe_load(block.group(1))
    assert isinstance(loaded, dict)
    return loaded


def test_the_readme_workflow_is_valid_yaml_that_shards_and_merges() -> None:
    workflow = _workflow()
    jobs = workflow["jobs"]
    assert isinstance(jobs, dict)
    shard_job, merge_job = jobs["shard"], jobs["merge"]
    shards = shard_job["strategy"]["matrix"]["shard"]
    n = len(shards)
    assert shards == list(range(1, n + 1)) and n > 1
    assert (
        shard_job["strategy"]["fail-fast"] is False
    )  # one shard's failures must not cancel the others
    runs = " ".join(step.get("run", "") for step in shard_job["steps"])
    assert (
        f"--shard ${{{{ matrix.shard }}}}/{n}" in runs and "--out shard-${{ matrix.shard }}" in runs
    )
    uploads = [
        s
        for s in shard_job["steps"]
        if str(s.get("uses", "")).startswith("actions/upload-artifact@")
    ]
    assert uploads and uploads[0]["with"]["path"] == "shard-${{ matrix.shard }}"
    assert (
        uploads[0].get("if") == "${{ !cancelled() }}"
    )  # a shard with failures still hands in its report
    assert merge_job["needs"] == "shard" and merge_job.get("if") == "${{ !cancelled() }}"
    downloads = [
        s
        for s in merge_job["steps"]
        if str(s.get("uses", "")).startswith("actions/download-artifact@")
    ]
    assert downloads
    merges = [s["run"] for s in merge_job["steps"] if "stream-harness merge" in s.get("run", "")]
    assert merges and "shard-*" in merges[0]


def test_a_shard_does_not_replace_a_whole_run_report(
    in_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`report`'s default folder is the committed conformance_report/: a shard written there
    would replace the whole matrix with a part of one run. Refused before anything runs."""
    shutil.copytree(in_project / "whole", in_project / "whole-copy", dirs_exist_ok=True)
    before = (in_project / "whole-copy" / "report.jsonl").read_text()
    capsys.readouterr()
    assert main(["report", *_run_args(in_project), "--out", "whole-copy", "--shard", "1/3"]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == (
        "stream-harness: whole-copy/report.jsonl holds a whole run's report, which a shard would "
        "replace with a part of it: write each shard to its own folder (--out shard-K) and "
        "`stream-harness merge` them"
    )
    assert "checked" not in captured.out
    assert (in_project / "whole-copy" / "report.jsonl").read_text() == before


def test_a_version_1_shard_merges_with_version_2_ones_saying_it_was_converted(
    in_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Shards written before report format version 2 still merge (issue 36).
    (in_project / "s2v1").mkdir(exist_ok=True)
    (in_project / "s2v1" / "report.jsonl").write_text(
        v1_text(load_report(in_project / "s2" / "report.jsonl")), encoding="utf-8"
    )
    capsys.readouterr()
    assert main(["merge", "merged_v1", "s1", "s2v1", "s3", "--expectations", "expect"]) == 1
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if "converted on read" in line] == [
        f"stream-harness: {Path('s2v1') / 'report.jsonl'}: report format version 1, converted on read "
        "(what is written from it is version 2)"
    ]
    assert _normalised(in_project / "merged_v1" / "report.jsonl") == _normalised(
        in_project / "whole" / "report.jsonl"
    )
