"""detect_protocol: from the URL, else from the body's shape, on bundled and real traffic."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conftest import corpus_dir
from stream_harness.providers import UnknownProtocolError
from stream_harness.providers.reference import detect_protocol
from stream_harness.recordings.cassette import load_cassette
from stream_harness.reporting.summary import cassette_files

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = [p for p in cassette_files(ROOT / "cassettes")]

# corpus folders are named by wire protocol (corpus README); "other" holds formats we do not model
CORPUS_FOLDER = {
    "anthropic_messages": "anthropic-messages",
    "openai_chat": "openai-completions",
    "mistral": "mistral-chat",
    "openai_responses": "openai-responses",
    "gemini": "google-generative-ai",
}


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_bundled_cassette_is_detected_as_its_folder(path: Path) -> None:
    for inter in load_cassette(path).interactions:
        assert detect_protocol(inter) == path.parent.name


def _without_url(inter):  # type: ignore[no-untyped-def]
    return dataclasses.replace(inter, request=dataclasses.replace(inter.request, uri=""))


@pytest.mark.parametrize(
    "path",
    [
        p
        for p in BUNDLED
        if p.parent.name
        in ("anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai")
        # a stream whose only event is `event: error` carries nothing protocol-specific
        and p.name != "error_first_event.yaml"
        # Mistral's bytes behind a gateway URL: without the URL they are Mistral's (the
        # header and the thinking chunk say mistral-chat), checked in test_provider_mistral_chat
        and not p.name.startswith("mistral_")
    ],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_successful_streams_are_detected_from_the_body_alone(path: Path) -> None:
    for inter in load_cassette(path).interactions:
        if inter.response.status >= 400 or not inter.is_streaming:
            continue
        try:
            got = detect_protocol(_without_url(inter))
        except UnknownProtocolError:
            pytest.fail(f"{path.name}: the body alone did not tell the protocol")
        assert got == path.parent.name


def test_corpus_streams_are_detected_as_their_folder() -> None:
    root = corpus_dir()
    if root is None:
        pytest.skip("corpus absent")
    checked = 0
    for folder, protocol in CORPUS_FOLDER.items():
        for path in sorted((root / folder).glob("*.yaml")):
            for inter in load_cassette(path).interactions:
                if inter.is_streaming:
                    # The gemini folder holds Vertex AI recordings too (same wire format):
                    # their aiplatform.googleapis.com URLs make them vertex-gemini.
                    expected = (
                        "vertex-gemini"
                        if protocol == "google-generative-ai"
                        and "aiplatform.googleapis.com" in inter.request.uri
                        else protocol
                    )
                    assert detect_protocol(inter) == expected, f"{folder}/{path.name}#{inter.index}"
                    checked += 1
    assert checked > 60


def test_an_unknown_interaction_says_to_name_the_protocol() -> None:
    inter = load_cassette(BUNDLED[0]).interactions[0]
    odd = dataclasses.replace(
        inter,
        request=dataclasses.replace(inter.request, uri="https://example.invalid/v9/whatever"),
        response=dataclasses.replace(inter.response, body=b"hello"),
    )
    with pytest.raises(UnknownProtocolError, match="--protocol"):
        detect_protocol(odd)


def test_bedrock_converse_error_bodies_are_detected_by_url() -> None:
    inter = load_cassette(BUNDLED[0]).interactions[0]
    for uri in (
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude/converse",
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude/converse-stream",
    ):
        odd = dataclasses.replace(inter, request=dataclasses.replace(inter.request, uri=uri))
        assert detect_protocol(odd) == "bedrock-converse-stream"


def test_cohere_v2_chat_is_detected_by_url_and_not_its_compatible_path() -> None:
    inter = load_cassette(BUNDLED[0]).interactions[0]
    for uri, want in (
        ("https://api.cohere.com/v2/chat", "cohere-v2-chat"),
        ("https://api.cohere.ai/v2/chat?x=1", "cohere-v2-chat"),
        ("https://api.cohere.ai/compatibility/v1/chat/completions", "openai-completions"),
        ("https://llm.example.invalid/v2/chat/completions", "openai-completions"),
    ):
        odd = dataclasses.replace(inter, request=dataclasses.replace(inter.request, uri=uri))
        assert detect_protocol(odd) == want, uri


def test_the_corpus_cohere_overflow_error_is_detected_as_cohere() -> None:
    root = corpus_dir()
    if root is None:
        pytest.skip("corpus absent")
    path = root / "other" / "pydantic-ai__test_context_window_exceeded[cohere].yaml"
    if not path.is_file():
        pytest.skip(f"{path.name} absent")
    (inter,) = load_cassette(path).interactions
    assert detect_protocol(inter) == "cohere-v2-chat"
