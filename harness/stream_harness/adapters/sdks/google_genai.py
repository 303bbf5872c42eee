"""google-genai (the official Gemini SDK) as a conformance subject.

What its users get: ``client.models.generate_content_stream(...)`` yields one parsed
``GenerateContentResponse`` per chunk and offers no accumulator, so users concatenate the
parts themselves. The adapter does what the SDK's documentation shows: text parts are
joined per kind (thought or answer) in arrival order, each ``function_call`` part is one
call, the last ``finish_reason`` and ``usage_metadata`` win. What is tested is the SDK's
own code: its SSE reading and its parsing of every chunk into its models (a field it
drops or a chunk it fails to parse shows here). :class:`GoogleGenAIVertexAdapter` runs the
same through ``genai.Client(vertexai=True, ...)`` (Gemini on Vertex AI, protocol
vertex-gemini). The conventions are in ``specs/adapter_conventions.yaml``, sections
``google-genai`` and ``google-genai-vertex``.
"""

from __future__ import annotations

import base64
import importlib
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any, ClassVar, Final

from stream_harness.adapters.conventions import Collected, LibraryUsage
from stream_harness.adapters.library import YieldingSDKAdapter, as_int
from stream_harness.contract.events import (
    ContentBlock,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)

PROTOCOL: Final = "google-generative-ai"


def uses_httpx2(genai: Any) -> bool:
    """google-genai 3.x builds on httpx2, 2.x on httpx (third-party-adapters.md, section 1)."""
    major = str(getattr(genai, "__version__", "0")).split(".")[0]
    return major.isdigit() and int(major) >= 3


def signature_text(value: Any) -> str | None:
    """A ``thought_signature`` as the wire had it: the SDK decodes the base64 into bytes."""
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)


def accumulate_parts(responses: Sequence[Any]) -> Collected:
    """The parts of every chunk's first candidate, as a user of the SDK joins them."""
    content: list[ContentBlock] = []
    provider: list[ProviderBlock] = []
    stop: str | None = None
    finish_message: str | None = None
    usage: Any = None
    model = response_id = None
    for response in responses:
        model = getattr(response, "model_version", None) or model
        response_id = getattr(response, "response_id", None) or response_id
        usage = getattr(response, "usage_metadata", None) or usage
        feedback = getattr(response, "prompt_feedback", None)
        if feedback is not None and getattr(feedback, "block_reason", None) is not None:
            stop = _enum_value(feedback.block_reason)
        for candidate in (response.candidates or [])[:1]:
            if candidate.finish_reason is not None:
                stop = _enum_value(candidate.finish_reason)
            finish_message = getattr(candidate, "finish_message", None) or finish_message
            parts = candidate.content.parts if candidate.content is not None else None
            for part in parts or []:
                _add_part(part, content, provider)
    return Collected(
        content=content,
        stop=stop,
        usage=gemini_usage(usage),
        model=model,
        response_id=response_id,
        provider_blocks=provider,
        stop_details=finish_message,
    )


def _enum_value(value: Any) -> str:
    return str(getattr(value, "value", value))


def _add_part(part: Any, content: list[ContentBlock], provider: list[ProviderBlock]) -> None:
    signature = signature_text(getattr(part, "thought_signature", None))
    call = getattr(part, "function_call", None)
    if call is not None:
        content.append(
            ToolCall(
                id=call.id or f"{call.name}_{len(content)}",
                name=call.name or "",
                arguments=dict(call.args or {}),
                signature=signature,
            )
        )
        return
    text = getattr(part, "text", None)
    if isinstance(text, str):
        kind = ThinkingBlock if getattr(part, "thought", None) else TextBlock
        last = content[-1] if content else None
        if isinstance(last, kind) and not (last.signature and signature):
            # The same block goes on: a signature arrives on its last part.
            content[-1] = last.model_copy(
                update={"content": last.content + text, "signature": last.signature or signature}
            )
        elif text or signature:
            content.append(kind(content=text, signature=signature))
        return
    data = part.model_dump(mode="json", exclude_none=True) if hasattr(part, "model_dump") else {}
    kind_name = next(iter(data), "part")
    provider.append(ProviderBlock(provider_type=kind_name, position=len(content), data=data))


def gemini_usage(usage: Any) -> LibraryUsage | None:
    """``usage_metadata`` counters, read as specs/protocols/google-generative-ai.md reads them."""
    if usage is None:
        return None
    prompt = as_int(usage.prompt_token_count)
    cached = as_int(usage.cached_content_token_count)
    tool_use = as_int(getattr(usage, "tool_use_prompt_token_count", None))
    total = usage.total_token_count
    return LibraryUsage(
        input=prompt - cached + tool_use,
        output=as_int(usage.candidates_token_count),
        thinking=as_int(usage.thoughts_token_count),
        cache_read=cached,
        total=total if isinstance(total, int) else None,
    )


class GoogleGenAIAdapter(YieldingSDKAdapter):
    """``genai.Client().models.generate_content_stream(...)``, parts joined by hand."""

    name = "google-genai"
    distribution = "google-genai"
    modules: ClassVar[tuple[str, ...]] = ("google.genai", "google.genai.types")
    protocols = frozenset({PROTOCOL})
    yields = "chunks"

    def http_module(self) -> ModuleType:
        name = "httpx2" if uses_httpx2(self.module("google.genai")) else "httpx"
        return importlib.import_module(name)

    def build_client(self, http: Any, transport: Any) -> Any:
        # Built once (YieldingSDKAdapter): the Client loads two SSL contexts (50 ms, ten
        # times a run).
        types = self.module("google.genai.types")
        return self.module("google.genai").Client(
            **self.client_options(),
            http_options=types.HttpOptions(
                httpx_client=http.Client(transport=transport),
                retry_options=types.HttpRetryOptions(attempts=1),
            ),
        )

    def stream(self, client: Any) -> Iterator[Any]:
        yield from client.models.generate_content_stream(model="gemini-harness", contents="hi")

    def collect(self, protocol: str, value: Any) -> Collected:
        return accumulate_parts(value)

    def client_options(self) -> dict[str, Any]:
        """How the client authenticates: the Gemini API takes a key."""
        return {"api_key": "test"}


class GoogleGenAIVertexAdapter(GoogleGenAIAdapter):
    """``genai.Client(vertexai=True, project=..., location=..., credentials=...)``.

    The SDK then streams from ``.../projects/{p}/locations/{l}/publishers/google/models/
    {m}:streamGenerateContent?alt=sse`` with a bearer token. The credentials are an
    already-valid token (:func:`offline_credentials`), so google-auth (a dependency of
    google-genai) never refreshes them and nothing leaves the process.
    """

    name = "google-genai-vertex"
    modules = ("google.genai", "google.genai.types", "google.auth.credentials")
    protocols = frozenset({"vertex-gemini"})

    def client_options(self) -> dict[str, Any]:
        return {
            "vertexai": True,
            "project": "harness-project",
            "location": "us-central1",
            "credentials": offline_credentials(self.module("google.auth.credentials")),
        }


def offline_credentials(module: Any) -> Any:
    """google-auth credentials holding a token that never expires: no refresh, no network."""

    class OfflineCredentials(module.Credentials):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.token = "test"

        def refresh(self, request: Any) -> None:
            """Nothing to refresh: the token is valid for the life of the client."""

    return OfflineCredentials()
