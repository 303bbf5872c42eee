"""Mistral's native chat stream (``/v1/chat/completions``, ``/v1/fim/completions``,
``/v1/agents/completions``) -> unified events.

Mistral's stream IS the Chat Completions chunk stream (``data: {chat.completion.chunk}``
SSE events ending in ``data: [DONE]``, the mistralai SDK's ``CompletionEvent``), so this
module registers the OpenAI chat translator again rather than writing a second one: what
is shared is read by the same code. What differs, and where it lives
(specs/protocols/mistral-chat.md has the whole mapping with sources):

- ``content`` as a list of typed chunks (``text``, ``thinking`` with a nested list of text
  chunks and an optional ``signature``, ``reference``), tool-call ids given as the literal
  string ``"null"``, arguments given as an object, calls without ``index``: handled in the
  OpenAI translator, because Mistral's bytes reach openai-completions too (an OpenAI client
  pointed at Mistral through a gateway URL, a body without a URL), and the same bytes must
  give the same events whichever protocol detection picked.
- the stop vocabulary (``model_length`` = the context window, ``error``) and the overflow
  and rate-limit bodies: the ``mistral-chat`` rows of specs/stop_reasons.yaml,
  specs/overflow.yaml and specs/retry.yaml.
- one rule that would be wrong for OpenAI-compatible servers, so it is here only: a
  tool-call fragment without ``index`` and without an id that names a function starts a
  new call. Mistral names a function once per call (continuations carry ``name: ""``,
  mistral-vibe's recorded streams), so two such fragments are two calls, where the OpenAI
  translator must treat a repeated name as the same call (servers that repeat the name on
  every delta, ecosystem.md bug 7).
"""

from __future__ import annotations

from stream_harness.providers.openai_completions import OpenAICompletionsNormalizer, _Call
from stream_harness.providers.registry import Detect, Protocol, register
from stream_harness.wire.framing import SSE


class MistralChatNormalizer(OpenAICompletionsNormalizer):
    """Mistral chat / FIM / agents completion chunks: the OpenAI chat translator, Mistral's tables."""

    protocol = "mistral-chat"

    def _resolve(self, index: int | None, call_id: str | None, name: str | None) -> _Call:
        if index is None and call_id is None and name is not None:
            # A named fragment without index or id (id "null" reads as none): Mistral
            # sends the name only on a call's first fragment, so this is a new call.
            return self._new_call(index)
        return super()._resolve(index, call_id, name)


Normalizer = MistralChatNormalizer

PROTOCOL = register(
    Protocol(
        id="mistral-chat",
        title="Mistral chat, FIM and agents completions",
        framing=SSE,
        translator=MistralChatNormalizer,
        detect=Detect(
            url=(
                # La Plateforme and Codestral; the SDK appends "#stream" (the corpus URIs).
                r"//(?:api|codestral)\.mistral\.ai(?::\d+)?/v1/(?:chat|fim|agents)/completions(?:$|[?#/])",
                # Paths only Mistral serves, behind any host (a proxy, a private deployment).
                r"/v1/(?:fim|agents)/completions(?:$|[?#/])",
                # Mistral models on Vertex AI: the mistralai SDK's GCP client (same chunks).
                r"/publishers/mistralai/models/[^/:?#]+:streamRawPredict",
            ),
            # Sent on every api.mistral.ai response (the corpus; mistral-vibe reads it).
            headers=(("mistral-correlation-id", r"."),),
            # A magistral thinking chunk: no OpenAI-compatible server sends this shape.
            body=(
                rb"\"content\"\s*:\s*\[\s*\{\s*\"type\"\s*:\s*\"thinking\"\s*,\s*\"thinking\"\s*:",
            ),
        ),
        stop_reasons="mistral-chat",
        # Before openai-completions (20), whose `/chat/completions` rule matches Mistral's
        # URLs too, and whose body rule matches every chunk.
        order=15,
    )
)
