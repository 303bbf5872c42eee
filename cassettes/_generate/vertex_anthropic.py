"""Writes the bundled vertex-anthropic cassettes from the documented wire format.

Run from the repo root: ``python cassettes/_generate/vertex_anthropic.py``, then refresh
specs/expected/vertex-anthropic/ with ``stream-harness bless cassettes/vertex-anthropic``
and review the diff.

Claude on Vertex AI streams the Anthropic Messages SSE events unchanged
(https://docs.anthropic.com/en/api/claude-on-vertex-ai): the events are written with the
helpers of the anthropic-messages generator (imported, not copied). What is Vertex's:

- the request: ``POST https://{region}-aiplatform.googleapis.com/v1/projects/{p}/locations/{l}/publishers/anthropic/models/{model}:streamRawPredict``
  (or the ``global`` host), OAuth bearer token, no ``model`` in the body and
  ``anthropic_version: vertex-2023-10-16`` (the docs above; model ids with ``@`` dates);
- ids: ``msg_vrtx_...`` and ``toolu_vrtx_...`` (seen in public Vertex logs and tests);
- HTTP errors from Google's front end: a JSON array holding one
  ``{"error": {code, message, status}}``: 429 RESOURCE_EXHAUSTED with the per-base-model
  quota message (cline/cline#651, Aider-AI/aider#1912), 400 FAILED_PRECONDITION
  (yym68686/uni-api#41); errors of the model itself keep the Anthropic body (UNVERIFIED
  on a Vertex recording; the anthropic SDK's Vertex client reads them as the first-party
  client does).

Nothing is copied from the recorded corpus (which holds no Claude-on-Vertex traffic).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import anthropic_messages as wire  # noqa: E402

from stream_harness.recordings.cassette import Interaction, Request, Response, dump_cassette  # noqa: E402

OUT = wire.ROOT / "cassettes" / "vertex-anthropic"
PROJECT = "example-project"
REGIONAL = f"https://us-east5-aiplatform.googleapis.com/v1/projects/{PROJECT}/locations/us-east5/publishers/anthropic/models"
GLOBAL = f"https://aiplatform.googleapis.com/v1/projects/{PROJECT}/locations/global/publishers/anthropic/models"
SONNET = "claude-sonnet-4-5@20250929"
HAIKU = "claude-haiku-4-5@20251001"
OPUS = "claude-opus-4-1@20250805"
# The model as message_start names it (without the Vertex "@" version).
WIRE_MODEL = {SONNET: "claude-sonnet-4-5-20250929", HAIKU: "claude-haiku-4-5-20251001", OPUS: "claude-opus-4-1-20250805"}

GOOGLE_HEADERS = {
    "alt-svc": ['h3=":443"; ma=2592000,h3-29=":443"; ma=2592000'],
    "date": ["Mon, 03 Nov 2025 10:15:00 GMT"],
    "server": ["hypercorn-h11"],
    "vary": ["Origin", "X-Origin", "Referer"],
    "x-content-type-options": ["nosniff"],
    "x-frame-options": ["SAMEORIGIN"],
    "x-xss-protection": ["0"],
}


def request(model: str, body: dict[str, Any], *, base: str = REGIONAL) -> Request:
    uri = f"{base}/{model}:streamRawPredict"
    headers = {
        "accept": ["application/json"],
        "authorization": ["Bearer <filtered>"],
        "content-type": ["application/json"],
        "host": [uri.split("/")[2]],
        "user-agent": ["AnthropicVertex/Python 0.72.0"],
    }
    payload = {"anthropic_version": "vertex-2023-10-16", "stream": True, **body}
    return Request(method="POST", uri=uri, headers=headers, body=wire.compact(payload).encode())


def sse_response(body: str) -> Response:
    headers = dict(GOOGLE_HEADERS)
    headers["content-type"] = ["text/event-stream; charset=utf-8"]
    headers["transfer-encoding"] = ["chunked"]
    return Response(status=200, reason="OK", headers=headers, body=body.encode())


def google_error(status: int, reason: str, code_status: str, message: str) -> Response:
    """Google's front end: a JSON array holding one error object."""
    body = json.dumps([{"error": {"code": status, "message": message, "status": code_status}}]).encode()
    headers = dict(GOOGLE_HEADERS)
    headers["content-length"] = [str(len(body))]
    headers["content-type"] = ["application/json; charset=UTF-8"]
    return Response(status=status, reason=reason, headers=headers, body=body)


