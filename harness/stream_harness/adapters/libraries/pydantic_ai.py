"""pydantic-ai as a conformance subject, at the event level: its part events become contract events.

What runs: ``model.request_stream(...)`` of ``OpenAIChatModel``, ``OpenAIResponsesModel``,
``AnthropicModel`` or ``GoogleModel`` (one per wire protocol), each given an SDK client
whose HTTP transport replays the body, iterated to the end, then ``get()`` for the final
``ModelResponse`` (third-party-adapters.md, recipe 5). ``Agent.run_stream`` is not run:
every request gets the same recorded body, so a tool loop would never end.

pydantic-ai's parts manager emits ``PartStartEvent`` / ``PartDeltaEvent`` /
``PartEndEvent`` for text, thinking and tool-call parts, which map one to one onto the
contract's block events; this makes it the one library here that the event-level checks
(contract grammar, live tool arguments) apply to. The live arguments of a
``toolcall_delta`` are our parse (``stream_harness.contract.partial_json``) of the fragments pydantic-ai
delivered so far: the check then tests that its fragments add up to its final arguments.
Parts the contract does not model (native tool calls and returns, files) are provider
blocks. The conventions (its ``finish_reason`` vocabulary with the raw value kept in
``provider_details``, cache tokens inside ``input_tokens``) are in
``specs/adapter_conventions.yaml``, section ``pydantic-ai``.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from stream_harness.adapters import services
from stream_harness.adapters.conventions import PART_SEPARATOR, Collected, LibraryUsage, finish
from stream_harness.adapters.in_process import Replay
from stream_harness.adapters.library import (
    BASE_URL,
    Driven,
    LibraryAdapter,
    as_int,
    dump,
    run_async,
)
from stream_harness.adapters.protocol import AdapterLevel, AdapterResult
from stream_harness.adapters.sdk_support import tool_arguments
from stream_harness.adapters.sdks.bedrock_sdk import with_eventstream_type
from stream_harness.adapters.sdks.google_genai import signature_text, uses_httpx2
from stream_harness.contract.events import (
    AssistantMessage,
    ContentBlock,
    DoneEvent,
    ErrorEvent,
    Event,
    ProviderBlock,
    StartEvent,
    TextBlock,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingBlock,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from stream_harness.contract.partial_json import parse_partial

# The protocols of issue 15 that pydantic-ai's own models speak, each through the client a
# user of that service builds (see _model). Bedrock InvokeModelWithResponseStream only
# through AnthropicModel on an AsyncAnthropicBedrock client (pydantic-ai's Bedrock docs:
# BedrockConverseModel calls ConverseStream, never InvokeModel), which reads the
# Anthropic family alone: the protocol's other families (Titan, Llama, Cohere, Mistral,
# Nova, Claude Text Completions) are known failures "not a failure in use".
CHAT: Final = frozenset({"openai-completions", services.AZURE_CHAT})
RESPONSES: Final = frozenset({"openai-responses", services.AZURE_RESPONSES})
PROTOCOLS: Final = frozenset(
    {
        "openai-completions",
        "openai-responses",
        "anthropic-messages",
        "google-generative-ai",
        services.AZURE_CHAT,
        services.AZURE_RESPONSES,
        services.MISTRAL,
        services.VERTEX_ANTHROPIC,
        services.VERTEX_GEMINI,
        services.COHERE,
        services.BEDROCK_INVOKE,
    }
)
# Where the offline Vertex client is (any value works: the transport answers every
# request with the recorded body).
VERTEX_REGION: Final = "us-east5"


class PydanticAIAdapter(LibraryAdapter):
    """``Model.request_stream`` of pydantic-ai's chat, Responses, Anthropic and Google models."""

    name = "pydantic-ai"
    level: AdapterLevel = "event"
    # pydantic-ai raises ModelHTTPError / UnexpectedModelBehavior with the status and body
    # and leaves telling an overflow from a rate limit to the caller: the
    # overflow-classification check does not apply (specs/checks.md).
    classifies_errors = False
    distribution = "pydantic-ai-slim"
    modules = ("pydantic_ai", "pydantic_ai.messages", "pydantic_ai.models")
    protocols = PROTOCOLS

    def _model(self, protocol: str, replay: Replay) -> Any:
        """The pydantic-ai model a user of ``protocol`` builds, on an offline SDK client."""
        if protocol in CHAT or protocol in RESPONSES:
            return self._openai_model(protocol, replay)
        if protocol in ("anthropic-messages", services.VERTEX_ANTHROPIC, services.BEDROCK_INVOKE):
            return self._anthropic_model(protocol, replay)
        if protocol == services.MISTRAL:
            return self._mistral_model(replay)
        if protocol == services.COHERE:
            return self._cohere_model(replay)
        return self._google_model(protocol, replay)

    def _openai_model(self, protocol: str, replay: Replay) -> Any:
        import httpx2
        import openai

        models = importlib.import_module("pydantic_ai.models.openai")
        http_client = httpx2.AsyncClient(transport=self.transport(httpx2, replay))
        provider: Any
        if protocol in (services.AZURE_CHAT, services.AZURE_RESPONSES):
            # AzureProvider on the SDK's AsyncAzureOpenAI (key auth, a GA api-version), as
            # pydantic-ai's Azure docs build it.
            azure = importlib.import_module("pydantic_ai.providers.azure")
            provider = azure.AzureProvider(
                openai_client=openai.AsyncAzureOpenAI(
                    api_key="test",
                    api_version=services.AZURE_API_VERSION,
                    azure_endpoint=services.AZURE_ENDPOINT,
                    max_retries=0,
                    http_client=http_client,
                )
            )
        else:
            providers = importlib.import_module("pydantic_ai.providers.openai")
            provider = providers.OpenAIProvider(
                openai_client=openai.AsyncOpenAI(
                    api_key="sk-test",
                    base_url=f"{BASE_URL}/v1",
                    max_retries=0,
                    http_client=http_client,
                )
            )
        cls = models.OpenAIChatModel if protocol in CHAT else models.OpenAIResponsesModel
        return cls("gpt-harness", provider=provider)

    def _anthropic_model(self, protocol: str, replay: Replay) -> Any:
        import anthropic
        import httpx2

        amodels = importlib.import_module("pydantic_ai.models.anthropic")
        aproviders = importlib.import_module("pydantic_ai.providers.anthropic")
        if protocol == services.BEDROCK_INVOKE:
            replay = with_eventstream_type(replay)
        http_client = httpx2.AsyncClient(transport=self.transport(httpx2, replay))
        client: Any
        if protocol == services.BEDROCK_INVOKE:
            # The SDK's Bedrock client (invoke-with-response-stream URLs; it decodes the AWS
            # event stream itself with botocore); Bedrock's API-key auth, so no SigV4.
            client = anthropic.AsyncAnthropicBedrock(
                api_key="harness",
                aws_region="us-east-1",
                base_url=BASE_URL,
                max_retries=0,
                http_client=http_client,
            )
        elif protocol == services.VERTEX_ANTHROPIC:
            # The SDK's Vertex client (rawPredict / streamRawPredict URLs); an access token
            # given up front, so google-auth is never asked for credentials.
            client = anthropic.AsyncAnthropicVertex(
                region=VERTEX_REGION,
                project_id=services.VERTEX_PROJECT,
                access_token="test",
                max_retries=0,
                http_client=http_client,
            )
        else:
            client = anthropic.AsyncAnthropic(
                api_key="test", base_url=BASE_URL, max_retries=0, http_client=http_client
            )
        return amodels.AnthropicModel(
            "claude-harness", provider=aproviders.AnthropicProvider(anthropic_client=client)
        )

    def _google_model(self, protocol: str, replay: Replay) -> Any:
        from google import genai
        from google.genai import types

        gmodels = importlib.import_module("pydantic_ai.models.google")
        gproviders = importlib.import_module("pydantic_ai.providers.google")

        http: Any = __import__("httpx2" if uses_httpx2(genai) else "httpx")
        transport = self.transport(http, replay)

        def build() -> Any:
            options = types.HttpOptions(
                httpx_async_client=http.AsyncClient(transport=transport),
                retry_options=types.HttpRetryOptions(attempts=1),
            )
            if protocol == services.VERTEX_GEMINI:
                # The Vertex AI client (aiplatform URLs, integer enums on some routes) with
                # a bearer token that never expires, so nothing refreshes it.
                credentials = importlib.import_module("google.oauth2.credentials")
                gclient = genai.Client(
                    vertexai=True,
                    project=services.VERTEX_PROJECT,
                    location=VERTEX_REGION,
                    credentials=credentials.Credentials(token="test"),
                    http_options=options,
                )
            else:
                gclient = genai.Client(api_key="test", http_options=options)
            return gmodels.GoogleModel(
                "gemini-harness", provider=gproviders.GoogleProvider(client=gclient)
            )

        # Built once per protocol: the genai Client loads two SSL contexts (50 ms, ten
        # times a run).
        return self.once(protocol, build)

    def _mistral_model(self, replay: Replay) -> Any:
        # MistralModel on the mistralai SDK (its own SSE reader, chat.stream_async), which
        # sends over httpx2 and retries nothing unless given a retry_config.
        import httpx2

        mistralai = importlib.import_module("mistralai.client")
        mmodels = importlib.import_module("pydantic_ai.models.mistral")
        mproviders = importlib.import_module("pydantic_ai.providers.mistral")
        transport = self.transport(httpx2, replay)

        def build() -> Any:
            client = mistralai.Mistral(
                api_key="test",
                server_url=BASE_URL,
                async_client=httpx2.AsyncClient(transport=transport),
            )
            return mmodels.MistralModel(
                "mistral-harness", provider=mproviders.MistralProvider(mistral_client=client)
            )

        # Built once: Mistral() also builds a synchronous httpx2 client, whose SSL context
        # is loaded from disk (19 ms of a 29 ms run, measured in the pydantic-ai group).
        return self.once(services.MISTRAL, build)

    def _cohere_model(self, replay: Replay) -> Any:
        # CohereModel streams through AsyncClientV2.chat_stream (the SDK's SSE reader),
        # which sends over httpx.
        import httpx

        cohere = importlib.import_module("cohere")
        cmodels = importlib.import_module("pydantic_ai.models.cohere")
        cproviders = importlib.import_module("pydantic_ai.providers.cohere")
        client = cohere.AsyncClientV2(
            api_key="test",
            base_url=BASE_URL,
            max_retries=0,
            httpx_client=httpx.AsyncClient(transport=self.transport(httpx, replay)),
        )
        return cmodels.CohereModel(
            "command-harness", provider=cproviders.CohereProvider(cohere_client=client)
        )

    def drive(self, protocol: str, replay: Replay) -> Driven:
        messages = self.module("pydantic_ai.messages")
        models = self.module("pydantic_ai.models")
        model = self._model(protocol, replay)
        seen: list[Any] = []
        state: dict[str, Any] = {}

        async def go() -> Any:
            request = [messages.ModelRequest(parts=[messages.UserPromptPart("hi")])]
            async with model.request_stream(
                request, None, models.ModelRequestParameters()
            ) as stream:
                state["stream"] = stream
                async for event in stream:
                    seen.append(event)
            return stream.get()

        try:
            final = run_async(go())
        except Exception as exc:
            partial = None
            stream = state.get("stream")
            if stream is not None:
                try:
                    partial = (seen, stream.get())
                except Exception:
                    partial = (seen, None)
            elif seen:
                partial = (seen, None)
            failed = _raised_on_failed(protocol, exc, partial)
            return Driven(
                raised=exc,
                partial=partial,
                raw={"events": len(seen)},
                raised_stop="failed" if failed else None,
                override_stop=failed,
            )
        return Driven(value=(seen, final), raw={"response": dump(final)})

    def collect(self, protocol: str, value: Any) -> Collected:
        events, response = value
        return _collected(events, response)

    # The event-level result: the part events as contract events, closed by the message.
    def result(
        self, protocol: str, driven: Driven, reference: AssistantMessage | None
    ) -> AdapterResult:
        value = driven.value if driven.raised is None else driven.partial
        events_in = value[0] if value is not None else []
        base = super().result(protocol, driven, reference)
        message = base.message
        assert message is not None
        if driven.raised is not None or message.stop_reason in ("error", "aborted"):
            message = _close_cut_calls(message)
        events = contract_events(events_in, message)
        if driven.raised is not None or message.stop_reason in ("error", "aborted"):
            error_message = message.error_message or "error"
            message = message.model_copy(
                update={
                    "stop_reason": "error" if message.stop_reason != "aborted" else "aborted",
                    "error_message": error_message,
                }
            )
            events.append(
                ErrorEvent(
                    reason="aborted" if message.stop_reason == "aborted" else "error",
                    error_message=error_message,
                    message=message,
                )
            )
        else:
            events.append(DoneEvent(reason=message.stop_reason, message=message))
        return AdapterResult(message=message, events=events, raised=base.raised, raw=base.raw)


