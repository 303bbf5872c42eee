"""The loop's settings and its states.

Every policy the seeds differ on (retry, fallback, concurrency, the permission and
doom-loop rules, compaction, eager tools) is one field here, so a scenario chooses a seed's
behaviour by configuration and the machine has a single code path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal, TypeAlias

from stream_harness.loop.messages import Message, estimate_tokens
from stream_harness.loop.retry import RetryPolicy
from stream_harness.loop.tools import DoomLoopAction, PermissionAction

CompactionCount: TypeAlias = Literal["prompt", "input", "total"]
Compactor: TypeAlias = Callable[[Sequence[Message]], Sequence[Message]]


class LoopState(StrEnum):
    IDLE = "idle"
    STREAMING = "streaming"  # a request is open; in eager mode tools may run too
    RETRY_WAIT = "retry_wait"  # the abortable sleep before a resend
    EXECUTING = "executing"  # the response is committed; its tools run
    DONE = "done"


@dataclass(frozen=True)
class LoopConfig:
    model: str = "model"
    fallback_model: str | None = None
    fallback_after: int = 3
    """Consecutive ``overloaded`` errors before switching to ``fallback_model`` (Claude Code's
    MAX_529_RETRIES, research/seed-systems.md C.4)."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    concurrency_limit: int = 10
    """Claude Code's default cap (CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY, C.1)."""
    doom_loop: DoomLoopAction = "ask"
    """The gate's rule for the permission ``doom_loop`` (opencode's default: ask)."""
    doom_loop_threshold: int = 3
    """opencode's DOOM_LOOP_THRESHOLD (A.3)."""
    continue_on_deny: bool = False
    permissions: Mapping[str, PermissionAction] = field(default_factory=lambda: {"*": "allow"})
    """The gate's rules per tool name, ``*`` for any other tool (opencode's ruleset; its
    default agent allows every tool). ``ask`` asks the host for each call."""
    """opencode's ``continue_loop_on_deny``: a denied doom loop stops the run unless set."""
    context_window: int | None = None
    compaction_threshold: float = 0.9
    """seeds/000 ``finish``: compact when the last response's input tokens exceed
    ``limit.context * 0.9``."""
    compaction_tokens: CompactionCount = "prompt"
    """What is compared with the threshold after a response: ``prompt`` (input + cache read +
    cache write: the request's whole input, :func:`~stream_harness.loop.messages.prompt_tokens`),
    ``input`` (the contract's uncached input only) or ``total`` (every counter)."""
    pre_request_compaction: bool = True
    """Also compact before a request whose estimated input exceeds the threshold (Claude
    Code's auto-compact before streaming, seeds/003 ``O$``)."""
    estimate: Callable[[Sequence[Message]], int] = estimate_tokens
    """The estimated input of a request carrying a history (pre-request compaction)."""
    eager_tools: bool = False
    """Start a call while the response still streams, once a later event shows the call is
    complete (Claude Code's StreamingToolExecutor, C.2). Off: calls start after the stream."""
    max_turns: int = 100

    def __post_init__(self) -> None:
        if self.concurrency_limit < 1:
            raise ValueError("concurrency_limit must be at least 1")
        if self.fallback_after < 1 or self.doom_loop_threshold < 1 or self.max_turns < 1:
            raise ValueError("fallback_after, doom_loop_threshold and max_turns must be at least 1")
        if not 0 < self.compaction_threshold <= 1:
            raise ValueError("compaction_threshold must be in (0, 1]")
