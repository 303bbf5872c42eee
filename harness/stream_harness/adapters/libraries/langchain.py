"""LangChain chat models as conformance subjects: ``.stream()`` and the chunks added together.

What LangChain users get: ``model.stream(...)`` yields ``AIMessageChunk``s, and ``+``
merges them into one (langchain-core's ``merge_lists``/``merge_dicts``, where the known
merging bugs live: ecosystem.md section 6, bugs 3 and 15). The adapter reads the merged
chunk through LangChain's own standard views: ``content_blocks`` (text, reasoning and tool
calls in order), ``tool_calls`` / ``invalid_tool_calls`` (the parsed arguments),
``usage_metadata`` and ``response_metadata``. Models: ``ChatOpenAI`` (Chat Completions,
and the Responses API with ``use_responses_api=True``), ``ChatAnthropic`` (which has no
``http_client`` parameter, so its cached SDK client is replaced, as the research note's
recipe does) and ``ChatGoogleGenerativeAI`` (``client_args={"transport": ...}``). Issue 15's
protocols: ``AzureChatOpenAI`` (langchain-openai, Chat and Responses, on the SDK's
``AzureOpenAI`` client) and ``ChatMistralAI`` (langchain-mistralai, which reads the SSE body
itself with httpx-sse over its own ``httpx.Client``, the one handed in here). Vertex AI:
Gemini through ``ChatGoogleGenerativeAI(vertexai=True, ...)`` (the route LangChain's docs
give since langchain-google-genai 4.0, ``ChatVertexAI`` being deprecated; it asks for
``alt=sse``), Claude through ``ChatAnthropicVertex`` (langchain-google-vertexai, with an
``access_token`` and an ``http_client``).
``ChatBedrock`` (langchain-aws; InvokeModelWithResponseStream,
not ``ChatBedrockConverse``) is handed a boto3 ``bedrock-runtime`` client whose
``before-send`` hook answers with the recorded bytes (as harness/stream_harness/adapters/sdks/bedrock_sdk.py),
and the model id of the body's family, from which it picks its request and chunk parsing;
it reads Anthropic Messages, Titan, Llama and Mistral, not Nova (it switches to Converse),
Cohere (it refuses: no chat prompt for that provider) nor Claude Text Completions (it
always sends Messages to Claude). ``ChatCohere`` (langchain-cohere, which pins cohere 5.x)
streams Cohere's v2 API (``client.v2.chat_stream``) through a cohere client on the
replaying ``httpx.Client``. Conventions: ``specs/adapter_conventions.yaml``, section
``langchain``.
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Mapping
from typing import Any, Final

from stream_harness.adapters.conventions import Collected, LibraryUsage
from stream_harness.adapters.in_process import Replay
from stream_harness.adapters.libraries.litellm import BEDROCK_MODELS, bedrock_family
from stream_harness.adapters.library import BASE_URL, Driven, LibraryAdapter, as_int, dump
from stream_harness.adapters.sdk_support import tool_arguments
from stream_harness.adapters.sdks.bedrock_sdk import eventstream_response, runtime_client
from stream_harness.adapters.sdks.google_genai import uses_httpx2
from stream_harness.adapters.services import (
    AZURE_API_VERSION,
    AZURE_CHAT,
    AZURE_ENDPOINT,
    AZURE_RESPONSES,
    BEDROCK_INVOKE,
    COHERE,
    MISTRAL,
    VERTEX_ANTHROPIC,
    VERTEX_GEMINI,
    VERTEX_PROJECT,
)
from stream_harness.contract.events import (
    ContentBlock,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)

# Issue 15, Vertex AI: Gemini through ChatGoogleGenerativeAI(vertexai=True), Claude through
# ChatAnthropicVertex (langchain-google-vertexai).
VERTEX: Final = frozenset({VERTEX_ANTHROPIC, VERTEX_GEMINI})
GEMINI: Final = frozenset({"google-generative-ai", VERTEX_GEMINI})
ANTHROPIC: Final = frozenset({"anthropic-messages", VERTEX_ANTHROPIC})
OPENAI: Final = frozenset({"openai-completions", "openai-responses", AZURE_CHAT, AZURE_RESPONSES})
RESPONSES: Final = frozenset({"openai-responses", AZURE_RESPONSES})
# ChatBedrock (langchain-aws, InvokeModelWithResponseStream) and ChatCohere (langchain-cohere).
AWS_COHERE: Final = frozenset({BEDROCK_INVOKE, COHERE})
PROTOCOLS: Final = frozenset(
    {"anthropic-messages", "google-generative-ai", MISTRAL, *OPENAI, *VERTEX, *AWS_COHERE}
)
# The modules each protocol's chat model is built from (imported in _model on first use):
# LibraryAdapter.prepare imports them before the first run is timed. The Vertex AI Claude
# model's package imports google-cloud-aiplatform (3,200 modules: 5 s, and 30 s compiled from
# source on a loaded machine, which made its first run in each worker a timeout).
_OPENAI_MODULES: Final = ("httpx2", "langchain_openai")
_GEMINI_MODULES: Final = ("google.genai", "langchain_google_genai")
PROTOCOL_MODULES: Final[Mapping[str, tuple[str, ...]]] = {
    **dict.fromkeys(OPENAI, _OPENAI_MODULES),
    "anthropic-messages": ("anthropic", "httpx2", "langchain_anthropic"),
    "google-generative-ai": _GEMINI_MODULES,
    VERTEX_GEMINI: (*_GEMINI_MODULES, "google.oauth2.credentials"),
    VERTEX_ANTHROPIC: ("httpx2", "langchain_google_vertexai.model_garden"),
    MISTRAL: ("httpx", "langchain_mistralai"),
    COHERE: ("httpx", "cohere", "langchain_cohere"),
    BEDROCK_INVOKE: ("boto3", "botocore.awsrequest", "botocore.config", "langchain_aws"),
}
# What ChatCohere is asked for (the request is not checked; the body is the cassette's).
COHERE_MODEL: Final = "command-a-03-2025"
# response_metadata keys holding the raw stop value, per protocol (first present wins).
_STOP_KEYS: Final = {
    "openai-completions": ("finish_reason",),
    AZURE_CHAT: ("finish_reason",),
    MISTRAL: ("finish_reason",),
    "openai-responses": ("incomplete_details", "status"),
    AZURE_RESPONSES: ("incomplete_details", "status"),
    "anthropic-messages": ("stop_reason",),
    "google-generative-ai": ("finish_reason", "block_reason"),
    VERTEX_ANTHROPIC: ("stop_reason",),
    VERTEX_GEMINI: ("finish_reason", "block_reason"),
    # ChatBedrock: the Messages API's message_delta stop_reason, else the family's own
    # field, which it passes on in response_metadata (Titan's completionReason, Llama's
    # stop_reason; Mistral's is inside the dropped `outputs`).
    BEDROCK_INVOKE: ("stop_reason", "completionReason"),
    COHERE: ("finish_reason",),
}


class LangChainAdapter(LibraryAdapter):
    """``ChatOpenAI`` / ``ChatAnthropic`` / ``ChatGoogleGenerativeAI`` (and their Azure, Mistral
    and Vertex AI kin) ``.stream()``, merged with ``+``."""

    name = "langchain"
    distribution = "langchain-core"
    modules = ("langchain_core",)
    protocols = PROTOCOLS
    protocol_modules = PROTOCOL_MODULES

    def version(self) -> str:
        import importlib.metadata as md

        parts = [f"langchain-core {md.version('langchain-core')}"]
        for dist in (
            "langchain-openai",
            "langchain-anthropic",
            "langchain-google-genai",
            "langchain-mistralai",
            "langchain-google-vertexai",
            "langchain-aws",
            "langchain-cohere",
        ):
            try:
                parts.append(f"{dist} {md.version(dist)}")
            except md.PackageNotFoundError:
                continue
        return ", ".join(parts)

    def _model(self, protocol: str, replay: Replay) -> Any:
        if protocol in VERTEX:
            return self._vertex_model(protocol, replay)
        if protocol in AWS_COHERE:
            return self._aws_cohere_model(protocol, replay)
        if protocol in (AZURE_CHAT, AZURE_RESPONSES):
            import httpx2

            azure_chat = importlib.import_module("langchain_openai").AzureChatOpenAI
            azure_transport = self.transport(httpx2, replay)
            # Built once: AzureChatOpenAI also builds an async SDK client on a default
            # httpx client, whose SSL context costs 20 ms of a 24 ms run (measured).
            return self.once(
                protocol,
                lambda: azure_chat(
                    azure_deployment="gpt-harness",
                    api_key="test",
                    api_version=AZURE_API_VERSION,
                    azure_endpoint=AZURE_ENDPOINT,
                    max_retries=0,
                    http_client=httpx2.Client(transport=azure_transport),
                    stream_usage=True,
                    use_responses_api=protocol == AZURE_RESPONSES,
                ),
            )
        if protocol == MISTRAL:
            import httpx

            chat_mistral = importlib.import_module("langchain_mistralai").ChatMistralAI
            # Its own httpx client posts to "/chat/completions" relative to base_url;
            # tenacity's one attempt (max_retries=1) is no retry.
            return chat_mistral(
                model="mistral-harness",
                api_key="test",
                max_retries=1,
                client=httpx.Client(
                    base_url=f"{BASE_URL}/v1",
                    transport=self.transport(httpx, replay),
                ),
            )
        if protocol in ("openai-completions", "openai-responses"):
            import httpx2

            chat_openai = importlib.import_module("langchain_openai").ChatOpenAI

            transport = self.transport(httpx2, replay)
            return chat_openai(
                model="gpt-harness",
                api_key="sk-test",
                base_url=f"{BASE_URL}/v1",
                max_retries=0,
                http_client=httpx2.Client(transport=transport),
                stream_usage=True,
                use_responses_api=protocol == "openai-responses",
            )
        if protocol == "anthropic-messages":
            import anthropic
            import httpx2

            chat_anthropic = importlib.import_module("langchain_anthropic").ChatAnthropic

            model = chat_anthropic(model="claude-harness", api_key="test", max_retries=0)
            model.__dict__["_client"] = anthropic.Anthropic(
                api_key="test",
                base_url=BASE_URL,
                max_retries=0,
                http_client=httpx2.Client(transport=self.transport(httpx2, replay)),
            )
            return model
        return self._gemini_model(protocol, replay, google_api_key="test")

    def _gemini_model(self, protocol: str, replay: Replay, **auth: Any) -> Any:
        """``ChatGoogleGenerativeAI`` on the replay transport, with the service's ``auth``.

        Built once per protocol: its genai Client loads two SSL contexts (50 ms, ten times
        a run).
        """
        genai = importlib.import_module("google.genai")  # untyped; Any on purpose
        chat_google = importlib.import_module("langchain_google_genai").ChatGoogleGenerativeAI
        http: Any = __import__("httpx2" if uses_httpx2(genai) else "httpx")
        transport = self.transport(http, replay)
        return self.once(
            protocol,
            lambda: chat_google(
                model="gemini-harness", **auth, max_retries=0, client_args={"transport": transport}
            ),
        )

    def _vertex_model(self, protocol: str, replay: Replay) -> Any:
        """Vertex AI as LangChain's docs set it up: both built once per protocol.

        Gemini: ``ChatGoogleGenerativeAI(vertexai=True, project=..., location=...,
        credentials=...)``, the route the docs recommend since langchain-google-genai 4.0
        (``ChatVertexAI`` is deprecated); its google-genai client asks for ``alt=sse``.
        Claude: ``ChatAnthropicVertex``, which takes an ``access_token`` and an
        ``http_client`` for its ``AnthropicVertex`` client. Both credentials are a token
        that never expires, so google-auth neither looks for credentials nor refreshes.
        """
        if protocol == VERTEX_ANTHROPIC:
            import httpx2

            chat_vertex = importlib.import_module(
                "langchain_google_vertexai.model_garden"
            ).ChatAnthropicVertex
            transport = self.transport(httpx2, replay)
            # Its tenacity decorator makes max_retries attempts: one is no retry.
            return self.once(
                protocol,
                lambda: chat_vertex(
                    model_name="claude-harness",
                    project=VERTEX_PROJECT,
                    location="us-east5",
                    access_token="test",
                    max_retries=1,
                    http_client=httpx2.Client(transport=transport),
                ),
            )
        credentials = importlib.import_module("google.oauth2.credentials")
        return self._gemini_model(
            protocol,
            replay,
            vertexai=True,
            project=VERTEX_PROJECT,
            location="us-central1",
            credentials=credentials.Credentials(token="test"),
        )

    # -- ChatBedrock (InvokeModel) and ChatCohere --------------------------------------

    def _aws_cohere_model(self, protocol: str, replay: Replay) -> Any:
        if protocol == COHERE:
            import httpx

            cohere = importlib.import_module("cohere")
            chat_cohere = importlib.import_module("langchain_cohere").ChatCohere
            transport = self.transport(httpx, replay)

            def cohere_model() -> Any:
                # ChatCohere takes no client or http_client: it builds a cohere.Client
                # itself, which is replaced by one on the replaying httpx client (as
                # ChatAnthropic's). Its stream goes through client.v2.chat_stream, which
                # never retries (the SDK retries only non-streaming requests).
                model = chat_cohere(model=COHERE_MODEL, cohere_api_key="test")
                model.client = cohere.Client(
                    api_key="test",
                    base_url=BASE_URL,
                    httpx_client=httpx.Client(transport=transport),
                )
                return model

            return self.once(protocol, cohere_model)

        self.__dict__["_bedrock_response"] = eventstream_response(replay)
        client = self.once(BEDROCK_INVOKE, self._bedrock_client)
        chat_bedrock = importlib.import_module("langchain_aws").ChatBedrock
        # The model id decides how ChatBedrock builds the request and reads the chunks
        # (its provider prefix); the adapter is not given the URL, so the family of the
        # body's first chunk names it (harness/stream_harness/adapters/libraries/litellm.py, bedrock_family).
        # bedrock_client: ChatBedrock would build a control-plane client it only uses
        # for application inference profiles.
        model_id = BEDROCK_MODELS[bedrock_family(replay.chunks)]
        return self.once(
            (BEDROCK_INVOKE, model_id),
            lambda: chat_bedrock(
                model_id=model_id, client=client, bedrock_client=client, region_name="us-east-1"
            ),
        )

    def _bedrock_client(self) -> Any:
        """boto3's bedrock-runtime client (:func:`~stream_harness.adapters.sdks.bedrock_sdk.runtime_client`)
        answering every operation: ChatBedrock calls ConverseStream, not InvokeModel, for Nova.
        """
        # ChatBedrock logs every service error with its traceback (logger.exception)
        # before raising it again: the raise is what is compared, the log only noise.
        logging.getLogger("langchain_aws").setLevel(logging.CRITICAL)
        return runtime_client(
            importlib.import_module("boto3"),
            importlib.import_module("botocore.awsrequest"),
            importlib.import_module("botocore.config"),
            lambda: self.__dict__["_bedrock_response"],
            "before-send.bedrock-runtime",
        )

    def drive(self, protocol: str, replay: Replay) -> Driven:
        model = self._model(protocol, replay)
        merged: Any = None
        count = 0
        try:
            for chunk in model.stream("hi"):
                merged = chunk if merged is None else merged + chunk
                count += 1
        except Exception as exc:
            # ChatOpenAI raises ValueError(str(response.error)) on `response.failed` (its
            # only raise that renders a ResponseError): the raise is how it reports the
            # raw status "failed" (specs/adapter_conventions.yaml).
            failed = protocol in RESPONSES and str(exc).startswith("ResponseError(")
            return Driven(
                raised=exc,
                partial=merged,
                raw={"chunks": count},
                raised_stop="failed" if failed else None,
                override_stop=failed,
            )
        return Driven(value=merged, raw={"message": dump(merged), "chunks": count})

    def collect(self, protocol: str, value: Any) -> Collected:
        if value is None:
            return Collected()
        extra = getattr(value, "additional_kwargs", None) or {}
        content, provider, refusal = _content_blocks(protocol, value, extra)
        legacy = _legacy_function_call(extra, content)
        if legacy is not None:
            content.append(legacy)
        meta = value.response_metadata or {}
        stop, error = _stop_and_error(protocol, meta)
        return Collected(
            content=content,
            stop=stop,
            usage=_usage(getattr(value, "usage_metadata", None)),
            # ChatBedrock's model_name is the model id it was given, not the wire's.
            model=None if protocol == BEDROCK_INVOKE else _model_name(meta),
            response_id=_wire_id(getattr(value, "id", None)),
            provider_blocks=provider,
            error=error,
            # Gemini's finishMessage (why a candidate was stopped), once the library keeps
            # it (langchain-google#1991 asks for it; ChatVertexAI had it).
            stop_details=_text(meta.get("finish_message")) if protocol in GEMINI else None,
            # ChatAnthropic keeps a refusal's stop_details in response_metadata: its
            # explanation is the provider's message for the refused turn.
            refusal=_refusal_explanation(meta) if protocol in ANTHROPIC else refusal,
        )


def _content_blocks(
    protocol: str, value: Any, extra: Mapping[str, Any]
) -> tuple[list[ContentBlock], list[ProviderBlock], str | None]:
    """The message's ``content_blocks`` in the contract's terms: content, the provider
    blocks, and the refusal text if a Responses refusal part was among them."""
    content: list[ContentBlock] = []
    provider: list[ProviderBlock] = []
    parsed = {c.get("id"): c for c in getattr(value, "tool_calls", None) or []}
    invalid = {c.get("id"): c for c in getattr(value, "invalid_tool_calls", None) or []}
    # langchain-google-genai keeps each function call's thoughtSignature by call id.
    signatures = extra.get(GEMINI_SIGNATURES) or {}
    refusal: str | None = None
    for block in value.content_blocks:
        kind = block.get("type")
        custom = _custom_tool_call(block)
        if custom is not None:
            content.append(_custom_call(custom, parsed))
            continue
        refused = _refusal_block(block)
        if refused is not None:
            # A Responses refusal part, which content_blocks leaves non_standard: the
            # refusal is content, as the reference keeps it (and ends the turn in error).
            content.append(TextBlock(content=refused))
            refusal = refused
            continue
        if kind == "text":
            if block.get("text"):
                content.append(TextBlock(content=block["text"]))
        elif kind == "reasoning":
            signature = (block.get("extras") or {}).get("signature")
            text = block.get("reasoning")
            if text is None and protocol == COHERE:
                text = _summary_text(block)
            content.append(ThinkingBlock(content=text or "", signature=signature))
        elif kind in ("tool_call", "tool_call_chunk", "invalid_tool_call"):
            content.append(_call_block(protocol, block, parsed, invalid, signatures))
        else:
            data = dict(block)
            if protocol in GEMINI and _made_up(data.get("id")):
                # langchain-google-genai names a code-execution block with a fresh
                # uuid4 (the wire's executableCode has no id): not the provider's.
                del data["id"]
            provider.append(
                ProviderBlock(provider_type=str(kind), position=len(content), data=data)
            )
    return content, provider, refusal


def _call_block(
    protocol: str,
    block: Mapping[str, Any],
    parsed: Mapping[Any, Any],
    invalid: Mapping[Any, Any],
    signatures: Any,
) -> ToolCall:
    """A tool call block; its arguments from the invalid call where only that one has them."""
    call_id = block.get("id") or ""
    args: Any = block.get("args")
    if call_id in invalid and call_id not in parsed:
        args = tool_arguments(invalid[call_id].get("args"))
    elif not isinstance(args, dict):
        args = tool_arguments(args)
    if protocol == COHERE and _made_up(call_id):
        # langchain-cohere names each streamed call fragment with a fresh
        # uuid4 (the wire's id is not passed on): not the provider's.
        call_id = ""
    signature = signatures.get(call_id) if isinstance(signatures, Mapping) else None
    return ToolCall(
        id=call_id,
        name=block.get("name") or "",
        arguments=args,
        signature=signature if isinstance(signature, str) and signature else None,
    )


def _legacy_function_call(extra: Mapping[str, Any], content: list[ContentBlock]) -> ToolCall | None:
    """The deprecated single function_call (Azure's GA versions still stream it for a
    request with `functions`): ChatOpenAI merges it into additional_kwargs only."""
    legacy = extra.get("function_call")
    if (
        isinstance(legacy, Mapping)
        and legacy.get("name")
        and not any(isinstance(b, ToolCall) for b in content)
    ):
        return ToolCall(
            id="",
            name=str(legacy["name"]),
            arguments=tool_arguments(legacy.get("arguments")),
        )
    return None


def _stop_and_error(protocol: str, meta: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The raw stop reason in ``response_metadata`` (under the protocol's key), and the
    error of a blocked prompt."""
    stop = None
    error = None
    blocked = _block_reason(meta) if protocol in GEMINI else None
    if blocked is not None:
        # A blocked prompt: no candidate, no finishReason; ChatGoogleGenerativeAI keeps
        # promptFeedback in response_metadata. The raw value is the block reason, and
        # the error says so as the contract words it.
        stop, detail = blocked
        error = f"prompt blocked: {stop}" + (f": {detail}" if detail else "")
    for key in () if blocked else _STOP_KEYS[protocol]:
        found = meta.get(key)
        if isinstance(found, Mapping):
            found = found.get("reason")
        if found:
            stop = str(getattr(found, "value", found))
            break
    return stop, error