def _close_cut_calls(message: AssistantMessage) -> AssistantMessage:
    """A failed run's calls cut inside their arguments, closed as the contract closes them.

    pydantic-ai ends such a call with the fragments so far as its args string, not a JSON
    document (kept by ``tool_arguments`` as ``{"_raw": ...}``); the contract closes an
    unfinished call with what its fragments parse to (C7), which is the same text read
    as far as it goes.
    """
    blocks: list[ContentBlock] = []
    for block in message.content:
        raw = block.arguments.get("_raw") if isinstance(block, ToolCall) else None
        if isinstance(block, ToolCall) and isinstance(raw, str) and len(block.arguments) == 1:
            live = parse_partial(raw)
            block = block.model_copy(update={"arguments": live if isinstance(live, dict) else {}})
        blocks.append(block)
    return message.model_copy(update={"content": blocks})


def _raised_on_failed(protocol: str, exc: BaseException, partial: Any) -> bool:
    """Whether pydantic-ai raised for a Responses ``response.failed`` event.

    On ``response.failed`` the Responses model records the terminal state (the response
    becomes ``incomplete``) and then raises the provider's error
    (models/openai/_responses_streaming.py): the raise reports the raw status "failed".
    An ``error`` event raises without a terminal state.
    """
    if protocol not in RESPONSES or partial is None or partial[1] is None:
        return False
    return (
        type(exc).__name__ in ("ModelHTTPError", "ModelRateLimitError")
        and getattr(partial[1], "state", None) == "incomplete"
    )


