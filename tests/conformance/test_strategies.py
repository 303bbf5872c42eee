"""The hypothesis strategies users get: valid splits, trouble spots, shrink quality, mutations."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from stream_harness.conformance.strategies import (
    chunkings,
    dropped_events,
    duplicated_events,
    garbage_lines,
    reproduce_command,
    trouble_spots,
    truncations,
    with_edge_chunkings,
)
from stream_harness.providers.reference import normalize
from stream_harness.recordings.chunking import apply_split, format_cuts, split_at

BODY = (
    'data: {"choices":[{"index":0,"delta":{"content":"Grüße ☃"}}]}\r\n\r\n'
    'data: {"choices":[{"index":0,"delta":{"content":" \\u00e9"},"finish_reason":"stop"}]}\r\n\r\n'
    "data: [DONE]\r\n\r\n"
).encode()


@given(chunkings(BODY))
def test_chunkings_always_concatenate_to_the_body(chunks: list[bytes]) -> None:
    assert b"".join(chunks) == BODY
    assert all(chunks)


def test_trouble_spots_include_utf8_crlf_data_and_done() -> None:
    spots = set(trouble_spots(BODY))
    inside_utf8 = [i for i, b in enumerate(BODY) if 0x80 <= b < 0xC0]
    assert set(inside_utf8) <= spots
    crlf = BODY.index(b"\r\n")
    assert crlf + 1 in spots  # between CR and LF
    assert BODY.index(b"data:") + 2 in spots
    done = BODY.index(b"[DONE]")
    assert {done + 1, done + 3} <= spots


def test_whole_and_one_byte_per_chunk_run_on_every_run_as_explicit_examples() -> None:
    seen: list[int] = []

    @settings(max_examples=5, database=None, phases=[Phase.explicit])
    @with_edge_chunkings(BODY)
    @given(chunks=chunkings(BODY))
    def collect(chunks: list[bytes]) -> None:
        seen.append(len(chunks))

    collect()
    assert sorted(seen) == [1, len(BODY)]


def _naive_decode_each_chunk(chunks: list[bytes]) -> str:
    # the planted bug: decoding every network chunk on its own (ecosystem.md bugs 34-35)
    return "".join(c.decode("utf-8", errors="replace") for c in chunks)


def test_a_planted_utf8_split_bug_shrinks_to_a_single_cut_inside_a_character() -> None:
    smallest = find(
        chunkings(BODY),
        lambda chunks: _naive_decode_each_chunk(chunks) != BODY.decode(),
        settings=settings(max_examples=500, database=None, suppress_health_check=list(HealthCheck)),
    )
    assert len(smallest) == 2, f"expected a single cut, got {len(smallest) - 1}"
    cut = len(smallest[0])
    assert 0x80 <= BODY[cut] < 0xC0


def test_a_failing_split_round_trips_through_the_cli_spec() -> None:
    chunks = split_at(BODY, [5, 60, 61])
    spec = format_cuts(chunks)
    assert spec == "cuts:5,60,61"
    assert apply_split(spec, BODY) == chunks
    cmd = reproduce_command("cassettes/x.yaml", chunks, interaction=0)
    assert cmd == "stream-harness normalize cassettes/x.yaml --interaction 0 --split cuts:5,60,61"


@settings(max_examples=60)
@given(
    st.one_of(truncations(BODY), dropped_events(BODY), duplicated_events(BODY), garbage_lines(BODY))
)
def test_mutations_end_in_exactly_one_terminal_event(body: bytes) -> None:
    events = list(normalize("openai-completions", [body]))
    assert events[0].type == "start"
    assert [e.type for e in events].count("done") + [e.type for e in events].count("error") == 1
    assert events[-1].type in ("done", "error")


def test_truncation_before_the_end_is_never_done() -> None:
    cut = BODY[: BODY.index(b"finish_reason")]
    events = list(normalize("openai-completions", [cut]))
    assert events[-1].type == "error"


@pytest.mark.parametrize("spec", ["bytes:0", "random:x", "cuts:a", "slices:3", "bytes"])
def test_bad_split_specs_are_one_line_errors(spec: str) -> None:
    from stream_harness.recordings.chunking import SplitSpecError

    with pytest.raises(SplitSpecError) as info:
        apply_split(spec, BODY)
    assert "\n" not in str(info.value) and spec in str(info.value)


def test_cassette_bodies_draws_streaming_interactions_of_a_folder() -> None:
    from pathlib import Path

    from stream_harness.conformance.strategies import cassette_bodies
    from stream_harness.recordings.cassette import load_cassette

    folder = Path(__file__).resolve().parents[2] / "cassettes" / "anthropic-messages"
    seen: set[str] = set()

    @settings(max_examples=40, database=None)
    @given(cassette_bodies(folder))
    def draw(item: tuple[str, int, bytes]) -> None:
        path, index, body = item
        inter = load_cassette(path).interactions[index]
        assert inter.is_streaming and inter.response.status < 400
        assert inter.response.body == body
        seen.add(Path(path).name)

    draw()
    assert "http_429_rate_limit.yaml" not in seen  # error responses are not bodies to split
    assert len(seen) > 3


def test_cassette_bodies_refuses_an_empty_folder(tmp_path: object) -> None:
    from stream_harness.conformance.strategies import cassette_bodies

    with pytest.raises(ValueError, match="no streaming interactions"):
        cassette_bodies(str(tmp_path))
