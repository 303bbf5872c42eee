"""A loopback model server with fixed, valid streaming bodies, for the framework adapters' tests.

Request k to any path but the ledger is answered with body k of the script (real SSE bytes
from the bundled cassettes: a ``get_weather`` tool call, then a final text); every request
is recorded. ``POST /_ledger`` records the tool call and returns the scripted result, the
way the agent scenarios' server does. Past the end of the script a request gets a 500, so
a framework that keeps asking ends instead of hanging.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from stream_harness import load_cassette, normalize
from stream_harness.contract.events import TextBlock, ToolCall

CASSETTES = Path(__file__).resolve().parent.parent / "cassettes"

# The bundled cassettes each protocol's script is made of: (tool call, final text).
BODIES: Mapping[str, tuple[str, str]] = {
    "openai-completions": ("tool_call_single", "text_plain"),
    "openai-responses": ("function_call", "plain_text"),
    "anthropic-messages": ("tool_call", "plain_text"),
    "google-generative-ai": ("tool_call", "plain_text"),
    "bedrock-converse-stream": ("tool_call", "plain_text"),
}
LEDGER_RESULT = "sunny, 21 C"
# A 400 (context overflow) in each protocol: not retried by any SDK client.
REFUSALS: Mapping[str, str] = {
    "openai-completions": "context_length_exceeded_400",
    "openai-responses": "http_400_context_overflow",
    "anthropic-messages": "http_400_context_overflow",
    "google-generative-ai": "http_400_context_overflow",
    "bedrock-converse-stream": "http_400_context_overflow",
}


@dataclass(frozen=True)
class Served:
    """One response of the script and what it says (read by the reference normalizer)."""

    body: bytes
    content_type: str
    tool_calls: tuple[ToolCall, ...]
    text: str
    status: int = 200


def served(protocol: str, name: str) -> Served:
    interaction = load_cassette(CASSETTES / protocol / f"{name}.yaml").interactions[0]
    body = interaction.response.body
    if interaction.response.status != 200:
        content_type = (interaction.response.headers.get("content-type") or ["application/json"])[0]
        return Served(body, content_type, (), "", interaction.response.status)
    final = list(normalize(protocol, [body]))[-1]
    message = getattr(final, "message", None)
    assert message is not None, f"{protocol}/{name} does not end in a message"
    content_type = (interaction.response.headers.get("content-type") or ["text/event-stream"])[0]
    return Served(
        body=body,
        content_type=content_type,
        tool_calls=tuple(b for b in message.content if isinstance(b, ToolCall)),
        text="".join(b.content for b in message.content if isinstance(b, TextBlock)),
    )


def script(protocol: str) -> list[Served]:
    tool, text = BODIES[protocol]
    return [served(protocol, tool), served(protocol, text)]


def final_answer_script(protocol: str) -> list[Served]:
    """The tool call, then a ``final_answer`` tool call answering "São Paulo", for agents
    whose runs end only through that tool (smolagents). The second body is the first with
    the tool's name, call id and the argument's key replaced: the same real bytes otherwise.
    """
    assert protocol == "openai-completions", protocol
    first = served(protocol, BODIES[protocol][0])
    body = (
        first.body.replace(b'"name":"get_weather"', b'"name":"final_answer"')
        .replace(b"call_Wq8rT2mXbN4kP7sZ1cV3dF6g", b"call_FinalAnswer0000000000001")
        .replace(b'"arguments":"city"', b'"arguments":"answer"')
    )
    calls = tuple(
        b for b in list(normalize(protocol, [body]))[-1].message.content if isinstance(b, ToolCall)
    )  # type: ignore[union-attr]
    assert [(c.name, c.arguments) for c in calls] == [("final_answer", {"answer": "São Paulo"})]
    return [first, Served(body, first.content_type, calls, "São Paulo")]


@dataclass
class StubServer:
    responses: list[Served]
    ledger_error: str | None = None  # the ledger answers every call with this error
    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    ledger: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def model_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["method"] == "POST" and r["path"] != "/_ledger"]


def _handler(server: StubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _reply(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            with server.lock:
                server.requests.append({"method": "GET", "path": self.path, "body": None})
            path = self.path.split("?")[0]
            if path.startswith("/v1beta/models/"):
                # A Gemini model's metadata, which some clients read before any request
                # (LlamaIndex's GoogleGenAI asks for its token limit): answered outside
                # the script, as the real API would.
                name = path.removeprefix("/v1beta/")
                model = {"name": name, "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
                         "supportedGenerationMethods": ["generateContent"]}  # fmt: skip
                self._reply(200, json.dumps(model).encode(), "application/json")
                return
            self._reply(404, b'{"error": {"message": "not scripted"}}', "application/json")

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                body = raw.decode("utf-8", "replace")
            path = self.path.split("?")[0]
            with server.lock:
                server.requests.append({"method": "POST", "path": self.path, "body": body})
                if path == "/_ledger":
                    server.ledger.append(body)
                    answer: Served | None = None
                else:
                    k = len(server.model_requests) - 1
                    answer = server.responses[k] if k < len(server.responses) else None
            if path == "/_ledger":
                scripted = (
                    {"error": server.ledger_error}
                    if server.ledger_error
                    else {"result": LEDGER_RESULT}
                )
                self._reply(200, json.dumps(scripted).encode(), "application/json")
            elif answer is None:
                self._reply(
                    500, b'{"error": {"message": "past the end of the script"}}', "application/json"
                )
            else:
                self._reply(answer.status, answer.body, answer.content_type)

    return Handler


@contextmanager
def stub_server(responses: list[Served], ledger_error: str | None = None) -> Iterator[StubServer]:
    state = StubServer(responses, ledger_error)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def tool_results(protocol: str, request: Any) -> list[tuple[str | None, str, str]]:
    """(call id, tool name or "", result text as sent) of each tool result in a request body."""
    out: list[tuple[str | None, str, str]] = []
    if not isinstance(request, dict):
        return out
    if protocol == "openai-completions":
        for m in request.get("messages") or []:
            if m.get("role") == "tool":
                out.append(
                    (m.get("tool_call_id"), m.get("name") or "", json.dumps(m.get("content")))
                )
    elif protocol == "openai-responses":
        items = request.get("input")
        for item in items if isinstance(items, list) else []:
            if item.get("type") == "function_call_output":
                out.append((item.get("call_id"), "", json.dumps(item.get("output"))))
    elif protocol == "anthropic-messages":
        for m in request.get("messages") or []:
            content = m.get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result":
                    out.append((block.get("tool_use_id"), "", json.dumps(block.get("content"))))
    elif protocol == "bedrock-converse-stream":
        for m in request.get("messages") or []:
            for block in m.get("content") or []:
                result = block.get("toolResult")
                if result:
                    out.append((result.get("toolUseId"), "", json.dumps(result.get("content"))))
    elif protocol == "google-generative-ai":
        for c in request.get("contents") or []:
            for part in c.get("parts") or []:
                response = part.get("functionResponse") or part.get("function_response")
                if response:
                    out.append(
                        (
                            response.get("id"),
                            response.get("name", ""),
                            json.dumps(response.get("response")),
                        )
                    )
    return out
