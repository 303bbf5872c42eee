"""Hypothesis strategies for stream tests, usable in your own test suite.

``chunkings(body)`` draws splits of a response body. Uniform cut points give a large body
only a handful of chunks, and rarely hit the places where stream handling breaks, so the
cut points are drawn towards *trouble spots* found in the body: inside multi-byte UTF-8
characters, between ``\\r`` and ``\\n``, inside ``data:`` prefixes and ``[DONE]``, inside
JSON escapes and around event boundaries. The one-chunk and one-byte-per-chunk splits are
run as explicit examples by :func:`with_edge_chunkings`. Every strategy maps
through a named function, so a shrunk counterexample prints as e.g.
``split_at(body, [47])`` and :func:`reproduce_command` turns it into a CLI line.

Mutations (``truncations``, ``dropped_events``, ``duplicated_events``, ``garbage_lines``)
make malformed streams for robustness checks: whatever they do, a conformant normalizer
ends in exactly one terminal event and never raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import example
from hypothesis import strategies as st

from stream_harness.recordings.cassette import load_cassette
from stream_harness.recordings.chunking import format_cuts, split_at, trouble_spots

__all__ = [
    "cassette_bodies",
    "chunkings",
    "cut_points",
    "dropped_events",
    "duplicated_events",
    "edge_chunkings",
    "garbage_lines",
    "one_byte_per_chunk",
    "reproduce_command",
    "split_at",
    "trouble_spots",
    "truncations",
    "with_edge_chunkings",
]

T = TypeVar("T", bound=Callable[..., Any])


def cut_points(body: bytes, *, max_cuts: int = 32) -> st.SearchStrategy[list[int]]:
    """Sorted, de-duplicated cut offsets, about half of them at trouble spots."""
    n = len(body)
    if n < 2:
        return st.just([])
    uniform = st.integers(1, n - 1)
    spots = trouble_spots(body)
    point = st.one_of(st.sampled_from(spots), uniform) if spots else uniform
    return st.lists(point, max_size=max_cuts).map(_normalize_cuts)


def _normalize_cuts(cuts: list[int]) -> list[int]:
    return sorted(set(cuts))


def one_byte_per_chunk(body: bytes) -> list[bytes]:
    return [body[i : i + 1] for i in range(len(body))]


def whole(body: bytes) -> list[bytes]:
    return [body]


def chunkings(body: bytes, *, max_cuts: int = 32) -> st.SearchStrategy[list[bytes]]:
    """Splits of ``body`` into non-empty chunks whose concatenation is ``body``.

    The whole body is the simplest draw (hypothesis tries it first); every other draw cuts
    at trouble spots and uniform offsets, and shrinks by dropping cut points, so a failure
    ends as the one cut that matters. One byte per chunk is deliberately *not* a branch
    here: a fixed branch cannot shrink, so a failure found there would be reported with
    every cut. Use :func:`with_edge_chunkings` to run it (and the whole body) as explicit
    examples on every run.
    """
    body = bytes(body)
    drawn = cut_points(body, max_cuts=max_cuts).map(lambda cuts: split_at(body, cuts))
    return st.one_of(st.just(body).map(whole), drawn)


def edge_chunkings(body: bytes) -> list[list[bytes]]:
    """The two splits every stream test should always run: whole, and one byte per chunk."""
    body = bytes(body)
    return [whole(body), one_byte_per_chunk(body)] if len(body) > 1 else [whole(body)]


def with_edge_chunkings(body: bytes, argname: str = "chunks") -> Callable[[T], T]:
    """Decorator: add the whole body and one byte per chunk as explicit @example cases.

    Put it above ``@given(chunks=chunkings(body))``; hypothesis runs explicit examples
    first on every run (also under the derandomized ``ci`` profile).
    """

    def decorate(test: T) -> T:
        for chunks in edge_chunkings(body):
            test = example(**{argname: chunks})(test)
        return test

    return decorate


def reproduce_command(
    target: str,
    chunks: Sequence[bytes],
    *,
    protocol: str | None = None,
    interaction: int | None = None,
) -> str:
    """The ``stream-harness normalize`` line that replays exactly these chunks."""
    parts = ["stream-harness", "normalize", target]
    if protocol:
        parts += ["--protocol", protocol]
    if interaction is not None:
        parts += ["--interaction", str(interaction)]
    parts += ["--split", format_cuts(chunks)]
    return " ".join(parts)


# -- mutations -------------------------------------------------------------------------

_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def _event_spans(body: bytes) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in _EVENT_END.finditer(body):
        spans.append((start, m.end()))
        start = m.end()
    if start < len(body):
        spans.append((start, len(body)))
    return spans


def truncations(body: bytes) -> st.SearchStrategy[bytes]:
    """The body cut off at any byte (as a dropped connection leaves it)."""
    if not body:
        return st.just(body)
    return st.integers(0, len(body) - 1).map(lambda n: body[:n])


def dropped_events(body: bytes) -> st.SearchStrategy[bytes]:
    """The body with one blank-line-separated event removed."""
    spans = _event_spans(body)
    if len(spans) < 2:
        return st.just(body)
    return st.integers(0, len(spans) - 1).map(lambda i: body[: spans[i][0]] + body[spans[i][1] :])


def duplicated_events(body: bytes) -> st.SearchStrategy[bytes]:
    """The body with one event sent twice in a row."""
    spans = _event_spans(body)
    if not spans:
        return st.just(body)
    return st.integers(0, len(spans) - 1).map(
        lambda i: body[: spans[i][1]] + body[spans[i][0] : spans[i][1]] + body[spans[i][1] :]
    )


_GARBAGE = st.sampled_from(
    [b"data: {not json\n\n", b"data: \n\n", b"garbage without colon\n\n", b": comment\n\n",
     b"event: unknown_event\ndata: {}\n\n", b"data: [1,2,3]\n\n", b"data: null\n\n", b"\xff\xfe\n\n"]
)  # fmt: skip


def garbage_lines(body: bytes) -> st.SearchStrategy[bytes]:
    """The body with a malformed or unexpected line inserted at an event boundary."""
    bounds = [0, *(end for _, end in _event_spans(body))]
    return st.tuples(st.sampled_from(bounds), _GARBAGE).map(
        lambda t: body[: t[0]] + t[1] + body[t[0] :]
    )


def cassette_bodies(directory: str | Path) -> st.SearchStrategy[tuple[str, int, bytes]]:
    """(cassette path, interaction index, body) of every streaming interaction under a folder."""
    items: list[tuple[str, int, bytes]] = []
    for path in sorted(Path(directory).rglob("*.yaml")):
        try:
            cassette = load_cassette(path)
        except Exception:  # a broken cassette is lint's business, not a strategy's
            continue
        for inter in cassette.interactions:
            if inter.is_streaming and inter.response.status < 400:
                items.append((str(path), inter.index, inter.response.body))
    if not items:
        raise ValueError(f"no streaming interactions under {directory}")
    return st.sampled_from(items)
