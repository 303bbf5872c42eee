"""A real gateway between a replayed upstream and the reference, as an ordinary Adapter.

``ProxyAdapter(gateway, upstream, client)`` is one report row, named
``<gateway>[<upstream>-><client>]``. Its ``run`` takes a body of the upstream protocol
(the cassette's response, in the chunks a check chose), puts it in place on the loopback
upstream (:mod:`stream_harness.server.upstream`), sends a streaming request of the client
protocol through the gateway, and hands the bytes that come out, as they came, to the
reference normalizer of the client protocol. So the runner, the checks, the report and
the expectation files treat a gateway like a library; what is particular to a gateway is
said by attributes the checks read: ``client_protocol`` (the final message is compared
across protocols, :mod:`stream_harness.adapters.gateways.compare`), ``proxy`` (the proxy checks apply) and
``split_budget`` (a request through a gateway costs a tenth of a second, not
microseconds, so a few splits instead of a hundred). The checks that need more than a
result call :meth:`ProxyAdapter.exchange`: the upstream paced (event by event, or a few
bytes at a time) or cut (a FIN, a reset, a close inside a chunk), and the client side read
by a raw HTTP/1.1 reader (:mod:`stream_harness.adapters.gateways.rawhttp`) that records how
the transfer ended, with the upstream's log of when each write and event went out.

One gateway process and one upstream serve every row of that gateway in a process
(:class:`ProxySession`): started at the first run, restarted if the gateway dies (the run
it died in is a crashed result, never an exception), stopped by :meth:`close`, at exit,
or by the ``with`` block.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from stream_harness.adapters.gateways.catalog import (
    CLIENT_PATHS,
    GATEWAYS,
    Gateway,
    client_request,
    row_name,
)
from stream_harness.adapters.gateways.process import HOST, GatewayError, GatewayProcess
from stream_harness.adapters.gateways.rawhttp import Transfer, request
from stream_harness.adapters.protocol import AdapterLevel, AdapterLoadError, AdapterResult, Headers
from stream_harness.contract.events import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    Event,
    ProviderBlock,
    TextEndEvent,
    ThinkingEndEvent,
    ToolCall,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from stream_harness.providers.reference import normalize
from stream_harness.server.loopback import CutMode, Hit, Pacing
from stream_harness.server.upstream import MISMATCH_STATUS, ProxyUpstream, Reply

MAX_FAILED_STARTS: Final = 2
SPLIT_BUDGET: Final = 4
LOG_ENV: Final = "STREAM_HARNESS_PROXY_LOGS"
_DROP: Final = {"content-length", "content-encoding", "transfer-encoding", "connection"}


class ProxySession:
    """The upstream and the gateway process every row of one gateway shares."""

    def __init__(self, gateway: Gateway, log_dir: Path | None = None) -> None:
        self.gateway = gateway
        folder = log_dir or (Path(os.environ[LOG_ENV]) if os.environ.get(LOG_ENV) else None)
        self.log_dir = folder or Path(tempfile.mkdtemp(prefix=f"stream-harness-{gateway.name}-"))
        self.upstream: ProxyUpstream | None = None
        self.process: GatewayProcess | None = None
        self.failed_starts = 0
        self.starts = 0
        self.owner = os.getpid()

    def ensure(self) -> tuple[ProxyUpstream, GatewayProcess]:
        """The running upstream and gateway, started (again) if need be."""
        if self.owner != os.getpid():  # a forked worker: the parent's threads did not come along
            self.upstream, self.process, self.owner = None, None, os.getpid()
        if self.upstream is None:
            self.upstream = ProxyUpstream().start()
        if self.process is not None and not self.process.alive():
            self.process.stop()
            self.process = None
        if self.process is None:
            if self.failed_starts >= MAX_FAILED_STARTS:
                raise GatewayError(
                    f"{self.gateway.name}: given up after {self.failed_starts} failed starts"
                )
            proc = self.gateway.process(self.upstream.url, self.log_dir)
            try:
                proc.start()
            except GatewayError:
                self.failed_starts += 1
                raise
            self.failed_starts = 0
            self.starts += 1
            self.process = proc
        return self.upstream, self.process

    def close(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None
        if self.upstream is not None and self.owner == os.getpid():
            self.upstream.stop()
        self.upstream = None

    def __enter__(self) -> ProxySession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_SESSIONS: dict[str, ProxySession] = {}


@atexit.register
def _close_sessions() -> None:
    for s in list(_SESSIONS.values()):
        s.close()


def shared_session(gateway: Gateway) -> ProxySession:
    found = _SESSIONS.get(gateway.name)
    if found is None:
        found = _SESSIONS[gateway.name] = ProxySession(gateway)
    return found


@dataclass
class Exchange:
    """One request through the gateway: what the client received, when, and what went upstream."""

    result: AdapterResult
    status: int = 0
    headers: dict[str, list[str]] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    times: list[float] = field(default_factory=list)  # monotonic time each client read returned
    sent: float = 0.0
    hits: list[Hit] = field(default_factory=list)
    transfer: Transfer | None = None  # how the client's transfer ended (None: not read raw)
    # A fault of the gateway's own runtime in this exchange ("" if none): how its process
    # ended, or the 5xx it answered without calling the upstream.
    gateway_fault: str = ""

    def stream_hit(self) -> Hit | None:
        """The (last) stream request upstream; side requests (a GET for model metadata) do not count."""
        streams = [h for h in self.hits if h.protocol is not None]
        return streams[-1] if streams else None

    def stream_sent(self) -> list[float]:
        """When the upstream sent each chunk of the stream request."""
        hit = self.stream_hit()
        return hit.sent if hit else []

    def events_sent_before(self, moment: float) -> int:
        """How many upstream events had been written whole before ``moment`` (monotonic)."""
        hit = self.stream_hit()
        if hit is None:
            return 0
        written = max(
            (end for t, end in zip(hit.sent, hit.sent_ends, strict=False) if t < moment), default=0
        )
        return sum(1 for end in hit.event_ends if end <= written)

    def events_with(self, index: int) -> int | None:
        """How many upstream events were out once the write carrying the end of event
        ``index`` (0-based) was: a gateway cannot have seen that event with fewer."""
        hit = self.stream_hit()
        if hit is None or not hit.event_ends:
            return None
        end = hit.event_ends[min(index, len(hit.event_ends) - 1)]
        written = next((w for w in hit.sent_ends if w >= end), None)
        if written is None:
            return None
        return sum(1 for e in hit.event_ends if e <= written)

    def held_events(self) -> int | None:
        """The held head in events: upstream events written before the client's first byte."""
        return self.events_sent_before(self.times[0]) if self.times else None

    def error_carried(self) -> bool:
        """Whether the response itself told the client of a failure: an HTTP error status,
        or an error event of the client protocol. Not the reference's own "the stream
        ended before its terminal event" (``origin: stream``): that is the client
        noticing, not the gateway saying."""
        if self.status >= 400:
            return True
        last = self.result.events[-1] if self.result.events else None
        return (
            isinstance(last, ErrorEvent)
            and last.error is not None
            and last.error.origin == "provider"
        )

    def ttfb_ratio(self) -> float | None:
        """Client first byte after the upstream's first chunk, over the upstream's own span.

        Below 1: the client had bytes before the upstream sent its last chunk (streamed);
        at or above 1: the gateway held the stream until the upstream had finished. Timed
        from when each write began (``Hit.began``), before which the gateway cannot have
        it: a gateway holding the stream passes the last write on within a millisecond,
        sooner than the server's thread may get the CPU back to time its write's end on a
        loaded machine (measured at load 10: the client's first byte 0.06-0.35 ms before
        that end, a ratio of 0.9993-0.9999 for a gateway that held everything).
        """
        hit = self.stream_hit()
        up = hit.began if hit else []
        if not self.times or len(up) < 2:
            return None
        span = up[-1] - up[0]
        return (self.times[0] - up[0]) / span if span > 0 else None


