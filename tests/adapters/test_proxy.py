"""Gateways wire to wire (harness/stream_harness/adapters/gateways): the upstream, the process lifecycle, the checks.

The lifecycle runs a real process on 127.0.0.1 (tests/fake_gateway.py, a pass-through
with failure modes), so starting, readiness, a gateway that never becomes ready, one that
dies, and the port being released are tested without LiteLLM. The checks are run on
hand-made gateway outputs that break one rule each, next to a faithful one that passes.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from stream_harness.adapters.gateways import compare, rawhttp
from stream_harness.adapters.gateways.adapter import (
    Exchange,
    ProxyAdapter,
    ProxySession,
    stable_ids,
)
from stream_harness.adapters.gateways.catalog import GATEWAYS, Gateway, all_rows, litellm_config
from stream_harness.adapters.gateways.process import GatewayError, GatewayProcess, port_is_free
from stream_harness.adapters.gateways.rawhttp import RawResponse, Transfer
from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.protocol import AdapterLoadError, AdapterResult
from stream_harness.conformance.cases import Case, load_cases
from stream_harness.conformance.checks import CHECKS_BY_ID
from stream_harness.conformance.checks import gateway as gateway_checks
from stream_harness.conformance.checks.engine import CheckContext
from stream_harness.conformance.checks.gateway import (
    check_proxy_error_status,
    check_proxy_streaming,
    check_proxy_upstream_cut,
)
from stream_harness.conformance.checks.stream import check_expected, check_stop_reason
from stream_harness.contract.events import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from stream_harness.providers.reference import normalize
from stream_harness.server.loopback import (
    BYTE_HEAD_LIMIT,
    BYTE_PIECES,
    TRANSPORT_CUTS,
    Chunked,
    Hit,
    LoopbackServer,
    Whole,
)
from stream_harness.server.upstream import (
    MISMATCH_STATUS,
    ProxyUpstream,
    Reply,
    event_frames,
    gemini_reframed,
    gemini_values,
    protocol_of_path,
)

REPO = Path(__file__).resolve().parents[2]
CASSETTES = REPO / "cassettes"
FAKE = Path(__file__).resolve().parents[1] / "fake_gateway.py"
ANTHROPIC, CHAT, RESPONSES, GOOGLE = (
    "anthropic-messages",
    "openai-completions",
    "openai-responses",
    "google-generative-ai",
)


def case_of(rel: str) -> Case:
    cases, _ = load_cases([CASSETTES / rel])
    return cases[0]


# ---------------------------------------------------------------------------------------
# The upstream
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "protocol"),
    [
        ("/v1/messages", ANTHROPIC),
        ("/v1/chat/completions", CHAT),
        ("/v1/responses", RESPONSES),
        ("/v1beta/models/gemini-2.5-flash:streamGenerateContent", GOOGLE),
        ("/models/gemini-2.5-flash:streamGenerateContent", GOOGLE),
        ("/health", None),
    ],
)
def test_a_request_is_matched_by_the_protocol_of_its_path(path: str, protocol: str | None) -> None:
    assert protocol_of_path(path) == protocol


def post(url: str, path: str, query: str = "") -> tuple[int, bytes, str | None]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request("POST", path + query, body=b"{}", headers={"content-type": "application/json"})
        resp = conn.getresponse()
        try:
            data = resp.read()
        except http.client.IncompleteRead as exc:
            return resp.status, bytes(exc.partial), "incomplete"
        return resp.status, data, None
    finally:
        conn.close()


def test_the_upstream_answers_its_protocol_and_names_a_mismatch() -> None:
    with ProxyUpstream() as up:
        up.answer(
            Reply(
                ANTHROPIC,
                200,
                [("request-id", "r1")],
                [b"event: a\ndata: {}\n\n", b"event: b\ndata: {}\n\n"],
            )
        )
        status, body, problem = post(up.url, "/v1/messages")
        assert (status, body, problem) == (
            200,
            b"event: a\ndata: {}\n\nevent: b\ndata: {}\n\n",
            None,
        )
        assert len(up.hits[0].sent) == 2 and up.hits[0].protocol == ANTHROPIC
        status, body, _ = post(up.url, "/v1/responses")
        assert status == MISMATCH_STATUS
        assert (
            "the gateway called /v1/responses (openai-responses), the cassette has anthropic-messages"
            in body.decode()
        )


def test_a_side_request_is_answered_404_and_is_no_mismatch() -> None:
    with ProxyUpstream() as up:
        up.answer(Reply(GOOGLE, chunks=[b"data: {}\n\n"]))
        host, port = up.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("GET", "/v1/models/gemini-2.5-flash")
        assert conn.getresponse().status == 404
        conn.close()
        assert [h.status for h in up.hits] == [404]


def raw_post(url: str, path: str) -> RawResponse:
    host, port = url.removeprefix("http://").split(":")
    return rawhttp.request(
        host, int(port), "POST", path, b"{}", {"connection": "close"}, timeout=10
    )


@pytest.mark.parametrize(
    ("cut", "end", "received"),
    [
        ("close", "eof", b"data: 1\n\ndata: 2\n\n"),
        ("reset", "reset", b"data: 1\n\ndata: 2\n\n"),
        ("inside-chunk", "eof-inside-chunk", b"data: 1\n\ndata"),
        ("clean", "complete", b"data: 1\n\ndata: 2\n\n"),
        ("none", "complete", b"data: 1\n\ndata: 2\n\n"),
    ],
)
def test_each_cut_ends_the_upstream_body_as_it_says_and_the_raw_reader_tells_which(
    cut: str, end: str, received: bytes
) -> None:
    with ProxyUpstream() as up:
        up.answer(Reply(CHAT, chunks=[b"data: 1\n\n", b"data: 2\n\n"], cut=cut))  # type: ignore[arg-type]
        resp = raw_post(up.url, "/v1/chat/completions")
        assert (resp.status, resp.transfer.framing, resp.transfer.end) == (200, "chunked", end)
        assert b"".join(resp.chunks) == received
        assert (resp.problem() is None) == (end == "complete")
        assert up.hits[0].sent_ends == [9, 18] if cut != "inside-chunk" else [9, 13]
    if cut in ("close", "inside-chunk", "clean"):
        assert post_incomplete(cut)


def post_incomplete(cut: str) -> bool:
    """http.client agrees on FIN cuts (the reset is what it cannot name)."""
    with ProxyUpstream() as up:
        up.answer(Reply(CHAT, chunks=[b"data: 1\n\n", b"data: 2\n\n"], cut=cut))  # type: ignore[arg-type]
        return (post(up.url, "/v1/chat/completions")[2] == "incomplete") == (cut != "clean")


def test_the_raw_reader_reports_a_short_content_length_and_a_close_delimited_end() -> None:
    class Short:
        methods = ("POST",)

        def __init__(self, answer: Whole) -> None:
            self.answer = answer

        def respond(self, hit: Hit) -> Whole:
            return self.answer

    with LoopbackServer(Short(Whole(200, [("content-length", "10")], b"abc"))) as server:
        resp = raw_post(server.url, "/x")
        assert (resp.transfer.framing, resp.transfer.end, resp.chunks) == (
            "content-length",
            "eof",
            [b"abc"],
        )
    with LoopbackServer(Short(Whole(200, [("connection", "close")], b"abc"))) as server:
        resp = raw_post(server.url, "/x")
        assert (resp.transfer.framing, resp.transfer.end, resp.chunks) == (
            "close-delimited",
            "complete",
            [b"abc"],
        )


def test_byte_pacing_writes_the_body_a_few_bytes_at_a_time_and_logs_where_events_end() -> None:
    body = case_of("anthropic-messages/tool_call.yaml").body
    with ProxyUpstream() as up:
        up.answer(Reply(ANTHROPIC, chunks=[body], delay=0.001, pacing="bytes"))
        resp = raw_post(up.url, "/v1/messages")
        assert resp.transfer.complete and b"".join(resp.chunks) == body
        hit = up.hits[0]
        sizes = [b - a for a, b in zip([0, *hit.sent_ends], hit.sent_ends, strict=False)]
        assert all(BYTE_PIECES[0] <= n <= BYTE_PIECES[1] for n in sizes[:-1]) and sum(sizes) == len(
            body
        )
        assert (
            len(hit.sent) == len(sizes)
            and hit.event_ends[-1] == len(body)
            and len(hit.event_ends) == 13
        )
    big = b"data: " + b"x" * 6000 + b"\n\n"
    pieces = list(Chunked(200, [], [big], pacing="bytes").writes())
    assert sum(len(p) for p in pieces[:-1]) == BYTE_HEAD_LIMIT and b"".join(pieces) == big


def test_gemini_framing_follows_the_request() -> None:
    body = case_of("google-generative-ai/tool_call.yaml").body
    values = gemini_values(body)
    assert values
    as_array = gemini_reframed(body, sse=False) if body.lstrip()[:1] != b"[" else body
    assert as_array is not None and json.loads(as_array) == values
    as_sse = gemini_reframed(as_array, sse=True)
    assert as_sse is not None and gemini_values(as_sse) == values
    with ProxyUpstream() as up:
        up.answer(Reply(GOOGLE, chunks=[as_sse]))
        _, served, _ = post(up.url, "/v1beta/models/g:streamGenerateContent", "?key=k")
        assert served.lstrip().startswith(b"[") and json.loads(served) == values
        _, served, _ = post(up.url, "/models/g:streamGenerateContent", "?alt=sse")
        assert served.startswith(b"data: ")


def test_event_frames_cut_after_each_event() -> None:
    assert event_frames(b"data: 1\n\ndata: 2\r\n\r\ndata: 3") == [
        b"data: 1\n\n",
        b"data: 2\r\n\r\n",
        b"data: 3",
    ]
    assert event_frames(b'[{"a":1},\n{"b":2}]') == [b'[{"a":1},\n', b'{"b":2}]']


# ---------------------------------------------------------------------------------------
# The lifecycle, on a real process
# ---------------------------------------------------------------------------------------


def fake_gateway(mode: str, *, start_timeout: float = 20.0) -> Gateway:
    def process(upstream: str, folder: Path) -> GatewayProcess:
        return GatewayProcess(
            "fake",
            lambda port: [sys.executable, str(FAKE), str(port), upstream, mode],
            ready_path="/ready",
            log_dir=folder,
            start_timeout=start_timeout,
        )

    return Gateway(
        name="fake",
        routes={ANTHROPIC: (ANTHROPIC,), CHAT: (CHAT,)},
        find=lambda: None,
        version=lambda: "0.0",
        process=process,
        model=lambda proto: "m",
        headers=lambda proto, up, proc: {},
    )


@pytest.fixture
def fake_adapter(tmp_path: Path) -> Iterator[Callable[..., ProxyAdapter]]:
    made: list[ProxyAdapter] = []

    def make(mode: str = "ok", upstream: str = ANTHROPIC, **kw: Any) -> ProxyAdapter:
        gw = fake_gateway(mode, **kw)
        adapter = ProxyAdapter(
            gw, upstream, upstream, session=ProxySession(gw, tmp_path / mode), timeout=10
        )
        made.append(adapter)
        return adapter

    yield make
    for a in made:
        a.close()


def run_case(adapter: ProxyAdapter, case: Case) -> AdapterResult:
    return adapter.run(case.protocol, [case.body], status=case.status, headers=case.headers)


def test_a_gateway_starts_serves_and_stops_with_its_port_released(
    fake_adapter: Callable[..., ProxyAdapter],
) -> None:
    adapter = fake_adapter()
    case = case_of("anthropic-messages/tool_call.yaml")
    result = run_case(adapter, case)
    assert result.crashed is None and result.terminal == "done"
    assert result.message == case.expected_terminal().message
    proc = adapter.session.process
    assert proc is not None and proc.alive() and proc.started_in is not None
    port, popen_pid, log = proc.port, proc.popen.pid if proc.popen else 0, proc.log_path
    assert not port_is_free(port)
    run_case(adapter, case)
    assert adapter.session.starts == 1  # one process for the session, not one per case
    adapter.close()
    assert not proc.alive() and port_is_free(port)
    with pytest.raises(ProcessLookupError):
        os.kill(popen_pid, 0)  # reaped, not a zombie
    assert log is not None and "POST /v1/messages" in log.read_text()


def test_a_gateway_that_never_becomes_ready_is_a_crashed_result_and_is_killed(
    fake_adapter: Callable[..., ProxyAdapter],
) -> None:
    adapter = fake_adapter("never-ready", start_timeout=1.0)
    result = run_case(adapter, case_of("anthropic-messages/plain_text.yaml"))
    assert result.crashed is not None and "not ready on /ready within 1 s" in result.crashed
    assert adapter.session.process is None
    again = run_case(adapter, case_of("anthropic-messages/plain_text.yaml"))
    assert again.crashed is not None  # after MAX_FAILED_STARTS the session gives up fast
    assert "given up" in run_case(adapter, case_of("anthropic-messages/plain_text.yaml")).crashed  # type: ignore[operator]


def test_a_gateway_that_exits_at_start_says_why(tmp_path: Path) -> None:
    proc = fake_gateway("exit").process("http://127.0.0.1:9", tmp_path)
    with pytest.raises(
        GatewayError, match=r"exited with code 3 before it was ready: .*refusing to start"
    ):
        proc.start()
    assert not proc.alive() and port_is_free(proc.port)


def test_a_gateway_that_dies_mid_run_is_a_crashed_result_then_restarted(
    fake_adapter: Callable[..., ProxyAdapter],
) -> None:
    """It dies on every request: the exchange is tried on a restarted gateway, dies again,
    and the crash says both."""
    adapter = fake_adapter("die-on-request")
    result = run_case(adapter, case_of("anthropic-messages/plain_text.yaml"))
    assert result.crashed is not None
    assert "the gateway died (exit code 9)" in result.crashed
    assert result.crashed.endswith("(the first try too: it died (exit code 9))")
    first = adapter.session.process
    assert first is not None and not first.alive() and adapter.session.starts == 2
    run_case(adapter, case_of("anthropic-messages/plain_text.yaml"))
    assert adapter.session.starts == 4 and port_is_free(first.port)


def test_a_gateway_that_crashes_once_is_judged_on_the_retry(
    fake_adapter: Callable[..., ProxyAdapter], tmp_path: Path
) -> None:
    """Issue 36: LiteLLM's runtime segfaulted once in a whole-matrix run on a case it
    passes every other time, and the report read otherwise than the run before. The
    exchange the gateway died in is made again on a restarted gateway; the first try is
    kept in the result's raw view, not in the verdict."""
    adapter = fake_adapter(f"segfault-once:{tmp_path / 'crashed'}")
    case = case_of("anthropic-messages/plain_text.yaml")
    result = run_case(adapter, case)
    assert result.crashed is None and result.message == case.expected_terminal().message
    assert adapter.session.starts == 2
    first_try = str(result.raw["first_try"])
    assert "the gateway died (killed by SIGSEGV)" in first_try