def _modeled(part: Any) -> bool:
    return getattr(part, "part_kind", None) in ("text", "thinking", "tool-call")


def _block(part: Any) -> ContentBlock:
    kind = part.part_kind
    if kind == "text":
        return TextBlock(content=part.content, signature=_text_signature(part))
    if kind == "thinking":
        # pydantic-ai keeps Anthropic's redacted_thinking as an empty ThinkingPart with the
        # id "redacted_thinking" and the opaque data as its signature.
        return ThinkingBlock(
            content=part.content or "",
            signature=part.signature or None,
            redacted=getattr(part, "id", None) == "redacted_thinking",
        )
    args = part.args
    arguments = args if isinstance(args, dict) else tool_arguments(args)
    return ToolCall(
        id=part.tool_call_id or "",
        name=part.tool_name or "",
        arguments=arguments,
        # Gemini's thoughtSignature on a function call, in provider_details as on text.
        signature=_text_signature(part),
    )


def _text_signature(part: Any) -> str | None:
    details = getattr(part, "provider_details", None) or {}
    value = details.get("thought_signature") if isinstance(details, Mapping) else None
    return signature_text(value) if value else None


def _collected(events: Sequence[Any], response: Any) -> Collected:
    """The final blocks: each modeled part as its ``PartEndEvent`` (else the response) had it."""
    ends: dict[int, Any] = {}
    order: list[int] = []
    for event in events:
        kind = getattr(event, "event_kind", None)
        if kind == "part_start" and event.index not in order:
            order.append(event.index)
        if kind == "part_end":
            ends[event.index] = event.part
    parts = list(response.parts) if response is not None else [ends[i] for i in order if i in ends]
    content: list[ContentBlock] = []
    provider: list[ProviderBlock] = []
    for part in parts:
        if _modeled(part):
            if part.part_kind == "text" and not part.content:
                continue
            content.append(_block(part))
        else:
            provider.append(
                ProviderBlock(
                    provider_type=str(getattr(part, "part_kind", type(part).__name__)),
                    position=len(content),
                    data=_jsonable(part),
                )
            )
    if response is None:
        return Collected(content=content, provider_blocks=provider)
    details = response.provider_details or {}
    usage = response.usage
    blocked = details.get("block_reason") if isinstance(details, Mapping) else None
    blocked = str(getattr(blocked, "value", blocked)) if blocked else None
    return Collected(
        content=content,
        # The raw value when pydantic-ai keeps it (provider_details), else its own word;
        # a blocked Gemini prompt's raw value is its block reason (finish_reason is
        # pydantic-ai's content_filter).
        stop=blocked
        or (details.get("finish_reason") if isinstance(details, Mapping) else None)
        or response.finish_reason,
        error=_blocked_message(blocked, details) if blocked else None,
        usage=LibraryUsage(
            input=as_int(usage.input_tokens),
            output=as_int(usage.output_tokens),
            cache_read=as_int(usage.cache_read_tokens),
            cache_write=as_int(usage.cache_write_tokens),
        ),
        model=response.model_name,
        response_id=response.provider_response_id,
        provider_blocks=provider,
        # A refusal's text is kept only in provider_details (OpenAI chat and Responses).
        refusal=_text_or_none(details.get("refusal")) if isinstance(details, Mapping) else None,
    )


