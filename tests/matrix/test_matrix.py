"""``stream-harness matrix``: groups, environments, runs and the merge, with a fake runner.

Nothing is installed: the runner records every command and, for a ``report`` command,
writes the report that group would have written (built by hand from small reports), so
the tests check what is built where, what runs with which arguments, and how the groups'
reports become one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from stream_harness.adapters.loading import BUILTIN
from stream_harness.adapters.registry import THIRD_PARTY
from stream_harness.conformance.expectations import Expectations
from stream_harness.matrix.groups import (
    Env,
    Group,
    GroupRun,
    MatrixError,
    MatrixRun,
    SuiteOptions,
    _prior_report,
    build_commands,
    default_pins,
    ensure_env,
    load_groups,
    main,
    merge_runs,
    prune_saved_failures,
    run_matrix,
    select,
)
from stream_harness.reporting import Report, write_report
from stream_harness.reporting.report import (
    AdapterInfo,
    AgentRow,
    CaseInfo,
    CheckInfo,
    FailureInfo,
    Result,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
CHECK = CheckInfo(id="expected", title="final message", enforces="C6", level="message")
CASE = CaseInfo(
    id="a/plain.yaml#0",
    cassette="a/plain.yaml",
    interaction=0,
    protocol="anthropic-messages",
    status=200,
    sha256="ab" * 32,
)


def _report(adapter: str, version: str, outcome: str) -> Report:
    return Report(
        tool_version="0.1.0",
        started=T0,
        finished=T0,
        seed=0,
        examples=5,
        checks=(CHECK,),
        adapters=(
            AdapterInfo(
                name=adapter, level="message", version=version, protocols=("anthropic-messages",)
            ),
        ),
        cases=(CASE,),
        environment={"python": "3.11.7"},
        results=(
            Result(
                adapter=adapter,
                case=CASE.id,
                check="expected",
                outcome=outcome,  # type: ignore[arg-type]
                # As the engine writes them: a failed check carries what it found.
                failures=(FailureInfo(message="text differs"),) if outcome == "failed" else (),
            ),
        ),
    )


def test_the_merged_report_spans_every_group_agent_groups_too() -> None:
    """The whole matrix's header said it ran 07:08 to 07:20 when its last group, an
    agent group, ended at 07:30: the span took the stream groups' reports only."""
    first, last = T0.replace(hour=7, minute=8), T0.replace(hour=7, minute=30)
    stream = _report("a", "1", "passed").model_copy(
        update={"started": first, "finished": T0.replace(hour=7, minute=20)}
    )
    row = AgentRow(agent="x", scenario="s", protocol="p", check="A1", title="t", outcome="passed")
    agents = Report(tool_version="1", started=T0.replace(hour=7, minute=9), finished=last, seed=0,
                    examples=0, checks=(), adapters=(), cases=(), agent_results=(row,))  # fmt: skip
    runs = [
        GroupRun(Group("g", ("a",), ()), report=stream),
        GroupRun(Group("agent-x", (), (), agents=("x",)), report=agents, agents=True),
    ]
    merged = merge_runs(runs, expectations=lambda name: Expectations(name))
    assert (merged.started, merged.finished) == (first, last)


class FakeRunner:
    """Records commands; ``report`` commands write the group's canned report."""

    def __init__(self, reports: dict[str, Report], fail: Sequence[str] = ()) -> None:
        self.reports = reports
        self.fail = set(fail)
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        argv = list(argv)
        self.calls.append(argv)
        if any(f in " ".join(argv) for f in self.fail):
            return subprocess.CompletedProcess(argv, 1, "", "resolution impossible\nno solution")
        if len(argv) > 1 and argv[1] == "report":
            out = Path(argv[argv.index("--out") + 1])
            adapter = argv[argv.index("--adapter") + 1]
            report = self.reports[adapter]
            write_report(report, out)
            return subprocess.CompletedProcess(argv, 1 if report.did_fail else 0, "", "")
        if "venv" in argv:
            Path(argv[-1]).mkdir(parents=True, exist_ok=True)
        return subprocess.CompletedProcess(argv, 0, "", "")


def _run_matrix(tmp_path: Path, pins: Path, runner: FakeRunner, uv: str | None = None) -> MatrixRun:
    """The pinned groups run by ``runner`` with 5 examples, the project at /repo."""
    return run_matrix(
        load_groups(pins),
        options=SuiteOptions(examples=5),
        cache=tmp_path / "cache",
        project=["-e", "/repo"],
        runner=runner,
        uv=uv,
    )


