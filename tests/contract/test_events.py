"""The contract's models: schema in sync, JSON round trip, snake_case, frozen."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError

from stream_harness.contract.events import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    TextBlock,
    TextDeltaEvent,
    ToolCall,
    ToolCallEndEvent,
    event_from_json,
    event_to_json,
    json_schema,
    render_schema,
)

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "specs" / "events.schema.json"


def test_committed_schema_matches_the_models() -> None:
    committed = SCHEMA_PATH.read_text(encoding="utf-8")
    assert committed == render_schema(), (
        "specs/events.schema.json is stale: regenerate with `python -m stream_harness.contract.events`"
    )


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(json_schema())


SAMPLES = [
    '{"type":"start"}',
    '{"type":"text_start","content_index":0}',
    '{"type":"text_delta","content_index":0,"delta":"Hel"}',
    '{"type":"toolcall_start","content_index":1,"id":"call_1","name":"get_weather"}',
    '{"type":"toolcall_delta","content_index":1,"delta":"{\\"city\\":","arguments":{}}',
    '{"type":"done","reason":"tool_use","message":{"content":[{"type":"text","content":"Hi"},'
    '{"type":"tool_call","id":"call_1","name":"get_weather","arguments":{"city":"Paris"}}],'
    '"stop_reason":"tool_use","provider_stop_reason":"tool_calls"}}',
    '{"type":"error","reason":"error","error_message":"Overloaded","message":{"stop_reason":"error",'
    '"error_message":"Overloaded"},"error":{"kind":"overloaded","status":529,"retryable":true}}',
]


@pytest.mark.parametrize("line", SAMPLES)
def test_hand_written_event_json_validates_against_the_schema_and_round_trips(line: str) -> None:
    jsonschema.validate(json.loads(line), json_schema())
    event = event_from_json(line)
    again = event_from_json(event_to_json(event))
    assert again == event


def test_event_json_is_snake_case_with_a_type_tag() -> None:
    event = ToolCallEndEvent(
        content_index=2, tool_call=ToolCall(id="c", name="n", arguments={"a": 1})
    )
    data = json.loads(event_to_json(event))
    assert data["type"] == "toolcall_end"
    assert data["content_index"] == 2
    assert data["tool_call"] == {
        "type": "tool_call",
        "id": "c",
        "name": "n",
        "arguments": {"a": 1},
        "signature": None,
    }


def test_unknown_event_type_and_extra_fields_are_rejected() -> None:
    with pytest.raises(ValidationError):
        event_from_json('{"type":"text_chunk","content_index":0}')
    with pytest.raises(ValidationError):
        event_from_json('{"type":"text_delta","content_index":0,"delta":"x","partial":{}}')


def test_done_reason_cannot_be_error_and_error_reason_cannot_be_stop() -> None:
    with pytest.raises(ValidationError):
        DoneEvent(reason="error", message=AssistantMessage())  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        ErrorEvent(reason="stop", error_message="x", message=AssistantMessage())  # type: ignore[arg-type]


def test_events_are_frozen() -> None:
    event = TextDeltaEvent(content_index=0, delta="a")
    with pytest.raises(ValidationError):
        event.delta = "b"  # type: ignore[misc]
    block = TextBlock(content="x")
    with pytest.raises(ValidationError):
        block.content = "y"  # type: ignore[misc]


def test_a_lone_surrogate_is_escaped_not_raised() -> None:
    # json.loads('"\\ud83d"') gives a lone surrogate; a provider that splits a pair does that
    event = TextDeltaEvent(content_index=0, delta="a\ud83db")
    line = event_to_json(event)
    assert "\\ud83d" in line
    assert json.loads(line)["delta"] == "a\ud83db"
