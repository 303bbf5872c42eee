"""The official openai SDK (3.x) as a conformance subject, for Chat Completions and Responses.

What users of the SDK's streaming helpers get: ``client.chat.completions.stream(...)`` then
``get_final_completion()`` (the ``ChatCompletionStreamState`` accumulator), and
``client.responses.stream(...)`` then ``get_final_response()``. Both helpers raise where
the contract ends in a terminal event (a ``length`` finish, a Responses stream without
``response.completed``); the adapter records the raise and maps what the library still
hands its user. Every convention is in specs/adapters.md, section openai-sdk.

The Azure protocols run the same helpers on the SDK's ``openai.AzureOpenAI`` client (its
deployment URL ``/openai/deployments/{model}/chat/completions?api-version=...`` and
``/openai/responses?api-version=...``): what differs is the client's request building, and
that the finished message is mapped through the Azure protocol's stop-reason section.
"""

from __future__ import annotations

import functools
import json
import ssl
from typing import Any, Final

from stream_harness.adapters.in_process import Replay, SDKAdapter
from stream_harness.adapters.library import as_int
from stream_harness.adapters.protocol import AdapterResult
from stream_harness.adapters.sdk_support import (
    error_message,
    exception_summary,
    failed_message,
    final_message,
    raised_result,
    require,
    serve,
    tool_arguments,
)
from stream_harness.adapters.services import (
    AZURE_API_VERSION,
    AZURE_CHAT,
    AZURE_ENDPOINT,
    AZURE_RESPONSES,
)
from stream_harness.contract.events import (
    AssistantMessage,
    ContentBlock,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    Usage,
)

# The reference's packing of replay tokens and of reasoning parts is the convention the
# adapter reproduces (specs/adapters.md), so it uses the same code.
from stream_harness.providers.openai_responses import THINKING_PART_SEPARATOR, signature_v1

CHAT: Final = "openai-completions"
RESPONSES: Final = "openai-responses"
CHAT_PROTOCOLS: Final = frozenset({CHAT, AZURE_CHAT})
AZURE_PROTOCOLS: Final = frozenset({AZURE_CHAT, AZURE_RESPONSES})

# Chat reasoning fields the SDK's typed message lacks; its generic merge keeps them as
# extra fields (specs/known-differences.md, openai-completions), first non-empty wins.
_REASONING_FIELDS: Final = ("reasoning_content", "reasoning", "reasoning_text")
# Lifecycle events whose response is final: the library's only final object when
# get_final_response() has none (it requires response.completed).
_TERMINAL_LIFECYCLE: Final = frozenset(
    {"response.incomplete", "response.failed", "response.cancelled"}
)


def sdk_client(openai: Any, httpx2: Any, protocol: str, transport: Any) -> Any:
    """The SDK client a user of ``protocol`` makes: ``AzureOpenAI`` for the Azure protocols
    (key auth, an Azure endpoint, a GA api-version), ``OpenAI`` otherwise; no retries, the
    replay transport underneath."""
    http_client = httpx2.Client(transport=transport)
    if protocol in AZURE_PROTOCOLS:
        return openai.AzureOpenAI(
            api_key="harness-key",
            api_version=AZURE_API_VERSION,
            azure_endpoint=AZURE_ENDPOINT,
            max_retries=0,
            http_client=http_client,
        )
    return openai.OpenAI(
        api_key="sk-test",
        base_url="http://harness.invalid/v1",
        max_retries=0,
        http_client=http_client,
    )


class OpenAIClientAdapter(SDKAdapter):
    """An adapter that streams through the openai SDK's client (:func:`sdk_client`) on the
    replay transport; it closes the client after every run, as a ``with`` block would."""

    _openai: Any
    _httpx2: Any

    def version(self) -> str:
        return str(self._openai.__version__)

    def drive(self, protocol: str, replay: Replay) -> AdapterResult:
        transport = serve(self._httpx2, replay.chunks, status=replay.status, headers=replay.headers)
        client = sdk_client(self._openai, self._httpx2, protocol, transport)
        try:
            return self.stream(client, protocol)
        finally:
            client.close()

    def stream(self, client: Any, protocol: str) -> AdapterResult:
        raise NotImplementedError


