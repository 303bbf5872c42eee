"""vcrpy cassettes as real projects write them, read into small typed objects.

The corpus comes from several projects, each with its own serializer, so the same
recorded bytes appear in many YAML shapes: literal blocks (pydantic-ai), single-quoted
folded scalars (vcrpy's default dumper), double-quoted scalars with escapes,
``!!binary`` base64 (gzip bodies that kept ``Content-Encoding``; AWS event-stream
frames), and pydantic-ai's ``parsed_body:`` mapping for JSON bodies. A YAML loader
resolves all the scalar styles; this module adds what the loader cannot know: the
``parsed_body`` convention, header shapes (lists or scalars, any case), and undoing the
HTTP content-encoding so every consumer sees the bytes a client would have read.

Errors are one-line :class:`CassetteError` values naming the file and the interaction
(0-based, the same number as :attr:`Interaction.index`), because a cassette problem is
found by someone scanning a test log, not by a debugger.

``parsed_body`` bodies are rebuilt with ``json.dumps`` exactly as pydantic-ai's own
deserializer does (``", "``/``": "`` separators, ASCII escapes). pydantic-ai normalised
the text when recording, so such bodies are *not* the provider's bytes;
``body_exact`` is ``False`` on them so byte-level checks can skip them.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import struct
import zlib
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

import yaml

from stream_harness.contract.limits import (
    DECOMPRESSED_MAX_BYTES,
    DECOMPRESSION_MAX_RATIO,
    YAML_MAX_ALIAS_EXPANSION,
    YAML_MAX_DEPTH,
)
from stream_harness.recordings.atomic import write_atomic

try:
    from yaml import CSafeDumper as _BaseDumper
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - libyaml is missing only on exotic builds
    from yaml import SafeDumper as _BaseDumper  # type: ignore[assignment]
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

__all__ = [
    "Cassette",
    "CassetteError",
    "Framing",
    "Interaction",
    "Request",
    "Response",
    "dump_cassette",
    "load_cassette",
]

CASSETTE_FORMAT_VERSION = 1

Framing: TypeAlias = Literal["sse", "eventstream", "jsonlines", "jsonarray", "websocket-json"]
"""How a streamed response body is cut into messages; picks the ``stream_harness.wire`` decoder."""

Headers: TypeAlias = dict[str, list[str]]


class CassetteError(Exception):
    """A cassette that cannot be read; ``str()`` is one line: file, interaction, problem."""

    def __init__(self, path: str | os.PathLike[str], problem: str, index: int | None = None):
        # The args mirror the signature so the exception survives pickling (xdist).
        super().__init__(path, problem, index)
        self.path = os.fspath(path)
        self.index = index
        # Messages from YAML and zlib span lines; a log line must stay one line.
        self.problem = " ".join(problem.split())

    def __str__(self) -> str:
        where = (
            f"{self.path}: " if self.index is None else f"{self.path}: interaction {self.index}: "
        )
        return where + self.problem


class NotACassette(CassetteError):
    """A YAML file of ours that is not a cassette (an agent-loop or agent scenario): folders of
    cassettes may hold them, so callers pass over it instead of reporting it as broken."""


def _first(headers: Headers, name: str) -> str | None:
    values = headers.get(name.lower())
    return values[0] if values else None


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    uri: str
    headers: Headers
    """Lower-cased names; values in recorded order."""
    body: bytes
    body_exact: bool = True
    """False when the body was rebuilt from ``parsed_body`` (not the bytes sent)."""

    def header(self, name: str) -> str | None:
        """First value of a header, looked up case-insensitively."""
        return _first(self.headers, name)


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    reason: str
    headers: Headers
    """Lower-cased names, as recorded: ``content-encoding`` stays even though ``body``
    is already decoded (see ``decoded_encoding``)."""
    body: bytes
    """The bytes a client reads: any content-encoding has been undone."""
    decoded_encoding: bool = False
    """True when a gzip/deflate/br content-encoding was undone on load."""
    body_exact: bool = True
    """False when the body was rebuilt from ``parsed_body`` (not the bytes received)."""

    def header(self, name: str) -> str | None:
        """First value of a header, looked up case-insensitively."""
        return _first(self.headers, name)

    @property
    def content_type(self) -> str | None:
        """Media type without parameters, lower-cased; None when absent or empty."""
        value = self.header("content-type")
        if value is None:
            return None
        media = value.split(";", 1)[0].strip().lower()
        return media or None


@dataclass(frozen=True, slots=True)
class Interaction:
    index: int
    request: Request
    response: Response

    @property
    def stream_framing(self) -> Framing | None:
        """How the response body is framed as a stream, or None for a one-shot body."""
        return _detect_framing(self.request, self.response)

    @property
    def is_streaming(self) -> bool:
        """True when the response body is a stream (SSE, event-stream, NDJSON, JSON array)."""
        return self.stream_framing is not None


@dataclass(frozen=True, slots=True)
class Cassette:
    path: Path
    interactions: tuple[Interaction, ...]
    version: int


# ---------------------------------------------------------------------------
# Streaming detection
# ---------------------------------------------------------------------------

_NDJSON_TYPES = frozenset(
    {"application/x-ndjson", "application/ndjson", "application/jsonl", "application/json-lines"}
)
# URL fragments that only streaming endpoints carry. openinference strips every response
# header, so for its cassettes the URL and the body are all there is to go on.
_STREAM_URL_HINTS = (
    ":streamgeneratecontent",
    "/converse-stream",
    "/invoke-with-response-stream",
    "/api/chat",
    "/api/generate",
)
_STREAM_QUERY = re.compile(r"[?&]stream=true(?:&|#|$)")
# A first SSE line is a field (``data:``, ``event:``, ``id:``, ``retry:``, alone or with a
# value) or a ``:`` comment such as OpenRouter's ``: OPENROUTER PROCESSING``.
_SSE_FIRST_LINE = re.compile(rb"^(?:\xef\xbb\xbf)?(?::|(?:data|event|id|retry)(?::|\r?$))")


def _detect_framing(request: Request, response: Response) -> Framing | None:
    # The decision runs from strongest to weakest evidence: a streaming content type,
    # then the body's shape, trusted alone only when no content type was recorded and
    # otherwise only with a URL/request hint. A body that contradicts its label
    # (Gemini's JSON error bodies labelled text/event-stream) is not a stream.
    ctype = response.content_type
    body = response.body
    if response.status == 101 and (request.header("upgrade") or "").lower() == "websocket":
        # A WebSocket turn: the body is its frame log (harness/stream_harness/wire/websocket.py).
        return "websocket-json"
    if ctype == "application/vnd.amazon.eventstream":
        return "eventstream"
    if ctype == "text/event-stream":
        return "sse" if not body.strip() or _looks_like_sse(body) else None
    if ctype in _NDJSON_TYPES:
        return "jsonlines"
    uri = request.uri.lower()
    gemini_array = ":streamgeneratecontent" in uri and "alt=sse" not in uri
    if gemini_array and re.match(rb"\s*\[\s*\{", body):
        return "jsonarray"
    if ctype is not None and not _request_hints_stream(request):
        return None
    if _looks_like_eventstream(body):
        return "eventstream"
    if _looks_like_sse(body):
        return "sse"
    if _looks_like_json_lines(body):
        return "jsonlines"
    return None


def _request_hints_stream(request: Request) -> bool:
    uri = request.uri.lower()
    if any(hint in uri for hint in _STREAM_URL_HINTS) or _STREAM_QUERY.search(uri):
        return True
    body = request.body.lstrip()
    if not body.startswith(b"{") or b'"stream"' not in body:
        return False
    try:
        parsed = json.loads(body)
    except ValueError:
        return False
    return isinstance(parsed, dict) and bool(parsed.get("stream") is True)


def _looks_like_sse(body: bytes) -> bool:
    for line in body.splitlines():
        if line.strip():
            return _SSE_FIRST_LINE.match(line) is not None
    return False


def _looks_like_eventstream(body: bytes) -> bool:
    # An AWS event-stream frame starts with total length, headers length and a CRC32
    # of those 8 bytes: a random body matches with odds of 2**-32.
    if len(body) < 16:
        return False
    total, headers_len, prelude_crc = struct.unpack(">III", body[:12])
    return bool(
        zlib.crc32(body[:8]) == prelude_crc
        and 16 <= total <= len(body)
        and headers_len <= total - 16
    )


def _looks_like_json_lines(body: bytes) -> bool:
    # Two or more lines, each a JSON object: one line is indistinguishable from an
    # ordinary (error) JSON body.
    lines = [line for line in body.splitlines() if line.strip()]
    if len(lines) < 2:
        return False
    for line in lines:
        try:
            if not isinstance(json.loads(line), dict):
                return False
        except ValueError:
            return False
    return True


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------


class _Problem(Exception):
    """Raised inside the loader; turned into a CassetteError that knows file and index."""


def load_cassette(path: str | os.PathLike[str]) -> Cassette:
    """Read a vcrpy (version 1) cassette in any serializer's dialect; raise CassetteError."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CassetteError(path, f"cannot read file: {exc.strerror or exc}") from exc
    try:
        _check_yaml_shape(raw)
        data = yaml.load(raw, Loader=_Loader)
    except _Problem as exc:
        raise CassetteError(path, str(exc)) from exc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        at = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        raise CassetteError(path, f"invalid YAML{at}: {exc.problem or exc}") from exc
    except yaml.YAMLError as exc:
        raise CassetteError(path, f"invalid YAML: {exc}") from exc
    if data is None:
        raise CassetteError(path, "empty file, not a cassette")
    if isinstance(data, list) and data and isinstance(data[0], dict) and "request" in data[0]:
        raise CassetteError(path, "pre-1.0 vcrpy cassette format (a bare list); re-record it")
    if not isinstance(data, dict):
        raise CassetteError(path, f"not a cassette: top level is {_kind(data)}, not a mapping")
    if "interactions" not in data:
        if {"responses", "expect"} <= data.keys():
            raise NotACassette(
                path, "an agent-loop scenario (for `stream-harness loop`), not a cassette"
            )
        if data.get("kind") == "agent" and "responses" in data:
            raise NotACassette(
                path, "an agent scenario (for `stream-harness agents`), not a cassette"
            )
        raise CassetteError(path, "not a cassette: no 'interactions' key")
    version = data.get("version")
    if version is None:
        raise CassetteError(path, "no 'version' key")
    if not isinstance(version, int) or isinstance(version, bool):
        raise CassetteError(path, f"'version' is {_kind(version)}, not an integer")
    if version != CASSETTE_FORMAT_VERSION:
        raise CassetteError(path, f"unsupported cassette version {version} (only 1 is known)")
    items = data["interactions"]
    if not isinstance(items, list):
        raise CassetteError(path, f"'interactions' is {_kind(items)}, not a list")
    interactions = []
    for index, item in enumerate(items):
        try:
            interactions.append(_interaction(index, item))
        except _Problem as exc:
            raise CassetteError(path, str(exc), index) from exc.__cause__
    return Cassette(path=path, interactions=tuple(interactions), version=version)