class ProxyAdapter:
    """One gateway on one upstream -> client protocol pair (see the module docstring)."""

    level: AdapterLevel = "event"
    proxy = True
    split_budget = SPLIT_BUDGET
    bounds_own_runs = True  # every request has its timeout (--run-timeout is for libraries)

    def __init__(
        self,
        gateway: Gateway | str,
        upstream: str,
        client: str,
        *,
        session: ProxySession | None = None,
        timeout: float = 60.0,
    ) -> None:
        gw = GATEWAYS[gateway] if isinstance(gateway, str) else gateway
        if client not in gw.routes.get(upstream, ()):
            raise AdapterLoadError(f"{gw.name} does not serve {client} from a {upstream} upstream")
        self.gateway = gw
        self.name = row_name(gw.name, upstream, client)
        self.protocols = frozenset({upstream})
        self.upstream_protocol = upstream
        self.client_protocol = client
        self.session = session or shared_session(gw)
        self.timeout = timeout

    def version(self) -> str:
        return f"{self.gateway.version()} ({self.upstream_protocol} -> {self.client_protocol})"

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> ProxyAdapter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(
        self, protocol: str, chunks: Sequence[bytes], *, status: int = 200, headers: Headers = None
    ) -> AdapterResult:
        return self.exchange(protocol, chunks, status=status, headers=headers).result

    def exchange(
        self,
        protocol: str,
        chunks: Sequence[bytes],
        *,
        status: int = 200,
        headers: Mapping[str, Sequence[str]] | None = None,
        delay: float = 0.0,
        cut: CutMode = "none",
        pacing: Pacing = "chunks",
        timeout: float | None = None,
    ) -> Exchange:
        """Serve ``chunks`` upstream (``delay`` apart, in small pieces under ``pacing="bytes"``,
        ending as ``cut`` says) and read the client side (``timeout``: seconds without a
        byte before the client gives up; the adapter's own by default).

        An exchange in which the gateway's own runtime failed (its process died, or it
        answered a 5xx without calling the upstream) is made once more, on a restarted
        gateway if need be, and the second counts. Under the whole matrix's load LiteLLM's
        CPython segfaulted once, and once it answered 500 with a ContextVar's repr before
        calling the upstream, each on a case it passes every other time: reported, such a
        fault made two runs of one report differ, and it says nothing of how the gateway
        handles a stream. A gateway that fails so on that input fails again, and the
        result says it did twice.
        """
        args = (protocol, chunks, status, headers, delay, cut, pacing, timeout)
        ex = self._exchange_once(*args)
        if not ex.gateway_fault:
            return ex
        again = self._exchange_once(*args)
        crashed = again.result.crashed
        if again.gateway_fault and crashed:
            crashed = f"{crashed} (the first try too: {ex.gateway_fault})"
        raw = {**again.result.raw, "first_try": ex.result.crashed or ex.gateway_fault}
        again.result = replace(again.result, crashed=crashed, raw=raw)
        return again

    def _exchange_once(
        self,
        protocol: str,
        chunks: Sequence[bytes],
        status: int,
        headers: Mapping[str, Sequence[str]] | None,
        delay: float,
        cut: CutMode,
        pacing: Pacing,
        timeout: float | None,
    ) -> Exchange:
        try:
            upstream, proc = self.session.ensure()
        except (GatewayError, AdapterLoadError) as exc:
            return Exchange(AdapterResult(message=None, crashed=str(exc)))
        pairs = [
            (k, v)
            for k, values in (headers or {}).items()
            if k.lower() not in _DROP
            for v in values
        ]
        upstream.answer(
            Reply(protocol, status, pairs, [c for c in chunks if c], delay, cut, pacing)
        )
        body = client_request(
            self.client_protocol,
            self.gateway.model(protocol),
            _tool_names(protocol, chunks, status),
        )
        ex = Exchange(AdapterResult(message=None))
        problem = self._send(proc, upstream, body, ex, timeout or self.timeout)
        ex.hits = list(upstream.hits)
        raw: dict[str, Any] = {
            "gateway": self.gateway.name,
            "client_status": ex.status,
            "client_transfer": ex.transfer.describe() if ex.transfer else None,
            "upstream_requests": [f"{h.method} {h.path} -> {h.status}" for h in ex.hits],
        }
        if proc.log_path is not None:
            raw["gateway_log"] = str(proc.log_path)
        mismatch = next((h.note for h in ex.hits if h.status == MISMATCH_STATUS), None)
        if mismatch:
            ex.result = AdapterResult(message=None, crashed=mismatch, raw=raw)
            return ex
        if problem is not None and not ex.chunks and not ex.status:
            why = problem
            if proc.died_within(1.0):
                ended = proc.how_it_ended()
                ex.gateway_fault = f"it died ({ended})"
                why = f"{problem}; the gateway died ({ended}): {proc.tail()}"
            ex.result = AdapterResult(message=None, crashed=why, raw=raw)
            return ex
        if problem is not None and not proc.alive():
            ended = proc.how_it_ended()
            ex.gateway_fault = f"it died ({ended})"
            raw["gateway_died"] = f"{ended}: {proc.tail()}"
        if not ex.hits:
            text = b"".join(ex.chunks)[:300].decode("utf-8", "replace")
            crashed = f"the gateway answered {ex.status} without calling the upstream: {text}"
            if ex.status >= 500:
                ex.gateway_fault = f"it answered {ex.status} without calling the upstream"
            ex.result = AdapterResult(message=None, crashed=crashed, raw=raw)
            return ex
        if problem is not None:
            raw["client_transport_error"] = problem
        events: list[Event] = list(
            normalize(self.client_protocol, ex.chunks, status=ex.status or 200, headers=ex.headers)
        )
        last = events[-1] if events else None
        message = last.message if isinstance(last, DoneEvent | ErrorEvent) else None
        if message is not None:
            reference = _reference_message(protocol, chunks, status, headers)
            message, minted = stable_ids(message, reference, b"".join(chunks))
            if minted:
                raw["minted_ids"] = minted
                events = _with_stable_ids(events, message)
        ex.result = AdapterResult(message=message, events=events, raw=raw)
        return ex

    def _send(
        self,
        proc: GatewayProcess,
        upstream: ProxyUpstream,
        body: dict[str, object],
        ex: Exchange,
        timeout: float,
    ) -> str | None:
        """POST through the gateway, reading the body as it comes (raw HTTP/1.1:
        :mod:`stream_harness.adapters.gateways.rawhttp`); a transport problem as text."""
        data = json.dumps(body).encode()
        hdrs = {
            "content-type": "application/json",
            "accept": "text/event-stream"
            if self.client_protocol != "google-generative-ai"
            else "*/*",
            "connection": "close",
            "anthropic-version": "2023-06-01",
            **self.gateway.headers(self.upstream_protocol, upstream.url, proc),
        }
        ex.sent = time.monotonic()
        try:
            resp = request(
                HOST,
                proc.port,
                "POST",
                CLIENT_PATHS[self.client_protocol],
                data,
                hdrs,
                timeout=timeout,
            )
        except OSError as exc:
            return f"{type(exc).__name__}: {exc}"
        ex.sent = resp.sent
        ex.status, ex.headers, ex.chunks, ex.times, ex.transfer = (
            resp.status,
            resp.headers,
            resp.chunks,
            resp.times,
            resp.transfer,
        )
        return resp.problem()


