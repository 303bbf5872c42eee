"""Hypothesis strategies and helpers shared by the tests/test_wire_*.py files.

Recorded bodies carry no chunk boundaries (vcrpy stores one string), so every framing
property is stated over *all* chunkings of a body: cut points drawn by hypothesis, with
extra weight on the positions where decoders typically break (inside a multi-byte
UTF-8 character, between the CR and LF of a CRLF).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import Any, Protocol

from hypothesis import strategies as st


class Decoder(Protocol):
    def feed(self, chunk: bytes) -> Sequence[Any]: ...
    def close(self) -> Sequence[Any]: ...


def decode_all(decoder: Decoder, chunks: Iterable[bytes]) -> list[Any]:
    """Everything a decoder produces for ``chunks``, ``close()`` included."""
    out: list[Any] = []
    for chunk in chunks:
        out.extend(decoder.feed(chunk))
    out.extend(decoder.close())
    return out


def one_byte_chunks(body: bytes) -> list[bytes]:
    return [body[i : i + 1] for i in range(len(body))]


def tricky_positions(body: bytes) -> list[int]:
    """Cut points inside a UTF-8 character or between a CR and the LF after it."""
    return [
        i
        for i in range(1, len(body))
        if 0x80 <= body[i] < 0xC0 or (body[i - 1] == 0x0D and body[i] == 0x0A)
    ]


def chunkings(body: bytes, max_cuts: int = 40) -> st.SearchStrategy[list[bytes]]:
    """Any split of ``body`` into non-empty chunks that join back to ``body``."""
    tricky = tricky_positions(body)
    point = st.integers(0, len(body))
    if tricky:
        point = st.one_of(point, st.sampled_from(tricky))

    def cut_body_at(points: list[int]) -> list[bytes]:
        # De-duplicated here, so a failing example prints as plain chunks.
        bounds = sorted({0, len(body), *points})
        return [body[a:b] for a, b in pairwise(bounds)]

    return st.lists(point, max_size=max_cuts).map(cut_body_at)


def bodies_with_chunkings(bodies: Sequence[bytes]) -> st.SearchStrategy[tuple[bytes, list[bytes]]]:
    """A body from ``bodies`` together with one of its chunkings."""

    def with_chunking(body: bytes) -> st.SearchStrategy[tuple[bytes, list[bytes]]]:
        return chunkings(body).map(lambda chunks: (body, chunks))

    return st.sampled_from(list(bodies)).flatmap(with_chunking)
