"""``--run-timeout``: an in-process adapter that hangs is a ``timeout`` row (its failure,
not the harness's error) with its reproduce command, and the run goes on (issue 24, point 3;
issue 36, point 6).

The hanging adapter is a ``module:object`` of the test's own project folder; it hangs on
an Event the test releases at the end, so no thread outlives the test for long.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from stream_harness.adapters.processes.deadline import RunTimedOut, run_within
from stream_harness.adapters.protocol import AdapterResult, Headers, ReferenceAdapter
from stream_harness.cli.main import main
from stream_harness.conformance import SuiteError, run_conformance
from stream_harness.conformance.config import Config, ConfigError, load_config
from stream_harness.contract.facts import bundled_cassettes

pytest_plugins = ["pytester"]

HANGING = '''
import threading
import time

from stream_harness import ReferenceAdapter

RELEASE = threading.Event()


class Hang:
    """The reference, but a run on an OpenAI Chat Completions body does not return."""

    name = "hang"
    level = "event"

    def __init__(self):
        self._reference = ReferenceAdapter()
        self.protocols = self._reference.protocols

    def version(self):
        return "0"

    def run(self, protocol, chunks, *, status=200, headers=None):
        if protocol == "openai-completions":
            RELEASE.wait(120)
        return self._reference.run(protocol, chunks, status=status, headers=headers)
'''

OPENAI = "openai-completions/text_plain.yaml"
ANTHROPIC = "anthropic-messages/tool_call.yaml"


def test_a_hanging_adapter_is_a_timeout_with_its_reproduce_command_and_the_run_goes_on(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "timeout_hang_adapter.py").write_text(HANGING, encoding="utf-8")
    cassettes = bundled_cassettes()
    argv = [
        "check", "--adapter", "timeout_hang_adapter:Hang", "--adapter", "reference",
        "--cassettes", str(cassettes / ANTHROPIC), "--cassettes", str(cassettes / OPENAI),
        "--run-timeout", "0.5", "--examples", "3", "--jobs", "1", "--format", "plain",
    ]  # fmt: skip
    try:
        code = main(argv)
    finally:
        sys.modules["timeout_hang_adapter"].RELEASE.set()  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    assert code == 1, out
    lines = out.splitlines()
    timed_out = [
        i
        for i, line in enumerate(lines)
        if "did not return within the run timeout of 0.5 s" in line
    ]
    assert len(timed_out) == 1, out
    assert lines[timed_out[0]].startswith(f"TIMEOUT [hang] contract :: {OPENAI}#0: ")
    reproduce = next(line for line in lines[timed_out[0] :] if "reproduce:" in line)
    assert (
        "--adapter timeout_hang_adapter:Hang" in reproduce
        and f"{OPENAI} --interaction 0 --check contract" in reproduce
    )
    # The hanging adapter's other case was judged before the hang; the reference, after it, in full.
    assert not any(f"[hang] contract :: {ANTHROPIC}" in line for line in lines), out
    reference = next(line for line in lines if line.startswith("reference "))
    assert "errored" not in reference and "contract 2/2" in reference, reference
    verdict = lines[-1]
    assert (
        verdict.startswith("verdict: FAILED: 0 new failure(s), ")
        and " timed out, 0 errored" in verdict
    ), verdict
    hang = next(line for line in lines if line.startswith("hang "))
    assert "timeout" in hang and "errored" not in hang, hang


class _Blocking:
    """An adapter whose run waits for ``release`` while ``block`` is set."""

    name = "blocking"
    level = "event"

    def __init__(self) -> None:
        self.protocols = ReferenceAdapter().protocols
        self.block = threading.Event()
        self.release = threading.Event()
        self.runs = 0

    def version(self) -> str:
        return "0"

    def run(
        self, protocol: str, chunks: Sequence[bytes], *, status: int = 200, headers: Headers = None
    ) -> AdapterResult:
        self.runs += 1
        if self.block.is_set():
            self.release.wait(60)
        return ReferenceAdapter().run(protocol, chunks, status=status, headers=headers)


def _body() -> bytes:
    from stream_harness.recordings.cassette import load_cassette

    return load_cassette(bundled_cassettes() / OPENAI).interactions[0].response.body


def test_a_stuck_adapter_is_not_called_again_until_its_run_returns() -> None:
    adapter = _Blocking()
    body = _body()
    assert run_within(adapter, 5.0, "openai-completions", [body]).message is not None
    adapter.block.set()
    with pytest.raises(
        RunTimedOut, match=r"did not return within the run timeout of 0\.2 s"
    ) as first:
        run_within(adapter, 0.2, "openai-completions", [body], what="case one")
    assert first.value.outcome == "timed out" and "case one" in str(first.value)
    with pytest.raises(
        RunTimedOut, match=r"not run: the adapter is still stuck .*\(case one\)"
    ) as second:
        run_within(adapter, 0.2, "openai-completions", [body])
    assert second.value.outcome == "not run"
    assert adapter.runs == 2  # the second was never handed to the adapter
    adapter.block.clear()
    adapter.release.set()
    for _ in range(200):  # the stuck run returns; then the adapter is used again
        try:
            result = run_within(adapter, 5.0, "openai-completions", [body])
            break
        except RunTimedOut:
            threading.Event().wait(0.05)
    else:
        pytest.fail("the adapter stayed unusable after its stuck run returned")
    assert result.message is not None and adapter.runs == 3


def test_an_adapter_exception_still_becomes_a_crashed_result_and_none_is_unbounded() -> None:
    class Raising(_Blocking):
        def run(
            self,
            protocol: str,
            chunks: Sequence[bytes],
            *,
            status: int = 200,
            headers: Headers = None,
        ) -> AdapterResult:
            raise ValueError("broken parser")

    result = run_within(Raising(), 5.0, "openai-completions", [_body()])
    assert result.crashed is not None and result.crashed.startswith(
        "ValueError: broken parser (at "
    )
    assert run_within(_Blocking(), None, "openai-completions", [_body()]).message is not None


def test_adapters_that_bound_their_own_runs_run_on_the_callers_thread() -> None:
    seen: list[threading.Thread] = []

    class Own(_Blocking):
        bounds_own_runs = True

        def run(
            self,
            protocol: str,
            chunks: Sequence[bytes],
            *,
            status: int = 200,
            headers: Headers = None,
        ) -> AdapterResult:
            seen.append(threading.current_thread())
            return super().run(protocol, chunks, status=status, headers=headers)

    run_within(Own(), 5.0, "openai-completions", [_body()])
    assert seen == [threading.current_thread()]
    assert ReferenceAdapter.bounds_own_runs is True


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_a_bad_run_timeout_is_one_line_and_exit_2(
    project: Path, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--run-timeout", value, "--format", "plain"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"stream-harness: --run-timeout must be a number of seconds > 0, got {float(value):g}"
    ]
    with pytest.raises(SuiteError, match="run-timeout must be a number of seconds > 0"):
        run_conformance(
            "reference", cassettes=[str(bundled_cassettes() / OPENAI)], run_timeout=float(value)
        )


@pytest.mark.parametrize(("given", "expected"), [("2.5", 2.5), ("7", 7.0), (None, 30.0)])
def test_run_timeout_in_the_table(project: Path, given: str | None, expected: float) -> None:
    if given is not None:
        (project / "pyproject.toml").write_text(f"[tool.stream-harness]\nrun_timeout = {given}\n")
    assert load_config().run_timeout == expected == Config(run_timeout=expected).run_timeout


@pytest.mark.parametrize("given", ["0", "-2", "'10'", "true"])
def test_a_bad_run_timeout_in_the_table_names_the_key(project: Path, given: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.stream-harness]\nrun_timeout = {given}\n")
    with pytest.raises(ConfigError, match=r"run_timeout: expected a number of seconds > 0"):
        load_config()


def test_the_plugin_checks_its_run_timeout_as_the_cli_does(project: Path) -> None:
    (project / "test_nothing.py").write_text("def test_nothing():\n    pass\n")

    def pytest_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, "test_nothing.py"],
            cwd=project, capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    bad = pytest_run("--harness", "--harness-run-timeout=0")
    assert (
        bad.returncode == 4
        and "--harness-run-timeout must be a number of seconds > 0" in bad.stderr
    ), bad.stderr
    alone = pytest_run("--harness-run-timeout=5")
    assert (
        alone.returncode == 4
        and "--harness-run-timeout has no effect without --harness" in alone.stderr
    ), alone.stderr


def test_the_pytest_plugin_gives_a_hanging_adapter_the_same_verdict(
    pytester: pytest.Pytester,
) -> None:
    """Issue 36, point 6: the CLI and the pytest items label the same hang alike (the
    item fails with the line the CLI prints), so neither calls it the harness's error."""
    # Hangs 5 s at most: the inline run's modules are gone before the test could release it.
    pytester.makepyfile(timeout_hang_plugin=HANGING.replace("RELEASE.wait(120)", "RELEASE.wait(5)"))
    pytester.syspathinsert()
    cassettes = bundled_cassettes()
    result = pytester.runpytest(
        "--harness", "--harness-adapter", "timeout_hang_plugin:Hang", "--harness-cassettes", str(cassettes / OPENAI),
        "--harness-run-timeout", "0.5", "--harness-examples", "2", "-p", "no:randomly", "-p", "no:cacheprovider",
    )  # fmt: skip
    outcomes = result.parseoutcomes()
    assert (
        outcomes.get("failed", 0) >= 1 and "error" not in outcomes and "errors" not in outcomes
    ), outcomes
    result.stdout.fnmatch_lines(
        [
            f"TIMEOUT [[]hang[]] contract :: {OPENAI}#0: *did not return within the run timeout of 0.5 s*"
        ]
    )