MINTED: Final = "<minted by the gateway>"
# A UUID, or a long hex run after a prefix (``call_50b94e51dcb84db0b5d3d83e7852``).
_MINTED_ID: Final = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|(?<=_)[0-9a-f]{20,}\b"
)


def stable_ids(
    message: AssistantMessage, reference: AssistantMessage | None, upstream_body: bytes = b""
) -> tuple[AssistantMessage, list[str]]:
    """The message with the ids the gateway minted per request replaced by markers.

    A translating gateway makes up a response id (``chatcmpl-<uuid>``), tool-call ids
    where the upstream had none, and item ids inside the replay tokens and annotations it
    builds (``{"id": "rs_<uuid>"}``, ``fc_call_<hex>``), new on every request; kept, they
    would make every two runs of one body differ. An id the upstream sent (found in its
    body) and the gateway kept stays.
    """
    minted: list[str] = []
    update: dict[str, Any] = {}

    def mask(text: str) -> str:
        return _MINTED_ID.sub(
            lambda m: m.group(0) if m.group(0).encode() in upstream_body else "<id>", text
        )

    if message.response_id and (reference is None or message.response_id != reference.response_id):
        minted.append(f"response_id {message.response_id}")
        update["response_id"] = MINTED
    kept = {b.id for b in (reference.content if reference else []) if isinstance(b, ToolCall)}
    content = []
    for i, block in enumerate(message.content):
        if isinstance(block, ToolCall) and block.id and block.id not in kept:
            minted.append(f"tool call id {block.id}")
            block = block.model_copy(update={"id": f"{MINTED} #{i}"})  # still distinct (C10)
        if block.signature and mask(block.signature) != block.signature:
            minted.append(f"ids in the signature of block {i}")
            block = block.model_copy(update={"signature": mask(block.signature)})
        content.append(block)
    if minted:
        update["content"] = content
    if message.provider_blocks:
        text = json.dumps([b.model_dump(mode="json") for b in message.provider_blocks])
        if mask(text) != text:
            minted.append("ids in provider blocks")
            update["provider_blocks"] = [
                ProviderBlock.model_validate(b) for b in json.loads(mask(text))
            ]
    return (message.model_copy(update=update) if update else message), minted


