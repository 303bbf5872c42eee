"""vertex-anthropic and vertex-gemini: what Vertex adds to the translators they reuse.

The translators themselves are tested by the anthropic-messages and google-generative-ai
suites and the registry-wide ones (goldens, robustness, conformance); here: detection of
Vertex URLs before the generic protocols, the integer-enum table (every row), and that a
stream with integer enums gives the events of the same stream with names.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from stream_harness.contract.facts import bundled_cassettes, load_yaml
from stream_harness.providers.registry import detect_protocol, get_normalizer, protocol_ids
from stream_harness.providers.vertex_gemini import (
    VertexEnumTableError,
    enum_table,
    named_enums,
    parse_enum_table,
)
from stream_harness.recordings.cassette import Interaction, Request, Response, load_cassette

TABLE = load_yaml("vertex_enums.yaml")


def _events(protocol: str, body: bytes) -> list[Any]:
    n = get_normalizer(protocol)
    return [*n.feed(body), *n.close()]


def _interaction(uri: str, body: bytes = b"{}") -> Interaction:
    return Interaction(
        0,
        Request(method="POST", uri=uri, headers={}, body=b"{}"),
        Response(status=200, reason="OK", headers={}, body=body),
    )


# -- detection --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        (
            "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            "vertex-gemini",
        ),
        (
            "https://aiplatform.googleapis.com/v1beta1/projects/p/locations/global/publishers/google/models/gemini-3-flash-preview:streamGenerateContent?alt=sse",
            "vertex-gemini",
        ),
        (
            "https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?key=k",
            "vertex-gemini",
        ),
        (
            "https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/europe-west4/endpoints/123:streamGenerateContent",
            "vertex-gemini",
        ),
        (
            "https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent?%24alt=json%3Benum-encoding%3Dint",
            "vertex-gemini",
        ),
        (
            "http://127.0.0.1:8080/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent",
            "vertex-gemini",
        ),
        (
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            "google-generative-ai",
        ),
        (
            "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
            "vertex-anthropic",
        ),
        (
            "https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/anthropic/models/claude-haiku-4-5@20251001:rawPredict",
            "vertex-anthropic",
        ),
        ("https://api.anthropic.com/v1/messages", "anthropic-messages"),
    ],
)
def test_vertex_urls_are_detected_before_the_generic_protocols(uri: str, expected: str) -> None:
    assert detect_protocol(_interaction(uri)) == expected


def test_another_publishers_raw_predict_is_not_claude() -> None:
    # Mistral on Vertex answers :streamRawPredict in its own (chat-completions) format,
    # which the mistral-chat protocol claims by the publisher in the URL.
    uri = "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/mistralai/models/mistral-large:streamRawPredict"
    assert detect_protocol(_interaction(uri, body=b"hello")) == "mistral-chat"
    other = uri.replace("mistralai/models/mistral-large", "example/models/some-model")
    with pytest.raises(ValueError):
        detect_protocol(_interaction(other, body=b"hello"))


def test_the_vertex_protocols_are_tried_before_the_ones_whose_rules_they_share() -> None:
    ids = protocol_ids()
    assert ids.index("vertex-gemini") < ids.index("google-generative-ai")
    assert ids.index("vertex-anthropic") < ids.index("anthropic-messages")


@pytest.mark.parametrize("folder", ["vertex-anthropic", "vertex-gemini"])
def test_vertex_streams_are_told_from_the_body_alone(folder: str) -> None:
    checked = 0
    for path in sorted((bundled_cassettes() / folder).glob("*.yaml")):
        for inter in load_cassette(path).interactions:
            body = inter.response.body
            if inter.response.status >= 400 or (
                b"createTime" not in body and b"msg_vrtx_" not in body
            ):
                continue
            if folder == "vertex-gemini" and body.find(b"createTime") > 4096:
                continue  # the body rule sees the first 4 KiB only
            blind = dataclasses.replace(inter, request=dataclasses.replace(inter.request, uri=""))
            assert detect_protocol(blind) == folder, path.name
            checked += 1
    assert checked >= 5


# -- the vertex-anthropic translator is the Anthropic one -------------------------------------


ANTHROPIC_STREAMS = [
    p
    for p in sorted((bundled_cassettes() / "vertex-anthropic").glob("*.yaml"))
    if load_cassette(p).interactions[0].response.status < 400
]


@pytest.mark.parametrize("path", ANTHROPIC_STREAMS, ids=lambda p: p.stem)
def test_vertex_anthropic_streams_read_as_anthropic_messages(path: Path) -> None:
    inter = load_cassette(path).interactions[0]
    assert _events("vertex-anthropic", inter.response.body) == _events(
        "anthropic-messages", inter.response.body
    )


# -- the integer-enum table -------------------------------------------------------------------


def _chunk_with(path: str, value: Any) -> dict[str, Any]:
    """A chunk holding ``value`` at ``path`` (one element per list step)."""
    steps = path.split(".")
    root: dict[str, Any] = {}
    node = root
    for i, step in enumerate(steps):
        key = step.removesuffix("[]")
        last = i == len(steps) - 1
        if last:
            node[key] = value
        elif step.endswith("[]"):
            child: dict[str, Any] = {"keep": i}
            node[key] = [child]
            node = child
        else:
            node[key] = {"keep": i}
            node = node[key]
    return root


def _get(chunk: Any, path: str) -> Any:
    for step in path.split("."):
        chunk = chunk[step.removesuffix("[]")]
        if step.endswith("[]"):
            chunk = chunk[0]
    return chunk


FIELD_VALUES = [
    pytest.param(row["path"], number, name, id=f"{row['path']}={number}")
    for row in TABLE["fields"]
    for number, name in TABLE["enums"][row["enum"]]["values"].items()
]


@pytest.mark.parametrize(("path", "number", "name"), FIELD_VALUES)
def test_every_number_of_every_field_is_named(path: str, number: int, name: str) -> None:
    chunk = _chunk_with(path, number)
    before = copy.deepcopy(chunk)
    named = named_enums(chunk, json.dumps(chunk))
    assert _get(named, path) == name
    assert chunk == before  # copy on write: the caller's chunk is not changed
    # Everything else is kept: the rewritten chunk differs from the input at that field only.
    assert named == _chunk_with(path, name)
    assert named_enums(named, json.dumps(named)) == named  # names stay names


def test_every_enum_is_used_and_every_row_is_sourced() -> None:
    assert {row["enum"] for row in TABLE["fields"]} == set(TABLE["enums"])
    assert all(row["source"] for row in TABLE["fields"])
    assert all(enum["source"] for enum in TABLE["enums"].values())
    # The stop reasons the table can produce are rows of the shared stop-reason section.
    rows = {
        r["raw"]
        for r in load_yaml("stop_reasons.yaml")["rows"]
        if r["protocol"] == "google-generative-ai"
    }
    assert set(TABLE["enums"]["FinishReason"]["values"].values()) <= rows


def test_an_unknown_number_becomes_its_text_and_other_values_are_left_alone() -> None:
    chunk = {
        "candidates": [
            {"finishReason": 99, "safetyRatings": [{"category": True, "probability": "LOW"}]}
        ]
    }
    named = named_enums(chunk, json.dumps(chunk))
    assert named["candidates"][0]["finishReason"] == "99"
    # A bool is not an enum number; a name is already a name.
    assert named["candidates"][0]["safetyRatings"] == [{"category": True, "probability": "LOW"}]


def test_a_chunk_without_numeric_enums_is_passed_through_as_is() -> None:
    chunk = {
        "candidates": [{"finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 3},
    }
    assert named_enums(chunk, json.dumps(chunk)) is chunk
    assert named_enums(chunk) is chunk  # walking it finds nothing to change either


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {
                "enums": {"E": {"source": "s", "values": {1: "A"}}},
                "fields": [{"path": "a.b", "enum": "F", "source": "s"}],
            },
            "names no enum",
        ),
        (
            {
                "enums": {"E": {"source": "s", "values": {1: "A"}}},
                "fields": [{"path": "a[]", "enum": "E", "source": "s"}],
            },
            "ends in a list",
        ),
        (
            {
                "enums": {"E": {"source": "s", "values": {1: "A"}}},
                "fields": [{"path": "a..b", "enum": "E", "source": "s"}],
            },
            "bad step",
        ),
        (
            {
                "enums": {"E": {"source": "", "values": {1: "A"}}},
                "fields": [{"path": "a", "enum": "E", "source": "s"}],
            },
            "source",
        ),
        ({"enums": {}, "fields": []}, "enums"),
    ],
)
def test_a_malformed_table_is_refused_with_a_clear_message(data: Any, message: str) -> None:
    with pytest.raises(VertexEnumTableError, match=message):
        parse_enum_table(data)


def test_the_bundled_table_loads() -> None:
    table = enum_table()
    assert len(table.fields) == len(TABLE["fields"])


# -- integer enums and names give the same events ---------------------------------------------


def _names_for_numbers(value: Any) -> Any:
    """The JSON-array body with the table's names written in (what ?alt=json would send)."""
    return named_enums(value) if isinstance(value, dict) else value