_KINDS: dict[type, str] = {dict: "a mapping", list: "a list", str: "a string", bytes: "binary"}


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return _KINDS.get(type(value), type(value).__name__)


def _interaction(index: int, item: object) -> Interaction:
    if not isinstance(item, dict):
        raise _Problem(f"is {_kind(item)}, not a mapping")
    for side in ("request", "response"):
        if side not in item:
            raise _Problem(f"no '{side}'")
        if not isinstance(item[side], dict):
            raise _Problem(f"'{side}' is {_kind(item[side])}, not a mapping")
    return Interaction(index, _request(item["request"]), _response(item["response"]))


def _request(data: dict[Any, Any]) -> Request:
    method = _required_str(data, "method", "request")
    uri = _required_str(data, "uri", "request")
    headers = _headers(data.get("headers"), "request")
    if "parsed_body" in data and data["parsed_body"] is not None:
        body, exact = _from_parsed_body(data["parsed_body"], "request"), False
    elif "body" in data:
        body, exact = _body_bytes(data["body"], "request body"), True
    else:
        raise _Problem("request has neither 'body' nor 'parsed_body'")
    return Request(method=method, uri=uri, headers=headers, body=body, body_exact=exact)


def _response(data: dict[Any, Any]) -> Response:
    status = data.get("status")
    if not isinstance(status, dict):
        raise _Problem("response has no 'status' mapping")
    code = status.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        raise _Problem(f"response status code is {_kind(code)}, not an integer")
    reason = status.get("message")
    if reason is None:
        reason = ""
    if not isinstance(reason, str):
        raise _Problem(f"response status message is {_kind(reason)}, not a string")
    headers = _headers(data.get("headers"), "response")
    if "parsed_body" in data and data["parsed_body"] is not None:
        return Response(
            status=code,
            reason=reason,
            headers=headers,
            body=_from_parsed_body(data["parsed_body"], "response"),
            body_exact=False,
        )
    body_data = data.get("body")
    if not isinstance(body_data, dict):
        raise _Problem("response has neither a 'body' mapping nor 'parsed_body'")
    if "string" not in body_data:
        raise _Problem("response body has no 'string'")
    stored = _body_bytes(body_data["string"], "response body")
    body, decoded = _undo_content_encoding(stored, headers.get("content-encoding", []))
    return Response(
        status=code, reason=reason, headers=headers, body=body, decoded_encoding=decoded
    )


