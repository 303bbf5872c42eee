"""``stream-harness import``: turn what users already have into a cassette.

Four inputs, told apart by name and content (or named with ``--format``):

- ``raw``: a response body as a client read it, e.g. ``curl -N`` output (with ``-i``, the
  status line and headers are read too); SSE, or Gemini's JSON array;
- ``har``: a browser's HAR export; the entries whose URL or body is the protocol's (or the
  one ``--entry`` names) become interactions;
- ``jsonl``: one chunk payload per line, SSE framing stripped (what logging
  ``chunk.model_dump_json()`` gives); the provider's framing is put back from
  ``specs/recording.yaml`` (event names, line ends, ``[DONE]``), so the body is what the
  provider would have sent;
- ``cassette``: another project's vcrpy / pytest-recording cassette, in any dialect
  :func:`stream_harness.recordings.cassette.load_cassette` reads (gzip ``!!binary`` bodies, pydantic-ai's
  ``parsed_body``); it is rewritten decoded, in literal blocks.

Whatever the input, every interaction goes through the same scrubber and the same gate as
``record`` (:mod:`stream_harness.workflow.writer`): HAR files in particular carry cookies and
``authorization`` headers, and none of that may reach the cassette.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import sys
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias

from stream_harness.contract.events import ErrorEvent
from stream_harness.providers.reference import detect_protocol, normalize
from stream_harness.providers.registry import UnknownProtocolError
from stream_harness.recordings.cassette import (
    CassetteError,
    Interaction,
    Request,
    Response,
    load_cassette,
)
from stream_harness.workflow.command import add_endpoint_protocol, add_out
from stream_harness.workflow.endpoints import (
    Endpoint,
    RequestSpecError,
    SSEFraming,
    get_endpoint,
    prepare_request,
    read_request_file,
)
from stream_harness.workflow.lint import MALFORMED_PREFIXES
from stream_harness.workflow.scrub import Scrubber
from stream_harness.workflow.websocket_session import PROTOCOL as WEBSOCKET_PROTOCOL
from stream_harness.workflow.websocket_session import (
    SessionInputError,
    frames_from_jsonl,
    turns_from_frames,
)
from stream_harness.workflow.writer import (
    WriteError,
    WriteResult,
    refuse_existing,
    scratch_dir,
    write_checked,
    write_failure,
)

__all__ = [
    "Format",
    "ImportInputError",
    "add_import_parser",
    "detect_format",
    "import_command",
    "import_file",
    "interactions_from_cassette",
    "interactions_from_har",
    "interactions_from_jsonl",
    "interactions_from_raw",
    "sse_from_jsonl",
]

Format: TypeAlias = Literal["raw", "har", "jsonl", "cassette"]
FORMATS: tuple[Format, ...] = ("raw", "har", "jsonl", "cassette")


class ImportInputError(ValueError):
    """An input that cannot be turned into a cassette; the message is one line."""


@dataclass(frozen=True, slots=True)
class _Exchange:
    """What raw and JSON-lines inputs know about the request, from --request or defaults."""

    uri: str
    headers: dict[str, list[str]]
    body: bytes


# ---------------------------------------------------------------------------
# Detection
# ---------------------------------------------------------------------------


def detect_format(path: Path, data: bytes) -> Format:
    suffix = path.suffix.lower()
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if suffix in (".yaml", ".yml") or head.startswith(b"interactions:"):
        return "cassette"
    if suffix == ".har":
        return "har"
    if head.startswith(b"{"):
        try:
            whole = json.loads(data)
        except ValueError:
            whole = None
        if isinstance(whole, dict) and isinstance(whole.get("log"), dict):
            return "har"
        first = head.split(b"\n", 1)[0]
        try:
            json.loads(first)
        except ValueError:
            return "raw"
        return "jsonl"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    return "raw"


# ---------------------------------------------------------------------------
# Raw bodies and JSON lines
# ---------------------------------------------------------------------------


def _exchange(endpoint: Endpoint, request: Mapping[str, Any] | None) -> _Exchange:
    if request is None:
        return _Exchange(endpoint.url(), {"content-type": ["application/json"]}, b"")
    prepared = prepare_request(endpoint, request)
    return _Exchange(
        prepared.url,
        {name: [value] for name, value in prepared.headers.items()},
        prepared.body,
    )


def _split_http_head(data: bytes) -> tuple[int, str, dict[str, list[str]], bytes] | None:
    """``curl -i`` output: (status, reason, headers, body), skipping 1xx and proxy heads."""
    if not data.startswith(b"HTTP/"):
        return None
    rest = data
    while rest.startswith(b"HTTP/"):
        crlf, lf = rest.find(b"\r\n\r\n"), rest.find(b"\n\n")
        if crlf != -1 and (lf == -1 or crlf < lf):
            head, rest = rest[:crlf], rest[crlf + 4 :]
        elif lf != -1:
            head, rest = rest[:lf], rest[lf + 2 :]
        else:
            head, rest = rest, b""
        lines = head.decode("latin-1").splitlines()
        parts = lines[0].split(" ", 2)
        try:
            status = int(parts[1])
        except (IndexError, ValueError):
            raise ImportInputError(f"bad HTTP status line {lines[0]!r}") from None
        reason = parts[2] if len(parts) > 2 else ""
        headers: dict[str, list[str]] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers.setdefault(name.strip().lower(), []).append(value.strip())
        if status >= 200 and not (reason.lower().startswith("connection established")):
            return status, reason, headers, rest
    raise ImportInputError("the HTTP head has no final status")


def _undo_encoding(body: bytes, headers: dict[str, list[str]]) -> bytes:
    # curl --compressed already decoded the body but keeps the header; plain curl did not.
    codings = [c.strip().lower() for v in headers.get("content-encoding", []) for c in v.split(",")]
    if not any(c in ("gzip", "x-gzip", "deflate") for c in codings):
        return body
    try:
        return zlib.decompress(body, zlib.MAX_WBITS | 32)  # gzip or zlib, by header
    except zlib.error:
        return body


def _response_headers(body: bytes) -> dict[str, list[str]]:
    # Gemini without alt=sse streams a JSON array; everything else here is SSE.
    if body.lstrip(b"\xef\xbb\xbf \t\r\n").startswith((b"[", b"{")):
        return {"content-type": ["application/json"]}
    return {"content-type": ["text/event-stream"]}


def interactions_from_raw(
    data: bytes,
    endpoint: Endpoint,
    *,
    request: Mapping[str, Any] | None = None,
    status: int | None = None,
) -> list[Interaction]:
    exchange = _exchange(endpoint, request)
    head = _split_http_head(data)
    if head is not None:
        code, reason, headers, body = head
        body = _undo_encoding(body, headers)
        if status is not None:
            code = status
    else:
        code = status if status is not None else 200
        reason, headers, body = "", _response_headers(data), data
    uri = exchange.uri
    if (
        endpoint.model_in_path
        and body.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[")
        and "alt=sse" in uri
    ):
        uri = uri.replace("?alt=sse", "").replace("&alt=sse", "")
    return [
        Interaction(
            index=0,
            request=Request("POST", uri, exchange.headers, exchange.body),
            response=Response(code, reason or _REASONS.get(code, ""), headers, body),
        )
    ]


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            413: "Payload Too Large", 429: "Too Many Requests", 500: "Internal Server Error",
            502: "Bad Gateway", 503: "Service Unavailable", 529: "Overloaded"}  # fmt: skip


def sse_from_jsonl(data: bytes, framing: SSEFraming) -> bytes:
    """Put the provider's SSE framing back on one-payload-per-line JSON."""
    end = framing.line_end.encode()
    out: list[bytes] = []
    saw_done = False
    for number, payload in enumerate(data.splitlines(), 1):
        # Kept verbatim, whitespace included: Anthropic pads its data lines, and the
        # cassette should hold what the provider sent.
        if not payload.strip():
            continue
        if payload.strip() == b"[DONE]":
            saw_done = True
            out.append(b"data: [DONE]" + end + end)
            continue
        try:
            value = json.loads(payload)
        except ValueError as exc:
            raise ImportInputError(f"line {number}: not JSON ({exc})") from None
        event = b""
        if framing.event_names and isinstance(value, dict) and isinstance(value.get("type"), str):
            event = b"event: " + value["type"].encode("utf-8") + end
        out.append(event + b"data: " + payload + end + end)
    if not out:
        raise ImportInputError("no JSON lines")
    if framing.done is not None and not saw_done:
        out.append(b"data: " + framing.done.encode() + end + end)
    return b"".join(out)