def anthropic_error(status: int, reason: str, error_type: str, message: str) -> Response:
    """An error of the model, in the Anthropic body, behind Google's headers."""
    body = wire.compact({"type": "error", "error": {"type": error_type, "message": message}}).encode()
    headers = dict(GOOGLE_HEADERS)
    headers["content-length"] = [str(len(body))]
    headers["content-type"] = ["application/json"]
    return Response(status=status, reason=reason, headers=headers, body=body)


def start(msg_id: str, model: str, u: dict[str, Any]) -> str:
    return wire.message_start(msg_id, WIRE_MODEL[model], u)


# --- the cassettes ----------------------------------------------------------------------


def plain_text() -> Interaction:
    body = (
        start("msg_vrtx_01Gx4PlainText8Vz2Qn5Tb7K", HAIKU, wire.usage(12, 1))
        + wire.block_start(0, {"type": "text", "text": ""})
        + wire.PING
        + wire.text_deltas(0, ["Hello from", " Vertex AI!"])
        + wire.block_stop(0)
        + wire.message_delta("end_turn", {"output_tokens": 8})
        + wire.MESSAGE_STOP
    )
    req = request(HAIKU, {"max_tokens": 256, "messages": [wire.user("Say hello.")]})
    return Interaction(0, req, sse_response(body))


def thinking_signature() -> Interaction:
    sig = wire.opaque("vertex-thinking-signature", 200)
    body = (
        start("msg_vrtx_01Th8Nk2Sg4Vx6Bz8Cd0Ef2G", SONNET, wire.usage(40, 4))
        + wire.block_start(0, {"type": "thinking", "thinking": "", "signature": ""})
        + wire.delta(0, {"type": "thinking_delta", "thinking": "12 squared is 144;"})
        + wire.delta(0, {"type": "thinking_delta", "thinking": " plus 12 is 156."})
        + wire.delta(0, {"type": "signature_delta", "signature": sig})
        + wire.block_stop(0)
        + wire.text_block(1, ["12² + 12 = ", "**156**."])
        + wire.message_delta("end_turn", {"output_tokens": 44})
        + wire.MESSAGE_STOP
    )
    req = request(
        SONNET,
        {
            "max_tokens": 2048,
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "messages": [wire.user("What is 12 squared plus 12?")],
        },
    )
    return Interaction(0, req, sse_response(body))


def tool_call() -> Interaction:
    body = (
        start("msg_vrtx_01Tc3Ll5Mn7Op9Qr1St3Uv5W", SONNET, wire.usage(402, 2))
        + wire.text_block(0, ["I'll check the weather in Lisbon."])
        + wire.tool_block(1, "toolu_vrtx_01Wx7Yz9Ab1Cd3Ef5Gh7Ij9K", "get_weather",
                          ['{"city": "Lis', 'bon", "unit"', ': "c"}'])
        + wire.message_delta("tool_use", {"output_tokens": 71})
        + wire.MESSAGE_STOP
    )
    req = request(
        SONNET,
        {"max_tokens": 1024, "tools": [wire.WEATHER_TOOL], "messages": [wire.user("Weather in Lisbon?")]},
        base=GLOBAL,
    )
    return Interaction(0, req, sse_response(body))