def _required_str(data: dict[Any, Any], key: str, side: str) -> str:
    if key not in data:
        raise _Problem(f"{side} has no '{key}'")
    value = data[key]
    if not isinstance(value, str):
        raise _Problem(f"{side} {key} is {_kind(value)}, not a string")
    return value


def _headers(data: object, side: str) -> Headers:
    # vcrpy writes name -> [values]; hand-written and older cassettes use scalars; the
    # casing follows the recording client. Same-named headers in two casings merge.
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise _Problem(f"{side} headers are {_kind(data)}, not a mapping")
    headers: Headers = {}
    for name, value in data.items():
        if not isinstance(name, str):
            raise _Problem(f"{side} header name {name!r} is not a string")
        values = value if isinstance(value, list) else [value]
        out = headers.setdefault(name.lower(), [])
        for item in values:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, bytes):
                # botocore hands vcrpy header values as bytes, stored as !!binary.
                out.append(_header_text(item))
            elif isinstance(item, int | float) and not isinstance(item, bool):
                out.append(str(item))  # an unquoted content-length: 223
            else:
                raise _Problem(f"{side} header {name!r} value is {_kind(item)}, not a string")
    return headers


def _header_text(value: bytes) -> str:
    # The order httpx tries when it decodes header bytes.
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("latin-1")


