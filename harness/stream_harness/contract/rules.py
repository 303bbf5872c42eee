"""Checks of the rules C1-C12 of specs/contract.md on one event sequence.

The block lifecycle (C3, C5) is read from the transition table of
stream_harness.contract.lifecycle, which the accumulator that emits events reads too.

Only the events are needed, so these checks apply to any event-level adapter. Each
violation names its rule id so that reports can cite it; the checker never raises on
a malformed sequence, because reporting malformed sequences is its job.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stream_harness.contract.events import (
    DoneEvent,
    ErrorEvent,
    Event,
    TextBlock,
    TextDeltaEvent,
    TextEndEvent,
    ThinkingBlock,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from stream_harness.contract.lifecycle import MOVES, NOT_CLOSED, TRANSITIONS, Phase, Refusal
from stream_harness.contract.partial_json import parse_partial


@dataclass(frozen=True, slots=True)
class Violation:
    rule: str
    message: str
    index: int | None = None  # position of the offending event in the sequence

    def __str__(self) -> str:
        where = f" (event #{self.index})" if self.index is not None else ""
        return f"{self.rule}{where}: {self.message}"


def is_prefix_value(live: Any, final: Any) -> bool:
    """The C9 relation: ``live`` could be a partial rendering of ``final``.

    Objects: the live keys are the first keys of the final object, in order; every key
    but the last has its final value; the last one's value is itself a prefix. Arrays
    likewise by position. Strings grow by appending. Other scalars appear only complete.
    """
    if isinstance(live, dict):
        if not isinstance(final, dict):
            return False
        lk, fk = list(live), list(final)
        if fk[: len(lk)] != lk:
            return False
        for k in lk[:-1]:
            if live[k] != final[k]:
                return False
        return not lk or is_prefix_value(live[lk[-1]], final[lk[-1]])
    if isinstance(live, list):
        if not isinstance(final, list) or len(live) > len(final):
            return False
        if any(a != b for a, b in zip(live[:-1], final, strict=False)):
            return False
        return not live or is_prefix_value(live[-1], final[len(live) - 1])
    if isinstance(live, str):
        return isinstance(final, str) and final.startswith(live)
    return type(live) is type(final) and bool(live == final)


def check_contract(events: Sequence[Event]) -> list[Violation]:
    """Every violation of C1-C12 in ``events`` (an empty list means conformant)."""
    out: list[Violation] = []
    if not events:
        return [Violation("C1", "no events at all (expected start ... terminal)")]

    _check_start_and_terminal(events, out)

    kinds: dict[int, str] = {}
    phases: dict[int, Phase] = {}  # per started block, its phase in the lifecycle table
    ended: dict[int, Event] = {}
    deltas: dict[int, list[str]] = {}
    live_args: dict[int, list[tuple[int, dict[str, Any]]]] = {}
    starts: dict[int, ToolCallStartEvent] = {}
    next_index = 0
    terminal: DoneEvent | ErrorEvent | None = None

    for i, e in enumerate(events):
        if isinstance(e, DoneEvent | ErrorEvent):
            if terminal is None:
                terminal = e
                open_blocks = sorted(
                    ci
                    for ci, phase in phases.items()
                    if isinstance(TRANSITIONS[(phase, "terminal")], Refusal)
                )
                if open_blocks:
                    out.append(Violation(NOT_CLOSED.rule, NOT_CLOSED.say(blocks=open_blocks), i))
            continue
        if terminal is not None:
            continue  # already reported under C2
        found = MOVES.get(e.type)
        if found is None:
            continue
        kind, move = found
        ci: int = e.content_index  # type: ignore[union-attr]
        phase = phases.get(ci, "new")
        if move != "start" and phase != "new" and kinds[ci] != kind:
            move = "foreign"
        after = TRANSITIONS[(phase, move)]
        if isinstance(after, Refusal):
            out.append(Violation(after.rule, after.say(type=e.type, ci=ci, kind=kinds.get(ci)), i))
            continue
        if after is not phase:
            phases[ci] = after
        if move == "start":
            if ci != next_index:
                out.append(
                    Violation(
                        "C4", f"block started with content_index {ci}, expected {next_index}", i
                    )
                )
            next_index = max(next_index, ci) + 1
            kinds[ci] = kind
            deltas[ci] = []
            if isinstance(e, ToolCallStartEvent):
                starts[ci] = e
            continue
        if isinstance(e, TextDeltaEvent | ThinkingDeltaEvent):
            deltas[ci].append(e.delta)
        elif isinstance(e, ToolCallDeltaEvent):
            deltas[ci].append(e.delta)
            live_args.setdefault(ci, []).append((i, e.arguments))
        elif move == "end":
            ended[ci] = e
            _check_end(e, "".join(deltas[ci]), starts.get(ci), live_args.get(ci, []), i, out)

    if terminal is not None:
        _check_message(terminal, kinds, ended, out, len(events) - 1)
    return out


def _check_start_and_terminal(events: Sequence[Event], out: list[Violation]) -> None:
    """C1 (one start, first) and C2 (one terminal event, last): totals over the whole
    sequence, which no per-event transition says."""
    # C1
    if events[0].type != "start":
        out.append(Violation("C1", f"first event is {events[0].type!r}, not 'start'", 0))
    for i, e in enumerate(events[1:], 1):
        if e.type == "start":
            out.append(Violation("C1", "a second 'start'", i))

    # C2
    terminals = [i for i, e in enumerate(events) if e.type in ("done", "error")]
    if not terminals:
        out.append(Violation("C2", "no terminal event (done or error)"))
    else:
        if len(terminals) > 1:
            out.append(Violation("C2", f"{len(terminals)} terminal events", terminals[1]))
        if terminals[0] != len(events) - 1:
            out.append(
                Violation(
                    "C2",
                    f"{len(events) - 1 - terminals[0]} event(s) after the terminal event",
                    terminals[0] + 1,
                )
            )


def _check_end(
    e: Event,
    joined: str,
    start: ToolCallStartEvent | None,
    lives: list[tuple[int, dict[str, Any]]],
    i: int,
    out: list[Violation],
) -> None:
    if isinstance(e, TextEndEvent | ThinkingEndEvent):
        if e.content != joined:
            out.append(
                Violation(
                    "C6",
                    f"{e.type} content ({len(e.content)} chars) differs from its deltas ({len(joined)} chars)",
                    i,
                )
            )
        return
    assert isinstance(e, ToolCallEndEvent)
    _check_arguments(e, joined, i, out)
    _check_live_arguments(e.tool_call.arguments, joined, lives, out)
    if start is not None:
        _check_start_matches(start, e, i, out)


def _check_arguments(e: ToolCallEndEvent, joined: str, i: int, out: list[Violation]) -> None:
    """C7: the end's arguments, raw text and strictness are those of its fragments."""
    parsed = parse_partial(joined) if joined.strip() else {}
    expected = parsed if isinstance(parsed, dict) else {}
    if e.tool_call.arguments != expected:
        out.append(
            Violation(
                "C7",
                f"tool call arguments {_short(e.tool_call.arguments)} != parse of fragments {_short(expected)}",
                i,
            )
        )
    if e.raw_arguments is not None and e.raw_arguments != joined:
        out.append(
            Violation(
                "C7",
                f"toolcall_end raw_arguments {_short(e.raw_arguments)} != the fragments {_short(joined)}",
                i,
            )
        )
    strict = _is_json(joined) and isinstance(parsed, dict)
    if e.strict is not None and e.strict != strict:
        out.append(
            Violation(
                "C7",
                f"toolcall_end strict is {e.strict}, but the fragments {'do' if strict else 'do not'} parse strictly as an object",
                i,
            )
        )