def test_a_gateway_internal_error_before_the_upstream_is_judged_on_the_retry(
    fake_adapter: Callable[..., ProxyAdapter], tmp_path: Path
) -> None:
    """Issue 36: LiteLLM once answered 500 with a ContextVar's repr before calling the
    upstream, on a case it passes every other time. That exchange is made again; a gateway
    that answers so every time is a crashed result that says it did twice."""
    case = case_of("anthropic-messages/plain_text.yaml")
    once = run_case(fake_adapter(f"internal-500-once:{tmp_path / 'failed'}"), case)
    assert once.crashed is None and once.message == case.expected_terminal().message
    assert str(once.raw["first_try"]).startswith(
        "the gateway answered 500 without calling the upstream"
    )
    always = fake_adapter("internal-500")
    result = run_case(always, case)
    assert result.crashed is not None and result.crashed.endswith(
        "(the first try too: it answered 500 without calling the upstream)"
    )
    assert always.session.starts == 1  # alive throughout: no restart


def test_a_gateway_killed_between_runs_is_restarted(
    fake_adapter: Callable[..., ProxyAdapter],
) -> None:
    adapter = fake_adapter()
    case = case_of("anthropic-messages/plain_text.yaml")
    assert run_case(adapter, case).terminal == "done"
    proc = adapter.session.process
    assert proc is not None and proc.popen is not None
    os.killpg(proc.popen.pid, signal.SIGKILL)
    proc.popen.wait()
    assert run_case(adapter, case).terminal == "done"
    assert adapter.session.starts == 2


