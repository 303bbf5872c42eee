"""The reference translators, one module per wire protocol, and what they share.

Importing this package registers every bundled protocol: each module below calls
:func:`~stream_harness.providers.registry.register` when imported, and they are listed
here, not discovered, so the import graph shows them (a test fails when a protocol module
is left out). Shared pieces: ``registry`` (the registrations and detection), ``base`` (the
normalizer's one feed/close choke point), ``accumulator`` (block bookkeeping, once),
``stop_reasons`` (the stop-reason table), ``coerce`` (reading wire JSON values),
``reference`` (``normalize``, the entry point users call) and ``table`` (the generated
protocol table of the docs).
"""

from __future__ import annotations

# The bundled protocols, registered on import; listing order is each registration's own.
from stream_harness.providers import (  # noqa: F401  (imported to register themselves)
    anthropic_messages,
    azure_openai_completions,
    azure_openai_responses,
    bedrock_converse_stream,
    bedrock_invoke_stream,
    cohere_v2_chat,
    google_generative_ai,
    mistral_chat,
    ollama,
    openai_completions,
    openai_responses,
    openai_responses_websocket,
    vertex_anthropic,
    vertex_gemini,
)
from stream_harness.providers.base import Normalizer, SSENormalizer
from stream_harness.providers.registry import UnknownProtocolError, get_normalizer
from stream_harness.providers.registry import protocol_ids as protocols

__all__ = [
    "Normalizer",
    "SSENormalizer",
    "UnknownProtocolError",
    "get_normalizer",
    "protocols",
]