def _body_bytes(value: object, what: str) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise _Problem(f"{what} text cannot be encoded as UTF-8 ({exc.reason})") from exc
    raise _Problem(f"{what} is {_kind(value)}, not text or binary")


def _from_parsed_body(value: object, side: str) -> bytes:
    try:
        # Same call as pydantic-ai's json_body_serializer.deserialize, for the same bytes.
        return json.dumps(value).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise _Problem(f"{side} parsed_body is not JSON data: {exc}") from exc


def _check_yaml_shape(raw: bytes) -> None:
    """Refuse a YAML document too deep or with too much alias expansion, before building it.

    One pass over the parser's events (iterative in libyaml, no node is built) keeps the
    nesting depth and the size each anchor stands for. Building the document is where
    deep nesting kills the interpreter (libyaml 0.2.5 with PyYAML's C composer, 50,000
    levels) or ends in a RecursionError (the pure-Python composer, or json.dumps of a
    deep ``parsed_body``), and where a billion-laughs document expands its aliases
    (stream_harness.contract.limits: YAML_MAX_DEPTH, YAML_MAX_ALIAS_EXPANSION).
    """
    depth = 0
    # Per open collection: [anchor, expanded size]; sizes count nodes and scalar chars.
    stack: list[list[Any]] = [[None, 0]]
    anchors: dict[str, int] = {}
    expanded = 0
    for event in yaml.parse(raw, Loader=_Loader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > YAML_MAX_DEPTH:
                raise _Problem(
                    f"YAML nested too deep (more than {YAML_MAX_DEPTH} levels; "
                    "STREAM_HARNESS_YAML_MAX_DEPTH)"
                )
            stack.append([event.anchor, 1])
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            anchor, size = stack.pop()
            if anchor is not None:
                anchors[anchor] = size
            stack[-1][1] += size
        elif isinstance(event, yaml.ScalarEvent):
            size = 1 + len(event.value)
            if event.anchor is not None:
                anchors[event.anchor] = size
            stack[-1][1] += size
        elif isinstance(event, yaml.AliasEvent):
            size = anchors.get(event.anchor or "", 1)
            expanded += size
            if expanded > YAML_MAX_ALIAS_EXPANSION:
                raise _Problem(
                    f"YAML aliases expand to more than {YAML_MAX_ALIAS_EXPANSION} nodes and "
                    "characters (a billion-laughs document?; STREAM_HARNESS_YAML_MAX_ALIAS_EXPANSION)"
                )
            stack[-1][1] += size


def _bounded(chunks: Iterable[bytes], compressed: int) -> bytes:
    """Join decompressed output while it stays within the size and ratio limits."""
    out = bytearray()
    for piece in chunks:
        out += piece
        size = len(out)
        if size > DECOMPRESSED_MAX_BYTES:
            raise _Problem(
                f"response body decompresses to more than {DECOMPRESSED_MAX_BYTES} bytes "
                "(STREAM_HARNESS_DECOMPRESSED_MAX_BYTES)"
            )
        if size > _RATIO_FLOOR and size > DECOMPRESSION_MAX_RATIO * max(compressed, 1):
            raise _Problem(
                f"response body decompresses more than {DECOMPRESSION_MAX_RATIO} times its "
                f"{compressed} bytes (a decompression bomb?; STREAM_HARNESS_DECOMPRESSION_MAX_RATIO)"
            )
    return bytes(out)


# Output below this is never refused for its ratio (a tiny, very repetitive body).
_RATIO_FLOOR: Final = 1024 * 1024
_STEP: Final = 1024 * 1024


def _pieces(decompressor: Any, data: bytes) -> Generator[bytes, None, bytes]:
    """Decompress one stream in steps of at most 1 MiB of output, so a bomb stops at the
    limit; returns what follows the stream's end (the next gzip member, padding)."""
    pending = data
    while True:
        piece = decompressor.decompress(pending, _STEP)
        yield piece
        pending = decompressor.unconsumed_tail
        if decompressor.eof:
            return bytes(decompressor.unused_data)
        if not pending and not piece:
            raise EOFError("compressed data ended before the end-of-stream marker")


def _zlib_pieces(data: bytes, wbits: int) -> Iterator[bytes]:
    yield from _pieces(zlib.decompressobj(wbits), data)


def _gunzip(data: bytes) -> bytes:
    return _bounded(_gzip_members(data), len(data))


def _gzip_members(data: bytes) -> Iterator[bytes]:
    """Every member of a gzip body (gzip.decompress reads them all), 1 MiB at a time."""
    rest = data
    while rest:
        rest = (yield from _pieces(zlib.decompressobj(16 + zlib.MAX_WBITS), rest)).lstrip(b"\x00")


def _inflate(data: bytes) -> bytes:
    # "deflate" means a zlib stream by the RFC, but servers send raw deflate too.
    try:
        return _bounded(_zlib_pieces(data, zlib.MAX_WBITS), len(data))
    except zlib.error:
        return _bounded(_zlib_pieces(data, -zlib.MAX_WBITS), len(data))


def _unbrotli(data: bytes) -> bytes:
    for name in ("brotli", "brotlicffi"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        return _bounded(_brotli_pieces(module, data), len(data))
    raise _Problem("response body is br-encoded; install 'brotli' to read it")


def _brotli_pieces(module: Any, data: bytes) -> Iterator[bytes]:
    """Brotli output in bounded steps where the module allows it (brotli >= 1.1's
    ``Decompressor.process(data, output_buffer_limit=...)``), else whole."""
    decompressor = module.Decompressor()
    try:
        piece = decompressor.process(data, output_buffer_limit=_STEP)
    except TypeError:  # an older brotli, or brotlicffi: no output limit
        yield decompressor.process(data)
        return
    yield piece
    while not decompressor.is_finished():
        piece = decompressor.process(b"", output_buffer_limit=_STEP)
        if not piece:
            raise EOFError("brotli data ended before the end of the stream")
        yield piece


_DECODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": _gunzip,
    "x-gzip": _gunzip,
    "deflate": _inflate,
    "br": _unbrotli,
}


def _undo_content_encoding(body: bytes, values: Iterable[str]) -> tuple[bytes, bool]:
    codings = [c.strip().lower() for v in values for c in v.split(",")]
    codings = [c for c in codings if c and c != "identity"]
    for coding in reversed(codings):  # the last coding listed was applied last
        decoder = _DECODERS.get(coding)
        if decoder is None:
            raise _Problem(f"unsupported content-encoding {coding!r}")
        try:
            body = decoder(body)
        except _Problem:
            raise
        except Exception as exc:  # zlib.error, gzip.BadGzipFile, EOFError, brotli.error
            raise _Problem(f"response body is not valid {coding}: {exc}") from exc
    return body, bool(codings)


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------


class _Block(str):
    """A body string to be written as a ``|`` literal block."""

    __slots__ = ()


class _Dumper(_BaseDumper):
    """Writes text bodies as literal blocks, as pydantic-ai's LiteralDumper does, so a
    re-recorded SSE stream diffs line by line."""


def _represent_block(dumper: _Dumper, data: _Block) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style="|")


