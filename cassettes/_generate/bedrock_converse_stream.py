"""Writes the bundled bedrock-converse-stream cassettes from the documented wire format.

Run from the repo root: ``python cassettes/_generate/bedrock_converse_stream.py``, then
refresh specs/expected/bedrock-converse-stream/ with ``stream_harness.recordings.golden.write_expected``
(the golden test prints the exact line) and review the diff.

Every stream is written by hand from the Bedrock API reference (ConverseStreamOutput,
ContentBlockDelta, ReasoningContentBlockDelta, MessageStopEvent, TokenUsage, the
exception members) and the facts in /work/shared/research/provider-facts.md (1.2 the
event-stream framing, 2.5 the event taxonomy, 3.1 stop reasons, 4.3 the overflow
message, 5.4 exceptions and throttling texts); none is copied from the recorded corpus.
The frames are real AWS event-stream frames built with
``stream_harness.wire.eventstream.encode_message`` (prelude, headers, payload, both CRC32s), so
the bodies are binary and dump_cassette stores them as ``!!binary``. The shapes follow
what the service sends:

- frame headers ``:event-type``, ``:content-type: application/json``,
  ``:message-type: event`` (in that order); exception frames ``:exception-type``,
  ``:content-type``, ``:message-type: exception``;
- every event payload carries a ``"p"`` padding field, a prefix of
  ``abc...XYZ0123456789`` of varying length (corpus-visible-notes.md section 4);
- text and reasoning blocks get no ``contentBlockStart`` (only tool use does); ``metadata``
  follows ``messageStop``;
- the request body is Converse JSON with no ``stream`` field: the ``/converse-stream``
  path is what asks for a stream, and the API rejects unknown fields;
- HTTP errors are JSON ``{"message": ...}`` with the exception name in ``x-amzn-errortype``
  (``Name:http://internal.amazon.com/coral/com.amazon.bedrock/``). Bedrock documents no
  ``retry-after`` and no rate-limit headers (provider-facts.md 5.4), so the 429 has none:
  the client falls back to its own backoff.

Request ids, tool-use ids, signatures and redacted payloads are made up (deterministic,
from a label); there are no credentials (no ``authorization``, ``x-amz-security-token``
or ``x-amz-date`` headers), account ids or cookies.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from stream_harness.recordings.cassette import Interaction, Request, Response, dump_cassette  # noqa: E402
from stream_harness.wire.eventstream import encode_message  # noqa: E402

OUT = ROOT / "cassettes" / "bedrock-converse-stream"
HOST = "bedrock-runtime.us-east-1.amazonaws.com"
SONNET = "us.anthropic.claude-sonnet-4-20250514-v1:0"
HAIKU = "us.anthropic.claude-3-5-haiku-20241022-v1:0"
NOVA = "us.amazon.nova-pro-v1:0"
PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def digest(label: str) -> bytes:
    return hashlib.sha256(label.encode()).digest()


def opaque(label: str, size: int) -> bytes:
    """Made-up bytes (signatures, redacted reasoning)."""
    raw = b""
    counter = 0
    while len(raw) < size:
        raw += digest(f"{label}:{counter}")
        counter += 1
    return raw[:size]


def request_id(label: str) -> str:
    return str(uuid.UUID(bytes=digest("request:" + label)[:16], version=4))


def tool_use_id(label: str) -> str:
    # Bedrock's shape: "tooluse_" + 22 url-safe base64 characters.
    return "tooluse_" + base64.urlsafe_b64encode(digest("tool:" + label)).decode()[:22]


class Frames:
    """Builds one event-stream body; the padding length varies per frame, as it does live."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.frames: list[bytes] = []

    def _padding(self) -> str:
        n = digest(f"{self.label}:{len(self.frames)}")[0] % len(PADDING) + 1
        return PADDING[:n]

    def event(self, event_type: str, payload: dict[str, Any]) -> Frames:
        body = dict(payload)
        body["p"] = self._padding()
        # Bedrock's JSON is compact with sorted-looking keys; key order is irrelevant.
        data = json.dumps(dict(sorted(body.items())), separators=(",", ":"), ensure_ascii=False)
        headers = {
            ":event-type": event_type,
            ":content-type": "application/json",
            ":message-type": "event",
        }
        self.frames.append(encode_message(headers, data.encode()))
        return self

    def exception(self, exception_type: str, payload: dict[str, Any]) -> Frames:
        headers = {
            ":exception-type": exception_type,
            ":content-type": "application/json",
            ":message-type": "exception",
        }
        data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
        self.frames.append(encode_message(headers, data.encode()))
        return self

    # -- the events ------------------------------------------------------------

    def start(self) -> Frames:
        return self.event("messageStart", {"role": "assistant"})

    def text(self, index: int, *pieces: str) -> Frames:
        for piece in pieces:
            self.event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": piece}})
        return self

    def reasoning(self, index: int, *pieces: str) -> Frames:
        for piece in pieces:
            self.event(
                "contentBlockDelta",
                {"contentBlockIndex": index, "delta": {"reasoningContent": {"text": piece}}},
            )
        return self

    def signature(self, index: int, signature: str) -> Frames:
        return self.event(
            "contentBlockDelta",
            {"contentBlockIndex": index, "delta": {"reasoningContent": {"signature": signature}}},
        )

    def redacted(self, index: int, *pieces: bytes) -> Frames:
        for piece in pieces:
            self.event(
                "contentBlockDelta",
                {
                    "contentBlockIndex": index,
                    "delta": {
                        "reasoningContent": {"redactedContent": base64.b64encode(piece).decode()}
                    },
                },
            )
        return self

    def tool_start(self, index: int, tool_id: str, name: str) -> Frames:
        return self.event(
            "contentBlockStart",
            {
                "contentBlockIndex": index,
                "start": {"toolUse": {"name": name, "toolUseId": tool_id}},
            },
        )

    def tool_input(self, index: int, *pieces: str) -> Frames:
        for piece in pieces:
            self.event(
                "contentBlockDelta",
                {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}},
            )
        return self

    def stop_block(self, index: int) -> Frames:
        return self.event("contentBlockStop", {"contentBlockIndex": index})

    def stop(self, reason: str, **extra: Any) -> Frames:
        return self.event("messageStop", {"stopReason": reason, **extra})

    def metadata(
        self,
        inp: int,
        out: int,
        *,
        cache_read: int | None = None,
        cache_write: int | None = None,
        latency: int = 800,
        **extra: Any,
    ) -> Frames:
        usage: dict[str, Any] = {"inputTokens": inp, "outputTokens": out}
        if cache_read is not None:
            usage["cacheReadInputTokens"] = cache_read
        if cache_write is not None:
            usage["cacheWriteInputTokens"] = cache_write
        usage["totalTokens"] = inp + out + (cache_read or 0) + (cache_write or 0)
        return self.event("metadata", {"metrics": {"latencyMs": latency}, "usage": usage, **extra})

    def body(self) -> bytes:
        return b"".join(self.frames)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"text": text}]}