def _check_live_arguments(
    final: dict[str, Any],
    joined: str,
    lives: list[tuple[int, dict[str, Any]]],
    out: list[Violation],
) -> None:
    """C9: live arguments only grow, each a prefix of the final ones."""
    previous: dict[str, Any] = {}
    if not _is_json(joined):
        lives = []  # C9 promises nothing for a malformed argument text (C7 still applies)
    for j, live in lives:
        if not is_prefix_value(previous, live):
            out.append(
                Violation(
                    "C9",
                    f"live arguments shrank or changed: {_short(previous)} -> {_short(live)}",
                    j,
                )
            )
            break
        if not is_prefix_value(live, final):
            out.append(
                Violation(
                    "C9",
                    f"live arguments {_short(live)} are not a prefix of the final {_short(final)}",
                    j,
                )
            )
            break
        previous = live


def _check_start_matches(
    start: ToolCallStartEvent, e: ToolCallEndEvent, i: int, out: list[Violation]
) -> None:
    """C10: the start's id and name, when given, are the end's."""
    if start.id and start.id != e.tool_call.id:
        out.append(
            Violation("C10", f"toolcall_start id {start.id!r} != final id {e.tool_call.id!r}", i)
        )
    if start.name and start.name != e.tool_call.name:
        out.append(
            Violation(
                "C10",
                f"toolcall_start name {start.name!r} != final name {e.tool_call.name!r}",
                i,
            )
        )


