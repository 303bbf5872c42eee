"""The conformance engine: every check passes the reference and catches its mutant.

The mutants are small, realistic bugs wrapped around the reference adapter (a stream
client that decodes each chunk on its own, one that treats a cut stream as finished,
...); each check must report the mutant and stay silent on the reference. A shrink test
shows a planted split bug reduced to its single cut point.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import httpx
import pytest

from stream_harness.adapters.protocol import AdapterLevel, AdapterResult
from stream_harness.adapters.ws_session import (
    ChainState,
    SessionTurn,
    completed_response,
    exchange,
    reference_session,
    server_messages,
    websocket_url,
)
from stream_harness.conformance import (
    CHECKS_BY_ID,
    ReferenceAdapter,
    RunConfig,
    bundled_cassettes,
    load_cases,
    run_adapter,
    run_conformance,
)
from stream_harness.conformance.checks.engine import CheckContext, shrink_cuts
from stream_harness.conformance.expectations import Expectations, KnownFailure
from stream_harness.contract.events import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    Event,
    TextBlock,
    TextDeltaEvent,
    TextEndEvent,
    ToolCallDeltaEvent,
)
from stream_harness.providers.registry import get_normalizer
from stream_harness.recordings.cassette import Interaction, Request, Response, dump_cassette
from stream_harness.recordings.resume import response_id, stream_events
from stream_harness.server.websocket import frame_log

URI = "https://api.anthropic.com/v1/messages"


def sse(*events: dict[str, object]) -> bytes:
    return b"".join(
        f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n".encode()
        for e in events
    )


TEXT_AND_TOOL = sse(
    {"type": "message_start", "message": {"id": "msg_1", "model": "claude-x", "content": [], "usage": {"input_tokens": 5, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Grüße ☃ "}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "and 😀."}},
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"city": "Zü'}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": 'rich", "days": 3}'}},
    {"type": "content_block_stop", "index": 1},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 20}},
    {"type": "message_stop"},
)  # fmt: skip

MIDSTREAM_ERROR = sse(
    {"type": "message_start", "message": {"id": "msg_2", "model": "claude-x", "content": [], "usage": {"input_tokens": 5, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Partial answ"}},
    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
)  # fmt: skip


def responses_events(text: list[str]) -> list[dict[str, object]]:
    """A Responses stream with sequence numbers: what a background stream resumes."""
    resp = {"id": "resp_1", "model": "gpt-x", "status": "in_progress", "output": []}
    item = {
        "id": "msg_1",
        "type": "message",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    events: list[dict[str, object]] = [
        {"type": "response.created", "response": resp},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        *(
            {
                "type": "response.output_text.delta",
                "item_id": "msg_1",
                "output_index": 0,
                "content_index": 0,
                "delta": d,
            }
            for d in text
        ),
        {
            "type": "response.completed",
            "response": {
                **resp,
                "status": "completed",
                "usage": {"input_tokens": 3, "output_tokens": 4},
            },
        },
    ]
    return [{**e, "sequence_number": i} for i, e in enumerate(events)]


RESUMABLE = sse(*responses_events(["Grüße", " aus", " Zürich", "."]))


def websocket_log(events: list[dict[str, object]]) -> bytes:
    frames = ({"op": "text", "data": json.dumps(e, ensure_ascii=False)} for e in events)
    return "".join(json.dumps(f, ensure_ascii=False) + "\n" for f in frames).encode()


def _websocket_turn(body: bytes) -> Interaction:
    return Interaction(
        index=0,
        request=Request(
            method="GET",
            uri="wss://api.openai.com/v1/responses",
            headers={"upgrade": ["websocket"]},
            body=b'{"type":"response.create"}',
        ),
        response=Response(
            status=101, reason="Switching Protocols", headers={"upgrade": ["websocket"]}, body=body
        ),
    )


def _interaction(index: int, body: bytes, status: int = 200) -> Interaction:
    ctype = "text/event-stream" if status < 400 else "application/json"
    return Interaction(
        index=index,
        request=Request(
            method="POST",
            uri=URI,
            headers={"content-type": ["application/json"]},
            body=b'{"stream": true}',
        ),
        response=Response(
            status=status,
            reason="OK" if status < 400 else "Error",
            headers={"content-type": [ctype]},
            body=body,
        ),
    )


@pytest.fixture(scope="module")
def case_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cassettes") / "anthropic-messages"
    root.mkdir()
    dump_cassette([_interaction(0, TEXT_AND_TOOL)], root / "text_and_tool.yaml")
    dump_cassette([_interaction(0, MIDSTREAM_ERROR)], root / "midstream_error.yaml")
    overflow = b'{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}'
    dump_cassette([_interaction(0, overflow, status=400)], root / "overflow.yaml")
    responses = root.parent / "openai-responses"
    responses.mkdir()
    resumable = _interaction(0, RESUMABLE)
    resumable = Interaction(
        0,
        Request("POST", "https://api.openai.com/v1/responses", {}, b'{"stream": true}'),
        resumable.response,
    )
    dump_cassette([resumable], responses / "resumable.yaml")
    websocket = root.parent / "openai-responses-websocket"
    websocket.mkdir()
    dump_cassette(
        [_websocket_turn(websocket_log(responses_events(["Grüße", " ☃"])))], websocket / "turn.yaml"
    )
    # Sessions of several turns (the session checks): bundled, as generated and reviewed.
    for name in ("chained_turns", "previous_response_not_found", "recovery_after_chained_turn"):
        shutil.copy(bundled_cassettes() / "openai-responses-websocket" / f"{name}.yaml", websocket)
    return root.parent


class Mutant:
    """The reference adapter with one bug planted by ``mutate``."""

    level: AdapterLevel = "event"

    def __init__(self, name: str) -> None:
        self.name = name
        self._ref = ReferenceAdapter()
        self.protocols = self._ref.protocols

    def version(self) -> str:
        return "mutant"

    def run(
        self,
        protocol: str,
        chunks: Sequence[bytes],
        *,
        status: int = 200,
        headers: Mapping[str, Sequence[str]] | None = None,
    ) -> AdapterResult:
        chunks = self.mutate_chunks(list(chunks))
        result = self._ref.run(protocol, chunks, status=status, headers=headers)
        assert result.events is not None
        events = self.mutate(result.events)
        last = events[-1] if events else None
        return AdapterResult(message=getattr(last, "message", None), events=events)

    def mutate_chunks(self, chunks: list[bytes]) -> list[bytes]:
        return chunks

    def mutate(self, events: list[Event]) -> list[Event]:
        return events


class DropsStart(Mutant):
    def mutate(self, events: list[Event]) -> list[Event]:
        return events[1:]


class DecodesEachChunkAlone(Mutant):
    # the bug of urllib3.future #349 / aisix #111 (ecosystem.md bugs 34-35)
    def mutate_chunks(self, chunks: list[bytes]) -> list[bytes]:
        return [c.decode("utf-8", errors="replace").encode() for c in chunks]


class ShoutsText(Mutant):
    def mutate(self, events: list[Event]) -> list[Event]:
        out: list[Event] = []
        for e in events:
            if isinstance(e, TextDeltaEvent):
                e = TextDeltaEvent(content_index=e.content_index, delta=e.delta.upper())
            elif isinstance(e, TextEndEvent):
                e = TextEndEvent(content_index=e.content_index, content=e.content.upper())
            elif isinstance(e, DoneEvent | ErrorEvent):
                content = [
                    TextBlock(content=b.content.upper()) if isinstance(b, TextBlock) else b
                    for b in e.message.content
                ]
                e = e.model_copy(
                    update={"message": e.message.model_copy(update={"content": content})}
                )
            out.append(e)
        return out


class JumpyArguments(Mutant):
    def mutate(self, events: list[Event]) -> list[Event]:
        return [
            e.model_copy(update={"arguments": {"zzz": True}})
            if isinstance(e, ToolCallDeltaEvent)
            else e
            for e in events
        ]


class AlwaysStop(Mutant):
    def mutate(self, events: list[Event]) -> list[Event]:
        last = events[-1]
        if isinstance(last, DoneEvent):
            msg = last.message.model_copy(update={"stop_reason": "stop"})
            return [*events[:-1], DoneEvent(reason="stop", message=msg)]
        return events


class ErrorsBecomeDone(Mutant):
    """A client that treats any end of the body as success (ecosystem.md bugs 27-29)."""

    def mutate(self, events: list[Event]) -> list[Event]:
        last = events[-1]
        if isinstance(last, ErrorEvent):
            msg = last.message.model_copy(update={"stop_reason": "stop", "error_message": None})
            return [*events[:-1], DoneEvent(reason="stop", message=msg)]
        return events


class Unclassified(Mutant):
    def mutate(self, events: list[Event]) -> list[Event]:
        last = events[-1]
        if isinstance(last, ErrorEvent):
            return [*events[:-1], last.model_copy(update={"error": None})]
        return events


class FramesAreMessages(Mutant):
    """A WebSocket client that parses every frame as a whole message (no reassembly of
    continuation frames)."""

    def mutate_chunks(self, chunks: list[bytes]) -> list[bytes]:
        lines = []
        for line in b"".join(chunks).decode().splitlines():
            frame = json.loads(line)
            if frame.get("op") == "continuation" or frame.get("fin") is False:
                frame = {k: v for k, v in frame.items() if k != "fin"} | {"op": "text"}
            lines.append(json.dumps(frame) + "\n")
        return ["".join(lines).encode()]


class FixedCursor(Mutant):
    """The resume pitfall of SDK examples: resuming from a fixed cursor (the first event's
    number) instead of the last event seen, so the events between come twice."""

    resumes = True

    def run_resumable(self, protocol: str, base_url: str, *, request_body: bytes) -> AdapterResult:
        first = b""
        with httpx.Client() as client:
            try:
                with client.stream(
                    "POST", f"{base_url}/v1/responses", content=request_body
                ) as response:
                    for chunk in response.iter_raw():
                        first += chunk
            except httpx.TransportError:
                pass
            whole_events = first[: first.rfind(b"\n\n") + 2]
            rid = response_id(stream_events(whole_events))
            rest = client.get(f"{base_url}/v1/responses/{rid}?stream=true&starting_after=0").content
        return self.run(protocol, [whole_events, rest])


class CarriesState(Mutant):
    """A WebSocket client with one accumulator for the whole connection: the second turn's
    result is read by the first turn's normalizer, its state never reset."""

    sessions = True

    def run_session(
        self, protocol: str, base_url: str, turns: Sequence[SessionTurn]
    ) -> list[AdapterResult]:
        from websockets.sync.client import connect

        normalizer = get_normalizer(protocol)
        chain, out, events = ChainState(), [], []
        with connect(websocket_url(base_url)) as ws:
            for turn in turns:
                frames, closed = exchange(ws, chain.request(turn))
                chain.answered(turn, completed_response(server_messages(frame_log(frames))))
                events.extend(normalizer.feed(frame_log(frames)))
                last = next(
                    (e for e in reversed(events) if isinstance(e, DoneEvent | ErrorEvent)), None
                )
                out.append(
                    AdapterResult(message=getattr(last, "message", None), events=list(events))
                )
                if closed:
                    break
        return out


