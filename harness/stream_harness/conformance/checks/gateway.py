"""The gateway checks (adapters/gateways/): an adapter with ``proxy = True`` runs a real
gateway between a replayed upstream and the reference; these checks ask it for exchanges
the Adapter protocol cannot express (paced, cut upstream) through its ``exchange`` method.
"""

from __future__ import annotations

import itertools
from typing import Final

from stream_harness.adapters.gateways.adapter import Exchange, record_timing
from stream_harness.conformance.cases import Case
from stream_harness.contract.events import ErrorEvent, Event
from stream_harness.providers.registry import get_normalizer
from stream_harness.server.loopback import BYTE_PIECES, TRANSPORT_CUTS, CutMode, Pacing
from stream_harness.server.upstream import event_frames

from .engine import Check, CheckContext, Failure, differing, message_key, outcome_of, summary_of

PACING = 0.2  # seconds between upstream events in the streaming check
MAX_PACED = 10  # upstream sends at most this many paced groups of events
BYTE_PACING = 0.003  # seconds between the 3-7 byte writes of the byte-paced run
# The held head, in events: a gateway may wait for the first upstream event that carries
# content (text, thinking, a tool call, an error, the end): a translating gateway needs
# it to know what to send (LiteLLM does so). Past it, at most this many more events may
# go out before the client's first byte: at 200 ms event pacing a streaming gateway
# holds none; at byte pacing its own latency (tens of ms) lets a small event or two more
# through, while a gateway holding reads until it has "enough" holds many.
HELD_AFTER_CONTENT = 2
# The slow run (issue 35): a gateway that starts streaming only once a single transport
# read holds a whole line passes the byte-paced run, whose 3 ms writes its reads merge,
# and buffers a whole stream whose reads are small and 20-50 ms apart. So the head of the
# body, through the first content event and the HELD_AFTER_CONTENT events after it, goes
# out (one more event for margin) cut in the middle of every line, SLOW_PACING apart: no write holds a whole line, and
# a gateway that reads every write as it comes sees none. The rest goes out in one write.
# A head needing more than SLOW_HEAD_WRITES writes is not paced so (the check stays quick:
# at most 1.6 s a case); a JSON-array stream is re-framed by event upstream, so has none.
SLOW_PACING = 0.04
SLOW_HEAD_WRITES = 40
# A cut run's client read gives up after this long without a byte: a gateway that keeps
# the client waiting on a dead upstream fails, and a report does not wait a minute on it.
CUT_TIMEOUT = 15.0
# Event types that show the first content reached the reference (the held-head bound).
_CONTENT: Final = frozenset(
    {"text_delta", "thinking_delta", "toolcall_start", "toolcall_delta", "error", "done"}
)
_PACINGS: Final[dict[Pacing, str]] = {
    "chunks": f"events {PACING * 1000:.0f} ms apart",
    "bytes": f"{BYTE_PIECES[0]}-{BYTE_PIECES[1]} byte writes {BYTE_PACING * 1000:.0f} ms apart",
}
_CUTS: Final[dict[CutMode, str]] = {
    "close": "closed the connection (FIN) after a whole chunk",
    "reset": "reset the connection (RST)",
    "inside-chunk": "closed the connection inside a chunk",
}


