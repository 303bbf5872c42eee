"""Gemini ``streamGenerateContent`` -> unified events, for both of its wire framings.

With ``?alt=sse`` every SSE ``data:`` is one complete ``GenerateContentResponse``
(provider-facts.md 2.4; ``\\r\\n\\r\\n`` separators, corpus-visible-notes.md section 4);
without it the same objects arrive as one streamed, pretty-printed JSON array
(provider-facts.md 1.4). The protocol is registered with the framing that tells them
apart from the body itself (``stream_harness.wire.framing.SSE_OR_JSON_ARRAY``: a recorded or
proxied URL does not always say which one was asked for), so this translator takes SSE
events and array elements alike and never chooses.

There is no terminal sentinel: the stream simply ends, and the last ``finishReason``
decides how. Usage may arrive in the same chunk as the ``finishReason`` or in a later
one, so nothing is finished before ``close()``. The mapping of every wire field to
accumulator calls, the id and usage conventions, and the decisions where the protocol is
silent are in specs/protocols/google-generative-ai.md; comments here cite it ("spec:")
and the research (provider-facts.md sections and conformance case numbers).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from stream_harness.providers.base import CallIds, JSONFrameNormalizer, excerpt
from stream_harness.providers.coerce import as_int, as_str
from stream_harness.providers.registry import Detect, Protocol, register
from stream_harness.providers.stop_reasons import map_stop_reason
from stream_harness.wire.framing import SSE_OR_JSON_ARRAY, FrameDecoder

# Part fields that qualify a part rather than being its content (spec: "Parts"). A part
# whose content field is not text or functionCall is kept verbatim as a provider block
# named after that field (executableCode, codeExecutionResult, inlineData, fileData, ...).
_PART_QUALIFIERS: Final = frozenset(
    {"thought", "thoughtSignature", "partMetadata", "videoMetadata", "mediaResolution"}
)

# Candidate fields kept as metadata for the end (spec: "Metadata").
_METADATA_FIELDS: Final = frozenset(
    {"groundingMetadata", "urlContextMetadata", "safetyRatings", "citationMetadata"}
)

# usageMetadata counters used in the arithmetic (spec: "Usage").
_USAGE_FIELDS: Final = (
    "promptTokenCount",
    "cachedContentTokenCount",
    "toolUsePromptTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "totalTokenCount",
)


_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _json_text(value: Any) -> str:
    """Compact JSON as the SDKs write it; a lone surrogate is written as an escape so that
    the text stays valid UTF-8 and two halves of a pair still join when parsed."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# ---------------------------------------------------------------------------
# Streamed function-call arguments (Vertex ``partialArgs``; spec: "Streamed arguments")
# ---------------------------------------------------------------------------

PathSegment = str | int

# RFC 9535 normalized-path subset the wire uses ("$.foo.bar[0].data"): dot names,
# bracketed quoted names and non-negative indices.
_PATH_TOKEN: Final = re.compile(
    r"""\.(?P<dot>[^.\[\]]+)|\[(?P<index>\d+)\]|\[(?P<q>['"])(?P<quoted>(?:\\.|(?!(?P=q)).)*)(?P=q)\]"""
)


class PartialArgsError(ValueError):
    """A ``partialArgs`` entry that cannot be placed in the arguments object."""


def parse_json_path(path: str) -> tuple[PathSegment, ...]:
    """Split a ``partialArgs.jsonPath`` into object keys and array indices.

    A path without the leading ``$`` is read as relative to the root (one third-party
    test fixture sends ``"city"``); the root itself names no argument and is rejected.
    """
    text = path if path.startswith("$") else "$." + path
    segments: list[PathSegment] = []
    pos = 1
    while pos < len(text):
        match = _PATH_TOKEN.match(text, pos)
        if match is None:
            raise PartialArgsError(f"unsupported jsonPath {path!r} at character {pos}")
        if match.group("dot") is not None:
            segments.append(match.group("dot"))
        elif match.group("index") is not None:
            digits = match.group("index")
            # Arrays are filled in order, so a real index is never near this long; and
            # int() refuses strings past 4,300 digits with a ValueError of its own.
            if len(digits) > 9:
                raise PartialArgsError(f"jsonPath {path[:60]!r}: array index too large")
            segments.append(int(digits))
        else:
            segments.append(re.sub(r"\\(.)", r"\1", match.group("quoted")))
        pos = match.end()
    if not segments:
        raise PartialArgsError(f"jsonPath {path!r} names no argument")
    return tuple(segments)