def test_a_gateway_calling_another_upstream_protocol_is_named(
    fake_adapter: Callable[..., ProxyAdapter],
) -> None:
    adapter = fake_adapter()
    # The fake forwards to the client's path; serving it a chat body under /v1/messages
    # is what a gateway calling the wrong upstream endpoint looks like.
    case = case_of("openai-completions/tool_call_single.yaml")
    result = adapter.run(CHAT, [case.body])
    assert (
        result.crashed
        == "the gateway called /v1/messages (anthropic-messages), the cassette has openai-completions"
    )


def test_the_gateway_checks_pass_on_a_faithful_streaming_pass_through(
    fake_adapter: Callable[..., ProxyAdapter],
) -> None:
    adapter = fake_adapter()
    ctx = CheckContext(case_of("anthropic-messages/tool_call.yaml"), adapter)
    assert check_expected(ctx) == []
    assert check_proxy_upstream_cut(ctx) == []
    assert check_proxy_streaming(ctx) == []


def test_a_buffering_gateway_fails_the_streaming_check(
    fake_adapter: Callable[..., ProxyAdapter],
) -> None:
    """It buffers at every pace; the first pacing that confirms it is the finding (which
    later pacings also fail differs from run to run on a real gateway), and the failure
    holds nothing measured: the same on every run."""
    ctx = CheckContext(case_of("anthropic-messages/tool_call.yaml"), fake_adapter("buffer"))
    (failure,) = check_proxy_streaming(ctx)
    assert failure.message.startswith("the gateway buffered: with events 200 ms apart")
    observed = json.loads(failure.observed or "{}")
    assert observed == {"ttfb_ratio": ">= 1", "held_events": 13}
    expected = json.loads(failure.expected or "{}")
    assert expected["ttfb_ratio"] == "< 1" and expected["held_events"].startswith("<= ")
    assert re.search(r"\d\.\d\d", failure.message) is None