INT_CASSETTES = [
    p
    for p in sorted((bundled_cassettes() / "vertex-gemini").glob("*.yaml"))
    if "enum-encoding" in load_cassette(p).interactions[0].request.uri
    and load_cassette(p).interactions[0].response.status < 400
]


@pytest.mark.parametrize("path", INT_CASSETTES, ids=lambda p: p.stem)
def test_an_int_enum_stream_gives_the_events_of_the_named_stream(path: Path) -> None:
    body = load_cassette(path).interactions[0].response.body
    try:
        elements = json.loads(body)
    except ValueError:
        pytest.skip("a cut body (stream_cut) has no named twin")
    assert json.dumps(elements) != json.dumps([_names_for_numbers(e) for e in elements])
    named_body = json.dumps([_names_for_numbers(e) for e in elements], indent=2).encode()
    assert _events("vertex-gemini", body) == _events("vertex-gemini", named_body)
    # With names, the Gemini translator itself agrees: the step is the only difference.
    assert _events("vertex-gemini", named_body) == _events("google-generative-ai", named_body)


def test_int_enums_name_the_stop_reason_and_the_kept_ratings() -> None:
    body = json.dumps(
        [
            {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hi"}]}, "index": 0}]},
            {
                "candidates": [
                    {
                        "finishReason": 2,
                        "index": 0,
                        "safetyRatings": [{"category": 1, "probability": 1, "severity": 1}],
                    }
                ],
                "usageMetadata": {
                    "promptTokenCount": 1,
                    "candidatesTokenCount": 1,
                    "totalTokenCount": 2,
                },
            },
        ]
    ).encode()
    last = _events("vertex-gemini", body)[-1]
    assert last.reason == "length"
    assert last.message.provider_stop_reason == "MAX_TOKENS"
    ratings = [b.data for b in last.message.provider_blocks if b.provider_type == "safetyRatings"]
    assert ratings == [
        {
            "safetyRatings": [
                {
                    "category": "HARM_CATEGORY_HATE_SPEECH",
                    "probability": "NEGLIGIBLE",
                    "severity": "HARM_SEVERITY_NEGLIGIBLE",
                }
            ]
        }
    ]
    # The Gemini API translator, reading the numbers as they are, would not see a finish.
    assert _events("google-generative-ai", body)[-1].reason == "error"
