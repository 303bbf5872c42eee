"""Azure OpenAI Chat Completions -> unified events: the Chat Completions translator plus
what Azure's content filtering adds to the wire.

Azure's stream IS Chat Completions (the same ``data: {chat.completion.chunk}`` events and
``[DONE]``), so this is a subclass of the openai-completions translator, not a copy. What
Azure adds (specs/protocols/azure-openai-completions.md has the sources):

- a first chunk with ``id: ""``, ``object: ""``, ``model: ""``, ``choices: []`` and
  ``prompt_filter_results`` (``prompt_annotations`` in older API versions): the filter's
  verdict on the prompt;
- ``content_filter_results`` (singular ``content_filter_result`` in 2023 previews) on the
  choices of content chunks;
- with the asynchronous filter, annotation chunks whose choice has no ``delta`` at all,
  only ``content_filter_results`` / ``content_filter_offsets`` / ``content_filter_raw``,
  including after the finish chunk and before ``[DONE]``; and a blocked completion ends
  with ``finish_reason: "content_filter"`` on such a chunk.

The contract has no field for filter verdicts, so they are kept as provider blocks
(``azure.prompt_filter_results``, ``azure.content_filter_results``), placed where they
arrived. A verdict identical to the one kept just before it for the same choice is not
kept again: in the default (buffered) mode every content chunk repeats the same "safe"
verdict, and a block per chunk would bury the one that matters. Annotation chunks never
open a content block (they carry no delta) and never end the stream: the end is still
``[DONE]`` (or EOF after a finish reason), as for every Chat Completions server.
"""

from __future__ import annotations

from typing import Any, Final

from stream_harness.providers.coerce import as_int
from stream_harness.providers.openai_completions import OpenAICompletionsNormalizer
from stream_harness.providers.registry import Detect, Protocol, register
from stream_harness.wire.framing import SSE, FrameDecoder

# Azure's hosts for Azure OpenAI: the classic resource host, the Cognitive Services host
# and the Foundry (AI Services) host, each with the same /openai/ paths.
AZURE_HOSTS: Final = (
    r"[^/?#]+\.(?:openai\.azure\.com|cognitiveservices\.azure\.com|services\.ai\.azure\.com)"
)

PROMPT_FILTER: Final = "azure.prompt_filter_results"
CONTENT_FILTER: Final = "azure.content_filter_results"

# Per-choice filter fields, the current names first; the singular one is the 2023
# preview spelling (Azure/azure-sdk-for-net#38214 shows it on the wire).
_CHOICE_FILTER_FIELDS: Final = (
    "content_filter_results",
    "content_filter_result",
    "content_filter_offsets",
    "content_filter_raw",
)


class AzureOpenAICompletionsNormalizer(OpenAICompletionsNormalizer):
    """Chat Completions with Azure's filter verdicts kept as provider blocks."""

    protocol = "azure-openai-completions"

    def __init__(self, frames: FrameDecoder | None = None) -> None:
        super().__init__(frames)
        # The last verdict kept per choice index, to keep each distinct one once in a row.
        self._last_verdict: dict[int, dict[str, Any]] = {}

    def _chunk(self, chunk: dict[str, Any]) -> None:
        prompt = chunk.get("prompt_filter_results")
        if prompt is None:
            prompt = chunk.get("prompt_annotations")  # the 2023-06/08 preview spelling
        if isinstance(prompt, list) and prompt:
            # Before the chunk's choices, so that the prompt's verdict precedes any text.
            self.acc.provider_block(PROMPT_FILTER, {"prompt_filter_results": prompt})
        super()._chunk(chunk)

    def _choice(self, choice: dict[str, Any]) -> None:
        super()._choice(choice)
        # After the choice's own text: a verdict is about the text it came with (default
        # mode) or before it (annotations), so it is placed after that text's block.
        verdict = {k: choice[k] for k in _CHOICE_FILTER_FIELDS if choice.get(k)}
        if verdict:
            index = as_int(choice.get("index")) or 0
            if self._last_verdict.get(index) != verdict:
                self._last_verdict[index] = verdict
                self.acc.provider_block(CONTENT_FILTER, {"choice_index": index, **verdict})


Normalizer = AzureOpenAICompletionsNormalizer

PROTOCOL = register(
    Protocol(
        id="azure-openai-completions",
        title="Azure OpenAI Chat Completions",
        framing=SSE,
        translator=AzureOpenAICompletionsNormalizer,
        detect=Detect(
            url=(
                # The deployment form works behind any gateway (API Management keeps it).
                r"/openai/deployments/[^/?#]+/chat/completions(?:$|[?#/])",
                rf"^https?://{AZURE_HOSTS}/openai/v1/chat/completions(?:$|[?#/])",
            ),
            # Filter verdicts are Azure's alone among Chat Completions servers.
            body=(rb"\"(?:prompt_filter_results|prompt_annotations|content_filter_results)\"\s*:",),
        ),
        stop_reasons="azure-openai-completions",
        order=15,  # before openai-completions (20), whose URL and body rules also match
    )
)
