"""LangChain on Vertex AI: what the two chat models ask for, and that they stay offline.

``ChatGoogleGenerativeAI(vertexai=True, ...)`` (vertex-gemini) and ``ChatAnthropicVertex``
(vertex-anthropic) are given a bearer token that never expires, so google-auth neither
looks for credentials nor refreshes them: the only request is the one the recorded body
answers, and no socket is opened. What they request decides which cassettes they can
receive in use: google-genai always asks for ``alt=sse``, so the vertex-gemini cassettes
of the JSON-array form (``$alt=json;enum-encoding=int``) are known failures that are not
failures in use (specs/expectations/langchain.yaml). The libraries are in the matrix group
``langchain`` (specs/matrix.toml), not in the test extra: without them these tests skip.
To run them: ``~/.cache/stream-harness/matrix/langchain-*/bin/python -m pytest
tests/adapters/test_langchain_vertex.py``.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from stream_harness.adapters.library import LibraryAdapter
from stream_harness.adapters.protocol import AdapterLoadError, AdapterResult
from stream_harness.conformance import bundled_cassettes
from stream_harness.contract.events import ProviderBlock, TextBlock, ThinkingBlock, ToolCall
from stream_harness.providers.registry import is_registered
from stream_harness.recordings.cassette import load_cassette

# The package each protocol's chat model lives in.
PACKAGES = {
    "vertex-gemini": "langchain_google_genai",
    "vertex-anthropic": "langchain_google_vertexai",
}


class RecordingAdapter:
    """The langchain adapter with every request its transport answers kept."""

    def __init__(self) -> None:
        from stream_harness.adapters.libraries.langchain import LangChainAdapter

        try:
            self.adapter = LangChainAdapter()
        except AdapterLoadError as exc:
            pytest.skip(str(exc))
        self.requests: list[Any] = []
        adapter = self.adapter

        def serve(request: Any) -> Any:
            self.requests.append(request)
            return LibraryAdapter._serve_current(adapter, request)

        # Before the first transport is built, which binds this attribute.
        adapter._serve_current = serve  # type: ignore[method-assign]

    def run(self, protocol: str, cassette: str, *, split: str = "whole") -> AdapterResult:
        path = bundled_cassettes() / protocol / f"{cassette}.yaml"
        if not (is_registered(protocol) and path.exists()):
            pytest.skip(f"{protocol} is not in this checkout")
        pytest.importorskip(PACKAGES[protocol])
        response = load_cassette(path).interactions[0].response
        body = response.body
        chunks = [body] if split == "whole" else [body[i : i + 1] for i in range(len(body))]
        return self.adapter.run(protocol, chunks, status=response.status, headers=response.headers)


@pytest.fixture
def no_sockets(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every attempt to connect a socket is refused and kept (google-auth's metadata-server
    probe or token refresh would be one)."""
    attempts: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise OSError(f"test: no network ({address!r})")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    yield attempts


# protocol -> (its plain_text cassette's text and raw stop, the host and the path end of the
# one request, its query where it is pinned)
REQUESTS: dict[str, tuple[str, str, str, str, dict[str, list[str]] | None]] = {
    "vertex-gemini": (
        "Vertex AI runs Gemini in your Google Cloud project.",
        "STOP",
        "us-central1-aiplatform.googleapis.com",
        "/projects/harness-project/locations/us-central1/publishers/google/models/"
        "gemini-harness:streamGenerateContent",
        # alt=sse, never the JSON array with integer enums of google-cloud-aiplatform's
        # REST transport ($alt=json;enum-encoding=int).
        {"alt": ["sse"]},
    ),
    "vertex-anthropic": (
        "Hello from Vertex AI!",
        "end_turn",
        "us-east5-aiplatform.googleapis.com",
        "/projects/harness-project/locations/us-east5/publishers/anthropic/models/"
        "claude-harness:streamRawPredict",
        None,
    ),
}


