"""``stream-harness agents``' bad input: one line in the user's terms, said once.

A scenario key that is not known lists the keys that are (with the near miss named), a
model's rule is said in its own words (never pydantic's ``Value error, ...``), and a
mistyped agent name gets the same did-you-mean as a mistyped configuration key.
"""

from __future__ import annotations

import importlib.util
import shlex
import sys
from pathlib import Path

import pytest

from agent_sources import lazy_agent_source
from stream_harness.agents.frameworks import FRAMEWORKS, REQUIRES
from stream_harness.agents.scenario.model import FaultSpec, ScenarioError, load_agent_scenario
from stream_harness.cli.main import main

PYDANTIC_WORDING = (
    "Extra inputs",
    "Value error",
    "Input should",
    "Field required",
    "validation error",
)


def _agents(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["agents", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("fault", "where", "words"),
    [
        (
            "{cut_mid_args: 1}",
            "responses.0.fault.cut_mid_args",
            "unknown key 'cut_mid_args' (did you mean 'cut_in_tool_args'? known: ",
        ),
        ("{cut_at: 3, no_terminal_event: true}", "responses.0.fault", "one fault per response"),
        ("{pace: 9}", "responses.0.fault.pace", "expected a number <= 5, got 9"),
        (
            "{error_event_after_200: busy}",
            "responses.0.fault.error_event_after_200",
            "expected one of overloaded, rate_limit or server_error, got 'busy'",
        ),
        (
            "{cut_in_tool_args: first}",
            "responses.0.fault.cut_in_tool_args",
            "expected true or false, or a whole number, got 'first'",
        ),
    ],
)
def test_a_bad_fault_is_said_in_the_files_terms_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fault: str, where: str, words: str
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"kind: agent\nresponses:\n  - fault: {fault}\n")
    code, out, err = _agents(["--agent", "reference", "--scenarios", str(bad)], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"stream-harness: {bad}: {where}: ")
    assert words in err
    assert not any(raw in err for raw in PYDANTIC_WORDING)


def test_the_valid_keys_come_from_the_model_not_a_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every field of FaultSpec is listed, so a fault field added later is named too."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: agent\nresponses:\n  - fault: {zzz: 1}\n")
    _, _, err = _agents(["--agent", "reference", "--scenarios", str(bad)], capsys)
    listed = err.split("known: ", 1)[1].rstrip().rstrip(")").split(", ")
    assert listed == [f.alias or name for name, f in FaultSpec.model_fields.items()]
    assert "did you mean" not in err


@pytest.mark.parametrize(
    ("given", "meant"), [("referenc", "reference"), ("pydantic-ai", "pydantic-ai-agent")]
)
def test_a_mistyped_agent_name_gets_a_did_you_mean(
    capsys: pytest.CaptureFixture[str], given: str, meant: str
) -> None:
    code, out, err = _agents(["--agent", given], capsys)
    assert code == 2 and out == ""
    assert f"did you mean {meant!r}?" in err and err.count("\n") == 1


def test_a_mistyped_check_gets_a_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _agents(["--agent", "reference", "--check", "a3"], capsys)
    assert code == 2 and out == "" and "did you mean 'A3'?" in err


def test_a_missing_key_and_a_wrong_type_name_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: agent\ntools: {t: {runs: [{returnz: 1}]}}\nresponses: 3\n")
    _, _, err = _agents(["--agent", "reference", "--scenarios", str(bad)], capsys)
    assert f"{bad}: " in err and "(and 1 more problem(s))" in err
    assert not any(raw in err for raw in PYDANTIC_WORDING)