class _Unchained(ChainState):
    def request(self, turn: SessionTurn) -> dict[str, object]:
        event = super().request(turn)
        event.pop("previous_response_id", None)
        return event


class ForgetsChain(Mutant):
    """A client that sends every turn as a new conversation: no previous_response_id."""

    sessions = True

    def run_session(
        self, protocol: str, base_url: str, turns: Sequence[SessionTurn]
    ) -> list[AdapterResult]:
        runs = reference_session(protocol, base_url, turns, chain=_Unchained())
        return [AdapterResult(message=getattr(e[-1], "message", None), events=e) for e in runs]


class GivesUpOnLostChain(Mutant):
    """A client that reports previous_response_not_found and sends nothing more for the turn."""

    sessions = True
    recovers_previous_response = True

    def run_session(
        self, protocol: str, base_url: str, turns: Sequence[SessionTurn]
    ) -> list[AdapterResult]:
        runs = reference_session(protocol, base_url, turns, recover=False)
        return [AdapterResult(message=getattr(e[-1], "message", None), events=e) for e in runs]


MUTANTS = {
    "contract": DropsStart,
    "split-invariance": DecodesEachChunkAlone,
    "expected": ShoutsText,
    "live-arguments": JumpyArguments,
    "stop-reason": AlwaysStop,
    "error-surfacing": ErrorsBecomeDone,
    "truncation": ErrorsBecomeDone,
    "overflow-classification": Unclassified,
    "message-framing": FramesAreMessages,
    "resumption": FixedCursor,
    "session-turns": CarriesState,
    "session-chaining": ForgetsChain,
    "previous-response-recovery": GivesUpOnLostChain,
}