def _with_stable_ids(events: list[Event], message: AssistantMessage) -> list[Event]:
    """The events with the final message's stable ids, on the tool-call events too (C8)."""
    ids = {i: b.id for i, b in enumerate(message.content) if isinstance(b, ToolCall)}
    sigs = {i: b.signature for i, b in enumerate(message.content)}
    out: list[Event] = []
    for e in events:
        if isinstance(e, DoneEvent | ErrorEvent):
            e = e.model_copy(update={"message": message})
        elif isinstance(e, TextEndEvent | ThinkingEndEvent) and e.content_index in sigs:
            e = e.model_copy(update={"signature": sigs[e.content_index]})
        elif isinstance(e, ToolCallStartEvent) and e.content_index in ids and e.id is not None:
            e = e.model_copy(update={"id": ids[e.content_index]})
        elif isinstance(e, ToolCallEndEvent) and e.content_index in ids:
            block = message.content[e.content_index]
            assert isinstance(block, ToolCall)
            e = e.model_copy(
                update={
                    "tool_call": e.tool_call.model_copy(
                        update={"id": block.id, "signature": block.signature}
                    )
                }
            )
        out.append(e)
    return out


def _reference_message(
    protocol: str, chunks: Sequence[bytes], status: int, headers: Mapping[str, Sequence[str]] | None
) -> AssistantMessage | None:
    hdrs = {k: list(v) for k, v in (headers or {}).items()}
    found = None
    for event in normalize(protocol, [b"".join(chunks)], status=status, headers=hdrs):
        if isinstance(event, DoneEvent | ErrorEvent):
            found = event.message
    return found


