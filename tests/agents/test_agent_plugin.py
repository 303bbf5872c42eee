"""``pytest --harness --harness-agent X``: one item per (agent, scenario, protocol, check)."""

from __future__ import annotations

import pytest

from agent_sources import lazy_agent_source
from stream_harness.contract.facts import bundled_cassettes

pytest_plugins = ["pytester"]

ONE = bundled_cassettes() / "agent-scenarios" / "weather_tool_call.yaml"
LAZY = lazy_agent_source("anthropic-messages")


def test_agent_items_pass_for_the_reference_and_fail_with_a_reproduce_command(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(lazy_agent=LAZY)
    pytester.syspathinsert()
    result = pytester.runpytest(
        "--harness",
        "--harness-agent",
        "reference",
        "--harness-agent-scenarios",
        str(ONE),
        "-v",
        "-p",
        "no:cacheprovider",
        "-k",
        "agents",
    )
    agent_lines = [
        line for line in result.stdout.lines if "stream-harness-agents::reference::" in line
    ]
    assert (
        sum(" PASSED" in line for line in agent_lines) == 50
    )  # 13 checks x 5 protocols, 65 items ...
    assert (
        sum(" SKIPPED" in line for line in agent_lines) == 15
    )  # ... but A4, A10 and A13 (no thinking, no hint, no call that was not JSON)
    result.stdout.fnmatch_lines(
        ["*stream-harness-agents::reference::A1?weather_tool_call-anthropic-messages? PASSED*"]
    )
    failing = pytester.runpytest(
        "--harness",
        "--harness-agent",
        "lazy_agent:Lazy",
        "--harness-agent-scenarios",
        str(ONE),
        "-p",
        "no:cacheprovider",
        "-k",
        "agents and A12",
    )
    assert failing.ret == pytest.ExitCode.TESTS_FAILED
    failing.stdout.fnmatch_lines(
        [
            "*advice: End every run with the final text or an error*",
            "*reproduce: stream-harness agents --agent lazy_agent:Lazy*--check A12",
        ]
    )


def test_agent_options_need_harness_and_bad_input_is_a_collection_error(
    pytester: pytest.Pytester,
) -> None:
    alone = pytester.runpytest("--harness-agent", "reference")
    assert alone.ret == pytest.ExitCode.USAGE_ERROR
    broken = pytester.runpytest(
        "--harness", "--harness-agent", "nowhere:Agent", "-k", "agents", "-p", "no:cacheprovider"
    )
    assert broken.ret != 0
    broken.stdout.fnmatch_lines(["*stream-harness: agent 'nowhere:Agent': cannot import nowhere*"])


def test_known_agent_failures_are_strict_xfails(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The project's agent_expectations (then the bundled files) as `agents` reads them:
    a listed failure is an xfail, and one that passes fails the run (strict)."""
    pytester.makepyfile(lazy_agent=LAZY)
    pytester.syspathinsert()
    (pytester.path / "known").mkdir()
    (pytester.path / "known" / "lazy.yaml").write_text(
        "lazy:\n"
        "  - {scenario: weather_tool_call, check: A12, reason: it never asks the model}\n"
        "  - {scenario: weather_tool_call, check: A1, reason: stale on purpose}\n"
        "  - {scenario: weather_tool_call, check: A10, reason: not judged any more}\n"
    )
    config = pytester.makepyprojecttoml('[tool.stream-harness]\nagent_expectations = "known"\n')
    monkeypatch.setenv("STREAM_HARNESS_CONFIG", str(config))
    argv = [
        "--harness",
        "--harness-agent",
        "lazy_agent:Lazy",
        "--harness-agent-scenarios",
        str(ONE),
    ]
    result = pytester.runpytest(
        *argv, "-p", "no:cacheprovider", "-k", "agents and (A12 or A1[ or A10)", "-rxX"
    )
    result.stdout.fnmatch_lines(["*XFAIL*A12*known failure: it never asks the model*"])
    result.stdout.fnmatch_lines(["*A1 :: weather_tool_call*", "*XPASS(strict)*stale on purpose*"])
    # A check the run no longer judges (no retry-after served) is as stale as a pass.
    result.stdout.fnmatch_lines(["*XPASS(strict)*not judged any more*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
