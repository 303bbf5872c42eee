"""What the SDK and library adapters share: the missing-SDK error, the transport seam,
and the convention helpers every mapping uses (tool-argument decoding, exception
summaries, stop reasons).

Kept out of the package's ``__init__`` so that importing one adapter module (or
``stream_harness.adapters.protocol``) does not load the replay transport and the stop
table, and so that the modules that need these helpers name where they come from.
"""

from __future__ import annotations

import importlib
import json
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from types import ModuleType
from typing import Any, Final

from stream_harness.adapters.protocol import AdapterLoadError, AdapterResult
from stream_harness.contract.events import (
    AssistantMessage,
    ContentBlock,
    ProviderBlock,
    ToolCall,
    Usage,
)
from stream_harness.errors.body import error_details_from_body
from stream_harness.providers.stop_reasons import StopMapping, map_stop_reason
from stream_harness.recordings.cassette import Response
from stream_harness.recordings.transport import replay_transport

__all__ = [
    "INSTALL_HINT",
    "RAW_ARGUMENTS_KEY",
    "SDKMissingError",
    "error_message",
    "exception_summary",
    "failed_message",
    "final_message",
    "library_warnings",
    "raised_result",
    "require",
    "serve",
    "stop_mapping",
    "tool_arguments",
    "with_warnings",
]

INSTALL_HINT: Final = "pip install 'stream-harness[sdk]'"

# Tool arguments that are not a JSON object are kept under this key, so that a library
# handing its user an unparsable string shows as a content difference, not as `{}`.
RAW_ARGUMENTS_KEY: Final = "_raw"


class SDKMissingError(AdapterLoadError, ImportError):
    """An adapter's library is not installed.

    Both an ``AdapterLoadError`` (``load_adapter`` passes it on unchanged, so the CLI prints
    one line) and an ``ImportError`` (what Python code that constructs the adapter itself
    expects for a missing optional dependency).
    """

    def __init__(self, adapter: str, package: str) -> None:
        super().__init__(f"adapter {adapter!r} needs the {package} package: {INSTALL_HINT}")
        self.adapter = adapter
        self.package = package


def require(adapter: str, *modules: str) -> tuple[ModuleType, ...]:
    """Import the library modules an adapter needs, or raise :class:`SDKMissingError`."""
    loaded = []
    for name in modules:
        try:
            loaded.append(importlib.import_module(name))
        except ImportError:
            raise SDKMissingError(adapter, name.split(".")[0]) from None
    return tuple(loaded)


def serve(
    httpx_module: ModuleType,
    chunks: Sequence[bytes],
    *,
    status: int,
    headers: Mapping[str, Sequence[str]] | None,
) -> Any:
    """A transport answering every request with the recorded response, body in ``chunks``.

    A streamed success without a ``content-type`` gets ``text/event-stream``: some
    recorders strip every response header (openinference), and the server did send it.
    """
    hdrs = {k.lower(): list(v) for k, v in (headers or {}).items()}
    if status < 400 and "content-type" not in hdrs:
        hdrs["content-type"] = ["text/event-stream"]
    response = Response(status=status, reason="", headers=hdrs, body=b"".join(chunks))
    return replay_transport(response, list(chunks), httpx_module=httpx_module)


@contextmanager
def library_warnings() -> Iterator[list[str]]:
    """Collect the warnings a library emits during one run instead of printing them.

    The openai SDK dumps its snapshot models while accumulating, and pydantic warns on
    every off-spec value (Mistral's content lists); printed, they would bury the report.
    Kept as text, they go into ``AdapterResult.raw``.
    """
    collected: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield collected
    collected.extend(" ".join(str(w.message).split()) for w in caught)


def with_warnings(result: AdapterResult, seen: list[str]) -> AdapterResult:
    """``result`` with the collected library warnings added to its ``raw`` view."""
    if not seen:
        return result
    return replace(result, raw={**result.raw, "warnings": list(seen)})


def tool_arguments(text: str | None) -> dict[str, Any]:
    """A tool call's argument string as the contract's object.

    An empty string is ``{}`` (a tool without parameters, streamed as ``""``, bugs 10-11);
    a JSON object is itself; anything else (invalid JSON such as two objects run together,
    or JSON that is not an object) is ``{"_raw": text}``, keeping what the user got.
    """
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {RAW_ARGUMENTS_KEY: text}
    return value if isinstance(value, dict) else {RAW_ARGUMENTS_KEY: text}


