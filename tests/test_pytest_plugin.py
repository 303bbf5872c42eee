"""The pytest plugin, driven through pytester as a user's project would use it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from stream_harness.contract.facts import bundled_cassettes
from stream_harness.recordings.cassette import Interaction, Request, Response, dump_cassette

pytest_plugins = ["pytester"]


def _sse(*events: dict[str, object]) -> bytes:
    return b"".join(
        f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n".encode()
        for e in events
    )


BODY = _sse(
    {"type": "message_start", "message": {"id": "msg_1", "model": "m", "content": [], "usage": {"input_tokens": 3, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Héllo"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}},
    {"type": "message_stop"},
)  # fmt: skip


def _write_cassettes(root: Path) -> Path:
    folder = root / "cassettes" / "anthropic-messages"
    folder.mkdir(parents=True)
    inter = Interaction(
        index=0,
        request=Request("POST", "https://api.anthropic.com/v1/messages", {}, b'{"stream":true}'),
        response=Response(200, "OK", {"content-type": ["text/event-stream"]}, BODY),
    )
    dump_cassette([inter], folder / "hello.yaml")
    return root / "cassettes"


def test_harness_option_adds_one_item_per_case_and_check(pytester: pytest.Pytester) -> None:
    cassettes = _write_cassettes(pytester.path)
    result = pytester.runpytest(
        "--harness", "--harness-cassettes", str(cassettes), "--harness-examples", "2", "-v"
    )
    result.assert_outcomes(
        passed=5
    )  # contract, split-invariance, expected, stop-reason, truncation
    result.stdout.fnmatch_lines(
        ["stream-harness::reference::contract[[]anthropic-messages/hello.yaml#0[]] PASSED*"]
    )


def test_harness_items_are_selected_like_tests(pytester: pytest.Pytester) -> None:
    """Issue 24.5: node ids on the command line (any prefix), -k, --lf and --ff, and short
    summary lines without stray characters, under xdist too."""
    cassettes = _write_cassettes(pytester.path)
    pytester.makepyfile(mutant_adapter=MUTANT)
    pytester.syspathinsert()
    common = ["--harness-cassettes", str(cassettes), "--harness-examples", "2", "-p", "no:randomly"]
    both = [
        *common,
        "--harness",
        "--harness-adapter",
        "reference",
        "--harness-adapter",
        "mutant_adapter:DropsStart",
    ]
    first = pytester.runpytest(*both, "-rf")
    first.assert_outcomes(passed=7, failed=3)
    first.stdout.fnmatch_lines(
        [
            "FAILED stream-harness::mutant_adapter:DropsStart::contract[[]anthropic-messages/hello.yaml#0[]]*"
        ]
    )
    assert "FAILED ::" not in first.stdout.str()
    # --lf reruns exactly the failed harness items, --ff runs them first
    last = pytester.runpytest(*both, "--lf")
    last.assert_outcomes(failed=3, deselected=7)
    failed_first = pytester.runpytest(*both, "--ff", "-v")
    lines = [line for line in failed_first.stdout.lines if line.startswith("stream-harness::")]
    assert [("FAILED" in line) for line in lines] == [True] * 3 + [False] * 7
    # -k, and ids given as arguments (they imply --harness and select by prefix)
    pytester.runpytest(*both, "-k", "reference and contract").assert_outcomes(passed=1)
    one = "stream-harness::reference::truncation[anthropic-messages/hello.yaml#0]"
    pytester.runpytest(*common, "--harness-adapter", "reference", one).assert_outcomes(passed=1)
    prefix = pytester.runpytest(
        *common, "--harness-adapter", "reference", "stream-harness::reference"
    )
    prefix.assert_outcomes(passed=5)
    xdist = pytester.runpytest(*both, "-n", "2", "-rf")
    xdist.assert_outcomes(passed=7, failed=3)
    xdist.stdout.fnmatch_lines(["FAILED stream-harness::mutant_adapter:DropsStart::*"])


def test_a_gateway_rows_brackets_are_kept_out_of_the_node_id() -> None:
    from stream_harness.pytest_plugin.options import adapter_segment

    assert adapter_segment("litellm-proxy[anthropic-messages->openai-completions]") == (
        "litellm-proxy(anthropic-messages->openai-completions)"
    )


MUTANT = """
from stream_harness.adapters.protocol import AdapterResult, ReferenceAdapter
from stream_harness.contract.events import DoneEvent


class DropsStart:
    name = "drops-start"
    level = "event"

    def __init__(self):
        self.protocols = ReferenceAdapter().protocols

    def version(self):
        return "0"

    def run(self, protocol, chunks, *, status=200, headers=None):
        chunks = [c.decode("utf-8", "replace").encode() for c in chunks]
        result = ReferenceAdapter().run(protocol, chunks, status=status, headers=headers)
        return AdapterResult(message=result.message, events=result.events[1:])