def interactions_from_jsonl(
    data: bytes,
    endpoint: Endpoint,
    *,
    request: Mapping[str, Any] | None = None,
    status: int | None = None,
) -> list[Interaction]:
    body = sse_from_jsonl(data, endpoint.sse)
    exchange = _exchange(endpoint, request)
    code = status if status is not None else 200
    return [
        Interaction(
            index=0,
            request=Request("POST", exchange.uri, exchange.headers, exchange.body),
            response=Response(
                code, _REASONS.get(code, ""), {"content-type": ["text/event-stream"]}, body
            ),
        )
    ]


# ---------------------------------------------------------------------------
# HAR
# ---------------------------------------------------------------------------


def _har_headers(items: object) -> dict[str, list[str]]:
    headers: dict[str, list[str]] = {}
    if not isinstance(items, list):
        return headers
    for item in items:
        if not isinstance(item, dict):
            continue
        name, value = item.get("name"), item.get("value")
        # HTTP/2 pseudo-headers (:authority, :path, ...) are not headers a client replays.
        if isinstance(name, str) and isinstance(value, str) and not name.startswith(":"):
            headers.setdefault(name.lower(), []).append(value)
    return headers


def _har_entry(number: int, entry: object) -> Interaction:
    if not isinstance(entry, dict):
        raise ImportInputError(f"HAR entry {number} is not an object")
    req, resp = entry.get("request"), entry.get("response")
    if not isinstance(req, dict) or not isinstance(resp, dict):
        raise ImportInputError(f"HAR entry {number} has no request or response")
    post = req.get("postData")
    req_body = b""
    if isinstance(post, dict) and isinstance(post.get("text"), str):
        req_body = post["text"].encode("utf-8")
    content = resp.get("content")
    text = content.get("text") if isinstance(content, dict) else None
    if not isinstance(text, str):
        raise ImportInputError(
            f"HAR entry {number} ({req.get('url')}) has no response body: export the HAR "
            "with content (some browsers leave streamed bodies out)"
        )
    if isinstance(content, dict) and content.get("encoding") == "base64":
        try:
            body = base64.b64decode(text, validate=True)
        except binascii.Error as exc:
            raise ImportInputError(
                f"HAR entry {number}: response body is not base64: {exc}"
            ) from None
    else:
        body = text.encode("utf-8")
    status = resp.get("status")
    if not isinstance(status, int):
        raise ImportInputError(f"HAR entry {number}: response status is not a number")
    return Interaction(
        index=number,
        request=Request(
            str(req.get("method") or "POST"),
            str(req.get("url") or ""),
            _har_headers(req.get("headers")),
            req_body,
        ),
        # content.text is what the browser decoded; the cassette drops content-encoding.
        response=Response(
            status, str(resp.get("statusText") or ""), _har_headers(resp.get("headers")), body
        ),
    )


