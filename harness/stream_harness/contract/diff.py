"""Where two JSON values first differ, and a one-line rendering of it.

A failure that says "the messages differ" sends the reader diffing two large documents by
eye; the path of the first difference (``content[1].arguments.city``) and the two values
there say it at once. Reports keep both documents in full beside the path.
"""

from __future__ import annotations

import json
from typing import Any

from stream_harness.contract.events import AssistantMessage, ContentBlock

_MISSING = object()


def first_difference(expected: Any, observed: Any, path: str = "") -> str | None:
    """The path of the first place where ``observed`` differs from ``expected``; None if equal.

    Objects are walked in the expected value's key order, then keys only ``observed``
    has; arrays by position, a length difference showing at the first missing or extra
    index. The root is ``$``.
    """
    if expected == observed:
        return None
    if isinstance(expected, dict) and isinstance(observed, dict):
        for key in [*expected, *(k for k in observed if k not in expected)]:
            found = first_difference(
                expected.get(key, _MISSING), observed.get(key, _MISSING), _join(path, key)
            )
            if found is not None:
                return found
        return path or "$"
    if isinstance(expected, list) and isinstance(observed, list):
        for i in range(max(len(expected), len(observed))):
            want = expected[i] if i < len(expected) else _MISSING
            got = observed[i] if i < len(observed) else _MISSING
            found = first_difference(want, got, f"{path}[{i}]")
            if found is not None:
                return found
        return path or "$"
    return path or "$"


def value_at(document: Any, path: str) -> Any:
    """The value at a path :func:`first_difference` returned; ``<missing>`` where there is none."""
    if path in ("", "$"):
        return document
    current = document
    for step in _steps(path):
        if isinstance(step, int):
            if not isinstance(current, list) or step >= len(current):
                return "<missing>"
            current = current[step]
        else:
            if not isinstance(current, dict) or step not in current:
                return "<missing>"
            current = current[step]
    return current


def short_diff(
    expected: Any, observed: Any, limit: int = 80, path: str | None = None
) -> str | None:
    """``at content[0].text: expected "Hello", observed "Hell"``; None when equal.

    ``path`` is the first difference when already known (reports store it, computed on
    the values in their own key order, which the stored JSON texts do not keep).
    """
    path = path or first_difference(expected, observed)
    if path is None:
        return None
    want = _clip(value_at(expected, path), limit)
    got = _clip(value_at(observed, path), limit)
    return f"at {path}: expected {want}, observed {got}"


def _join(path: str, key: str) -> str:
    if key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def _steps(path: str) -> list[str | int]:
    steps: list[str | int] = []
    i = 0
    while i < len(path):
        if path[i] == ".":
            i += 1
        elif path[i] == "[":
            end = path.index("]", i) if path[i + 1] != '"' else _closing_quote(path, i + 1) + 1
            inner = path[i + 1 : end]
            steps.append(json.loads(inner) if inner.startswith('"') else int(inner))
            i = end + 1
        else:
            j = i
            while j < len(path) and path[j] not in ".[":
                j += 1
            steps.append(path[i:j])
            i = j
    return steps


def _closing_quote(path: str, start: int) -> int:
    i = start + 1
    while path[i] != '"':
        i += 2 if path[i] == "\\" else 1
    return i


def _clip(value: Any, limit: int) -> str:
    text = (
        value
        if value == "<missing>"
        else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    )
    return text if len(text) <= limit else text[: limit - 3] + "..."


def short_diff_of_texts(
    expected: str | None, observed: str | None, path: str | None = None, limit: int = 80
) -> str | None:
    """:func:`short_diff` of two JSON texts as reports store them (a non-JSON text is a string)."""
    if expected is None or observed is None:
        return None
    return short_diff(_loads(expected), _loads(observed), limit, path)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def comparable_block(block: ContentBlock) -> Any:
    """A block as compared: signatures that are JSON documents compare as JSON values.

    Several providers' replay tokens are JSON (OpenAI Responses reasoning items); a library
    that re-serializes one with another key order has kept the same token.
    """
    data = block.model_dump()
    sig = data.get("signature")
    if isinstance(sig, str) and sig[:1] in "{[":
        try:
            data["signature"] = json.loads(sig)
        except ValueError:
            pass
    return data


def message_differences(expected: AssistantMessage, observed: AssistantMessage) -> list[str]:
    """Human-readable differences between two final messages: blocks, stop reasons, usage
    and whether there is an error message. The conformance checks and the gateway
    comparison judge messages by these same lines."""
    out: list[str] = []
    if len(observed.content) != len(expected.content):
        out.append(
            f"{len(observed.content)} content blocks, expected {len(expected.content)}: "
            f"{[b.type for b in observed.content]} vs {[b.type for b in expected.content]}"
        )
    for i, (got, want) in enumerate(zip(observed.content, expected.content, strict=False)):
        if comparable_block(got) != comparable_block(want):
            out.append(
                f"block {i}: {short_repr(got.model_dump())} != expected {short_repr(want.model_dump())}"
            )
    for name in ("stop_reason", "provider_stop_reason", "usage"):
        if getattr(observed, name) != getattr(expected, name):
            out.append(
                f"{name}: {getattr(observed, name)!r} != expected {getattr(expected, name)!r}"
            )
    if (observed.error_message is None) != (expected.error_message is None):
        out.append(
            f"error_message: {observed.error_message!r} != expected {expected.error_message!r}"
        )
    return out


def short_repr(value: Any, limit: int = 120) -> str:
    """``repr(value)`` cut to ``limit`` characters, for one-line messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