def _tool_names(protocol: str, chunks: Sequence[bytes], status: int) -> list[str]:
    """The tools the recorded response calls, for the request to declare."""
    if status >= 400:
        return []
    names: list[str] = []
    for event in normalize(protocol, [b"".join(chunks)], status=status):
        if isinstance(event, DoneEvent | ErrorEvent):
            names = [b.name for b in event.message.content if isinstance(b, ToolCall)]
    return list(dict.fromkeys(names))


def proxy_adapter(name: str) -> ProxyAdapter:
    """An adapter from its row name, ``<gateway>[<upstream>-><client>]``."""
    gateway, _, pair = name.partition("[")
    upstream, _, client = pair.rstrip("]").partition("->")
    if gateway not in GATEWAYS or not upstream or not client:
        raise AdapterLoadError(
            f"unknown proxy adapter {name!r} (expected <gateway>[<upstream>-><client>])"
        )
    problem = GATEWAYS[gateway].find()
    if problem:
        raise AdapterLoadError(f"adapter {name!r}: {problem}")
    return ProxyAdapter(gateway, upstream, client)


def record_timing(row: str, case: str, ex: Exchange, delay: float, pacing: str = "chunks") -> None:
    """One line of ``timing.jsonl`` in ``$STREAM_HARNESS_PROXY_LOGS``, when set (the note's numbers)."""
    folder = os.environ.get(LOG_ENV)
    if not folder:
        return
    up = ex.stream_sent()
    line = {
        "row": row,
        "case": case,
        "delay": delay,
        "upstream_events": len(up),
        "upstream_span": round(up[-1] - up[0], 4) if len(up) > 1 else None,
        "client_first_lag": round(ex.times[0] - up[0], 4) if ex.times and up else None,
        "client_last_lag": round(ex.times[-1] - up[-1], 4) if ex.times and up else None,
        "client_reads": len(ex.times),
        "ttfb_ratio": None if ex.ttfb_ratio() is None else round(ex.ttfb_ratio() or 0.0, 4),
        "pacing": pacing,
        "held_events": ex.held_events(),
        "upstream_event_count": len(hit.event_ends) if (hit := ex.stream_hit()) else None,
    }
    Path(folder).mkdir(parents=True, exist_ok=True)
    with open(Path(folder) / "timing.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
