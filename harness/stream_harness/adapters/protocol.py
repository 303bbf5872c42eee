"""Adapters: the implementations under test, behind one small protocol.

An adapter takes a wire protocol name and a response body as a sequence of byte chunks
(with status and headers) and gives either the unified events (``level = "event"``) or
only the final assistant message (``level = "message"``, for libraries that expose
nothing else). A crash is a result too: the adapter runner catches it and records it, so
one broken library never stops a report.

Third-party adapters register through the entry-point group ``stream_harness.adapters``
or are named on the command line as ``module:object``; the object is an adapter instance,
an adapter class, or a zero-argument factory.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Literal, Protocol, runtime_checkable

from stream_harness import __version__
from stream_harness.contract.events import AssistantMessage, DoneEvent, ErrorEvent, Event
from stream_harness.providers.reference import normalize

AdapterLevel = Literal["event", "message"]
ENTRY_POINT_GROUP = "stream_harness.adapters"


@dataclass(frozen=True, slots=True)
class AdapterResult:
    """What an adapter made of one body.

    ``events`` is set by event-level adapters; ``message`` always (for event-level
    adapters it is the terminal event's message). ``raised`` holds the exception summary
    when the library raised instead of returning (``message`` may still hold what it had
    assembled). ``crashed`` is set by the runner when the adapter itself failed.
    """

    message: AssistantMessage | None
    events: list[Event] | None = None
    raised: str | None = None
    crashed: str | None = None
    # The library's own view, for reports ("what the library returned against the reference").
    raw: Mapping[str, object] = field(default_factory=dict)

    @property
    def terminal(self) -> Literal["done", "error", "raised", "none"]:
        if self.events:
            last = self.events[-1]
            if isinstance(last, DoneEvent):
                return "done"
            if isinstance(last, ErrorEvent):
                return "error"
        if self.raised or self.crashed:
            return "raised"
        if self.message is None:
            return "none"
        return "error" if self.message.stop_reason in ("error", "aborted") else "done"


@runtime_checkable
class Adapter(Protocol):
    """The protocol every implementation under test satisfies."""

    name: str
    level: AdapterLevel
    protocols: frozenset[str]

    def version(self) -> str:
        """The library version that ran (reports record it)."""

    def run(
        self,
        protocol: str,
        chunks: Sequence[bytes],
        *,
        status: int = 200,
        headers: Mapping[str, Sequence[str]] | None = None,
    ) -> AdapterResult:
        """Feed ``chunks`` through the implementation; never called concurrently."""


class ReferenceAdapter:
    """Our own normalizers: the reference every other adapter is compared with."""

    name = "reference"
    level: AdapterLevel = "event"

    def __init__(self) -> None:
        from stream_harness.providers.registry import protocol_ids

        self.protocols = frozenset(protocol_ids())

    def version(self) -> str:
        return __version__

    def run(
        self,
        protocol: str,
        chunks: Sequence[bytes],
        *,
        status: int = 200,
        headers: Mapping[str, Sequence[str]] | None = None,
    ) -> AdapterResult:
        hdrs = {k: list(v) for k, v in (headers or {}).items()}
        events = list(normalize(protocol, chunks, status=status, headers=hdrs))
        last = events[-1] if events else None
        message = last.message if isinstance(last, DoneEvent | ErrorEvent) else None
        return AdapterResult(message=message, events=events)


def safe_run(
    adapter: Adapter,
    protocol: str,
    chunks: Sequence[bytes],
    *,
    status: int = 200,
    headers: Mapping[str, Sequence[str]] | None = None,
) -> AdapterResult:
    """Run an adapter, turning anything it raises into a recorded crash."""
    try:
        return adapter.run(protocol, chunks, status=status, headers=headers)
    except Exception as exc:
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return AdapterResult(message=None, crashed=tb)


class AdapterLoadError(ValueError):
    pass


BUILTIN: dict[str, str] = {
    "reference": "stream_harness.adapters.protocol:ReferenceAdapter",
    "anthropic-sdk": "stream_harness.adapters.anthropic_sdk:AnthropicSDKAdapter",
    "anthropic-sdk-beta": "stream_harness.adapters.anthropic_sdk:AnthropicBetaSDKAdapter",
    "anthropic-sdk-vertex": "stream_harness.adapters.anthropic_sdk:AnthropicVertexSDKAdapter",
    "openai-sdk": "stream_harness.adapters.openai_sdk:OpenAISDKAdapter",
    # Bedrock InvokeModelWithResponseStream (boto3 and botocore are in the sdk extra).
    "boto3-bedrock-invoke": "stream_harness.adapters.bedrock_sdk:Boto3BedrockInvokeAdapter",
    "anthropic-bedrock-sdk": "stream_harness.adapters.bedrock_sdk:AnthropicBedrockSDKAdapter",
}


def _instantiate(obj: object, spec: str) -> Adapter:
    try:
        candidate = obj() if isinstance(obj, type) or (callable(obj) and not isinstance(obj, Adapter)) else obj
    except AdapterLoadError:
        raise
    except ImportError as exc:  # an adapter whose library is not installed
        raise AdapterLoadError(f"adapter {spec!r} cannot start: {exc}") from None
    if not isinstance(candidate, Adapter):
        raise AdapterLoadError(
            f"adapter {spec!r} is not an Adapter (needs name, level, protocols, version(), run())"
        )
    return candidate


def load_adapter(spec: str) -> Adapter:
    """An adapter by built-in name, entry-point name, or ``module:object``."""
    from stream_harness.adapters.registry import THIRD_PARTY

    if "->" in spec and spec.endswith("]"):  # a gateway row: <gateway>[<upstream>-><client>]
        from stream_harness.adapters.gateways.adapter import proxy_adapter

        return proxy_adapter(spec)
    if spec.startswith("cmd:"):  # any executable speaking specs/adapter-protocol.md
        from stream_harness.adapters.stdio import command_adapter

        return command_adapter(spec)
    target = BUILTIN.get(spec) or THIRD_PARTY.get(spec)
    if target is None:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name == spec:
                try:
                    return _instantiate(ep.load(), spec)
                except ImportError as exc:
                    raise AdapterLoadError(f"adapter {spec!r}: cannot import {ep.value}: {exc}") from None
        target = spec
    module_name, _, attr = target.partition(":")
    # As `python -m` does: a module of the user's project, named from the project folder,
    # imports although the console script's own folder is first on sys.path.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    if not attr:
        known = ", ".join(sorted({*BUILTIN, *(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))}))
        raise AdapterLoadError(f"unknown adapter {spec!r} (known: {known}; or give module:object)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AdapterLoadError(f"adapter {spec!r}: cannot import {module_name}: {exc}") from None
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise AdapterLoadError(f"adapter {spec!r}: {module_name} has no {attr!r}") from None
    return _instantiate(obj, spec)


# What `stream-harness report` runs when no adapter is named: the reference and every
# official SDK adapter (the `sdk` extra); the third-party libraries run when named, or
# per environment by `stream-harness matrix`.
DEFAULT_ADAPTERS = ("reference", "anthropic-sdk", "anthropic-sdk-beta", "openai-sdk", "openai-sdk-create", "google-genai",
                    "anthropic-sdk-vertex", "google-genai-vertex")


def available_adapters() -> list[str]:
    """Default adapters that load here (their library is installed), then plugins."""
    names = []
    for name in [*DEFAULT_ADAPTERS, *(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))]:
        try:
            load_adapter(name)
        except AdapterLoadError:
            continue
        names.append(name)
    return names
