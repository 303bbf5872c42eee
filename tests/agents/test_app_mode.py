"""App mode (`stream-harness agents --app CMD`): the shop agent (tests/agents/apps) run
unchanged, judged with its own tools; its planted bugs fail; bad input is one line, exit 2;
and every SDK of specs/app_env.yaml really reads the variables set for it."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stream_harness.adapters.processes.js import js_root, node_binary
from stream_harness.agents.app import app_environment, app_variables
from stream_harness.cli.main import main
from stream_harness.reporting import load_report

SHOP = f"{shlex.quote(sys.executable)} {shlex.quote(str(Path(__file__).parent / 'apps' / 'shop_agent.py'))}"
URL = "http://127.0.0.1:9"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["agents", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_clean_agent_passes_with_its_own_tool_names(capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("SHOP_AGENT_BUG", raising=False)
    code, out, _ = _run(
        capsys, "--app", SHOP, "--scenarios", "three_tool_turns", "--scenarios", "retry_after_payment",
        "--jobs", "2", "--out", str(tmp_path),
    )  # fmt: skip
    assert code == 0, out
    assert out.splitlines()[-1].startswith("OK: 2 agent runs")
    # the row names the client the probe saw, and declares that client's policy
    report = load_report(tmp_path / "report.jsonl")
    assert {r.agent_version.split(" ")[0] for r in report.agent_results} == {"OpenAI/Python"}
    assert {r.conventions["retry_after_over_cap"] for r in report.agent_results} == {"give_up"}


@pytest.mark.parametrize(
    ("bug", "scenario", "check"),
    [
        ("cut_args", "cut_in_tool_args", "A1"),
        ("no_finish", "no_terminal_event", "A5"),
        ("no_retry_after", "http_429_retry_after", "A10"),
        ("retry_400", "overflow_400", "A7"),
        ("double_charge", "retry_after_payment", "A2"),
    ],
)
def test_each_planted_bug_is_caught_by_a_built_in_check(capsys, monkeypatch, bug, scenario, check):
    monkeypatch.setenv("SHOP_AGENT_BUG", bug)
    code, out, _ = _run(
        capsys, "--app", SHOP, "--scenarios", scenario, "--protocol", "openai-completions"
    )
    assert code == 1, out
    assert f"FAIL app {scenario} [openai-completions] {check} " in out
    assert f"reproduce: stream-harness agents --app {shlex.quote(SHOP)} --scenarios " in out


def test_a_mapping_reaches_the_reproduce_command(capsys, monkeypatch):
    monkeypatch.setenv("SHOP_AGENT_BUG", "double_charge")
    code, out, _ = _run(
        capsys,
        "--app",
        SHOP,
        "--scenarios",
        "retry_after_payment",
        "--tool",
        "charge_card=issue_payment",
    )
    assert code == 1
    assert "--tool charge_card=issue_payment --scenarios " in out


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--tool", "a=b", "--agent", "reference"], "--tool: binds tools for --app only"),
        (["--app", "true"], "--app: the program sent no model request"),
        (["--app", "true", "--tool", "nope"], "--tool nope: give SCENARIO_TOOL=YOUR_TOOL"),
        (["--app", "true", "--tool", "nope=x"], "--tool nope=...: no scenario has a tool 'nope'"),
        (["--app", "exit 3"], "--app: the program sent no model request (exit status 3"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, problem):
    code, _, err = _run(capsys, *argv, "--timeout", "20")
    assert code == 2
    assert problem in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def _openai() -> Any:
    import openai

    return openai.OpenAI().base_url


def _azure() -> Any:
    import openai

    return openai.AzureOpenAI().base_url


def _anthropic() -> Any:
    import anthropic

    return anthropic.Anthropic().base_url


def _google() -> Any:
    from google import genai

    return genai.Client()._api_client._http_options.base_url


def _cohere() -> Any:
    # cohere reads CO_API_URL as a default argument, when the module is imported: a fresh
    # process, as app mode's program is, sees the variable; this one may have imported it.
    code = "import cohere; print(cohere.ClientV2()._client_wrapper.get_base_url())"
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


BASE_URL_OF: dict[str, Callable[[], Any]] = {
    "openai": _openai,
    "azure-openai": _azure,
    "anthropic": _anthropic,
    "google-genai": _google,
    "cohere": _cohere,
}


@pytest.mark.parametrize("sdk", sorted({sdk for sdk, _, _ in app_variables()}))
def test_each_sdk_reads_the_variables_set_for_it(sdk, monkeypatch):
    if sdk not in BASE_URL_OF:
        pytest.skip(f"{sdk} reads no base-URL variable (specs/app_env.yaml says what to pass)")
    env = app_environment(URL, prompt="p", protocol="openai-completions", scenario="s", base={})
    for name in list(os.environ):
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert str(BASE_URL_OF[sdk]()).startswith(URL)


def test_any_language_a_node_agent_on_openai_node_is_judged_the_same_way(capsys, monkeypatch):
    modules = js_root() / "node_modules"
    if node_binary() is None or not (modules / "openai").is_dir():
        pytest.skip("needs node and the adapters-js install (openai-node)")
    monkeypatch.setenv("NODE_PATH", str(modules))
    script = Path(__file__).parent / "apps" / "shop_agent.mjs"
    command = f"{shlex.quote(str(node_binary()))} {shlex.quote(str(script))}"
    code, out, _ = _run(
        capsys,
        "--app",
        command,
        "--scenarios",
        "three_tool_turns",
        "--scenarios",
        "retry_after_payment",
    )
    assert code == 0, out
    assert out.splitlines()[-1].startswith("OK: 2 agent runs")
