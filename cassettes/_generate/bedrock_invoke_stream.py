"""Writes the bundled bedrock-invoke-stream cassettes from the documented wire format.

Run from the repo root: ``python cassettes/_generate/bedrock_invoke_stream.py``, then
``stream-harness bless cassettes/bedrock-invoke-stream`` and review the diff.

Every stream is written by hand from the AWS documentation: the API reference
(``InvokeModelWithResponseStream``, ``ResponseStream``, ``PayloadPart``, the exception
members) and each model family's "Inference request parameters and response fields" page
(Anthropic Claude Messages and Text Completions, Amazon Nova, Titan Text, Meta Llama,
Mistral, Cohere Command and Command R); none is copied from the recorded corpus. The
frames are real AWS event-stream frames (``stream_harness.wire.eventstream.encode_message``):

- every chunk frame has the headers ``:event-type: chunk``, ``:content-type:
  application/json``, ``:message-type: event`` and the payload ``{"bytes": <base64 of the
  model's JSON chunk>, "p": <padding>}``, the padding a prefix of ``abc...XYZ0123456789``
  of varying length (what live traffic shows);
- the model's last chunk carries ``amazon-bedrock-invocationMetrics`` (inputTokenCount,
  outputTokenCount, invocationLatency, firstByteLatency);
- exception frames: ``:exception-type``, ``:content-type``, ``:message-type: exception``
  and a JSON ``{"message": ...}`` payload;
- the request body is the model's native JSON (``anthropic_version``, ``inputText``,
  ``prompt``, ``message``, ...), sent to ``/model/{modelId}/invoke-with-response-stream``;
- HTTP errors are JSON ``{"message": ...}`` with the exception name in
  ``x-amzn-errortype``, as for ConverseStream (cassettes/_generate/bedrock_converse_stream.py).

Ids, signatures and latencies are made up (deterministic, from a label); there are no
credentials (no ``authorization``, ``x-amz-security-token`` or ``x-amz-date`` headers).
"""

from __future__ import annotations

import base64
import json
import sys
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bedrock_converse_stream import (  # noqa: E402
    HOST,
    PADDING,
    ROOT,
    digest,
    error_response,
    opaque,
    request_id,
)

from stream_harness.recordings.cassette import Interaction, Request, Response, dump_cassette  # noqa: E402
from stream_harness.wire.eventstream import encode_message  # noqa: E402

OUT = ROOT / "cassettes" / "bedrock-invoke-stream"

SONNET = "us.anthropic.claude-sonnet-4-20250514-v1:0"
HAIKU = "anthropic.claude-3-5-haiku-20241022-v1:0"
CLAUDE_V2 = "anthropic.claude-v2:1"
NOVA = "us.amazon.nova-lite-v1:0"
TITAN = "amazon.titan-text-express-v1"
LLAMA = "meta.llama3-1-8b-instruct-v1:0"
MISTRAL = "mistral.mistral-7b-instruct-v0:2"
COMMAND = "cohere.command-text-v14"
COMMAND_R = "cohere.command-r-plus-v1:0"


def toolu(label: str) -> str:
    # Anthropic-on-Bedrock tool ids: "toolu_bdrk_" + 24 base62-looking characters.
    return "toolu_bdrk_01" + base64.b32encode(digest("toolu:" + label)).decode()[:22]


def msg_id(label: str) -> str:
    return "msg_bdrk_01" + base64.b32encode(digest("msg:" + label)).decode()[:22]


def metrics(inp: int, out: int, latency: int, first_byte: int) -> dict[str, int]:
    return {
        "inputTokenCount": inp,
        "outputTokenCount": out,
        "invocationLatency": latency,
        "firstByteLatency": first_byte,
    }


