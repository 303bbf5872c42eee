"""Recording and importing Responses WebSocket-mode sessions (one cassette a connection).

Both end in the same place: an ordered list of frames that crossed one connection, each
``{"dir": "client"|"server", "op", "fin", "data"|"base64", "code", "reason"}``, cut into turns
(:func:`turns_from_frames`) and written as the cassette form of
specs/protocols/openai-responses-websocket.md (one interaction a turn, its frame log as the
101 response's body).

- ``stream-harness import`` reads such a frame list from a JSON-lines file (one frame a
  line), for logs a client or gateway wrote itself.
- ``stream-harness record --protocol openai-responses-websocket`` runs a loopback WebSocket
  proxy (:class:`RecordingProxy`): the user's client connects to it instead of the API, every
  frame is forwarded to the upstream and back (continuation frames as continuation frames,
  close codes as they came) and logged; when the client's connection ends, the session is
  the cassette. The upstream key is the proxy's (from the environment), never the client's,
  and no key reaches the cassette.
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect
from websockets.sync.server import Server, ServerConnection, serve

from stream_harness.recordings.cassette import Interaction, Request, Response
from stream_harness.workflow.scrub import Scrubber
from stream_harness.workflow.writer import (
    WriteError,
    WriteResult,
    refuse_existing,
    scratch_dir,
    write_checked,
)

DEFAULT_UPSTREAM: Final = "wss://api.openai.com/v1/responses"
API_KEY_ENV: Final = ("OPENAI_API_KEY",)  # as openai-responses (specs/recording.yaml)
# Server messages that end a turn (specs/protocols/openai-responses-websocket.md).
TERMINAL_TYPES: Final = frozenset(
    {"response.completed", "response.incomplete", "response.failed", "response.cancelled", "error"}
)
_KEPT_REQUEST_HEADERS: Final = (
    "host",
    "upgrade",
    "connection",
    "sec-websocket-version",
    "user-agent",
    "openai-beta",
)


class SessionInputError(ValueError):
    """A frame log that is not one: the message names the line and the problem."""


def _type_of(payload: bytes) -> str | None:
    try:
        value = json.loads(payload)
    except ValueError:
        return None
    kind = value.get("type") if isinstance(value, dict) else None
    return kind if isinstance(kind, str) else None


def _payload(frame: Mapping[str, Any]) -> bytes:
    data = frame.get("data")
    if isinstance(data, str):
        return data.encode("utf-8", "surrogatepass")
    encoded = frame.get("base64")
    if isinstance(encoded, str):
        return base64.b64decode(encoded)
    return b""


def _log_line(frame: Mapping[str, Any], *, client: bool) -> str:
    keep = {k: frame[k] for k in ("op", "fin", "data", "base64", "code", "reason") if k in frame}
    if keep.get("fin", True) is True:
        keep.pop("fin", None)
    line = {"op": keep.pop("op"), **({"dir": "client"} if client else {}), **keep}
    return json.dumps(line, ensure_ascii=False) + "\n"


def turns_from_frames(
    frames: Iterable[Mapping[str, Any]],
    *,
    uri: str = DEFAULT_UPSTREAM,
    request_headers: Mapping[str, str] | None = None,
    response_headers: Mapping[str, str] | None = None,
) -> list[Interaction]:
    """The turns of one connection's frames, as cassette interactions.

    A turn opens with a client ``response.create`` message sent when no turn is in flight
    (none yet, or the last one's terminal message came); its log is every frame after it up
    to the next such message: server frames as they came, client frames marked ``dir:
    client`` (a ``response.create`` sent while a turn is in flight stays in that turn, as
    the client's own message, with whatever the server answers it). Frames before the first
    turn (a client's session setup) are not kept.
    """
    host = uri.split("://", 1)[-1].split("/", 1)[0]
    req_headers = {"host": [host], "upgrade": ["websocket"], "connection": ["Upgrade"]}
    for name, value in (request_headers or {}).items():
        if name.lower() in _KEPT_REQUEST_HEADERS:
            req_headers[name.lower()] = [value]
    resp_headers = {"upgrade": ["websocket"], "connection": ["Upgrade"]}
    for name, value in (response_headers or {}).items():
        if name.lower() not in ("sec-websocket-accept", "set-cookie"):
            resp_headers[name.lower()] = [value]
    turns: list[tuple[bytes, list[str]]] = []
    in_flight = False
    message = b""  # the server message being assembled, to tell when a turn ended
    pending_client = b""
    for n, frame in enumerate(frames, 1):
        op = frame.get("op")
        if op not in ("text", "binary", "continuation", "close", "ping", "pong"):
            raise SessionInputError(f"frame {n}: no known op ({op!r})")
        client = frame.get("dir", "server") == "client"
        fin = frame.get("fin", True) is not False
        if client and op in ("text", "continuation"):
            pending_client = (pending_client if op == "continuation" else b"") + _payload(frame)
            if fin:
                whole, pending_client = pending_client, b""
                if _type_of(whole) == "response.create" and not in_flight:
                    turns.append((whole, []))
                    in_flight = True
                    continue
        if not turns:
            continue
        turns[-1][1].append(_log_line(frame, client=client))
        if not client and op in ("text", "continuation"):
            message = (message if op == "continuation" else b"") + _payload(frame)
            if fin and _type_of(message) in TERMINAL_TYPES:
                in_flight = False
    return [
        Interaction(
            index=i,
            request=Request(method="GET", uri=uri, headers=dict(req_headers), body=opening),
            response=Response(
                status=101,
                reason="Switching Protocols",
                headers=dict(resp_headers),
                body="".join(lines).encode("utf-8"),
            ),
        )
        for i, (opening, lines) in enumerate(turns)
    ]


def frames_from_jsonl(data: bytes) -> list[dict[str, Any]]:
    """A JSON-lines frame log (one frame object a line) as frames; a bad line is an error."""
    frames: list[dict[str, Any]] = []
    for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise SessionInputError(f"line {n}: not JSON ({exc})") from None
        if not isinstance(value, dict) or "op" not in value:
            raise SessionInputError(f'line {n}: not a frame (an object with an "op")')
        frames.append(value)
    return frames


# ---------------------------------------------------------------------------
# The recording proxy
# ---------------------------------------------------------------------------


def _frame(dir_: str, op: str, payload: str | bytes, *, fin: bool) -> dict[str, Any]:
    frame: dict[str, Any] = {"dir": dir_, "op": op, "fin": fin}
    if isinstance(payload, str):
        frame["data"] = payload
    else:
        frame["base64"] = base64.b64encode(payload).decode("ascii")
    return frame


@dataclass
class Session:
    """One proxied connection: its frames in order, and the handshake's headers."""

    frames: list[dict[str, Any]] = field(default_factory=list)
    request_headers: dict[str, str] = field(default_factory=dict)
    response_headers: dict[str, str] = field(default_factory=dict)
    done: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, frame: dict[str, Any]) -> None:
        with self._lock:
            self.frames.append(frame)


class RecordingProxy:
    """A loopback WebSocket proxy to ``upstream`` that logs the first connection it serves.

    ``with RecordingProxy(upstream, api_key=...) as proxy: ... proxy.url ... proxy.wait()``.
    """

    def __init__(
        self,
        upstream: str,
        *,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        timeout: float = 600.0,
    ) -> None:
        self.upstream = upstream
        self.api_key = api_key
        self.timeout = timeout
        self.session = Session()
        self._taken = threading.Lock()
        self._server: Server = serve(self._handle, host, port)
        self.port = int(self._server.socket.getsockname()[1])
        self.host = host

    @property
    def url(self) -> str:
        """Where a client connects: ``ws://127.0.0.1:PORT`` (its base URL ``http://...:PORT/v1``)."""
        return f"ws://{self.host}:{self.port}"

    def __enter__(self) -> RecordingProxy:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the recorded connection to end; False on timeout."""
        return self.session.done.wait(timeout)

    def _handle(self, client: ServerConnection) -> None:
        if not self._taken.acquire(blocking=False):
            client.close(1013, "stream-harness record: one connection a recording")
            return
        session = self.session
        try:
            request = client.request
            if request is not None:
                session.request_headers = {
                    k.lower(): v
                    for k, v in request.headers.raw_items()
                    if k.lower() != "authorization"
                }
            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else None
            try:
                upstream = connect(
                    self.upstream, additional_headers=headers, open_timeout=30, max_size=None
                )
            except Exception as exc:
                session.add(
                    _frame("server", "close", b"", fin=True)
                    | {"code": 1011, "reason": f"upstream: {type(exc).__name__}"}
                )
                client.close(1011, "stream-harness record: the upstream did not connect")
                return
            with upstream:
                if upstream.response is not None:
                    session.response_headers = {
                        k.lower(): v for k, v in upstream.response.headers.raw_items()
                    }
                pump = threading.Thread(
                    target=self._downstream, args=(upstream, client), daemon=True
                )
                pump.start()
                self._upstream(client, upstream)
                pump.join(self.timeout)
        finally:
            session.done.set()

    def _upstream(self, client: ServerConnection, upstream: ClientConnection) -> None:
        """Client -> upstream: whole messages (a client's own fragmentation is not a fault
        the recording is about), logged as they went."""
        try:
            for message in client:
                self.session.add(
                    _frame(
                        "client",
                        "text" if isinstance(message, str) else "binary",
                        message,
                        fin=True,
                    )
                )
                upstream.send(message)
        except ConnectionClosed:
            pass
        with contextlib.suppress(Exception):
            upstream.close()

    def _downstream(self, upstream: ClientConnection, client: ServerConnection) -> None:
        """Upstream -> client, frame by frame: fragments forwarded as fragments, the close
        code passed on (or the connection dropped, when the upstream's was lost)."""
        try:
            while True:
                fragments = list(upstream.recv_streaming())
                for i, piece in enumerate(fragments):
                    op = (
                        ("text" if isinstance(piece, str) else "binary")
                        if i == 0
                        else "continuation"
                    )
                    self.session.add(_frame("server", op, piece, fin=i == len(fragments) - 1))
                client.send(fragments if len(fragments) > 1 else fragments[0])
        except ConnectionClosed as closed:
            received = closed.rcvd
            code = received.code if received is not None else 1006
            reason = received.reason if received is not None else ""
            if not self.session.frames or self.session.frames[-1].get("op") != "close":
                self.session.add({"dir": "server", "op": "close", "code": code, "reason": reason})
            with contextlib.suppress(Exception):
                if received is None:
                    client.socket.close()
                else:
                    client.close(code, reason)


def session_turns(session: Session, upstream: str) -> list[Interaction]:
    """A finished session's turns; frames the client sent after the upstream closed are not
    part of the recording."""
    frames: Sequence[dict[str, Any]] = list(session.frames)
    return turns_from_frames(
        frames,
        uri=upstream,
        request_headers=session.request_headers,
        response_headers=session.response_headers,
    )


PROTOCOL: Final = "openai-responses-websocket"


def write_session(
    interactions: Sequence[Interaction],
    out: Path,
    *,
    force: bool = False,
    literals: Sequence[str] = (),
) -> WriteResult:
    """Scrub and write one connection's turns through the same gate as every recording."""
    if not interactions:
        raise WriteError(
            f"{out}: not written: no turn was recorded (no response.create from the client)"
        )
    scrubber = Scrubber(literals=list(literals))
    scrubbed = [scrubber.interaction(it) for it in interactions]
    with scratch_dir(out) as scratch:
        return write_checked(
            scrubbed,
            out,
            scratch=scratch,
            force=force,
            literals=scrubber.literals,
            protocol=PROTOCOL,
        )


def record_websocket(
    out: Path,
    *,
    upstream: str = DEFAULT_UPSTREAM,
    api_key: str | None = None,
    port: int = 0,
    force: bool = False,
    timeout: float = 600.0,
    ready: Callable[[RecordingProxy], None] | None = None,
) -> WriteResult:
    """Run the recording proxy until one client connection has come and gone, then write
    its turns to ``out``; ``ready(proxy)`` is called once it listens (the CLI prints where)."""
    out = Path(out)
    refuse_existing(out, force)
    with RecordingProxy(upstream, api_key=api_key, port=port, timeout=timeout) as proxy:
        if ready is not None:
            ready(proxy)
        if not proxy.wait(timeout):
            raise WriteError(f"{out}: not written: no connection ended within {timeout:g} s")
    return write_session(
        session_turns(proxy.session, upstream),
        out,
        force=force,
        literals=[api_key] if api_key else [],
    )
