"""What a failed response leads to: retry, fallback, compaction, or the end of the run.

A pure decision on the error's classification and the run's counters, apart from carrying
it out (discarding the attempt, emitting events, starting the timer), so the order of the
seeds' rules is stated once and readable top to bottom.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from stream_harness.contract.events import ErrorInfo
from stream_harness.loop.config import LoopConfig
from stream_harness.loop.turns import Turn

RecoveryAction: TypeAlias = Literal["close", "compact", "fallback", "retry"]


@dataclass(frozen=True)
class Recovery:
    action: RecoveryAction
    """``close``: commit the response with its error and end the run; ``compact``: discard it
    and end the turn for a compaction; ``fallback``: discard it and resend to the fallback
    model; ``retry``: discard it and resend after a delay."""
    overflow: bool = False
    """The turn records an overflow compaction (its end asks for one)."""


def recovery_for(
    config: LoopConfig,
    info: ErrorInfo,
    error_message: str,
    *,
    network: bool,
    turn: Turn,
    compacted: bool,
    overloads: int,
    model: str,
) -> Recovery:
    """``compacted``: a compaction happened since the last committed response; ``overloads``:
    consecutive ``overloaded`` errors, this one included; ``model``: the one that failed."""
    overflow = info.kind == "overflow"
    if turn.started_tools:
        # A tool already runs (eager mode): resending would run it twice (opencode's
        # ProviderRetryUnsafeError). The response is history, with its error.
        return Recovery("close", overflow=overflow)
    if overflow:
        # The request right after a compaction overflows too: compacting again would
        # compact for the same cause (and loop forever with a compactor that cannot
        # shrink the context). The run ends in error, as Claude Code's prompt_too_long.
        return Recovery("close") if compacted else Recovery("compact", overflow=True)
    fallback = config.fallback_model
    if (
        info.kind == "overloaded"
        and fallback
        and fallback != model
        and overloads >= config.fallback_after
    ):
        return Recovery("fallback")
    policy = config.retry
    if policy.retryable(info, error_message, network=network) and turn.retries < policy.max_retries:
        return Recovery("retry")
    return Recovery("close")