@pytest.mark.parametrize("protocol", list(REQUESTS))
def test_vertex_asks_aiplatform_with_the_bearer_token(protocol: str, no_sockets: list[Any]) -> None:
    """Gemini streams from streamGenerateContent with alt=sse, Claude posts streamRawPredict;
    both with the access token, and no socket opened."""
    text, raw_stop, host, path, query = REQUESTS[protocol]
    recording = RecordingAdapter()
    result = recording.run(protocol, "plain_text")
    assert result.message is not None and result.raised is None
    assert [b.content for b in result.message.content if isinstance(b, TextBlock)] == [text]
    assert result.message.provider_stop_reason == raw_stop
    (request,) = recording.requests
    url = urlsplit(str(request.url))
    assert url.hostname == host
    assert url.path.endswith(path)
    if query is not None:
        assert parse_qs(url.query) == query
    assert request.headers["authorization"] == "Bearer test"
    assert no_sockets == []


def test_vertex_models_are_built_once_per_protocol() -> None:
    recording = RecordingAdapter()
    for _ in range(3):
        recording.run("vertex-gemini", "tool_call", split="1byte")
        recording.run("vertex-anthropic", "tool_call", split="1byte")
    kept = recording.adapter.__dict__["_kept"]
    assert set(kept) == {"vertex-gemini", "vertex-anthropic"}
    assert len(recording.requests) == 6


def test_vertex_json_array_form_is_not_readable_by_chat_google_generative_ai() -> None:
    """What the expectation rows say: fed the form it never asks for, it raises and keeps
    nothing (so the rows stay known failures, not fixes, until a library asks for it)."""
    result = RecordingAdapter().run("vertex-gemini", "int_enums_json_array")
    assert result.raised is not None
    assert "Failed to parse response as JSON" in result.raised
    assert result.message is not None and result.message.content == []


def test_chat_anthropic_vertex_leaves_thinking_non_standard() -> None:
    """langchain-ai/langchain-google#1754, asserted as what the library does: no
    model_provider in response_metadata, so content_blocks keeps Claude's thinking block
    (with its signature) as a non_standard block. A fix shows as this test failing."""
    result = RecordingAdapter().run("vertex-anthropic", "thinking_signature")
    msg = result.message
    assert msg is not None and result.raised is None
    assert not any(isinstance(b, ThinkingBlock) for b in msg.content)
    (block,) = [b for b in msg.provider_blocks if isinstance(b, ProviderBlock)]
    assert block.provider_type == "non_standard"
    assert block.data["value"]["type"] == "thinking"
    assert block.data["value"]["thinking"] == "12 squared is 144; plus 12 is 156."
    assert [b.content for b in msg.content if isinstance(b, TextBlock)] == ["12² + 12 = **156**."]
    assert not any(isinstance(b, ToolCall) for b in msg.content)


# A fresh interpreter: prepare() each Vertex AI protocol, then run it, and print the
# modules of the chat models' packages that the run imported itself.
_LATE_IMPORTS = """
import sys
from stream_harness.adapters.libraries.langchain import LangChainAdapter
from stream_harness.conformance import bundled_cassettes
from stream_harness.recordings.cassette import load_cassette

adapter = LangChainAdapter()
for protocol in ("vertex-anthropic", "vertex-gemini"):
    adapter.prepare(protocol)
    before = set(sys.modules)
    response = load_cassette(bundled_cassettes() / protocol / "plain_text.yaml").interactions[0].response
    result = adapter.run(protocol, [response.body], status=response.status, headers=response.headers)
    assert result.message is not None, result
    late = sorted(
        m for m in set(sys.modules) - before
        if m.startswith(("langchain_google", "vertexai", "google.cloud", "google.genai", "google.auth"))
    )
    print(protocol, *late)
"""


def test_prepare_imports_what_a_vertex_run_would_import_before_it_is_timed() -> None:
    """The matrix's 83 timeouts: the first Vertex AI run in each worker imported
    langchain-google-vertexai (google-cloud-aiplatform, 3,200 modules, 30 s compiled from
    source on a loaded machine) inside the run timeout. prepare() imports it before the
    clock starts (deadline.run_within, and the runner before it forks): the run itself
    imports none of those packages."""
    pytest.importorskip("langchain_google_vertexai")
    pytest.importorskip("langchain_google_genai")
    done = subprocess.run(
        [sys.executable, "-c", _LATE_IMPORTS], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == ["vertex-anthropic", "vertex-gemini"], done.stdout
