"""The third-party adapters by name, for ``load_adapter`` and ``stream-harness matrix``.

Kept apart from ``harness.adapter.BUILTIN`` (the reference and the official
SDK adapters, which the test extra installs) because no single environment can hold these
libraries together: their pins conflict (third-party-adapters.md, section 1), so each runs
in its own environment built by ``stream-harness matrix`` from ``specs/matrix.toml``.
"""

from __future__ import annotations

from typing import Final

THIRD_PARTY: Final[dict[str, str]] = {
    "openai-sdk-create": "harness.adapters.openai_create:OpenAICreateAdapter",
    "google-genai": "harness.adapters.google_genai:GoogleGenAIAdapter",
    "cohere": "harness.adapters.cohere_sdk:CohereSDKAdapter",
    "mistral-sdk": "harness.adapters.mistral_sdk:MistralSDKAdapter",
    "google-genai-vertex": "harness.adapters.google_genai:GoogleGenAIVertexAdapter",
    "litellm": "harness.adapters.litellm:LiteLLMAdapter",
    "pydantic-ai": "harness.adapters.pydantic_ai:PydanticAIAdapter",
    "langchain": "harness.adapters.langchain:LangChainAdapter",
    "any-llm": "harness.adapters.chunked:AnyLLMAdapter",
    "aisuite": "harness.adapters.chunked:AISuiteAdapter",
    "llm": "harness.adapters.chunked:LLMAdapter",
    # JavaScript/TypeScript libraries, through the stdio protocol (harness/adapters/js.py).
    "js-anthropic-sdk": "harness.adapters.js:anthropic_sdk",
    "js-openai": "harness.adapters.js:openai",
    "js-ai-sdk": "harness.adapters.js:ai_sdk",
    "js-ai-sdk-openai-compatible": "harness.adapters.js:ai_sdk_openai_compatible",
    "js-google-genai": "harness.adapters.js:google_genai",
    "js-pi-ai": "harness.adapters.js:pi_ai",
    "js-langchain": "harness.adapters.js:langchain",
}


def adapter_spec(name: str) -> str:
    """The ``module:object`` spec of a third-party adapter name; other names pass through."""
    return THIRD_PARTY.get(name, name)