@dataclass(slots=True)
class _Container:
    segment: PathSegment | None
    is_array: bool
    children: int = 0


@dataclass(slots=True)
class ArgsWriter:
    """Rebuilds streamed ``partialArgs`` as JSON text, written as values arrive.

    The contract wants ``toolcall_delta`` fragments whose concatenation parses to the
    final arguments (C7) and whose live values only grow (C9), so the text is written
    like a JSON serializer walking the object in arrival order: containers are opened
    when a path first goes into them, a value is written whole when it arrives, a string
    with ``willContinue`` is left open and extended by the next entries for the same
    path, and containers are closed when a path leaves them or at :meth:`finish`. This
    is the design of Vercel AI's GoogleJSONAccumulator (provider-facts.md 2.4).

    The model writes its arguments in order, so a path never goes back to a value or a
    container it has finished, and array indices come in order. An entry that does (or
    whose path does not fit the shape written so far) cannot be appended to the text
    without changing what was already streamed, so it raises :class:`PartialArgsError`
    and the normalizer ends the stream in an error (spec: "Streamed arguments").
    """

    stack: list[_Container] = field(default_factory=list)
    open_string: tuple[PathSegment, ...] | None = None
    # Every path written so far, leaves and containers, to refuse a second visit.
    written: set[tuple[PathSegment, ...]] = field(default_factory=set)
    finished: bool = False

    def seed(self, args: dict[str, Any]) -> Iterator[str]:
        """Write an ``args`` object that came with a fragment, one key at a time."""
        for key, item in args.items():
            yield self._write((str(key),), item, False)

    def write(self, arg: dict[str, Any]) -> str:
        """The text for one ``partialArgs`` entry ("" for an entry without a value)."""
        raw_path = arg.get("jsonPath")
        if not isinstance(raw_path, str):
            raise PartialArgsError(
                f"partialArgs entry without a jsonPath: {excerpt(_json_text(arg))}"
            )
        path = parse_json_path(raw_path)
        found, item = _partial_value(arg)
        if not found:
            return ""
        if isinstance(item, str) and self.open_string == path:
            if arg.get("willContinue") is not True:
                self.open_string = None
                return _json_text(item)[1:]
            return _json_text(item)[1:-1]
        return self._write(path, item, isinstance(item, str) and arg.get("willContinue") is True)

    def finish(self) -> str:
        """Close the open string and every open container (``{}`` if nothing came)."""
        if self.finished:
            return ""
        self.finished = True
        out = '"' if self.open_string is not None else ""
        self.open_string = None
        if not self.stack:
            return "{}"
        while self.stack:
            out += "]" if self.stack.pop().is_array else "}"
        return out

    # -- internals -------------------------------------------------------------

    def _write(self, path: tuple[PathSegment, ...], item: Any, keep_open: bool) -> str:
        container, leaf = path[:-1], path[-1]
        common = 0
        for entry, segment in zip(self.stack[1:], container, strict=False):
            if entry.segment != segment:
                break
            common += 1
        self._check(path, common)
        # The entry fits: from here on the text only grows.
        out = '"' if self.open_string is not None else ""
        self.open_string = None
        if not self.stack:
            self.stack.append(_Container(None, False))
            out += "{"
        while len(self.stack) > common + 1:
            out += "]" if self.stack.pop().is_array else "}"
        for depth in range(common, len(container)):
            child = container[depth + 1] if depth + 1 < len(container) else leaf
            out += self._member(container[depth])
            self.stack.append(_Container(container[depth], isinstance(child, int)))
            self.written.add(path[: depth + 1])
            out += "[" if isinstance(child, int) else "{"
        out += self._member(leaf)
        self.written.add(path)
        text = _json_text(item)
        if keep_open:
            self.open_string = path
            text = text[:-1]
        return out + text

    def _check(self, path: tuple[PathSegment, ...], common: int) -> None:
        """Refuse an entry that the text written so far cannot be extended with."""
        for depth in range(common, len(path)):
            if path[: depth + 1] in self.written:
                raise PartialArgsError(f"{_render_path(path[: depth + 1])} was already written")
        # The first new member goes into the deepest container kept open; every later
        # one into a container opened for it, so an index there must be 0.
        parent = self.stack[common] if self.stack else _Container(None, False)
        segment = path[common]
        if parent.is_array != isinstance(segment, int):
            kind = "an array" if parent.is_array else "an object"
            raise PartialArgsError(
                f"{_render_path(path)}: {segment!r} does not fit {kind} written earlier"
            )
        expected = [parent.children if parent.is_array else None] + [0] * (len(path) - common - 1)
        for want, got in zip(expected, path[common:], strict=True):
            if isinstance(got, int) and got != want:
                raise PartialArgsError(
                    f"{_render_path(path)}: array index {got} arrived out of order (expected {want})"
                )

    def _member(self, segment: PathSegment) -> str:
        parent = self.stack[-1]
        out = "," if parent.children else ""
        parent.children += 1
        return out if parent.is_array else out + _json_text(segment) + ":"


