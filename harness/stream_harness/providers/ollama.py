"""Ollama's native chat stream (``POST /api/chat``, NDJSON) -> unified events.

The wire (provider-facts.md 1.3): one JSON object per line (``application/x-ndjson``),
each a ``ChatResponse``: ``message.thinking`` and ``message.content`` carry text
increments, ``message.tool_calls`` carries whole calls (arguments as an object, no
fragments, and on older servers no ids), and the last line has ``done: true`` with
``done_reason``, ``prompt_eval_count`` and ``eval_count``. An error after the 200 response
started is a line ``{"error": "..."}``. ``/api/generate`` lines (``response`` and
``thinking`` at the top level) are read the same way, since the body alone cannot tell
the two apart.

Lines are cut by the registered framing (JSON lines, harness/stream_harness/wire/jsonlines.py). The mapping of every field to
accumulator calls, the id and usage conventions and the decisions where the protocol is
silent are in specs/protocols/ollama.md ("spec:" below).

Keys for the accumulator are made here: Ollama has no block index, so a text or thinking
block runs until the other kind (or a tool call) arrives, and each block gets a fresh
``(kind, n)`` key.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Final, Literal

from stream_harness.providers.base import CallIds, JSONFrameNormalizer, excerpt
from stream_harness.providers.coerce import as_int, as_str
from stream_harness.providers.registry import Detect, Protocol, register
from stream_harness.wire.framing import JSON_LINES, FrameDecoder

TextKind = Literal["text", "thinking"]

# Fields of the done line that the message already holds (or that say nothing): the
# rest (durations, /api/generate's context, logprobs, ...) is kept in a "done" provider
# block (spec: "Provider blocks").
_DONE_KNOWN: Final = frozenset(
    {
        "model",
        "created_at",
        "message",
        "done",
        "done_reason",
        "prompt_eval_count",
        "eval_count",
        "response",
        "thinking",
    }
)


class OllamaNormalizer(JSONFrameNormalizer):
    protocol = "ollama"
    frame_noun = "line"

    def __init__(self, frames: FrameDecoder | None = None) -> None:
        super().__init__(frames)
        self._keys = 0
        self._open: tuple[TextKind, Hashable] | None = None
        self._call_ids = CallIds()

    # -- the frames ----------------------------------------------------------------

    def on_eof(self) -> None:
        # `done: true` is the only end marker (PF 1.3): without it the stream was cut;
        # what came is kept (bugs 27-29).
        self.fail(f"stream ended without done: true{self.none_received}")

    def malformed_json(self, exc: ValueError, text: str) -> None:
        # A line that is not JSON is not a ChatResponse: the stream is broken there (JSON
        # lines fail in the framing; SSE events carrying the same objects, here).
        self.malformed(f"not JSON: {exc}: {excerpt(text)}")

    # -- one line -------------------------------------------------------------------

    def on_value(self, line: Any, raw: str) -> None:
        if not isinstance(line, dict):
            self.malformed(f"not a JSON object: {excerpt(raw)}")
            return
        if line.get("error") is not None:
            self._on_error(line["error"], raw)
            return
        self.acc.start(model=as_str(line.get("model")))
        message = line.get("message")
        if message is None:
            message = {}
        if not isinstance(message, dict):
            self.malformed(f"'message' is not an object: {excerpt(raw)}")
            return
        # Thinking precedes the answer within a line; the /api/generate fields come after
        # the message ones (a line has one or the other).
        fields: tuple[tuple[TextKind, object], ...] = (
            ("thinking", message.get("thinking")),
            ("text", message.get("content")),
            ("thinking", line.get("thinking")),
            ("text", line.get("response")),
        )
        for kind, value in fields:
            if value is None:
                continue
            if not isinstance(value, str):
                self.malformed(f"{kind} field is not a string: {excerpt(raw)}")
                return
            self._text(kind, value)
        calls = message.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                self.malformed(f"'tool_calls' is not a list: {excerpt(raw)}")
                return
            for call in calls:
                if not self._tool_call(call, raw):
                    return
        if line.get("done") is True:
            self._on_done(line, raw)

    def _text(self, kind: TextKind, value: str) -> None:
        if not value:
            return  # "" content rides on every thinking line: it neither opens nor closes
        if self._open is None or self._open[0] != kind:
            self._close_text()
            self._open = (kind, self._new_key(kind))
        key = self._open[1]
        if kind == "thinking":
            self.acc.thinking(key, value)
        else:
            self.acc.text(key, value)

    def _tool_call(self, call: Any, raw: str) -> bool:
        # PF 1.3: a call arrives whole, arguments an object -> start, one delta, end.
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            self.malformed(f"tool call without a function object: {excerpt(raw)}")
            return False
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, dict | str):
            # Never hand a consumer a call whose arguments were lost (spec: "Errors").
            self.malformed(f"tool call arguments are not an object: {excerpt(raw)}")
            return False
        assert isinstance(call, dict)
        self._close_text()
        name = as_str(function.get("name"))
        self.acc.whole_tool_call(
            self._new_key("call"),
            id=self._call_ids.assign(as_str(call.get("id")), name),
            name=name,
            arguments=arguments if arguments is not None else {},
        )
        return True

    def _on_done(self, line: dict[str, Any], raw: str) -> None:
        reason = line.get("done_reason")
        if reason is not None and not isinstance(reason, str):
            self.malformed(f"done_reason is not a string: {excerpt(raw)}")
            return
        # spec: "Usage": prompt_eval_count is the prompt tokens evaluated, eval_count the
        # tokens generated (thinking included); Ollama reports no cache counters and no
        # total, and omits a count that is 0 (omitempty).
        self.acc.set_usage(
            input=as_int(line.get("prompt_eval_count")) or 0,
            output=as_int(line.get("eval_count")) or 0,
        )
        self._close_text()
        extra = {k: v for k, v in line.items() if k not in _DONE_KNOWN}
        if extra:
            self.acc.provider_block("done", extra)
        # "stop" with tool calls -> tool_use (the table's tool_calls_override); "load" and
        # "unload" -> stop; a missing reason -> stop (done: true is the end marker).
        self.acc.finish_provider(reason or None)

    def _on_error(self, error: Any, raw: str) -> None:
        # PF 1.3 / 4.3: {"error": "text"} mid-stream; stream_harness.errors reads the body (the
        # overflow pattern "prompt too long; exceeded max context length").
        if isinstance(error, str):
            message = error.strip() or None
        elif isinstance(error, dict):
            message = as_str(error.get("message"))
        else:
            message = None
        self.fail(message or f"in-stream error: {excerpt(raw)}", body=raw)

    # -- helpers ----------------------------------------------------------------------

    def _close_text(self) -> None:
        if self._open is not None:
            self.acc.end(self._open[1])
            self._open = None

    def _new_key(self, prefix: str) -> tuple[str, int]:
        self._keys += 1
        return (prefix, self._keys)

    def before_terminal(self) -> None:
        self._close_text()


Normalizer = OllamaNormalizer

__all__ = ["Normalizer", "OllamaNormalizer"]

PROTOCOL = register(
    Protocol(
        id="ollama",
        title="Ollama /api/chat",
        framing=JSON_LINES,
        translator=OllamaNormalizer,
        detect=Detect(
            url=(r"/api/chat(?:$|[?#/])",),
            body=(rb"\"done\"\s*:\s*(?:true|false)",),
        ),
        stop_reasons="ollama",
        order=60,
    )
)
