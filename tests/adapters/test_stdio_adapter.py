"""The stdio adapter protocol (specs/adapter-protocol.md) from the harness side.

The implementation under test is ``tests/stdio_toy_adapter.py``, written from the
specification alone, run as a separate process. Every request is validated against the
schemas (``validate=True``); every reply always is.
"""

from __future__ import annotations

import itertools
import json
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.processes.stdio import (
    MAX_FAILED_STARTS,
    StdioAdapter,
    chunks_of,
    run_request,
    schema_dir,
    split_of,
    validate,
)
from stream_harness.adapters.protocol import AdapterLoadError
from stream_harness.conformance import (
    RunConfig,
    bundled_cassettes,
    load_cases,
    run_adapter,
    run_conformance,
)
from stream_harness.conformance.runner import run_adapters
from stream_harness.recordings.cassette import load_cassette

TOY = Path(__file__).resolve().parents[1] / "stdio_toy_adapter.py"
OPENAI = bundled_cassettes() / "openai-completions"
# The cases the toy handles in full (it knows no reasoning, refusals or in-band errors).
TOY_CASES = [
    "cache_usage", "context_length_exceeded_400", "empty_args_tool",
    "finish_without_done", "late_tool_name", "length_stop", "no_usage_tool_call",
    "parallel_tool_calls_interleaved", "rate_limit_429", "text_plain", "tool_call_single",
    "trailing_empty_args",
]  # fmt: skip


def toy(*args: str, timeout: float = 30.0) -> StdioAdapter:
    return StdioAdapter([sys.executable, str(TOY), *args], validate=True, timeout=timeout)


def body(name: str) -> tuple[bytes, int, dict[str, list[str]]]:
    response = load_cassette(OPENAI / f"{name}.yaml").interactions[0].response
    return response.body, response.status, response.headers


def run_text(adapter: StdioAdapter, chunks: list[bytes] | None = None) -> object:
    data, status, headers = body("text_plain")
    return adapter.run("openai-completions", chunks or [data], status=status, headers=headers)


def test_schemas_are_valid_json_schemas() -> None:
    names = sorted(p.name for p in schema_dir().glob("*.schema.json"))
    stream = ("result", "run", "session", "session_result", "start", "started", "stop")
    agent = ("agent_outcome", "agent_run", "agent_start", "agent_started")
    assert names == sorted(f"{n}.schema.json" for n in (*stream, *agent))
    for path in schema_dir().glob("*.schema.json"):
        schema = json.loads(path.read_text())
        jsonschema.validators.validator_for(schema).check_schema(schema)


def test_handshake_gives_name_protocols_level_and_version() -> None:
    with toy() as adapter:
        assert adapter.name == "toy-python"
        assert adapter.protocols == frozenset({"openai-completions"})
        assert adapter.level == "message"
        assert adapter.version().startswith("0.1 (python; python ")


def test_toy_adapter_passes_the_suite() -> None:
    with toy() as adapter:
        run = run_conformance(
            adapter, cassettes=[OPENAI / f"{n}.yaml" for n in TOY_CASES], examples=10
        )
    # Bundled cassettes keep their protocol folder in the case id, however they are given.
    assert {r.case.split("#")[0] for r in run.results} == {
        f"openai-completions/{n}.yaml" for n in TOY_CASES
    }
    assert all(r.outcome == "passed" for r in run.results)


def test_the_suite_finds_what_the_toy_gets_wrong() -> None:
    # Honesty of the test above: the same suite fails the toy where it is incomplete.
    with toy() as adapter, pytest.raises(AssertionError, match="vllm_reasoning"):
        run_conformance(adapter, cassettes=[OPENAI / "vllm_reasoning.yaml"], examples=2)


def test_parallel_runs_start_one_process_per_worker() -> None:
    cases, _ = load_cases([OPENAI / f"{n}.yaml" for n in TOY_CASES[:4]])
    config = RunConfig(examples=3)
    with toy() as adapter:
        sequential = run_adapter(adapter, cases, config).results
        parallel = run_adapters([adapter], cases, config, [None], jobs=2, slice_size=1)[0].results
        assert parallel == sequential
        # The parent's own process is still in step after the forked workers' runs.
        assert run_text(adapter).crashed is None  # type: ignore[attr-defined]