WEATHER_TOOL = {
    "toolSpec": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "inputSchema": {
            "json": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
                "required": ["city"],
            }
        },
    }
}
TIME_TOOL = {
    "toolSpec": {
        "name": "get_time",
        "description": "Current local time in an IANA time zone.",
        "inputSchema": {
            "json": {
                "type": "object",
                "properties": {"tz": {"type": "string"}},
                "required": ["tz"],
            }
        },
    }
}


def request(model: str, body: dict[str, Any]) -> Request:
    path_model = model.replace(":", "%3A")
    uri = f"https://{HOST}/model/{path_model}/converse-stream"
    headers = {
        "accept": ["application/json"],
        "content-type": ["application/json"],
        "host": [HOST],
        "user-agent": ["Boto3/1.40.5 md/Botocore#1.40.5 ua/2.1 os/linux lang/python#3.12.3"],
    }
    return Request(method="POST", uri=uri, headers=headers, body=json.dumps(body).encode())


def stream_response(label: str, body: bytes) -> Response:
    headers = {
        "connection": ["keep-alive"],
        "content-type": ["application/vnd.amazon.eventstream"],
        "date": ["Tue, 04 Nov 2025 09:30:00 GMT"],
        "transfer-encoding": ["chunked"],
        "x-amzn-requestid": [request_id(label)],
    }
    return Response(status=200, reason="OK", headers=headers, body=body)