PINS = """
[groups.one]
requirements = ["libone==1.0"]
adapters = ["one"]

[groups.two]
description = "the second"
requirements = ["libtwo==2.0", "openai==2.54.0"]
adapters = ["two"]
"""


@pytest.fixture
def pins(tmp_path: Path) -> Path:
    path = tmp_path / "matrix.toml"
    path.write_text(PINS)
    return path


def test_groups_load_in_file_order(pins: Path) -> None:
    groups = load_groups(pins)
    assert [g.name for g in groups] == ["one", "two"]
    assert groups[1].requirements == ("libtwo==2.0", "openai==2.54.0")
    assert groups[1].adapters == ("two",)
    assert groups[1].description == "the second"
    assert [g.name for g in select(groups, ["two"])] == ["two"]
    with pytest.raises(MatrixError, match="unknown group"):
        select(groups, ["three"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "at least one"),
        ('[groups.a]\nrequirements = "x"\nadapters = ["a"]', "requirements must be a list"),
        ("[groups.a]\nrequirements = []\nadapters = []", "adapters must be a non-empty"),
        (
            '[groups.a]\nrequirements = []\nadapters = ["x"]\n[groups.b]\nrequirements = []\nadapters = ["x"]',
            "is in groups 'a' and 'b'",
        ),
        ("[groups.a", "matrix.toml"),
    ],
)
def test_malformed_pins_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "matrix.toml"
    path.write_text(text)
    with pytest.raises(MatrixError, match=message):
        load_groups(path)


def test_an_agent_frameworks_group_holds_agents_and_no_stream_adapter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "matrix.toml"
    path.write_text(PINS + '\n[groups.fw]\nrequirements = ["fw==1.0"]\nagents = ["fw-agent"]\n')
    fw = load_groups(path)[-1]
    assert (fw.adapters, fw.agents) == ((), ("fw-agent",))
    # Listed with its agents (tests/matrix/test_matrix_agents.py runs such groups).
    assert main(["--pins", str(path), "--group", "fw", "--list"]) == 0
    assert "fw: agent fw-agent  [fw==1.0]" in capsys.readouterr().out
    path.write_text('[groups.fw]\nrequirements = []\nagents = "fw-agent"\n')
    with pytest.raises(MatrixError, match="agents must be a list"):
        load_groups(path)


def test_the_committed_pins_name_known_adapters_with_exact_versions() -> None:
    groups = load_groups(default_pins())
    adapters = [a for g in groups for a in g.adapters]
    # Gateway rows (harness/stream_harness/adapters/gateways) are named, not registered.
    from stream_harness.adapters.gateways.catalog import all_rows

    assert set(adapters) == set(THIRD_PARTY) | set(BUILTIN) | set(all_rows())
    for g in groups:
        # Exact pins: a matrix is only reproducible if every library is pinned.
        # (A JS group installs from its lock file instead: adapters-js/package-lock.json.)
        assert (g.requirements or g.npm) and all("==" in r for r in g.requirements), g.name


def test_build_commands_use_uv_when_present_else_venv_and_pip(tmp_path: Path) -> None:
    group = Group("g", ("lib==1",), ("a",))
    env = tmp_path / "env"
    with_uv = build_commands(group, env, ["-e", "/repo"], uv="/bin/uv", python="/usr/bin/python3")
    assert with_uv[0][:2] == ["/bin/uv", "venv"]
    assert with_uv[1][:3] == ["/bin/uv", "pip", "install"]
    assert with_uv[1][-3:] == ["-e", "/repo", "lib==1"]
    # Bytecode at install (pip's default, not uv's): a run that may not write it would
    # otherwise compile every library module from source in every worker.
    assert "--compile-bytecode" in with_uv[1]
    plain = build_commands(group, env, ["-e", "/repo"], uv=None, python="/usr/bin/python3")
    assert plain[0] == ["/usr/bin/python3", "-m", "venv", str(env)]
    assert plain[1][:4] == [str(env / "bin" / "python"), "-m", "pip", "install"]
    assert plain[1][-3:] == ["-e", "/repo", "lib==1"]


