"""The machine's pure decisions, alone: what a failed response leads to and how a turn ends.

The scenarios and the stateful test reach these through whole runs; here each rule's order
is pinned where it is decided, so a host that drives the loop another way (real HTTP) can
rely on the same answers.
"""

from __future__ import annotations

import pytest

from stream_harness.contract.events import ErrorInfo, ErrorKind, ToolCall
from stream_harness.loop.config import LoopConfig
from stream_harness.loop.events import Compaction, EndReason, TurnSignal
from stream_harness.loop.executor import ToolExecutor
from stream_harness.loop.recovery import Recovery, recovery_for
from stream_harness.loop.retry import RetryPolicy
from stream_harness.loop.turns import Turn, turn_ending

CONFIG = LoopConfig(
    model="primary", fallback_model="backup", fallback_after=2, retry=RetryPolicy(max_retries=1)
)


def turn(**fields: object) -> Turn:
    made = Turn(index=1, executor=ToolExecutor(1, {}))
    for name, value in fields.items():
        setattr(made, name, value)
    return made


@pytest.mark.parametrize(
    ("kind", "fields", "compacted", "overloads", "model", "expected"),
    [
        # A started tool forbids any resend, whatever the error; an overflow still compacts.
        ("overflow", {"started_tools": True}, False, 0, "primary", Recovery("close", True)),
        ("overloaded", {"started_tools": True}, False, 5, "primary", Recovery("close")),
        # An overflow compacts once per cause, and is never retried.
        ("overflow", {}, False, 0, "primary", Recovery("compact", True)),
        ("overflow", {}, True, 0, "primary", Recovery("close")),
        # Enough overloads switch to the fallback model, unless it is the one that failed.
        ("overloaded", {}, False, 2, "primary", Recovery("fallback")),
        ("overloaded", {}, False, 1, "primary", Recovery("retry")),
        ("overloaded", {}, False, 2, "backup", Recovery("retry")),
        # Retries stop at the policy's cap; a fatal error is never retried.
        ("rate_limit", {"retries": 1}, False, 0, "primary", Recovery("close")),
        ("fatal", {}, False, 0, "primary", Recovery("close")),
    ],
)
def test_recovery_order(
    kind: ErrorKind,
    fields: dict[str, object],
    compacted: bool,
    overloads: int,
    model: str,
    expected: Recovery,
) -> None:
    info = ErrorInfo(kind=kind, retryable=kind != "fatal")
    decided = recovery_for(
        CONFIG,
        info,
        "boom",
        network=False,
        turn=turn(**fields),
        compacted=compacted,
        overloads=overloads,
        model=model,
    )
    assert decided == expected


COMPACTION = Compaction(turn=1, reason="threshold")
CALLED = [ToolCall(id="a", name="read")]


@pytest.mark.parametrize(
    ("fields", "end_reason", "continue_on_deny", "expected"),
    [
        # Cut turns: an error that asked for a compaction compacts; anything else stops.
        ({"compaction": COMPACTION}, "error", False, ("compact", "compact")),
        ({"compaction": COMPACTION}, "aborted", False, ("stop", "aborted")),
        ({}, "error", False, ("stop", "error")),
        # Whole turns: compaction first, then a refusal that blocks, then the calls' results.
        ({"compaction": COMPACTION, "blocked": True}, None, False, ("compact", "compact")),
        ({"blocked": True, "calls": CALLED}, None, False, ("stop", "blocked")),
        ({"blocked": True, "calls": CALLED}, None, True, ("continue", None)),
        ({}, None, False, ("stop", "completed")),
    ],
)
def test_turn_ending(
    fields: dict[str, object],
    end_reason: EndReason | None,
    continue_on_deny: bool,
    expected: tuple[TurnSignal, EndReason | None],
) -> None:
    assert turn_ending(turn(**fields), end_reason, continue_on_deny=continue_on_deny) == expected