def error_response(label: str, status: int, reason: str, exception: str, message: str) -> Response:
    body = json.dumps({"message": message}).encode()
    headers = {
        "connection": ["keep-alive"],
        "content-length": [str(len(body))],
        "content-type": ["application/json"],
        "date": ["Tue, 04 Nov 2025 09:30:00 GMT"],
        "x-amzn-errortype": [f"{exception}:http://internal.amazon.com/coral/com.amazon.bedrock/"],
        "x-amzn-requestid": [request_id(label)],
    }
    return Response(status=status, reason=reason, headers=headers, body=body)


def stream(label: str, model: str, req_body: dict[str, Any], frames: Frames) -> Interaction:
    return Interaction(0, request(model, req_body), stream_response(label, frames.body()))


# ---------------------------------------------------------------------------
# The cassettes
# ---------------------------------------------------------------------------


def plain_text() -> Interaction:
    f = Frames("plain_text").start()
    f.text(0, "The capital", " of France is", " Paris.").stop_block(0)
    f.stop("end_turn").metadata(14, 9, latency=412)
    body = {
        "messages": [user("What is the capital of France?")],
        "inferenceConfig": {"maxTokens": 512},
    }
    return stream("plain_text", HAIKU, body, f)


def thinking_signature() -> Interaction:
    # provider-facts.md 2.5: reasoningContent.text deltas, then one signature delta, in
    # their own block; the answer is the next block.
    sig = base64.b64encode(opaque("thinking_signature", 240)).decode()
    f = Frames("thinking_signature").start()
    f.reasoning(
        0, "Compare the tenths digits:", " 9.9 has 9 tenths,", " 9.11 has 1 tenth."
    ).signature(0, sig).stop_block(0)
    f.text(1, "9.9 is larger", " than 9.11.").stop_block(1)
    f.stop("end_turn").metadata(48, 112, latency=2210)
    body = {
        "messages": [user("Which is larger, 9.11 or 9.9?")],
        "inferenceConfig": {"maxTokens": 4096},
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
    }
    return stream("thinking_signature", SONNET, body, f)


def redacted_thinking() -> Interaction:
    # case 45: one redacted block sent as three redactedContent deltas. Each is its own
    # base64 blob (7 and 11 bytes leave padding inside the stream), so the pieces must be
    # joined as bytes: b64(piece1 + piece2 + piece3), not the concatenated strings.
    pieces = (
        opaque("redacted:1", 7),
        opaque("redacted:2", 11),
        opaque("redacted:3", 30),
    )
    f = Frames("redacted_thinking").start()
    f.redacted(0, *pieces).stop_block(0)
    f.text(1, "I can't share my reasoning here,", " but the answer is 42.").stop_block(1)
    f.stop("end_turn").metadata(61, 187, latency=5120)
    body = {
        "messages": [user("What is six times seven?")],
        "inferenceConfig": {"maxTokens": 4096},
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 2048}},
    }
    return stream("redacted_thinking", SONNET, body, f)


def tool_call() -> Interaction:
    tid = tool_use_id("tool_call")
    f = Frames("tool_call").start()
    f.text(0, "Let me check", " the weather in Paris.").stop_block(0)
    f.tool_start(1, tid, "get_weather")
    f.tool_input(1, "", '{"city": "Pa', 'ris", "unit"', ': "celsius"}').stop_block(1)
    f.stop("tool_use").metadata(402, 71, latency=1330)
    body = {
        "messages": [user("What's the weather in Paris?")],
        "inferenceConfig": {"maxTokens": 1024},
        "toolConfig": {"tools": [WEATHER_TOOL]},
    }
    return stream("tool_call", SONNET, body, f)


def parallel_tool_calls() -> Interaction:
    a, b = tool_use_id("parallel:a"), tool_use_id("parallel:b")
    f = Frames("parallel_tool_calls").start()
    f.text(0, "I'll look up both.").stop_block(0)
    f.tool_start(1, a, "get_weather").tool_input(1, '{"city":', '"Tokyo"}').stop_block(1)
    f.tool_start(2, b, "get_time").tool_input(2, '{"tz":"Asia/', 'Tokyo"}').stop_block(2)
    f.stop("tool_use").metadata(511, 104, latency=1580)
    body = {
        "messages": [user("Weather and local time in Tokyo?")],
        "inferenceConfig": {"maxTokens": 1024},
        "toolConfig": {"tools": [WEATHER_TOOL, TIME_TOOL]},
    }
    return stream("parallel_tool_calls", SONNET, body, f)


