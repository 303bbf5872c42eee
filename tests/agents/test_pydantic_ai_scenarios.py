"""A real framework row on bundled agent scenarios: pydantic-ai (in the ``[test]`` extra),
checked end to end through ``stream-harness agents`` with the bundled known failures, as
CI's gate runs it. Skips cleanly where pydantic_ai is not importable."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_harness.cli.main import main
from stream_harness.contract.facts import bundled_cassettes
from stream_harness.reporting.jsonl import load_report

pytest.importorskip("pydantic_ai", reason="pydantic-ai-slim is in the [test] extra only")

SCENARIOS = bundled_cassettes() / "agent-scenarios"
# A clean run, a multi-turn run, and a fault (a retried 429) for the framework to survive.
CHOSEN = ("weather_tool_call", "three_tool_turns", "http_429_retry_after")


def test_pydantic_ai_on_bundled_scenarios_is_judged_and_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["agents", "--agent", "pydantic-ai-agent", "--protocol", "openai-completions"]
    for name in CHOSEN:
        argv += ["--scenarios", str(SCENARIOS / f"{name}.yaml")]
    code = main([*argv, "--out", str(tmp_path)])
    out = capsys.readouterr().out
    # The verdict follows the bundled expectations: whatever pydantic-ai gets wrong here is
    # listed there (exit 0), and a new failure or a fixed one exits 1.
    assert code == 0, out
    assert out.splitlines()[-1].startswith("OK: 3 agent runs")
    report = load_report(tmp_path / "report.jsonl")
    rows = report.agent_results
    assert {r.scenario for r in rows} == set(CHOSEN)
    assert {r.agent for r in rows} == {"pydantic-ai-agent"} and rows[0].agent_version
    # The framework really ran the loop: the tool-call checks were judged, not skipped.
    assert sum(r.outcome in ("passed", "known_failure") for r in rows) >= 3 * 8