def _blocked_message(reason: str, details: Mapping[str, Any]) -> str:
    detail = details.get("block_reason_message")
    return f"prompt blocked: {reason}" + (
        f": {detail}" if isinstance(detail, str) and detail else ""
    )


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _jsonable(part: Any) -> dict[str, Any]:
    # The part's content fields only: pydantic-ai stamps native tool parts with a
    # timestamp and, where the wire had no id, a fresh "pyd_ai_<uuid>" id, which would
    # make every run's message differ (split-invariance would flag pydantic-ai for it).
    fields = ("part_kind", "tool_name", "args", "content", "provider_name", "tool_call_id")
    data = {f: getattr(part, f) for f in fields if getattr(part, f, None) is not None}
    if str(data.get("tool_call_id", "")).startswith("pyd_ai_"):
        del data["tool_call_id"]
    loaded: dict[str, Any] = json.loads(json.dumps(data, default=str))
    return loaded


def contract_events(events: Sequence[Any], message: AssistantMessage) -> list[Event]:
    """pydantic-ai's part events as the contract's, each end carrying the message's block.

    Parts get ``content_index`` in the order they start; a part pydantic-ai never ends
    is ended before the terminal event (C5). The end events carry the final message's
    block at that index, so the events and the message agree by construction and what
    the checks compare is pydantic-ai's deltas against its own final parts.
    """
    parts = _PartEvents(message, _merged_thinking_parts(events, message))
    for event in events:
        kind = getattr(event, "event_kind", None)
        if kind == "part_start" and _modeled(event.part):
            parts.start(event.index, event.part)
        elif kind == "part_delta":
            parts.delta_of(event.index, event.delta)
        elif (
            kind == "part_end"
            and event.index in parts.index_of
            and event.index not in parts.deferred
        ):
            parts.end(parts.index_of[event.index])
    for ci in sorted(parts.index_of.values()):
        parts.end(ci)
    out = parts.out
    # A call's start carries the id its end carries: the message's, where the
    # tool_call_ids alignment replaced an id pydantic-ai invented (Gemini calls without an
    # id or with a repeated one) by the reference's. Left as it was, C10 would flag the
    # alignment, not pydantic-ai.
    for i, event in enumerate(out):
        if isinstance(event, ToolCallStartEvent) and event.content_index < len(message.content):
            block = message.content[event.content_index]
            if isinstance(block, ToolCall) and event.id is not None and event.id != block.id:
                out[i] = event.model_copy(update={"id": block.id})
    return out