def _check_message(
    terminal: DoneEvent | ErrorEvent,
    kinds: dict[int, str],
    ended: dict[int, Event],
    out: list[Violation],
    i: int,
) -> None:
    msg = terminal.message
    if len(msg.content) != len(kinds):
        out.append(
            Violation("C8", f"message has {len(msg.content)} blocks, {len(kinds)} were started", i)
        )
    for ci, block in enumerate(msg.content):
        end = ended.get(ci)
        if end is None:
            continue
        expected: TextBlock | ThinkingBlock | ToolCall | None = None
        if isinstance(end, TextEndEvent):
            expected = TextBlock(content=end.content, signature=end.signature)
        elif isinstance(end, ThinkingEndEvent):
            expected = ThinkingBlock(
                content=end.content, signature=end.signature, redacted=end.redacted
            )
        elif isinstance(end, ToolCallEndEvent):
            expected = end.tool_call
        if expected is not None and block != expected:
            out.append(Violation("C8", f"message block {ci} differs from its {end.type} event", i))
    ids = [b.id for b in msg.content if isinstance(b, ToolCall)]
    if any(not x for x in ids):
        out.append(Violation("C10", "a tool call has an empty id", i))
    dupes = sorted({x for x in ids if x and ids.count(x) > 1})
    if dupes:
        out.append(Violation("C10", f"duplicate tool call ids {dupes}", i))
    if isinstance(terminal, DoneEvent):
        if terminal.reason != msg.stop_reason:
            out.append(
                Violation(
                    "C11",
                    f"done.reason {terminal.reason!r} != message.stop_reason {msg.stop_reason!r}",
                    i,
                )
            )
        if msg.error_message is not None:
            out.append(Violation("C11", "a done message carries an error_message", i))
    else:
        if terminal.reason != msg.stop_reason:
            out.append(
                Violation(
                    "C11",
                    f"error.reason {terminal.reason!r} != message.stop_reason {msg.stop_reason!r}",
                    i,
                )
            )
        if not terminal.error_message:
            out.append(Violation("C11", "error event with an empty error_message", i))
        elif terminal.error_message != msg.error_message:
            out.append(
                Violation("C11", "error.error_message differs from message.error_message", i)
            )
    u = msg.usage
    if min(u.input, u.output, u.cache_read, u.cache_write, u.total) < 0:
        out.append(Violation("C12", f"negative usage counter {u}", i))


def _is_json(text: str) -> bool:
    if not text.strip():
        return True
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
