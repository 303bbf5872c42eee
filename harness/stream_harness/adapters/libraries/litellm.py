"""LiteLLM as a conformance subject: ``completion(stream=True)`` then ``stream_chunk_builder``.

What LiteLLM users get: the stream of OpenAI-shaped chunks LiteLLM translates each
provider into, rebuilt into one ``ModelResponse`` by ``litellm.stream_chunk_builder``.
One provider route per wire protocol (``ROUTES``): ``openai/`` and ``azure/`` through an
``openai.OpenAI`` / ``openai.AzureOpenAI`` client (LiteLLM accepts either as ``client=``);
``anthropic/``, ``gemini/``, ``mistral/``, ``bedrock/invoke/`` (the model family read
from the body) and ``vertex_ai/`` through LiteLLM's own HTTP code, given an
``HTTPHandler`` around an ``httpx.Client``; ``cohere_chat/`` and the ``azure/responses/``
bridge, which do not take ``client=``, find the same handler in LiteLLM's client cache.
Every one reads the recorded body from an in-memory transport: no network. The
conventions (its OpenAI stop vocabulary, cache tokens inside ``prompt_tokens``, a
tokenizer estimate when the wire has no usage) are in ``specs/adapter_conventions.yaml``,
section ``litellm``.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

from stream_harness.adapters.conventions import Collected, LibraryUsage
from stream_harness.adapters.in_process import Replay
from stream_harness.adapters.library import BASE_URL, PROMPT, Driven, LibraryAdapter, as_int, dump
from stream_harness.adapters.sdk_support import tool_arguments
from stream_harness.adapters.sdks.openai_sdk import legacy_function_call
from stream_harness.contract.events import ContentBlock, TextBlock, ThinkingBlock, ToolCall
from stream_harness.wire.eventstream import EventStreamDecoder


@dataclass(frozen=True)
class Route:
    """How LiteLLM is asked to speak one wire protocol: its model string and call arguments.

    ``client`` is what LiteLLM is handed as ``client=``: an ``openai.OpenAI`` (its
    ``openai/`` route calls the openai SDK), or LiteLLM's own ``HTTPHandler`` (every
    provider LiteLLM implements over raw HTTP). Either wraps an ``httpx.Client`` whose
    transport serves the recorded body, so LiteLLM's real request and streaming code runs
    and nothing leaves the process. ``kwargs`` are the provider's required arguments
    (placeholder credentials, an ``api_base`` under the harness's base URL).
    """

    model: str
    client: str = "handler"
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    # Whether LiteLLM keeps the wire's response id as its ``id`` (else it makes up a
    # fresh "chatcmpl-<uuid>" per call, not reported as the response's id).
    keeps_id: bool = False
    # Vertex AI: Google credentials answered offline (_offline_vertex_token).
    vertex: bool = False
    # When one protocol carries several model families (Bedrock's InvokeModel), the model
    # string is chosen from the recorded body (the family a user would have asked for).
    pick: Callable[[Sequence[bytes]], str] | None = None


# An Azure OpenAI data-plane version with streamed usage and the Responses API; the
# replayed body does not depend on it, LiteLLM and the openai SDK only put it in the URL.
AZURE_API_VERSION: Final = "2025-04-01-preview"

AZURE: Final = {"api_base": BASE_URL, "api_version": AZURE_API_VERSION}
BEDROCK: Final = {
    "api_base": BASE_URL,
    "aws_access_key_id": "AKIDHARNESSOFFLINE",
    "aws_secret_access_key": "harness-offline-secret",
    "aws_region_name": "us-east-1",
}
VERTEX: Final = {
    "api_base": BASE_URL,
    "vertex_project": "harness-project",
    "vertex_location": "us-east5",
}

# Bedrock InvokeModel model ids by family: what each family's first chunk looks like
# decides which one a user would have called (the model id is in the request URL, which
# the adapter is not given). The ids are those of the bundled cassettes.
BEDROCK_MODELS: Final = {
    "anthropic": "us.anthropic.claude-sonnet-4-20250514-v1:0",
    "claude-text": "anthropic.claude-v2:1",
    "cohere-r": "cohere.command-r-plus-v1:0",
    "cohere": "cohere.command-text-v14",
    "llama": "meta.llama3-1-8b-instruct-v1:0",
    "mistral": "mistral.mistral-7b-instruct-v0:2",
    "nova": "us.amazon.nova-lite-v1:0",
    "titan": "amazon.titan-text-express-v1",
}
# (a key of the first chunk's JSON, family), first match wins.
_BEDROCK_KEYS: Final = (
    ("type", "anthropic"),
    ("completion", "claude-text"),
    ("event_type", "cohere-r"),
    ("generation", "llama"),
    ("outputs", "mistral"),
    ("outputText", "titan"),
    ("completionReason", "titan"),
    ("messageStart", "nova"),
    ("contentBlockDelta", "nova"),
    ("contentBlockStart", "nova"),
    ("is_finished", "cohere"),
    ("generations", "cohere"),
)


def bedrock_family(chunks: Sequence[bytes]) -> str:
    """The model family of an InvokeModelWithResponseStream body, from its first chunk.

    Each ``chunk`` event's payload is ``{"bytes": <base64 of the model's own JSON>}``; the
    families' JSON shapes differ (Anthropic's ``type``, Titan's ``outputText``, Llama's
    ``generation`` ...). A body without a decodable chunk (an HTTP error, an exception
    frame) is read as Anthropic's, the family LiteLLM users call most.
    """
    decoder = EventStreamDecoder()
    for chunk in chunks:
        for message in decoder.feed(chunk):
            payload = getattr(message, "payload", None)
            if not payload:
                continue
            try:
                outer = json.loads(payload)
                inner = json.loads(base64.b64decode(outer["bytes"])) if "bytes" in outer else None
            except (ValueError, TypeError, KeyError):
                continue
            if isinstance(inner, dict):
                return next((fam for key, fam in _BEDROCK_KEYS if key in inner), "anthropic")
    return "anthropic"


def bedrock_model(chunks: Sequence[bytes]) -> str:
    return "bedrock/invoke/" + BEDROCK_MODELS[bedrock_family(chunks)]


ROUTES: Final[Mapping[str, Route]] = {
    "openai-completions": Route("openai/gpt-harness", client="openai", keeps_id=True),
    "anthropic-messages": Route("anthropic/claude-harness"),
    "google-generative-ai": Route("gemini/gemini-harness"),
    # LiteLLM's cohere_chat/ route posts to /v2/chat (CohereModelInfo.get_cohere_route:
    # v2 unless the model says v1/) and reads the stream with CohereV2ModelResponseIterator.
    "cohere-v2-chat": Route(
        "cohere_chat/command-a-03-2025", kwargs={"api_base": f"{BASE_URL}/v2/chat"}
    ),
    # Azure OpenAI: azure/<deployment> through an openai.AzureOpenAI client, and the
    # Responses API through LiteLLM's azure/responses/<deployment> bridge (its Responses
    # stream parser, turned into chat chunks). The deployment is named after a model of
    # LiteLLM's price map, as its docs advise: for an unknown name litellm.responses
    # decides the model cannot stream, sends stream=false and parses one JSON body, so a
    # streamed answer would never reach its stream parser.
    "azure-openai-completions": Route("azure/gpt-4.1", client="azure", kwargs=AZURE, keeps_id=True),
    "azure-openai-responses": Route("azure/responses/gpt-4.1", client="azure", kwargs=AZURE),
    # LiteLLM's mistral/ route: its own HTTP code (MistralConfig over the OpenAI-style
    # stream handler), client= passed on.
    "mistral-chat": Route("mistral/mistral-large-latest", kwargs={"api_base": f"{BASE_URL}/v1"}),
    # bedrock/invoke/<model id>: InvokeModelWithResponseStream, signed with SigV4 by
    # botocore (placeholder keys, offline), the event stream decoded by LiteLLM's
    # AWSEventStreamDecoder and each family's chunk parser.
    "bedrock-invoke-stream": Route(
        "bedrock/invoke/" + BEDROCK_MODELS["anthropic"],
        kwargs=BEDROCK,
        pick=lambda c: bedrock_model(c),
    ),
    # vertex_ai/: Anthropic's rawPredict / streamRawPredict (LiteLLM's partner-model
    # route) and Gemini's streamGenerateContent on aiplatform.
    "vertex-anthropic": Route("vertex_ai/claude-sonnet-4@20250514", kwargs=VERTEX, vertex=True),
    "vertex-gemini": Route("vertex_ai/gemini-2.5-flash", kwargs=VERTEX, vertex=True),
}
MODELS: Final = {protocol: route.model for protocol, route in ROUTES.items()}


class LiteLLMAdapter(LibraryAdapter):
    name = "litellm"
    distribution = "litellm"
    modules = ("litellm", "httpx", "litellm.llms.custom_httpx.http_handler")
    protocols = frozenset(ROUTES)

    def __init__(self) -> None:
        # LiteLLM fetches its model price map from GitHub at import; offline it retries for
        # about 10 s before falling back to the copy it ships. Use the copy at once.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        super().__init__()

    def drive(self, protocol: str, replay: Replay) -> Driven:
        litellm = self.module("litellm")
        httpx = self.module("httpx")
        transport = self.transport(httpx, replay)
        http = httpx.Client(transport=transport)
        route = ROUTES[protocol]
        handler = self.module("litellm.llms.custom_httpx.http_handler").HTTPHandler(client=http)
        client: Any = handler
        if route.client == "openai":
            openai = __import__("openai")
            client = openai.OpenAI(
                api_key="sk-test", base_url=f"{BASE_URL}/v1", max_retries=0, http_client=http
            )
        elif route.client == "azure":
            openai = __import__("openai")
            client = openai.AzureOpenAI(
                api_key="sk-test",
                azure_endpoint=BASE_URL,
                api_version=AZURE_API_VERSION,
                max_retries=0,
                http_client=http,
            )
        received: list[Any] = []
        try:
            arguments: dict[str, Any] = {
                "api_key": "sk-test",
                "max_retries": 0,
                "stream_options": {"include_usage": True},
                **route.kwargs,
            }
            with _cached_client(litellm, handler), _offline_vertex_token(self, route.vertex):
                model = route.pick(replay.chunks) if route.pick is not None else route.model
                stream = litellm.completion(
                    model=model, messages=PROMPT, stream=True, client=client, **arguments
                )
                for chunk in stream:
                    received.append(chunk)
            final = litellm.stream_chunk_builder(received, messages=PROMPT)
        except Exception as exc:
            partial = None
            if received:
                try:
                    partial = litellm.stream_chunk_builder(received, messages=PROMPT)
                except Exception:
                    partial = None
            # stream_chunk_builder fills in what no chunk carried: finish_reason "stop"
            # and a tokenizer estimate. Those are not the library's report of a stream
            # it ended by raising, so they are dropped; a finish reason LiteLLM raised
            # on (OpenRouter's finish_reason "error") is named in the exception's text.
            stop = next((s for s in map(_finish_reason, received) if s), None)
            return Driven(
                raised=exc,
                partial=partial,
                raw={"chunks": len(received)},
                raised_stop=stop or raised_finish_reason(exc),
                override_stop=True,
                drop_usage=not any(map(_carries_usage, received)),
            )
        finally:
            http.close()
        return Driven(value=final, raw={"response": dump(final), "chunks": len(received)})

    def collect(self, protocol: str, value: Any) -> Collected:
        if value is None:
            return Collected()
        choices = list(value.choices or [])
        content: list[ContentBlock] = []
        stop = None
        if choices:
            choice = choices[0]
            stop = choice.finish_reason
            msg = choice.message
            content.extend(_thinking(msg))
            text = msg.content
            if isinstance(text, str) and text:
                content.append(TextBlock(content=text))
            # The legacy `function_call` delta (Azure's older deployments still send it):
            # stream_chunk_builder joins it into message.function_call.
            legacy = legacy_function_call(msg, len(content))
            if legacy is not None:
                content.append(legacy)
            for call in msg.tool_calls or []:
                fn = call.function
                call_id, signature = split_thought_id(call.id or "")
                content.append(
                    ToolCall(
                        id=call_id or f"toolcall_{len(content)}",
                        name=(fn.name if fn else None) or "",
                        arguments=tool_arguments(fn.arguments if fn else None),
                        signature=signature,
                    )
                )
        return Collected(
            content=content,
            stop=stop,
            usage=_usage(getattr(value, "usage", None)),
            model=getattr(value, "model", None),
            # For Anthropic and Gemini, LiteLLM makes up a fresh "chatcmpl-<uuid>" per call
            # (the wire's message id is not kept): not the response's id, and different
            # on every run, so it is not reported as one.
            response_id=getattr(value, "id", None) if ROUTES[protocol].keeps_id else None,
        )


# The keys under which LiteLLM caches the sync HTTPHandler it builds when a provider's
# code path does not take ``client=`` (litellm/llms/custom_httpx/http_handler.py,
# get_httpx_client: "httpx_client" plus its params, here ssl_verify None).
_CLIENT_KEYS: Final = ("httpx_client", "httpx_clientssl_verify_None")


@contextmanager
def _cached_client(litellm: Any, handler: Any) -> Iterator[None]:
    """The replaying handler as LiteLLM's cached HTTP client, for the length of one call.

    Some of LiteLLM's providers (cohere_chat/ among them: main.py _complete_cohere_chat
    does not pass ``client=`` on) take their client from LiteLLM's in-memory client cache
    rather than the argument. Putting the replaying handler there makes those paths read
    the recorded body too (and never the network); the entries are removed afterwards, so
    no later call sees a stale transport.
    """
    cache = litellm.in_memory_llm_clients_cache
    for key in _CLIENT_KEYS:
        cache.set_cache(key, handler)
    try:
        yield
    finally:
        for key in _CLIENT_KEYS:
            cache.delete_cache(key)


VERTEX_TOKEN: Final = "ya29.harness-offline-token"
VERTEX_PROJECT: Final = "harness-project"


@contextmanager
def _offline_vertex_token(adapter: LiteLLMAdapter, active: bool) -> Iterator[None]:
    """LiteLLM's Vertex AI credential lookup answered with a fixed token, for one call.

    Every ``vertex_ai/`` call first gets an OAuth token through google-auth
    (``VertexBase.get_access_token``: load the credentials, refresh them over the
    network); offline there is neither an account nor a token server. The lookup is
    replaced, for the length of the call, by one returning a fixed token and the
    project: what a user's loaded credentials would give. Everything after it (the URL,
    the request, the streaming parser) is LiteLLM's own code.
    """
    if not active:
        yield
        return
    base = importlib.import_module("litellm.llms.vertex_ai.vertex_llm_base").VertexBase
    original = base.__dict__["get_access_token"]

    def get_access_token(self: Any, credentials: Any, project_id: Any, **_: Any) -> Any:
        return VERTEX_TOKEN, project_id or VERTEX_PROJECT

    base.get_access_token = get_access_token
    try:
        yield
    finally:
        base.get_access_token = original


def _finish_reason(chunk: Any) -> str | None:
    choices = getattr(chunk, "choices", None) or []
    value = getattr(choices[0], "finish_reason", None) if choices else None
    return value if isinstance(value, str) and value else None


def _carries_usage(chunk: Any) -> bool:
    """Whether a chunk carried a count (where stream_chunk_builder looks for one)."""
    hidden = getattr(chunk, "_hidden_params", None) or {}
    return bool(
        getattr(chunk, "usage", None) or (isinstance(hidden, Mapping) and hidden.get("usage"))
    )


_RAISED_FINISH: Final = re.compile(r"finish_reason: (\w+), no content string given")


def raised_finish_reason(exc: BaseException) -> str | None:
    """The finish reason LiteLLM raised on, from its exception's text.

    LiteLLM turns a chunk whose finish_reason is ``error`` (OpenRouter's in-band provider
    error) into an exception ("... raised a streaming error - finish_reason: error, no
    content string given ..."; litellm/litellm_core_utils/streaming_handler.py): the raw
    value is reported by the raise, and only there.
    """
    found = _RAISED_FINISH.search(str(exc))
    return found.group(1) if found else None


THOUGHT_SEPARATOR: Final = "__thought__"


def split_thought_id(call_id: str) -> tuple[str, str | None]:
    """LiteLLM's Gemini tool-call id ``<id>__thought__<thoughtSignature>``, taken apart.

    LiteLLM carries Gemini's thought signature through the OpenAI message shape by
    appending it to the call id, and strips it again when the id comes back in a tool
    result (its documented convention, specs/adapter_conventions.yaml). The user's id is
    the whole string; the contract's id and signature are its two halves.
    """
    head, sep, tail = call_id.partition(THOUGHT_SEPARATOR)
    return (head, tail or None) if sep else (call_id, None)


def _thinking(msg: Any) -> list[ContentBlock]:
    """``thinking_blocks`` (Anthropic, with signatures) when present, else ``reasoning_content``."""
    blocks = getattr(msg, "thinking_blocks", None) or []
    out: list[ContentBlock] = []
    for b in blocks:
        get = b.get if isinstance(b, Mapping) else (lambda k, d=None, b=b: getattr(b, k, d))
        if get("type") == "redacted_thinking":
            out.append(ThinkingBlock(content="", signature=get("data"), redacted=True))
        else:
            out.append(
                ThinkingBlock(content=get("thinking") or "", signature=get("signature") or None)
            )
    if out:
        return out
    reasoning = getattr(msg, "reasoning_content", None)
    return [ThinkingBlock(content=reasoning)] if isinstance(reasoning, str) and reasoning else []


def _usage(usage: Any) -> LibraryUsage | None:
    if usage is None:
        return None
    details = getattr(usage, "prompt_tokens_details", None)
    cache_read = as_int(getattr(details, "cached_tokens", None)) or as_int(
        getattr(usage, "cache_read_input_tokens", None)
    )
    cache_write = as_int(getattr(usage, "cache_creation_input_tokens", None)) or as_int(
        getattr(details, "cache_write_tokens", None)
    )
    return LibraryUsage(
        input=as_int(usage.prompt_tokens),
        output=as_int(usage.completion_tokens),
        cache_read=cache_read,
        cache_write=cache_write,
        total=as_int(usage.total_tokens) if isinstance(usage.total_tokens, int) else None,
    )
