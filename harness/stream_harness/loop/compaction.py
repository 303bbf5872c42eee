"""When the loop asks for a compaction: the three paths of seed 000, as decisions only.

These functions read the configuration and what the model reported; they never compact
(the host's compactor does) and never read a clock (the caller stamps the event), so the
thresholds can be tested alone and the machine keeps one place for each rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from stream_harness.contract.events import AssistantMessage
from stream_harness.errors import is_context_overflow
from stream_harness.loop.config import LoopConfig
from stream_harness.loop.events import Compaction, CompactionReason
from stream_harness.loop.messages import Message, prompt_tokens


def tokens_used(config: LoopConfig, message: AssistantMessage) -> int:
    """What ``compaction_tokens`` says to compare with the threshold."""
    usage = message.usage
    count = config.compaction_tokens
    if count == "prompt":
        return prompt_tokens(message)
    if count == "input":
        return usage.input
    return usage.total or usage.input + usage.output + usage.cache_read + usage.cache_write


def compaction_event(
    config: LoopConfig, reason: CompactionReason, used: int | None, *, time: float, turn: int
) -> Compaction:
    return Compaction(
        time=time,
        turn=turn,
        reason=reason,
        used=used,
        context_window=config.context_window,
        threshold=config.compaction_threshold,
    )


def compaction_after(
    config: LoopConfig, message: AssistantMessage, *, time: float, turn: int
) -> Compaction | None:
    """Threshold first (usage above ``compaction_threshold`` of the window), then what the
    provider reports (an overflow stop reason, pi's silent and truncation overflow)."""
    window = config.context_window
    used = tokens_used(config, message)
    if window and used > config.compaction_threshold * window:
        return compaction_event(config, "threshold", used, time=time, turn=turn)
    if is_context_overflow(message, window):
        return compaction_event(config, "overflow", used, time=time, turn=turn)
    return None


def pre_request_estimate(
    config: LoopConfig, history: Sequence[Message], *, compacted: bool
) -> int | None:
    """The estimated input of the next request when it would not fit (compact before it),
    else None. Once per cause: right after a compaction no request is checked again (the
    compactor's output is what the host chose to send)."""
    window = config.context_window
    if not window or not config.pre_request_compaction or compacted:
        return None
    estimate = config.estimate(history)
    return estimate if estimate > config.compaction_threshold * window else None
