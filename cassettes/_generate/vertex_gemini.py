"""Writes the bundled vertex-gemini cassettes from the documented Vertex AI wire format.

Run from the repo root: ``python cassettes/_generate/vertex_gemini.py``, then refresh
specs/expected/vertex-gemini/ with ``stream-harness bless cassettes/vertex-gemini`` and
review the diff.

The chunks are Gemini ``GenerateContentResponse`` objects, written with the helpers of the
google-generative-ai generator (imported, not copied), plus what Vertex adds
(google.cloud.aiplatform.v1 GenerateContentResponse): ``createTime`` on every chunk,
``usageMetadata.trafficType``, ``safetyRatings`` with scores and severities, and
``citationMetadata.citations``. URLs are Vertex's
(``https://{region}-aiplatform.googleapis.com/v1/projects/{p}/locations/{l}/publishers/google/models/{m}:streamGenerateContent``
and the ``global`` host). The forms:

- ``?alt=sse`` (google-genai with ``vertexai=True``): SSE, as on the Gemini API;
- ``?$alt=json;enum-encoding=int`` (the generated REST clients of google-cloud-aiplatform):
  the streamed JSON array with proto numbers for enums (``"finishReason": 1``; the numbers
  of specs/vertex_enums.yaml);
- errors: Google's front end answers a streaming request with a JSON array holding one
  ``{"error": {code, message, status}}`` (continuedev/continue#8967, cline/cline#651,
  google-gemini/gemini-cli#12207), an error mid-stream is one more array element.

Nothing is copied from the recorded corpus; ids, response ids and signatures are made up
(deterministic), the project is ``example-project``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import google_generative_ai as gemini  # noqa: E402

from stream_harness.recordings.cassette import Interaction, Request, Response, dump_cassette  # noqa: E402

OUT = gemini.ROOT / "cassettes" / "vertex-gemini"
PROJECT = "example-project"
REGIONAL = f"https://us-central1-aiplatform.googleapis.com/v1/projects/{PROJECT}/locations/us-central1/publishers/google/models"
GLOBAL = f"https://aiplatform.googleapis.com/v1/projects/{PROJECT}/locations/global/publishers/google/models"
FLASH = "gemini-2.5-flash"
PRO = "gemini-2.5-pro"
GEMINI3 = "gemini-3-pro-preview"
INT_ENUMS = "?%24alt=json%3Benum-encoding%3Dint"
CREATED = "2025-11-03T10:15:00.123456Z"


def vchunk(*args: Any, traffic: str | int = "ON_DEMAND", **kwargs: Any) -> dict[str, Any]:
    """A Gemini chunk with Vertex's additions (createTime; trafficType in the usage)."""
    out = gemini.chunk(*args, **kwargs)
    if "usageMetadata" in out:
        out["usageMetadata"] = {**out["usageMetadata"], "trafficType": traffic}
    out["createTime"] = CREATED
    return out


def int_enums(value: Any) -> Any:
    """The chunk as ``enum-encoding=int`` writes it: the names below as their numbers."""
    numbers = {
        "finishReason": {"STOP": 1, "MAX_TOKENS": 2, "SAFETY": 3, "MODEL_ARMOR": 10},
        "category": {
            "HARM_CATEGORY_HATE_SPEECH": 1,
            "HARM_CATEGORY_DANGEROUS_CONTENT": 2,
            "HARM_CATEGORY_HARASSMENT": 3,
            "HARM_CATEGORY_SEXUALLY_EXPLICIT": 4,
        },
        "probability": {"NEGLIGIBLE": 1, "LOW": 2, "MEDIUM": 3, "HIGH": 4},
        "severity": {
            "HARM_SEVERITY_NEGLIGIBLE": 1,
            "HARM_SEVERITY_LOW": 2,
            "HARM_SEVERITY_MEDIUM": 3,
            "HARM_SEVERITY_HIGH": 4,
        },
        "modality": {"TEXT": 1},
        "blockReason": {"MODEL_ARMOR": 5, "JAILBREAK": 6},
        "trafficType": {"ON_DEMAND": 1},
    }
    if isinstance(value, list):
        return [int_enums(v) for v in value]
    if isinstance(value, dict):
        return {
            k: numbers[k].get(v, v) if k in numbers and isinstance(v, str) else int_enums(v)
            for k, v in value.items()
        }
    return value