def test_every_check_has_a_mutant() -> None:
    # The gateway checks need a gateway's exchanges (paced, cut upstream): their breaking
    # gateways are hand-made in tests/adapters/test_proxy.py.
    assert set(MUTANTS) == {c for c in CHECKS_BY_ID if not c.startswith("proxy-")}


def _results(adapter: Mutant | ReferenceAdapter, case_dir: Path, check: str) -> list[str]:
    cases, _ = load_cases([case_dir])
    run = run_adapter(adapter, cases, RunConfig(examples=10, checks=[CHECKS_BY_ID[check]]))
    assert run.results, f"{check} applied to no case"
    return [r.outcome for r in run.results]


@pytest.mark.parametrize("check", sorted(MUTANTS))
def test_the_reference_passes_each_check(case_dir: Path, check: str) -> None:
    assert set(_results(ReferenceAdapter(), case_dir, check)) == {"passed"}


@pytest.mark.parametrize("check", sorted(MUTANTS))
def test_each_check_catches_its_mutant(case_dir: Path, check: str) -> None:
    mutant = MUTANTS[check](f"mutant-{check}")
    assert "failed" in _results(mutant, case_dir, check)


def test_run_conformance_raises_with_a_reproduce_command(case_dir: Path) -> None:
    with pytest.raises(AssertionError) as info:
        run_conformance(
            DecodesEachChunkAlone("utf8-bug"),
            cassettes=[case_dir],
            checks=["split-invariance"],
            examples=5,
        )
    text = str(info.value)
    assert "split-invariance" in text
    assert "--split cuts:" in text and "--adapter utf8-bug" in text
    run_conformance(ReferenceAdapter(), cassettes=[case_dir], examples=5)  # no raise