GEMINI_SIGNATURES: Final = "__gemini_function_call_thought_signatures__"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


_UUID4_ANY: Final = re.compile(
    r"^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
)


def _model_name(meta: Mapping[str, Any]) -> Any:
    return meta.get("model_name") or meta.get("model")


def _summary_text(block: Mapping[str, Any]) -> str:
    """ChatCohere's reasoning block keeps its text as summary parts (``{"type": "reasoning",
    "summary": [{"text": ...}]}``, merged by index), not in the standard ``reasoning`` key,
    and content_blocks passes it on as it is."""
    parts = block.get("summary")
    if not isinstance(parts, list):
        return ""
    return "".join(
        p["text"] for p in parts if isinstance(p, Mapping) and isinstance(p.get("text"), str)
    )


def _made_up(value: Any) -> bool:
    """A uuid4, with or without dashes: an id a library made up, not the provider's."""
    return isinstance(value, str) and bool(_UUID4_ANY.match(value))


def _refusal_explanation(meta: Mapping[str, Any]) -> str | None:
    details = meta.get("stop_details")
    text = details.get("explanation") if isinstance(details, Mapping) else None
    return text if isinstance(text, str) and text else None


def _block_reason(meta: Mapping[str, Any]) -> tuple[str, str | None] | None:
    feedback = meta.get("prompt_feedback")
    if not isinstance(feedback, Mapping) or not feedback.get("block_reason"):
        return None
    reason = feedback["block_reason"]
    detail = feedback.get("block_reason_message")
    return str(getattr(reason, "value", reason)), detail if isinstance(detail, str) else None


