"""Contract C13 on real traffic: every recorded stream, of every protocol detection knows,
gives the same events however its body is cut, and those events keep the contract.

One test for all protocols, so a new normalizer is held to it by registering alone; each
tests/providers/test_corpus_<protocol>.py keeps only its protocol's oracle. Skips cleanly
when the corpus is absent (tests/conftest.py).
"""

from __future__ import annotations

import pytest

from cassette_checks import events_of
from corpus_streams import (
    ONE_BYTE_LIMIT,
    Recorded,
    assert_chunkings_agree,
    corpus_params,
    corpus_streams,
)
from stream_harness.conformance.strategies import chunkings, split_at
from stream_harness.contract.rules import check_contract

STREAMS = corpus_params(corpus_streams(), value=lambda r: r)


@pytest.mark.corpus
@pytest.mark.parametrize("stream", STREAMS)
def test_corpus_split_invariance(stream: Recorded) -> None:
    assert stream.protocol is not None
    body = stream.interaction.response.body
    whole = events_of(stream.protocol, [body])
    assert check_contract(whole) == []
    if len(body) < ONE_BYTE_LIMIT:
        assert events_of(stream.protocol, split_at(body, range(1, len(body)))) == whole
    assert_chunkings_agree(stream.protocol, body, chunkings(body), whole)