def test_a_planted_split_bug_shrinks_to_its_single_cut_point(case_dir: Path) -> None:
    cases, _ = load_cases([case_dir / "anthropic-messages" / "text_and_tool.yaml"])
    ctx = CheckContext(cases[0], DecodesEachChunkAlone("utf8-bug"), examples=30, single_cut_limit=0)
    failures = CHECKS_BY_ID["split-invariance"].run(ctx)
    assert len(failures) == 1
    split = failures[0].split
    assert split is not None and split.startswith("cuts:")
    cut = int(split.removeprefix("cuts:"))  # exactly one cut point survives shrinking
    body = cases[0].body
    assert 0x80 <= body[cut] < 0xC0, "the single cut must fall inside a multi-byte character"


def test_shrink_removes_every_cut_that_is_not_needed() -> None:
    assert shrink_cuts([3, 9, 17, 40, 41], lambda cuts: 17 in cuts) == [17]
    assert shrink_cuts([3, 9, 17], lambda cuts: {3, 17} <= set(cuts)) == [3, 17]


def test_a_crashing_adapter_is_a_result_not_a_crash_of_the_run(case_dir: Path) -> None:
    class Crashes(Mutant):
        def mutate(self, events: list[Event]) -> list[Event]:
            raise KeyError("choices")

    cases, _ = load_cases([case_dir])
    run = run_adapter(Crashes("crashes"), cases, RunConfig(examples=2))
    # Its own label (issue 36, point 6): the adapter's failure, told apart from wrong events.
    assert run.results and all(r.outcome == "crashed" for r in run.results)
    assert any("KeyError" in r.failures[0].message for r in run.results)
    assert not any(r.ok for r in run.results)


def test_a_listed_crash_is_a_known_failure(case_dir: Path) -> None:
    class Crashes(Mutant):
        def mutate(self, events: list[Event]) -> list[Event]:
            raise KeyError("choices")

    cases, _ = load_cases([case_dir])
    listed = Expectations(
        "crashes", (KnownFailure(check="*", case="*", issue="https://example.org/1"),)
    )
    run = run_adapter(Crashes("crashes"), cases, RunConfig(examples=2), listed)
    assert run.results and {r.outcome for r in run.results} == {"known_failure"}


