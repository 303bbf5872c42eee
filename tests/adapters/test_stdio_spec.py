"""What specs/adapter-protocol.md promises a stranger, checked against the harness.

Issue 24 point 8: a stranger wrote a stdio adapter in Go from the page alone and hit gaps.
Each test here pins one promise the page now makes: the examples it shows are valid
messages, the case id travels in every ``run``, lines of several MB pass both ways, a
process that never answers ``started`` is a one-line load error within the start timeout,
the number of processes ``--jobs`` starts, conventions declared in the handshake, raw stop
values and raw errors on event-level terminals mapped by the harness's own tables, null
tool-call ids, and stray stdout quoted in a failure's report.
"""

from __future__ import annotations

import json
import os
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from stream_harness.adapters.processes.stdio import (
    START_TIMEOUT,
    START_TIMEOUT_ENV,
    StdioAdapter,
    collected,
    conventions_of,
    terminal_from_raw,
    validate,
)
from stream_harness.adapters.protocol import AdapterLoadError, safe_run
from stream_harness.conformance import RunConfig, bundled_cassettes, load_cases, run_conformance
from stream_harness.conformance.runner import run_adapters
from stream_harness.contract.events import EVENT_ADAPTER, DoneEvent, ErrorEvent, ToolCall
from stream_harness.contract.facts import specs_dir
from stream_harness.providers.reference import normalize
from stream_harness.providers.stop_reasons import map_stop_reason
from stream_harness.recordings.cassette import load_cassette

TOY = Path(__file__).resolve().parents[1] / "stdio_toy_adapter.py"
CASSETTES = bundled_cassettes()
OPENAI = CASSETTES / "openai-completions"
# The cases the toy handles in full (as in test_stdio_adapter.py).
TOY_CASES = ["length_stop", "text_plain", "tool_call_single", "parallel_tool_calls_interleaved"]


def toy(*args: str, **kwargs: Any) -> StdioAdapter:
    return StdioAdapter([sys.executable, str(TOY), *args], validate=True, **kwargs)


def response(path: Path) -> tuple[bytes, int, dict[str, list[str]]]:
    r = load_cassette(path).interactions[0].response
    return r.body, r.status, r.headers


def reference_terminal(protocol: str, path: Path) -> DoneEvent | ErrorEvent:
    body, status, headers = response(path)
    last = list(normalize(protocol, [body], status=status, headers=headers))[-1]
    assert isinstance(last, DoneEvent | ErrorEvent)
    return last


STARTED: dict[str, Any] = {
    "version": 1,
    "implementation": {"name": "fixed", "language": "python", "version": "1"},
    "protocols": ["openai-completions", "anthropic-messages"],
    "surface": "message",
}


def fixed_adapter(
    tmp_path: Path, reply: dict[str, Any], started: dict[str, Any] | None = None
) -> list[str]:
    """An adapter answering every run with ``reply`` (and its seq), logging each request
    it reads to ``requests.jsonl`` (the harness's side of the pipe, as the adapter saw it)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "started.json").write_text(json.dumps(started or STARTED))
    (tmp_path / "reply.json").write_text(json.dumps(reply))
    script = tmp_path / "fixed_adapter.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, pathlib, sys
            here = pathlib.Path(sys.argv[1])
            started = (here / "started.json").read_text()
            reply = json.loads((here / "reply.json").read_text())
            for line in sys.stdin:
                msg = json.loads(line)
                with open(here / "requests.jsonl", "a") as log:
                    log.write(line)
                if msg["cmd"] == "stop":
                    break
                if msg["cmd"] == "start":
                    print(started, flush=True)
                else:
                    print(json.dumps({**reply, "seq": msg["seq"]}), flush=True)
            """
        )
    )
    return [sys.executable, str(script), str(tmp_path)]