def test_a_streaming_gateway_late_once_under_load_passes_on_the_confirming_run(
    fake_adapter: Callable[..., ProxyAdapter],
) -> None:
    # Issue 36: on two loaded cores a streaming gateway's first byte came late in one whole
    # matrix run and not in the next. A failing paced run is run again before it counts.
    buffering, streaming = fake_adapter("buffer"), fake_adapter()
    calls: list[int] = []

    class LateOnce:
        def __getattr__(self, name: str) -> Any:
            return getattr(streaming, name)

        def exchange(self, *args: Any, **kwargs: Any) -> Any:
            calls.append(1)
            return (buffering if len(calls) == 1 else streaming).exchange(*args, **kwargs)

    ctx = CheckContext(case_of("anthropic-messages/tool_call.yaml"), LateOnce())  # type: ignore[arg-type]
    assert check_proxy_streaming(ctx) == []
    assert len(calls) == 4  # three pacings, the first confirmed once


@pytest.mark.parametrize(
    "case", ["anthropic-messages/tool_call.yaml", "openai-completions/tool_call_single.yaml"]
)
def test_a_gateway_that_ends_a_cut_upstream_cleanly_fails_the_cut_check_in_every_cut_mode(
    fake_adapter: Callable[..., ProxyAdapter], case: str
) -> None:
    """The client's normalizer ends the stream in error (no terminal event) whichever way
    the gateway closes; what the check reads is the transfer: a clean, complete chunked
    message with no error event is the gateway passing a cut stream off as whole."""
    c = case_of(case)
    found = check_proxy_upstream_cut(
        CheckContext(c, fake_adapter("clean-on-cut", upstream=c.protocol))
    )
    assert len(found) == len(TRANSPORT_CUTS)
    for failure, cut in zip(found, TRANSPORT_CUTS, strict=True):
        assert "complete HTTP message (chunked) with no error event" in failure.message
        observed = json.loads(failure.observed or "{}")
        assert (
            observed["cut"] == cut
            and observed["client_transfer"] == "complete (chunked)"
            and not observed["error_carried"]
        )
        assert failure.path == "client_transfer"


def test_a_gateway_that_sends_an_error_event_on_a_cut_passes_the_cut_check(
    fake_adapter: Callable[..., ProxyAdapter],
) -> None:
    ctx = CheckContext(case_of("anthropic-messages/tool_call.yaml"), fake_adapter("error-on-cut"))
    assert check_proxy_upstream_cut(ctx) == []
    ex = ctx.adapter.exchange(ANTHROPIC, event_frames(ctx.case.body)[:4], cut="reset")  # type: ignore[attr-defined]
    assert ex.transfer.complete and ex.error_carried() and ex.result.terminal == "error"