class _Preparing(_Blocking):
    """An adapter whose ``prepare`` (a library's imports) takes ``delay`` seconds."""

    def __init__(self, delay: float = 0.0, error: Exception | None = None) -> None:
        super().__init__()
        self.delay, self.error = delay, error
        self.prepared: list[tuple[str, threading.Thread, int]] = []

    def prepare(self, protocol: str) -> None:
        self.prepared.append((protocol, threading.current_thread(), os.getpid()))
        time.sleep(self.delay)
        if self.error is not None:
            raise self.error


def test_prepare_is_outside_the_run_timeout_and_once_per_protocol() -> None:
    """The cause of LangChain's Vertex AI timeouts in the matrix: the first run in each
    worker imported google-cloud-aiplatform inside the bound. An import longer than the
    run timeout is no timeout when the adapter names it in prepare()."""
    adapter = _Preparing(delay=1.0)
    body = _body()
    for _ in range(2):
        assert run_within(adapter, 0.5, "openai-completions", [body]).message is not None
    assert adapter.prepared == [("openai-completions", threading.current_thread(), os.getpid())]
    assert adapter.runs == 2


def test_a_prepare_that_raises_leaves_the_failure_to_the_run() -> None:
    adapter = _Preparing(error=ImportError("no module named vertexai"))
    result = run_within(adapter, 5.0, "openai-completions", [_body()])
    assert result.message is not None and adapter.runs == 1 and len(adapter.prepared) == 1


def test_the_runner_prepares_before_forking_its_workers() -> None:
    """Each worker inherits the modules: prepare() ran in the parent, once per protocol of
    the cases the adapter covers (the workers' own calls find them loaded)."""
    from stream_harness.conformance import load_cases
    from stream_harness.conformance.runner import RunConfig, run_adapters

    cases, _ = load_cases([bundled_cassettes() / OPENAI, bundled_cassettes() / ANTHROPIC])
    adapter = _Preparing()
    adapter.protocols = frozenset({"openai-completions", "anthropic-messages"})
    runs = run_adapters([adapter], cases, RunConfig(examples=2), [None], jobs=2, slice_size=1)
    assert runs[0].results and all(r.outcome == "passed" for r in runs[0].results)
    parent = [(protocol, pid) for protocol, _, pid in adapter.prepared]
    assert parent == [("anthropic-messages", os.getpid()), ("openai-completions", os.getpid())]
