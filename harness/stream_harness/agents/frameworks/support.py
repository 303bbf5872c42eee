"""What every framework adapter shares: loading the framework, pointing clients, ending a run.

A framework adapter is a thin wiring module: the harness owns the model server and the
tools, so the adapter only builds the framework's agent around them. What is common to
all of them lives here once: the one-line error when a framework is not installed, the
URLs each kind of client expects, the SDK retry conventions most frameworks inherit, and
turning the framework's raise into an :class:`AgentOutcome` (only the framework's own run
is guarded; a bug in the wiring still escapes, so the runner records a crash, not a row).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
from collections.abc import Awaitable, Callable, Mapping
from types import ModuleType
from typing import Any, Final, TypeVar

from stream_harness.adapters.library import import_all
from stream_harness.agents.protocol import AgentOutcome, AgentTask, AgentTool

T = TypeVar("T")

# The SDK clients frameworks build on, with their retry policies as the pinned versions
# ship them. A framework that keeps the client's defaults inherits these; each adapter's
# ``conventions`` says which it uses and where a framework adds a retry layer of its own.
OPENAI_SDK: Final[Mapping[str, Any]] = {
    "max_retries": 2,
    "retries_after_partial_output": False,
    "retry_after_honoured": True,
    "retry_after_cap_s": 120.0,
    "sources": {
        "max_retries": "openai/_constants.py DEFAULT_MAX_RETRIES = 2 (backoff 0.5 s doubling to 8 s)",
        "retries_after_partial_output": "openai/_base_client.py retries only before the response is returned; a stream that fails while read is the caller's",
        "retry_after": "openai/_base_client.py _calculate_retry_timeout: retry-after-ms / retry-after used when 0 < value <= MAX_RETRY_AFTER_DELAY (2 * 60)",
    },
}
ANTHROPIC_SDK: Final[Mapping[str, Any]] = {
    "max_retries": 2,
    "retries_after_partial_output": False,
    "retry_after_honoured": True,
    "retry_after_cap_s": None,
    "sources": {
        "max_retries": "anthropic/_constants.py DEFAULT_MAX_RETRIES = 2 (backoff 0.5 s doubling to 8 s)",
        "retries_after_partial_output": "anthropic/_base_client.py retries only before the response is returned; a stream that fails while read is the caller's",
        "retry_after": "anthropic/_base_client.py (2.x) _calculate_retry_timeout: any positive retry-after is slept, capped only at 4,294,967 s",
    },
}
GOOGLE_GENAI_SDK: Final[Mapping[str, Any]] = {
    "max_retries": 0,
    "retries_after_partial_output": False,
    "retry_after_honoured": False,
    "retry_after_cap_s": None,
    "sources": {
        "max_retries": "google/genai/_api_client.py retry_args: HttpOptions.retry_options None means stop_after_attempt(1), never retry",
        "retries_after_partial_output": "no retry at all without retry_options",
        "retry_after": "google/genai/_api_client.py retries (when configured) wait by exponential jitter, never retry-after",
    },
}
SDK_BY_PROTOCOL: Final[Mapping[str, Mapping[str, Any]]] = {
    "openai-completions": OPENAI_SDK,
    "openai-responses": OPENAI_SDK,
    "anthropic-messages": ANTHROPIC_SDK,
    "google-generative-ai": GOOGLE_GENAI_SDK,
}


def client_conventions(protocols: frozenset[str], **framework: Any) -> dict[str, Any]:
    """An adapter's conventions: the SDK client's per protocol, then the framework's own.

    The top-level keys are what a check reads first (the framework's own, else the OpenAI
    client's, the one most frameworks use); ``by_protocol`` holds each protocol's client
    policy, because one framework on Anthropic and on Gemini retries differently.
    """
    by_protocol = {p: dict(SDK_BY_PROTOCOL[p]) for p in sorted(protocols) if p in SDK_BY_PROTOCOL}
    first = next(iter(by_protocol.values()), {})
    base = {k: v for k, v in first.items() if k != "sources"}
    sources = dict(first.get("sources", {}))
    sources.update(framework.pop("sources", {}))
    return {**base, **framework, "sources": sources, "by_protocol": by_protocol}


def load(adapter: str, distribution: str, *modules: str) -> list[ModuleType]:
    """The framework's modules, or one line naming the package to install (an ImportError)."""
    loaded = import_all(adapter, distribution, modules)
    return [loaded[m] for m in modules]


def version_of(*distributions: str) -> str:
    """``dist==version`` of each installed distribution (the framework and its model client)."""
    found = []
    for dist in distributions:
        try:
            found.append(f"{dist}=={importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{dist} (not installed)")
    return ", ".join(found)


def openai_url(task: AgentTask) -> str:
    """OpenAI clients take the API root, ``/v1`` included."""
    return task.base_url.rstrip("/") + "/v1"


def root_url(task: AgentTask) -> str:
    """Anthropic and google-genai clients append their own ``/v1/...`` / ``/v1beta/...``."""
    return task.base_url.rstrip("/")


def unsupported(adapter: str, task: AgentTask, protocols: frozenset[str]) -> ValueError:
    return ValueError(
        f"agent adapter {adapter!r} does not speak {task.protocol!r} (it speaks {', '.join(sorted(protocols))})"
    )


def raised(exc: BaseException, **raw: Any) -> AgentOutcome:
    """The framework's raise as the row records it: class name and message."""
    return AgentOutcome(error_type=type(exc).__name__, error_message=str(exc), raw=raw)


def finished(output: Any, **raw: Any) -> AgentOutcome:
    """The framework's final answer; a non-text answer kept as its ``str``."""
    return AgentOutcome(output=output if isinstance(output, str) else str(output), raw=raw)


def run_guarded(
    build: Callable[[], Awaitable[T]], task: AgentTask, answer: Callable[[T], AgentOutcome]
) -> AgentOutcome:
    """Run the framework's coroutine on a fresh event loop, bounded by the task's timeout.

    Only the framework's run is inside the ``try``: ``answer`` (the adapter's reading of
    the result) runs after, so a bug there escapes as a crash instead of a row.
    """

    async def bounded() -> T:
        return await asyncio.wait_for(build(), task.limits.timeout_s)

    try:
        result = asyncio.run(bounded())
    except Exception as exc:  # the framework's raise is the run's outcome
        return raised(exc)
    return answer(result)


def properties(tool: AgentTool) -> tuple[dict[str, Any], list[str]]:
    """The tool schema's properties and required names, for frameworks that want them apart."""
    props = tool.parameters.get("properties") or {}
    required = tool.parameters.get("required") or []
    return dict(props), [str(r) for r in required]


def schema(tool: AgentTool) -> dict[str, Any]:
    """The tool's JSON schema as a plain dict with an object type, which every framework needs."""
    out = dict(tool.parameters)
    out.setdefault("type", "object")
    out.setdefault("properties", {})
    return out