def test_the_pass_through_drops_the_client_connection_as_the_upstream_dropped(
    fake_adapter: Callable[..., ProxyAdapter],
) -> None:
    adapter = fake_adapter()
    frames = event_frames(case_of("anthropic-messages/tool_call.yaml").body)
    for cut in TRANSPORT_CUTS:
        ex = adapter.exchange(ANTHROPIC, frames[:5], cut=cut)
        assert ex.transfer is not None and not ex.transfer.complete, cut
        assert ex.transfer.end == "eof" and not ex.error_carried()
        assert ex.result.terminal == "error" and ex.result.crashed is None


def test_a_gateway_that_holds_small_reads_fails_only_the_byte_paced_streaming_run(
    fake_adapter: Callable[..., ProxyAdapter],
) -> None:
    """Event by event each read is a whole event and goes out; byte by byte every read is
    small and the gateway holds them until the upstream ends (no first byte before the
    last write) or, with a 1200-byte threshold, until 7 of 13 events are out (the first
    content is event 3, so at most 3 + 2 may be: the time bound passes, the bound in
    events does not)."""
    case = case_of("anthropic-messages/tool_call.yaml")
    (failure,) = check_proxy_streaming(CheckContext(case, fake_adapter("hold-small-reads")))
    assert failure.message.startswith("the gateway buffered: with 3-7 byte writes 3 ms apart")
    (failure,) = check_proxy_streaming(CheckContext(case, fake_adapter("hold-small-reads:1200")))
    assert failure.message.startswith("the gateway held the head: with 3-7 byte writes 3 ms apart")
    assert "more than 5 upstream events were out" in failure.message
    # the bound it broke, not the count measured (7, or 8 when the fake is slow to flush)
    assert json.loads(failure.observed or "{}") == {"ttfb_ratio": "< 1", "held_events": "> 5"}


def test_a_gateway_that_streams_once_a_read_holds_a_whole_line_fails_the_slow_run(
    fake_adapter: Callable[..., ProxyAdapter],
) -> None:
    """Issue 35: a gateway that commits to streaming only once one transport read holds a
    whole line. Reading each upstream write as it comes, it never sees one in the byte
    paced run's 3-7 byte writes nor in the slow run's half lines, and buffers the whole
    stream: the first of them is the finding (that the slow run alone catches a gateway
    whose reads merge small writes is the next test's)."""
    case = case_of("anthropic-messages/tool_call.yaml")
    (failure,) = check_proxy_streaming(CheckContext(case, fake_adapter("whole-line")))
    assert failure.message.startswith("the gateway buffered: with 3-7 byte writes 3 ms apart")


def test_a_faithful_pass_through_holds_no_head_in_either_pacing(
    fake_adapter: Callable[..., ProxyAdapter],
) -> None:
    adapter = fake_adapter()
    body = case_of("anthropic-messages/tool_call.yaml").body
    ex = adapter.exchange(ANTHROPIC, [body], delay=0.003, pacing="bytes")
    hit = ex.stream_hit()
    assert hit is not None and len(hit.sent) > 200 and len(hit.event_ends) == 13
    assert ex.held_events() is not None and ex.held_events() <= 1  # type: ignore[operator]
    assert len(ex.times) > 20  # the client saw the stream come in small reads too


# ---------------------------------------------------------------------------------------
# The checks on hand-made gateway outputs
# ---------------------------------------------------------------------------------------


