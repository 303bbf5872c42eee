"""``stream-harness agents``: exit codes agree with the verdict, bad input is one line."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from agent_sources import lazy_agent_source
from stream_harness.cli.main import main
from stream_harness.contract.facts import bundled_cassettes
from stream_harness.reporting.jsonl import load_report

ONE = str(bundled_cassettes() / "agent-scenarios" / "weather_tool_call.yaml")


def test_the_reference_passes_and_writes_its_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["agents", "--agent", "reference", "--scenarios", ONE, "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and out.splitlines()[-1].startswith("OK: 5 agent runs")
    report = load_report(tmp_path / "report.jsonl")
    # 13 checks in 5 protocols, less A4, A10 and A13 (no thinking, no retry hint, no
    # call that was not JSON): no row.
    assert len(report.agent_results) == 50
    assert {r.outcome for r in report.agent_results} == {"passed"}
    assert not report.did_fail and report.agent_results[0].conventions["time_scale"] == 0.01
    assert "agent:reference" in (tmp_path / "junit.xml").read_text()
    assert "Agent rows" in (tmp_path / "report.html").read_text()
    assert "Agent rows" in (tmp_path / "README.md").read_text()


def test_a_failing_agent_exits_1_with_a_reproduce_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "lazy_agent.py").write_text(lazy_agent_source())
    code = main(
        ["agents", "--agent", "lazy_agent:Lazy", "--project", str(tmp_path), "--scenarios", ONE]
    )
    out = capsys.readouterr().out
    assert code == 1 and out.splitlines()[-1].startswith("FAILED:")
    assert "reproduce: stream-harness agents --agent lazy_agent:Lazy" in out
    advice = "advice: End every run with the final text or an error"
    assert f"    {advice}" in out  # under the failure, above its reproduce line
    expect = tmp_path / "expect.yaml"
    expect.write_text(
        "lazy:\n  - {scenario: weather_tool_call, check: A12, reason: it never asks the model}\n"
    )
    code = main(
        [
            "agents",
            "--agent",
            "lazy_agent:Lazy",
            "--project",
            str(tmp_path),
            "--scenarios",
            ONE,
            "--expect",
            str(expect),
        ]
    )
    assert code == 0 and "1 known failure" in capsys.readouterr().out


def test_a_failure_s_advice_goes_into_every_report_format(tmp_path: Path) -> None:
    (tmp_path / "lazy_agent.py").write_text(lazy_agent_source())
    out = tmp_path / "out"
    argv = ["agents", "--agent", "lazy_agent:Lazy", "--project", str(tmp_path), "--scenarios", ONE]
    assert main([*argv, "--check", "A12", "--out", str(out)]) == 1
    advice = "End every run with the final text or an error"
    rows = load_report(out / "report.jsonl").agent_results
    assert {r.advice.startswith(advice) for r in rows if r.outcome == "failed"} == {True}
    for name in ("README.md", "report.html", "junit.xml"):
        assert f"advice: {advice}" in (out / name).read_text(), name


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--agent", "nowhere:Agent"], "cannot import nowhere"),
        (["--agent", "reference", "--scenarios", "/no/such/dir"], "no such file"),
        (["--agent", "reference", "--check", "A99"], "unknown check"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["agents", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


def test_an_empty_folder_is_never_green(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agents", "--agent", "reference", "--scenarios", str(tmp_path)]) == 2
    assert "no agent scenario" in capsys.readouterr().err


def test_a_bad_scenario_names_the_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: agent\nresponses:\n  - fault: {status: 200}\n")
    assert main(["agents", "--agent", "reference", "--scenarios", str(bad)]) == 2
    assert "bad.yaml: responses.0.fault.status" in capsys.readouterr().err


def test_serve_answers_an_agent_by_hand_and_prints_what_it_saw() -> None:
    command = [
        sys.executable,
        "-m",
        "stream_harness.cli.main",
        "agents",
        "--serve",
        ONE,
        "--protocol",
        "openai-completions",
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        url = first.split(" on ")[1].split(" ")[0]
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(
            urllib.request.Request(url + "/v1/chat/completions", data=b"{}"), timeout=10
        ) as reply:
            assert b'"id":"call_w1"' in reply.read()
        ledger = urllib.request.Request(
            url + "/_ledger", data=b'{"tool": "get_weather", "arguments": {"city": "Paris"}}'
        )
        with opener.open(ledger, timeout=10) as reply:
            assert json.loads(reply.read())["result"]["sky"] == "cloudy"
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=10)
    record = json.loads(out)
    assert proc.returncode == 0
    assert [e["arguments"] for e in record["executions"]] == [{"city": "Paris"}]
    assert [r["path"] for r in record["requests"]] == ["/v1/chat/completions"]


def test_out_merges_agent_rows_beside_what_the_report_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "lazy_agent.py").write_text(lazy_agent_source())
    out = tmp_path / "report"
    assert (
        main(
            [
                "agents",
                "--agent",
                "reference",
                "--scenarios",
                ONE,
                "--protocol",
                "anthropic-messages",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    lazy = [
        "agents",
        "--agent",
        "lazy_agent:Lazy",
        "--project",
        str(tmp_path),
        "--scenarios",
        ONE,
        "--out",
        str(out),
    ]
    assert main(lazy) == 1
    capsys.readouterr()
    report = load_report(out / "report.jsonl")
    assert {r.agent for r in report.agent_results} == {"reference", "lazy"}
    assert report.did_fail and "FAILED" in report.verdict
    assert "1 agent run(s)" not in report.scope and "2 agent run(s) of 2 agent(s)" in report.scope
    assert main(lazy) == 1  # a re-run replaces its own rows, keeps the others
    again = load_report(out / "report.jsonl")
    assert len(again.agent_results) == len(report.agent_results)


TOY = Path(__file__).parents[1] / "agents" / "stdio_toy_agent.py"


def test_jobs_give_the_verdicts_of_one_job_in_the_same_order_one_process_per_job(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = str(bundled_cassettes() / "agent-scenarios")
    toy = "cmd:" + " ".join([sys.executable, str(TOY), "--pids", str(tmp_path / "pids")])
    verdicts = {}
    for jobs in ("1", "3"):
        out = tmp_path / f"jobs{jobs}"
        code = main(
            ["agents", "--agent", toy, "--scenarios", folder, "--protocol", "anthropic-messages",
             "--jobs", jobs, "--out", str(out)]
        )  # fmt: skip
        assert code == 0, capsys.readouterr()
        rows = load_report(out / "report.jsonl").agent_results
        verdicts[jobs] = [(r.scenario, r.check, r.outcome) for r in rows]
    assert verdicts["1"] == verdicts["3"] and len(verdicts["1"]) > 100
    # One process for the single job, then three for the three jobs (their handshakes).
    assert len((tmp_path / "pids").read_text().split()) == 1 + 3


def test_jobs_below_one_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agents", "--agent", "reference", "--jobs", "0"]) == 2
    assert capsys.readouterr().err.strip() == "stream-harness: --jobs must be >= 1, got 0"


def test_a_bundled_scenario_is_named_by_its_name_where_its_path_is_not_under_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from stream_harness.agents.scenario.model import load_agent_scenario, scenario_argument

    bundled = bundled_cassettes() / "agent-scenarios" / "no_terminal_event.yaml"
    monkeypatch.chdir(tmp_path)  # a user's project: the bundled files are elsewhere
    assert scenario_argument(bundled) == "no_terminal_event"
    mine = tmp_path / "my-scenarios" / "x.yaml"
    assert scenario_argument(mine) == "my-scenarios/x.yaml"  # theirs: relative, as typed
    monkeypatch.chdir(bundled.parent.parent.parent)  # a checkout: a relative path works
    assert scenario_argument(bundled) == "cassettes/agent-scenarios/no_terminal_event.yaml"
    monkeypatch.chdir(tmp_path)
    # The name is accepted back: the reproduce command of a failure runs from anywhere.
    assert main(["agents", "--agent", "reference", "--scenarios", "no_terminal_event"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("OK: 5 agent runs")
    assert load_agent_scenario(bundled).name == "no_terminal_event"
    assert main(["agents", "--agent", "reference", "--scenarios", "no_such_scenario"]) == 2
    assert capsys.readouterr().err.strip() == (
        "stream-harness: --scenarios: no_such_scenario: no such file or folder, "
        "nor a bundled agent scenario"
    )
