"""The official SDKs of Bedrock ``InvokeModelWithResponseStream`` as conformance subjects.

:class:`Boto3BedrockInvokeAdapter` (``boto3-bedrock-invoke``): boto3's ``bedrock-runtime``
client, ``invoke_model_with_response_stream`` iterated to the end. boto3 does the HTTP,
the event-stream framing (botocore's ``EventStreamBuffer``, CRCs), the ``PayloadPart``
base64 and turns exception frames and HTTP errors into exceptions; it hands the caller
``{"chunk": {"bytes": b"..."}}`` and nothing more. The model JSON inside is the caller's
business, so this adapter works at the **message level** with a caller's fold of the
decoded chunks (:func:`fold_chunks`: one small reading per family, written from the family
docs independently of the reference's translators). The recorded bytes reach botocore
through its own HTTP layer: a ``before-send`` handler answers the signed request with an
``AWSResponse`` whose raw stream yields the chunks the check chose, so the parser,
``EventStream`` and error handling are boto3's real code; no network.

:class:`AnthropicBedrockSDKAdapter` (``anthropic-bedrock-sdk``): the anthropic SDK's
``AnthropicBedrock().messages.stream(...)`` -> ``get_final_message()``, fed through its
httpx transport (as the anthropic-sdk adapter); the SDK decodes the AWS event stream
itself (``anthropic/lib/bedrock/_stream_decoder.py``, botocore's buffer and parser). It
speaks the Anthropic family only.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from stream_harness.adapters.in_process import Replay, SDKAdapter
from stream_harness.adapters.library import BASE_URL
from stream_harness.adapters.protocol import AdapterResult
from stream_harness.adapters.sdk_support import (
    error_message,
    raised_result,
    require,
    stop_mapping,
    tool_arguments,
)
from stream_harness.adapters.sdks.anthropic_sdk import AnthropicSDKAdapter
from stream_harness.contract.events import (
    AssistantMessage,
    ContentBlock,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    Usage,
)
from stream_harness.providers.coerce import as_int
from stream_harness.providers.stop_reasons import StopMapping

PROTOCOL = "bedrock-invoke-stream"
MODEL_ID = "anthropic.claude-harness-v1:0"
_METRICS = "amazon-bedrock-invocationMetrics"


# -- boto3 ---------------------------------------------------------------------------------


class _RawStream:
    """What botocore reads a response body from (a urllib3 response's small surface)."""

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self._chunks = list(chunks)

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        yield from self._chunks

    def read(self, amt: int | None = None) -> bytes:
        data = b"".join(self._chunks)
        self._chunks = []
        return data

    def close(self) -> None:
        self._chunks = []


class Boto3BedrockInvokeAdapter(SDKAdapter):
    """``boto3.client("bedrock-runtime").invoke_model_with_response_stream`` + a caller's fold."""

    name = "boto3-bedrock-invoke"
    protocols: frozenset[str] = frozenset({PROTOCOL})

    def __init__(self) -> None:
        self._boto3, self._awsrequest, self._config, self._exceptions = require(
            self.name, "boto3", "botocore.awsrequest", "botocore.config", "botocore.exceptions"
        )
        self._built: Any = None
        self._pending: tuple[list[bytes], int, dict[str, str]] = ([], 200, {})

    def version(self) -> str:
        return str(self._boto3.__version__)

    def _client(self) -> Any:
        """One client per adapter (building one loads the service model: most of a run's
        time); each run sets the response its ``before-send`` handler answers with."""
        if self._built is None:
            self._built = runtime_client(
                self._boto3,
                self._awsrequest,
                self._config,
                lambda: self._pending,
                "before-send.bedrock-runtime.InvokeModelWithResponseStream",
            )
        return self._built

    def drive(self, protocol: str, replay: Replay) -> AdapterResult:
        self._pending = eventstream_response(replay)
        client = self._client()
        decoded: list[Any] = []
        try:
            response = client.invoke_model_with_response_stream(modelId=MODEL_ID, body=b"{}")
            for event in response["body"]:
                part = event.get("chunk")
                if part is not None:
                    decoded.append(json.loads(part["bytes"]))
        except Exception as exc:
            # ClientError for an HTTP error status, EventStreamError for an exception
            # frame (both carry the parsed error: response["Error"]["Message"]), botocore's
            # ChecksumMismatch for a damaged frame, a ValueError from json.loads.
            base = fold_chunks(decoded) if decoded else None
            return raised_result(exc, base, {"chunks": decoded}, message=_boto_message(exc))
        return AdapterResult(message=fold_chunks(decoded), raw={"chunks": decoded})


def with_eventstream_type(replay: Replay) -> Replay:
    """``replay`` with the event stream's content type where a recorded success has none:
    the anthropic SDK picks its Bedrock decoder by it, and it is still Bedrock's stream."""
    headers = replay.headers or {}
    if replay.status >= 400 or any(k.lower() == "content-type" for k in headers):
        return replay
    return dataclasses.replace(
        replay, headers={**headers, "content-type": ["application/vnd.amazon.eventstream"]}
    )


def eventstream_response(replay: Replay) -> tuple[list[bytes], int, dict[str, str]]:
    """The run's response as botocore takes it: one header value a name, and the event
    stream's content type where a recording of a success dropped it."""
    hdrs = {k.lower(): ", ".join(v) for k, v in (replay.headers or {}).items()}
    if replay.status < 400:
        hdrs.setdefault("content-type", "application/vnd.amazon.eventstream")
    return list(replay.chunks), replay.status, hdrs


def runtime_client(
    boto3: Any,
    awsrequest: Any,
    config: Any,
    pending: Callable[[], tuple[list[bytes], int, dict[str, str]]],
    event: str,
) -> Any:
    """boto3's ``bedrock-runtime`` client, every request of ``event`` answered with the
    response ``pending()`` names at that moment.

    A ``before-send`` handler hands botocore an ``AWSResponse`` over the recorded chunks,
    so the signing, the event-stream parsing and the errors are boto3's own code and
    nothing leaves the process; one attempt, no retries.
    """

    def answer(request: Any, **_: Any) -> Any:
        chunks, status, headers = pending()
        return awsrequest.AWSResponse(request.url, status, headers, _RawStream(chunks))

    session = boto3.session.Session(
        aws_access_key_id="harness", aws_secret_access_key="harness", region_name="us-east-1"
    )
    client = session.client(
        "bedrock-runtime",
        config=config.Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )
    client.meta.events.register(event, answer)
    return client


def _boto_message(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    error = response.get("Error") if isinstance(response, dict) else None
    if isinstance(error, dict):
        text = error.get("Message") or error.get("message")
        if isinstance(text, str) and text:
            return text
    return error_message(exc)


class _Fold:
    """A caller's reading of decoded InvokeModel chunks, family by family."""

    def __init__(self) -> None:
        self.blocks: dict[Any, dict[str, Any]] = {}
        self.order: list[Any] = []
        self.stop: str | None = None
        self.usage: dict[str, int] = {}
        self.metrics: dict[str, int] = {}
        self.model: str | None = None
        self.response_id: str | None = None
        self.tool_count = 0
        # The family's end marker (message_stop, messageStop, a stop value, stream-end):
        # boto3 raises nothing on a cut body, so a careful caller checks for it.
        self.ended = False

    def block(self, key: Any, kind: str, **fields: Any) -> dict[str, Any]:
        if key not in self.blocks:
            self.blocks[key] = {"kind": kind, "text": "", "signature": "", "args": "", **fields}
            self.order.append(key)
        return self.blocks[key]

    def count(self, name: str, value: Any) -> None:
        number = as_int(value)
        if number is not None:
            self.usage[name] = number

    # -- one chunk per family ---------------------------------------------------------

    def chunk(self, c: dict[str, Any]) -> None:
        if isinstance(c.get(_METRICS), dict):
            m = c[_METRICS]
            for name, key in (
                ("input", "inputTokenCount"),
                ("output", "outputTokenCount"),
                ("cache_read", "cacheReadInputTokenCount"),
                ("cache_write", "cacheWriteInputTokenCount"),
            ):
                number = as_int(m.get(key))
                if number is not None:
                    self.metrics[name] = number
        kind = c.get("type")
        if isinstance(kind, str):
            self.anthropic(kind, c)
        elif any(
            k in c
            for k in (
                "messageStart",
                "contentBlockStart",
                "contentBlockDelta",
                "messageStop",
                "metadata",
            )
        ):
            self.nova(c)
        elif "completion" in c:
            self.text(c.get("completion"))
            self.stopped(c.get("stop_reason"))
        elif "outputText" in c:
            self.text(c.get("outputText"))
            self.stopped(c.get("completionReason"))
            self.count("input", c.get("inputTextTokenCount"))
            self.count("output", c.get("totalOutputTextTokenCount"))
        elif "generation" in c:
            self.text(c.get("generation"))
            self.stopped(c.get("stop_reason"))
            self.count("input", c.get("prompt_token_count"))
            self.count("output", c.get("generation_token_count"))
        elif "event_type" in c:
            self.cohere_chat(c)
        elif "outputs" in c:
            first = c["outputs"][0] if c["outputs"] else {}
            self.text(first.get("text"))
            self.stopped(first.get("stop_reason"))
        elif "text" in c or "is_finished" in c:
            self.text(c.get("text"))
            if c.get("is_finished"):
                self.stopped(c.get("finish_reason"))

    def stopped(self, reason: Any) -> None:
        if isinstance(reason, str):
            self.stop = reason
            self.ended = True

    def text(self, piece: Any) -> None:
        if isinstance(piece, str) and piece:
            self.block(0, "text")["text"] += piece

    def anthropic(self, kind: str, c: dict[str, Any]) -> None:
        if kind == "message_start":
            message = c.get("message") or {}
            self.model, self.response_id = message.get("model"), message.get("id")
            usage = message.get("usage") or {}
            self.count("input", usage.get("input_tokens"))
            self.count("output", usage.get("output_tokens"))
            self.count("cache_read", usage.get("cache_read_input_tokens"))
            self.count("cache_write", usage.get("cache_creation_input_tokens"))
        elif kind == "content_block_start":
            block = c["content_block"]
            btype = block.get("type")
            if btype == "tool_use":
                self.block(c["index"], "tool", id=block.get("id"), name=block.get("name"))
            elif btype == "redacted_thinking":
                self.block(c["index"], "redacted", data=block.get("data"))
            else:
                self.block(c["index"], "thinking" if btype == "thinking" else "text")
        elif kind == "content_block_delta":
            delta = c["delta"]
            b = self.blocks.get(c["index"]) or self.block(c["index"], "text")
            dtype = delta.get("type")
            if dtype == "text_delta":
                b["text"] += delta["text"]
            elif dtype == "thinking_delta":
                b["text"] += delta["thinking"]
            elif dtype == "signature_delta":
                b["signature"] += delta["signature"]
            elif dtype == "input_json_delta":
                b["args"] += delta["partial_json"]
        elif kind == "message_stop":
            self.ended = True
        elif kind == "message_delta":
            self.stop = (c.get("delta") or {}).get("stop_reason") or self.stop
            usage = c.get("usage") or {}
            self.count("output", usage.get("output_tokens"))

    def nova(self, c: dict[str, Any]) -> None:
        if "contentBlockStart" in c:
            start = c["contentBlockStart"]
            tool = start.get("start", {}).get("toolUse")
            if tool:
                self.block(
                    start["contentBlockIndex"],
                    "tool",
                    id=tool.get("toolUseId"),
                    name=tool.get("name"),
                )
        if "contentBlockDelta" in c:
            d = c["contentBlockDelta"]
            delta = d["delta"]
            if "text" in delta:
                self.block(d["contentBlockIndex"], "text")["text"] += delta["text"]
            elif "toolUse" in delta:
                self.blocks[d["contentBlockIndex"]]["args"] += delta["toolUse"].get("input", "")
            elif "reasoningContent" in delta:
                r = delta["reasoningContent"]
                b = self.block(d["contentBlockIndex"], "thinking")
                b["text"] += r.get("text", "")
                b["signature"] += r.get("signature", "")
        if "messageStop" in c:
            self.stop = c["messageStop"].get("stopReason")
            self.ended = True
        if "metadata" in c:
            usage = c["metadata"].get("usage") or {}
            self.count("input", usage.get("inputTokens"))
            self.count("output", usage.get("outputTokens"))
            self.count("cache_read", usage.get("cacheReadInputTokenCount"))
            self.count("cache_write", usage.get("cacheWriteInputTokenCount"))

    def cohere_chat(self, c: dict[str, Any]) -> None:
        kind = c.get("event_type")
        if kind == "stream-start":
            self.response_id = c.get("generation_id")
        elif kind == "text-generation":
            self.text(c.get("text"))
        elif kind == "tool-calls-generation":
            for call in c.get("tool_calls") or []:
                self.tool_count += 1
                key = ("tool", self.tool_count)
                b = self.block(
                    key, "tool", id=f"{call.get('name')}_{self.tool_count}", name=call.get("name")
                )
                b["args"] = json.dumps(call.get("parameters") or {})
        elif kind == "stream-end":
            self.stop = c.get("finish_reason")
            self.ended = True
            billed = ((c.get("response") or {}).get("meta") or {}).get("billed_units") or {}
            self.count("input", billed.get("input_tokens"))
            self.count("output", billed.get("output_tokens"))

    # -- the message ------------------------------------------------------------------

    def message(self) -> AssistantMessage:
        content: list[ContentBlock] = []
        for key in self.order:
            b = self.blocks[key]
            if b["kind"] == "text":
                if b["text"]:
                    content.append(TextBlock(content=b["text"]))
            elif b["kind"] == "thinking":
                content.append(ThinkingBlock(content=b["text"], signature=b["signature"] or None))
            elif b["kind"] == "redacted":
                content.append(ThinkingBlock(content="", signature=b.get("data"), redacted=True))
            else:
                content.append(
                    ToolCall(
                        id=b.get("id") or "",
                        name=b.get("name") or "",
                        arguments=tool_arguments(b["args"]),
                    )
                )
        counts = self.usage or self.metrics
        usage = Usage(
            input=counts.get("input", 0),
            output=counts.get("output", 0),
            cache_read=counts.get("cache_read", 0),
            cache_write=counts.get("cache_write", 0),
            total=sum(counts.get(k, 0) for k in ("input", "output", "cache_read", "cache_write")),
        )
        mapping = stop_mapping(
            PROTOCOL, self.stop, has_tool_calls=any(isinstance(b, ToolCall) for b in content)
        )
        if not self.ended:
            mapping = StopMapping("error", "stream ended without the model's end marker", True)
        return AssistantMessage(
            content=content,
            stop_reason=mapping.reason,
            provider_stop_reason=self.stop,
            usage=usage,
            model=self.model or None,
            response_id=self.response_id or None,
            error_message=mapping.error_message if mapping.reason == "error" else None,
        )


def fold_chunks(chunks: Sequence[Any]) -> AssistantMessage:
    """The final message a boto3 caller assembles from the decoded chunks (module doc)."""
    fold = _Fold()
    for c in chunks:
        if isinstance(c, dict):
            fold.chunk(c)
    return fold.message()


# -- anthropic's AnthropicBedrock ----------------------------------------------------------


class AnthropicBedrockSDKAdapter(AnthropicSDKAdapter):
    """``anthropic.AnthropicBedrock().messages.stream(...)`` -> ``get_final_message()``: the
    anthropic-sdk adapter on the SDK's Bedrock client, whose decoder reads the AWS event
    stream (with botocore) and hands the Anthropic events inside to the same accumulator."""

    name = "anthropic-bedrock-sdk"
    protocols: frozenset[str] = frozenset({PROTOCOL})
    stop_protocol = PROTOCOL
    model = MODEL_ID

    def __init__(self) -> None:
        self._anthropic, self._httpx2, _ = require(self.name, "anthropic", "httpx2", "botocore")

    def _served(self, replay: Replay) -> Replay:
        return with_eventstream_type(replay)

    client_class = "AnthropicBedrock"
    # api_key: Bedrock's bearer-token auth, so no SigV4 signing (and no credentials).
    client_options: ClassVar[Mapping[str, str]] = {
        "api_key": "harness",
        "aws_region": "us-east-1",
        "base_url": BASE_URL,
    }


__all__ = [
    "AnthropicBedrockSDKAdapter",
    "Boto3BedrockInvokeAdapter",
    "eventstream_response",
    "fold_chunks",
    "runtime_client",
    "with_eventstream_type",
]
