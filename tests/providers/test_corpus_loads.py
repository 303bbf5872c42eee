"""Every cassette in the recorded corpus loads, and every stream in it frames cleanly.

Independent oracles: the corpus MANIFEST.tsv (written by the researcher who collected the
files, before this loader existed) gives per file the number of interactions, of streaming
ones, and the kind of each body; vcrpy's own YAML loader and decompressor give the bytes a
replay would see. The framing decoders of ``stream_harness.wire`` must cut every streamed body
into events without a single ``FramingError``.
"""

from __future__ import annotations

import ast
import csv
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from vcr.filters import decode_response
from vcr.serializers import compat, yamlserializer

from stream_harness.recordings.cassette import Interaction, dump_cassette, load_cassette

pytestmark = pytest.mark.corpus

# MANIFEST body kinds -> the framing the loader must report (None: not a stream).
KIND_TO_FRAMING = {
    "sse": "sse",
    "aws-eventstream": "eventstream",
    "ndjson": "jsonlines",
    "gemini-json-array": "jsonarray",
    "plain": None,
    "http-error": None,
}


def read_manifest(root: Path) -> dict[str, dict[str, Any]]:
    path = root / "MANIFEST.tsv"
    if not path.is_file():
        return {}
    rows: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            notes = row["notes"]
            total = re.search(r"\binteractions=(\d+)", notes)
            streaming = re.search(r"\bstreaming_interactions=(\d+)", notes)
            kinds = re.search(r"body_kinds=(\{[^}]*\})", notes)
            if total and streaming and kinds:
                rows[row["file"]] = {
                    "interactions": int(total.group(1)),
                    "streaming": int(streaming.group(1)),
                    "body_kinds": ast.literal_eval(kinds.group(1)),
                }
    return rows


@pytest.fixture(scope="module")
def manifest(corpus_dir: Path) -> dict[str, dict[str, Any]]:
    return read_manifest(corpus_dir)


def test_cassette_loads_and_matches_the_manifest(
    corpus_cassette: Path, corpus_dir: Path, manifest: dict[str, dict[str, Any]]
) -> None:
    cassette = load_cassette(corpus_cassette)
    assert cassette.version == 1
    assert cassette.interactions, "a corpus cassette with no interactions"
    for it in cassette.interactions:
        assert 100 <= it.response.status <= 599
        assert it.request.method.isalpha() and it.request.uri.startswith(("http", "//"))
    row = manifest.get(corpus_cassette.relative_to(corpus_dir).as_posix())
    if row is None:
        pytest.skip("not listed in MANIFEST.tsv; loaded, but nothing to compare against")
    framings = Counter(it.stream_framing for it in cassette.interactions)
    expected: Counter[str | None] = Counter()
    for kind, count in row["body_kinds"].items():
        assert kind in KIND_TO_FRAMING, f"MANIFEST body kind {kind!r} is not mapped here"
        expected[KIND_TO_FRAMING[kind]] += count
    assert len(cassette.interactions) == row["interactions"]
    assert sum(it.is_streaming for it in cassette.interactions) == row["streaming"]
    assert framings == expected


def decode(it: Interaction) -> list[Any]:
    """The framed messages of a streamed body, fed whole, picked by the loader's framing."""
    framing = it.stream_framing
    decoder: Any
    if framing == "sse":
        from stream_harness.wire.sse import SSEDecoder

        decoder = SSEDecoder()
    elif framing == "jsonlines":
        from stream_harness.wire.jsonlines import JSONLinesDecoder

        decoder = JSONLinesDecoder()
    elif framing == "jsonarray":
        from stream_harness.wire.jsonarray import JSONArrayDecoder

        decoder = JSONArrayDecoder()
    elif framing == "eventstream":
        from stream_harness.wire.eventstream import EventStreamDecoder

        decoder = EventStreamDecoder()
    else:
        raise AssertionError(f"interaction {it.index} is not a stream")
    return [*decoder.feed(it.response.body), *decoder.close()]


def test_every_stream_frames_without_errors(corpus_cassette: Path) -> None:
    from stream_harness.wire import FramingError

    streams = [it for it in load_cassette(corpus_cassette).interactions if it.is_streaming]
    if not streams:
        pytest.skip("no streaming interaction in this cassette")
    for it in streams:
        outputs = decode(it)
        errors = [o for o in outputs if isinstance(o, FramingError)]
        assert not errors, f"interaction {it.index} ({it.stream_framing}): {errors[:3]}"
        assert outputs, f"interaction {it.index} ({it.stream_framing}) yielded no event"


def test_bodies_agree_with_vcrpy_reading_the_same_file(corpus_cassette: Path) -> None:
    raw = yamlserializer.deserialize(corpus_cassette.read_text(encoding="utf-8"))
    ours = load_cassette(corpus_cassette).interactions
    assert len(raw["interactions"]) == len(ours)
    for item, it in zip(raw["interactions"], ours, strict=True):
        request, response = item["request"], item["response"]
        if "parsed_body" in request:
            assert json.loads(it.request.body) == request["parsed_body"]
        else:
            body = request["body"]
            assert it.request.body == (body.encode() if isinstance(body, str) else body or b"")
        if "parsed_body" in response:
            assert json.loads(it.response.body) == response["parsed_body"]
        else:
            # What vcrpy would replay with decode_compressed_response=True.
            decoded = decode_response(compat.convert_to_bytes(response))
            assert it.response.body == decoded["body"]["string"], f"interaction {it.index}"


def test_dump_then_load_keeps_every_body(corpus_cassette: Path, tmp_path: Path) -> None:
    original = load_cassette(corpus_cassette)
    out = tmp_path / corpus_cassette.name
    dump_cassette(original, out)
    back = load_cassette(out)
    # vcrpy reads the same bytes back from what we wrote.
    raw = yamlserializer.deserialize(out.read_text(encoding="utf-8"))["interactions"]
    for a, b, r in zip(original.interactions, back.interactions, raw, strict=True):
        assert (b.request.method, b.request.uri) == (a.request.method, a.request.uri)
        assert b.request.headers == a.request.headers
        assert b.request.body == a.request.body
        assert b.response.body == a.response.body
        assert compat.convert_to_bytes(r["response"])["body"]["string"] == a.response.body
        assert (b.response.status, b.response.reason) == (a.response.status, a.response.reason)
        assert b.stream_framing == a.stream_framing
        if not a.response.decoded_encoding:
            assert b.response.headers == a.response.headers
