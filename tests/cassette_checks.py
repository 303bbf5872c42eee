"""vcrpy replay of a bundled cassette, and a body run through a reference normalizer,
shared by the provider test modules.

Imported by bare name (pytest's default import mode puts tests/ on sys.path), so each
module keeps its own protocol-specific assertions. Goldens, split invariance and
mutations are parametrized over every protocol instead: tests/recordings/test_goldens.py
and tests/conformance/test_robustness.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from stream_harness.contract.events import (
    DoneEvent,
    ErrorEvent,
    Event,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
)
from stream_harness.contract.rules import check_contract
from stream_harness.providers.registry import get_normalizer
from stream_harness.recordings.cassette import Interaction, load_cassette
from stream_harness.recordings.chunking import split_at
from wire_chunkings import decode_all


def replay_with_vcrpy(path: Path) -> tuple[Interaction, Any]:
    """vcrpy itself replays interaction 0 through httpx; returns it with the response.

    The recorded method is used: a WebSocket turn is the handshake's GET (vcrpy matches
    and replays it as any request; it has no notion of the frames in its body)."""
    vcr = pytest.importorskip("vcr")
    import httpx

    inter = load_cassette(path).interactions[0]
    recorder = vcr.VCR(record_mode="none")
    with recorder.use_cassette(str(path)), httpx.Client() as client:
        response = client.request(
            inter.request.method,
            inter.request.uri,
            content=inter.request.body,
            headers={"content-type": "application/json"},
        )
    assert response.status_code == inter.response.status
    assert response.content == inter.response.body
    return inter, response


def replaying_client(httpx_module: Any, body: bytes) -> Any:
    """A client of ``httpx_module`` (httpx, or httpx2 for the SDKs built on it) that answers
    every request with ``body`` as an event stream: an official SDK reads recorded bytes
    through it, offline, as the oracle of a corpus test."""

    def handler(request: Any) -> Any:
        headers = {"content-type": "text/event-stream"}
        return httpx_module.Response(200, headers=headers, content=body)

    return httpx_module.Client(transport=httpx_module.MockTransport(handler))


# -- streams through a normalizer ---------------------------------------------------------


def events_of(protocol: str, chunks: Iterable[bytes]) -> list[Event]:
    """The reference normalizer's events for a body fed in ``chunks``, ``close()`` included."""
    events: list[Event] = decode_all(get_normalizer(protocol), chunks)
    return events


def text_block_opening(*deltas: str, signature: str | None = None) -> list[Event]:
    """The exact events of a stream that opens with one text block, up to its terminal
    event: ``start``, then the block at content index 0, a delta per wire fragment, its end."""
    return [
        StartEvent(),
        TextStartEvent(content_index=0),
        *(TextDeltaEvent(content_index=0, delta=delta) for delta in deltas),
        TextEndEvent(content_index=0, content="".join(deltas), signature=signature),
    ]


def terminal(events: list[Event]) -> DoneEvent | ErrorEvent:
    """The last event, once the stream is known to keep the contract with one terminal event."""
    last = events[-1]
    assert isinstance(last, DoneEvent | ErrorEvent), last
    assert check_contract(events) == [], check_contract(events)
    types = [e.type for e in events]
    assert types.count("done") + types.count("error") == 1
    return last


def ends_done(events: list[Event]) -> DoneEvent:
    """The done event a stream that keeps the contract must end in."""
    end = terminal(events)
    assert isinstance(end, DoneEvent), end
    return end


def ends_failed(events: list[Event]) -> ErrorEvent:
    """The error event a stream that keeps the contract must end in."""
    end = terminal(events)
    assert isinstance(end, ErrorEvent), end
    return end


@dataclass(frozen=True)
class Translate:
    """A protocol's reference normalizer as the unit tests drive it: a body in, events out.

    Bodies are written as text or bytes; ``cuts`` feeds them in pieces cut at those offsets.
    """

    protocol: str

    def run(self, body: str | bytes, cuts: Iterable[int] = ()) -> list[Event]:
        data = body.encode("utf-8") if isinstance(body, str) else body
        return events_of(self.protocol, split_at(data, cuts))

    def done(self, body: str | bytes) -> DoneEvent:
        """The done event the body must end in."""
        return ends_done(self.run(body))

    def failed(self, body: str | bytes) -> ErrorEvent:
        """The error event the body must end in."""
        return ends_failed(self.run(body))