def test_chunks_reach_the_implementation_as_split() -> None:
    data, _, _ = body("text_plain")
    with toy() as adapter:
        whole = run_text(adapter)
        for chunks in (
            [data[i : i + 1] for i in range(len(data))],
            [data[:7], data[7:100], data[100:]],
        ):
            assert run_text(adapter, chunks) == whole


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ("crash", "adapter process exited (code 3): toy: crashing as asked"),
        ("garbage", "malformed reply: not JSON"),
        ("badseq", "malformed reply: seq"),
    ],
)
def test_a_broken_run_is_a_result_and_the_next_run_restarts(fault: str, expected: str) -> None:
    with toy("--fault", f"{fault}@2") as adapter:
        first = run_text(adapter)
        broken = run_text(adapter)
        after = run_text(adapter)
    assert broken.crashed is not None and broken.crashed.startswith(expected)  # type: ignore[attr-defined]
    assert broken.message is None  # type: ignore[attr-defined]
    assert after == first and first.crashed is None  # type: ignore[attr-defined]


def test_a_hung_implementation_is_killed_and_restarted() -> None:
    with toy("--fault", "hang@1", timeout=1.0) as adapter:
        hung = run_text(adapter)
        after = run_text(adapter)  # the restarted process hangs on its first run too
        assert hung.crashed is not None and hung.crashed.startswith("no reply within")  # type: ignore[attr-defined]
        assert after.crashed is not None  # type: ignore[attr-defined]
    with toy("--fault", "hang@2", timeout=1.0) as adapter:
        ok, hung, again = run_text(adapter), run_text(adapter), run_text(adapter)
    assert hung.crashed and not ok.crashed and again == ok  # type: ignore[attr-defined]


@pytest.mark.parametrize(("fault", "label"), [("hang", "timeout"), ("crash", "crashed")])
def test_a_run_the_process_did_not_finish_labels_the_checks_that_saw_it(
    fault: str, label: str
) -> None:
    # Issue 36, point 6: a stdio adapter that hangs or dies is that row's timeout or crash,
    # as an in-process adapter's is, never a plain failure nor the harness's error.
    cases, _ = load_cases([OPENAI / "text_plain.yaml"])
    with toy("--fault", f"{fault}@1", timeout=1.0) as adapter:
        results = run_adapter(adapter, cases, RunConfig(examples=2)).results
    outcomes = {r.check: r.outcome for r in results}
    # The first check ran the first run; the rest judged that run too (the cached whole body).
    assert set(outcomes.values()) == {label}, outcomes
    assert not any(r.ok for r in results)


def test_stray_console_lines_do_not_corrupt_the_stream() -> None:
    with toy() as clean, toy("--noise") as noisy:
        want, got = run_text(clean), run_text(noisy)
    assert got.message == want.message and got.crashed is None  # type: ignore[attr-defined]
    assert got.raw["stdout_noise"] == ["toy: a library printing to stdout"]  # type: ignore[attr-defined]


def test_a_library_raise_is_an_outcome_not_a_crash() -> None:
    data, status, headers = body("rate_limit_429")
    with toy() as adapter:
        result = adapter.run("openai-completions", [data], status=status, headers=headers)
    assert (
        result.crashed is None
        and result.raised is not None
        and result.raised.startswith("HTTPError: ")
    )
    assert result.terminal == "raised" and result.message is not None
    assert result.message.stop_reason == "error"


def _script(tmp_path: Path, source: str) -> list[str]:
    path = tmp_path / "adapter.py"
    path.write_text(textwrap.dedent(source))
    return [sys.executable, str(path), str(tmp_path)]


_STARTED = (
    '{"version": 1, "implementation": {"name": "once", "language": "python", "version": "1"}, '
    '"protocols": ["openai-completions"], "surface": "message"}'
)


