"""``stream-harness matrix --shard K/N``: every group runs shard K, and the matrix shards
merge into the matrix, with a fake runner (nothing installed).

The fake runner plays each group's ``stream-harness report``: from a whole report of the
group's adapter, written by hand, it keeps the results of the pairs the shard owns and
records the shard, as the real command does (tests/cli/test_shard_merge.py checks that
part against real runs).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from stream_harness.cli.main import main
from stream_harness.conformance.shard import shard_of
from stream_harness.matrix.groups import Env, Group, SuiteOptions, configure_parser, matrix_command
from stream_harness.reporting import Report, load_report, write_report
from stream_harness.reporting.report import (
    AdapterInfo,
    CaseInfo,
    CheckInfo,
    FailureInfo,
    Result,
    ShardInfo,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
CHECK = CheckInfo(id="expected", title="final message", enforces="C6", level="message")
CASES = tuple(
    CaseInfo(
        id=f"a/case{i}.yaml#0", cassette=f"a/case{i}.yaml", interaction=0,
        protocol="anthropic-messages", status=200, sha256=f"{i:02d}" * 32,
    )
    for i in range(8)
)  # fmt: skip
PINS = """
[groups.one]
requirements = ["libone==1.0"]
adapters = ["one"]

[groups.two]
requirements = ["libtwo==2.0"]
adapters = ["two"]
"""


def _whole(adapter: str) -> Report:
    """The group's whole run: case i passes when i is even, else it fails (as the engine
    writes a failure: with what it found, which the matrix's reclassification reads)."""
    return Report(
        tool_version="0.2.0", started=T0, finished=T0, seed=0, examples=5, checks=(CHECK,),
        adapters=(AdapterInfo(name=adapter, level="message", version="1.0", protocols=("anthropic-messages",)),),
        cases=CASES, environment={"python": "3.11.7"},
        results=tuple(
            Result(adapter=adapter, case=c.id, check="expected", outcome="failed", failures=(FailureInfo(message="differs"),))
            if i % 2 else Result(adapter=adapter, case=c.id, check="expected", outcome="passed")
            for i, c in enumerate(CASES)
        ),
    )  # fmt: skip


class ShardingRunner:
    """Records commands; a ``report`` command writes its group's report, or its shard's."""

    def __init__(self, owner: Callable[[str, str, int], int] = shard_of) -> None:
        self.owner = owner
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        argv = list(argv)
        self.calls.append(argv)
        if len(argv) > 1 and argv[1] == "report":
            out = Path(argv[argv.index("--out") + 1])
            report = _whole(argv[argv.index("--adapter") + 1])
            if "--shard" in argv:
                k, n = (int(x) for x in argv[argv.index("--shard") + 1].split("/"))
                rows = tuple(r for r in report.results if self.owner(r.adapter, r.case, n) == k)
                total = len(report.results)
                shard = ShardInfo(index=k, count=n, pairs=len(rows), total_pairs=total)
                report = report.model_copy(update={"results": rows, "shard": shard})
            write_report(report, out)
            return subprocess.CompletedProcess(argv, 1 if report.did_fail else 0, "", "")
        if "venv" in argv:
            Path(argv[-1]).mkdir(parents=True, exist_ok=True)
        return subprocess.CompletedProcess(argv, 0, "", "")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STREAM_HARNESS_CONFIG", "")
    monkeypatch.setattr("stream_harness.matrix.groups.find_uv", lambda: None)
    (tmp_path / "matrix.toml").write_text(PINS)
    return tmp_path


def _matrix(runner: ShardingRunner, *flags: str) -> int:
    parser = argparse.ArgumentParser()
    configure_parser(parser)
    args = parser.parse_args(
        [
            "--pins",
            "matrix.toml",
            "--examples",
            "5",
            "--cache-dir",
            "cache",
            "--format",
            "plain",
            *flags,
        ]
    )
    return matrix_command(args, runner=runner)