class OpenAISDKAdapter(OpenAIClientAdapter):
    """``openai.OpenAI()`` / ``openai.AzureOpenAI()`` streaming helpers: chat completions
    and responses."""

    name = "openai-sdk"
    protocols: frozenset[str] = frozenset({CHAT, RESPONSES, AZURE_CHAT, AZURE_RESPONSES})

    def __init__(self) -> None:
        self._openai, self._httpx2 = require(self.name, "openai", "httpx2")

    def stream(self, client: Any, protocol: str) -> AdapterResult:
        if protocol in CHAT_PROTOCOLS:
            return self._chat(client, protocol)
        return self._responses(client, protocol)

    # -- chat completions -------------------------------------------------------------

    def _chat(self, client: Any, protocol: str) -> AdapterResult:
        openai = self._openai
        stream = None
        try:
            with client.chat.completions.stream(
                model="gpt-harness", messages=[{"role": "user", "content": "hi"}]
            ) as stream:
                for _ in stream:
                    pass
                final = stream.get_final_completion()
        except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError) as exc:
            # Policy of the parse helper, raised after the stream was read to the end:
            # the accumulated completion rides on the exception (else on the stream),
            # and its finish reason says what happened.
            completion = getattr(exc, "completion", None) or _chat_snapshot(stream)
            return AdapterResult(
                message=chat_message(completion, protocol) if completion is not None else None,
                raised=exception_summary(exc),
                raw={"exception": exception_summary(exc), "completion": _dump(completion)},
            )
        except Exception as exc:
            snapshot = _chat_snapshot(stream)
            base = chat_message(snapshot, protocol) if snapshot is not None else None
            return raised_result(exc, base, {"snapshot": _dump(snapshot)})
        return AdapterResult(
            message=chat_message(final, protocol), raw={"completion": _dump(final)}
        )

    # -- responses ----------------------------------------------------------------------

    def _responses(self, client: Any, protocol: str) -> AdapterResult:
        terminal: Any = None  # the response of a terminal lifecycle event
        error_event: Any = None  # a top-level `error` event, which the SDK yields, not raises
        try:
            with client.responses.stream(model="gpt-harness", input="hi") as stream:
                for event in stream:
                    # The first error or terminal response ends the stream, as in the
                    # contract (C2): the response.failed that follows an error event is
                    # an event after the terminal one.
                    if terminal is not None or error_event is not None:
                        continue
                    if event.type in _TERMINAL_LIFECYCLE:
                        terminal = event.response
                    elif event.type == "error":
                        error_event = event
                final = stream.get_final_response()
        except Exception as exc:
            if error_event is not None:
                message = failed_message(None, error_event.message or exception_summary(exc))
            elif terminal is not None:
                message = responses_message(terminal, protocol)
            else:
                message = failed_message(None, error_message(exc))
            return AdapterResult(
                message=message,
                raised=exception_summary(exc),
                raw={
                    "exception": exception_summary(exc),
                    "terminal_response": _dump(terminal),
                    "error_event": _dump(error_event),
                },
            )
        return AdapterResult(
            message=responses_message(final, protocol), raw={"response": _dump(final)}
        )

    # -- resuming a background stream (the resumption check) ----------------------------

    resumes = True

    @functools.cached_property
    def _tls_context(self) -> ssl.SSLContext:
        return ssl.create_default_context()

    def run_resumable(self, protocol: str, base_url: str, *, request_body: bytes) -> AdapterResult:
        """``client.responses.create(background=True, stream=True)`` read event by event,
        the last ``sequence_number`` kept; when the stream breaks off before its terminal
        event, ``client.responses.retrieve(id, stream=True, starting_after=N)`` reads the
        rest (the SDK's background-mode example). The result is the terminal event's
        response, mapped as :meth:`_responses` maps it."""
        openai = self._openai
        # The run's own HTTP client over one TLS context made once: a client without one
        # builds an SSL context (22 ms of CPU, most of a resumption run's) for a loopback
        # server it reaches over plain HTTP.
        http_client = self._httpx2.Client(verify=self._tls_context)
        if protocol in AZURE_PROTOCOLS:
            client = openai.AzureOpenAI(
                api_key="harness-key",
                api_version=AZURE_API_VERSION,
                azure_endpoint=base_url,
                max_retries=0,
                http_client=http_client,
            )
        else:
            client = openai.OpenAI(
                api_key="sk-test", base_url=f"{base_url}/v1", max_retries=0, http_client=http_client
            )
        cursor: int | None = None
        response_id: str | None = None
        seen: list[str] = []

        def read(stream: Any) -> Any:
            nonlocal cursor, response_id
            for event in stream:
                seen.append(event.type)
                if isinstance(getattr(event, "sequence_number", None), int):
                    cursor = event.sequence_number
                response = getattr(event, "response", None)
                if response_id is None and response is not None:
                    response_id = getattr(response, "id", None)
                if event.type in _TERMINAL_LIFECYCLE or event.type in (
                    "response.completed",
                    "error",
                ):
                    return event
            return None

        try:
            try:
                final = read(
                    client.responses.create(
                        model="gpt-harness", input="hi", background=True, stream=True
                    )
                )
            except Exception:  # the connection dropped mid-stream: resume below
                final = None
            if final is None and response_id is not None and cursor is not None:
                final = read(
                    client.responses.retrieve(response_id, stream=True, starting_after=cursor)
                )
        except Exception as exc:
            return raised_result(exc, None, {"events": seen})
        finally:
            client.close()
        if final is None:
            return AdapterResult(message=None, raw={"events": seen, "note": "no terminal event"})
        if final.type == "error":
            return AdapterResult(
                message=failed_message(None, final.message or "error event"), raw={"events": seen}
            )
        return AdapterResult(
            message=responses_message(final.response, protocol), raw={"events": seen}
        )