def interactions_from_har(
    data: bytes, protocol: str, *, entry: int | None = None
) -> list[Interaction]:
    try:
        har = json.loads(data)
        entries = har["log"]["entries"]
    except (ValueError, KeyError, TypeError):
        raise ImportInputError("not a HAR file (no log.entries)") from None
    if not isinstance(entries, list):
        raise ImportInputError("not a HAR file (log.entries is not a list)")
    if entry is not None:
        if not 0 <= entry < len(entries):
            raise ImportInputError(f"no HAR entry {entry} (there are {len(entries)})")
        return [_renumber(_har_entry(entry, entries[entry]), 0)]
    picked: list[Interaction] = []
    for number, item in enumerate(entries):
        request = item.get("request") if isinstance(item, dict) else None
        url = request.get("url") if isinstance(request, dict) else None
        if not isinstance(url, str):
            continue
        # Decide on the URL first, so the pages, scripts and images of a browser session
        # are passed over without asking for their bodies.
        probe = Interaction(number, Request("POST", url, {}, b""), Response(200, "", {}, b""))
        try:
            by_url = detect_protocol(probe)
        except UnknownProtocolError:
            continue
        if by_url == protocol:
            picked.append(_renumber(_har_entry(number, item), len(picked)))
    if not picked:
        raise ImportInputError(
            f"no HAR entry is a {protocol} request ({len(entries)} entries); name one with --entry"
        )
    return picked


def _renumber(interaction: Interaction, index: int) -> Interaction:
    return Interaction(index, interaction.request, interaction.response)


# ---------------------------------------------------------------------------
# Cassettes
# ---------------------------------------------------------------------------


def interactions_from_cassette(path: Path, *, interaction: int | None = None) -> list[Interaction]:
    try:
        cassette = load_cassette(path)
    except CassetteError as exc:
        raise ImportInputError(str(exc)) from None
    items = list(cassette.interactions)
    if interaction is not None:
        if not 0 <= interaction < len(items):
            raise ImportInputError(f"{path}: no interaction {interaction} (it has {len(items)})")
        items = [items[interaction]]
    if not items:
        raise ImportInputError(f"{path}: the cassette has no interactions")
    return [_renumber(it, i) for i, it in enumerate(items)]


# ---------------------------------------------------------------------------
# The whole import
# ---------------------------------------------------------------------------


