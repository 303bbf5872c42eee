"""Sharding a run: which (adapter, case) pairs shard K of N checks.

The unit is the (adapter, case) pair: every check and every split of a pair stays in one
shard, so the per-case caches (expected events, what the reference makes of each cut)
and an adapter's per-run state (a gateway started once) keep working inside the shard.
A pair belongs to shard ``sha256("adapter\\0case") mod N + 1``: a function of the two
names alone, so the split is the same on every machine and every run (no
``PYTHONHASHSEED``, no dependence on the order cases are found in, or on how many other
cases there are: adding a cassette moves no other pair), and a hash spreads the pairs
evenly. Names are the adapter's row name and the case id, the two keys of every result,
so ``stream-harness merge`` can tell which shard a result must come from.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Final

# More shards than this is a typo (``--shard 1/4000``), not a plan: no team has that many runners.
MAX_SHARDS: Final = 1000
_SYNTAX = re.compile(r"(\d+)/(\d+)")


class ShardError(ValueError):
    """A ``--shard`` value that is not ``K/N`` with 1 <= K <= N; one line."""


def shard_of(adapter: str, case: str, count: int) -> int:
    """The shard (1-based) of the pair (``adapter``, ``case``) in a run split ``count`` ways."""
    digest = hashlib.sha256(f"{adapter}\0{case}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


@dataclass(frozen=True, slots=True)
class Shard:
    index: int  # K, from 1
    count: int  # N

    def owns(self, adapter: str, case: str) -> bool:
        return shard_of(adapter, case, self.count) == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str, flag: str = "--shard") -> Shard:
    """``K/N`` as a :class:`Shard`; anything else raises :class:`ShardError` naming ``flag``."""
    found = _SYNTAX.fullmatch(text.strip())
    if found is None:
        raise ShardError(f"{flag} {text!r}: expected K/N, shard K of N (e.g. 2/4)")
    index, count = int(found[1]), int(found[2])
    if not 1 <= count <= MAX_SHARDS:
        raise ShardError(f"{flag} {text!r}: the number of shards N must be from 1 to {MAX_SHARDS}")
    if not 1 <= index <= count:
        raise ShardError(f"{flag} {text!r}: K must be from 1 to N ({count})")
    return Shard(index, count)
