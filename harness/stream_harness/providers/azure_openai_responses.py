"""Azure OpenAI Responses -> unified events: the Responses translator plus Azure's filter
verdicts.

Azure serves the Responses API with OpenAI's event stream (``response.*`` events, the same
items and statuses; Azure's "Responses API" how-to streams it with the plain OpenAI
client), so this is the openai-responses translator, subclassed. What Azure adds is its
content filter: a blocked prompt is an HTTP 400 whose error carries ``content_filters``
(a list of ``{blocked, source_type, content_filter_results}``, where Chat Completions had
``innererror.content_filter_result``), and a filtered output ends the response as
``incomplete`` with ``incomplete_details.reason: "content_filter"``, which the shared
stop-reason table already maps. When an ``error`` event, a terminal response's ``error``
or the response object itself carries ``content_filters``, the verdicts are kept as an
``azure.content_filters`` provider block before the stream ends, since the contract's
error has no field for them. Sources: specs/protocols/azure-openai-responses.md.
"""

from __future__ import annotations

from typing import Any, Final

from stream_harness.providers.azure_openai_completions import AZURE_HOSTS
from stream_harness.providers.coerce import as_dict
from stream_harness.providers.openai_responses import OpenAIResponsesNormalizer
from stream_harness.providers.registry import Detect, Protocol, register
from stream_harness.wire.framing import SSE

CONTENT_FILTERS: Final = "azure.content_filters"


class AzureOpenAIResponsesNormalizer(OpenAIResponsesNormalizer):
    """Responses with Azure's ``content_filters`` verdicts kept as a provider block."""

    protocol = "azure-openai-responses"

    def _keep_filters(self, *holders: dict[str, Any]) -> None:
        for holder in holders:
            filters = holder.get("content_filters")
            if isinstance(filters, list) and filters:
                self.acc.provider_block(CONTENT_FILTERS, {"content_filters": filters})
                return

    def _error_event(self, etype: str, payload: dict[str, Any]) -> None:
        self._keep_filters(as_dict(payload.get("error")), payload)
        super()._error_event(etype, payload)

    def _terminal(self, etype: str, payload: dict[str, Any]) -> None:
        response = as_dict(payload.get("response"))
        self._keep_filters(as_dict(response.get("error")), response)
        super()._terminal(etype, payload)


Normalizer = AzureOpenAIResponsesNormalizer

PROTOCOL = register(
    Protocol(
        id="azure-openai-responses",
        title="Azure OpenAI Responses",
        framing=SSE,
        translator=AzureOpenAIResponsesNormalizer,
        detect=Detect(
            url=(
                # The preview form (?api-version=...) works behind any gateway.
                r"/openai/responses(?:$|[?#/])",
                rf"^https?://{AZURE_HOSTS}/openai/v1/responses(?:$|[?#/])",
            ),
        ),
        stop_reasons="openai-responses",  # the same statuses (Azure's Responses reference)
        order=25,  # before openai-responses (30), whose URL rule also matches
    )
)