class Chunks:
    """One InvokeModelWithResponseStream body: chunk frames (and exception frames)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.frames: list[bytes] = []

    def _padding(self) -> str:
        n = digest(f"{self.label}:{len(self.frames)}")[0] % len(PADDING) + 1
        return PADDING[:n]

    def chunk(self, obj: dict[str, Any]) -> Chunks:
        inner = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
        part = {"bytes": base64.b64encode(inner).decode(), "p": self._padding()}
        headers = {
            ":event-type": "chunk",
            ":content-type": "application/json",
            ":message-type": "event",
        }
        self.frames.append(
            encode_message(headers, json.dumps(part, separators=(",", ":")).encode())
        )
        return self

    def exception(self, exception_type: str, message: str, **extra: Any) -> Chunks:
        headers = {
            ":exception-type": exception_type,
            ":content-type": "application/json",
            ":message-type": "exception",
        }
        data = json.dumps({"message": message, **extra}, separators=(",", ":"))
        self.frames.append(encode_message(headers, data.encode()))
        return self

    def body(self) -> bytes:
        return b"".join(self.frames)


def request(model: str, body: dict[str, Any], *, stream: bool = True) -> Request:
    path_model = model.replace(":", "%3A")
    action = "invoke-with-response-stream" if stream else "invoke"
    headers = {
        "accept": ["application/json"],
        "content-type": ["application/json"],
        "host": [HOST],
        "user-agent": ["Boto3/1.40.5 md/Botocore#1.40.5 ua/2.1 os/linux lang/python#3.12.3"],
        "x-amzn-bedrock-accept": ["application/json"],
    }
    return Request(
        method="POST",
        uri=f"https://{HOST}/model/{path_model}/{action}",
        headers=headers,
        body=json.dumps(body).encode(),
    )


def stream_response(label: str, body: bytes) -> Response:
    headers = {
        "connection": ["keep-alive"],
        "content-type": ["application/vnd.amazon.eventstream"],
        "date": ["Wed, 05 Nov 2025 14:10:00 GMT"],
        "transfer-encoding": ["chunked"],
        "x-amzn-bedrock-content-type": ["application/json"],
        "x-amzn-requestid": [request_id("invoke:" + label)],
    }
    return Response(status=200, reason="OK", headers=headers, body=body)


def stream(label: str, model: str, req_body: dict[str, Any], chunks: Chunks) -> Interaction:
    return Interaction(0, request(model, req_body), stream_response(label, chunks.body()))


# -- Anthropic Messages chunks ------------------------------------------------------------


def anthropic_request(prompt: str, max_tokens: int = 1024, **extra: Any) -> dict[str, Any]:
    return {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": max_tokens,
        "messages": [{"role": "user", "content": prompt}],
        **extra,
    }


class Claude:
    """Anthropic Messages events as Bedrock wraps them (one event per chunk)."""

    def __init__(self, label: str, model: str, input_tokens: int) -> None:
        self.c = Chunks(label)
        self.c.chunk(
            {
                "type": "message_start",
                "message": {
                    "id": msg_id(label),
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": input_tokens, "output_tokens": 1},
                },
            }
        )

    def block(self, index: int, block: dict[str, Any]) -> Claude:
        self.c.chunk({"type": "content_block_start", "index": index, "content_block": block})
        return self

    def delta(self, index: int, delta: dict[str, Any]) -> Claude:
        self.c.chunk({"type": "content_block_delta", "index": index, "delta": delta})
        return self

    def text(self, index: int, *pieces: str) -> Claude:
        self.block(index, {"type": "text", "text": ""})
        for piece in pieces:
            self.delta(index, {"type": "text_delta", "text": piece})
        return self.stop_block(index)

    def tool(self, index: int, tool_id: str, name: str, *pieces: str) -> Claude:
        self.block(index, {"type": "tool_use", "id": tool_id, "name": name, "input": {}})
        for piece in ("", *pieces):
            self.delta(index, {"type": "input_json_delta", "partial_json": piece})
        return self.stop_block(index)

    def stop_block(self, index: int) -> Claude:
        self.c.chunk({"type": "content_block_stop", "index": index})
        return self

    def end(
        self, reason: str, output: int, m: dict[str, int], sequence: str | None = None
    ) -> Chunks:
        self.c.chunk(
            {
                "type": "message_delta",
                "delta": {"stop_reason": reason, "stop_sequence": sequence},
                "usage": {"output_tokens": output},
            }
        )
        self.c.chunk({"type": "message_stop", "amazon-bedrock-invocationMetrics": m})
        return self.c


WEATHER = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
TIME = {
    "name": "get_time",
    "description": "Current local time in an IANA time zone.",
    "input_schema": {
        "type": "object",
        "properties": {"tz": {"type": "string"}},
        "required": ["tz"],
    },
}


def anthropic_text() -> Interaction:
    c = Claude("anthropic_text", "claude-3-5-haiku-20241022", 14)
    c.text(0, "The capital", " of France", " is Paris.")
    body = c.end("end_turn", 9, metrics(14, 9, 402, 310))
    return stream("anthropic_text", HAIKU, anthropic_request("Capital of France?"), body)


def anthropic_thinking() -> Interaction:
    sig = base64.b64encode(opaque("invoke:thinking", 180)).decode()
    c = Claude("anthropic_thinking", "claude-sonnet-4-20250514", 46)
    c.block(0, {"type": "thinking", "thinking": "", "signature": ""})
    c.delta(0, {"type": "thinking_delta", "thinking": "9.9 has 9 tenths;"})
    c.delta(0, {"type": "thinking_delta", "thinking": " 9.11 has 1 tenth."})
    c.delta(0, {"type": "signature_delta", "signature": sig}).stop_block(0)
    c.text(1, "9.9 is larger", " than 9.11.")
    body = c.end("end_turn", 118, metrics(46, 118, 3120, 1405))
    req = anthropic_request(
        "Which is larger, 9.11 or 9.9?", 4096, thinking={"type": "enabled", "budget_tokens": 1024}
    )
    return stream("anthropic_thinking", SONNET, req, body)


def anthropic_tool_call() -> Interaction:
    c = Claude("anthropic_tool_call", "claude-sonnet-4-20250514", 398)
    c.text(0, "I'll check the weather", " in Paris.")
    c.tool(1, toolu("tool_call"), "get_weather", '{"city": ', '"Par', 'is"}')
    body = c.end("tool_use", 67, metrics(398, 67, 1710, 820))
    req = anthropic_request("Weather in Paris?", tools=[WEATHER])
    return stream("anthropic_tool_call", SONNET, req, body)


def anthropic_parallel_tools() -> Interaction:
    c = Claude("anthropic_parallel_tools", "claude-sonnet-4-20250514", 512)
    c.text(0, "Looking up both.")
    c.tool(1, toolu("parallel:a"), "get_weather", '{"city"', ': "Tokyo"}')
    c.tool(2, toolu("parallel:b"), "get_time", '{"tz": "Asia/', 'Tokyo"}')
    body = c.end("tool_use", 101, metrics(512, 101, 2050, 790))
    req = anthropic_request("Weather and local time in Tokyo?", tools=[WEATHER, TIME])
    return stream("anthropic_parallel_tools", SONNET, req, body)


def anthropic_max_tokens() -> Interaction:
    c = Claude("anthropic_max_tokens", "claude-3-5-haiku-20241022", 12)
    c.text(0, "Once upon a time,", " a lighthouse keeper", " found")
    body = c.end("max_tokens", 16, metrics(12, 16, 380, 290))
    return stream("anthropic_max_tokens", HAIKU, anthropic_request("Tell a long story.", 16), body)


def anthropic_stop_sequence() -> Interaction:
    c = Claude("anthropic_stop_sequence", "claude-3-5-haiku-20241022", 20)
    c.text(0, "1. Apples\n", "2. Pears\n")
    body = c.end("stop_sequence", 11, metrics(20, 11, 350, 260), sequence="3.")
    req = anthropic_request("List fruit.", stop_sequences=["3."])
    return stream("anthropic_stop_sequence", HAIKU, req, body)


def anthropic_model_stream_error() -> Interaction:
    # A modelStreamErrorException frame after some text: the text is kept, the error is
    # retryable (the "streaming error occurred, retry" member).
    c = Claude("anthropic_model_stream_error", "claude-sonnet-4-20250514", 30)
    c.block(0, {"type": "text", "text": ""})
    c.delta(0, {"type": "text_delta", "text": "Event sourcing stores"})
    c.delta(0, {"type": "text_delta", "text": " every change as"})
    body = c.c.exception(
        "modelStreamErrorException",
        "The model returned an error while streaming.",
        originalStatusCode=529,
        originalMessage="Overloaded",
    )
    return stream(
        "anthropic_model_stream_error", SONNET, anthropic_request("Explain event sourcing."), body
    )


def anthropic_truncated() -> Interaction:
    # The connection dropped inside a frame: 41 bytes of the next chunk frame arrived.
    c = Claude("anthropic_truncated", "claude-3-5-haiku-20241022", 18)
    c.block(0, {"type": "text", "text": ""})
    c.delta(0, {"type": "text_delta", "text": "Step one: preheat"})
    c.delta(0, {"type": "text_delta", "text": " the oven."})
    c.delta(0, {"type": "text_delta", "text": " Step two:"})
    cut = c.c.frames.pop()
    c.c.frames.append(cut[:41])
    return stream("anthropic_truncated", HAIKU, anthropic_request("How do I bake bread?"), c.c)


# -- Amazon Nova ------------------------------------------------------------------------


def nova_request(prompt: str, max_tokens: int = 512, **extra: Any) -> dict[str, Any]:
    return {
        "schemaVersion": "messages-v1",
        "messages": [{"role": "user", "content": [{"text": prompt}]}],
        "inferenceConfig": {"maxTokens": max_tokens},
        **extra,
    }


def nova_end(c: Chunks, reason: str, inp: int, out: int, latency: int) -> Chunks:
    c.chunk({"messageStop": {"stopReason": reason}})
    usage = {
        "inputTokens": inp,
        "outputTokens": out,
        "cacheReadInputTokenCount": 0,
        "cacheWriteInputTokenCount": 0,
    }
    m = metrics(inp, out, latency, latency // 2)
    m.update(cacheReadInputTokenCount=0, cacheWriteInputTokenCount=0)
    return c.chunk(
        {
            "metadata": {"usage": usage, "metrics": {}, "trace": {}},
            "amazon-bedrock-invocationMetrics": m,
        }
    )


def nova_text() -> Interaction:
    c = Chunks("nova_text").chunk({"messageStart": {"role": "assistant"}})
    for piece in ("Red, yellow", " and blue", " are the primary colors."):
        c.chunk({"contentBlockDelta": {"delta": {"text": piece}, "contentBlockIndex": 0}})
    c.chunk({"contentBlockStop": {"contentBlockIndex": 0}})
    nova_end(c, "end_turn", 11, 12, 260)
    return stream("nova_text", NOVA, nova_request("Name the primary colors."), c)


def nova_tool_call() -> Interaction:
    tid = "tooluse_" + base64.urlsafe_b64encode(digest("nova:tool")).decode()[:22]
    c = Chunks("nova_tool_call").chunk({"messageStart": {"role": "assistant"}})
    c.chunk(
        {"contentBlockDelta": {"delta": {"text": "Checking the weather."}, "contentBlockIndex": 0}}
    )
    c.chunk({"contentBlockStop": {"contentBlockIndex": 0}})
    c.chunk(
        {
            "contentBlockStart": {
                "start": {"toolUse": {"toolUseId": tid, "name": "get_weather"}},
                "contentBlockIndex": 1,
            }
        }
    )
    c.chunk(
        {
            "contentBlockDelta": {
                "delta": {"toolUse": {"input": '{"city":"Lima"}'}},
                "contentBlockIndex": 1,
            }
        }
    )
    c.chunk({"contentBlockStop": {"contentBlockIndex": 1}})
    nova_end(c, "tool_use", 420, 38, 610)
    tools = {
        "tools": [
            {
                "toolSpec": {
                    "name": "get_weather",
                    "description": "Current weather for a city.",
                    "inputSchema": {"json": WEATHER["input_schema"]},
                }
            }
        ]
    }
    return stream("nova_tool_call", NOVA, nova_request("Weather in Lima?", toolConfig=tools), c)


def nova_max_tokens() -> Interaction:
    c = Chunks("nova_max_tokens").chunk({"messageStart": {"role": "assistant"}})
    c.chunk({"contentBlockDelta": {"delta": {"text": "In the beginning"}, "contentBlockIndex": 0}})
    c.chunk({"contentBlockDelta": {"delta": {"text": " there was"}, "contentBlockIndex": 0}})
    c.chunk({"contentBlockStop": {"contentBlockIndex": 0}})
    nova_end(c, "max_tokens", 9, 5, 180)
    return stream("nova_max_tokens", NOVA, nova_request("Write an epic.", 5), c)


def nova_content_filtered() -> Interaction:
    c = Chunks("nova_content_filtered").chunk({"messageStart": {"role": "assistant"}})
    c.chunk({"contentBlockDelta": {"delta": {"text": "I can't help"}, "contentBlockIndex": 0}})
    c.chunk({"contentBlockStop": {"contentBlockIndex": 0}})
    nova_end(c, "content_filtered", 14, 4, 230)
    return stream("nova_content_filtered", NOVA, nova_request("Something disallowed."), c)


# -- Amazon Titan Text -------------------------------------------------------------------


def titan(label: str, prompt: str, pieces: list[str], reason: str, inp: int) -> Interaction:
    # Each chunk: outputText, index, the running totalOutputTextTokenCount,
    # completionReason (null until the last), inputTextTokenCount (first chunk only).
    c = Chunks(label)
    total = 0
    for i, piece in enumerate(pieces):
        total += max(1, len(piece) // 4)
        last = i == len(pieces) - 1
        obj: dict[str, Any] = {
            "outputText": piece,
            "index": 0,
            "totalOutputTextTokenCount": total,
            "completionReason": reason if last else None,
            "inputTextTokenCount": inp if i == 0 else None,
        }
        if last:
            obj["amazon-bedrock-invocationMetrics"] = metrics(inp, total, 900, 410)
        c.chunk(obj)
    req = {"inputText": prompt, "textGenerationConfig": {"maxTokenCount": 512, "temperature": 0.5}}
    return stream(label, TITAN, req, c)


def titan_text() -> Interaction:
    return titan(
        "titan_text",
        "User: What is a hello world program?\nBot:",
        ["\nA hello world program", " prints the text", ' "Hello, World!".'],
        "FINISH",
        13,
    )


def titan_length() -> Interaction:
    return titan(
        "titan_length",
        "User: Describe the ocean.\nBot:",
        ["\nThe ocean covers", " most of the planet and"],
        "LENGTH",
        9,
    )


def titan_content_filtered() -> Interaction:
    return titan(
        "titan_content_filtered",
        "User: Write something hateful.\nBot:",
        ["\nSorry - this model is designed to avoid"],
        "CONTENT_FILTERED",
        10,
    )


def titan_stop_criteria_met() -> Interaction:
    return titan(
        "titan_stop_criteria_met",
        "User: List three colors, then write END.\nBot:",
        ["\nRed, green,", " blue."],
        "STOP_CRITERIA_MET",
        15,
    )


# -- Meta Llama ---------------------------------------------------------------------------


def llama(label: str, prompt: str, pieces: list[str], reason: str, inp: int) -> Interaction:
    # generation, prompt_token_count (first chunk, null after), the running
    # generation_token_count, stop_reason (null until the last chunk).
    c = Chunks(label)
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        obj: dict[str, Any] = {
            "generation": piece,
            "prompt_token_count": inp if i == 0 else None,
            "generation_token_count": i + 1,
            "stop_reason": reason if last else None,
        }
        if last:
            obj["amazon-bedrock-invocationMetrics"] = metrics(inp, i + 1, 640, 200)
        c.chunk(obj)
    formatted = (
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n"
        f"{prompt}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
    )
    return stream(label, LLAMA, {"prompt": formatted, "max_gen_len": 512}, c)


def llama_text() -> Interaction:
    return llama("llama_text", "Say hello in French.", ["Bonjour", " !", ""], "stop", 17)


def llama_length() -> Interaction:
    return llama("llama_length", "Count to ten.", ["One,", " two,", " three,"], "length", 14)


def llama_timeout_midstream() -> Interaction:
    # modelTimeoutException (408) after two chunks: the text so far is kept.
    c = Chunks("llama_timeout_midstream")
    c.chunk(
        {
            "generation": "Photosynthesis",
            "prompt_token_count": 16,
            "generation_token_count": 1,
            "stop_reason": None,
        }
    )
    c.chunk(
        {
            "generation": " turns light",
            "prompt_token_count": None,
            "generation_token_count": 2,
            "stop_reason": None,
        }
    )
    c.exception(
        "modelTimeoutException",
        "Model has timed out in processing the request. Try your request again.",
    )
    return stream(
        "llama_timeout_midstream",
        LLAMA,
        {"prompt": "Explain photosynthesis.", "max_gen_len": 512},
        c,
    )


# -- Mistral ------------------------------------------------------------------------------


def mistral_text() -> Interaction:
    c = Chunks("mistral_text")
    for piece in ("Paris", " is the capital", " of France."):
        c.chunk({"outputs": [{"text": piece, "stop_reason": None}]})
    c.chunk(
        {
            "outputs": [{"text": "", "stop_reason": "stop"}],
            "amazon-bedrock-invocationMetrics": metrics(15, 8, 330, 150),
        }
    )
    req = {"prompt": "<s>[INST] What is the capital of France? [/INST]", "max_tokens": 200}
    return stream("mistral_text", MISTRAL, req, c)


def mistral_length() -> Interaction:
    c = Chunks("mistral_length")
    for piece in ("Once", " upon a"):
        c.chunk({"outputs": [{"text": piece, "stop_reason": None}]})
    c.chunk(
        {
            "outputs": [{"text": " time", "stop_reason": "length"}],
            "amazon-bedrock-invocationMetrics": metrics(12, 4, 210, 120),
        }
    )
    req = {"prompt": "<s>[INST] Tell a story. [/INST]", "max_tokens": 4}
    return stream("mistral_length", MISTRAL, req, c)


# -- Cohere Command (generate) and Command R (chat) --------------------------------------


def cohere(label: str, pieces: list[str], reason: str) -> Interaction:
    c = Chunks(label)
    for piece in pieces:
        c.chunk({"text": piece, "is_finished": False})
    c.chunk(
        {
            "is_finished": True,
            "finish_reason": reason,
            "amazon-bedrock-invocationMetrics": metrics(12, len(pieces) * 2, 540, 230),
        }
    )
    req = {"prompt": "Describe a hello world program.", "max_tokens": 64, "stream": True}
    return stream(label, COMMAND, req, c)


def cohere_command_text() -> Interaction:
    return cohere(
        "cohere_command_text", [" A hello world", " program prints", " a greeting."], "COMPLETE"
    )


def cohere_command_max_tokens() -> Interaction:
    return cohere("cohere_command_max_tokens", [" A hello world", " program"], "MAX_TOKENS")


def cohere_command_error_toxic() -> Interaction:
    return cohere("cohere_command_error_toxic", [" I"], "ERROR_TOXIC")


def cohere_r(label: str, events: list[dict[str, Any]], reason: str, inp: int, out: int) -> Chunks:
    c = Chunks(label)
    gen = str(uuid.UUID(bytes=digest("gen:" + label)[:16], version=4))
    c.chunk({"is_finished": False, "event_type": "stream-start", "generation_id": gen})
    for event in events:
        c.chunk({"is_finished": False, **event})
    text = "".join(e.get("text", "") for e in events if e["event_type"] == "text-generation")
    response = {
        "response_id": str(uuid.UUID(bytes=digest("resp:" + label)[:16], version=4)),
        "text": text,
        "generation_id": gen,
        "finish_reason": reason,
        "meta": {
            "api_version": {"version": "1"},
            "billed_units": {"input_tokens": inp, "output_tokens": out},
            "tokens": {"input_tokens": inp + 60, "output_tokens": out},
        },
    }
    return c.chunk(
        {
            "is_finished": True,
            "event_type": "stream-end",
            "response": response,
            "finish_reason": reason,
            "amazon-bedrock-invocationMetrics": metrics(inp + 60, out, 1200, 380),
        }
    )


def cohere_command_r_text() -> Interaction:
    events = [
        {"event_type": "text-generation", "text": piece}
        for piece in ("Hello", " world", " programs print a greeting.")
    ]
    c = cohere_r("cohere_command_r_text", events, "COMPLETE", 9, 7)
    return stream(
        "cohere_command_r_text",
        COMMAND_R,
        {"message": "What is hello world?", "max_tokens": 200},
        c,
    )


def cohere_command_r_tool_call() -> Interaction:
    # Command R ends a tool-calling turn with COMPLETE; the calls come whole in
    # tool-calls-generation (after tool-calls-chunk previews, passed over).
    events = [
        {"event_type": "tool-calls-chunk", "tool_call_delta": {"index": 0, "name": "get_weather"}},
        {
            "event_type": "tool-calls-chunk",
            "tool_call_delta": {"index": 0, "parameters": '{"city": "Oslo"}'},
        },
        {
            "event_type": "tool-calls-generation",
            "text": "I will look up the weather in Oslo.",
            "tool_calls": [{"name": "get_weather", "parameters": {"city": "Oslo"}}],
        },
    ]
    c = cohere_r("cohere_command_r_tool_call", events, "COMPLETE", 120, 25)
    req = {
        "message": "Weather in Oslo?",
        "tools": [
            {
                "name": "get_weather",
                "description": "Current weather for a city.",
                "parameter_definitions": {"city": {"type": "str", "required": True}},
            }
        ],
    }
    return stream("cohere_command_r_tool_call", COMMAND_R, req, c)


def cohere_command_r_error_limit() -> Interaction:
    # ERROR_LIMIT: the model's context limit was reached mid-answer.
    events = [{"event_type": "text-generation", "text": piece} for piece in ("The report", " covers")]
    c = cohere_r("cohere_command_r_error_limit", events, "ERROR_LIMIT", 127_900, 2)
    return stream(
        "cohere_command_r_error_limit", COMMAND_R, {"message": "Summarize.", "max_tokens": 4000}, c
    )


# -- Claude Text Completions ---------------------------------------------------------------


def claude_text(label: str, pieces: list[str], reason: str, stop: str | None) -> Interaction:
    c = Chunks(label)
    for piece in pieces:
        c.chunk({"completion": piece, "stop_reason": None, "stop": None})
    c.chunk(
        {
            "completion": "",
            "stop_reason": reason,
            "stop": stop,
            "amazon-bedrock-invocationMetrics": metrics(18, len(pieces) * 3, 700, 320),
        }
    )
    req = {
        "prompt": "\n\nHuman: Name two planets.\n\nAssistant:",
        "max_tokens_to_sample": 300,
        "stop_sequences": ["\n\nHuman:"],
    }
    return stream(label, CLAUDE_V2, req, c)


def claude_text_stop_sequence() -> Interaction:
    return claude_text(
        "claude_text_stop_sequence", [" Mars", " and Venus."], "stop_sequence", "\n\nHuman:"
    )


def claude_text_max_tokens() -> Interaction:
    return claude_text("claude_text_max_tokens", [" Mars", " and"], "max_tokens", None)


# -- errors ----------------------------------------------------------------------------------


def throttling_before_stream() -> Interaction:
    # HTTP 200, and the first frame is a throttlingException: nothing was received.
    c = Chunks("throttling_before_stream").exception(
        "throttlingException", "Too many tokens, please wait before trying again."
    )
    return stream("throttling_before_stream", SONNET, anthropic_request("hello"), c)


def validation_exception_frame() -> Interaction:
    # A validationException frame after the 200 (the request failed the model's own
    # checks once streaming had begun): not retryable.
    c = Chunks("validation_exception_frame").exception(
        "validationException", "Malformed input request: #: extraneous key [foo] is not permitted"
    )
    return stream("validation_exception_frame", TITAN, {"inputText": "hi", "foo": 1}, c)


def http_400_context_overflow() -> Interaction:
    req = request(SONNET, anthropic_request("word " * 40))
    resp = error_response(
        "invoke:http_400_context_overflow",
        400,
        "Bad Request",
        "ValidationException",
        "Input is too long for requested model.",
    )
    return Interaction(0, req, resp)


def http_429_throttling() -> Interaction:
    req = request(LLAMA, {"prompt": "hello", "max_gen_len": 64})
    resp = error_response(
        "invoke:http_429_throttling",
        429,
        "Too Many Requests",
        "ThrottlingException",
        "Too many requests, please wait before trying again.",
    )
    return Interaction(0, req, resp)


CASSETTES = {
    "anthropic_text": anthropic_text,
    "anthropic_thinking": anthropic_thinking,
    "anthropic_tool_call": anthropic_tool_call,
    "anthropic_parallel_tools": anthropic_parallel_tools,
    "anthropic_max_tokens": anthropic_max_tokens,
    "anthropic_stop_sequence": anthropic_stop_sequence,
    "anthropic_model_stream_error": anthropic_model_stream_error,
    "anthropic_truncated": anthropic_truncated,
    "nova_text": nova_text,
    "nova_tool_call": nova_tool_call,
    "nova_max_tokens": nova_max_tokens,
    "titan_text": titan_text,
    "titan_length": titan_length,
    "titan_content_filtered": titan_content_filtered,
    "titan_stop_criteria_met": titan_stop_criteria_met,
    "nova_content_filtered": nova_content_filtered,
    "mistral_length": mistral_length,
    "cohere_command_error_toxic": cohere_command_error_toxic,
    "cohere_command_r_error_limit": cohere_command_r_error_limit,
    "llama_text": llama_text,
    "llama_length": llama_length,
    "llama_timeout_midstream": llama_timeout_midstream,
    "mistral_text": mistral_text,
    "cohere_command_text": cohere_command_text,
    "cohere_command_max_tokens": cohere_command_max_tokens,
    "cohere_command_r_text": cohere_command_r_text,
    "cohere_command_r_tool_call": cohere_command_r_tool_call,
    "claude_text_stop_sequence": claude_text_stop_sequence,
    "claude_text_max_tokens": claude_text_max_tokens,
    "throttling_before_stream": throttling_before_stream,
    "validation_exception_frame": validation_exception_frame,
    "http_400_context_overflow": http_400_context_overflow,
    "http_429_throttling": http_429_throttling,
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in CASSETTES.items():
        dump_cassette([build()], OUT / f"{name}.yaml")
        print(f"wrote {OUT / name}.yaml")


if __name__ == "__main__":
    main()