def test_the_shard_reaches_every_group_with_leave_to_be_empty(tmp_path: Path) -> None:
    env = Env("g", tmp_path / "env", cached=True, seconds=0, installer="uv")
    argv = SuiteOptions(shard="2/3").argv(env, Group("g", (), ("one",)), tmp_path / "out")
    assert argv[argv.index("--shard") + 1] == "2/3" and "--allow-empty-shard" in argv
    assert "--shard" not in SuiteOptions().argv(env, Group("g", (), ("one",)), tmp_path / "out")


@pytest.mark.parametrize("value", ["0/2", "2", "3/2"])
def test_a_bad_shard_is_one_line_and_exit_2_before_anything_runs(
    project: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    runner = ShardingRunner()
    assert _matrix(runner, "--shard", value, "--out", "out") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"stream-harness: --shard {value!r}") and len(err.splitlines()) == 1
    assert runner.calls == []


def test_matrix_shards_merge_into_the_matrix(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner = ShardingRunner()
    assert _matrix(runner, "--out", "whole") == 1
    codes = [_matrix(runner, "--shard", f"{k}/3", "--out", f"shard-{k}") for k in (1, 2, 3)]
    assert set(codes) <= {0, 1}
    shards = [load_report(project / f"shard-{k}" / "report.jsonl") for k in (1, 2, 3)]
    for k, shard in enumerate(shards, start=1):
        assert shard.shard is not None and (shard.shard.index, shard.shard.count) == (k, 3)
        # Both groups' pairs: the matrix shard adds up its groups'.
        assert shard.shard.total_pairs == 2 * len(CASES) and shard.shard.pairs == len(shard.results)
    capsys.readouterr()
    assert main(["merge", "merged", "shard-1", "shard-2", "shard-3"]) == 1
    whole = load_report(project / "whole" / "report.jsonl")
    merged = load_report(project / "merged" / "report.jsonl")
    assert (
        merged.results == whole.results
        and merged.adapters == whole.adapters
        and merged.shard is None
    )
    # Each group's line comes from the shards (identical here: the fake runs take no time;
    # real shards' timings differ and are joined with " | ").
    assert merged.environment["group one"].startswith("libone==1.0; env cached; ran in")


def test_a_matrix_shard_keeps_no_rows_and_leaves_the_group_timings_alone(project: Path) -> None:
    runner = ShardingRunner()
    assert _matrix(runner, "--shard", "1/2", "--out", "out") in (0, 1)
    assert [a.name for a in load_report(project / "out" / "report.jsonl").adapters] == [
        "one",
        "two",
    ]
    timings = {"one": 999.0, "two": 999.0}
    (project / "cache" / "timings.json").write_text(json.dumps(timings))
    assert _matrix(runner, "--group", "two", "--shard", "1/2", "--out", "out") in (0, 1)
    report = load_report(project / "out" / "report.jsonl")
    assert [a.name for a in report.adapters] == ["two"]  # one's rows not kept into a shard
    assert json.loads((project / "cache" / "timings.json").read_text()) == timings


def test_a_matrix_shard_does_not_replace_a_whole_report(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default folder is the committed conformance_report/: a shard goes elsewhere."""
    runner = ShardingRunner()
    assert _matrix(runner, "--out", "out") == 1
    before = (project / "out" / "report.jsonl").read_text()
    calls = len(runner.calls)
    assert _matrix(runner, "--shard", "1/2", "--out", "out") == 2
    assert "out/report.jsonl holds a whole run's report" in capsys.readouterr().err
    assert (project / "out" / "report.jsonl").read_text() == before and len(runner.calls) == calls


def test_an_empty_matrix_shard_is_an_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Groups may be empty in a shard; a matrix shard with nothing at all may not pass."""
    nowhere = ShardingRunner(owner=lambda adapter, case, n: 0)
    assert _matrix(nowhere, "--shard", "1/2", "--out", "out") == 2
    assert (
        "nothing to check in shard 1/2: none of the matrix's 16 (adapter, case) pairs"
        in capsys.readouterr().err
    )