def test_message_level_adapters_skip_event_checks(case_dir: Path) -> None:
    class MessageOnly:
        name = "message-only"
        level: AdapterLevel = "message"
        protocols = frozenset({"anthropic-messages"})

        def version(self) -> str:
            return "1"

        def run(
            self,
            protocol: str,
            chunks: Sequence[bytes],
            *,
            status: int = 200,
            headers: Mapping[str, Sequence[str]] | None = None,
        ) -> AdapterResult:
            ref = ReferenceAdapter().run(protocol, chunks, status=status, headers=headers)
            msg: AssistantMessage | None = ref.message
            return AdapterResult(message=msg)

    cases, _ = load_cases([case_dir])
    run = run_adapter(MessageOnly(), cases, RunConfig(examples=2))
    checks = {r.check for r in run.results}
    assert "contract" not in checks and "live-arguments" not in checks
    assert {"split-invariance", "expected", "error-surfacing"} <= checks
    assert all(r.outcome == "passed" for r in run.results)


def test_parallel_run_gives_the_sequential_results_in_the_same_order(case_dir: Path) -> None:
    from stream_harness.conformance.runner import run_adapters

    cases, _ = load_cases([case_dir])
    adapters = [ReferenceAdapter(), ShoutsText("shouts")]
    config = RunConfig(examples=3)
    sequential = run_adapters(adapters, cases, config, [None, None], jobs=1)
    parallel = run_adapters(adapters, cases, config, [None, None], jobs=2, slice_size=1)
    assert [r.results for r in parallel] == [r.results for r in sequential]
    assert any(r.outcome == "failed" for r in parallel[1].results)


def _chat_chunk(choices: list[dict[str, object]], **extra: object) -> dict[str, object]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "gpt-x",
        "choices": choices,
        **extra,
    }


# Complete at its finish_reason, early on; then keep-alive comments (as OpenRouter sends
# them) until [DONE]. Any cut among the comments leaves a complete stream.
COMPLETE_EARLY = (
    b"".join(
        b"data: " + json.dumps(chunk).encode() + b"\n\n"
        for chunk in (
            _chat_chunk(
                [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": "Hi"},
                        "finish_reason": None,
                    }
                ]
            ),
            _chat_chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
        )
    )
    + b": OPENROUTER PROCESSING\n\n" * 40
    + b"data: [DONE]\n\n"
)


def _truncation_case(tmp_path: Path) -> CheckContext:
    path = tmp_path / "openai-completions" / "complete_early.yaml"
    path.parent.mkdir()
    request = Request(
        method="POST", uri="https://api.openai.com/v1/chat/completions", headers={}, body=b"{}"
    )
    response = Response(
        status=200,
        reason="OK",
        headers={"content-type": ["text/event-stream"]},
        body=COMPLETE_EARLY,
    )
    dump_cassette([Interaction(0, request, response)], path)
    cases, _ = load_cases([tmp_path])
    return cases[0]