def request(model: str, body: dict[str, Any], *, base: str = REGIONAL, query: str = "?alt=sse") -> Request:
    uri = f"{base}/{model}:streamGenerateContent{query}"
    headers = {
        "accept": ["*/*"],
        "authorization": ["Bearer <filtered>"],
        "content-type": ["application/json"],
        "host": [uri.split("/")[2]],
        "user-agent": ["google-genai-sdk/1.20.0 gl-python/3.12.3"],
        "x-goog-api-client": ["google-genai-sdk/1.20.0 gl-python/3.12.3"],
    }
    return Request(method="POST", uri=uri, headers=headers, body=gemini.google_json(body).encode())


def gapic_request(model: str, body: dict[str, Any]) -> Request:
    """The google-cloud-aiplatform REST transport's request: int enums asked for."""
    req = request(model, body, query=INT_ENUMS)
    headers = dict(req.headers)
    headers["user-agent"] = ["gl-python/3.12.3 grpc/1.67.0 gax/2.24.0 rest/2.32.0"]
    headers["x-goog-api-client"] = ["gl-python/3.12.3 grpc/1.67.0 gax/2.24.0 rest/2.32.0 gccl/1.71.1"]
    return Request(method=req.method, uri=req.uri, headers=headers, body=req.body)


def error_response(status: int, reason: str, error: dict[str, Any]) -> Response:
    # Vertex wraps the error of a streaming call in a JSON array (the shape of the stream).
    body = (json.dumps([{"error": error}], indent=2) + "\n").encode()
    headers = dict(gemini.COMMON_HEADERS)
    headers["content-length"] = [str(len(body))]
    headers["content-type"] = ["application/json; charset=UTF-8"]
    return Response(status=status, reason=reason, headers=headers, body=body)


# ---------------------------------------------------------------------------
# The cassettes
# ---------------------------------------------------------------------------


def plain_text() -> Interaction:
    rid = gemini.response_id("vertex_plain_text")
    body = gemini.sse(
        vchunk([{"text": "Vertex AI runs"}], FLASH, rid, gemini.usage(9, thoughts=30)),
        vchunk([{"text": " Gemini in your Google Cloud project."}], FLASH, rid, gemini.usage(9, 11, 30), finish="STOP"),
    )
    req = request(FLASH, {"contents": [gemini.user("Where does Vertex AI run Gemini?")]})
    return Interaction(0, req, gemini.stream_response(body))


def thinking_signature() -> Interaction:
    rid = gemini.response_id("vertex_thinking_signature")
    sig = gemini.opaque("vertex_thinking_signature", 150)
    body = gemini.sse(
        vchunk(
            [{"text": "**Counting the letters**\n\nstrawberry: s-t-r-a-w-b-e-r-r-y.", "thought": True}],
            PRO,
            rid,
            gemini.usage(12, thoughts=120),
        ),
        vchunk([{"text": "There are three", "thoughtSignature": sig}], PRO, rid, gemini.usage(12, 3, 120)),
        vchunk([{"text": " r's in strawberry."}], PRO, rid, gemini.usage(12, 8, 120), finish="STOP"),
    )
    req = request(
        PRO,
        {
            "contents": [gemini.user("How many r's are in strawberry?")],
            "generationConfig": {"thinkingConfig": {"includeThoughts": True}},
        },
    )
    return Interaction(0, req, gemini.stream_response(body))


def tool_call() -> Interaction:
    rid = gemini.response_id("vertex_tool_call")
    sig = gemini.opaque("vertex_tool_call", 200)
    body = gemini.sse(
        vchunk(
            [
                {
                    "functionCall": {"name": "get_weather", "args": {"location": "Zurich", "unit": "C"}},
                    "thoughtSignature": sig,
                }
            ],
            GEMINI3,
            rid,
            gemini.usage(58, 16, 121),
        ),
        vchunk([{"text": ""}], GEMINI3, rid, gemini.usage(58, 16, 121), finish="STOP"),
    )
    req = request(
        GEMINI3,
        {"contents": [gemini.user("Weather in Zurich, in Celsius?")], "tools": [gemini.WEATHER_TOOL]},
        base=GLOBAL,
    )
    return Interaction(0, req, gemini.stream_response(body))


def parallel_tool_calls() -> Interaction:
    rid = gemini.response_id("vertex_parallel_tool_calls")
    body = gemini.sse(
        vchunk(
            [
                {"functionCall": {"name": "get_weather", "args": {"location": "Tokyo"}}},
                {"functionCall": {"name": "get_time", "args": {"tz": "Asia/Tokyo"}}},
            ],
            FLASH,
            rid,
            gemini.usage(80, 27),
            finish="STOP",
        ),
    )
    req = request(
        FLASH,
        {
            "contents": [gemini.user("Weather and local time in Tokyo?")],
            "tools": [gemini.WEATHER_TOOL, gemini.TIME_TOOL],
        },
    )
    return Interaction(0, req, gemini.stream_response(body))


