"""Naming what was meant when a name is not known: one wording for every front end.

A configuration key, a scenario key, an agent name and an adapter name are all mistyped
the same ways, and a user who sees ``did you mean 'cut_at'?`` in one place expects it in
every other; so the hint and the list of valid names are said here once.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(given: str, known: Iterable[str]) -> str | None:
    """The known name closest to ``given`` when one is close enough to be the intent."""
    names = list(known)
    close = difflib.get_close_matches(given, names, n=1)
    if close:
        return close[0]
    # A name typed with another separator or case (pydantic_ai, Cut-At) is close in
    # intent though far in letters.
    folded = {_fold(n): n for n in names}
    return folded.get(_fold(given))


def known_names(given: str, known: Iterable[str]) -> str:
    """``did you mean 'x'? known: a, b, c``: the hint, when there is one, then every name."""
    names = list(known)
    close = did_you_mean(given, names)
    hint = f"did you mean {close!r}? " if close is not None else ""
    return f"{hint}known: {', '.join(names)}"


def _fold(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())
