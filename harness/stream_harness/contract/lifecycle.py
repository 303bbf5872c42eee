"""The block lifecycle of specs/contract.md (C3, C5) as one transition table.

Every content block goes ``*_start`` -> ``*_delta``* -> ``*_end``, each event of its own
kind, and none may stay open at the terminal event. h11 keeps its connection machine as
a table that its client and server sides both read; here the table is read by the side
that emits events (stream_harness.providers.accumulator, which advances each block
through it) and by the side that checks them (stream_harness.contract.rules, which
reports a refused move with the refusal's rule and message), so what the one emits and
the other accepts are one definition.

The table is data: (phase of the block, move) -> the next phase, or the
:class:`Refusal` that a checker reports. Content indexes and their order (C4), and what
the contents must be (C6-C10), are not the lifecycle and stay in the checker.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

Phase = Literal["new", "open", "ended"]
"""``new``: no event for the block yet; ``open``: started, deltas may follow; ``ended``."""

Move = Literal["start", "delta", "end", "foreign", "terminal"]
"""What an event does to a block: ``foreign`` is a delta or end of another kind than the
block's; ``terminal`` is the stream's done or error, met with the block in its phase."""

BlockKind = Literal["text", "thinking", "toolcall"]


@dataclass(frozen=True, slots=True)
class Refusal:
    """A move the contract does not allow: the rule it breaks and what a report says.

    ``text`` is a format string over ``type`` (the event's), ``ci`` (its content index),
    ``kind`` (the block's kind) and, for the terminal move, ``blocks`` (every block refused
    at once, one message for all).
    """

    rule: str
    text: str

    def say(self, **fields: Any) -> str:
        return self.text.format(**fields)


STARTED_TWICE: Final = Refusal("C3", "block {ci} started twice")
NEVER_STARTED: Final = Refusal("C3", "{type} for block {ci}, which never started")
OTHER_KIND: Final = Refusal("C3", "{type} for block {ci}, which is a {kind} block")
AFTER_END: Final = Refusal("C3", "{type} for block {ci} after its end")
NOT_CLOSED: Final = Refusal("C5", "blocks {blocks} not closed before the terminal event")

# Plain dicts typed read-only: a MappingProxyType costs a checker a third more per event.
TRANSITIONS: Final[Mapping[tuple[Phase, Move], Phase | Refusal]] = {
    ("new", "start"): "open",
    ("new", "delta"): NEVER_STARTED,
    ("new", "end"): NEVER_STARTED,
    ("new", "foreign"): NEVER_STARTED,
    ("new", "terminal"): "new",
    ("open", "start"): STARTED_TWICE,
    ("open", "delta"): "open",
    ("open", "end"): "ended",
    ("open", "foreign"): OTHER_KIND,
    ("open", "terminal"): NOT_CLOSED,
    ("ended", "start"): STARTED_TWICE,
    ("ended", "delta"): AFTER_END,
    ("ended", "end"): AFTER_END,
    ("ended", "foreign"): OTHER_KIND,
    ("ended", "terminal"): "ended",
}

_KINDS: Final[tuple[BlockKind, ...]] = ("text", "thinking", "toolcall")
_STEPS: Final[tuple[Move, ...]] = ("start", "delta", "end")

MOVES: Final[Mapping[str, tuple[BlockKind, Move]]] = {
    f"{kind}_{step}": (kind, step) for kind in _KINDS for step in _STEPS
}
"""Each block event type -> the kind of block it belongs to and its move (other event
types are not block events)."""


class LifecycleError(RuntimeError):
    """A move the table refuses, made by a side that emits events (a bug of ours)."""

    def __init__(self, phase: Phase, move: Move, refusal: Refusal) -> None:
        super().__init__(f"{refusal.rule}: {move} refused for a block in phase {phase}")
        self.refusal = refusal


def advance(phase: Phase, move: Move) -> Phase:
    """The phase after ``move``; a refused move raises :class:`LifecycleError`."""
    after = TRANSITIONS[(phase, move)]
    if isinstance(after, Refusal):
        raise LifecycleError(phase, move, after)
    return after
