"""The stream checks: one body replayed whole, split, cut short, judged against the
contract and the reference's message (C1-C16). They apply to every adapter at its level.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import Any

from stream_harness.adapters.gateways import compare
from stream_harness.adapters.protocol import AdapterResult
from stream_harness.conformance.cases import Case
from stream_harness.contract.diff import comparable_block, message_differences, short_diff
from stream_harness.contract.events import AssistantMessage, DoneEvent, ErrorEvent, Event, ToolCall
from stream_harness.contract.rules import Violation, check_contract
from stream_harness.providers.stop_reasons import map_stop_reason
from stream_harness.recordings.chunking import format_cuts, split_at

from .engine import (
    Check,
    CheckContext,
    Failure,
    as_json,
    differing,
    message_key,
    outcome_of,
    shrink_cuts,
    summary_of,
)


def _always(case: Case, expected: list[Event]) -> bool:
    return True


def _is_stream(case: Case, expected: list[Event]) -> bool:
    return case.status < 400


def _ends_in_error(case: Case, expected: list[Event]) -> bool:
    return isinstance(expected[-1], ErrorEvent)


def _has_tool_calls(case: Case, expected: list[Event]) -> bool:
    return any(e.type == "toolcall_start" for e in expected)


def _stop_reason_decides(case: Case, expected: list[Event]) -> bool:
    """The wire carried a stop reason and it, not some later fault, decided the ending.

    A stream that ends in an in-band error after a finish reason (OpenRouter) is an error
    whatever the stop reason said; error-surfacing judges that case.
    """
    last = expected[-1]
    if not isinstance(last, DoneEvent | ErrorEvent) or last.message.provider_stop_reason is None:
        return False
    msg = last.message
    refusal = (
        isinstance(last, ErrorEvent)
        and last.error is not None
        and last.error.provider_type == "refusal"
    )
    has_calls = any(isinstance(b, ToolCall) for b in msg.content)
    mapped = map_stop_reason(
        case.protocol, msg.provider_stop_reason, has_tool_calls=has_calls, refusal=refusal
    )
    return mapped.reason == msg.stop_reason


def _no_events(result: AdapterResult) -> Failure | None:
    if result.crashed:
        return differing(
            f"the adapter crashed: {result.crashed}", {"events": "a sequence"}, outcome_of(result)
        )
    if result.events is None:
        return differing(
            "an event-level adapter returned no events", {"events": "a sequence"}, {"events": None}
        )
    return None


def check_contract_rules(ctx: CheckContext) -> list[Failure]:
    result = ctx.whole()
    problem = _no_events(result)
    if problem:
        return [problem]
    assert result.events is not None
    return [_violation(v, result.events) for v in check_contract(result.events)]


def _violation(v: Violation, events: Sequence[Event], **extra: Any) -> Failure:
    """A contract violation: what the rule allows there against the event that came."""
    at = v.index if v.index is not None and 0 <= v.index < len(events) else None
    observed = events[at].model_dump(mode="json") if at is not None else [e.type for e in events]
    return Failure(
        str(v),
        expected=as_json({"event": at, "is": f"allowed here by {v.rule} (specs/contract.md)"}),
        observed=as_json({"event": at, "is": observed}),
        path="is",
        **extra,
    )


def check_split_invariance(ctx: CheckContext) -> list[Failure]:
    whole = ctx.whole()
    if whole.crashed:
        return [
            differing(
                f"the adapter crashed on the whole body: {whole.crashed}",
                {"crashed": None},
                outcome_of(whole),
            )
        ]
    baseline = message_key(whole)

    def fails(cuts: list[int]) -> bool:
        return bool(message_key(ctx.run_cuts(cuts)) != baseline)

    for cuts in ctx.iter_splits():
        if fails(cuts):
            small = cuts if ctx.replaying else shrink_cuts(cuts, fails)
            observed = ctx.run_cuts(small)
            return [
                differing(
                    f"split at {small} gives a different final message than the whole body "
                    f"({summary_of(observed)} instead of {summary_of(whole)})",
                    outcome_of(whole),
                    outcome_of(observed),
                    split=format_cuts(split_at(ctx.case.body, small)),
                    command=ctx.command("split-invariance", small),
                )
            ]
    return []


def comparable_message(message: AssistantMessage | None) -> Any:
    """The parts of a message the ``expected`` check compares, as JSON."""
    if message is None:
        return None
    return {
        "content": [comparable_block(b) for b in message.content],
        "stop_reason": message.stop_reason,
        "provider_stop_reason": message.provider_stop_reason,
        "usage": message.usage.model_dump(mode="json") if message.usage is not None else None,
        "has_error_message": message.error_message is not None,
    }


def client_protocol(ctx: CheckContext) -> str | None:
    """The protocol a gateway's client reads, or None for a library adapter."""
    value = getattr(ctx.adapter, "client_protocol", None)
    return value if isinstance(value, str) else None