def read_interactions(
    path: Path,
    protocol: str,
    *,
    fmt: Format | None = None,
    request: Mapping[str, Any] | None = None,
    status: int | None = None,
    entry: int | None = None,
    interaction: int | None = None,
) -> tuple[Format, list[Interaction]]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportInputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    fmt = fmt or detect_format(path, data)
    if protocol == WEBSOCKET_PROTOCOL:
        # A WebSocket connection's frames, one a line: one interaction a turn
        # (harness/stream_harness/workflow/websocket_session.py).
        if fmt not in ("jsonl", "cassette"):
            raise ImportInputError(
                f"{path}: a {protocol} import reads a JSON-lines frame log (one frame a line) or a cassette"
            )
        if fmt == "cassette":
            return fmt, interactions_from_cassette(path, interaction=interaction)
        try:
            return fmt, turns_from_frames(frames_from_jsonl(data))
        except SessionInputError as exc:
            raise ImportInputError(f"{path}: {exc}") from None
    endpoint = get_endpoint(protocol)
    try:
        if fmt == "cassette":
            return fmt, interactions_from_cassette(path, interaction=interaction)
        if fmt == "har":
            return fmt, interactions_from_har(data, protocol, entry=entry)
        if fmt == "jsonl":
            return fmt, interactions_from_jsonl(data, endpoint, request=request, status=status)
        return fmt, interactions_from_raw(data, endpoint, request=request, status=status)
    except ImportInputError as exc:
        message = str(exc)
        raise ImportInputError(
            message if message.startswith(str(path)) else f"{path}: {message}"
        ) from None


def import_file(
    path: Path,
    protocol: str,
    out: Path,
    *,
    fmt: Format | None = None,
    request: Mapping[str, Any] | None = None,
    status: int | None = None,
    entry: int | None = None,
    interaction: int | None = None,
    force: bool = False,
) -> WriteResult:
    """Read, scrub and write; raises ImportInputError, RequestSpecError or WriteError."""
    out = Path(out)
    refuse_existing(out, force)
    _fmt, items = read_interactions(
        path,
        protocol,
        fmt=fmt,
        request=request,
        status=status,
        entry=entry,
        interaction=interaction,
    )
    if not force:
        for item in items:
            problem = not_a_stream(item, protocol)
            if problem:
                raise ImportInputError(
                    f"{path}: interaction {item.index}: {problem}; pass --force to import it anyway"
                )
    scrubber = Scrubber()
    scrubbed: Sequence[Interaction] = [scrubber.interaction(it) for it in items]
    with scratch_dir(out) as scratch:
        return write_checked(scrubbed, out, scratch=scratch, force=force, protocol=protocol)


def not_a_stream(item: Interaction, protocol: str) -> str | None:
    """Why a successful response is no stream of ``protocol`` (None when it is one).

    An import is a test case only if the reference can read it: a body with no framing, or
    one that the normalizer finds malformed from its first bytes, is almost always the
    wrong file. Error responses are cases as they are.
    """
    response = item.response
    if response.status >= 400:
        return None
    if not item.is_streaming:
        return f"not a {protocol} stream (no streaming framing found in {len(response.body)} bytes)"
    events = list(
        normalize(protocol, [response.body], status=response.status, headers=dict(response.headers))
    )
    last = events[-1]
    text_seen = any(e.type in ("text_delta", "thinking_delta", "toolcall_delta") for e in events)
    # A stream cut short is a case (truncation); one the normalizer cannot parse at all is not.
    if isinstance(last, ErrorEvent) and not text_seen:
        message = last.error_message or ""
        if message.startswith(MALFORMED_PREFIXES):
            return f"not a {protocol} stream: {message}"
    return None


def add_import_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "import",
        help="turn a raw SSE body, a HAR file, JSON lines of chunks or another project's cassette into a scrubbed cassette",
        description="Exit status 2 on bad input (an argument, a file that cannot be read or is not a stream of the protocol), 1 when a secret survives scrubbing; nothing is written then.",
    )
    p.add_argument("file", metavar="FILE", help="the input")
    add_endpoint_protocol(p)
    add_out(p)
    p.add_argument(
        "--format",
        choices=FORMATS,
        help="the input's kind (default: told from its name and content)",
    )
    p.add_argument(
        "--request",
        metavar="FILE",
        help="raw and jsonl inputs: the request body that produced them (as for record)",
    )
    p.add_argument(
        "--status",
        type=int,
        help="raw and jsonl inputs: the HTTP status (default: 200, or the one in curl -i output)",
    )
    p.add_argument(
        "--entry",
        type=int,
        help="HAR: the index in log.entries to import (default: every entry for the protocol)",
    )
    p.add_argument(
        "--interaction", type=int, help="cassette: the interaction to import (default: all)"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace an existing cassette, and import a body that is not a stream of the protocol",
    )
    p.set_defaults(func=import_command)
    return p


def import_command(args: argparse.Namespace) -> int:
    try:
        request = read_request_file(Path(args.request)) if args.request else None
        result = import_file(
            Path(args.file),
            args.protocol,
            Path(args.out),
            fmt=args.format,
            request=request,
            status=args.status,
            entry=args.entry,
            interaction=args.interaction,
            force=args.force,
        )
    except (RequestSpecError, ImportInputError, WriteError, KeyboardInterrupt) as exc:
        return write_failure(exc, args.out)
    print(f"imported {result.interactions} interaction(s) into {result.path}")
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0