def int_enums_json_array() -> Interaction:
    # $alt=json;enum-encoding=int: the JSON array, finishReason 1 (STOP), safety ratings and
    # modalities as numbers, citations in Vertex's `citations` field.
    rid = gemini.response_id("vertex_int_enums")
    ratings = [
        {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE", "probabilityScore": 0.03,
         "severity": "HARM_SEVERITY_NEGLIGIBLE", "severityScore": 0.02},
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "LOW", "probabilityScore": 0.21,
         "severity": "HARM_SEVERITY_LOW", "severityScore": 0.18},
    ]
    citations = {"citations": [{"startIndex": 0, "endIndex": 38, "uri": "https://example.org/haiku"}]}
    body = gemini.array_body(
        *int_enums(
            [
                vchunk([{"text": "Autumn moonlight,"}], FLASH, rid, gemini.usage(7, thoughts=44)),
                vchunk([{"text": "\na worm digs silently\ninto the chestnut."}], FLASH, rid,
                       gemini.usage(7, 16, 44), finish="STOP", safetyRatings=ratings,
                       citationMetadata=citations),
            ]
        )
    )
    req = gapic_request(FLASH, {"contents": [gemini.user("Write a haiku about autumn.")]})
    return Interaction(0, req, gemini.stream_response(body, sse_form=False))


def int_enums_max_tokens() -> Interaction:
    # finishReason 2 (MAX_TOKENS) in the integer form.
    rid = gemini.response_id("vertex_int_max_tokens")
    body = gemini.array_body(
        *int_enums(
            [
                vchunk([{"text": "The seven continents are Africa, Antarctica,"}], FLASH, rid, gemini.usage(10, 9)),
                vchunk([{"text": " Asia, Australia"}], FLASH, rid, gemini.usage(10, 12), finish="MAX_TOKENS"),
            ]
        )
    )
    req = gapic_request(
        FLASH, {"contents": [gemini.user("List the continents.")], "generationConfig": {"maxOutputTokens": 12}}
    )
    return Interaction(0, req, gemini.stream_response(body, sse_form=False))


def int_enums_safety() -> Interaction:
    # finishReason 3 (SAFETY) with a blocked rating, integer form: an error keeping the text.
    rid = gemini.response_id("vertex_int_safety")
    ratings = [
        {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE", "severity": "HARM_SEVERITY_NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "probabilityScore": 0.94,
         "severity": "HARM_SEVERITY_HIGH", "severityScore": 0.91, "blocked": True},
    ]
    body = gemini.array_body(
        *int_enums(
            [
                vchunk([{"text": "First, disable the"}], FLASH, rid, gemini.usage(14, 4)),
                vchunk(None, FLASH, rid, gemini.usage(14, 4), finish="SAFETY", safetyRatings=ratings),
            ]
        )
    )
    req = gapic_request(FLASH, {"contents": [gemini.user("How do I disable a smoke detector in a hotel?")]})
    return Interaction(0, req, gemini.stream_response(body, sse_form=False))


def model_armor() -> Interaction:
    # finishReason MODEL_ARMOR (Vertex only, 10 in the integer form): the response was
    # blocked by the project's Model Armor template.
    rid = gemini.response_id("vertex_model_armor")
    body = gemini.sse(
        vchunk([{"text": "Sure, the admin password"}], FLASH, rid, gemini.usage(21, 5)),
        vchunk(
            None, FLASH, rid, gemini.usage(21, 5), finish="MODEL_ARMOR",
            finishMessage="Response blocked by Model Armor Floor Setting: The response contains sensitive data.",
        ),
    )
    req = request(FLASH, {"contents": [gemini.user("What is the admin password in the config?")]})
    return Interaction(0, req, gemini.stream_response(body))


def prompt_blocked_int() -> Interaction:
    # promptFeedback.blockReason 6 (JAILBREAK) in the integer form, no candidates.
    rid = gemini.response_id("vertex_prompt_blocked")
    chunk = {
        "promptFeedback": {
            "blockReason": "JAILBREAK",
            "blockReasonMessage": "The prompt was blocked due to jailbreak.",
        },
        "usageMetadata": {
            "promptTokenCount": 31,
            "totalTokenCount": 31,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 31}],
            "trafficType": "ON_DEMAND",
        },
        "modelVersion": FLASH,
        "createTime": CREATED,
        "responseId": rid,
    }
    body = gemini.array_body(int_enums(chunk))
    req = gapic_request(FLASH, {"contents": [gemini.user("(a prompt that tries to bypass the safety rules)")]})
    return Interaction(0, req, gemini.stream_response(body, sse_form=False))


