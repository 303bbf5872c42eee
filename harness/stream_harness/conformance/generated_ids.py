"""Ids a library makes up at random, written as numbered placeholders in failure texts.

A failure's message quotes what the adapter produced, and some libraries invent ids where
the stream gave none or replace the stream's own (pydantic-ai's ``pyd_ai_<uuid>``,
LangChain's run ids, LiteLLM's ``chatcmpl-<uuid>``, the AI SDK's ``aitxt-...``), or
print an object's address (``<... object at 0x7f...>``). Quoted as they are, the same
verdict reads differently on every run, and a report regenerated with the same verdicts
rewrites those lines (issue 36). Such a token becomes ``<generated id N>``, numbered by
first appearance across one failure's texts, so that "two different made-up ids" still
reads as two ids, and the same made-up id twice as one. A token that occurs in the bytes
the stream or scenario served is the provider's and is kept as it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

# An id-like token: letters, digits, ``_`` and ``-``, at least 12 long.
_TOKEN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{11,}")
# What makes a token look drawn rather than written: a run of 8 hex digits holding a digit
# and a letter (uuids, addresses, hex digests), 10 decimal digits (timestamps, hashes), or
# 12 letters and digits mixing upper case, lower case and digits, or 16 switching case
# five times (base62 ids).
_HEX_RUN: Final = re.compile(r"[0-9a-f]{8,}|[0-9A-F]{8,}")
_DIGITS: Final = re.compile(r"[0-9]{10,}")
_BASE62: Final = re.compile(r"[A-Za-z0-9]{12,}")
_TO_UPPER: Final = re.compile(r"[a-z0-9](?=[A-Z])")


def _looks_generated(token: str) -> bool:
    if _DIGITS.search(token):
        return True
    for run in _HEX_RUN.findall(token):
        if re.search("[0-9]", run) and re.search("[a-fA-F]", run):
            return True
    for run in _BASE62.findall(token):
        if re.search("[a-z]", run) and re.search("[A-Z]", run) and re.search("[0-9]", run):
            return True
        # No digit by chance (1.5% of the AI SDK's 24-letter ids): case switching back and
        # forth as no CamelCase name does (``IpreALZqxEvVLCoAyClcpGbC``: 6 switches to
        # upper case inside the run; ``ResponseValidationError``: 2).
        if len(run) >= 16 and len(_TO_UPPER.findall(run)) >= 5:
            return True
    return False


def steady_texts(texts: Sequence[str | None], served: bytes | str) -> list[str | None]:
    """``texts`` with every generated-looking token that ``served`` does not hold written
    ``<generated id N>``, one numbering across all of them (None stays None)."""
    source = served.decode("utf-8", "replace") if isinstance(served, bytes) else served
    numbers: dict[str, int] = {}

    def placeholder(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in numbers:
            return f"<generated id {numbers[token]}>"
        if not _looks_generated(token) or token in source:
            return token
        numbers[token] = len(numbers) + 1
        return f"<generated id {numbers[token]}>"

    return [None if t is None else _TOKEN.sub(placeholder, t) for t in texts]


def steady_text(text: str, served: bytes | str) -> str:
    """One text made steady as :func:`steady_texts` makes several."""
    out = steady_texts([text], served)[0]
    assert out is not None
    return out