def chat_stream(
    message: AssistantMessage, *, finish: str | None, usage: bool = True, done: bool = True
) -> bytes:
    """An OpenAI chat stream carrying ``message``: what a faithful Anthropic -> chat gateway sends."""

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        data = {"id": "c1", "object": "chat.completion.chunk", "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}  # fmt: skip
        return b"data: " + json.dumps(data).encode() + b"\n\n"

    out = [chunk({"role": "assistant"})]
    calls = 0
    for block in message.content:
        if isinstance(block, TextBlock):
            out.append(chunk({"content": block.content}))
        elif isinstance(block, ThinkingBlock):
            out.append(chunk({"reasoning_content": block.content}))
        elif isinstance(block, ToolCall):
            fn = {"name": block.name, "arguments": json.dumps(block.arguments)}
            out.append(
                chunk(
                    {
                        "tool_calls": [
                            {"index": calls, "id": block.id, "type": "function", "function": fn}
                        ]
                    }
                )
            )
            calls += 1
    if finish is not None:
        out.append(chunk({}, finish))
    if usage:
        u = message.usage
        data = {"id": "c1", "object": "chat.completion.chunk", "choices": [],
                "usage": {"prompt_tokens": u.input + u.cache_read + u.cache_write, "completion_tokens": u.output,
                          "total_tokens": u.input + u.cache_read + u.cache_write + u.output,
                          "prompt_tokens_details": {"cached_tokens": u.cache_read}}}  # fmt: skip
        out.append(b"data: " + json.dumps(data).encode() + b"\n\n")
    if done:
        out.append(b"data: [DONE]\n\n")
    return b"".join(out)


class HandMade:
    """A 'gateway' whose client output a test writes: the checks cannot tell it from one."""

    level = "event"
    proxy = True
    split_budget = 2

    def __init__(
        self,
        upstream: str,
        client: str,
        output: Callable[
            [Sequence[bytes], float, str], tuple[int, dict[str, list[str]], bytes, bool]
        ],
    ) -> None:
        self.name = f"handmade[{upstream}->{client}]"
        self.protocols = frozenset({upstream})
        self.client_protocol = client
        self.output = output  # (chunks, delay, cut) -> (status, headers, body, buffered)
        self.clean_on_cut = False

    def version(self) -> str:
        return "0"

    def run(
        self,
        protocol: str,
        chunks: Sequence[bytes],
        *,
        status: int = 200,
        headers: Mapping[str, Sequence[str]] | None = None,
    ) -> AdapterResult:
        return self.exchange(protocol, chunks, status=status, headers=headers).result

    def exchange(
        self,
        protocol: str,
        chunks: Sequence[bytes],
        *,
        status: int = 200,
        headers: Mapping[str, Sequence[str]] | None = None,
        delay: float = 0.0,
        cut: str = "none",
        pacing: str = "chunks",
        timeout: float | None = None,
    ) -> Exchange:
        client_status, client_headers, body, buffered = self.output(chunks, delay, cut)
        events = list(
            normalize(self.client_protocol, [body], status=client_status, headers=client_headers)
        )
        last = events[-1]
        assert isinstance(last, DoneEvent | ErrorEvent)
        writes = list(Chunked(status, [], chunks, pacing=pacing).writes())  # type: ignore[arg-type]
        sent = [i * delay for i in range(len(writes))]
        ends = [sum(len(w) for w in writes[: i + 1]) for i in range(len(writes))]
        event_ends = [
            sum(len(f) for f in event_frames(b"".join(chunks))[: i + 1])
            for i in range(len(event_frames(b"".join(chunks))))
        ]
        first = (sent[-1] if buffered else sent[0]) + delay / 2
        result = AdapterResult(
            message=last.message, events=events, raw={"client_status": client_status}
        )
        hit = Hit(
            "POST",
            "/v1/messages",
            protocol,
            {},
            b"",
            0.0,
            status,
            sent,
            ends,
            event_ends,
            began=sent,
        )
        # The body written whole and ended well, as a gateway that closes a cut stream cleanly does.
        transfer = Transfer("chunked", "complete" if cut == "none" or self.clean_on_cut else "eof")
        return Exchange(
            result, client_status, client_headers, [body], [first], 0.0, [hit], transfer
        )


TOOL_CASE = "anthropic-messages/tool_call.yaml"


def handmade(case: Case, **changes: Any) -> HandMade:
    """Anthropic -> chat, faithful unless ``changes`` break it."""
    want = case.expected_terminal().message

    def output(
        chunks: Sequence[bytes], delay: float, cut: str
    ) -> tuple[int, dict[str, list[str]], bytes, bool]:
        message = changes.get("message", want)
        complete = cut == "none" and b"".join(chunks) == case.body
        done = complete or changes.get("clean_on_cut", False)
        body = chat_stream(
            message,
            finish=changes.get("finish", "tool_calls") if done else None,
            usage=changes.get("usage", True) and done,
            done=done,
        )
        return 200, {"content-type": ["text/event-stream"]}, body, changes.get("buffered", False)

    made = HandMade(ANTHROPIC, CHAT, output)
    made.clean_on_cut = changes.get("clean_on_cut", False)
    return made


class WholeLineReads(HandMade):
    """The same gateway where reads merge: the upstream's writes that come within its
    read latency (25 ms) of each other reach it as one read, as a gateway's event loop
    reads them. Deterministic: the merging follows the upstream's delay, not a clock."""

    LATENCY = 0.025

    def exchange(
        self,
        protocol: str,
        chunks: Sequence[bytes],
        *,
        status: int = 200,
        headers: Mapping[str, Sequence[str]] | None = None,
        delay: float = 0.0,
        cut: str = "none",
        pacing: str = "chunks",
        timeout: float | None = None,
    ) -> Exchange:
        ex = super().exchange(
            protocol,
            chunks,
            status=status,
            headers=headers,
            delay=delay,
            cut=cut,
            pacing=pacing,
            timeout=timeout,
        )
        writes = list(Chunked(status, [], chunks, pacing=pacing).writes())  # type: ignore[arg-type]
        per_read = max(1, int(self.LATENCY // delay)) if delay > 0 else len(writes)
        seen = b""
        for first in range(0, len(writes), per_read):
            piece = b"".join(writes[first : first + per_read])
            lines = piece.split(b"\n")[:-1]
            whole = lines if not seen or seen.endswith(b"\n") else lines[1:]
            seen += piece
            if any(line.strip() for line in whole):
                last = min(first + per_read, len(writes)) - 1
                ex.times = [last * delay + delay / 2]
                return ex
        ex.times = [(len(writes) - 1) * delay + delay / 2]
        return ex


def test_only_the_slow_run_catches_a_whole_line_gateway_whose_reads_merge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the gateway's reads merge the 3 ms writes, the byte-paced run lets it through
    (a merged read soon holds a whole line); the slow run's 40 ms writes reach it one by
    one and it holds the stream. Without the slow run the check passed it."""
    case = case_of(TOOL_CASE)
    gateway = WholeLineReads(ANTHROPIC, CHAT, handmade(case).output)
    (failure,) = check_proxy_streaming(CheckContext(case, gateway))
    assert failure.message.startswith("the gateway buffered: with the head's lines cut in two")
    monkeypatch.setattr(gateway_checks, "SLOW_HEAD_WRITES", 0)
    assert check_proxy_streaming(CheckContext(case, gateway)) == []


def failures_of(check: Callable[[CheckContext], list[Any]], adapter: Any, case: Case) -> list[str]:
    return [f.message for f in check(CheckContext(case, adapter))]


def test_a_faithful_translation_passes_every_check() -> None:
    case = case_of(TOOL_CASE)
    adapter = handmade(case)
    for check in (
        check_expected,
        check_stop_reason,
        check_proxy_streaming,
        check_proxy_upstream_cut,
    ):
        assert failures_of(check, adapter, case) == [], check.__name__


@pytest.mark.parametrize(
    ("change", "expect"),
    [
        ("text", "text: "),
        ("arguments", "tool_calls: "),
        ("usage", "usage dropped"),
        ("output_tokens", "usage output: 7 != expected 58"),
    ],
)
def test_the_cross_protocol_comparison_fails_a_lossy_translation(change: str, expect: str) -> None:
    case = case_of(TOOL_CASE)
    want = case.expected_terminal().message
    if change == "text":
        message = want.model_copy(
            update={"content": [b for b in want.content if not isinstance(b, TextBlock)]}
        )
    elif change == "arguments":
        message = want.model_copy(
            update={
                "content": [
                    b.model_copy(update={"arguments": {"city": "Paris"}})
                    if isinstance(b, ToolCall)
                    else b
                    for b in want.content
                ]
            }
        )
    elif change == "output_tokens":
        message = want.model_copy(update={"usage": want.usage.model_copy(update={"output": 7})})
    else:
        message = want
    adapter = handmade(case, message=message, usage=change != "usage")
    (found,) = failures_of(check_expected, adapter, case)
    assert expect in found


def test_a_renamed_stop_reason_fails_the_stop_reason_check() -> None:
    case = case_of(TOOL_CASE)
    found = failures_of(check_stop_reason, handmade(case, finish="length"), case)
    assert found and "the upstream's 'tool_use' is 'tool_use'" in found[0]


def test_a_buffering_gateway_fails_and_a_clean_finish_on_a_cut_fails() -> None:
    case = case_of(TOOL_CASE)
    assert (
        "the gateway buffered"
        in failures_of(check_proxy_streaming, handmade(case, buffered=True), case)[0]
    )
    assert (
        "saw a clean finish"
        in failures_of(check_proxy_upstream_cut, handmade(case, clean_on_cut=True), case)[0]
    )


def error_gateway(status: int, headers: dict[str, list[str]], body: bytes) -> HandMade:
    return HandMade(ANTHROPIC, CHAT, lambda chunks, delay, cut: (status, headers, body, False))


def test_an_upstream_error_must_keep_its_status_and_retry_after() -> None:
    case = case_of("anthropic-messages/http_429_rate_limit.yaml")
    assert case.expected_terminal().message.stop_reason == "error"
    body = json.dumps(
        {"error": {"message": "rate limited", "type": "rate_limit_error", "code": "429"}}
    ).encode()
    ok = error_gateway(429, {"retry-after": ["17"], "content-type": ["application/json"]}, body)
    assert failures_of(check_proxy_error_status, ok, case) == []
    no_header = error_gateway(429, {"content-type": ["application/json"]}, body)
    assert (
        "retry-after (17 s) did not reach the client"
        in failures_of(check_proxy_error_status, no_header, case)[0]
    )
    other_status = error_gateway(500, {"retry-after": ["17"]}, body)
    assert (
        "the upstream answered HTTP 429, the client got 500"
        in failures_of(check_proxy_error_status, other_status, case)[0]
    )


def test_the_overflow_classifier_runs_on_what_the_client_got() -> None:
    case = case_of("anthropic-messages/http_400_context_overflow.yaml")
    check = CHECKS_BY_ID["overflow-classification"]
    recognised = error_gateway(
        400,
        {},
        json.dumps(
            {
                "error": {
                    "message": "prompt is too long: 210000 tokens > 200000 maximum",
                    "type": "invalid_request_error",
                }
            }
        ).encode(),
    )
    assert check.run(CheckContext(case, recognised)) == []
    reworded = error_gateway(
        400,
        {},
        json.dumps({"error": {"message": "Bad request", "type": "invalid_request_error"}}).encode(),
    )
    (failure,) = check.run(CheckContext(case, reworded))
    assert "expected overflow" in failure.message


def test_proxy_checks_apply_only_to_gateways() -> None:
    case = case_of(TOOL_CASE)
    reference = load_adapter("reference")
    expected = case.expected_events()
    for cid in ("proxy-streaming", "proxy-upstream-cut"):
        assert not CHECKS_BY_ID[cid].applicable(reference, case, expected)
        assert CHECKS_BY_ID[cid].applicable(handmade(case), case, expected)  # type: ignore[arg-type]


def test_gateway_minted_ids_are_replaced_by_one_marker() -> None:
    ref = AssistantMessage(content=[ToolCall(id="toolu_1", name="f")], response_id="msg_1")
    minted = AssistantMessage(content=[ToolCall(id="call_9f", name="f")], response_id="chatcmpl-1")
    kept = AssistantMessage(content=[ToolCall(id="toolu_1", name="f")], response_id="msg_1")
    out, notes = stable_ids(minted, ref)
    assert (
        out.response_id == "<minted by the gateway>"
        and out.content[0].id == "<minted by the gateway> #0"
    )  # type: ignore[union-attr]
    assert len(notes) == 2
    assert stable_ids(kept, ref) == (kept, [])


def test_a_pass_through_must_keep_signatures_and_raw_stop_reasons() -> None:
    want = AssistantMessage(
        content=[ThinkingBlock(content="t", signature="s1")],
        stop_reason="stop",
        provider_stop_reason="end_turn",
    )
    got = want.model_copy(update={"content": [ThinkingBlock(content="t", signature=None)]})
    assert compare.differences(want, ANTHROPIC, want, ANTHROPIC) == []
    assert compare.differences(want, ANTHROPIC, got, ANTHROPIC)[0].startswith("block 0")
    # across protocols the signature has nowhere to go and is not asked for
    assert (
        compare.differences(
            want, ANTHROPIC, got.model_copy(update={"provider_stop_reason": "stop"}), CHAT
        )
        == []
    )


# ---------------------------------------------------------------------------------------
# Names and configuration
# ---------------------------------------------------------------------------------------


def test_rows_name_the_gateway_and_the_protocol_pair() -> None:
    rows = all_rows()
    assert "litellm-proxy[anthropic-messages->openai-completions]" in rows
    assert "portkey[google-generative-ai->openai-completions]" in rows
    with pytest.raises(AdapterLoadError, match="does not serve"):
        ProxyAdapter(GATEWAYS["portkey"], GOOGLE, ANTHROPIC)
    with pytest.raises(AdapterLoadError, match="unknown proxy adapter"):
        load_adapter("nogateway[a->b]")


def test_the_litellm_config_turns_retries_off_and_points_every_alias_upstream() -> None:
    config = json.loads(litellm_config("http://127.0.0.1:1234"))
    assert (
        config["router_settings"]["num_retries"] == 0
        and config["litellm_settings"]["num_retries"] == 0
    )
    bases = {m["model_name"]: m["litellm_params"]["api_base"] for m in config["model_list"]}
    assert bases == {
        "up-anthropic-messages": "http://127.0.0.1:1234",
        "up-openai-completions": "http://127.0.0.1:1234/v1",
        "up-openai-responses": "http://127.0.0.1:1234/v1",
        "up-google-generative-ai": "http://127.0.0.1:1234",
    }


def test_a_run_that_exits_without_closing_leaves_no_gateway(tmp_path: Path) -> None:
    """atexit (and, in forked workers, multiprocessing's finalizers) stop what was started."""
    script = tmp_path / "child.py"
    script.write_text(
        "import sys\n"
        f"sys.path[:0] = [{str(FAKE.parent)!r}, {str(Path(__file__).resolve().parent)!r}]\n"
        "from test_proxy import fake_gateway\n"
        "from pathlib import Path\n"
        f"proc = fake_gateway('ok').process('http://127.0.0.1:9', Path({str(tmp_path)!r})).start()\n"
        "print(proc.popen.pid, proc.port, flush=True)\n"
    )
    import subprocess

    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    pid, port = (int(x) for x in done.stdout.split())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert port_is_free(port)


def test_the_matrix_groups_pin_every_gateway_row() -> None:
    from stream_harness.matrix.groups import MatrixError, default_pins, js_source, load_groups

    groups = {g.name: g for g in load_groups(default_pins())}
    assert set(groups["litellm-proxy"].adapters) | set(groups["portkey"].adapters) == set(
        all_rows()
    )
    assert groups["litellm-proxy"].requirements[0].startswith("litellm[proxy]==")
    assert groups["portkey"].npm is not None
    folder = js_source(groups["portkey"].npm)
    package = json.loads((folder / "package.json").read_text())
    assert package["dependencies"]["@portkey-ai/gateway"][0].isdigit()  # an exact pin
    assert (folder / "package-lock.json").is_file()
    with pytest.raises(MatrixError):
        js_source("adapters-js/../specs")


def test_two_litellm_processes_in_one_folder_read_their_own_upstream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forked runner workers share a log folder; a shared config would point both gateways
    at one upstream (seen as 'the gateway answered without calling the upstream')."""
    from stream_harness.adapters.gateways.catalog import LITELLM

    monkeypatch.setenv("STREAM_HARNESS_LITELLM", str(tmp_path / "litellm"))
    LITELLM.process("http://127.0.0.1:1111", tmp_path)
    LITELLM.process("http://127.0.0.1:2222", tmp_path)
    configs = sorted(p.read_text() for p in tmp_path.glob("litellm-config-*.yaml"))
    assert len(configs) == 2 and "1111" in configs[0] and "2222" in configs[1]


def test_the_first_byte_ratio_counts_from_when_the_upstreams_writes_began() -> None:
    """Under load the server's thread may time the end of its last write after the gateway
    has passed that write on (measured at load 10: the client's first byte 0.06-0.35 ms
    before it); a gateway that held the whole stream is still one that buffered."""
    hit = Hit(
        "POST", "/v1/messages", ANTHROPIC, {}, b"", 0.0, 200,
        [0.0001, 1.0004], [10, 20], [10, 20], began=[0.0, 1.0],
    )  # fmt: skip
    ex = Exchange(AdapterResult(message=None), 200, times=[1.0002], hits=[hit])
    ratio = ex.ttfb_ratio()
    assert ratio is not None and ratio >= 1  # from the ends of the writes: 0.9998
    assert ex.held_events() == 1  # the held head still counts the writes that had ended