def parallel_tool_calls() -> Interaction:
    body = (
        start("msg_vrtx_01Pc5Ar7Ll9El1Tt3Oo5Ll7S", SONNET, wire.usage(480, 2))
        + wire.tool_block(0, "toolu_vrtx_01Aa2Bb3Cc4Dd5Ee6Ff7Gg8H", "get_weather", ['{"city": "Oslo"}'])
        + wire.tool_block(1, "toolu_vrtx_01Hh8Ii9Jj0Kk1Ll2Mm3Nn4O", "get_time", ['{"tz": "Europe/', 'Oslo"}'])
        + wire.message_delta("tool_use", {"output_tokens": 96})
        + wire.MESSAGE_STOP
    )
    req = request(
        SONNET,
        {
            "max_tokens": 1024,
            "tools": [wire.WEATHER_TOOL, wire.TIME_TOOL],
            "messages": [wire.user("Weather and local time in Oslo?")],
        },
    )
    return Interaction(0, req, sse_response(body))


def max_tokens() -> Interaction:
    body = (
        start("msg_vrtx_01Mt4Xk6Tn8Sq0Ww2Ee4Rr6T", HAIKU, wire.usage(15, 1))
        + wire.text_block(0, ["The Danube flows through ten", " countries, from Germany"])
        + wire.message_delta("max_tokens", {"output_tokens": 12})
        + wire.MESSAGE_STOP
    )
    req = request(HAIKU, {"max_tokens": 12, "messages": [wire.user("Describe the Danube.")]})
    return Interaction(0, req, sse_response(body))


def stop_sequence() -> Interaction:
    body = (
        start("msg_vrtx_01Ss9Tt1Oo3Pp5Qq7Rr9Ss1T", HAIKU, wire.usage(20, 1))
        + wire.text_block(0, ["1. Mercury\n2. Venus\n3. Earth\n"])
        + wire.message_delta("stop_sequence", {"output_tokens": 14}, stop_sequence="4.")
        + wire.MESSAGE_STOP
    )
    req = request(
        HAIKU,
        {"max_tokens": 256, "stop_sequences": ["4."], "messages": [wire.user("List the planets, numbered.")]},
    )
    return Interaction(0, req, sse_response(body))


def refusal() -> Interaction:
    body = (
        start("msg_vrtx_01Rf2Us4Ww6Xx8Yy0Zz2Aa4B", SONNET, wire.usage(28, 1))
        + wire.text_block(0, ["I can't help with that."])
        + wire.message_delta(
            "refusal",
            {"output_tokens": 7},
            stop_details={"type": "refusal", "category": "cyber",
                          "explanation": "This request asks for working malware."},
        )
        + wire.MESSAGE_STOP
    )
    req = request(SONNET, {"max_tokens": 1024, "messages": [wire.user("Write a keylogger that hides from antivirus.")]})
    return Interaction(0, req, sse_response(body))


def pause_turn() -> Interaction:
    srv = "srvtoolu_vrtx_01Ps6Au8Se0Tu2Rn4Pa6Us8E"
    body = (
        start("msg_vrtx_01Pt7Au9Se1Tr3Nn5Pp7Aa9U", SONNET, wire.usage(2810, 5))
        + wire.text_block(0, ["Let me search for that."])
        + wire.block_start(1, {"type": "server_tool_use", "id": srv, "name": "web_search", "input": {}})
        + wire.delta(1, {"type": "input_json_delta", "partial_json": '{"query": "Vertex AI regions for Claude"}'})
        + wire.block_stop(1)
        + wire.message_delta("pause_turn", {"input_tokens": 2810, "output_tokens": 39,
                                            "server_tool_use": {"web_search_requests": 0}})
        + wire.MESSAGE_STOP
    )
    req = request(
        SONNET,
        {
            "max_tokens": 4096,
            "tools": [{"type": "web_search_20250305", "name": "web_search"}],
            "messages": [wire.user("Which Vertex AI regions serve Claude?")],
        },
    )
    return Interaction(0, req, sse_response(body))