def _chat_snapshot(stream: Any) -> Any:
    if stream is None:
        return None
    try:
        return stream.current_completion_snapshot
    except AssertionError:  # no chunk arrived
        return None


def _dump(obj: Any) -> Any:
    # warnings=False: the snapshot of an off-spec stream holds values of other types than
    # the SDK's models declare (Mistral's content lists), which pydantic warns about.
    return obj.to_dict(warnings=False) if obj is not None else None


def _extra(obj: Any, name: str) -> Any:
    extra = getattr(obj, "model_extra", None) or {}
    return extra.get(name)


# -- chat completion -> AssistantMessage ----------------------------------------------------


def chat_message(completion: Any, protocol: str = CHAT) -> AssistantMessage:
    """A ``ChatCompletion`` (or the stream's snapshot) in the contract's terms, its stop
    value mapped through ``protocol``'s section of specs/stop_reasons.yaml."""
    choices = list(completion.choices or [])
    first = next((c for c in choices if (c.index or 0) == 0), choices[0] if choices else None)
    content: list[ContentBlock] = []
    raw: str | None = None
    refusal: str | None = None
    if first is not None:
        msg = first.message
        raw = first.finish_reason
        for name in _REASONING_FIELDS:
            value = _extra(msg, name)
            if isinstance(value, str) and value:
                content.append(ThinkingBlock(content=value))
                break
        if isinstance(msg.content, str) and msg.content:
            content.append(TextBlock(content=msg.content))
        refusal = msg.refusal or None
        if refusal:
            content.append(TextBlock(content=refusal))
        for call in msg.tool_calls or []:
            content.append(_chat_tool_call(call, len(content)))
        legacy = legacy_function_call(msg, len(content))
        if legacy is not None:
            content.append(legacy)
    provider = [
        ProviderBlock(
            provider_type="openai.choice", position=len(content), data=c.to_dict(warnings=False)
        )
        for c in choices
        if c is not first
    ]
    # A refusal is not an answer, whatever the finish reason: the table's refusal override,
    # with the refusal text as the message (specs/protocols/openai-completions.md).
    return final_message(
        protocol,
        content,
        raw,
        completion,
        usage=_chat_usage(completion.usage),
        provider_blocks=provider,
        details=refusal,
        refusal=bool(refusal),
    )