def _render_path(path: tuple[PathSegment, ...]) -> str:
    return "$" + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in path)


def _partial_value(arg: dict[str, Any]) -> tuple[bool, Any]:
    """The one value a ``PartialArg`` carries (a proto oneof), or (False, None)."""
    if isinstance(arg.get("stringValue"), str):
        return True, arg["stringValue"]
    number = arg.get("numberValue")
    if isinstance(number, int | float) and not isinstance(number, bool):
        return True, number
    if isinstance(arg.get("boolValue"), bool):
        return True, arg["boolValue"]
    if "nullValue" in arg:
        return True, None
    return False, None


# ---------------------------------------------------------------------------
# The normalizer
# ---------------------------------------------------------------------------


@dataclass(slots=True)
class _OpenText:
    key: tuple[str, int]
    kind: Literal["text", "thinking"]
    signature: str | None = None


@dataclass(slots=True)
class _StreamedCall:
    key: tuple[str, int]
    id: str
    wire_id: str | None
    name: str | None
    writer: ArgsWriter = field(default_factory=ArgsWriter)


class GoogleGenerativeAINormalizer(JSONFrameNormalizer):
    protocol = "google-generative-ai"
    frame_noun = "chunk"
    blank_event_is_keepalive = True  # a data-less SSE event carries nothing

    def __init__(self, frames: FrameDecoder | None = None) -> None:
        super().__init__(frames)
        self._keys = 0
        self._text: _OpenText | None = None
        self._call: _StreamedCall | None = None
        self._call_ids = CallIds()
        self._usage: dict[str, int] = {}
        self._usage_changed = False  # counters the accumulator has not been given yet
        self._finish_reason: str | None = None
        self._finish_message: str | None = None
        self._block_reason: str | None = None
        self._prompt_feedback: dict[str, Any] | None = None
        self._grounding: dict[str, Any] | None = None
        self._url_context: dict[str, Any] | None = None
        self._safety_ratings: list[Any] | None = None
        self._citations: list[Any] = []
        self._metadata_flushed = False

    # -- feed / close ------------------------------------------------------------

    @property
    def framing(self) -> str | None:
        """The framing the decoder settled on, once it has (diagnostics and tests)."""
        chosen: str | None = getattr(self.frames, "framing", None)
        return chosen

    # -- one GenerateContentResponse ---------------------------------------------

    def on_value(self, obj: Any, raw: str) -> None:
        if not isinstance(obj, dict):
            self.fail(f"chunk #{self.frames_seen} is not a JSON object: {excerpt(raw)}")
            return
        if obj.get("error") is not None:
            self._on_error(obj["error"], raw)
            return
        acc = self.acc
        model, response_id = obj.get("modelVersion"), obj.get("responseId")
        if not acc.started or model != acc.model or response_id != acc.response_id:
            # (Every chunk repeats them: the call is skipped when it would change nothing.)
            acc.start(model=as_str(model), response_id=as_str(response_id))
        usage = obj.get("usageMetadata")
        if isinstance(usage, dict):
            self._on_usage(usage)
        feedback = obj.get("promptFeedback")
        if isinstance(feedback, dict) and as_str(feedback.get("blockReason")):
            # case 39: the prompt was blocked; there are no candidates.
            self._block_reason = as_str(feedback.get("blockReason"))
            self._prompt_feedback = feedback
        candidates = obj.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            return  # case 34: usage-only chunks and empty candidates carry no content
        first = candidates[0]
        if isinstance(first, dict):
            self._on_candidate(first)
        if len(candidates) == 1:
            return
        for extra in candidates[1:]:
            # Streaming gives one candidate; more are kept, not merged (spec: "Candidates").
            self.acc.provider_block(
                "candidate", extra if isinstance(extra, dict) else {"value": extra}
            )

    def _on_error(self, error: Any, raw: str) -> None:
        # case 40, provider-facts.md 5.3: {"error": {"code", "message", "status"}} as a
        # data event or an array element, after the 200 response started.
        message = status = None
        code = None
        if isinstance(error, dict):
            message = as_str(error.get("message"))
            status = as_str(error.get("status"))
            code = as_int(error.get("code"))
        elif isinstance(error, str):
            message = error or None
        text = message or status or f"in-stream error: {excerpt(raw)}"
        self.fail(text, status=code, body=raw)

    def _on_usage(self, usage: dict[str, Any]) -> None:
        # Field by field: a later report overwrites the counters it carries (contract.md
        # "Usage"); the derivation is in spec: "Usage" (provider-facts.md 2.4).
        u = self._usage
        for name in _USAGE_FIELDS:
            value = usage.get(name)
            if value is None:
                continue
            if type(value) is not int:  # the common case skips the call
                value = as_int(value)
                if value is None:
                    continue
            if u.get(name) != value:
                u[name] = value
                self._usage_changed = True

    def _report_usage(self) -> None:
        """Hand the counters to the accumulator; called before every terminal event.

        Every chunk repeats the usage, and only the terminal event's message carries it,
        so it is computed once at the end instead of on every chunk (18% of a text stream
        whose counters change on every chunk, bench_normalizers.py). Until then
        ``acc.usage()`` lags.
        """
        if not self._usage_changed:
            return
        self._usage_changed = False
        u = self._usage
        cached = u.get("cachedContentTokenCount", 0)
        self.acc.set_usage(
            input=u.get("promptTokenCount", 0) - cached + u.get("toolUsePromptTokenCount", 0),
            output=u.get("candidatesTokenCount", 0) + u.get("thoughtsTokenCount", 0),
            cache_read=cached,
            cache_write=0,
            total=u.get("totalTokenCount"),
        )

    def _on_candidate(self, candidate: dict[str, Any]) -> None:
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        if isinstance(parts, list):
            acc = self.acc
            for part in parts:
                if acc.terminated:
                    return
                current = self._text
                if current is not None and current.kind == "text" and self._call is None:
                    # Nearly every part of a text stream: {"text": ...} continuing the
                    # open text block, which is all _on_part would find (two calls less;
                    # with the other shortcuts of on_value, 6% of a text stream).
                    text = part.get("text") if type(part) is dict and len(part) == 1 else None
                    if type(text) is str and text:
                        acc.text(current.key, text)
                        continue
                self._on_part(part)
        reason = candidate.get("finishReason")
        if isinstance(reason, str) and reason:
            self._finish_reason = reason
        message = candidate.get("finishMessage")
        if isinstance(message, str) and message:
            self._finish_message = message
        if _METADATA_FIELDS.isdisjoint(candidate):
            return  # most chunks: one C call instead of four lookups
        # Metadata kept for the end (spec: "Metadata"): the last non-empty grounding and
        # URL-context metadata (Gemini sends {} until the last chunk, which has it all),
        # the last safety ratings, and every distinct citation source in order.
        grounding = candidate.get("groundingMetadata")
        if isinstance(grounding, dict) and grounding:
            self._grounding = grounding
        url_context = candidate.get("urlContextMetadata")
        if isinstance(url_context, dict) and url_context:
            self._url_context = url_context
        ratings = candidate.get("safetyRatings")
        if isinstance(ratings, list) and ratings:
            self._safety_ratings = ratings
        citations = candidate.get("citationMetadata")
        if isinstance(citations, dict):
            # Gemini API says citationSources, Vertex says citations.
            sources = citations.get("citationSources", citations.get("citations"))
            if isinstance(sources, list):
                for source in sources:
                    if source not in self._citations:
                        self._citations.append(source)

    def _on_part(self, part: Any) -> None:
        if not isinstance(part, dict):
            self._close_text()
            self._close_call()
            self.acc.provider_block("part", {"value": part})
            return
        signature = part.get("thoughtSignature")
        if not (isinstance(signature, str) and signature):  # (_str, inlined: every part)
            signature = None
        call = part.get("functionCall")
        if isinstance(call, dict):
            self._on_function_call(call, signature)
            return
        text = part.get("text")
        if isinstance(text, str):
            self._on_text(text, part.get("thought") is True, signature, part)
            return
        content_fields = [k for k in part if k not in _PART_QUALIFIERS]
        if not content_fields and signature is None:
            return  # an empty part
        # executableCode, codeExecutionResult, inlineData, fileData, functionResponse,
        # server toolCall/toolResponse, unknown kinds: kept verbatim, signature included.
        self._close_text()
        self._close_call()
        self.acc.provider_block(content_fields[0] if content_fields else "part", part)

    def _on_text(
        self, text: str, thought: bool, signature: str | None, part: dict[str, Any]
    ) -> None:
        # seed 002 / provider-facts.md 2.4: thought is true -> thinking, else text; the
        # signature marks neither (it may sit on any part). Consecutive parts of one kind
        # continue the block across chunks; a kind change closes it.
        if not text and signature is None:
            return  # "" parts (Gemini 3 sends one with the finishReason) carry nothing
        kind: Literal["text", "thinking"] = "thinking" if thought else "text"
        current = self._text
        if (
            signature is None
            and self._call is None
            and current is not None
            and current.kind == kind
        ):
            # The common case, a part continuing the open block, in one call.
            if kind == "thinking":
                self.acc.thinking(current.key, text)
            else:
                self.acc.text(current.key, text)
            return
        self._close_call()
        continues = (
            current is not None
            and current.kind == kind
            and (signature is None or current.signature in (None, signature))
        )
        if not continues:
            # A new kind, or a second signature: signatures are never moved or merged
            # between parts (provider-facts.md 2.4, pi retainThoughtSignature), so a part
            # with another signature starts its own block.
            self._close_text()
            if not text and kind == "text":
                # A signature on an empty text part with no text block to carry it: the
                # contract has no empty text block, so the part is kept verbatim.
                self.acc.provider_block("text", part)
                return
            current = self._text = _OpenText(self._new_key("part"), kind)
            if not text:
                self.acc.open_thinking(current.key)
        assert current is not None
        if kind == "thinking":
            self.acc.thinking(current.key, text)
        else:
            self.acc.text(current.key, text)
        if signature is not None:
            # case 35: a signature seen once stays on its block; later parts of the same
            # block without one do not clear it.
            self.acc.signature(current.key, signature, replace=True)
            current.signature = signature

    def _on_function_call(self, call: dict[str, Any], signature: str | None) -> None:
        self._close_text()
        name = as_str(call.get("name"))
        wire_id = as_str(call.get("id"))
        raw_partial = call.get("partialArgs")
        partial = raw_partial if isinstance(raw_partial, list) else None
        will_continue = call.get("willContinue") is True
        streamed = self._call
        if streamed is not None:
            # The last fragment said willContinue, so this part continues that call,
            # unless it names another function or id (spec: "Streamed arguments").
            if (name is None or streamed.name is None or name == streamed.name) and (
                wire_id is None or wire_id == streamed.wire_id
            ):
                self._continue_call(streamed, call, partial, will_continue, signature)
                return
            self._close_call()
        if partial is None and not will_continue:
            self._whole_call(call, name, wire_id, signature)
            return
        streamed = _StreamedCall(
            self._new_key("call"), self._call_ids.assign(wire_id, name), wire_id, name
        )
        self._call = streamed
        self.acc.tool_call(streamed.key, id=streamed.id, name=name)
        self._continue_call(streamed, call, partial, will_continue, signature)

    def _whole_call(
        self, call: dict[str, Any], name: str | None, wire_id: str | None, signature: str | None
    ) -> None:
        # seed 002: a call arrives whole -> start, one synthetic delta with the JSON, end.
        args = call.get("args")
        if name is None and args is None:
            return  # a lone terminator ({}) with no streamed call open (as Vercel AI)
        if args is None:
            args = {}  # a call without arguments
        if not isinstance(args, dict | str):
            # Never hand a consumer a call whose arguments were lost (spec: "Errors").
            self.fail(
                f"functionCall {name!r} has args that are not an object: {excerpt(_json_text(args))}"
            )
            return
        self.acc.whole_tool_call(
            self._new_key("call"),
            id=self._call_ids.assign(wire_id, name),
            name=name,
            arguments=args,
            signature=signature,
        )

    def _continue_call(
        self,
        streamed: _StreamedCall,
        call: dict[str, Any],
        partial: list[Any] | None,
        will_continue: bool,
        signature: str | None,
    ) -> None:
        if signature is not None:
            self.acc.signature(streamed.key, signature, replace=True)
        name = as_str(call.get("name"))
        if name is not None and streamed.name is None:
            streamed.name = name
            self.acc.tool_call(streamed.key, name=name)
        # An args object that comes before any fragment is written first (one fixture
        # sends args and partialArgs together); once fragments were written they win.
        args = call.get("args")
        seed = args if isinstance(args, dict) and not streamed.writer.written else {}
        entries = [entry for entry in partial or [] if isinstance(entry, dict)]
        pieces = itertools.chain(
            streamed.writer.seed(seed), (streamed.writer.write(entry) for entry in entries)
        )
        if not self._args_delta(streamed, pieces):
            return
        if not will_continue and not any(e.get("willContinue") is True for e in entries):
            self._close_call()

    def _args_delta(self, streamed: _StreamedCall, pieces: Iterator[str]) -> bool:
        """One ``toolcall_delta`` per wire part (never per entry); False if it failed.

        An entry that cannot be written ends the stream, after the text of the entries
        before it, so nothing that fitted is lost.
        """
        written: list[str] = []
        error: PartialArgsError | None = None
        try:
            for piece in pieces:
                written.append(piece)
        except PartialArgsError as exc:
            error = exc
        delta = "".join(written)
        if delta:
            self.acc.tool_call(streamed.key, delta=delta)
        if error is not None:
            self.fail(f"functionCall {streamed.name!r}: {error}")
            return False
        return True

    def _close_call(self) -> None:
        streamed, self._call = self._call, None
        if streamed is None:
            return
        closing = streamed.writer.finish()
        if closing:
            self.acc.tool_call(streamed.key, delta=closing)
        self.acc.end(streamed.key)

    def _close_text(self) -> None:
        current, self._text = self._text, None
        if current is not None:
            self.acc.end(current.key)

    def _new_key(self, prefix: str) -> tuple[str, int]:
        self._keys += 1
        return (prefix, self._keys)

    # -- the end -----------------------------------------------------------------

    def on_eof(self) -> None:
        # Whatever the outcome, a streamed call still open is closed with the values it
        # received (its closing brackets are ours to write, see before_terminal), then the
        # metadata is kept, then the terminal event.
        self._close_text()
        self._close_call()
        self._flush_metadata()
        self._report_usage()
        if self._block_reason is not None:
            detail = as_str((self._prompt_feedback or {}).get("blockReasonMessage"))
            message = f"prompt blocked: {self._block_reason}" + (f": {detail}" if detail else "")
            self.acc.finish("error", provider_stop_reason=self._block_reason, error_message=message)
            return
        raw = self._finish_reason
        if raw is None:
            # case 62: finishReason is Gemini's only end marker; without it the stream was
            # cut. The table's raw=None row says error; the message says what was missing.
            self.acc.finish_provider(
                None, details=f"stream ended without finishReason{self.none_received}"
            )
            return
        # cases 37, 38: every value goes through specs/stop_reasons.yaml (STOP with
        # function calls -> tool_use; unknown values -> error, never an exception).
        mapping = map_stop_reason(self.protocol, raw, has_tool_calls=self.acc.has_tool_calls)
        details = None
        if mapping.reason == "error" and self._finish_message is not None:
            details = f"{mapping.error_message}: {self._finish_message}"
        self.acc.finish_provider(raw, details=details)

    def _flush_metadata(self) -> None:
        """Keep the candidate metadata as provider blocks before any terminal event."""
        if self._metadata_flushed:
            return
        self._metadata_flushed = True
        if self._prompt_feedback is not None:
            self.acc.provider_block("promptFeedback", self._prompt_feedback)
        if self._grounding is not None:
            self.acc.provider_block("groundingMetadata", self._grounding)
        if self._citations:
            self.acc.provider_block("citationMetadata", {"citationSources": self._citations})
        if self._url_context is not None:
            self.acc.provider_block("urlContextMetadata", self._url_context)
        if self._safety_ratings is not None:
            self.acc.provider_block("safetyRatings", {"safetyRatings": self._safety_ratings})

    def before_terminal(self) -> None:
        # A streamed call is closed with the values received so far: its JSON text is
        # ours, not the wire's, and a partial parse of it could differ from the live
        # value consumers already saw (it drops a string's trailing space).
        self._close_call()
        self._flush_metadata()
        self._report_usage()

    def internal_error(self, exc: Exception) -> None:
        # Nothing of ours runs here but the usage report (integer arithmetic), guarded:
        # the fault may be anywhere, and the terminal event must come.
        try:
            self._report_usage()
        except Exception:  # pragma: no cover - defensive
            pass
        super().internal_error(exc)


Normalizer = GoogleGenerativeAINormalizer

__all__ = [
    "ArgsWriter",
    "GoogleGenerativeAINormalizer",
    "Normalizer",
    "PartialArgsError",
    "parse_json_path",
]

PROTOCOL = register(
    Protocol(
        id="google-generative-ai",
        title="Gemini streamGenerateContent",
        framing=SSE_OR_JSON_ARRAY,
        translator=GoogleGenerativeAINormalizer,
        detect=Detect(
            url=(r":(?:stream)?[gG]enerateContent",),
            body=(rb"\"candidates\"\s*:|\"usageMetadata\"\s*:",),
        ),
        stop_reasons="google-generative-ai",
        order=40,
    )
)
