"""Resumable Responses streams, sans I/O: the events a cursor resumes, the unknown cursor,
unnumbered events, and the client's reader that keeps the cursor."""

from __future__ import annotations

import json

import pytest

from stream_harness.providers.reference import normalize
from stream_harness.recordings.resume import (
    ResumingReader,
    UnknownCursor,
    cut_after,
    is_resumable,
    response_id,
    resumed_body,
    stream_events,
)


def sse(*events: dict[str, object]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


RESP = {"id": "resp_9", "model": "gpt-x", "status": "in_progress", "output": []}
EVENTS = [
    {"type": "response.created", "response": RESP, "sequence_number": 0},
    {"type": "response.output_item.added", "output_index": 0, "sequence_number": 1, "item": {"id": "m", "type": "message", "role": "assistant", "content": []}},
    {"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0, "delta": "A", "sequence_number": 2},
    {"type": "response.future_event_without_a_number"},
    {"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0, "delta": "B", "sequence_number": 3},
    {"type": "response.completed", "response": {**RESP, "status": "completed"}, "sequence_number": 4},
]  # fmt: skip
BODY = sse(*EVENTS)


def numbers(body: bytes) -> list[int | None]:
    return [e.sequence_number for e in stream_events(body)]


def test_the_events_of_a_recorded_stream_with_their_numbers() -> None:
    events = stream_events(BODY)
    assert [e.sequence_number for e in events] == [0, 1, 2, None, 3, 4]
    assert response_id(events) == "resp_9"
    assert is_resumable(events)


def test_starting_after_n_sends_what_follows_n() -> None:
    events = stream_events(BODY)
    assert numbers(resumed_body(events, 1)) == [2, None, 3, 4]
    assert numbers(resumed_body(events, 4)) == []
    assert numbers(resumed_body(events, -1)) == [0, 1, 2, None, 3, 4]


def test_an_unnumbered_event_goes_out_with_the_event_before_it() -> None:
    # Resuming after 2 never resends the unnumbered event that followed 2.
    assert numbers(resumed_body(stream_events(BODY), 2)) == [3, 4]


def test_a_cursor_the_stream_does_not_have_is_an_error_not_a_restart() -> None:
    with pytest.raises(UnknownCursor, match="sequence_number 17"):
        resumed_body(stream_events(BODY), 17)


def test_streams_without_numbers_or_an_id_are_not_resumable() -> None:
    plain = [{k: v for k, v in e.items() if k != "sequence_number"} for e in EVENTS]
    assert not is_resumable(stream_events(sse(*plain)))
    assert not is_resumable(stream_events(sse(*EVENTS[1:-1])))  # no response object: no id
    assert not is_resumable(stream_events(b"\x00\x01 not sse"))


@pytest.mark.parametrize("k", range(1, len(EVENTS)))
@pytest.mark.parametrize("partial", [False, True])
def test_the_reader_resumed_with_its_cursor_gives_the_whole_streams_events(
    k: int, partial: bool
) -> None:
    events = stream_events(BODY)
    reader = ResumingReader()
    fed = reader.feed(cut_after(events, k, partial=partial))
    reader.resume()
    assert reader.cursor is not None
    fed += reader.feed(resumed_body(events, reader.cursor))
    fed += reader.close()
    whole = list(normalize("openai-responses", [BODY]))
    assert list(normalize("openai-responses", fed)) == whole


def test_an_unnumbered_event_does_not_move_the_cursor() -> None:
    reader = ResumingReader()
    reader.feed(cut_after(stream_events(BODY), 4))
    assert (reader.cursor, reader.unnumbered) == (2, 1)
