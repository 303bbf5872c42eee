"""The third-party adapters by name, for ``load_adapter`` and ``stream-harness matrix``.

Kept apart from ``stream_harness.adapters.protocol.BUILTIN`` (the reference and the official
SDK adapters, which the test extra installs) because no single environment can hold these
libraries together: their pins conflict (third-party-adapters.md, section 1), so each runs
in its own environment built by ``stream-harness matrix`` from ``specs/matrix.toml``.
"""

from __future__ import annotations

from typing import Final

THIRD_PARTY: Final[dict[str, str]] = {
    "openai-sdk-create": "stream_harness.adapters.sdks.openai_create:OpenAICreateAdapter",
    "openai-sdk-websocket": "stream_harness.adapters.sdks.openai_websocket:OpenAISDKWebSocketAdapter",
    "google-genai": "stream_harness.adapters.sdks.google_genai:GoogleGenAIAdapter",
    "cohere": "stream_harness.adapters.sdks.cohere_sdk:CohereSDKAdapter",
    "mistral-sdk": "stream_harness.adapters.sdks.mistral_sdk:MistralSDKAdapter",
    "google-genai-vertex": "stream_harness.adapters.sdks.google_genai:GoogleGenAIVertexAdapter",
    "litellm": "stream_harness.adapters.libraries.litellm:LiteLLMAdapter",
    "pydantic-ai": "stream_harness.adapters.libraries.pydantic_ai:PydanticAIAdapter",
    "langchain": "stream_harness.adapters.libraries.langchain:LangChainAdapter",
    "any-llm": "stream_harness.adapters.libraries.chunked:AnyLLMAdapter",
    "aisuite": "stream_harness.adapters.libraries.chunked:AISuiteAdapter",
    "llm": "stream_harness.adapters.libraries.chunked:LLMAdapter",
    # JavaScript/TypeScript libraries, through the stdio protocol (harness/stream_harness/adapters/processes/js.py).
    "js-anthropic-sdk": "stream_harness.adapters.processes.js:anthropic_sdk",
    "js-openai": "stream_harness.adapters.processes.js:openai",
    "js-openai-websocket": "stream_harness.adapters.processes.js:openai_websocket",
    "js-ai-sdk": "stream_harness.adapters.processes.js:ai_sdk",
    "js-ai-sdk-openai-compatible": "stream_harness.adapters.processes.js:ai_sdk_openai_compatible",
    "js-google-genai": "stream_harness.adapters.processes.js:google_genai",
    "js-pi-ai": "stream_harness.adapters.processes.js:pi_ai",
    "js-langchain": "stream_harness.adapters.processes.js:langchain",
    "js-google-genai-vertex": "stream_harness.adapters.processes.js:google_genai_vertex",
    "js-anthropic-vertex-sdk": "stream_harness.adapters.processes.js:anthropic_vertex_sdk",
    "js-ai-sdk-vertex": "stream_harness.adapters.processes.js:ai_sdk_vertex",
    "js-pi-ai-vertex": "stream_harness.adapters.processes.js:pi_ai_vertex",
}


def adapter_spec(name: str) -> str:
    """The ``module:object`` spec of a third-party adapter name; other names pass through."""
    return THIRD_PARTY.get(name, name)
