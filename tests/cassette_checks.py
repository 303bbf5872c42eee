"""Steps every protocol's tests share: golden events, vcrpy replay, split invariance, mutations.

Imported by bare name from the provider test modules (pytest's default import mode puts
tests/ on sys.path), so each module keeps its own protocol-specific assertions while the
common steps live once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cassette import Interaction, load_cassette
from harness.chunking import split_at
from harness.contract import check_contract
from harness.events import Event
from harness.golden import expected_path, interaction_events, read_expected
from harness.providers.base import Normalizer
from harness.strategies import chunkings


def assert_golden(path: Path, protocol: str) -> None:
    """Every interaction of the cassette normalizes to its committed expected events."""
    for inter in load_cassette(path).interactions:
        expected = read_expected(expected_path(path, inter.index))
        assert interaction_events(inter, protocol) == expected, (
            f"regenerate with: python -c \"from harness.golden import write_expected; write_expected('{path}')\""
        )


def replay_with_vcrpy(path: Path) -> tuple[Interaction, Any]:
    """vcrpy itself replays interaction 0 through httpx; returns it with the response."""
    vcr = pytest.importorskip("vcr")
    import httpx

    inter = load_cassette(path).interactions[0]
    recorder = vcr.VCR(record_mode="none")
    with recorder.use_cassette(str(path)), httpx.Client() as client:
        response = client.post(
            inter.request.uri,
            content=inter.request.body,
            headers={"content-type": "application/json"},
        )
    assert response.status_code == inter.response.status
    assert response.content == inter.response.body
    return inter, response


# -- streams through a normalizer ---------------------------------------------------------


def events_of(normalizer_cls: Callable[[], Normalizer], chunks: Iterable[bytes]) -> list[Event]:
    """Every event a fresh normalizer gives for these chunks, closing it at the end."""
    n = normalizer_cls()
    out: list[Event] = []
    for chunk in chunks:
        out.extend(n.feed(chunk))
    return out + n.close()


def streaming_bodies(cassettes: Iterable[Path]) -> list[tuple[str, bytes]]:
    """(cassette stem, body) of every successful response in the cassettes."""
    out = []
    for path in cassettes:
        for inter in load_cassette(path).interactions:
            if inter.response.status < 400:
                out.append((path.stem, inter.response.body))
    return out


def assert_split_invariant(
    body: bytes, events: Callable[[list[bytes]], list[Event]], *, examples: int = 25
) -> None:
    """The contract holds, and one byte per chunk and drawn splits give the whole body's events."""
    reference = events([body])
    assert check_contract(reference) == []
    assert events(split_at(body, range(1, len(body)))) == reference  # one byte per chunk

    @settings(max_examples=examples, suppress_health_check=[HealthCheck.too_slow], deadline=None)
    @given(chunks=chunkings(body))
    def check(chunks: list[bytes]) -> None:
        assert b"".join(chunks) == body
        assert events(chunks) == reference

    check()


# -- mutations of SSE bodies ----------------------------------------------------------------


@st.composite
def json_values(draw: st.DrawFn) -> Any:
    """Small arbitrary JSON values, to put in place of a wire field."""
    return draw(
        st.recursive(
            st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(max_size=4), inner, max_size=3)
            ),
            max_leaves=5,
        )
    )


@st.composite
def sse_field_replaced(draw: st.DrawFn, body: bytes) -> bytes:
    """One JSON field (at any depth) of one SSE event replaced by a random JSON value."""
    lines = body.split(b"\n")
    data_lines = [i for i, line in enumerate(lines) if line.startswith(b"data: {")]
    i = draw(st.sampled_from(data_lines))
    obj = json.loads(lines[i][6:])
    path: list[Any] = []
    node: Any = obj
    while isinstance(node, dict) and node:
        key = draw(st.sampled_from(sorted(node)))
        path.append(key)
        if not draw(st.booleans()):
            break
        node = node[key]
    target: Any = obj
    for key in path[:-1]:
        target = target[key]
    if path and isinstance(target, dict):
        target[path[-1]] = draw(json_values())
    lines[i] = b"data: " + json.dumps(obj).encode()
    return b"\n".join(lines)