def requests_seen(tmp_path: Path) -> list[dict[str, Any]]:
    lines = (tmp_path / "requests.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


# -- the page's examples --------------------------------------------------------------------


def _examples() -> list[tuple[str, Any]]:
    """Every ```json block of the page, with the message kind it shows."""
    text = (specs_dir() / "adapter-protocol.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```json\n(.*?)```", text, flags=re.S):
        data = json.loads(block)
        if str(data.get("cmd", data.get("kind", ""))).startswith("agent_"):
            continue  # the agent kinds: tests/agents/test_stdio_agent_spec.py
        if "cmd" in data:
            kind = str(data["cmd"])
        elif "implementation" in data:
            kind = "started"
        elif "results" in data:
            kind = "session_result"
        else:
            kind = "result"
        out.append((kind, data))
    return out


def test_every_example_on_the_page_is_a_valid_message() -> None:
    examples = _examples()
    # Every kind of message is shown, so this test cannot pass on an empty page.
    assert {kind for kind, _ in examples} == {
        "start",
        "started",
        "run",
        "result",
        "stop",
        "session",
        "session_result",
    }
    for kind, data in examples:
        validate(kind, data)
        # And the harness reads each as the page says it does.
        if kind == "started":
            protocols = frozenset(data["protocols"])
            conventions_of(data["implementation"]["name"], protocols, data)
        elif kind == "result" and "events" in data:
            events = [
                *data["events"][:-1],
                terminal_from_raw("anthropic-messages", data["events"][-1], None),
            ]
            assert [EVENT_ADAPTER.validate_python(e).type for e in events] == [
                e["type"] for e in events
            ]
        elif kind == "result" and "message" in data:
            assert collected(data["message"]).content
        elif kind == "session_result":
            for result in data["results"]:
                validate("result", {"seq": data["seq"], **result})
                assert collected(result["message"]).content


def test_an_invalid_example_would_be_caught() -> None:
    # The honesty of the test above: the schemas refuse what the page must not show.
    with pytest.raises(Exception, match="run message invalid"):
        validate("run", {"cmd": "run", "seq": 1, "case": {"id": ""}})


# -- the case id ----------------------------------------------------------------------------


def test_each_run_message_names_its_case(tmp_path: Path) -> None:
    reply = {"message": {"content": [{"type": "text", "content": "x"}], "stop_reason": "stop"}}
    cases, _ = load_cases([OPENAI / "text_plain.yaml"])
    with StdioAdapter(fixed_adapter(tmp_path, reply), validate=True) as adapter:
        config = RunConfig(examples=2)
        ctx = config.context(cases[0], adapter)
        ctx.whole()
        ctx.run_cuts([5])
        # Outside a case (a direct run, stream-harness normalize --adapter): no id.
        body, status, headers = response(OPENAI / "text_plain.yaml")
        safe_run(adapter, "openai-completions", [body], status=status, headers=headers)
    runs = [m for m in requests_seen(tmp_path) if m["cmd"] == "run"]
    assert [m["case"].get("id") for m in runs] == [cases[0].id, cases[0].id, None]
    assert cases[0].id == "openai-completions/text_plain.yaml#0"


# -- line length ----------------------------------------------------------------------------


def _long_body(text_bytes: int) -> bytes:
    """A Chat Completions stream of one text of ``text_bytes`` characters (in 1 KB deltas)."""
    piece = "lorem ipsum " * 85 + "dolor"  # 1,025 characters, JSON-safe
    events = []
    for i in range(0, text_bytes, len(piece)):
        delta = {"content": piece[: text_bytes - i]}
        chunk = {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": delta}]}
        events.append(f"data: {json.dumps(chunk)}\n\n")
    end = {
        "id": "c1",
        "model": "m",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }
    events += [f"data: {json.dumps(end)}\n\n", "data: [DONE]\n\n"]
    return "".join(events).encode()


def test_lines_of_several_megabytes_pass_both_ways() -> None:
    body = _long_body(3_000_000)
    assert len(body) > 3_000_000
    headers = {"content-type": ["text/event-stream"]}
    with toy() as adapter:
        result = adapter.run("openai-completions", [body], status=200, headers=headers)
    # The request line carried the body (base64, 4 MB); the reply line its 3 MB of text.
    assert result.crashed is None and result.message is not None
    (block,) = result.message.content
    assert len(block.content) == 3_000_000  # type: ignore[union-attr]
    assert result.message.stop_reason == "stop"


# -- the start timeout ----------------------------------------------------------------------

_SILENT = "import sys, time\nsys.stdin.readline()\nprint('loading...', file=sys.stderr, flush=True)\ntime.sleep(3600)\n"


def test_the_start_timeout_is_a_minute_apart_from_the_run_timeout() -> None:
    assert START_TIMEOUT == 60.0
    with toy() as adapter:
        assert adapter.start_timeout == START_TIMEOUT and adapter.timeout == 30.0


def test_a_process_that_never_answers_started_is_a_load_error(tmp_path: Path) -> None:
    script = tmp_path / "silent.py"
    script.write_text(_SILENT)
    with pytest.raises(AdapterLoadError) as raised:
        StdioAdapter([sys.executable, str(script)], start_timeout=0.3)
    message = str(raised.value)
    assert "\n" not in message
    assert "no started reply within 0.3 s (the start timeout): loading..." in message


def test_the_start_timeout_from_the_environment_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from stream_harness.cli.main import main

    script = tmp_path / "silent.py"
    script.write_text(_SILENT)
    cassette = str(OPENAI / "text_plain.yaml")
    command = f"{sys.executable} {script}"
    monkeypatch.setenv(START_TIMEOUT_ENV, "0.3")
    code = main(["check", "--adapter-command", command, "--cassettes", cassette])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "no started reply within 0.3 s" in err[0]
    monkeypatch.setenv(START_TIMEOUT_ENV, "soon")
    code = main(["check", "--adapter-command", command, "--cassettes", cassette])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and f"{START_TIMEOUT_ENV}='soon'" in err[0]


def test_a_restart_that_never_answers_is_a_crashed_run_not_a_hang(tmp_path: Path) -> None:
    # Answers its first start, dies on its first run; every later start is silent.
    started = json.dumps(STARTED)
    script = tmp_path / "once.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import pathlib, sys, time
            marker = pathlib.Path(sys.argv[1]) / "started"
            sys.stdin.readline()
            if marker.exists():
                time.sleep(3600)
            marker.touch()
            print({started!r}, flush=True)
            sys.stdin.readline()
            sys.exit(6)
            """
        )
    )
    body, status, headers = response(OPENAI / "text_plain.yaml")
    with StdioAdapter([sys.executable, str(script), str(tmp_path)], start_timeout=0.3) as adapter:
        first = adapter.run("openai-completions", [body], status=status, headers=headers)
        second = adapter.run("openai-completions", [body], status=status, headers=headers)
    assert first.crashed is not None and first.crashed.startswith("adapter process exited (code 6)")
    assert second.crashed is not None
    assert second.crashed.startswith("no started reply within 0.3 s")


# -- processes per --jobs -------------------------------------------------------------------


def test_jobs_start_one_process_per_worker_and_stop_them(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    cases, _ = load_cases([OPENAI / f"{n}.yaml" for n in TOY_CASES])
    jobs = 2
    with toy("--pid-file", str(pid_file)) as adapter:
        parent = adapter._proc.popen.pid  # type: ignore[union-attr]
        run_adapters([adapter], cases, RunConfig(examples=2), [None], jobs=jobs, slice_size=1)
        pids = [int(p) for p in pid_file.read_text().split()]
        # The loading process (the handshake, kept for later sequential runs), plus one
        # per worker that ran a slice of this adapter: never more than jobs + 1.
        assert pids[0] == parent and len(set(pids)) == len(pids)
        assert 2 <= len(pids) <= jobs + 1
        workers = pids[1:]
    for pid in workers:  # each worker stopped its own process as it ended
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


# -- declared conventions -------------------------------------------------------------------


def test_declared_conventions_undo_the_librarys_vocabulary() -> None:
    cassettes = [OPENAI / f"{n}.yaml" for n in TOY_CASES]
    with toy("--own-words", "--declare") as adapter:
        assert adapter.conventions.library == "toy"
        run = run_conformance(adapter, cassettes=cassettes, examples=2)
    assert run.results and all(r.outcome == "passed" for r in run.results)
    # Without the declaration the same replies fail: "end" is no raw value of the wire.
    with (
        toy("--own-words") as adapter,
        pytest.raises(AssertionError, match="raw stop reason 'end'"),
    ):
        run_conformance(adapter, cassettes=cassettes, examples=2)


@pytest.mark.parametrize(
    ("conventions", "problem"),
    [
        (
            {"protocols": {"openai-completions": {"stop_reasons": {"end": "stop"}}}},
            "'source' is a required property",
        ),
        (
            {"protocols": {"openai-completions": {"source": "x", "align": ["tidy"]}}},
            "'tidy' is not one of",
        ),
        (
            {"protocols": {"ollama": {"source": "x"}}},
            "protocol(s) ['ollama'] not among the protocols it handles",
        ),
        ({"library": "x"}, "'protocols' is a required property"),
    ],
)
def test_a_bad_declaration_is_a_one_line_load_error_naming_the_adapter(
    tmp_path: Path, conventions: dict[str, Any], problem: str
) -> None:
    started = {**STARTED, "conventions": conventions}
    argv = fixed_adapter(tmp_path, {"errored": {"message": "unused"}}, started)
    with pytest.raises(AdapterLoadError) as raised:
        StdioAdapter(argv)
    message = str(raised.value)
    assert message.startswith("adapter 'fixed': ") and "\n" not in message
    assert problem in message


def test_a_bad_declaration_exits_2_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stream_harness.cli.main import main

    started = {
        **STARTED,
        "conventions": {
            "protocols": {"openai-completions": {"source": "x", "usage": {"missing": "never"}}}
        },
    }
    argv = fixed_adapter(tmp_path, {"errored": {"message": "unused"}}, started)
    code = main(
        [
            "check",
            "--adapter-command",
            " ".join(argv),
            "--cassettes",
            str(OPENAI / "text_plain.yaml"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "adapter 'fixed'" in err[0] and "missing" in err[0]


# -- the message rules ----------------------------------------------------------------------


def _message_of(tmp_path: Path, message: dict[str, Any], cassette: Path) -> Any:
    body, status, headers = response(cassette)
    with StdioAdapter(fixed_adapter(tmp_path, {"message": message}), validate=True) as adapter:
        return adapter.run("openai-completions", [body], status=status, headers=headers).message


def test_a_tool_call_without_id_takes_the_references_when_it_agrees(tmp_path: Path) -> None:
    cassette = OPENAI / "tool_call_single.yaml"
    ref = reference_terminal("openai-completions", cassette).message
    (call,) = [b for b in ref.content if isinstance(b, ToolCall)]
    assert call.id  # the wire's own id, which a library without ids cannot repeat
    agreeing = {"type": "tool_call", "id": None, "name": call.name, "arguments": call.arguments}
    got = _message_of(
        tmp_path / "a", {"content": [agreeing], "stop_reason": "tool_calls"}, cassette
    )
    assert got.content == [call]
    # A call that differs keeps a placeholder of the harness's, so the difference shows.
    other = {**agreeing, "arguments": {"other": 1}}
    got = _message_of(tmp_path / "b", {"content": [other], "stop_reason": "tool_calls"}, cassette)
    assert got.content[0].id == "toolcall_0" != call.id


def test_a_refusal_is_both_a_refusal_and_a_text_block(tmp_path: Path) -> None:
    cassette = OPENAI / "refusal.yaml"
    ref = reference_terminal("openai-completions", cassette).message
    (text,) = ref.content
    words = text.content  # type: ignore[union-attr]
    usage = {"input": ref.usage.input, "output": ref.usage.output}
    both = {
        "content": [{"type": "text", "content": words}],
        "refusal": words,
        "stop_reason": "stop",
        "usage": usage,
    }
    got = _message_of(tmp_path / "both", both, cassette)
    assert (got.content, got.stop_reason, got.provider_stop_reason) == (
        ref.content,
        "error",
        "stop",
    )
    assert got.usage == ref.usage and got.error_message is not None
    # Either half alone differs from the reference: the text is the content, the refusal
    # what makes the message an error.
    assert _message_of(tmp_path / "text", {**both, "refusal": None}, cassette).stop_reason == "stop"
    assert _message_of(tmp_path / "refusal", {**both, "content": []}, cassette).content == []


# -- raw stop values and raw errors on event-level terminals --------------------------------


def test_raw_values_on_a_terminal_give_the_references_terminal() -> None:
    """Every bundled case: the reference's terminal, stripped to what an adapter without the
    tables knows, comes back whole from the harness's tables."""
    cases, _ = load_cases([CASSETTES])
    seen: dict[str, int] = {}
    for case in cases:
        terminal = case.expected_events()[-1]
        assert isinstance(terminal, DoneEvent | ErrorEvent)
        data = terminal.model_dump(mode="json")
        message = data["message"]
        raw = message.pop("provider_stop_reason")
        data["raw_stop_reason"] = raw
        del data["reason"], message["stop_reason"]
        kind = "done"
        if isinstance(terminal, ErrorEvent):
            kind = "error kept"  # an in-stream error: the adapter states its message
            calls = any(isinstance(b, ToolCall) for b in terminal.message.content)
            from_stop = map_stop_reason(case.protocol, raw, has_tool_calls=calls)
            refused = terminal.error is not None and terminal.error.provider_type == "refusal"
            if case.status >= 400:
                kind = "http error"
                del data["error_message"], data["error"], message["error_message"]
                data["raw_error"] = {
                    "status": case.status,
                    "body": case.body.decode("utf-8", "replace"),
                }
            elif (
                raw is not None
                and not refused
                and from_stop.reason == terminal.reason
                and (terminal.error_message == from_stop.error_message)
            ):
                kind = "error from the stop value"  # the adapter sends a done, no error at all
                del data["error_message"], data["error"], message["error_message"]
                data["type"] = "done"
        filled = EVENT_ADAPTER.validate_python(terminal_from_raw(case.protocol, data, case.headers))
        assert filled == terminal, (case.id, kind)
        seen[kind] = seen.get(kind, 0) + 1
    assert set(seen) == {"done", "error kept", "http error", "error from the stop value"}, seen


EVENTS = [
    {"type": "start"},
    {"type": "text_start", "content_index": 0},
    {"type": "text_delta", "content_index": 0, "delta": "Hi"},
    {"type": "text_end", "content_index": 0, "content": "Hi"},
]
ANTHROPIC = CASSETTES / "anthropic-messages"


def _events_adapter(tmp_path: Path, terminal: dict[str, Any]) -> StdioAdapter:
    started = {**STARTED, "surface": "events"}
    events = EVENTS if terminal["type"] == "done" else EVENTS[:1]
    return StdioAdapter(
        fixed_adapter(tmp_path, {"events": [*events, terminal]}, started), validate=True
    )


def test_a_done_with_a_raw_stop_reason_through_the_protocol(tmp_path: Path) -> None:
    body, status, headers = response(ANTHROPIC / "max_tokens.yaml")
    terminal = {"type": "done", "raw_stop_reason": "max_tokens",
                "message": {"content": [{"type": "text", "content": "Hi"}]}}  # fmt: skip
    with _events_adapter(tmp_path, terminal) as adapter:
        result = adapter.run("anthropic-messages", [body], status=status, headers=headers)
    assert result.crashed is None and result.events is not None
    last = result.events[-1]
    assert isinstance(last, DoneEvent) and last.reason == "length"
    assert (last.message.stop_reason, last.message.provider_stop_reason) == ("length", "max_tokens")


def test_an_error_with_a_raw_error_through_the_protocol(tmp_path: Path) -> None:
    cassette = ANTHROPIC / "http_429_rate_limit.yaml"
    body, status, headers = response(cassette)
    terminal = {"type": "error", "raw_error": {"status": status, "body": body.decode()},
                "message": {"content": []}}  # fmt: skip
    with _events_adapter(tmp_path, terminal) as adapter:
        result = adapter.run("anthropic-messages", [body], status=status, headers=headers)
    want = reference_terminal("anthropic-messages", cassette)
    assert result.crashed is None and result.events is not None
    assert result.events[-1] == want
    assert (
        isinstance(want, ErrorEvent) and want.error is not None and want.error.kind == "rate_limit"
    )


def test_what_the_event_states_wins_over_the_raw_value() -> None:
    # The library's own mapping is under test: a stated reason is kept, not corrected.
    stated = {"type": "done", "reason": "stop", "raw_stop_reason": "max_tokens",
              "message": {"content": [], "stop_reason": "stop"}}  # fmt: skip
    filled = terminal_from_raw("anthropic-messages", stated, None)
    assert (filled["reason"], filled["message"]["stop_reason"]) == ("stop", "stop")
    assert filled["message"]["provider_stop_reason"] == "max_tokens"
    # A raw value that contradicts the stated one is a malformed reply.
    contradicting = {**stated, "message": {"content": [], "provider_stop_reason": "end_turn"}}
    with pytest.raises(Exception, match=r"contradicts message\.provider_stop_reason"):
        terminal_from_raw("anthropic-messages", contradicting, None)


def test_a_raw_stop_value_the_table_maps_to_error_makes_the_terminal_an_error() -> None:
    done = {"type": "done", "raw_stop_reason": "content_filter", "message": {"content": []}}
    filled = EVENT_ADAPTER.validate_python(terminal_from_raw("openai-completions", done, None))
    assert isinstance(filled, ErrorEvent) and filled.message.stop_reason == "error"
    assert filled.error is not None and filled.error.origin == "provider"


# -- stray stdout in a failure's report -----------------------------------------------------


def test_a_failing_result_shows_the_adapters_stray_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from stream_harness.cli.main import main

    monkeypatch.setenv("COLUMNS", "250")
    out = tmp_path / "report"
    code = main(
        [
            "report", "--adapter-command", f"{sys.executable} {TOY} --noise",
            "--cassettes", str(OPENAI / "vllm_reasoning.yaml"), "--examples", "2",
            "--jobs", "1", "--format", "plain", "--out", str(out),
        ]
    )  # fmt: skip
    assert code == 1
    noise = "toy: a library printing to stdout"
    assert f"stdout besides the protocol: {noise}" in capsys.readouterr().out
    lines = [json.loads(line) for line in (out / "report.jsonl").read_text().splitlines()]
    failures = [f for line in lines if line["kind"] == "result" for f in line.get("failures", [])]
    assert failures and all(f["stdout_noise"] == noise for f in failures)
    assert f'<pre class="noise">{noise}</pre>' in (out / "report.html").read_text()
    assert f"  - stdout besides the protocol: `{noise}`" in (out / "README.md").read_text()


def test_a_quiet_adapters_failures_quote_nothing(tmp_path: Path) -> None:
    with toy() as adapter, pytest.raises(AssertionError) as raised:
        run_conformance(adapter, cassettes=[OPENAI / "vllm_reasoning.yaml"], examples=2)
    assert "stdout besides the protocol" not in str(raised.value)
