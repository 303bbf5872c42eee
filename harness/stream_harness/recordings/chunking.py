"""Ways to cut a body into chunks, named so that a failure can be replayed from the CLI.

A split is written as a spec string: ``whole``, ``bytes:N`` (chunks of N bytes),
``random:SEED`` (cut points from a seeded PRNG, reproducible on every machine) or
``cuts:A,B,...`` (explicit cut offsets: what a shrunk hypothesis counterexample prints;
``A-B`` stands for every offset from A to B).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from functools import cache
from itertools import pairwise


class SplitSpecError(ValueError):
    pass


def split_at(body: bytes, cuts: Iterable[int]) -> list[bytes]:
    """Cut ``body`` at the given offsets (out-of-range and repeated cuts are ignored)."""
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(body)}), len(body)]
    return [body[a:b] for a, b in pairwise(bounds) if b > a]


# Where an SSE event ends: a blank line, in any of the three line endings the spec allows.
SSE_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def cut_after(body: bytes, boundary: re.Pattern[bytes]) -> list[bytes]:
    """``body`` cut after every match of ``boundary``: whole events or lines, as the
    network tends to deliver them; the pieces join back to ``body``."""
    out, start = [], 0
    for m in boundary.finditer(body):
        out.append(body[start : m.end()])
        start = m.end()
    if start < len(body):
        out.append(body[start:])
    return out


def fixed_size(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)] or [b""]


def random_cuts(body: bytes, seed: int) -> list[int]:
    """Between 1 and len/4 cut points, uniformly placed; seeded, so reproducible."""
    if len(body) < 2:
        return []
    rng = random.Random(seed)
    count = rng.randint(1, max(1, min(len(body) - 1, len(body) // 4)))
    return sorted(rng.sample(range(1, len(body)), k=min(count, len(body) - 1)))


def cuts_of(chunks: Iterable[bytes]) -> list[int]:
    """The cut offsets that reproduce a list of chunks (inverse of split_at)."""
    out, pos = [], 0
    parts = list(chunks)
    for chunk in parts[:-1]:
        pos += len(chunk)
        out.append(pos)
    return out


def format_cuts(chunks: Iterable[bytes]) -> str:
    """The ``--split`` spec that reproduces these chunks."""
    cuts = cuts_of(chunks)
    return "cuts:" + compact_cuts(cuts) if cuts else "whole"


def compact_cuts(cuts: Iterable[int]) -> str:
    """Increasing offsets as ``cuts:`` writes them: each run of three or more consecutive
    offsets as ``A-B``, so that one byte per chunk of any body is one short item."""
    items: list[str] = []
    run: list[int] = []
    for cut in [*cuts, -1]:
        if run and cut == run[-1] + 1:
            run.append(cut)
            continue
        if len(run) >= 3:
            items.append(f"{run[0]}-{run[-1]}")
        else:
            items.extend(map(str, run))
        run = [cut]
    return ",".join(items)


def apply_split(spec: str, body: bytes) -> list[bytes]:
    """Chunks of ``body`` per a split spec; a bad spec raises SplitSpecError (one line)."""
    kind, _, arg = spec.partition(":")
    if kind == "whole" and not arg:
        return [body]
    try:
        if kind == "bytes":
            size = int(arg)
            if size < 1:
                raise ValueError
            return fixed_size(body, size)
        if kind == "random":
            return split_at(body, random_cuts(body, int(arg)))
        if kind == "cuts":
            return split_at(body, parse_cuts(arg, len(body)))
    except SplitSpecError:
        raise
    except ValueError:
        pass
    raise SplitSpecError(
        f"bad --split {spec!r}: expected whole, bytes:N (N >= 1), random:SEED or cuts:A,B,..."
    )


_CUT_ITEM = re.compile(r"[0-9]+(-[0-9]+)?")


def parse_cuts(arg: str, size: int) -> list[int]:
    """The offsets of ``cuts:A,B,...`` (``A-B``: every offset from A to B): at least one,
    increasing, each inside the body.

    A cut outside the body would silently change nothing, so a reproduce command pasted
    against another body (an edited cassette) must say so instead of passing.
    """
    parts = [p.strip() for p in arg.split(",")]
    if not arg.strip() or any(not _CUT_ITEM.fullmatch(p) for p in parts):
        raise SplitSpecError(
            f"bad --split cuts:{arg}: expected cuts:A,B,... with whole numbers (A-B: every offset from A to B)"
        )
    cuts: list[int] = []
    for p in parts:
        first, _, last = p.partition("-")
        a, b = int(first), int(last or first)
        # Expanded only when its end is inside the body: a typo (1-99999999999) is an
        # error below, not a list of a hundred billion offsets.
        cuts.extend(range(a, b + 1) if a < b < size else (a, b) if a != b else (a,))
    for before, after in pairwise(cuts):
        if after <= before:
            raise SplitSpecError(
                f"bad --split cuts:{arg}: offsets must increase ({before} then {after})"
            )
    outside = [c for c in cuts if not 0 < c < size]
    if outside:
        raise SplitSpecError(
            f"bad --split cuts:{arg}: offset {outside[0]} is outside the body (1 to {size - 1} for {size} bytes)"
        )
    return cuts


_MARKERS = re.compile(rb"data:|event:|\[DONE\]|\\u[0-9a-fA-F]{4}|\\.|\r\n|\n\n|\r\r|\"[a-z_]+\":")


@cache
def _trouble_spots_cached(body: bytes) -> tuple[int, ...]:
    spots: set[int] = set()
    n = len(body)
    # inside multi-byte UTF-8 characters: every continuation byte starts a cut there
    for i, byte in enumerate(body):
        if 0x80 <= byte < 0xC0:
            spots.add(i)
    for m in _MARKERS.finditer(body):
        for off in range(m.start(), m.end() + 1):
            spots.add(off)
    return tuple(sorted(s for s in spots if 0 < s < n))


def trouble_spots(body: bytes) -> tuple[int, ...]:
    """Offsets where a cut is most likely to expose a chunking bug, in order."""
    return _trouble_spots_cached(bytes(body))
