"""``stream-harness matrix`` on the agent frameworks' groups, with a fake runner.

An agent group's environment is built as any group's, then ``stream-harness agents``
runs in it; its rows join the stream rows of the same report, after the stream groups,
and count in the verdict. Nothing is installed: the runner writes the reports.
"""

from __future__ import annotations

import argparse
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.matrix.test_matrix import PINS, FakeRunner, _report

from stream_harness.matrix.groups import configure_parser, matrix_command
from stream_harness.reporting import Report, load_report, write_report
from stream_harness.reporting.report import AgentRow

T0 = datetime(2026, 1, 1, tzinfo=UTC)
AGENT_PINS = PINS + '\n[groups.agent-fw]\nrequirements = ["fw==1.0"]\nagents = ["fw-agent"]\n'


def _agent_report(agent: str, outcome: str) -> Report:
    """What `stream-harness agents --out` writes into an empty folder."""
    row = AgentRow(
        agent=agent, agent_version="1.0", scenario="weather_tool_call",
        protocol="openai-completions", check="A1", title="t", outcome=outcome,  # type: ignore[arg-type]
    )  # fmt: skip
    return Report(
        tool_version="0.1.0", started=T0, finished=T0, seed=0, examples=0, checks=(),
        adapters=(), cases=(), environment={"python": "3.11.7"}, agent_results=(row,),
    )  # fmt: skip


class AgentRunner(FakeRunner):
    """Also answers ``agents`` commands with the agent's canned report."""

    def __init__(self, reports: dict[str, Report], agents: dict[str, Report]) -> None:
        super().__init__(reports)
        self.agents = agents

    def __call__(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        argv = list(argv)
        if len(argv) > 1 and argv[1] == "agents":
            self.calls.append(argv)
            out = Path(argv[argv.index("--out") + 1])
            name = argv[argv.index("--agent") + 1]
            # An exploration's canned report, when given, under `<agent>~explore`.
            report = (
                self.agents.get(f"{name}~explore" if "--explore" in argv else name)
                or self.agents[name]
            )
            write_report(report, out)
            return subprocess.CompletedProcess(argv, 1 if report.did_fail else 0, "", "")
        return super().__call__(argv)


def _args(pins: Path, tmp_path: Path, *extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    configure_parser(parser)
    return parser.parse_args(
        ["--pins", str(pins), "--examples", "5", "--cache-dir", str(tmp_path / "cache"),
         "--out", str(tmp_path / "report"), *extra]
    )  # fmt: skip


@pytest.fixture
def pins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr("stream_harness.matrix.groups.find_uv", lambda: None)
    monkeypatch.setenv("STREAM_HARNESS_CONFIG", "")
    path = tmp_path / "matrix.toml"
    path.write_text(AGENT_PINS)
    return path


def test_agent_groups_run_after_the_stream_groups_into_the_same_report(
    tmp_path: Path, pins: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner = AgentRunner(
        {"one": _report("one", "1.0", "passed"), "two": _report("two", "2.0", "passed")},
        {"fw-agent": _agent_report("fw-agent", "failed")},
    )
    assert matrix_command(_args(pins, tmp_path), runner=runner) == 1  # the agent row failed
    commands = [c for c in runner.calls if "report" in c or "agents" in c]
    assert [c[1] for c in commands] == ["report", "report", "agents"]
    agents = commands[-1]
    assert agents[0].endswith("/bin/stream-harness") and "agent-fw-" in agents[0]
    assert agents[agents.index("--agent") + 1] == "fw-agent"
    # Its environment is built like the others: its pins, with this harness.
    assert any("fw==1.0" in c for c in runner.calls if "install" in c)
    report = load_report(tmp_path / "report" / "report.jsonl")
    assert [a.name for a in report.adapters] == ["one", "two"]
    assert [(a.agent, a.outcome) for a in report.agent_results] == [("fw-agent", "failed")]
    assert "ran in" in report.environment["group agent-fw"]
    assert "FAILED: 1 new failure" in report.verdict
    assert "fw-agent" in (tmp_path / "report" / "junit.xml").read_text()
    assert "timings.json" in {p.name for p in (tmp_path / "cache").iterdir()}
    assert "agent-fw" in (tmp_path / "cache" / "timings.json").read_text()


def test_one_agent_group_alone_keeps_the_stream_rows_there(
    tmp_path: Path, pins: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stream = {"one": _report("one", "1.0", "failed"), "two": _report("two", "2.0", "passed")}
    runner = AgentRunner(stream, {"fw-agent": _agent_report("fw-agent", "failed")})
    assert matrix_command(_args(pins, tmp_path), runner=runner) == 1
    runner.agents["fw-agent"] = _agent_report("fw-agent", "passed")
    assert matrix_command(_args(pins, tmp_path, "--group", "agent-fw"), runner=runner) == 1
    report = load_report(tmp_path / "report" / "report.jsonl")
    # The stream rows (one's still failing) and header stay; the agent's row is the new one.
    assert [(r.adapter, r.outcome) for r in report.results] == [
        ("one", "failed"),
        ("two", "passed"),
    ]
    assert report.examples == 5
    assert [(a.agent, a.outcome) for a in report.agent_results] == [("fw-agent", "passed")]
    assert "kept the stream rows" in capsys.readouterr().err
    # A stream group re-run keeps the agent rows too.
    runner.reports["one"] = _report("one", "1.0", "passed")
    assert matrix_command(_args(pins, tmp_path, "--group", "one"), runner=runner) == 0
    report = load_report(tmp_path / "report" / "report.jsonl")
    assert [(a.agent, a.outcome) for a in report.agent_results] == [("fw-agent", "passed")]
    assert len(report.results) == 2


def test_an_agent_group_that_does_not_run_is_an_error_verdict(
    tmp_path: Path, pins: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner = AgentRunner(
        {"one": _report("one", "1.0", "passed"), "two": _report("two", "2.0", "passed")}, {}
    )
    runner.fail = {"fw==1.0"}
    assert matrix_command(_args(pins, tmp_path), runner=runner) == 2
    out = capsys.readouterr().out
    assert "group(s) agent-fw did not run" in out.splitlines()[-1]


def test_the_shard_passes_to_the_agent_runs(tmp_path: Path, pins: Path) -> None:
    runner = AgentRunner(
        {"one": _report("one", "1.0", "passed"), "two": _report("two", "2.0", "passed")},
        {"fw-agent": _agent_report("fw-agent", "passed")},
    )
    matrix_command(_args(pins, tmp_path, "--group", "agent-fw", "--shard", "2/3"), runner=runner)
    agents = next(c for c in runner.calls if len(c) > 1 and c[1] == "agents")
    assert agents[agents.index("--shard") + 1] == "2/3" and "--allow-empty-shard" in agents
