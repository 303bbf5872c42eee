"""The openai SDK's raw stream: ``chat.completions.create(stream=True)``, accumulated as its docs show.

Most users of the openai SDK (and of every OpenAI-compatible server) do not use the
``.stream()`` helper that :mod:`stream_harness.adapters.sdks.openai_sdk` runs: they iterate
``create(stream=True)`` and join the deltas themselves. What is under test here is the
SDK's SSE reading and its parsing of each chunk into ``ChatCompletionChunk`` (a field it
drops, an error chunk it raises on, a body it cannot decode); the joining is the pattern of
the SDK's README and OpenAI's cookbook: content and arguments concatenated, a tool call's
id and name taken when present (never concatenated, unlike the helper's
``accumulate_delta``), the last finish reason and usage kept. The joined completion is
then mapped exactly as the helper's final completion (specs/adapters.md, openai-sdk), so
the two adapters differ only where the libraries' code does. Azure OpenAI runs the same
loop on ``openai.AzureOpenAI`` (:func:`stream_harness.adapters.sdks.openai_sdk.sdk_client`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from stream_harness.adapters.conventions import Collected, LibraryUsage
from stream_harness.adapters.library import as_int, import_all
from stream_harness.adapters.protocol import AdapterResult
from stream_harness.adapters.sdk_support import raised_result, tool_arguments
from stream_harness.adapters.sdks.openai_sdk import OpenAIClientAdapter, chat_message
from stream_harness.adapters.services import AZURE_CHAT
from stream_harness.contract.events import ContentBlock, TextBlock, ThinkingBlock, ToolCall

CHAT: Final = "openai-completions"
_REASONING_FIELDS: Final = ("reasoning_content", "reasoning", "reasoning_text")


class OpenAICreateAdapter(OpenAIClientAdapter):
    """``openai.OpenAI().chat.completions.create(stream=True)`` (or ``AzureOpenAI()``'s),
    deltas joined by hand."""

    name = "openai-sdk-create"
    protocols: frozenset[str] = frozenset({CHAT, AZURE_CHAT})

    def __init__(self) -> None:
        mods = import_all(self.name, "openai", ("openai", "httpx2"))
        self._openai, self._httpx2 = mods["openai"], mods["httpx2"]

    def stream(self, client: Any, protocol: str) -> AdapterResult:
        joined = Joined()
        try:
            stream = client.chat.completions.create(
                model="gpt-harness",
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
                stream_options={"include_usage": True},
            )
            for chunk in stream:
                joined.add(chunk)
        except Exception as exc:
            completion = joined.completion(self._openai) if joined.chunks else None
            base = chat_message(completion, protocol) if completion is not None else None
            return raised_result(exc, base, {"chunks": joined.chunks})
        completion = joined.completion(self._openai)
        return AdapterResult(
            message=chat_message(completion, protocol),
            raw={"completion": completion.to_dict(warnings=False)},
        )


class Joined:
    """The deltas of choice 0 joined as user code joins them, then one ``ChatCompletion``."""

    def __init__(self) -> None:
        self.chunks = 0
        self.id: str | None = None
        self.model: str | None = None
        self.content = ""
        self.refusal = ""
        self.reasoning: dict[str, str] = {}
        self.calls: dict[int | None, dict[str, Any]] = {}
        # The deprecated single `delta.function_call` (name once, arguments in pieces).
        self.function_call: dict[str, str] | None = None
        self.finish_reason: str | None = None
        self.usage: Any = None
        self.text_signature: str | None = None

    def add(self, chunk: Any) -> None:
        # getattr throughout: libraries that imitate the chunk type (aisuite's has no
        # `id`, `model` nor `usage`) must not make the joining code raise.
        self.chunks += 1
        self.id = getattr(chunk, "id", None) or self.id
        self.model = getattr(chunk, "model", None) or self.model
        if getattr(chunk, "usage", None) is not None:
            self.usage = chunk.usage
        for choice in getattr(chunk, "choices", None) or []:
            if (getattr(choice, "index", 0) or 0) != 0:
                continue
            delta = getattr(choice, "delta", None)
            if getattr(choice, "finish_reason", None) is not None:
                self.finish_reason = choice.finish_reason
            if delta is None:
                continue
            if isinstance(getattr(delta, "content", None), str):
                self.content += delta.content
                # Only a text delta's signature is the text's (a code-execution part's
                # delta carries its own, which is not).
                if delta.content:
                    self.text_signature = _google_signature(delta) or self.text_signature
            if isinstance(getattr(delta, "refusal", None), str):
                self.refusal += delta.refusal
            extra = getattr(delta, "model_extra", None) or {}
            for name in _REASONING_FIELDS:
                value = extra.get(name)
                if isinstance(value, str):
                    self.reasoning[name] = self.reasoning.get(name, "") + value
            # any-llm declares `reasoning` on its delta type as an object with `content`.
            declared = getattr(getattr(delta, "reasoning", None), "content", None)
            if "reasoning" not in extra and isinstance(declared, str):
                self.reasoning["reasoning"] = self.reasoning.get("reasoning", "") + declared
            legacy = getattr(delta, "function_call", None)
            if legacy is not None:
                if self.function_call is None:
                    self.function_call = {"name": "", "arguments": ""}
                self.function_call["name"] = (
                    getattr(legacy, "name", None) or self.function_call["name"]
                )
                if isinstance(getattr(legacy, "arguments", None), str):
                    self.function_call["arguments"] += legacy.arguments
            for call in getattr(delta, "tool_calls", None) or []:
                entry = self.calls.setdefault(
                    getattr(call, "index", None),
                    {"id": None, "type": "function", "name": None, "arguments": ""},
                )
                if getattr(call, "id", None):
                    entry["id"] = call.id
                signature = _google_signature(call)
                if signature:
                    entry["signature"] = signature
                fn = getattr(call, "function", None)
                if fn is not None:
                    if fn.name:
                        entry["name"] = fn.name
                    if isinstance(fn.arguments, str):
                        entry["arguments"] += fn.arguments

    def completion(self, openai: Any) -> Any:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": self.content or None,
            "refusal": self.refusal or None,
        }
        message.update({k: v for k, v in self.reasoning.items() if v})
        if self.calls:
            message["tool_calls"] = [
                {
                    "id": c["id"] or "",
                    "type": "function",
                    "function": {"name": c["name"] or "", "arguments": c["arguments"]},
                }
                for _, c in sorted(self.calls.items())
            ]
        if self.function_call is not None:
            message["function_call"] = dict(self.function_call)
        data = {
            "id": self.id or "",
            "object": "chat.completion",
            "created": 0,
            "model": self.model or "",
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
            "usage": self.usage.to_dict(warnings=False) if self.usage is not None else None,
        }
        return openai.types.chat.ChatCompletion.construct(
            **{
                **data,
                "choices": [
                    openai.types.chat.chat_completion.Choice.construct(
                        index=0,
                        finish_reason=self.finish_reason,
                        message=openai.types.chat.ChatCompletionMessage.model_validate(message),
                    )
                ],
                "usage": self.usage,
            }
        )


def _google_signature(obj: Any) -> str | None:
    """Gemini's thoughtSignature as any-llm carries it through OpenAI-shaped chunks: in
    ``extra_content["google"]["thought_signature"]`` of a tool-call delta (or of the delta,
    for a text part), the field Google's own OpenAI-compatible endpoint uses."""
    extra = getattr(obj, "extra_content", None)
    if extra is None:
        extra = (getattr(obj, "model_extra", None) or {}).get("extra_content")
    google = extra.get("google") if isinstance(extra, Mapping) else None
    value = google.get("thought_signature") if isinstance(google, Mapping) else None
    return value if isinstance(value, str) and value else None


def joined_collected(joined: Joined) -> Collected:
    """The joined deltas as a :class:`Collected`, for libraries that yield OpenAI-shaped chunks.

    any-llm and aisuite translate every provider into ``ChatCompletionChunk``s; their users
    join them as users of ``create(stream=True)`` do, so the same joining applies, and their
    own vocabulary (``tool_calls`` for Anthropic's ``tool_use``, ...) is undone by their
    conventions' table.
    """
    content: list[ContentBlock] = []
    for name in _REASONING_FIELDS:
        if joined.reasoning.get(name):
            content.append(ThinkingBlock(content=joined.reasoning[name]))
            break
    if joined.content:
        content.append(TextBlock(content=joined.content, signature=joined.text_signature))
    if joined.refusal:
        content.append(TextBlock(content=joined.refusal))
    for _, call in sorted(joined.calls.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
        content.append(
            ToolCall(
                id=call["id"] or f"toolcall_{len(content)}",
                name=call["name"] or "",
                arguments=tool_arguments(call["arguments"]),
                signature=call.get("signature"),
            )
        )
    usage = None
    if joined.usage is not None:
        u = joined.usage
        details = getattr(u, "prompt_tokens_details", None)
        usage = LibraryUsage(
            input=as_int(getattr(u, "prompt_tokens", None)),
            output=as_int(getattr(u, "completion_tokens", None)),
            cache_read=as_int(getattr(details, "cached_tokens", None)),
            # any-llm reports Anthropic's cache writes (inside prompt_tokens) here.
            cache_write=as_int(getattr(details, "cache_write_tokens", None)),
            total=u.total_tokens if isinstance(getattr(u, "total_tokens", None), int) else None,
        )
    return Collected(
        content=content,
        stop=joined.finish_reason,
        usage=usage,
        model=joined.model,
        response_id=joined.id,
        refusal=joined.refusal or None,
    )
