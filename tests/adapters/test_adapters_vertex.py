"""The official SDKs' Vertex AI clients against the reference, on the bundled Vertex cassettes.

``anthropic-sdk-vertex`` runs ``anthropic.AnthropicVertex`` (access token, region and
project given: no Google auth), ``google-genai-vertex`` runs
``genai.Client(vertexai=True, credentials=<a valid offline token>)``; both are fed the
recorded bytes through an in-memory transport. Each streaming cassette the SDK can read
must give the reference's final message (content, raw stop value, usage); the failures
the SDK really has are the known ones of specs/expectations/<adapter>.yaml, checked by the
conformance suite. Skips cleanly when an SDK is not installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.protocol import Adapter
from stream_harness.conformance.expectations import expectations_for
from stream_harness.contract.events import DoneEvent, ErrorEvent
from stream_harness.contract.facts import bundled_cassettes
from stream_harness.recordings.cassette import load_cassette
from stream_harness.recordings.golden import interaction_events

CASES = {
    "anthropic-sdk-vertex": ("vertex-anthropic", ("anthropic", "httpx2")),
    "google-genai-vertex": ("vertex-gemini", ("google.genai", "google.auth")),
}


def _adapter(name: str) -> Adapter:
    for module in CASES[name][1]:
        pytest.importorskip(module)
    return load_adapter(name)


def _known(name: str) -> set[str]:
    """Cases the expectation file lists as a known failure of the `expected` check."""
    return {e.case for e in expectations_for(name).known if e.check == "expected"}


def _params() -> list[object]:
    out = []
    for name, (protocol, _) in CASES.items():
        for path in sorted((bundled_cassettes() / protocol).glob("*.yaml")):
            out.append(pytest.param(name, protocol, path, id=f"{name}-{path.stem}"))
    return out


@pytest.mark.parametrize(("name", "protocol", "path"), _params())
def test_the_sdk_gives_the_reference_message(name: str, protocol: str, path: Path) -> None:
    case = f"{protocol}/{path.name}#0"
    if case in _known(name):
        pytest.skip(f"a known failure of {name} (specs/expectations/{name}.yaml)")
    adapter = _adapter(name)
    inter = load_cassette(path).interactions[0]
    response = inter.response
    result = adapter.run(
        protocol, [response.body], status=response.status, headers=response.headers
    )
    reference = interaction_events(inter, protocol)[-1]
    assert isinstance(reference, DoneEvent | ErrorEvent)
    message = result.message
    assert message is not None, result
    if response.status >= 400:
        # The SDK raises for the HTTP error, with the provider's message.
        assert result.raised is not None
        assert reference.error_message is not None
        assert reference.error_message in (message.error_message or "")
        return
    ref = reference.message
    assert [
        (type(b).__name__, getattr(b, "content", None))
        for b in message.content
        if not hasattr(b, "arguments")
    ] == [
        (type(b).__name__, getattr(b, "content", None))
        for b in ref.content
        if not hasattr(b, "arguments")
    ]
    assert [(b.name, b.arguments) for b in message.content if hasattr(b, "arguments")] == [
        (b.name, b.arguments) for b in ref.content if hasattr(b, "arguments")
    ]
    assert message.provider_stop_reason == ref.provider_stop_reason
    assert message.stop_reason == ref.stop_reason
    assert message.usage == ref.usage


@pytest.mark.parametrize(
    ("name", "url_part"),
    [
        ("anthropic-sdk-vertex", "/publishers/anthropic/models/claude-harness:streamRawPredict"),
        (
            "google-genai-vertex",
            "/projects/harness-project/locations/us-central1/publishers/google/models/gemini-harness:streamGenerateContent",
        ),
    ],
)
def test_the_vertex_clients_send_vertex_requests(
    name: str, url_part: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The adapters go through the SDKs' Vertex code paths: their requests have Vertex URLs."""
    import stream_harness.adapters.library as library
    import stream_harness.adapters.sdks.anthropic_sdk as anthropic_sdk

    adapter = _adapter(name)
    protocol = CASES[name][0]
    seen: list[str] = []

    def recording(serve):  # type: ignore[no-untyped-def]
        def wrapped(http, chunks, **kwargs):  # type: ignore[no-untyped-def]
            inner = serve(http, chunks, **kwargs)

            def handle(request):  # type: ignore[no-untyped-def]
                seen.append(str(request.url))
                return inner.handle_request(request)

            return http.MockTransport(handle)

        return wrapped

    monkeypatch.setattr(anthropic_sdk, "serve", recording(anthropic_sdk.serve))
    monkeypatch.setattr(library, "serve", recording(library.serve))
    inter = load_cassette(bundled_cassettes() / protocol / "plain_text.yaml").interactions[0]
    result = adapter.run(
        protocol, [inter.response.body], status=200, headers=inter.response.headers
    )
    assert result.message is not None and result.message.stop_reason == "stop"
    assert len(seen) == 1 and url_part in seen[0], seen
