"""Issue 35.2-4: a reproduce command carries every option that changed the verdict, fits
one terminal line, and an adapter's crash says where in the user's code it happened."""

from __future__ import annotations

import dataclasses
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from stream_harness.adapters.crash import crash_text
from stream_harness.adapters.protocol import ReferenceAdapter, safe_run
from stream_harness.agents.protocol import AgentLimits
from stream_harness.cli.main import main
from stream_harness.conformance.cases import load_cases
from stream_harness.conformance.config import CONFIG_ENV, Config
from stream_harness.conformance.fuzz import run_fuzz
from stream_harness.conformance.reproduce import (
    SPLIT_TEXT_LIMIT,
    ReplayOptions,
    agents_command,
    check_command,
)
from stream_harness.conformance.runner import RunConfig
from stream_harness.contract.facts import bundled_cassettes

OPENAI = bundled_cassettes() / "openai-completions" / "text_plain.yaml"

# Fields of the table that decide no replayed case's verdict: the command names its own
# adapter, cassette and check, and writes no report.
NOT_VERDICT = {"adapters", "cassettes", "checks", "out", "agent_expectations", "source"}


def test_every_option_of_the_table_is_carried_or_said_not_to_change_a_verdict() -> None:
    """A field added to the table must be decided here: carried by reproduce commands, or
    listed as not deciding a replay's verdict."""
    carried = {f.name for f in dataclasses.fields(ReplayOptions)} - {"config_file"}
    table = {f.name for f in dataclasses.fields(Config)}
    assert table - NOT_VERDICT == carried


def _command(options: ReplayOptions, **given: object) -> list[str]:
    base: dict[str, object] = {
        "adapter": "mine:A",
        "cassette": "c.yaml",
        "interaction": 0,
        "check": "contract",
    }
    return shlex.split(check_command(options, **{**base, **given}))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "flag", "value"),
    [
        (ReplayOptions(run_timeout=2.0), "--run-timeout", "2"),
        (ReplayOptions(seed=7), "--seed", "7"),
        (ReplayOptions(examples=5), "--examples", "5"),
        (ReplayOptions(single_cut_limit=0), "--single-cut-limit", "0"),
        (ReplayOptions(expectations=Path("known")), "--expectations", "known"),
    ],
)
def test_an_option_that_changed_the_verdict_is_in_the_command(
    options: ReplayOptions, flag: str, value: str
) -> None:
    parts = _command(options)
    assert parts[parts.index(flag) + 1] == value
    assert flag not in _command(ReplayOptions())  # the defaults are not repeated


def test_a_pinned_split_needs_no_draws_but_keeps_its_run_timeout() -> None:
    parts = _command(ReplayOptions(seed=7, examples=5, run_timeout=2.0), cuts=[3, 9])
    assert "--seed" not in parts and "--examples" not in parts
    assert (
        parts[parts.index("--split") + 1] == "cuts:3,9"
        and parts[parts.index("--run-timeout") + 1] == "2"
    )


def test_a_table_the_current_folder_does_not_find_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.stream-harness]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    line = check_command(
        ReplayOptions(config_file=project / "pyproject.toml"),
        adapter="a:A",
        cassette="c",
        interaction=0,
        check="contract",
    )
    assert line.startswith(f"{CONFIG_ENV}=proj/pyproject.toml stream-harness check ")
    monkeypatch.chdir(project)
    line = check_command(
        ReplayOptions(config_file=project / "pyproject.toml"),
        adapter="a:A",
        cassette="c",
        interaction=0,
        check="contract",
    )
    assert line.startswith("stream-harness check ")


def test_one_byte_per_chunk_of_a_long_body_is_one_short_item() -> None:
    parts = _command(ReplayOptions(), cuts=list(range(1, 3240)))
    assert parts[parts.index("--split") + 1] == "cuts:1-3239"


def test_a_split_too_long_to_print_is_named_by_its_place_in_the_plan() -> None:
    many = list(range(2, 4000, 2))
    parts = _command(ReplayOptions(seed=3), cuts=many, plan_index=4)
    assert parts[parts.index("--split") + 1] == "plan:4" and parts[parts.index("--seed") + 1] == "3"
    assert len(shlex.join(parts)) < 200
    unknown = _command(ReplayOptions(), cuts=many)  # not from the plan: written out, never wrong
    assert len(unknown[unknown.index("--split") + 1]) > SPLIT_TEXT_LIMIT


def test_the_run_config_hands_every_option_to_the_command() -> None:
    case = load_cases([OPENAI])[0][0]
    config = RunConfig(seed=4, examples=9, run_timeout=1.5, expectations=Path("known"))
    parts = shlex.split(
        config.context(case, ReferenceAdapter(), "reference").command("message-framing")
    )
    for flag, value in (
        ("--seed", "4"),
        ("--examples", "9"),
        ("--run-timeout", "1.5"),
        ("--expectations", "known"),
    ):
        assert parts[parts.index(flag) + 1] == value