def check_expected(ctx: CheckContext) -> list[Failure]:
    result = ctx.whole()
    want = comparable_message(ctx.expected_message)
    if result.crashed:
        return [differing(f"the adapter crashed: {result.crashed}", want, outcome_of(result))]
    client = client_protocol(ctx)
    if client is not None:  # a gateway: compared at the contract level, across protocols
        found = compare.differences(ctx.expected_message, ctx.case.protocol, result.message, client)
        if not found:
            return []
        return [
            differing(
                "; ".join(found),
                compare.view(ctx.expected_message, client=client),
                compare.view(result.message, client=client),
            )
        ]
    diffs = compare_messages(ctx.expected_message, result)
    if not diffs:
        return []
    return [differing("; ".join(diffs), want, comparable_message(result.message))]


def check_live_arguments(ctx: CheckContext) -> list[Failure]:
    for cuts in [[], *itertools.islice(ctx.iter_splits(), max(1, ctx.examples // 10))]:
        result = ctx.run_cuts(cuts)
        problem = _no_events(result)
        if problem:
            return [problem]
        assert result.events is not None
        bad = [v for v in check_contract(result.events) if v.rule in ("C7", "C9")]
        if bad:
            return [
                _violation(
                    bad[0], result.events,
                    split=format_cuts(split_at(ctx.case.body, cuts)) if cuts else None,
                    command=ctx.command("live-arguments", cuts),
                )
            ]  # fmt: skip
    return []


def check_stop_reason(ctx: CheckContext) -> list[Failure]:
    result = ctx.whole()
    msg = result.message
    want = ctx.expected_message
    if msg is None:
        return [
            differing(
                f"no message (terminal: {result.terminal}; {result.raised or result.crashed or ''})".strip(),
                {
                    "provider_stop_reason": want.provider_stop_reason,
                    "stop_reason": want.stop_reason,
                },
                outcome_of(result),
            )
        ]
    has_calls = any(isinstance(b, ToolCall) for b in msg.content)
    # Whether the wire carried a refusal is a fact of the case, read from the reference.
    ref = ctx.expected[-1]
    refusal = (
        isinstance(ref, ErrorEvent)
        and ref.error is not None
        and ref.error.provider_type == "refusal"
    )
    client = client_protocol(ctx)
    if client is not None and client != ctx.case.protocol:
        # Across protocols the raw value is the client protocol's own word: it must map, by
        # that protocol's table, to the stop reason the upstream's raw value maps to.
        mapped = map_stop_reason(
            client, msg.provider_stop_reason, has_tool_calls=has_calls, refusal=refusal
        ).reason
        problems = []
        # No raw value (a stream that ended before one came): only the outcome is compared.
        if msg.provider_stop_reason is not None and mapped != msg.stop_reason:
            problems.append(
                f"stop_reason {msg.stop_reason!r} for raw {msg.provider_stop_reason!r}; specs/stop_reasons.yaml maps it to {mapped!r} for {client}"
            )
        if msg.stop_reason != want.stop_reason:
            problems.append(
                f"stop_reason {msg.stop_reason!r} (raw {msg.provider_stop_reason!r} on {client}), the upstream's {want.provider_stop_reason!r} is {want.stop_reason!r}"
            )
        expected_doc = {"stop_reason": want.stop_reason, "upstream_raw": want.provider_stop_reason}
        observed_doc = {"stop_reason": msg.stop_reason, "client_raw": msg.provider_stop_reason}
    else:
        mapped = map_stop_reason(
            ctx.case.protocol, msg.provider_stop_reason, has_tool_calls=has_calls, refusal=refusal
        ).reason
        problems = []
        if msg.provider_stop_reason != want.provider_stop_reason:
            problems.append(
                f"raw stop reason {msg.provider_stop_reason!r}, the wire says {want.provider_stop_reason!r}"
            )
        if msg.stop_reason != mapped:
            problems.append(
                f"stop_reason {msg.stop_reason!r} for raw {msg.provider_stop_reason!r}; specs/stop_reasons.yaml maps it to {mapped!r}"
            )
        expected_doc = {"provider_stop_reason": want.provider_stop_reason, "stop_reason": mapped}
        observed_doc = {
            "provider_stop_reason": msg.provider_stop_reason,
            "stop_reason": msg.stop_reason,
        }
    if not problems:
        return []
    return [differing("; ".join(problems), expected_doc, observed_doc)]


def check_error_surfacing(ctx: CheckContext) -> list[Failure]:
    result = ctx.whole()
    want = ctx.expected_message
    expected_doc = {
        "terminal": "error",
        "error_message": want.error_message,
        "content": [comparable_block(b) for b in want.content],
    }
    if result.crashed:
        return [
            differing(f"the adapter crashed: {result.crashed}", expected_doc, outcome_of(result))
        ]
    got_text = (result.message.error_message if result.message else None) or result.raised or ""
    observed_doc = {
        "terminal": result.terminal,
        "error_message": got_text or None,
        "content": [comparable_block(b) for b in result.message.content] if result.message else [],
    }
    if result.terminal == "done":
        return [
            differing(
                f"ended in done, but the response is an error: {want.error_message}",
                expected_doc,
                observed_doc,
            )
        ]
    out = []
    ref = ctx.expected[-1]
    provider_spoke = not (
        isinstance(ref, ErrorEvent) and ref.error is not None and ref.error.origin == "stream"
    )
    # When the stream itself was broken (cut, malformed) the reference's message is its own
    # wording, which no other adapter can be asked to repeat: ending in error is enough.
    if provider_spoke and want.error_message and want.error_message not in got_text:
        out.append(
            f"the provider's message {want.error_message!r} is not in what was surfaced {got_text[:200]!r}"
        )
    if want.content and (result.message is None or result.message.content != want.content):
        want_blocks = [comparable_block(b) for b in want.content]
        have_blocks = (
            [comparable_block(b) for b in result.message.content] if result.message else []
        )
        out.append(
            f"content received before the error {_content_difference(want_blocks, have_blocks)}"
        )
    if not out:
        return []
    if not provider_spoke or (want.error_message and want.error_message in got_text):
        # The wording is not the complaint: the first difference must point at the content.
        expected_doc["error_message"] = observed_doc["error_message"]
    return [differing("; ".join(out), expected_doc, observed_doc)]


def _content_difference(want: list[Any], have: list[Any]) -> str:
    """What happened to the blocks received before an error, said where it happened: a
    count when blocks were lost, else the first block and field that differ."""
    if len(have) < len(want):
        return f"was lost: {len(want)} blocks expected, {len(have)} kept"
    if len(have) > len(want):
        return f"gained blocks: {len(want)} expected, {len(have)} surfaced"
    return f"differs {short_diff({'content': want}, {'content': have})}"


def check_truncation(ctx: CheckContext) -> list[Failure]:
    body = ctx.case.body
    n = len(body)
    if n < 8:
        return []
    offsets: list[int] = []
    if ctx.only_truncate is not None:
        offsets = [ctx.only_truncate]
    else:
        rng = random.Random(f"trunc:{ctx.seed}:{ctx.case.id}")
        # A cut counts only where the reference says the stream is unfinished: a body may be
        # complete long before its end (a finish_reason and then a large moderation chunk,
        # before [DONE]), and ending `done` there is right. So the seeded offsets in
        # [n/4, n/2) that the reference ends in error, else those in [1, n/4).
        for low, high in ((n // 4, max(n // 4 + 1, n // 2)), (1, max(2, n // 4))):
            drawn = sorted({rng.randrange(low, high) for _ in range(3)})
            offsets = [k for k in drawn if ctx.case.cut_ends_in_error(k)]
            if offsets:
                break
    for k in offsets:
        result = ctx.run_body(body[:k])
        command = ctx.command("truncation", truncate=k)
        if result.crashed:
            return [
                differing(
                    f"body truncated at byte {k}: the adapter crashed: {result.crashed}",
                    {"terminal": "error"},
                    outcome_of(result),
                    command=command,
                )
            ]
        if result.terminal == "done":
            return [
                differing(
                    f"body truncated at byte {k} of {n} ended in done; a cut stream must end in error",
                    {"terminal": "error"},
                    outcome_of(result),
                    command=command,
                )
            ]
        if ctx.adapter.level == "event" and result.events is not None:
            bad = check_contract(result.events)
            if bad:
                return [_violation(bad[0], result.events, command=command)]
    return []


def check_overflow_classification(ctx: CheckContext) -> list[Failure]:
    want = ctx.expected[-1]
    assert isinstance(want, ErrorEvent)
    expected_doc = {
        "terminal": "error",
        "kind": want.error.kind if want.error else None,
        "retryable": want.error.retryable if want.error else None,
    }
    result = ctx.whole()
    problem = _no_events(result)
    if problem:
        return [problem]
    assert result.events is not None
    got = result.events[-1]
    if not isinstance(got, ErrorEvent):
        return [differing(f"ended in {got.type}, not error", expected_doc, {"terminal": got.type})]
    if got.error is None:
        return [
            differing(
                "the error event carries no classification",
                expected_doc,
                {"terminal": "error", "kind": None, "retryable": None},
            )
        ]
    if want.error is not None and (got.error.kind, got.error.retryable) != (
        want.error.kind,
        want.error.retryable,
    ):
        return [
            differing(
                f"classified {got.error.kind} (retryable={got.error.retryable}), expected {want.error.kind} (retryable={want.error.retryable})",
                expected_doc,
                {"terminal": "error", "kind": got.error.kind, "retryable": got.error.retryable},
            )
        ]
    return []


def compare_messages(expected: AssistantMessage, result: AdapterResult) -> list[str]:
    """Human-readable differences between the expected message and an adapter's."""
    msg = result.message
    if msg is None:
        return [
            f"no final message (terminal: {result.terminal}{'; raised ' + result.raised if result.raised else ''})"
        ]
    return message_differences(expected, msg)


CHECKS: tuple[Check, ...] = (
    Check("contract", "event sequence follows the contract grammar", "C1-C12", "event", _always, check_contract_rules),
    Check("split-invariance", "any split of the body gives the same final message", "C13", "message", _always, check_split_invariance),
    Check("expected", "final message agrees with specs/expected", "C6-C8, C14", "message", _always, check_expected),
    Check("live-arguments", "live tool arguments grow monotonically to the final parse", "C7, C9", "event", _has_tool_calls, check_live_arguments),
    Check("stop-reason", "stop reason mapped per specs/stop_reasons.yaml", "C14", "message", _stop_reason_decides, check_stop_reason),
    Check("error-surfacing", "errors end in error with the provider's message, nothing lost", "C15", "message", _ends_in_error, check_error_surfacing),
    Check("truncation", "a body cut mid-stream ends in error, never done", "C2, C15", "message", _is_stream, check_truncation),
    Check("overflow-classification", "error events carry the classification of specs/overflow.yaml", "C16", "event", _ends_in_error, check_overflow_classification, needs="classifies_errors"),
)  # fmt: skip