"""


def test_a_broken_adapter_fails_with_rule_ids_and_a_reproduce_command(
    pytester: pytest.Pytester,
) -> None:
    cassettes = _write_cassettes(pytester.path)
    pytester.makepyfile(mutant_adapter=MUTANT)
    pytester.syspathinsert()
    result = pytester.runpytest(
        "--harness", "--harness-cassettes", str(cassettes), "--harness-adapter", "mutant_adapter:DropsStart",
        "--harness-check", "contract", "--harness-check", "split-invariance", "--harness-examples", "3",
    )  # fmt: skip
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "*C1*first event is 'text_start'*",
        "*reproduce: stream-harness check --adapter mutant_adapter:DropsStart --cassettes * --interaction 0 --check split-invariance --split cuts:*",
    ])  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--harness-check", "nope"], "*unknown check id*nope*"),
        (["--harness-adapter", "no_such_module:X"], "*cannot import no_such_module*"),
        (
            ["--harness-cassettes", "does-not-exist"],
            "*does-not-exist: no such cassette folder or file*",
        ),
        (["--harness-cassettes", "empty"], "*empty: no cassettes in it*"),
        (["--harness-cassettes", "garbage.yaml"], "*garbage.yaml*"),
        (
            ["--harness-check", "overflow-classification", "--harness-cassettes", "ok"],
            "*no check applies*",
        ),
    ],
)
def test_bad_input_is_a_collection_error_never_a_pass(
    pytester: pytest.Pytester, argv: list[str], needle: str
) -> None:
    (pytester.path / "empty").mkdir()
    (pytester.path / "garbage.yaml").write_text("{not: [valid", encoding="utf-8")
    _write_cassettes(pytester.path / "ok")
    result = pytester.runpytest("--harness", *argv)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([needle, "*1 error during collection*"])


def test_a_marker_naming_nothing_is_an_error(pytester: pytest.Pytester) -> None:
    (pytester.path / "empty").mkdir()
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.harness_cassettes("missing")
        def test_a(harness_cassette):
            pass

        @pytest.mark.harness_cassettes("empty")
        def test_b(harness_cassette):
            pass
        """
    )
    result = pytester.runpytest()
    assert result.ret != pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*missing: no such cassette folder or file*"])


def test_marker_parametrizes_a_users_test_and_the_transport_serves_the_body(
    pytester: pytest.Pytester,
) -> None:
    cassettes = _write_cassettes(pytester.path)
    pytester.makepyfile(
        textwrap.dedent(
            f"""
            import httpx, pytest

            @pytest.mark.harness_cassettes({str(cassettes)!r})
            def test_client(harness_cassette, harness_chunks, harness_transport):
                assert b"".join(harness_chunks) == harness_cassette.response.body
                with httpx.Client(transport=harness_transport) as client:
                    with client.stream("POST", "https://example.invalid/v1/messages") as r:
                        got = list(r.iter_bytes())
                assert b"".join(got) == harness_cassette.response.body
                assert r.headers["content-type"] == "text/event-stream"
            """
        )
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=21)  # the whole body and 20 splits of the plan
    result.stdout.fnmatch_lines(
        [
            "*test_client[[]hello.yaml#0-whole[]] PASSED*",
            "*test_client[[]hello.yaml#0-split20[]] PASSED*",
        ]
    )


def test_harness_chunks_tries_many_chunkings_so_a_split_bug_fails(
    pytester: pytest.Pytester,
) -> None:
    """Issue 24.4: a client that decodes each read on its own passes the whole body and
    fails where a split cuts the two bytes of "é": the fixture tries the splits that do."""
    cassettes = _write_cassettes(pytester.path)
    pytester.makepyfile(
        textwrap.dedent(
            f"""
            import pytest

            @pytest.mark.harness_cassettes({str(cassettes)!r}, splits=5)
            def test_naive_client(harness_cassette, harness_chunks):
                text = "".join(chunk.decode("utf-8", "replace") for chunk in harness_chunks)
                assert "Héllo" in text
            """
        )
    )
    result = pytester.runpytest("-v")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 1 and outcomes.get("failed", 0) >= 1, outcomes
    result.stdout.fnmatch_lines(["*test_naive_client[[]hello.yaml#0-whole[]] PASSED*"])
    assert outcomes["passed"] + outcomes["failed"] == 6


def test_the_suite_runs_under_xdist(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    cassettes = _write_cassettes(pytester.path)
    result = pytester.runpytest_subprocess(
        "--harness",
        "--harness-cassettes",
        str(cassettes),
        "--harness-examples",
        "2",
        "-n",
        "2",
        "-p",
        "xdist",
    )
    result.assert_outcomes(passed=5)


def test_a_missing_cassette_folder_without_harness_is_a_usage_error_not_a_pass(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile("def test_a():\n    pass\n")
    result = pytester.runpytest("--harness-cassettes", "does-not-exist")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*does-not-exist: no such cassette folder or file*"])


def test_the_stream_items_come_before_the_agent_items(pytester: pytest.Pytester) -> None:
    """The plugin is one module per plugin, registered in an order (stream_harness.pytest_plugin):
    a run with both kinds of item lists the stream items first, as the one module did."""
    cassettes = _write_cassettes(pytester.path)
    scenario = bundled_cassettes() / "agent-scenarios" / "weather_tool_call.yaml"
    result = pytester.runpytest(
        "--harness", "--harness-cassettes", str(cassettes), "--harness-agent", "reference",
        "--harness-agent-scenarios", str(scenario), "--co", "-q", "-p", "no:randomly",
    )  # fmt: skip
    roots = [
        line.split("::")[0] for line in result.stdout.lines if line.startswith("stream-harness")
    ]
    assert roots and roots == sorted(roots)  # stream-harness, then stream-harness-agents
    assert roots[0] == "stream-harness" and roots[-1] == "stream-harness-agents"