def test_an_environment_is_built_once_and_rebuilt_when_its_pins_change(tmp_path: Path) -> None:
    runner = FakeRunner({})
    group = Group("g", ("lib==1",), ("a",))
    first = ensure_env(group, tmp_path, ["-e", "/repo"], runner, uv=None)
    assert not first.cached and first.installer == "venv+pip"
    assert len(runner.calls) == 2
    again = ensure_env(group, tmp_path, ["-e", "/repo"], runner, uv=None)
    assert again.cached and again.path == first.path
    assert len(runner.calls) == 2  # nothing ran
    moved = ensure_env(Group("g", ("lib==2",), ("a",)), tmp_path, ["-e", "/repo"], runner, uv=None)
    assert not moved.cached and moved.path != first.path
    assert len(runner.calls) == 4


def test_an_interrupted_build_is_not_reused(tmp_path: Path) -> None:
    runner = FakeRunner({}, fail=["pip install"])
    group = Group("g", ("lib==1",), ("a",))
    with pytest.raises(MatrixError, match="no solution"):
        ensure_env(group, tmp_path, ["-e", "/repo"], runner, uv=None)
    # The venv folder exists but has no marker: the next run builds again.
    ok = FakeRunner({})
    assert not ensure_env(group, tmp_path, ["-e", "/repo"], ok, uv=None).cached


def test_suite_options_reach_every_group_the_same(tmp_path: Path) -> None:
    env = Env("g", tmp_path / "env", cached=True, seconds=0, installer="uv")
    options = SuiteOptions(cassettes=("/corpus",), examples=7, seed=3, checks=("expected",))
    argv = options.argv(env, Group("g", (), ("litellm", "reference")), tmp_path / "out")
    assert argv[:2] == [str(tmp_path / "env" / "bin" / "stream-harness"), "report"]
    # By name: load_adapter knows the registry, and reproduce commands in the merged report
    # repeat what was passed.
    assert argv[argv.index("--adapter") + 1] == "litellm" and "litellm" in THIRD_PARTY
    assert "reference" in argv
    assert argv[argv.index("--examples") + 1] == "7" and argv[argv.index("--seed") + 1] == "3"
    assert argv[argv.index("--cassettes") + 1] == "/corpus"
    assert argv[argv.index("--check") + 1] == "expected"


def test_the_matrix_merges_every_groups_report(tmp_path: Path, pins: Path) -> None:
    runner = FakeRunner(
        {"one": _report("one", "1.0", "passed"), "two": _report("two", "2.0", "failed")}
    )
    result = _run_matrix(tmp_path, pins, runner)
    report = result.report
    assert report is not None
    assert [(a.name, a.version) for a in report.adapters] == [("one", "1.0"), ("two", "2.0")]
    assert [(r.adapter, r.outcome) for r in report.results] == [
        ("one", "passed"),
        ("two", "failed"),
    ]
    assert report.did_fail
    # The header says, per group, what was pinned and that it ran.
    assert report.environment["group two"].startswith("libtwo==2.0, openai==2.54.0; env built")
    assert "ran in" in report.environment["group one"]
    assert report.environment["python"] == "3.11.7"


def test_a_group_that_cannot_build_is_reported_and_the_others_still_run(
    tmp_path: Path, pins: Path
) -> None:
    runner = FakeRunner({"one": _report("one", "1.0", "passed")}, fail=["libtwo==2.0"])
    result = _run_matrix(tmp_path, pins, runner, uv="/bin/uv")
    assert [r.group.name for r in result.failed_groups] == ["two"]
    assert result.report is not None
    assert [a.name for a in result.report.adapters] == ["one"]
    assert "FAILED" in result.report.environment["group two"]