def test_truncation_cuts_only_where_the_stream_is_unfinished(tmp_path: Path) -> None:
    """A body cut after its finish_reason but before [DONE] is complete (the reference
    ends done there), so the check must cut before the finish: there the reference
    passes and a client that takes any end of the body for success fails."""
    case = _truncation_case(tmp_path)
    finish_at = COMPLETE_EARLY.index(b'"finish_reason": "stop"')
    n = len(COMPLETE_EARLY)
    # Every offset the rule used to draw from, [n/4, n/2), leaves a complete stream.
    assert all(
        ReferenceAdapter().run("openai-completions", [COMPLETE_EARLY[:k]]).events[-1].type == "done"
        for k in range(n // 4, n // 2)
    )
    check = CHECKS_BY_ID["truncation"]
    assert check.run(CheckContext(case, ReferenceAdapter())) == []
    failures = check.run(CheckContext(case, ErrorsBecomeDone("takes-any-end")))
    assert len(failures) == 1
    cut = int(failures[0].message.split("at byte ")[1].split()[0])
    assert (
        ReferenceAdapter().run("openai-completions", [COMPLETE_EARLY[:cut]]).events[-1].type
        == "error"
    )
    # A prefix that ends right after the finish chunk is complete: never used as a cut.
    complete = COMPLETE_EARLY[: COMPLETE_EARLY.index(b"\n\n", finish_at) + 2]
    assert ReferenceAdapter().run("openai-completions", [complete]).events[-1].type == "done"


def test_overflow_classification_skips_adapters_that_do_not_classify(case_dir: Path) -> None:
    """An event-level library that hands errors over unclassified is not failed for it;
    the same adapter that claims to classify (the default) is."""
    mutant = Unclassified("no-classes")
    assert "failed" in _results(mutant, case_dir, "overflow-classification")
    mutant.classifies_errors = False  # type: ignore[attr-defined]
    cases, _ = load_cases([case_dir])
    run = run_adapter(
        mutant, cases, RunConfig(examples=2, checks=[CHECKS_BY_ID["overflow-classification"]])
    )
    assert run.results == []


def test_a_bundled_cassette_is_named_from_the_bundled_folder_whatever_part_is_given() -> None:
    """A narrowed run (one protocol folder, one file: what a reproduce command gives) meets
    the same case ids as the full run, so the same known failures apply to it."""
    from stream_harness.contract.facts import bundled_cassettes

    bundled = bundled_cassettes()
    full, _ = load_cases([bundled])
    by_id = {c.id: c for c in full}
    folder, _ = load_cases([bundled / "mistral-chat", bundled / "openai-completions"])
    assert folder and all(c.id in by_id for c in folder)
    assert {c.id.split("/")[0] for c in folder} == {"mistral-chat", "openai-completions"}
    one = folder[0]
    single, _ = load_cases([one.cassette])
    assert [c.id for c in single] == [one.id]


def test_a_cassette_outside_the_bundled_folder_is_named_from_the_folder_given(
    case_dir: Path,
) -> None:
    cases, _ = load_cases([case_dir / "anthropic-messages"])
    assert cases and all(not c.id.startswith("anthropic-messages/") for c in cases)


class DiesOnOverflow(Mutant):
    """A library that kills its own process on one response (as a segfault in native code
    or the out-of-memory killer would), in a forked worker only, so the test runner lives."""

    def mutate_chunks(self, chunks: list[bytes]) -> list[bytes]:
        import multiprocessing
        import os

        if (
            b"prompt is too long" in b"".join(chunks)
            and multiprocessing.parent_process() is not None
        ):
            os._exit(3)
        return chunks


def test_a_worker_killed_by_the_library_is_that_case_crashed_and_the_run_goes_on(
    case_dir: Path,
) -> None:
    from stream_harness.conformance.runner import run_adapters

    cases, _ = load_cases([case_dir])
    config = RunConfig(examples=2)
    reference = run_adapters([ReferenceAdapter()], cases, config, [None], jobs=1)[0].results
    for slice_size in (1, 6):
        run = run_adapters(
            [DiesOnOverflow("dies")], cases, config, [None], jobs=2, slice_size=slice_size
        )[0]
        died = [r for r in run.results if r.case == "anthropic-messages/overflow.yaml#0"]
        others = [r for r in run.results if r.case != "anthropic-messages/overflow.yaml#0"]
        assert died and all(
            r.outcome == "crashed" and "died" in r.failures[0].message for r in died
        )
        assert died[0].failures[0].command and "--check" in died[0].failures[0].command
        # Every other case settled as the sequential run settles it, in the same order
        # (the reference also resumes streams and plays sessions, capabilities the mutant
        # does not declare).
        declared_by_reference_only = {
            "resumption",
            "session-turns",
            "session-chaining",
            "previous-response-recovery",
        }
        assert [(r.case, r.check, r.outcome) for r in others] == [
            (r.case, r.check, r.outcome)
            for r in reference
            if r.case != "anthropic-messages/overflow.yaml#0"
            and r.check not in declared_by_reference_only
        ]


def test_shrinking_a_long_split_is_logarithmic_and_one_minimal() -> None:
    calls: list[int] = []

    def fails(cuts: list[int]) -> bool:
        calls.append(len(cuts))
        return 907 in cuts

    assert shrink_cuts(list(range(1, 1401)), fails) == [907]
    assert len(calls) < 60  # one cut at a time would take 1,400 runs
    # Two cuts needed together, far apart; and a failure that needs every cut keeps them all.
    assert shrink_cuts(list(range(1, 1401)), lambda c: {5, 1300} <= set(c)) == [5, 1300]
    assert shrink_cuts([4, 8, 15], lambda c: len(c) == 3) == [4, 8, 15]
    # No single cut can go from what is returned (1-minimal), for an odd-shaped predicate.
    odd = lambda c: sum(1 for k in c if k % 7 == 0) >= 3  # noqa: E731
    small = shrink_cuts(list(range(1, 200)), odd)
    assert odd(small) and len(small) == 3
    assert all(not odd(small[:i] + small[i + 1 :]) for i in range(len(small)))
