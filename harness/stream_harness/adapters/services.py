"""The wire protocols several in-process adapters route by, and what their clients are given offline.

The openai SDK, pydantic-ai and LangChain adapters each pick a client per protocol
(``AzureOpenAI`` for the Azure ids, a Vertex client for the Vertex ids ...), and the
Azure and Vertex clients want an endpoint, an API version or a project although the
replay transport answers every request with the recorded body whatever the URL. Named
once here, so that the adapters agree on both.
"""

from __future__ import annotations

from typing import Final

AZURE_CHAT: Final = "azure-openai-completions"
AZURE_RESPONSES: Final = "azure-openai-responses"
MISTRAL: Final = "mistral-chat"
VERTEX_ANTHROPIC: Final = "vertex-anthropic"
VERTEX_GEMINI: Final = "vertex-gemini"
COHERE: Final = "cohere-v2-chat"
BEDROCK_INVOKE: Final = "bedrock-invoke-stream"

# An Azure resource endpoint and a GA api-version the AzureOpenAI clients put in the
# query, and a Google Cloud project for the Vertex clients (any value works offline).
AZURE_ENDPOINT: Final = "https://harness.openai.azure.com"
AZURE_API_VERSION: Final = "2024-10-21"
VERTEX_PROJECT: Final = "harness-project"