_Dumper.add_representer(_Block, _represent_block)

# Characters a literal block cannot carry verbatim: YAML normalises CR/CRLF/NEL to LF in
# block scalars, a BOM is stripped, and the emitter refuses tabs and control characters.
# libyaml's emitter already falls back to quoting for all of these, but PyYAML's pure
# Python emitter writes NEL into a literal block and it reads back as LF (measured), so
# the choice is made here rather than left to whichever emitter is installed.
_NOT_IN_BLOCK = re.compile("[^\n\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|\ufeff")
_TRAILING_SPACE = re.compile("[ \t]\n|[ \t]$")


def _body_node(body: bytes) -> str | bytes:
    # Text that survives a literal block goes there (readable diffs); other text is left
    # to the emitter (it picks quoted styles); non-UTF-8 becomes !!binary. dump_cassette
    # re-reads what it wrote and demotes any body that did not survive to !!binary.
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return body
    if "\n" in text and not _NOT_IN_BLOCK.search(text) and not _TRAILING_SPACE.search(text):
        return _Block(text)
    return text


def _without_encoding(headers: Mapping[str, Sequence[str]], body: bytes) -> dict[str, list[str]]:
    # The body is written decoded, so the header announcing an encoding must go, or
    # vcrpy's replay would hand httpx plain bytes labelled gzip. vcrpy's own
    # decode_compressed_response does the same, including fixing content-length.
    out = {name: list(values) for name, values in headers.items()}
    codings = [c.strip().lower() for v in out.get("content-encoding", []) for c in v.split(",")]
    if any(c and c != "identity" for c in codings):
        del out["content-encoding"]
        if "content-length" in out:
            out["content-length"] = [str(len(body))]
    return out


