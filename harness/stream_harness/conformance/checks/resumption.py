"""The resumption check: a background Responses stream resumed after a dropped connection."""

from __future__ import annotations

import random
from typing import Any, Final

from stream_harness.adapters.protocol import AdapterLevel, AdapterResult
from stream_harness.conformance.cases import Case
from stream_harness.contract.events import Event
from stream_harness.recordings.resume import StreamEvent, is_resumable, stream_events
from stream_harness.server.loopback import LoopbackServer
from stream_harness.server.resume import CutThenResume

from .engine import Check, CheckContext, Failure, differing, message_key, outcome_of, summary_of

# Cut points tried per case: every event boundary up to this many, else a seeded sample.
RESUME_POINTS: Final = 40
_resumable_cache: dict[str, list[StreamEvent] | None] = {}


def resumable_events(case: Case) -> list[StreamEvent] | None:
    """The case's events when its stream can be resumed by a cursor (sequence numbers and a
    response id: the Responses protocols), else None; read once per body."""
    if case.sha256 not in _resumable_cache:
        events = stream_events(case.body) if case.status < 400 else []
        _resumable_cache[case.sha256] = events if is_resumable(events) else None
    return _resumable_cache[case.sha256]


def _resumable(case: Case, expected: list[Event]) -> bool:
    return resumable_events(case) is not None


def resume_points(n: int, seed: str) -> list[int]:
    """After how many events the stream is cut: 1 .. n-1 (the first event names the
    response, without it there is nothing to resume), all or a seeded sample."""
    points = list(range(1, n))
    if len(points) <= RESUME_POINTS:
        return points
    rng = random.Random(seed)
    return sorted({1, n - 1, *rng.sample(points, RESUME_POINTS - 2)})


def _resumed_key(result: AdapterResult, level: AdapterLevel) -> Any:
    if level == "event" and result.events is not None:
        return [e.model_dump(mode="json") for e in result.events]
    return message_key(result)


def check_resumption(ctx: CheckContext) -> list[Failure]:
    """Cut after event k, let the adapter resume from its cursor: the same result as its
    run on the uncut stream (events for an event-level adapter: none lost, none repeated);
    a cursor the server no longer has must end in an error, never in a silent restart."""
    events = resumable_events(ctx.case)
    assert events is not None
    run = getattr(ctx.adapter, "run_resumable", None)
    if run is None:
        return [Failure("the adapter says it resumes but has no run_resumable method")]
    replies = CutThenResume(events)
    request_body = b'{"model":"resumption-check","input":"","background":true,"stream":true}'
    seqs = [e.sequence_number for e in events]
    with LoopbackServer(replies) as server:
        # The baseline is the same client code reading the stream uncut: a library's
        # resuming path may hand its user another object than its stream helper does.
        replies.reset(len(events))
        whole = run(ctx.case.protocol, server.url, request_body=request_body)
        if whole.crashed:
            return [
                differing(
                    f"the adapter crashed on the uncut stream: {whole.crashed}",
                    {"crashed": None},
                    outcome_of(whole),
                )
            ]
        want = _resumed_key(whole, ctx.adapter.level)
        for k in resume_points(len(events), f"resume:{ctx.seed}:{ctx.case.id}"):
            partial = k % 2 == 1  # odd k: the drop also cuts the next event in half
            replies.reset(k, partial=partial)
            result = run(ctx.case.protocol, server.url, request_body=request_body)
            got = _resumed_key(result, ctx.adapter.level)
            if got != want:
                cursor = next((s for s in reversed(seqs[:k]) if s is not None), None)
                where = f"cut after event {k} of {len(events)}{' and half of the next' if partial else ''}"
                return [
                    differing(
                        f"resumed stream ({where}; the adapter resumed with starting_after="
                        f"{replies.cursors or 'nothing'}, the last whole event was {cursor}) "
                        f"differs from the whole stream ({summary_of(result)} instead of {summary_of(whole)})",
                        want,
                        got,
                        command=ctx.command("resumption"),
                    )
                ]
        # The stream is gone from the server: the resume is refused, and the adapter must
        # end in an error, never start over or report a finished response.
        k = max(1, len(events) // 2)
        replies.reset(k, expired=True)
        result = run(ctx.case.protocol, server.url, request_body=request_body)
        if replies.cursors and result.terminal == "done":
            return [
                differing(
                    f"cut after event {k}, the resume refused (unknown cursor): the adapter ended in done",
                    {"terminal": "error"},
                    outcome_of(result),
                    command=ctx.command("resumption"),
                )
            ]
    return []


CHECKS: tuple[Check, ...] = (
    Check("resumption", "a stream resumed with its cursor equals the whole stream; an unknown cursor is an error", "C13, C15", "message", _resumable, check_resumption, needs="resumes", needs_default=False),
)  # fmt: skip
