"""The recorded interactions of the corpus, read once and picked by protocol for the corpus tests.

Imported by bare name (pytest's default import mode puts tests/ on sys.path), like
cassette_checks. Each tests/providers/test_corpus_<protocol>.py keeps its own oracle;
walking the corpus, detecting each interaction's protocol, the skip when the corpus is
absent and the split-invariance check are the same for all of them, so they live here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cassette_checks import events_of
from conftest import corpus_cassettes, corpus_dir, no_corpus_reason
from stream_harness.contract.events import ContentBlock, Event, TextBlock, ThinkingBlock
from stream_harness.providers.reference import detect_protocol
from stream_harness.recordings.cassette import Interaction, load_cassette

# Bodies below this size are also fed one byte at a time (above it, too slow to be worth it).
ONE_BYTE_LIMIT = 64 * 1024


@dataclass(frozen=True)
class Recorded:
    """One interaction of the corpus, with the protocol detection gives it (None: unknown)."""

    path: Path
    interaction: Interaction
    protocol: str | None
    name: str  # the file relative to the corpus, '#', the interaction's index

    @property
    def is_stream(self) -> bool:
        """A streaming response that succeeded: what a normalizer is judged on."""
        return self.interaction.is_streaming and self.interaction.response.status < 400

    @property
    def is_http_error(self) -> bool:
        return self.interaction.response.status >= 400


@functools.cache
def corpus_recordings() -> tuple[Recorded, ...]:
    """Every interaction of every readable corpus file, in file order; empty without a corpus.

    Read once per test process: several modules pick from the same few hundred cassettes.
    """
    root = corpus_dir()
    if root is None:
        return ()
    out = []
    for path in corpus_cassettes():
        try:
            cassette = load_cassette(path)
        except Exception:  # unreadable files are test_corpus_loads' business
            continue
        for inter in cassette.interactions:
            try:
                protocol: str | None = detect_protocol(inter)
            except ValueError:
                protocol = None
            name = f"{path.relative_to(root).as_posix()}#{inter.index}"
            out.append(Recorded(path, inter, protocol, name))
    return tuple(out)


def corpus_streams(*protocols: str) -> list[Recorded]:
    """The successful streams detected as one of ``protocols`` (any known protocol if none)."""
    return [
        r
        for r in corpus_recordings()
        if r.is_stream and r.protocol is not None and (not protocols or r.protocol in protocols)
    ]


def corpus_params(
    recordings: Iterable[Recorded],
    *,
    value: Callable[[Recorded], Any] = lambda r: r.interaction,
    name: Callable[[Recorded], str] = lambda r: r.name,
    when_empty: str | None = None,
) -> list[Any]:
    """``recordings`` as pytest params, or one skipped param saying why there are none.

    Without a corpus the reason says where it was looked for; with one but nothing picked,
    ``when_empty`` (if given) is the reason, else the list is empty as it is.
    """
    if corpus_dir() is None:
        skip = pytest.mark.skip(reason=no_corpus_reason())
        return [pytest.param(None, marks=skip, id="no-corpus")]
    params = [pytest.param(value(r), id=name(r)) for r in recordings]
    if not params and when_empty is not None:
        return [pytest.param(None, marks=pytest.mark.skip(reason=when_empty), id="none")]
    return params


def assert_chunkings_agree(
    protocol: str,
    body: bytes,
    chunkings: st.SearchStrategy[Sequence[bytes]],
    reference: list[Event] | None = None,
) -> None:
    """Every chunking hypothesis draws (25) gives the events of the body fed whole (C13)."""
    whole = events_of(protocol, [body]) if reference is None else reference

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(chunks=chunkings)
    def check(chunks: Sequence[bytes]) -> None:
        assert events_of(protocol, chunks) == whole

    check()


def blocks_text(
    blocks: Iterable[ContentBlock], kind: type[TextBlock] | type[ThinkingBlock] = TextBlock
) -> str:
    """The content of a message's text (or thinking) blocks joined, as a reader of the
    stream saw it: what the corpus oracles compare with the wire's own fragments."""
    return "".join(b.content for b in blocks if isinstance(b, kind))


def botocore_frames(body: bytes, operation: str, member: str) -> list[dict[str, Any]]:
    """The official SDK's reading of a Bedrock event-stream body, one parsed dict a frame.

    botocore offline: its ``EventStreamBuffer`` cuts and checks the frames, its
    ``EventStreamJSONParser`` reads them on the ``bedrock-runtime`` service model's output
    ``member`` of ``operation``. Skips the test when botocore is not installed; raises what
    botocore raises on a damaged body.
    """
    eventstream = pytest.importorskip("botocore.eventstream")
    parsers = pytest.importorskip("botocore.parsers")
    session = pytest.importorskip("botocore.session")
    model = session.Session().get_service_model("bedrock-runtime").operation_model(operation)
    shape = model.output_shape.members[member]
    parser = parsers.EventStreamJSONParser()
    buffer = eventstream.EventStreamBuffer()
    buffer.add_data(body)
    return [parser.parse(message.to_response_dict(), shape) for message in buffer]
