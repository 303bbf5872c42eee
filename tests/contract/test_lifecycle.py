"""The lifecycle table is total, names every block event, and the two sides read it."""

from __future__ import annotations

import typing

import pytest

from stream_harness.contract.events import DELTA_TYPES, END_TYPES, START_TYPES
from stream_harness.contract.lifecycle import (
    MOVES,
    TRANSITIONS,
    LifecycleError,
    Move,
    Phase,
    Refusal,
    advance,
)
from stream_harness.contract.rules import check_contract
from stream_harness.providers.accumulator import Accumulator


def test_the_table_is_total_and_its_phases_are_its_own() -> None:
    phases, moves = typing.get_args(Phase), typing.get_args(Move)
    assert set(TRANSITIONS) == {(p, m) for p in phases for m in moves}
    assert all(isinstance(to, Refusal) or to in phases for to in TRANSITIONS.values())


def test_every_block_event_type_is_a_move() -> None:
    assert set(MOVES) == START_TYPES | DELTA_TYPES | END_TYPES


@pytest.mark.parametrize(("phase", "move"), [("new", "delta"), ("open", "start"), ("ended", "end")])
def test_a_refused_move_raises_for_the_emitting_side(phase: Phase, move: Move) -> None:
    with pytest.raises(LifecycleError):
        advance(phase, move)


def test_the_accumulator_leaves_every_block_ended_at_the_terminal() -> None:
    acc = Accumulator("anthropic-messages")
    acc.text("a", "hi")
    acc.tool_call("b", id="c1", name="f", delta='{"x":')
    acc.thinking("a", "hmm")
    acc.fail("cut")
    assert check_contract(acc.drain()) == []
    assert [b.phase for b in acc._blocks] == ["ended", "ended", "ended"]