def max_tokens() -> Interaction:
    f = Frames("max_tokens").start()
    f.text(0, "Once upon a time,", " a lighthouse keeper", " found a").stop_block(0)
    f.stop("max_tokens").metadata(12, 16, latency=390)
    body = {"messages": [user("Tell me a long story.")], "inferenceConfig": {"maxTokens": 16}}
    return stream("max_tokens", HAIKU, body, f)


def guardrail_intervened() -> Interaction:
    # case 47: a guardrail replaced the answer; stopReason guardrail_intervened -> error.
    # The guardrail's canned text is the content; metadata.trace says which policy fired.
    f = Frames("guardrail_intervened").start()
    f.text(0, "Sorry, the model cannot answer this question.").stop_block(0)
    f.stop("guardrail_intervened")
    f.metadata(
        25,
        9,
        latency=610,
        trace={
            "guardrail": {
                "outputAssessments": {
                    "gr-example01": [
                        {
                            "contentPolicy": {
                                "filters": [
                                    {"action": "BLOCKED", "confidence": "HIGH", "type": "VIOLENCE"}
                                ]
                            }
                        }
                    ]
                }
            }
        },
    )
    body = {
        "messages": [user("Describe how to hurt someone.")],
        "inferenceConfig": {"maxTokens": 512},
        "guardrailConfig": {
            "guardrailIdentifier": "gr-example01",
            "guardrailVersion": "1",
            "trace": "enabled",
        },
    }
    return stream("guardrail_intervened", NOVA, body, f)


def malformed_tool_use() -> Interaction:
    # case 47: the model wrote tool input the service could not parse; the call streamed
    # so far is kept, and the stream ends in error.
    tid = tool_use_id("malformed_tool_use")
    f = Frames("malformed_tool_use").start()
    f.tool_start(0, tid, "get_weather").tool_input(0, '{"city": "Lyon", "unit": cel').stop_block(0)
    f.stop("malformed_tool_use").metadata(398, 22, latency=700)
    body = {
        "messages": [user("Weather in Lyon?")],
        "inferenceConfig": {"maxTokens": 1024},
        "toolConfig": {"tools": [WEATHER_TOOL]},
    }
    return stream("malformed_tool_use", NOVA, body, f)


def context_window_exceeded() -> Interaction:
    # provider-facts.md 3.1 / 4.3: the stop reason itself says the window is full -> length.
    f = Frames("context_window_exceeded").start()
    f.text(0, "Continuing the summary:", " chapter 12 covers").stop_block(0)
    f.stop("model_context_window_exceeded").metadata(199_871, 129, latency=9870)
    body = {
        "messages": [user("Summarize the attached book, chapter by chapter.")],
        "inferenceConfig": {"maxTokens": 8192},
    }
    return stream("context_window_exceeded", SONNET, body, f)


def throttling_midstream() -> Interaction:
    # case 44, provider-facts.md 5.4: a throttlingException frame after text. Its text
    # "Too many tokens, ..." must classify as a rate limit, not as a context overflow.
    f = Frames("throttling_midstream").start()
    f.text(0, "Here is the first part", " of the answer")
    f.exception(
        "throttlingException", {"message": "Too many tokens, please wait before trying again."}
    )
    body = {"messages": [user("Explain event sourcing.")], "inferenceConfig": {"maxTokens": 2048}}
    return stream("throttling_midstream", SONNET, body, f)


def model_stream_error() -> Interaction:
    # provider-facts.md 2.5 / 5.4: modelStreamErrorException (424) is the "streaming error
    # occurred, retry" case; its payload names the model's own status and message.
    f = Frames("model_stream_error").start()
    f.reasoning(0, "The user wants a haiku", " about autumn.")
    f.exception(
        "modelStreamErrorException",
        {
            "message": "Model stream error: the model returned an error while streaming.",
            "originalMessage": "upstream connect error",
            "originalStatusCode": 503,
        },
    )
    body = {
        "messages": [user("Write a haiku about autumn.")],
        "inferenceConfig": {"maxTokens": 2048},
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
    }
    return stream("model_stream_error", SONNET, body, f)