def context_window_exceeded() -> Interaction:
    body = (
        start("msg_vrtx_01Cw2Ex4Ce6Ed8Ee0Dd2Ww4X", SONNET, wire.usage(199_930, 1))
        + wire.text_block(0, ["Chapter 30 closes with", " the harbour"])
        + wire.message_delta("model_context_window_exceeded", {"output_tokens": 70})
        + wire.MESSAGE_STOP
    )
    req = request(SONNET, {"max_tokens": 8192, "messages": [wire.user("<a long book> Summarise every chapter.")]})
    return Interaction(0, req, sse_response(body))


def overloaded_midstream() -> Interaction:
    body = (
        start("msg_vrtx_01Ov5Ld7Md9Ne1Pf3Qg5Rh7S", OPUS, wire.usage(95, 1))
        + wire.block_start(0, {"type": "text", "text": ""})
        + wire.text_deltas(0, ["The rings of Saturn are made", " mostly of water ice"])
        + wire.event({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    )
    req = request(OPUS, {"max_tokens": 1024, "messages": [wire.user("What are Saturn's rings made of?")]})
    return Interaction(0, req, sse_response(body))


def http_429_resource_exhausted() -> Interaction:
    req = request(SONNET, {"max_tokens": 1024, "messages": [wire.user("Hello")]})
    resp = google_error(
        429,
        "Too Many Requests",
        "RESOURCE_EXHAUSTED",
        "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model "
        "with base model: anthropic-claude-sonnet-4-5. Please submit a quota increase request. "
        "https://cloud.google.com/vertex-ai/docs/generative-ai/quotas-genai.",
    )
    return Interaction(0, req, resp)


def http_400_failed_precondition() -> Interaction:
    req = request(OPUS, {"max_tokens": 1024, "messages": [wire.user("Hello")]})
    resp = google_error(
        400,
        "Bad Request",
        "FAILED_PRECONDITION",
        f"Project `{PROJECT}` is not allowed to use Publisher Model "
        f"`projects/{PROJECT}/locations/us-east5/publishers/anthropic/models/{OPUS}`",
    )
    return Interaction(0, req, resp)


def http_400_context_overflow() -> Interaction:
    req = request(SONNET, {"max_tokens": 4096, "messages": [wire.user("<a very long document> Summarise it.")]})
    resp = anthropic_error(
        400, "Bad Request", "invalid_request_error", "prompt is too long: 214570 tokens > 200000 maximum"
    )
    return Interaction(0, req, resp)


def http_529_overloaded() -> Interaction:
    req = request(OPUS, {"max_tokens": 1024, "messages": [wire.user("Hello")]})
    return Interaction(0, req, anthropic_error(529, "Site Overloaded", "overloaded_error", "Overloaded"))


def stream_cut() -> Interaction:
    # The connection ends inside the text block: no message_stop, an error keeping the text.
    body = (
        start("msg_vrtx_01Sc6Ut8Cu0Tt2Ss4Tr6Ee8A", HAIKU, wire.usage(11, 1))
        + wire.block_start(0, {"type": "text", "text": ""})
        + wire.text_deltas(0, ["Rain falls on the", " quiet town"])
    )
    req = request(HAIKU, {"max_tokens": 256, "messages": [wire.user("Write one line about rain.")]})
    return Interaction(0, req, sse_response(body))


CASSETTES = {
    "plain_text": plain_text,
    "thinking_signature": thinking_signature,
    "tool_call": tool_call,
    "parallel_tool_calls": parallel_tool_calls,
    "max_tokens": max_tokens,
    "stop_sequence": stop_sequence,
    "refusal": refusal,
    "pause_turn": pause_turn,
    "context_window_exceeded": context_window_exceeded,
    "overloaded_midstream": overloaded_midstream,
    "http_429_resource_exhausted": http_429_resource_exhausted,
    "http_400_failed_precondition": http_400_failed_precondition,
    "http_400_context_overflow": http_400_context_overflow,
    "http_529_overloaded": http_529_overloaded,
    "stream_cut": stream_cut,
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in CASSETTES.items():
        dump_cassette([build()], OUT / f"{name}.yaml")
        print(f"wrote {OUT / name}.yaml")


if __name__ == "__main__":
    main()