@pytest.mark.parametrize("name", sorted(FRAMEWORKS))
def test_a_framework_row_whose_framework_is_not_installed_cannot_run_exit_2(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not every run failing A12 with exit 1, which reads in CI as "fails the contract"."""
    monkeypatch.setitem(REQUIRES, name, ("missing-framework", "no_such_framework_module"))
    code, out, err = _agents(["--agent", name, "--scenarios", "weather_tool_call"], capsys)
    assert code == 2 and out == ""
    assert (
        err.count("\n") == 1 and "needs the missing-framework package" in err and repr(name) in err
    )


@pytest.mark.parametrize("name", sorted(FRAMEWORKS))
def test_every_framework_row_requires_what_its_adapter_loads(name: str) -> None:
    """The looked-up module is one the adapter imports (a typo here would refuse an
    installed framework), and the package named is the one its load() names."""
    distribution, module = REQUIRES[name]
    spec = importlib.util.find_spec(FRAMEWORKS[name].partition(":")[0])
    assert spec is not None and spec.origin is not None
    source = Path(spec.origin).read_text(encoding="utf-8")
    assert f'"{module}' in source and f'"{distribution}' in source


def _project_with_lazy_agent(root: Path) -> Path:
    (root / "pyproject.toml").write_text('[project]\nname = "p"\n\n[tool.stream-harness]\n')
    (root / "lazy_agent.py").write_text(lazy_agent_source())
    sub = root / "tests" / "deep"
    sub.mkdir(parents=True)
    return sub


def test_module_object_is_imported_from_the_configured_project_as_check_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run from a subfolder, the agent is found beside the pyproject.toml, and the printed
    reproduce command runs where it was printed."""
    monkeypatch.chdir(_project_with_lazy_agent(tmp_path))
    monkeypatch.delenv("STREAM_HARNESS_CONFIG", raising=False)
    monkeypatch.delitem(sys.modules, "lazy_agent", raising=False)
    code, out, err = _agents(
        ["--agent", "lazy_agent:Lazy", "--scenarios", "weather_tool_call"], capsys
    )
    assert code == 1, err
    command = next(
        line.split("reproduce: ", 1)[1] for line in out.splitlines() if "reproduce: " in line
    )
    assert "--project" not in command
    argv = shlex.split(command)
    assert argv[:2] == ["stream-harness", "agents"]
    assert main(argv[1:]) == 1 and "FAILED: 1 agent runs" in capsys.readouterr().out


def test_a_given_project_is_repeated_in_each_reproduce_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "lazy_agent.py").write_text(lazy_agent_source())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STREAM_HARNESS_CONFIG", "")
    monkeypatch.delitem(sys.modules, "lazy_agent", raising=False)
    argv = ["--agent", "lazy_agent:Lazy", "--project", "code", "--scenarios", "weather_tool_call"]
    code, out, _ = _agents(argv, capsys)
    commands = [
        line.split("reproduce: ", 1)[1] for line in out.splitlines() if "reproduce: " in line
    ]
    assert code == 1 and commands
    assert all(shlex.split(c)[-2:] == ["--project", "code"] for c in commands)
    monkeypatch.delitem(sys.modules, "lazy_agent", raising=False)
    assert main(shlex.split(commands[0])[1:]) == 1


@pytest.mark.parametrize(
    ("form", "present", "absent"),
    [
        (
            "plain",
            ["lazy: ", "  FAIL lazy weather_tool_call [openai-completions] A12 "],
            ["::error", "┃"],
        ),
        ("rich", ["stream-harness agents", "failed", "  FAIL lazy "], ["::error", "lazy: "]),
        (
            "github",
            [
                "lazy: ",
                "::error file=",
                "title=A12 [lazy] weather_tool_call [openai-completions]::",
            ],
            ["┃"],
        ),
    ],
)
def test_agents_takes_format_as_check_does(
    form: str,
    present: list[str],
    absent: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "lazy_agent.py").write_text(lazy_agent_source())
    monkeypatch.delitem(sys.modules, "lazy_agent", raising=False)
    argv = [
        "--agent",
        "lazy_agent:Lazy",
        "--project",
        str(tmp_path),
        "--scenarios",
        "weather_tool_call",
    ]
    code, out, _ = _agents([*argv, "--format", form], capsys)
    assert code == 1 and out.splitlines()[-1].startswith("FAILED: 1 agent runs")
    assert all(p in out for p in present) and not any(a in out for a in absent)
    assert "reproduce: stream-harness agents --agent lazy_agent:Lazy" in out


@pytest.mark.parametrize("field", [f.alias or n for n, f in FaultSpec.model_fields.items()])
def test_a_wrong_value_in_any_fault_field_is_said_in_the_files_terms(
    tmp_path: Path, field: str
) -> None:
    """Over the model's fields, so a fault field added later is covered without a new case."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"kind: agent\nresponses:\n  - fault: {{{field}: {{x: [1]}}}}\n")
    with pytest.raises(ScenarioError) as caught:
        load_agent_scenario(bad)
    error = caught.value
    assert error.where.startswith(f"responses.0.fault.{field}"), error
    # A mapping-valued field (place, mutate) names the stray key among its own keys instead.
    said = error.problem.startswith("expected ") and ", got " in error.problem
    assert said or error.problem.startswith("unknown key 'x' (known: "), error
    assert not any(raw in error.problem for raw in PYDANTIC_WORDING)


@pytest.mark.parametrize(
    ("place", "where", "problem"),
    [
        ("{x: [1]}", "place", "expected one of {byte}, {call, at}, after_text, got {'x': [1]}"),
        ("nowhere", "place", "expected one of {byte}, {call, at}, after_text, got 'nowhere'"),
        ("{byte: -1}", "place.byte", "expected a number >= 0, got -1"),
        ("{call: 1, at: nowhere}", "place.at", "expected a whole number, or one of last_value"),
    ],
)
def test_a_place_is_said_by_the_form_the_file_meant(
    tmp_path: Path, place: str, where: str, problem: str
) -> None:
    """A place is one of several mappings: the file's value is judged against the form it
    has (a bound broken inside it), or the forms are listed; never each branch's errors."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"kind: agent\nresponses:\n  - fault: {{place: {place}, ending: fin}}\n")
    with pytest.raises(ScenarioError) as caught:
        load_agent_scenario(bad)
    assert caught.value.where == f"responses.0.fault.{where}"
    assert caught.value.problem.startswith(problem), caught.value.problem
    assert "more problem" not in caught.value.problem