def _paced_groups(body: bytes) -> list[bytes]:
    """The body's events, merged into at most MAX_PACED consecutive groups."""
    frames = event_frames(body)
    if len(frames) <= MAX_PACED:
        return frames
    size = -(-len(frames) // MAX_PACED)
    return [b"".join(frames[i : i + size]) for i in range(0, len(frames), size)]


def first_content_event(protocol: str, body: bytes) -> int:
    """The index of the first event after which the reference has content (or the end) to show."""
    normalizer = get_normalizer(protocol)
    frames = event_frames(body)
    for i, frame in enumerate(frames):
        if any(e.type in _CONTENT for e in normalizer.feed(frame)):
            return i
    return max(len(frames) - 1, 0)


def line_straddling_writes(body: bytes, through: int) -> list[bytes] | None:
    """The slow run's writes: the body's events up to event ``through`` (0-based) cut in the
    middle of every line with content, so that no write holds a whole line, then the rest
    in one write; None when that head takes more than SLOW_HEAD_WRITES writes or the body
    is a JSON array."""
    if body.lstrip()[:1] == b"[":
        return None
    frames = event_frames(body)
    end = sum(len(f) for f in frames[: through + 1])
    cuts, at = [0], 0
    for line in body[:end].splitlines(keepends=True):
        content = line.rstrip(b"\r\n")
        if content:
            cuts.append(at + max(1, len(content) // 2))
        at += len(line)
    cuts.append(end)
    writes = [body[a:b] for a, b in itertools.pairwise(cuts) if b > a]
    if len(writes) > SLOW_HEAD_WRITES:
        return None
    return [*writes, body[end:]] if end < len(body) else writes


def _streams(case: Case, expected: list[Event]) -> bool:
    return case.status < 400


def _http_error(case: Case, expected: list[Event]) -> bool:
    return case.status >= 400


def check_proxy_streaming(ctx: CheckContext) -> list[Failure]:
    """The body paced event by event, byte by byte and slowly in half lines (the head); the
    first client byte bounded in time (before the upstream's last write) and in events (the
    held head)."""
    groups = _paced_groups(ctx.case.body)
    if len(groups) < 3:
        return []
    c = ctx.case
    content = first_content_event(c.protocol, c.body)
    runs: list[tuple[str, str, list[bytes], float, Pacing]] = [
        ("chunks", _PACINGS["chunks"], groups, PACING, "chunks"),
        ("bytes", _PACINGS["bytes"], [c.body], BYTE_PACING, "bytes"),
    ]
    slow = line_straddling_writes(c.body, content + HELD_AFTER_CONTENT + 1)
    if slow is not None:
        how = f"the head's lines cut in two, {len(slow)} writes {SLOW_PACING * 1000:.0f} ms apart"
        runs.append(("lines", how, slow, SLOW_PACING, "chunks"))
    out: list[Failure] = []
    timed = False
    for label, how, chunks, delay, pacing in runs:
        # A timing verdict is confirmed by a second run before it is reported: on a loaded
        # machine (the matrix's two jobs beside a gateway) one run's first byte can come
        # late from a gateway that streams. A gateway that buffers fails both runs.
        timing, found = _paced_run(ctx, content, label, how, chunks, delay, pacing)
        if (timing or found) and not any(_crashed(f) for f in found):
            timing, found = _paced_run(ctx, content, label, how, chunks, delay, pacing)
        # Only the first pacing that confirms buffering is reported. A gateway that buffers
        # at one pace may pass bytes on at another depending on how its reads fell, which
        # differs from run to run; one confirmed case makes the finding, and a report
        # regenerated on the same gateway then reads the same. Each pacing's final message
        # is still judged.
        if timing is not None and not timed:
            out.append(timing)
            timed = True
        out.extend(found)
    return out


def _crashed(failure: Failure) -> bool:
    return ": the adapter crashed: " in failure.message


def _paced_run(
    ctx: CheckContext,
    content: int,
    label: str,
    how: str,
    chunks: list[bytes],
    delay: float,
    pacing: Pacing,
) -> tuple[Failure | None, list[Failure]]:
    """One paced exchange judged: the first client byte in time and in events (the first
    item), and the final message or a crash (the second). The measured ratio and the
    number of client reads go to the timings log (record_timing); the failure says only on
    which side of the bound the ratio fell, so that the same verdict reads the same on
    every run."""
    c = ctx.case
    ex: Exchange = ctx.adapter.exchange(  # type: ignore[attr-defined]
        c.protocol, chunks, status=c.status, headers=c.headers, delay=delay, pacing=pacing
    )
    result = ex.result
    if result.crashed:
        crash = differing(
            f"{how}: the adapter crashed: {result.crashed}", {"crashed": None}, outcome_of(result)
        )
        return None, [crash]
    record_timing(ctx.adapter.name, c.id, ex, delay, label)
    ratio, held, needed = ex.ttfb_ratio(), ex.held_events(), ex.events_with(content)
    allowed = None if needed is None else needed + HELD_AFTER_CONTENT
    bound = {"ttfb_ratio": "< 1"} | ({} if allowed is None else {"held_events": f"<= {allowed}"})
    timing = None
    if ratio is None or ratio >= 1:
        shown = (
            "no body byte" if ratio is None else "the first byte after the upstream's last write"
        )
        # Past the last write every event was out: the count is the body's, not the run's.
        observed = {"ttfb_ratio": None if ratio is None else ">= 1", "held_events": held}
        timing = differing(
            f"the gateway buffered: with {how}, {shown} "
            "(a streaming gateway passes the first byte on before the upstream's last write)",
            bound,
            observed,
        )
    elif held is not None and allowed is not None and held > allowed:
        timing = differing(
            f"the gateway held the head: with {how}, more than {allowed} upstream events were "
            f"out before the client's first byte; the first content is event {content + 1} "
            f"({needed} out with it), at most {HELD_AFTER_CONTENT} more may be held",
            bound,
            {"ttfb_ratio": "< 1", "held_events": f"> {allowed}"},
        )
    out = []
    if message_key(result) != message_key(ctx.whole()):
        out.append(
            differing(
                f"{how}: the paced upstream gives another final message than the whole body ({summary_of(result)} instead of {summary_of(ctx.whole())})",
                outcome_of(ctx.whole()),
                outcome_of(result),
            )
        )
    return timing, out


def _cut_problem(ex: Exchange) -> str | None:
    """Why the client side of a cut run is wrong, or None.

    Right: the transfer to the client ends abnormally (RFC 9112's incomplete message: no
    terminating chunk, a short content length, a reset), or the response carries an error
    (an error event of the client protocol, an HTTP error status). Wrong: a finish the
    upstream never sent, a clean complete message without an error (most clients do not
    insist on the protocol's terminal event and take it as whole), or a client left
    waiting.
    """
    result = ex.result
    if result.crashed:
        return f"the adapter crashed: {result.crashed}"
    if result.terminal == "done":
        return "the client saw a clean finish (the gateway completed what it did not receive)"
    t = ex.transfer
    if t is not None and t.end == "timeout":
        return f"the client's response neither ended nor failed ({t.detail})"
    if (t is None or t.complete) and not ex.error_carried():
        framing = t.framing if t else "unknown framing"
        return (
            f"the gateway ended its response as a complete HTTP message ({framing}) with no error event: "
            "the transfer must end abnormally (no terminating chunk) or carry an error"
        )
    return None


def check_proxy_upstream_cut(ctx: CheckContext) -> list[Failure]:
    """The upstream connection dropped between two events near the middle, in each way a
    connection drops (:data:`stream_harness.server.loopback.TRANSPORT_CUTS`)."""
    c = ctx.case
    frames = event_frames(c.body)
    ends = [sum(len(f) for f in frames[:k]) for k in range(len(frames) + 1)]
    # A cut between events, as near the middle as leaves the stream unfinished; the cut
    # inside a chunk sends half of event k too, which must leave it unfinished as well.
    order = sorted(range(1, len(frames)), key=lambda k: abs(k - len(frames) / 2))
    k = next(
        (
            k
            for k in order
            if c.cut_ends_in_error(ends[k])
            and c.cut_ends_in_error(ends[k] + max(1, len(frames[k]) // 2))
        ),
        None,
    )
    if k is None:
        return []
    out = []
    for cut in TRANSPORT_CUTS:
        sent = frames[: k + 1] if cut == "inside-chunk" else frames[:k]
        ex: Exchange = ctx.adapter.exchange(  # type: ignore[attr-defined]
            c.protocol, sent, status=c.status, headers=c.headers, cut=cut, timeout=CUT_TIMEOUT
        )
        problem = _cut_problem(ex)
        if problem is None:
            continue
        t = ex.transfer
        out.append(
            differing(
                f"the upstream {_CUTS[cut]} after event {k} of {len(frames)}: {problem}",
                {
                    "cut": cut,
                    "client_transfer": "not complete, or an error carried",
                    "terminal": "error",
                },
                {
                    "cut": cut,
                    "client_transfer": f"{t.end} ({t.framing})" if t else None,
                    "error_carried": ex.error_carried(),
                    "terminal": ex.result.terminal,
                    "status": ex.status,
                },
            )
        )
    return out


def check_proxy_error_status(ctx: CheckContext) -> list[Failure]:
    result = ctx.whole()
    if result.crashed:
        return [
            differing(
                f"the adapter crashed: {result.crashed}",
                {"status": ctx.case.status},
                outcome_of(result),
            )
        ]
    status = result.raw.get("client_status")
    want = ctx.expected[-1]
    want_after = want.error.retry_after if isinstance(want, ErrorEvent) and want.error else None
    last = result.events[-1] if result.events else None
    got_after = last.error.retry_after if isinstance(last, ErrorEvent) and last.error else None
    expected_doc = {"status": ctx.case.status, "retry_after": want_after}
    observed_doc = {"status": status, "retry_after": got_after}
    problems = []
    if status != ctx.case.status:
        problems.append(f"the upstream answered HTTP {ctx.case.status}, the client got {status}")
    if want_after is not None and got_after is None:
        problems.append(f"the upstream's retry-after ({want_after:g} s) did not reach the client")
    if not problems:
        return []
    return [differing("; ".join(problems), expected_doc, observed_doc)]


CHECKS: tuple[Check, ...] = (
    Check("proxy-streaming", "a gateway streams: the first byte before the upstream's last event", "C15", "message", _streams, check_proxy_streaming, needs="proxy", needs_default=False),
    Check("proxy-upstream-cut", "an upstream connection dropped mid-stream reaches the client as an error", "C2, C15", "message", _streams, check_proxy_upstream_cut, needs="proxy", needs_default=False),
    Check("proxy-error-status", "an upstream HTTP error reaches the client with its status and retry-after", "C15, C16", "message", _http_error, check_proxy_error_status, needs="proxy", needs_default=False),
)  # fmt: skip
