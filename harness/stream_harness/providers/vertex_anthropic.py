"""Claude on Vertex AI (``publishers/anthropic/models/{model}:streamRawPredict``) -> unified events.

Vertex passes the Anthropic Messages request through (the model in the URL, and
``anthropic_version: vertex-2023-10-16`` in the body) and streams back the Anthropic
Messages SSE events unchanged: ``message_start`` ... ``message_stop``, ``ping``, and
``event: error`` after the 200 (https://docs.anthropic.com/en/api/claude-on-vertex-ai;
https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/use-claude).
So the translator IS the Anthropic one over the same SSE framing; only the registration
differs. What is Vertex's own is outside the stream: the URL, message and tool ids
prefixed ``msg_vrtx_`` / ``toolu_vrtx_``, and HTTP errors from Google's front end
(``[{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", ...}}]`` or the plain object)
next to Anthropic-shaped ones from the model; both bodies are read by stream_harness.errors, and
their classification rows are in specs/overflow.yaml and specs/retry.yaml. The page is
specs/protocols/vertex-anthropic.md.
"""

from __future__ import annotations

from stream_harness.providers.anthropic_messages import AnthropicMessagesNormalizer
from stream_harness.providers.registry import Detect, Protocol, register
from stream_harness.wire.framing import SSE


class VertexAnthropicNormalizer(AnthropicMessagesNormalizer):
    """The Anthropic Messages translator, registered for the Vertex endpoints."""

    protocol = "vertex-anthropic"


Normalizer = VertexAnthropicNormalizer

__all__ = ["Normalizer", "VertexAnthropicNormalizer"]

PROTOCOL = register(
    Protocol(
        id="vertex-anthropic",
        title="Claude on Vertex AI (streamRawPredict)",
        framing=SSE,
        translator=VertexAnthropicNormalizer,
        detect=Detect(
            # Only the anthropic publisher: other Model Garden publishers (mistralai, ...)
            # answer :streamRawPredict in their own formats.
            url=(r"/publishers/anthropic/models/[^/?#:]+:(?:stream)?[rR]awPredict",),
            # Vertex's message ids: "msg_vrtx_..." in message_start.
            body=(rb'"id"\s*:\s*"msg_vrtx_',),
        ),
        stop_reasons="anthropic-messages",
        order=9,
    )
)