def stop_mapping(
    protocol: str,
    raw: str | None,
    *,
    has_tool_calls: bool,
    details: str | None = None,
    refusal: bool = False,
) -> StopMapping:
    """The contract's stop reason for the library's raw value: the table's, never the library's.

    Libraries report the provider's raw value (anthropic, openai) or a vocabulary of their
    own; the mapping to ``stop | length | tool_use | error`` is ours
    (``specs/stop_reasons.yaml``, with its tool-call and refusal overrides), so that a
    stop-reason difference is always a difference in the raw value the library kept.
    """
    return map_stop_reason(
        protocol, raw, has_tool_calls=has_tool_calls, details=details, refusal=refusal
    )


def final_message(
    protocol: str,
    content: list[ContentBlock],
    raw: str | None,
    final: Any,
    *,
    usage: Usage,
    provider_blocks: list[ProviderBlock],
    details: str | None = None,
    refusal: bool = False,
) -> AssistantMessage:
    """An SDK's ``final`` object, read into its parts, as the contract's message.

    The stop reason is the table's for the raw value the SDK kept (:func:`stop_mapping`),
    with its error message only when that reason is ``error``; the model and id are the
    object's (every SDK's final object has both), an empty one none, as the reference has it.
    """
    mapping = stop_mapping(
        protocol,
        raw,
        has_tool_calls=any(isinstance(b, ToolCall) for b in content),
        details=details,
        refusal=refusal,
    )
    return AssistantMessage(
        content=content,
        stop_reason=mapping.reason,
        provider_stop_reason=raw,
        usage=usage,
        model=final.model or None,
        response_id=final.id or None,
        error_message=mapping.error_message if mapping.reason == "error" else None,
        provider_blocks=provider_blocks,
    )


def exception_summary(exc: BaseException) -> str:
    """``Type: message`` on one line, as ``AdapterResult.raised`` records it."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def error_message(exc: BaseException) -> str:
    """The provider's message from an SDK exception, else the exception's own text.

    Both SDKs keep the decoded error body on ``exc.body`` (anthropic: the whole body;
    openai: the ``error`` object inside it) and ``exc.message``, which for HTTP errors is
    ``"Error code: 429 - {...}"``. The provider's ``message`` is what a user would show.
    """
    found = _provider_message(exc)
    if found:
        return found
    # A library that wraps the SDK's error in its own (``raise ... from err``:
    # langchain-google-genai's GoogleRateLimitError around google-genai's ClientError)
    # hands the SDK's exception over as ``__cause__``: its message is the provider's.
    cause = exc.__cause__
    for _ in range(3):
        if cause is None:
            break
        found = _provider_message(cause)
        if found:
            return found
        cause = cause.__cause__
    # A bare exception (RuntimeError, AssertionError, TypeError from an accumulator): its
    # text, or its type when it has none, since an error message is never empty (C11).
    return " ".join(str(exc).split()) or type(exc).__name__


def _provider_message(exc: BaseException) -> str | None:
    for candidate in (
        getattr(exc, "api_message", None),
        _body_message(getattr(exc, "body", None)),
        getattr(exc, "message", None),
    ):
        if isinstance(candidate, str) and candidate:
            return candidate
    return None


def _body_message(body: object) -> str | None:
    if isinstance(body, str) and body.lstrip().startswith("{"):
        # The mistralai SDK keeps the body as text (``SDKError.body``): read it as the
        # reference reads an error body, so the provider's message is the same.
        return error_details_from_body(body).message
    if not isinstance(body, Mapping):
        return None
    inner = body.get("error")
    if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
        return str(inner["message"])
    message = body.get("message")
    return message if isinstance(message, str) else None


def failed_message(base: AssistantMessage | None, message: str) -> AssistantMessage:
    """The message of a run the library ended by raising: what it had, ending in ``error``."""
    if base is None:
        return AssistantMessage(stop_reason="error", error_message=message, usage=Usage())
    return base.model_copy(update={"stop_reason": "error", "error_message": message})


def raised_result(
    exc: BaseException,
    base: AssistantMessage | None,
    raw: Mapping[str, Any],
    *,
    message: str | None = None,
) -> AdapterResult:
    """The result of a run the library ended by raising: what it had (``base``), ending in
    ``error`` with the provider's message (or ``message``, where the adapter reads it
    elsewhere), the raise recorded beside the library objects of ``raw``."""
    summary = exception_summary(exc)
    return AdapterResult(
        message=failed_message(base, message or error_message(exc)),
        raised=summary,
        raw={"exception": summary, **raw},
    )