def _to_dict(interactions: Sequence[Interaction], binary: set[tuple[int, str]]) -> dict[str, Any]:
    def body(i: int, side: str, raw: bytes) -> str | bytes:
        return raw if (i, side) in binary else _body_node(raw)

    items = []
    for i, it in enumerate(interactions):
        req, resp = it.request, it.response
        items.append(
            {
                "request": {
                    "body": body(i, "request", req.body),
                    "headers": {name: list(values) for name, values in req.headers.items()},
                    "method": req.method,
                    "uri": req.uri,
                },
                "response": {
                    "body": {"string": body(i, "response", resp.body)},
                    "headers": _without_encoding(resp.headers, resp.body),
                    "status": {"code": resp.status, "message": resp.reason},
                },
            }
        )
    return {"interactions": items, "version": CASSETTE_FORMAT_VERSION}


def _mismatched_bodies(
    written: object, interactions: Sequence[Interaction]
) -> set[tuple[int, str]]:
    bad: set[tuple[int, str]] = set()
    items = written.get("interactions") if isinstance(written, dict) else None
    if not isinstance(items, list) or len(items) != len(interactions):
        raise ValueError("dumped cassette does not read back")
    for i, (item, it) in enumerate(zip(items, interactions, strict=True)):
        got_req = item["request"]["body"]
        got_resp = item["response"]["body"]["string"]
        if _as_bytes(got_req) != it.request.body:
            bad.add((i, "request"))
        if _as_bytes(got_resp) != it.response.body:
            bad.add((i, "response"))
    return bad


def _as_bytes(value: object) -> bytes | None:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return None


def dump_cassette(cassette: Cassette | Sequence[Interaction], path: str | os.PathLike[str]) -> None:
    """Write a standard vcrpy version-1 cassette that vcrpy itself replays.

    Bodies round-trip byte-exactly through :func:`load_cassette`: text goes in literal
    blocks where YAML allows, otherwise in quoted scalars, and anything else (not UTF-8,
    or text the emitter cannot carry) as ``!!binary``. Response bodies are written
    decoded, so ``content-encoding`` is dropped and ``content-length`` fixed. The file is
    replaced atomically, so a crash never leaves half a cassette.
    """
    path = Path(path)
    interactions = cassette.interactions if isinstance(cassette, Cassette) else tuple(cassette)
    binary: set[tuple[int, str]] = set()
    for _attempt in range(2):
        text = yaml.dump(
            _to_dict(interactions, binary),
            Dumper=_Dumper,
            allow_unicode=True,
            width=120,
            encoding="utf-8",
        )
        try:
            bad = _mismatched_bodies(yaml.load(text, Loader=_Loader), interactions)
        except (yaml.YAMLError, ValueError, KeyError, TypeError) as exc:
            raise CassetteError(path, f"dumped cassette does not read back: {exc}") from exc
        if not bad:
            break
        binary |= bad
    else:  # pragma: no cover - !!binary always round-trips
        raise CassetteError(path, "bodies do not round-trip even as !!binary")
    write_atomic(path, text)