def legacy_function_call(message: Any, content_index: int) -> ToolCall | None:
    """The deprecated single ``function_call`` of a message (Azure's GA versions still serve
    it), as one more tool call: it has no id, so it gets the reference's synthetic one."""
    legacy = getattr(message, "function_call", None)
    if legacy is None or not getattr(legacy, "name", None):
        return None
    return ToolCall(
        id=f"toolcall_{content_index}",
        name=legacy.name,
        arguments=tool_arguments(getattr(legacy, "arguments", None)),
    )


def _chat_tool_call(call: Any, content_index: int) -> ToolCall:
    # A call without an id gets the reference's synthetic id (stream_harness.providers.accumulator).
    call_id = call.id or f"toolcall_{content_index}"
    if getattr(call, "type", None) == "custom" and getattr(call, "custom", None) is not None:
        return ToolCall(
            id=call_id, name=call.custom.name or "", arguments={"input": call.custom.input}
        )
    function = call.function
    name = (function.name if function is not None else None) or ""
    arguments = function.arguments if function is not None else None
    if arguments is not None and not isinstance(arguments, str):
        arguments = json.dumps(arguments)  # Mistral sends an object
    return ToolCall(id=call_id, name=name, arguments=tool_arguments(arguments))


def _chat_usage(usage: Any) -> Usage:
    """specs/protocols/openai-completions.md, Usage, on the fields the SDK keeps.

    ``prompt_tokens`` includes cached tokens; DeepSeek's flat ``prompt_cache_hit_tokens``
    and Together's ``usage.cached_tokens`` are extra fields the SDK keeps verbatim.
    """
    if usage is None:
        return Usage()
    flat = as_int(_extra(usage, "prompt_cache_hit_tokens")) or as_int(
        _extra(usage, "cached_tokens")
    )
    return _usage(
        usage, usage.prompt_tokens, usage.completion_tokens, usage.prompt_tokens_details, flat
    )


def _usage(usage: Any, prompt: Any, output: Any, details: Any, flat_cache_read: int = 0) -> Usage:
    """Both APIs' counts: the prompt count includes the cache reads (``details``, else a
    provider's flat field) and writes, which the contract's ``input`` excludes."""
    cache_read = as_int(getattr(details, "cached_tokens", None)) if details is not None else 0
    cache_read = cache_read or flat_cache_read
    cache_write = as_int(_extra(details, "cache_write_tokens")) if details is not None else 0
    counts = {
        "input": max(0, as_int(prompt) - cache_read - cache_write),
        "output": as_int(output),
        "cache_read": cache_read,
        "cache_write": cache_write,
    }
    total = usage.total_tokens if isinstance(usage.total_tokens, int) else sum(counts.values())
    return Usage(**counts, total=total)


# -- response -> AssistantMessage -----------------------------------------------------------


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _wire_order(value: Any) -> Any:
    """``id`` and ``type`` first at every level, the rest in the SDK's field order."""
    if isinstance(value, dict):
        head = [k for k in ("id", "type") if k in value]
        keys = head + [k for k in value if k not in head]
        return {k: _wire_order(value[k]) for k in keys}
    if isinstance(value, list):
        return [_wire_order(v) for v in value]
    return value


