"""How long to wait before resending, and whether to: the loop's retry policy.

The decision reads only the terminal event's ``ErrorInfo`` (kind, retryable): the
classification is harness.errors' job and the loop never matches message strings. The
server's wait hint comes from ``harness.errors.retry_delay`` over the response headers and
body, with the loop's clock as ``now`` so that an HTTP-date ``retry-after`` is honoured on
virtual time; without a response (a mid-stream error event) the hint already in
``ErrorInfo.retry_after`` is used.

No jitter: delays are a pure function of the attempt number, so that scenarios can pin the
virtual end time. opencode's Effect revision and Claude Code add 25% jitter
(research/seed-systems.md A.5, C.4); a host that wants it wraps :func:`backoff_delay`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from harness.errors import retry_delay
from harness.events import ErrorInfo


@dataclass(frozen=True)
class RetryPolicy:
    """Defaults from research/seed-systems.md E.2: base 2 s, factor 2, cap 30 s without a
    hint, 5 retries (opencode classic has no maximum, pi 3, Claude Code 10)."""

    max_retries: int = 5
    base: float = 2.0
    factor: float = 2.0
    cap: float = 30.0

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.base < 0 or self.factor < 1 or self.cap < 0:
            raise ValueError(f"invalid retry policy {self!r}")


def backoff_delay(policy: RetryPolicy, retry: int) -> float:
    """``min(base * factor**(retry-1), cap)`` seconds for the ``retry``-th retry (1-based)."""
    exponent = max(0, retry - 1)
    # The cap is reached long before the float overflows; stop multiplying once it is.
    delay = policy.base
    for _ in range(exponent):
        delay *= policy.factor
        if delay >= policy.cap:
            return policy.cap
    return min(delay, policy.cap)


@dataclass(frozen=True)
class RetryDecision:
    delay: float
    hinted: bool


def decide_delay(
    policy: RetryPolicy,
    retry: int,
    info: ErrorInfo,
    *,
    headers: Mapping[str, str] | None,
    body: bytes | None,
    now: datetime,
) -> RetryDecision:
    """The wait before the ``retry``-th retry: the server's hint when it gave one, else backoff.

    A hint is used as the server said it (harness.errors clamps it only at 2^31-1 ms), also
    above ``cap``: the cap bounds our own guess, not the server's word (opencode's Effect
    policy does the same; research/seed-systems.md A.5).
    """
    hint: float | None = None
    if headers:
        hint = retry_delay(headers, body, now=now)
    if hint is None:
        hint = info.retry_after
    if hint is not None and hint > 0:
        return RetryDecision(delay=hint, hinted=True)
    return RetryDecision(delay=backoff_delay(policy, retry), hinted=False)
