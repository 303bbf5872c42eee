"""A row's declared conventions, held to one vocabulary wherever they are declared.

The agent checks read a row's policies by key (``run.convention("max_retries")``) and
fall back to a default for a key that is absent, so a misspelt key (``max_retry``) or an
unknown value (``retry_after_over_cap: gives_up``) would silently hold the row to the
default and change verdicts. The vocabulary is data (``vocabulary`` in
specs/agent_conventions.yaml); the bundled file, a stdio agent's ``agent_start`` and a
``module:object`` adapter's ``conventions`` are all checked against it here.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from stream_harness.contract import facts
from stream_harness.contract.names import known_names

__all__ = ["conventions_problem", "over_cap_policies", "policy_problem", "vocabulary"]

TABLE = "agent_conventions"
# What a conventions mapping holds besides policy keys: data about the policies.
_SOURCES = "sources"
_BY_PROTOCOL = "by_protocol"
_CLIENT = "client"


@functools.cache
def vocabulary() -> Mapping[str, Mapping[str, Any]]:
    """Every policy key a row may declare, with its kind of value and the checks that read it."""
    table: Mapping[str, Mapping[str, Any]] = facts.load_yaml(TABLE)["vocabulary"]
    return table


def over_cap_policies() -> frozenset[str]:
    """What a row may do with a retry-after above its cap (``retry_after_over_cap``)."""
    return frozenset(vocabulary()["retry_after_over_cap"]["value"])


def conventions_problem(conventions: object, where: str = "conventions") -> str | None:
    """Why a row's whole conventions mapping (as an adapter carries it: policy keys,
    ``sources``, ``by_protocol``) is not one the checks can read, or None."""
    if not isinstance(conventions, Mapping):
        return f"{where} must be a mapping, got {type(conventions).__name__}"
    problem = policy_problem(conventions, where, extra=(_SOURCES, _BY_PROTOCOL, _CLIENT))
    if problem is not None:
        return problem
    by_protocol = conventions.get(_BY_PROTOCOL) or {}
    if not isinstance(by_protocol, Mapping):
        return f"{where}.{_BY_PROTOCOL} must map protocols to policies"
    for protocol, policy in by_protocol.items():
        inner = f"{where}.{_BY_PROTOCOL}.{protocol}"
        if not isinstance(policy, Mapping):
            return f"{inner} must be a mapping, got {type(policy).__name__}"
        problem = policy_problem(policy, inner, extra=(_SOURCES, _CLIENT))
        if problem is not None:
            return problem
    return None


def policy_problem(
    policy: Mapping[str, Any], where: str, *, extra: tuple[str, ...] = ()
) -> str | None:
    """Why one policy (policy keys, and the ``extra`` keys the place allows) is not in
    the vocabulary, or None. ``where`` names the mapping in the message."""
    known = vocabulary()
    for key, value in policy.items():
        if key in extra:
            continue
        if key not in known:
            return f"{where}: unknown conventions key {key!r} ({known_names(str(key), [*known, *extra])})"
        wanted = _wanted(known[key]["value"], value)
        if wanted is not None:
            return f"{where}.{key} is {value!r}, not {wanted}"
    return None


KINDS: Mapping[str, str] = {
    "count": "a whole number >= 0",
    "seconds": "a number of seconds >= 0",
    "seconds_or_null": "a number of seconds >= 0 or null",
    "factor": "a number > 0",
    "flag": "true or false",
    "text": "a text",
    "statuses_or_null": "a list of HTTP statuses or null",
}
"""The kinds of value the vocabulary names, in the words a message uses."""


def _wanted(kind: object, value: object) -> str | None:
    """What ``value`` should have been, when it is not of ``kind``."""
    if isinstance(kind, list):
        return None if value in kind else f"one of {', '.join(sorted(map(str, kind)))}"
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    ok = {
        "count": isinstance(number, int) and number >= 0,
        "seconds": number is not None and number >= 0,
        "seconds_or_null": value is None or (number is not None and number >= 0),
        "factor": number is not None and number > 0,
        "flag": isinstance(value, bool),
        "text": isinstance(value, str) and bool(value),
        "statuses_or_null": value is None
        or (isinstance(value, list) and all(isinstance(s, int) and 100 <= s <= 599 for s in value)),
    }[str(kind)]
    return None if ok else KINDS[str(kind)]