class _PartEvents:
    """The contract's events so far, and which block each pydantic-ai part index writes."""

    def __init__(self, message: AssistantMessage, merged_into: dict[int, int]) -> None:
        self.out: list[Event] = [StartEvent()]
        self.message = message
        self.merged_into = merged_into
        self.deferred = set(merged_into.values())
        self.index_of: dict[int, int] = {}
        self.kind_of: dict[int, str] = {}
        self.args: dict[int, str] = {}
        self.ended: set[int] = set()

    def start(self, index: int, part: Any) -> None:
        if part.part_kind == "text" and not part.content and index not in self.index_of:
            # An empty text part opens no block (the contract drops empty text), unless
            # deltas follow: then it opens on its first delta.
            self.kind_of[index] = "text-pending"
            return
        if index in self.merged_into and self.merged_into[index] in self.index_of:
            # A summary part the message joined into the previous one (thinking_parts):
            # its deltas continue that block, after the separator the join put there.
            ci = self.index_of[self.merged_into[index]]
            self.index_of[index] = ci
            self.kind_of[index] = "thinking"
            self.delta(ci, "thinking", PART_SEPARATOR)
            self.delta(ci, "thinking", _initial(part))
            return
        _open(self.out, index, part, self.index_of, self.kind_of)
        ci = self.index_of[index]
        self.delta(ci, self.kind_of[index], _initial(part))

    def delta_of(self, index: int, d: Any) -> None:
        """A part_delta event's text, or its arguments (a dict dumped as JSON)."""
        pk = self.kind_of.get(index)
        if pk == "text-pending":
            text = getattr(d, "content_delta", None) or ""
            if not text:
                return
            _open(self.out, index, None, self.index_of, self.kind_of, as_kind="text")
            pk = "text"
        if pk is None or index not in self.index_of:
            return
        ci = self.index_of[index]
        if pk == "text":
            self.delta(ci, pk, getattr(d, "content_delta", None) or "")
        elif pk == "thinking":
            self.delta(ci, pk, getattr(d, "content_delta", None) or "")
        else:
            a = getattr(d, "args_delta", None)
            self.delta(ci, pk, a if isinstance(a, str) else (json.dumps(a) if a else ""))

    def delta(self, ci: int, kind: str, text: str) -> None:
        if not text:
            return
        if kind == "text":
            self.out.append(TextDeltaEvent(content_index=ci, delta=text))
        elif kind == "thinking":
            self.out.append(ThinkingDeltaEvent(content_index=ci, delta=text))
        else:
            self.args[ci] = self.args.get(ci, "") + text
            live = parse_partial(self.args[ci])
            self.out.append(
                ToolCallDeltaEvent(
                    content_index=ci, delta=text, arguments=live if isinstance(live, dict) else {}
                )
            )

    def end(self, ci: int) -> None:
        """Block ``ci``'s end, once, carrying the message's block (none past its content)."""
        if ci in self.ended or ci >= len(self.message.content):
            return
        self.ended.add(ci)
        block = self.message.content[ci]
        if isinstance(block, TextBlock):
            self.out.append(
                TextEndEvent(content_index=ci, content=block.content, signature=block.signature)
            )
        elif isinstance(block, ThinkingBlock):
            self.out.append(
                ThinkingEndEvent(
                    content_index=ci,
                    content=block.content,
                    signature=block.signature,
                    redacted=block.redacted,
                )
            )
        else:
            self.out.append(ToolCallEndEvent(content_index=ci, tool_call=block))