def test_a_js_group_on_a_machine_without_node_is_skipped_in_one_line_and_the_others_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pins = tmp_path / "matrix.toml"
    pins.write_text(
        PINS + '\n[groups.js]\nrequirements = []\nnpm = "adapters-js"\nadapters = ["js-openai"]\n'
    )
    monkeypatch.delenv("STREAM_HARNESS_NODE", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    runner = FakeRunner(
        {"one": _report("one", "1.0", "passed"), "two": _report("two", "2.0", "passed")}
    )
    result = _run_matrix(tmp_path, pins, runner)
    assert result.failed_groups == []  # a skip, not a broken matrix
    (js,) = [r for r in result.runs if r.group.name == "js"]
    assert js.skipped is not None and "node is not on PATH" in js.skipped
    assert not any("npm" in argv for argv in runner.calls)  # nothing was built for it
    assert result.report is not None
    assert [a.name for a in result.report.adapters] == ["one", "two"]
    assert result.report.environment["group js"] == f"SKIPPED ({js.skipped})"
    # Only JS groups: nothing was checked, which is an error, never a pass.
    only = tmp_path / "only-js.toml"
    only.write_text(
        '[groups.js]\nrequirements = []\nnpm = "adapters-js"\nadapters = ["js-openai"]\n'
    )
    with pytest.raises(MatrixError, match="no group produced a report: js: node is not on PATH"):
        _run_matrix(tmp_path, only, runner)


def test_reports_that_disagree_on_the_seed_do_not_merge(tmp_path: Path, pins: Path) -> None:
    other = _report("two", "2.0", "passed").model_copy(update={"seed": 9})
    runner = FakeRunner({"one": _report("one", "1.0", "passed"), "two": other})
    with pytest.raises(ValueError, match="seed"):
        _run_matrix(tmp_path, pins, runner)


def test_no_report_at_all_is_an_error() -> None:

    with pytest.raises(MatrixError, match="no group produced a report"):
        merge_runs([GroupRun(Group("g", (), ("a",)), error="exit 2")])


def test_one_group_rerun_updates_its_rows_and_keeps_the_others(
    tmp_path: Path, pins: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`stream-harness matrix --group two` over the committed matrix: two's rows are the
    new run's, one's are kept (what specs/matrix.toml says to do when moving a pin)."""
    import argparse

    from stream_harness.matrix.groups import configure_parser, matrix_command
    from stream_harness.reporting import load_report, merge_reports

    monkeypatch.setattr("stream_harness.matrix.groups.find_uv", lambda: None)
    out = tmp_path / "report"
    write_report(
        merge_reports([_report("one", "1.0", "failed"), _report("two", "2.0", "failed")]), out
    )
    parser = argparse.ArgumentParser()
    configure_parser(parser)
    runner = FakeRunner({"two": _report("two", "2.0", "passed")})
    args = parser.parse_args(
        [
            "--pins",
            str(pins),
            "--group",
            "two",
            "--examples",
            "5",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--out",
            str(out),
        ]
    )
    assert matrix_command(args, runner=runner) == 1  # one's kept row still fails
    report = load_report(out / "report.jsonl")
    assert [(r.adapter, r.outcome) for r in report.results] == [
        ("one", "failed"),
        ("two", "passed"),
    ]
    assert "kept the rows of one" in capsys.readouterr().err
    args = parser.parse_args(
        [
            "--pins",
            str(pins),
            "--group",
            "two",
            "--examples",
            "5",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--out",
            str(out),
            "--fresh",
        ]
    )
    assert matrix_command(args, runner=runner) == 0
    assert [a.name for a in load_report(out / "report.jsonl").adapters] == ["two"]


def test_group_environments_get_this_harness_from_where_it_was_installed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import stream_harness.matrix.groups as matrix_module
    from stream_harness.contract.facts import Origin

    wheel = tmp_path / "stream_harness-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    for found, want in (
        (Origin(editable=True, path=tmp_path, version="0.1.0"), ["-e", str(tmp_path)]),
        (Origin(editable=False, path=wheel, version="0.1.0"), [str(wheel)]),
        (Origin(editable=False, path=None, version="0.1.0"), ["stream-harness==0.1.0"]),
    ):
        monkeypatch.setattr(matrix_module, "origin", lambda found=found: found)
        assert matrix_module.harness_requirement() == want


def test_a_js_group_installs_its_lock_file_into_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "repo"
    (project / "adapters-js" / "adapters").mkdir(parents=True)
    monkeypatch.setattr("stream_harness.matrix.groups.bundled_js", lambda: project / "adapters-js")
    (project / "adapters-js" / "package.json").write_text("{}")
    (project / "adapters-js" / "package-lock.json").write_text('{"lockfileVersion": 3}')
    (project / "adapters-js" / "adapters" / "x.mjs").write_text("")
    (project / "adapters-js" / "agents").mkdir()
    (project / "adapters-js" / "agents" / "y.mjs").write_text("")
    group = Group("js", (), ("js-openai",), npm="adapters-js")
    runner = FakeRunner({})
    env = ensure_env(group, tmp_path / "cache", ["-e", str(project)], runner, uv=None)
    npm = runner.calls[-1]
    assert npm[:4] == ["npm", "ci", "--prefix", str(env.path / "js")]
    assert (env.path / "js" / "adapters" / "x.mjs").is_file()
    assert (env.path / "js" / "agents" / "y.mjs").is_file()
    assert env.installer == "venv+pip+npm ci"
    argv = SuiteOptions().argv(env, group, tmp_path / "out")
    assert argv[:2] == ["env", f"STREAM_HARNESS_JS={env.path / 'js'}"]
    # The JS agent rows too: their scripts are found in the environment's copy.
    agents = Group("agent-js", (), (), npm="adapters-js", agents=("js-langgraph",))
    argv = SuiteOptions().agent_argv(env, agents, tmp_path / "out")
    assert argv[:2] == ["env", f"STREAM_HARNESS_JS={env.path / 'js'}"] and "js-langgraph" in argv
    assert "--jobs" not in argv  # one job unless asked (--agent-jobs)
    argv = SuiteOptions(agent_jobs=4).agent_argv(env, agents, tmp_path / "out")
    assert argv[argv.index("--jobs") + 1] == "4"
    # A new lock file is a new environment.
    (project / "adapters-js" / "package-lock.json").write_text('{"lockfileVersion": 3, "x": 1}')
    assert (
        ensure_env(group, tmp_path / "cache", ["-e", str(project)], runner, uv=None).path
        != env.path
    )


def test_a_js_groups_key_changes_with_every_source_it_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The environment runs its copy of the scripts (STREAM_HARNESS_JS), not the checkout's:
    # a cached one kept lib/agent-protocol.mjs as it was when built while the harness,
    # installed editable, had moved on, and `matrix --group agent-js` said "env cached".
    js = tmp_path / "adapters-js"
    monkeypatch.setattr("stream_harness.matrix.groups.bundled_js", lambda: js)
    for name, text in {
        "package.json": "{}",
        "package-lock.json": "{}",
        "lib/agent-protocol.mjs": "a",
        "adapters/openai.mjs": "b",
        "agents/mastra.mjs": "c",
    }.items():
        (js / name).parent.mkdir(parents=True, exist_ok=True)
        (js / name).write_text(text)
    group = Group("agent-js", (), (), npm="adapters-js", agents=("js-mastra",))
    keys = {group.key(["-e", "/src"])}
    for name in ("lib/agent-protocol.mjs", "adapters/openai.mjs", "agents/mastra.mjs"):
        (js / name).write_text((js / name).read_text() + "// changed")
        keys.add(group.key(["-e", "/src"]))
    (js / "lib" / "new.mjs").write_text("")  # a new script is copied too
    keys.add(group.key(["-e", "/src"]))
    (js / "lib" / "new.mjs").rename(js / "lib" / "renamed.mjs")  # same bytes, another name
    keys.add(group.key(["-e", "/src"]))
    (js / "package.json").write_text('{"name": "x"}')
    keys.add(group.key(["-e", "/src"]))
    assert len(keys) == 7  # each change a new key
    # What is not copied (the checkout's own install, a Python file beside) keeps the key.
    before = group.key(["-e", "/src"])
    (js / "node_modules" / "ai").mkdir(parents=True)
    (js / "node_modules" / "ai" / "index.js").write_text("x")
    (js / "__init__.py").write_text("")
    assert group.key(["-e", "/src"]) == before


def test_a_failed_group_ends_in_an_error_verdict_that_agrees_with_exit_2(
    tmp_path: Path, pins: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other groups' verdict may say passed; the last verdict line must say what the
    exit status says: the matrix is incomplete."""
    import argparse

    from stream_harness.matrix.groups import configure_parser, matrix_command

    monkeypatch.setattr("stream_harness.matrix.groups.find_uv", lambda: None)
    parser = argparse.ArgumentParser()
    configure_parser(parser)
    runner = FakeRunner({"one": _report("one", "1.0", "passed")}, fail=["libtwo==2.0"])
    args = parser.parse_args(
        [
            "--pins",
            str(pins),
            "--examples",
            "5",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--out",
            str(tmp_path / "report"),
            "--format",
            "plain",
        ]
    )
    assert matrix_command(args, runner=runner) == 2
    verdicts = [
        line for line in capsys.readouterr().out.splitlines() if line.startswith("verdict:")
    ]
    assert verdicts[-1].startswith("verdict: ERROR: group(s) two did not run")


def test_groups_start_longest_first_as_last_timed_and_results_keep_file_order(
    tmp_path: Path, pins: Path
) -> None:
    from stream_harness.matrix.groups import TIMINGS, load_timings, longest_first

    groups = load_groups(pins)
    cache = tmp_path / "cache"

    def run() -> tuple[list[str], list[str]]:
        runner = FakeRunner(
            {"one": _report("one", "1.0", "passed"), "two": _report("two", "2.0", "passed")}
        )
        result = run_matrix(
            groups, options=SuiteOptions(examples=5), cache=cache, project=["-e", "/repo"],
            runner=runner, uv=None,
        )  # fmt: skip
        started = [
            c[c.index("--adapter") + 1] for c in runner.calls if len(c) > 1 and c[1] == "report"
        ]
        return started, [r.group.name for r in result.runs]

    # Never timed: the pins file's order; the run then records each group's time.
    assert run() == (["one", "two"], ["one", "two"])
    assert set(load_timings(cache)) == {"one", "two"}
    (cache / TIMINGS).write_text('{"one": 12.0, "two": 640.5}')
    assert run() == (["two", "one"], ["one", "two"])
    # A group never timed goes first (it may be long); an unreadable file is no timings.
    three = Group("three", (), ("three",))
    assert [g.name for g in longest_first([*groups, three], {"one": 1.0, "two": 2.0})] == [
        "three",
        "two",
        "one",
    ]
    (cache / TIMINGS).write_text("not json")
    assert load_timings(cache) == {}


def test_the_subprocess_runner_reports_the_cpu_of_the_command_and_its_children() -> None:
    from stream_harness.matrix.groups import subprocess_runner

    # A child that burns CPU in a grandchild of its own, and says how much.
    script = (
        "import subprocess, sys, time\n"
        "burn = 'import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.3: pass'\n"
        "subprocess.run([sys.executable, '-c', burn], check=True)\n"
        "print('done'); print('to stderr', file=sys.stderr)\n"
    )
    done = subprocess_runner([sys.executable, "-c", script])
    assert done.returncode == 0 and done.stdout == "done\n" and done.stderr == "to stderr\n"
    cpu = getattr(done, "cpu_seconds", None)
    if not hasattr(os, "wait4"):
        assert cpu is None
        return
    assert cpu is not None and cpu >= 0.3  # the grandchild's CPU is counted
    failed = subprocess_runner([sys.executable, "-c", "import sys; sys.exit(3)"])
    assert failed.returncode == 3


def test_a_new_dependency_of_stream_harness_rebuilds_the_cached_environments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A checkout that adds a runtime dependency keeps its version number; an environment
    # cached before would lack the dependency and every group run in it would fail.
    import importlib.metadata

    import stream_harness.matrix.groups as matrix_module

    group = matrix_module.Group(name="g", description="", requirements=("x==1",), adapters=("a",))
    assert "websockets" in " ".join(
        matrix_module.harness_dependencies()
    )  # read from our installed metadata
    before = group.key(["-e", "/src"])
    real = importlib.metadata.requires
    monkeypatch.setattr(
        importlib.metadata,
        "requires",
        lambda name: [*(real(name) or []), "newdep>=1"] if name == "stream-harness" else real(name),
    )
    assert group.key(["-e", "/src"]) != before


def test_an_explored_matrix_replays_its_reports_failures_and_keeps_only_the_files_it_names(
    tmp_path: Path,
) -> None:
    # The report in --out holds the last exploration's shrunk failures: each explored
    # group replays them first (`agents --prior-report`), so a rerun keeps their schedules.
    out = tmp_path / "out"
    assert _prior_report(out) is None  # a first run has none
    out.mkdir()
    (out / "report.jsonl").write_text("{}")
    env = Env("agent-x", tmp_path / "env", False, 0.0, "venv+pip")
    group = Group("agent-x", (), (), agents=("x",), explore=10)
    prior = _prior_report(out)
    argv = SuiteOptions(explore=True, prior_report=prior).agent_argv(env, group, out)
    assert argv[argv.index("--prior-report") + 1] == str((out / "report.jsonl").resolve())
    assert "--prior-report" not in SuiteOptions(prior_report=prior).agent_argv(env, group, out)
    # A file no row names (an earlier shrink's, or a fixed failure's) is removed.
    saved = out / "explored"
    saved.mkdir()
    for name in ("kept.yaml", "stale.yaml"):
        (saved / name).write_text("kind: agent\n")
    row = AgentRow(agent="x", scenario="b~explored", protocol="p", check="A1", title="t",
                   outcome="failed", explored={"saved": "out/explored/kept.yaml"})  # fmt: skip
    report = Report(tool_version="1", started=T0, finished=T0, seed=0, examples=1, checks=(),
                    adapters=(), cases=(), agent_results=(row,))  # fmt: skip
    assert prune_saved_failures(report, saved) == 1
    assert sorted(p.name for p in saved.iterdir()) == ["kept.yaml"]
