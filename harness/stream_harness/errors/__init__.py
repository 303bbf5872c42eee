"""Provider errors, classified once: overflow, rate limit, overload, transient or fatal.

``classify`` turns a status, body, headers, message and stop reason into the contract's
``ErrorInfo``; ``retry_delay`` reads the server's wait hint; ``error_details_from_body``
finds the provider's own message in any error body shape; ``is_context_overflow`` decides
whether a finished turn overflowed the window. The facts behind them are the tables
``specs/overflow.yaml`` and ``specs/retry.yaml``; the policy is in ``specs/errors.md``.
"""

from stream_harness.errors.body import ErrorDetails, error_details_from_body
from stream_harness.errors.classify import classify, is_context_overflow, is_retryable
from stream_harness.errors.delay import retry_delay
from stream_harness.errors.durations import parse_duration
from stream_harness.errors.tables import ErrorTableError

__all__ = [
    "ErrorDetails",
    "ErrorTableError",
    "classify",
    "error_details_from_body",
    "is_context_overflow",
    "is_retryable",
    "parse_duration",
    "retry_delay",
]
