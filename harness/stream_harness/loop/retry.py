"""Whether to resend a failed model request, and how long to wait first: seed 000's policy.

opencode's processor (seeds/000, ``SessionRetry``) is the specification:

- **retryable** (``SessionRetry.retryable``): rate limits, overloaded, any error whose message
  says "timeout", and network failures (``error instanceof NetworkError``); nothing else.
  Here the first two are the ``ErrorInfo.kind`` that stream_harness.errors derived from the
  provider's status, type and code (specs/retry.yaml), the third a case-insensitive substring
  of the message, the fourth the host's word that no response came at all (connection
  refused or reset, DNS failure, read timeout) or that the body ended without a terminal
  event. One addition, a documented provider fact: ``transient`` errors (HTTP 408, 409, 5xx,
  a provider's ``api_error``/``server_error``) are retried too, because every reference
  client does (Stainless SDKs and the Vercel AI SDK retry 408, 409, 429 and >= 500:
  research/provider-facts.md 5.6) and opencode's real ``retry.ts`` retries exactly what the
  AI SDK marks ``isRetryable`` (research/seed-systems.md A.5); the seed text is a
  simplification of that file.
- **delay** (``SessionRetry.delay``): ``2 s * 2^(attempt-1)``; a server hint (retry-after
  in seconds, retry-after-ms) replaces it; either is capped at 60 s (``Math.min(delay,
  max)``, ``max = 60000``).
- **count**: ``attempt`` is local to one ``process()`` call, i.e. to one model request and
  its resends (our turn); at most ``max_retries`` (5, the seed's ``attempt < 5``).

No jitter: delays are a pure function of the attempt number, so that scenarios can pin the
virtual end time. opencode's Effect revision and Claude Code add 25% jitter
(research/seed-systems.md A.5, C.4); a host that wants it wraps :func:`backoff_delay`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from stream_harness.contract.events import ErrorInfo, ErrorKind
from stream_harness.errors import retry_delay

SEED_RETRY_KINDS: tuple[ErrorKind, ...] = ("rate_limit", "overloaded", "transient")
"""seeds/000 ``retryable``: rate_limit, overloaded; plus transient (provider-facts.md 5.6)."""


@dataclass(frozen=True)
class RetryPolicy:
    """Defaults are seed 000's numbers: 5 retries, 2 s doubling, capped at 60 s (hints too)."""

    max_retries: int = 5
    base: float = 2.0
    factor: float = 2.0
    cap: float = 60.0
    kinds: tuple[ErrorKind, ...] = SEED_RETRY_KINDS
    """Error kinds resent (the ``ErrorInfo.retryable`` flag must agree, so that a server's
    ``x-should-retry: false`` is obeyed)."""
    message_patterns: tuple[str, ...] = ("timeout",)
    """Case-insensitive substrings of the error message that make any error but an overflow
    retryable (seed 000: ``error.message.includes("timeout")``)."""
    network: bool = True
    """Retry a network failure: no response (connection refused, reset, DNS, read timeout) or
    a body that ended without a terminal event (seed 000: ``instanceof NetworkError``)."""

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.base < 0 or self.factor < 1 or self.cap < 0:
            raise ValueError(f"invalid retry policy {self!r}")

    def retryable(self, info: ErrorInfo, message: str, *, network: bool) -> bool:
        """Seed 000's ``SessionRetry.retryable`` over the classified error. An overflow is
        never retried whatever its message (compaction's job, opencode A.5)."""
        if info.kind == "overflow":
            return False
        if network and self.network:
            return True
        if info.kind in self.kinds and info.retryable:
            return True
        text = message.lower()
        return any(pattern.lower() in text for pattern in self.message_patterns)


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
    """The wait before the ``retry``-th retry: the server's hint when it gave one, else backoff,
    either capped at ``policy.cap``.

    The hint is read by ``stream_harness.errors.retry_delay`` (retry-after-ms, then retry-after in
    seconds or as an HTTP date on the loop's clock, then body and reset hints), else taken from
    ``ErrorInfo.retry_after``. Seed 000 caps it like its own guess (``Math.min(delay, max)``):
    a server asking for ten minutes does not stall the agent for ten minutes.
    """
    hint: float | None = None
    if headers:
        hint = retry_delay(headers, body, now=now)
    if hint is None:
        hint = info.retry_after
    if hint is not None and hint > 0:
        return RetryDecision(delay=min(hint, policy.cap), hinted=True)
    return RetryDecision(delay=backoff_delay(policy, retry), hinted=False)