def _refusal_block(block: Mapping[str, Any]) -> str | None:
    value = block.get("value") if block.get("type") == "non_standard" else None
    if isinstance(value, Mapping) and value.get("type") == "refusal":
        text = value.get("refusal")
        return text if isinstance(text, str) and text else None
    return None


def _custom_tool_call(block: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A Responses custom tool call, which content_blocks leaves as a non_standard block."""
    value = block.get("value") if block.get("type") == "non_standard" else None
    if isinstance(value, Mapping) and value.get("type") == "custom_tool_call":
        return value
    return None


def _custom_call(value: Mapping[str, Any], parsed: Mapping[Any, Any]) -> ToolCall:
    """The custom call as ``tool_calls`` lists it: its free-form input under ``__arg1``
    (LangChain's name for a tool's single string input), the contract's ``input``."""
    call_id = str(value.get("call_id") or "")
    listed = parsed.get(call_id) or {}
    args = listed.get("args") if isinstance(listed, Mapping) else None
    text = args.get("__arg1") if isinstance(args, Mapping) else None
    return ToolCall(
        id=call_id,
        name=str(value.get("name") or ""),
        arguments={"input": text if isinstance(text, str) else str(value.get("input") or "")},
    )


def _wire_id(message_id: Any) -> str | None:
    # LangChain names a streamed message after its run ("lc_run--<uuid>", earlier
    # "run-<uuid>") unless the provider's id reached it (Responses): a fresh id on every
    # call, not the response's, so it is not reported as one.
    if not isinstance(message_id, str) or message_id.startswith(("lc_run-", "run-")):
        return None
    return message_id


def _usage(usage: Any) -> LibraryUsage | None:
    if not usage:
        return None
    details = usage.get("input_token_details") or {}
    return LibraryUsage(
        input=as_int(usage.get("input_tokens")),
        output=as_int(usage.get("output_tokens")),
        cache_read=as_int(details.get("cache_read")),
        cache_write=as_int(details.get("cache_creation")),
        total=as_int(usage.get("total_tokens"))
        if isinstance(usage.get("total_tokens"), int)
        else None,
    )