# An adapter that hangs on any split of more than a few chunks, and on nothing else: the
# one-byte split of a small body, the first split-invariance tries.
HANGS_ON_MANY = """
import threading

from stream_harness import ReferenceAdapter

RELEASE = threading.Event()


class HangOnMany:
    name = "hang-on-many"
    level = "event"
    protocols = frozenset({"openai-completions"})

    def version(self):
        return "0"

    def run(self, protocol, chunks, *, status=200, headers=None):
        if len(chunks) > 50:
            RELEASE.wait(60)
        return ReferenceAdapter().run(protocol, chunks, status=status, headers=headers)
"""


def test_a_hang_under_a_short_run_timeout_replays_as_a_hang(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reproduce command of a hang found with --run-timeout 0.3 keeps it (pasted at the
    30 s default it would wait 30 s), its split fits a line, and pasted it errors again."""
    (project / "hang_on_many_adapter.py").write_text(HANGS_ON_MANY, encoding="utf-8")
    argv = [
        "check", "--adapter", "hang_on_many_adapter:HangOnMany", "--cassettes", str(OPENAI),
        "--check", "split-invariance", "--run-timeout", "0.3", "--examples", "2", "--jobs", "1", "--format", "plain",
    ]  # fmt: skip
    module = None
    try:
        assert main(argv) == 1
        module = sys.modules["hang_on_many_adapter"]
        out = capsys.readouterr().out
        command = next(line for line in out.splitlines() if "reproduce:" in line).split(
            "reproduce: ", 1
        )[1]
        assert "--run-timeout 0.3" in command, command
        # Every trouble spot at once (1,000 cuts and more) is named by its place in the plan.
        split = shlex.split(command)[shlex.split(command).index("--split") + 1]
        assert split == "plan:0" and len(command) - len(str(OPENAI)) < 200, command
        module.RELEASE.set()  # type: ignore[attr-defined]
        module.RELEASE.clear()  # type: ignore[attr-defined]
        replay = shlex.split(command)
        assert replay[:2] == ["stream-harness", "check"]
        assert main([*replay[1:], "--jobs", "1", "--format", "plain"]) == 1
        again = capsys.readouterr().out
        assert "did not return within the run timeout of 0.3 s" in again, again
        assert "1 split replayed" in again and "random split(s)" not in again, again
    finally:
        if module is not None:
            module.RELEASE.set()  # type: ignore[attr-defined]


# -- where an adapter crashed ---------------------------------------------------------------

CRASHING = """import json


def parse(line):
    return json.loads(line)


class Crashing:
    name = "crashing"
    level = "event"
    protocols = frozenset({"openai-completions"})

    def version(self):
        return "0"

    def run(self, protocol, chunks, *, status=200, headers=None):
        return parse(b"".join(chunks).decode()[:20] + '"')
"""


def test_a_crash_names_the_users_lines_not_the_harnesss_nor_the_stdlibs(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "crashing_adapter.py").write_text(CRASHING, encoding="utf-8")
    monkeypatch.syspath_prepend(str(project))
    import crashing_adapter  # type: ignore[import-not-found]

    result = safe_run(crashing_adapter.Crashing(), "openai-completions", [b'data: {"x": 1}\n\n'])
    assert result.crashed is not None
    assert result.crashed.startswith("json.decoder.JSONDecodeError: ")
    assert (
        "(at crashing_adapter.py:5 in parse: return json.loads(line); called from crashing_adapter.py:17 in run: "
        in result.crashed
    )
    assert "decoder.py" not in result.crashed and "stream_harness" not in result.crashed
    assert "\n" not in result.crashed


def test_a_crash_with_no_frame_of_the_user_says_the_innermost_outside_the_harness() -> None:
    try:
        int("x")
    except ValueError as exc:
        text = crash_text(exc)
    assert text.startswith("ValueError: invalid literal") and "test_reproduce.py:" in text


def test_the_crash_line_reaches_the_console_with_the_file_and_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "crashing_adapter2.py").write_text(
        CRASHING.replace("Crashing", "Crashing2"), encoding="utf-8"
    )
    code = main(
        [
            "check",
            "--adapter",
            "crashing_adapter2:Crashing2",
            "--cassettes",
            str(OPENAI),
            "--check",
            "contract",
            "--jobs",
            "1",
            "--format",
            "plain",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1 and "crashing_adapter2.py:5 in parse: return json.loads(line)" in out, out


# -- the other commands that run an adapter are bounded too -----------------------------------

HANGS_ALWAYS = HANGS_ON_MANY.replace("if len(chunks) > 50:", "if True:")


def test_normalize_through_a_hanging_adapter_ends_at_the_run_timeout(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "normalize_hang_adapter.py").write_text(HANGS_ALWAYS, encoding="utf-8")
    try:
        code = main(
            [
                "normalize",
                str(OPENAI),
                "--adapter",
                "normalize_hang_adapter:HangOnMany",
                "--run-timeout",
                "0.3",
            ]
        )
    finally:
        sys.modules["normalize_hang_adapter"].RELEASE.set()  # type: ignore[attr-defined]
    err = capsys.readouterr().err
    assert code == 1 and "did not return within the run timeout of 0.3 s" in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_fuzz_bounds_an_adapters_runs_and_its_reproduce_command_keeps_the_bound(
    project: Path,
) -> None:
    (project / "fuzz_hang_adapter.py").write_text(HANGS_ALWAYS, encoding="utf-8")
    try:
        doc = run_fuzz(
            bundled_cassettes(), ["openai-completions"], examples=3, timeout=0.3,
            adapter="fuzz_hang_adapter:HangOnMany", out=project / "fuzz.json",
        )  # fmt: skip
    finally:
        sys.modules["fuzz_hang_adapter"].RELEASE.set()  # type: ignore[attr-defined]
    (proto,) = doc["protocols"]
    finding = proto["findings"][0]
    assert finding["problems"][0].startswith("hang: "), finding
    assert finding["command"].endswith(
        "--adapter fuzz_hang_adapter:HangOnMany --run-timeout 0.3"
    ), finding["command"]


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        (AgentLimits(max_turns=3), ["--max-turns", "3"]),
        (AgentLimits(timeout_s=5.0), ["--timeout", "5"]),
        (AgentLimits(), []),
        (None, []),
    ],
)
def test_an_agent_rows_command_keeps_the_bounds_of_its_run(
    limits: AgentLimits | None, expected: list[str]
) -> None:
    parts = shlex.split(
        agents_command(
            agent="mine:A",
            scenarios="s.yaml",
            protocol="openai-completions",
            check="AC1",
            limits=limits,
        )
    )
    assert parts[:4] == ["stream-harness", "agents", "--agent", "mine:A"]
    assert parts[10:] == expected


def test_a_plan_index_past_the_plan_is_an_error_not_a_pass(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "check",
        "--adapter",
        "reference",
        "--cassettes",
        str(OPENAI),
        "--interaction",
        "0",
        "--check",
        "split-invariance",
        "--jobs",
        "1",
        "--format",
        "plain",
    ]
    assert main([*argv, "--split", "plan:2", "--examples", "3"]) == 0
    assert "1 split replayed (split 2 of the plan of seed 0)" in capsys.readouterr().out
    assert main([*argv, "--split", "plan:99", "--examples", "3"]) == 1
    assert (
        "--split plan:99: the plan of openai-completions/text_plain.yaml#0"
        in capsys.readouterr().out
    )


def test_a_table_named_by_the_environment_stays_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pasted into a fresh shell, a command must not lean on a variable of the run's shell."""
    table = tmp_path / "ci.toml"
    table.write_text("[tool.stream-harness]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(CONFIG_ENV, str(table))
    line = check_command(
        ReplayOptions(config_file=table),
        adapter="a:A",
        cassette="c",
        interaction=0,
        check="contract",
    )
    assert line.startswith(f"{CONFIG_ENV}=ci.toml stream-harness check ")


def test_what_the_table_says_is_not_repeated_and_what_differs_from_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    (tmp_path / "known").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.stream-harness]\nrun_timeout = 7\nexpectations = "known"\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    table = tmp_path / "pyproject.toml"
    same = _command(ReplayOptions(run_timeout=7.0, expectations=Path("known"), config_file=table))
    assert "--run-timeout" not in same and "--expectations" not in same, same
    # The run had the default where the table says 7 (a flag, a run_conformance argument).
    other = _command(ReplayOptions(run_timeout=30.0, config_file=table))
    assert other[other.index("--run-timeout") + 1] == "30"


def test_the_plugins_failure_carries_its_run_timeout(project: Path) -> None:
    """pytest --harness writes its reproduce commands where `check` writes them."""
    (project / "plugin_hang_adapter.py").write_text(HANGS_ALWAYS, encoding="utf-8")
    (project / "test_nothing.py").write_text("def test_nothing():\n    pass\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != CONFIG_ENV}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "--harness",
         "--harness-adapter", "plugin_hang_adapter:HangOnMany", "--harness-cassettes", str(OPENAI),
         "--harness-check", "contract", "--harness-run-timeout", "0.3"],
        cwd=project, capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    line = next(line for line in done.stdout.splitlines() if "reproduce: " in line)
    assert line.strip().startswith(
        "reproduce: stream-harness check --adapter plugin_hang_adapter:HangOnMany "
    )
    assert line.endswith(" --run-timeout 0.3"), line