def unknown_int_finish_reason() -> Interaction:
    # A finishReason number the table does not know yet: it is kept as its text ("99") and
    # the stop-reason table reports it as unrecognized (an error, never an exception).
    rid = gemini.response_id("vertex_unknown_int")
    first = int_enums(vchunk([{"text": "Partial answer"}], FLASH, rid, gemini.usage(6, 2)))
    last = int_enums(vchunk(None, FLASH, rid, gemini.usage(6, 2)))
    last["candidates"][0]["finishReason"] = 99
    body = gemini.array_body(first, last)
    req = gapic_request(FLASH, {"contents": [gemini.user("Say something.")]})
    return Interaction(0, req, gemini.stream_response(body, sse_form=False))


def midstream_error() -> Interaction:
    # An error element after two chunks of the JSON array (the stream's own framing).
    rid = gemini.response_id("vertex_midstream_error")
    chunks = int_enums(
        [
            vchunk([{"text": "Step one: preheat"}], PRO, rid, gemini.usage(11, 4, 52)),
            vchunk([{"text": " the oven to 180"}], PRO, rid, gemini.usage(11, 8, 52)),
        ]
    )
    error = {"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}}
    body = gemini.array_body(*chunks, error)
    req = gapic_request(PRO, {"contents": [gemini.user("How do I bake bread?")]})
    return Interaction(0, req, gemini.stream_response(body, sse_form=False))


def http_400_context_overflow() -> Interaction:
    error = {
        "code": 400,
        "message": "The input token count (1310891) exceeds the maximum number of tokens allowed (1048576).",
        "status": "INVALID_ARGUMENT",
    }
    req = request(PRO, {"contents": [gemini.user("(a 1.3 million token document)")]})
    return Interaction(0, req, error_response(400, "Bad Request", error))


def http_429_resource_exhausted() -> Interaction:
    # Vertex's 429: no RetryInfo, no Retry-After; the message points at error-code-429.
    error = {
        "code": 429,
        "message": (
            "Resource exhausted. Please try again later. Please refer to "
            "https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details."
        ),
        "status": "RESOURCE_EXHAUSTED",
    }
    req = request(FLASH, {"contents": [gemini.user("Hello")]}, base=GLOBAL)
    return Interaction(0, req, error_response(429, "Too Many Requests", error))


def stream_cut() -> Interaction:
    # The JSON array ends inside its second element: a framing error that keeps the text.
    rid = gemini.response_id("vertex_stream_cut")
    whole = gemini.array_body(
        *int_enums(
            [
                vchunk([{"text": "The lighthouse keeper"}], FLASH, rid, gemini.usage(7, 4, 20)),
                vchunk([{"text": " climbed the stairs"}], FLASH, rid, gemini.usage(7, 8, 20)),
            ]
        )
    )
    body = whole[: whole.index('" climbed') + 6]
    req = gapic_request(FLASH, {"contents": [gemini.user("Tell me a short story.")]})
    return Interaction(0, req, gemini.stream_response(body, sse_form=False))


def partial_args() -> Interaction:
    # Streamed function-call arguments (partialArgs, willContinue) are Vertex-only ("not
    # supported in Gemini API", js-genai FunctionCall docs): the google-generative-ai
    # generator's stream, which was always a Vertex request.
    return gemini.partial_args()


CASSETTES = {
    "plain_text": plain_text,
    "thinking_signature": thinking_signature,
    "tool_call": tool_call,
    "parallel_tool_calls": parallel_tool_calls,
    "partial_args": partial_args,
    "int_enums_json_array": int_enums_json_array,
    "int_enums_max_tokens": int_enums_max_tokens,
    "int_enums_safety": int_enums_safety,
    "model_armor": model_armor,
    "prompt_blocked_int": prompt_blocked_int,
    "unknown_int_finish_reason": unknown_int_finish_reason,
    "midstream_error": midstream_error,
    "http_400_context_overflow": http_400_context_overflow,
    "http_429_resource_exhausted": http_429_resource_exhausted,
    "stream_cut": stream_cut,
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in CASSETTES.items():
        dump_cassette([build()], OUT / f"{name}.yaml")
        print(f"wrote {OUT / name}.yaml")


if __name__ == "__main__":
    main()