def test_an_adapter_that_cannot_start_is_a_load_error(tmp_path: Path) -> None:
    with pytest.raises(AdapterLoadError, match=r"did not start: .*No such file"):
        StdioAdapter(str(tmp_path / "missing"))
    with pytest.raises(AdapterLoadError, match=r"exited \(code 4\): no node here"):
        StdioAdapter(
            _script(tmp_path, "import sys; print('no node here', file=sys.stderr); sys.exit(4)\n")
        )
    with pytest.raises(AdapterLoadError, match="started message invalid at version"):
        StdioAdapter(
            _script(tmp_path, f"input(); print({_STARTED.replace('1,', '2,', 1)!r}, flush=True)\n")
        )


def test_given_up_after_repeated_failed_starts(tmp_path: Path) -> None:
    # Answers the first start, then dies on its run; every later start fails.
    argv = _script(
        tmp_path,
        f"""
        import pathlib, sys
        marker = pathlib.Path(sys.argv[1]) / "started"
        if marker.exists():
            sys.exit(5)
        marker.touch()
        input()
        print({_STARTED!r}, flush=True)
        input()
        sys.exit(6)
        """,
    )
    adapter = StdioAdapter(argv)
    outcomes = [run_text(adapter).crashed for _ in range(MAX_FAILED_STARTS + 2)]  # type: ignore[attr-defined]
    assert outcomes[0] is not None and outcomes[0].startswith("adapter process exited (code 6)")
    assert all(o is not None and "code 5" in o for o in outcomes[1 : MAX_FAILED_STARTS + 1])
    assert outcomes[-1] == f"given up after {MAX_FAILED_STARTS} failed starts"


def test_errored_reply_is_a_crash_of_that_run(tmp_path: Path) -> None:
    argv = _script(
        tmp_path,
        f"""
        import json, sys
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["cmd"] == "start":
                print({_STARTED!r}, flush=True)
            elif msg["cmd"] == "run":
                print(json.dumps({{"seq": msg["seq"], "errored": {{"message": "TypeError: x"}}}}), flush=True)
        """,
    )
    with StdioAdapter(argv) as adapter:
        assert run_text(adapter).crashed == "adapter error: TypeError: x"  # type: ignore[attr-defined]


def test_load_adapter_takes_a_command() -> None:
    adapter = load_adapter(f"cmd:{sys.executable} {TOY} --name toy-two")
    try:
        assert adapter.name == "toy-two"
    finally:
        adapter.close()  # type: ignore[attr-defined]


def test_cli_adapter_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from stream_harness.cli.main import main

    monkeypatch.setenv("COLUMNS", "250")
    cassette = str(OPENAI / "text_plain.yaml")
    code = main(
        [
            "check",
            "--adapter-command",
            f"{sys.executable} {TOY}",
            "--cassettes",
            cassette,
            "--examples",
            "2",
            "--jobs",
            "1",
        ]
    )
    assert code == 0
    assert "toy-python" in capsys.readouterr().out
    code = main(["check", "--adapter-command", "/nonexistent/adapter", "--cassettes", cassette])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "did not start" in err[0]


@given(
    data=st.binary(max_size=300),
    cuts=st.lists(st.integers(1, 299), max_size=20),
    every=st.integers(1, 50),
)
def test_split_round_trips_and_requests_validate(data: bytes, cuts: list[int], every: int) -> None:
    bounds = [0, *sorted({c for c in cuts if c < len(data)}), len(data)]
    for chunks in (
        [data[a:b] for a, b in itertools.pairwise(bounds)],
        [data[i : i + every] for i in range(0, len(data), every)],
    ):
        joined, split = split_of(chunks)
        assert joined == data
        assert [c for c in chunks_of(joined, split) if c] == [c for c in chunks if c]
        validate(
            "run",
            run_request(
                1, "openai-completions", chunks, 200, {"content-length": ["9"], "x": ["1", "2"]}
            ),
        )


def test_one_byte_chunks_cost_no_more_than_the_body() -> None:
    data, status, headers = body("parallel_tool_calls_interleaved")
    request = run_request(
        1, "openai-completions", [data[i : i + 1] for i in range(len(data))], status, headers
    )
    assert request["case"]["split"] == {"every": 1}
    assert len(json.dumps(request)) < 1.5 * len(data) + 2000