def _merged_thinking_parts(events: Sequence[Any], message: AssistantMessage) -> dict[int, int]:
    """Thinking parts the message has as one block (the ``thinking_parts`` alignment):
    each later part of a run of consecutive thinking parts, by its index, mapped to the
    run's first part, where the parts' final contents joined with a blank line are a
    thinking block of the message."""
    order: list[int] = []
    kinds: dict[int, str] = {}
    final: dict[int, str] = {}
    for event in events:
        kind = getattr(event, "event_kind", None)
        if kind == "part_start" and event.index not in kinds:
            order.append(event.index)
            kinds[event.index] = getattr(event.part, "part_kind", "")
        elif kind == "part_end":
            final[event.index] = getattr(event.part, "content", None) or ""
    wanted = {b.content for b in message.content if isinstance(b, ThinkingBlock)}
    merged: dict[int, int] = {}
    run: list[int] = []
    for index in [*order, -1]:
        if index != -1 and kinds.get(index) == "thinking":
            run.append(index)
            continue
        if len(run) > 1 and all(i in final for i in run):
            joined = PART_SEPARATOR.join(final[i] for i in run)
            if joined in wanted and not any(final[i] in wanted for i in run):
                merged.update({i: run[0] for i in run[1:]})
        run = []
    return merged


def _initial(part: Any) -> str:
    if part.part_kind in ("text", "thinking"):
        return part.content or ""
    a = part.args
    return a if isinstance(a, str) else (json.dumps(a) if a else "")


def _open(
    out: list[Event],
    index: int,
    part: Any,
    index_of: dict[int, int],
    kind_of: dict[int, str],
    as_kind: str | None = None,
) -> None:
    ci = len(set(index_of.values()))
    index_of[index] = ci
    kind = as_kind or ("tool" if part.part_kind == "tool-call" else part.part_kind)
    kind_of[index] = kind
    if kind == "text":
        out.append(TextStartEvent(content_index=ci))
    elif kind == "thinking":
        out.append(ThinkingStartEvent(content_index=ci))
    else:
        out.append(
            ToolCallStartEvent(
                content_index=ci, id=part.tool_call_id or None, name=part.tool_name or None
            )
        )


__all__ = ["PydanticAIAdapter", "contract_events", "finish"]