def http_400_context_overflow() -> Interaction:
    # provider-facts.md 4.3: 400 ValidationException "Input is too long for requested model."
    req = request(
        SONNET,
        {"messages": [user("word " * 40)], "inferenceConfig": {"maxTokens": 1024}},
    )
    resp = error_response(
        "http_400_context_overflow",
        400,
        "Bad Request",
        "ValidationException",
        "Input is too long for requested model.",
    )
    return Interaction(0, req, resp)


def http_429_throttling() -> Interaction:
    # provider-facts.md 5.4: "Too many requests, please wait before trying again.";
    # the exception name is in x-amzn-errortype (no retry-after: none is documented).
    req = request(SONNET, {"messages": [user("hello")], "inferenceConfig": {"maxTokens": 256}})
    resp = error_response(
        "http_429_throttling",
        429,
        "Too Many Requests",
        "ThrottlingException",
        "Too many requests, please wait before trying again.",
    )
    return Interaction(0, req, resp)


def cache_usage() -> Interaction:
    # TokenUsage with both cache counters; inputTokens excludes them, totalTokens adds
    # all four (provider-facts.md 2.5).
    f = Frames("cache_usage").start()
    f.text(0, "Section 3 defines", " the termination clause.").stop_block(0)
    f.stop("end_turn").metadata(21, 11, cache_read=3072, cache_write=512, latency=640)
    body = {
        "system": [
            {"text": "You answer questions about the contract below. ..."},
            {"cachePoint": {"type": "default"}},
        ],
        "messages": [user("Which section covers termination?")],
        "inferenceConfig": {"maxTokens": 512},
    }
    return stream("cache_usage", SONNET, body, f)


def crc_corruption() -> Interaction:
    # case 42: the fourth frame's message CRC is damaged (one payload byte flipped): the
    # text of the frames before it is kept and the stream ends in a framing error.
    f = Frames("crc_corruption").start()
    f.text(0, "The first sentence arrives intact.", " So does the second.", " This one")
    f.text(0, " is never seen.").stop_block(0).stop("end_turn").metadata(10, 20)
    frames = list(f.frames)
    damaged = bytearray(frames[3])
    damaged[-10] ^= 0x20  # inside the JSON payload, before the 4-byte CRC
    frames[3] = bytes(damaged)
    body = {"messages": [user("Say three sentences.")], "inferenceConfig": {"maxTokens": 256}}
    return Interaction(0, request(HAIKU, body), stream_response("crc_corruption", b"".join(frames)))


def leftover_bytes() -> Interaction:
    # case 43: the connection dropped in the middle of a frame: 37 bytes of the next
    # frame arrived. An incomplete frame is an error, never a silent success.
    f = Frames("leftover_bytes").start()
    f.text(0, "Step one: preheat", " the oven.", " Step two:")
    cut = f.frames.pop()
    f.frames.append(cut[:37])
    body = {"messages": [user("How do I bake bread?")], "inferenceConfig": {"maxTokens": 1024}}
    return stream("leftover_bytes", HAIKU, body, f)


CASSETTES = {
    "plain_text": plain_text,
    "thinking_signature": thinking_signature,
    "redacted_thinking": redacted_thinking,
    "tool_call": tool_call,
    "parallel_tool_calls": parallel_tool_calls,
    "max_tokens": max_tokens,
    "guardrail_intervened": guardrail_intervened,
    "malformed_tool_use": malformed_tool_use,
    "context_window_exceeded": context_window_exceeded,
    "throttling_midstream": throttling_midstream,
    "model_stream_error": model_stream_error,
    "http_400_context_overflow": http_400_context_overflow,
    "http_429_throttling": http_429_throttling,
    "cache_usage": cache_usage,
    "crc_corruption": crc_corruption,
    "leftover_bytes": leftover_bytes,
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in CASSETTES.items():
        dump_cassette([build()], OUT / f"{name}.yaml")
        print(f"wrote {OUT / name}.yaml")


if __name__ == "__main__":
    main()
