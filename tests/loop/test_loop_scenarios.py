"""The bundled scenarios under cassettes/scenarios/ pass, cover every behaviour the loop has,
and the checker that says so can fail."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tests.conftest import REPO_ROOT

from stream_harness.cli.loop import add_loop_parser, loop_command
from stream_harness.loop.events import AGENT_EVENT_TYPES, agent_event_to_json
from stream_harness.loop.messages import ToolResult
from stream_harness.loop.scenario import (
    ScenarioRun,
    check_scenario,
    find_scenarios,
    load_scenario,
    run_scenario,
)

SCENARIOS = REPO_ROOT / "cassettes" / "scenarios"
FILES = find_scenarios(SCENARIOS)


def test_there_are_at_least_15_scenarios() -> None:
    assert len(FILES) >= 15


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_scenario_meets_its_expectations(path: Path) -> None:
    run = run_scenario(load_scenario(path))
    assert check_scenario(run) == []
    # Every scenario states something beyond "it ran": at least three expectations.
    expect = yaml.safe_load(path.read_text(encoding="utf-8"))["expect"]
    assert len(expect) >= 3, f"{path.name} expects too little: {sorted(expect)}"


def test_check_command_passes_on_the_bundled_folder(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser()
    add_loop_parser(parser.add_subparsers())
    args = parser.parse_args(["loop", "--check", str(SCENARIOS)])
    assert loop_command(args) == 0
    out = capsys.readouterr().out
    assert f"OK: {len(FILES)} passed, 0 failed, 0 not loadable" in out


def _all_runs() -> list[ScenarioRun]:
    return [run_scenario(load_scenario(p)) for p in FILES]


def test_scenarios_cover_every_behaviour() -> None:
    """The issue asks the scenarios to cover every behaviour; this pins that they do."""
    runs = _all_runs()
    events = [e for run in runs for e in run.events]
    assert {e.type for e in events} == {
        cls.model_fields["type"].default for cls in AGENT_EVENT_TYPES
    }
    kinds = {m.kind for run in runs for m in run.history if isinstance(m, ToolResult)}
    assert kinds >= {
        "ok",
        "error",
        "invalid_arguments",
        "unknown_tool",
        "doom_loop_denied",
        "truncated",
        "cancelled",
        "not_executed",
        "permission_denied",
        "permission_rejected",
    }
    ends = {e.reason for e in events if e.type == "agent_end"}
    assert ends == {"completed", "error", "aborted", "compact", "blocked", "max_turns"}
    signals = {e.signal for e in events if e.type == "turn_end"}
    assert signals == {"continue", "stop", "compact"}
    retries = [e for e in events if e.type == "retry"]
    assert {e.hinted for e in retries} == {True, False}
    assert {e.error_kind for e in retries} >= {"rate_limit", "overloaded", "transient"}
    assert {e.reason for e in events if e.type == "compaction"} == {
        "threshold",
        "pre_request",
        "overflow",
    }
    # Seed 000's retry rule: network failures and messages saying timeout are retried, and a
    # response that just ends (no terminal event) is one of them.
    retried = {e.error_message for e in retries}
    assert {"[Errno 111] Connection refused", "upstream request timeout"} <= retried
    assert "stream ended without a terminal event" in retried
    assert max(e.delay for e in retries) == 60.0
    assert {e.decision for e in events if e.type == "doom_loop"} >= {"allow", "deny"}
    assert {(e.action, e.decision) for e in events if e.type == "permission"} >= {
        ("ask", "deny"),
        ("ask", "always"),
        ("deny", "deny"),
    }
    # Seed 003: some batch mixes calls of one tool that were judged differently by input.
    starts = [e for e in events if e.type == "tool_execution_start"]
    by_tool: dict[str, set[bool]] = {}
    for start in starts:
        by_tool.setdefault(start.name, set()).add(start.safe)
    assert any(flags == {True, False} for flags in by_tool.values())
    outcomes = {e.outcome for e in events if e.type == "tool_execution_end"}
    assert outcomes == {"ok", "error", "cancelled"}
    protocols = {load_scenario(p).responses[0].protocol for p in FILES} | {
        r.protocol for p in FILES for r in load_scenario(p).responses
    }
    assert protocols >= {
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "google-generative-ai",
    }
    configs = [load_scenario(p).config for p in FILES]
    assert any(c.eager_tools for c in configs) and any(c.fallback_model for c in configs)


def test_runs_are_deterministic() -> None:
    path = SCENARIOS / "parallel_completion_order.yaml"
    first = [agent_event_to_json(e) for e in run_scenario(load_scenario(path)).events]
    second = [agent_event_to_json(e) for e in run_scenario(load_scenario(path)).events]
    assert first == second


def test_a_wrong_expectation_is_reported(tmp_path: Path) -> None:
    source = SCENARIOS / "retry_backoff_5xx.yaml"
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    data["expect"]["retry_delays"] = [2.0, 4.0, 16.0]
    data["expect"]["end_time"] = 99.0
    data["expect"]["history"] = ["user"]
    data["responses"][1]["cassette"] = str(
        REPO_ROOT / "cassettes" / "openai-completions" / "text_plain.yaml"
    )
    target = tmp_path / "wrong.yaml"
    target.write_text(yaml.safe_dump(data), encoding="utf-8")
    problems = check_scenario(run_scenario(load_scenario(target)))
    assert problems == [
        "expect.retry_delays: expected [2.0, 4.0, 16.0], got [2.0, 4.0, 8.0]",
        "expect.end_time: expected 99.0, got 14.0",
        "expect.history: expected ['user'], got ['user', 'assistant:stop']",
    ]


def test_an_invariant_violation_fails_the_scenario(tmp_path: Path) -> None:
    # An inline stream that breaks the contract (a block left open before the terminal
    # event) is reported by the invariant checker although every expectation holds.
    target = tmp_path / "open_block.yaml"
    target.write_text(
        yaml.safe_dump(
            {
                "responses": [
                    {
                        "events": [
                            {"type": "start"},
                            {"type": "text_start", "content_index": 0},
                            {"type": "text_delta", "content_index": 0, "delta": "hi"},
                            {
                                "type": "done",
                                "reason": "stop",
                                "message": {"content": [{"type": "text", "content": "hi"}]},
                            },
                        ]
                    }
                ],
                "expect": {"end_reason": "completed"},
            }
        ),
        encoding="utf-8",
    )
    problems = check_scenario(run_scenario(load_scenario(target)))
    assert len(problems) == 1 and problems[0].startswith("invariant L5") and "C5" in problems[0]