def _reasoning_signature(item: Any) -> str:
    """The whole reasoning item as the replay token, as the reference packs it.

    The reference keeps the item's JSON as OpenAI sent it; the SDK dumps fields in its
    models' order. Key order means nothing to the server, but the check compares
    signatures as strings, so the adapter writes ``id`` and ``type`` first at every level,
    which is the order OpenAI sends (specs/adapters.md).
    """
    return _compact(_wire_order(item.to_dict(warnings=False)))


def responses_message(response: Any, protocol: str = RESPONSES) -> AssistantMessage:
    """A ``Response`` (final or from a terminal lifecycle event) in the contract's terms."""
    content: list[ContentBlock] = []
    provider: list[ProviderBlock] = []
    refusals: list[str] = []
    call_ids: set[str] = set()
    for item in response.output or []:
        kind = item.type
        if kind == "message":
            _message_item(item, content, provider, refusals)
        elif kind == "reasoning":
            content.append(_reasoning_item(item))
        elif kind in ("function_call", "custom_tool_call"):
            content.append(_call_item(item, call_ids))
        else:
            provider.append(
                ProviderBlock(
                    provider_type=kind, position=len(content), data=item.to_dict(warnings=False)
                )
            )
    status = response.status
    reason = (
        getattr(response.incomplete_details, "reason", None)
        if response.incomplete_details
        else None
    )
    raw = f"{status}/{reason}" if status and reason else status
    details = getattr(response.error, "message", None) if response.error else None
    return final_message(
        protocol,
        content,
        raw,
        response,
        usage=_responses_usage(response.usage),
        provider_blocks=provider,
        details=details or "\n".join(refusals) or None,
        refusal=bool(refusals),
    )


def _message_item(
    item: Any, content: list[ContentBlock], provider: list[ProviderBlock], refusals: list[str]
) -> None:
    """A message item: its text and refusal parts as one text block, its citations after."""
    text = ""
    annotations: list[tuple[int, list[Any]]] = []
    for index, part in enumerate(item.content or []):
        if part.type == "output_text":
            text += part.text or ""
            if part.annotations:
                annotations.append((index, [a.to_dict(warnings=False) for a in part.annotations]))
        elif part.type == "refusal":
            text += part.refusal or ""
            refusals.append(part.refusal or "")
    if text:
        signature = signature_v1(item.id, phase=getattr(item, "phase", None))
        content.append(TextBlock(content=text, signature=signature))
    # Citations are provider blocks after their text block, as the reference keeps them.
    for index, found in annotations:
        data = {"item_id": item.id, "content_index": index, "annotations": found}
        provider.append(
            ProviderBlock(provider_type="output_text.annotations", position=len(content), data=data)
        )


def _reasoning_item(item: Any) -> ThinkingBlock:
    parts = [s.text for s in item.summary or [] if s.text]
    parts += [
        c.text
        for c in getattr(item, "content", None) or []
        if getattr(c, "type", None) == "reasoning_text" and c.text
    ]
    return ThinkingBlock(
        content=THINKING_PART_SEPARATOR.join(parts),
        signature=_reasoning_signature(item),
    )


def _call_item(item: Any, call_ids: set[str]) -> ToolCall:
    """A function or custom tool call; an id seen already in the response is made unique."""
    kind = item.type
    call_id = item.call_id or item.id
    if call_id in call_ids:
        call_id = f"{call_id}|{item.id}"
    call_ids.add(call_id)
    if kind == "function_call":
        arguments = tool_arguments(item.arguments)
        signature = signature_v1(item.id, namespace=getattr(item, "namespace", None))
    else:
        arguments = {"input": item.input}
        signature = signature_v1(item.id, type=kind, namespace=getattr(item, "namespace", None))
    return ToolCall(id=call_id, name=item.name, arguments=arguments, signature=signature)


def _responses_usage(usage: Any) -> Usage:
    """specs/protocols/openai-responses.md, Usage: ``input_tokens`` includes cached tokens."""
    if usage is None:
        return Usage()
    return _usage(usage, usage.input_tokens, usage.output_tokens, usage.input_tokens_details)
