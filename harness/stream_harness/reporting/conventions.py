"""An agent row's declared conventions in words, for the report beside the row.

The conventions mapping (specs/agent_conventions.yaml, as an adapter carries it) holds the
policies the checks read, their sources and each protocol's client policy. Dumped whole it
is a paragraph of dict no reader follows; what a reader needs next to a row is the policy
in a line, and where a protocol's client differs, that difference. The sources stay in
report.jsonl and in the HTML's details.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The keys shown, in this order; the rest (sources, clients, by_protocol) are data.
_SKIP = frozenset({"sources", "by_protocol", "client"})


def _cap(value: Any) -> str:
    return f"{value:g} s" if isinstance(value, int | float) else str(value)


def policy_words(policy: Mapping[str, Any]) -> list[str]:
    """One phrase a policy key, the well-known keys in words, others as ``key=value``."""
    words: list[str] = []
    if "max_retries" in policy:
        words.append(f"{policy['max_retries']} retries")
    if policy.get("framework_retries"):
        words.append(f"{policy['framework_retries']} framework retries")
    if policy.get("retry_after_honoured") is False:
        words.append("retry-after ignored")
    elif "retry_after_cap_s" in policy:
        cap = policy["retry_after_cap_s"]
        over = policy.get("retry_after_over_cap")
        words.append(
            "retry-after waited, no cap"
            if cap is None
            else f"retry-after up to {_cap(cap)}" + (f", above: {over}" if over else "")
        )
    if "retries_after_partial_output" in policy:
        words.append(
            "resends a failed stream"
            if policy["retries_after_partial_output"]
            else "no resend once a stream began"
        )
    if policy.get("retried_statuses"):
        words.append("retried statuses " + ",".join(str(s) for s in policy["retried_statuses"]))
    if "tool_failure" in policy:
        words.append(f"tool failure: {policy['tool_failure']}")
    shown = {
        "max_retries", "framework_retries", "retry_after_honoured", "retry_after_cap_s",
        "retry_after_over_cap", "retries_after_partial_output", "retried_statuses", "tool_failure",
    }  # fmt: skip
    for key, value in policy.items():
        if key in shown or key in _SKIP or value in (None, False, 0, "", [], {}):
            continue
        words.append(key if value is True else f"{key}={value}")
    return words


def conventions_lines(conventions: Mapping[str, Any]) -> list[str]:
    """The row's policy in one line, then one line per protocol whose client differs."""
    lines = ["; ".join(policy_words(conventions)) or "none declared"]
    top = {k: v for k, v in conventions.items() if k not in _SKIP}
    by_protocol = conventions.get("by_protocol") or {}
    for protocol, policy in sorted(by_protocol.items()):
        differs = {k: v for k, v in policy.items() if k not in _SKIP and top.get(k, object()) != v}
        if differs:
            client = policy.get("client")
            label = f"{protocol} ({client})" if client else protocol
            lines.append(f"{label}: " + "; ".join(policy_words(differs)))
    return lines
