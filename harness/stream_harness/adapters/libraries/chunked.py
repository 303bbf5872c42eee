"""any-llm, aisuite and llm: libraries that hand their users OpenAI-shaped chunks.

All three translate every provider into ``ChatCompletionChunk``-like objects (any-llm and
aisuite for Anthropic and Gemini too; llm for OpenAI-compatible servers) and leave the
joining to their users, who join them as users of the openai SDK's
``create(stream=True)`` do (:class:`stream_harness.adapters.sdks.openai_create.Joined`). What is under
test is each library's translation: a field it drops, a stop reason it renames, a chunk
it fails on. Injection recipes are third-party-adapters.md, recipes 7 to 9; conventions
are in ``specs/adapter_conventions.yaml``, sections ``any-llm``, ``aisuite`` and ``llm``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

from stream_harness.adapters.conventions import Collected, LibraryUsage
from stream_harness.adapters.in_process import Replay
from stream_harness.adapters.library import (
    BASE_URL,
    PROMPT,
    Driven,
    LibraryAdapter,
    as_int,
    run_async,
)
from stream_harness.adapters.sdks.google_genai import uses_httpx2
from stream_harness.adapters.sdks.openai_create import Joined, joined_collected
from stream_harness.contract.events import ContentBlock, TextBlock, ToolCall


def _anthropic_http(anthropic: Any) -> Any:
    """anthropic 2.x takes only httpx2 clients, 0.x only httpx (third-party-adapters.md, 1)."""
    major = str(getattr(anthropic, "__version__", "0")).split(".")[0]
    return __import__("httpx2" if major.isdigit() and int(major) >= 1 else "httpx")


class AnyLLMAdapter(LibraryAdapter):
    """``any_llm.acompletion(..., stream=True, client_args=...)``; only async clients exist."""

    name = "any-llm"
    distribution = "any-llm-sdk"
    modules = ("any_llm",)
    protocols: frozenset[str] = frozenset(
        {"openai-completions", "anthropic-messages", "google-generative-ai"}
    )
    _MODELS: Final = {
        "openai-completions": ("openai", "gpt-harness"),
        "anthropic-messages": ("anthropic", "claude-harness"),
        "google-generative-ai": ("gemini", "gemini-harness"),
    }

    def _client_args(self, protocol: str, replay: Replay) -> dict[str, Any]:
        if protocol == "google-generative-ai":
            from google import genai
            from google.genai import types

            http: Any = __import__("httpx2" if uses_httpx2(genai) else "httpx")
            client = http.AsyncClient(transport=self.transport(http, replay))
            return {
                "http_options": types.HttpOptions(
                    httpx_async_client=client, retry_options=types.HttpRetryOptions(attempts=1)
                )
            }
        if protocol == "anthropic-messages":
            http = _anthropic_http(__import__("anthropic"))
        else:
            http = __import__("httpx")
        client = http.AsyncClient(transport=self.transport(http, replay))
        return {"http_client": client, "max_retries": 0}

    def drive(self, protocol: str, replay: Replay) -> Driven:
        any_llm = self.module("any_llm")
        provider, model = self._MODELS[protocol]
        client_args = self._client_args(protocol, replay)
        joined = Joined()

        api_base = f"{BASE_URL}/v1" if provider == "openai" else None
        gemini: Any = None
        if protocol == "google-generative-ai":
            # ``any_llm.acompletion`` is ``AnyLLM.create(...)`` then its ``acompletion``; for
            # Gemini the created AnyLLM is kept, as a user making many calls keeps it: its
            # genai Client loads two SSL contexts (60 ms, ten times a run).
            gemini = self.once(
                protocol,
                lambda: any_llm.AnyLLM.create(
                    any_llm.AnyLLM.resolve_provider_key(provider),
                    api_key="test",
                    api_base=api_base,
                    **client_args,
                ),
            )

        async def go() -> None:
            if gemini is not None:
                stream = await gemini.acompletion(model=model, messages=PROMPT, stream=True)
            else:
                stream = await any_llm.acompletion(
                    model=model,
                    provider=provider,
                    messages=PROMPT,
                    stream=True,
                    api_key="test",
                    api_base=api_base,
                    client_args=client_args,
                )
            async for chunk in stream:
                joined.add(chunk)

        try:
            run_async(go())
        except Exception as exc:
            return Driven(
                raised=exc, partial=joined if joined.chunks else None, raw={"chunks": joined.chunks}
            )
        return Driven(value=joined, raw={"chunks": joined.chunks})

    def collect(self, protocol: str, value: Any) -> Collected:
        collected = joined_collected(value)
        if protocol == "google-generative-ai":
            # any-llm names a Gemini response "chatcmpl-<time.time()>" (the wire's
            # responseId is not kept): a fresh id per call, not the response's.
            return dataclasses.replace(collected, response_id=None)
        return collected


class AISuiteAdapter(LibraryAdapter):
    """``aisuite.Client().chat.completions.create(..., stream=True)`` with the provider's SDK client replaced.

    aisuite passes ``provider_configs`` to both its sync and async SDK constructors, so an
    ``http_client`` there fails one of them; the provider is resolved first and its
    ``client`` replaced (third-party-adapters.md, recipe 8).
    """

    name = "aisuite"
    distribution = "aisuite"
    modules = ("aisuite",)
    protocols: frozenset[str] = frozenset({"openai-completions", "anthropic-messages"})

    def drive(self, protocol: str, replay: Replay) -> Driven:
        key = "openai" if protocol == "openai-completions" else "anthropic"
        http: Any = (
            __import__("httpx") if key == "openai" else _anthropic_http(__import__("anthropic"))
        )
        transport = self.transport(http, replay)
        # Built once per provider: resolving a provider builds its SDK's sync and async
        # clients, two SSL contexts loaded from disk (50 ms, ten times a run).
        client = self.once(key, lambda: self._client(key, http, transport))
        joined = Joined()
        try:
            for chunk in client.chat.completions.create(
                model=f"{key}:harness", messages=PROMPT, stream=True, max_tokens=1024
            ):
                joined.add(chunk)
        except Exception as exc:
            return Driven(
                raised=exc, partial=joined if joined.chunks else None, raw={"chunks": joined.chunks}
            )
        return Driven(value=joined, raw={"chunks": joined.chunks})

    def _client(self, key: str, http: Any, transport: Any) -> Any:
        aisuite = self.module("aisuite")
        client = aisuite.Client({key: {"api_key": "test"}})
        provider, _ = client.chat.completions._resolve_provider(f"{key}:harness")
        if key == "openai":
            import openai

            provider.client = openai.OpenAI(
                api_key="sk-test",
                base_url=f"{BASE_URL}/v1",
                max_retries=0,
                http_client=http.Client(transport=transport),
            )
        else:
            import anthropic

            provider.client = anthropic.Anthropic(
                api_key="test",
                base_url=BASE_URL,
                max_retries=0,
                http_client=http.Client(transport=transport),
            )
        return client

    def collect(self, protocol: str, value: Any) -> Collected:
        return joined_collected(value)


class LLMAdapter(LibraryAdapter):
    """Simon Willison's ``llm``: ``model.prompt(..., stream=True)``, then its response object.

    llm has no client hook: ``_Shared.get_client`` is replaced for the run to return an
    ``openai.OpenAI`` client on the replay transport (third-party-adapters.md, recipe 9).
    The user reads ``response.text()``, ``response.tool_calls()``, ``response.usage()``;
    the finish reason only survives in ``response.response_json`` (its ``combine_chunks``).
    """

    name = "llm"
    distribution = "llm"
    modules = ("llm", "llm.default_plugins.openai_models")
    protocols: frozenset[str] = frozenset({"openai-completions"})

    def drive(self, protocol: str, replay: Replay) -> Driven:
        import openai

        llm = self.module("llm")
        shared = self.module("llm.default_plugins.openai_models")._Shared
        http: Any = __import__("httpx")
        transport = self.transport(http, replay)

        def get_client(_self: Any, key: Any, *, async_: bool = False) -> Any:
            return openai.OpenAI(
                api_key="sk-test",
                base_url=f"{BASE_URL}/v1",
                max_retries=0,
                http_client=http.Client(transport=transport),
            )

        original = shared.get_client
        shared.get_client = get_client
        response = None
        try:
            model = llm.get_model("gpt-4o-mini")
            response = model.prompt("hi", stream=True, key="sk-test")
            text = "".join(response)
            calls = response.tool_calls()
            usage = response.usage()
        except Exception as exc:
            return Driven(raised=exc, raw={})
        finally:
            shared.get_client = original
        return Driven(
            value=(text, calls, usage, response.response_json or {}),
            raw={"response_json": response.response_json},
        )

    def collect(self, protocol: str, value: Any) -> Collected:
        text, calls, usage, response_json = value
        content: list[ContentBlock] = []
        if text:
            content.append(TextBlock(content=text))
        for i, call in enumerate(calls or []):
            args = call.arguments if isinstance(call.arguments, dict) else {}
            content.append(
                ToolCall(
                    id=call.tool_call_id or f"toolcall_{i}", name=call.name or "", arguments=args
                )
            )
        counted = None
        if usage is not None and (usage.input is not None or usage.output is not None):
            details = usage.details or {}
            cached = as_int((details.get("prompt_tokens_details") or {}).get("cached_tokens"))
            counted = LibraryUsage(
                input=as_int(usage.input), output=as_int(usage.output), cache_read=cached
            )
        return Collected(
            content=content,
            stop=response_json.get("finish_reason"),
            usage=counted,
            model=response_json.get("model"),
            response_id=response_json.get("id"),
        )
