"""Adapters in any language: one long-lived process per implementation, JSON lines on stdio.

``specs/adapter-protocol.md`` is the protocol and ``specs/adapter-protocol/`` its schemas.
:class:`StdioAdapter` is an ordinary :class:`~stream_harness.adapters.protocol.Adapter`, so the runner, the
checks, the reports and the expectation files treat a Node library exactly like a Python
one. What is particular to a process stays here: it is started on load (its handshake
gives the name, protocols and versions the ``Adapter`` protocol asks for), restarted when
it crashes, hangs or falls out of step, and every such event is a crashed *result*, never
an exception out of :meth:`StdioAdapter.run`, so one broken implementation never stops a
run.

Parallel runs fork the runner's workers with the adapter inside; a pipe shared by two
processes would interleave their runs, so a process belongs to the pid that started it
and a forked worker starts its own (parallelism from more processes, as the protocol
says).
"""

from __future__ import annotations

import base64
import collections
import contextlib
import functools
import itertools
import json
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from stream_harness.adapters.conventions import (
    AdapterConventions,
    Collected,
    ConventionsError,
    LibraryUsage,
    all_conventions,
    finish,
    parse_conventions,
    reference_message,
)
from stream_harness.adapters.processes.exit_hooks import stop_at_exit
from stream_harness.adapters.protocol import (
    CURRENT_CASE,
    AdapterLevel,
    AdapterLoadError,
    AdapterResult,
    Headers,
)
from stream_harness.adapters.sdk_support import failed_message, tool_arguments
from stream_harness.adapters.ws_session import SessionTurn
from stream_harness.contract.events import (
    EVENT_ADAPTER,
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    Event,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from stream_harness.contract.facts import specs_dir
from stream_harness.errors import classify, error_details_from_body
from stream_harness.providers.reference import http_error_events
from stream_harness.providers.stop_reasons import map_stop_reason

PROTOCOL_VERSION: Final = 1
COMMAND_PREFIX: Final = "cmd:"
# The conventions entry of adapters the table does not name: stop values are raw wire
# values and counters are the contract's (specs/adapter-protocol.md, "The message").
DEFAULT_CONVENTIONS: Final = "stdio-default"
_DROP_HEADERS: Final = {"content-length", "content-encoding", "transfer-encoding", "connection"}
# How long a process may take from ``start`` to ``started`` (importing a large library, a
# JIT warming up): apart from the per-run timeout, which is about one body's work.
START_TIMEOUT: Final = 60.0
START_TIMEOUT_ENV: Final = "STREAM_HARNESS_START_TIMEOUT"
MAX_FAILED_STARTS: Final = 3
_STDERR_LINES: Final = 40


class ProtocolError(Exception):
    """The adapter's reply broke the protocol; the message is one line."""


# ---------------------------------------------------------------------------------------
# Schemas
# ---------------------------------------------------------------------------------------


def schema_dir() -> Path:
    return specs_dir() / "adapter-protocol"


@functools.cache
def validator(message: str) -> Any:
    """The jsonschema validator of one message kind (``start``, ``started``, ``run``, ``result``,
    ``stop``, ``session``, ``session_result``)."""
    import jsonschema

    schema = json.loads((schema_dir() / f"{message}.schema.json").read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def validate(message: str, data: Any) -> None:
    """Raise :class:`ProtocolError` naming the first schema violation of ``data``."""
    error = next(iter(validator(message).iter_errors(data)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        raise ProtocolError(f"{message} message invalid at {where}: {error.message[:200]}")


# ---------------------------------------------------------------------------------------
# The request: the body once, and the split
# ---------------------------------------------------------------------------------------


def split_of(chunks: Sequence[bytes]) -> tuple[bytes, dict[str, list[int] | int]]:
    """The body and the ``split`` object that cuts it back into ``chunks``.

    Equal-sized chunks (the last may be shorter) are ``{"every": n}``, so that 1-byte
    chunks cost nothing beyond the body; anything else is the list of cut offsets.
    """
    parts = [bytes(c) for c in chunks if c]
    body = b"".join(parts)
    if len(parts) <= 1:
        return body, {"cuts": []}
    size = len(parts[0])
    if all(len(p) == size for p in parts[:-1]) and len(parts[-1]) <= size:
        return body, {"every": size}
    cuts, pos = [], 0
    for p in parts[:-1]:
        pos += len(p)
        cuts.append(pos)
    return body, {"cuts": cuts}


def chunks_of(body: bytes, split: Mapping[str, Any]) -> list[bytes]:
    """The inverse of :func:`split_of` (what an adapter does with a ``run``)."""
    if "every" in split:
        n = int(split["every"])
        return [body[i : i + n] for i in range(0, len(body), n)] or [b""]
    bounds = [0, *split["cuts"], len(body)]
    return [body[a:b] for a, b in itertools.pairwise(bounds)]


def run_request(
    seq: int,
    protocol: str,
    chunks: Sequence[bytes],
    status: int,
    headers: Mapping[str, Sequence[str]] | None,
    case_id: str | None = None,
) -> dict[str, Any]:
    """The ``run`` message; ``case_id`` (the case as reports name it) is left out when the
    run is for no recorded case (a fuzzed body, ``stream-harness normalize --adapter``)."""
    body, split = split_of(chunks)
    pairs = [
        [k, v]
        for k, values in (headers or {}).items()
        if k.lower() not in _DROP_HEADERS
        for v in values
    ]
    case: dict[str, Any] = {
        "protocol": protocol,
        "status": status,
        "headers": pairs,
        "body": base64.b64encode(body).decode("ascii"),
        "split": split,
    }
    if case_id is not None:
        case["id"] = case_id
    return {"cmd": "run", "seq": seq, "case": case}


def timeout_for(base: float, chunks: Sequence[bytes]) -> float:
    """Generous, and growing with the work: a large body in 1-byte chunks takes seconds."""
    return base + 0.001 * len(chunks) + 20e-6 * sum(len(c) for c in chunks)


def start_timeout_setting() -> float:
    """:data:`START_TIMEOUT`, or the seconds ``STREAM_HARNESS_START_TIMEOUT`` names (a
    slow-starting runtime; tests use a short one). A bad value is a load error."""
    value = os.environ.get(START_TIMEOUT_ENV, "").strip()
    if not value:
        return START_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise AdapterLoadError(f"{START_TIMEOUT_ENV}={value!r}: not a number of seconds > 0")
    return seconds


# ---------------------------------------------------------------------------------------
# One process
# ---------------------------------------------------------------------------------------

_LIVE: set[StdioProcess] = set()


def stop_all() -> None:
    """Every live stdio process (stream adapters and agents alike) asked to stop at once,
    given 2 s between them (not 2 s each: a process busy in a run reads no stop, and one
    per job would add up), then their groups killed. Run at exit and on an interrupt."""
    procs = list(_LIVE)
    for proc in procs:
        proc.ask_to_stop()
    deadline = time.monotonic() + 2.0
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.popen.wait(timeout=max(0.0, deadline - time.monotonic()))
    for proc in procs:
        proc.stop(polite=False)


class StdioProcess:
    """A started adapter process: its stdout lines on a queue, the tail of its stderr kept."""

    def __init__(
        self, argv: Sequence[str], cwd: Path | None, env: Mapping[str, str] | None
    ) -> None:
        self.owner = os.getpid()
        self.popen = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            # Its own process group: a Ctrl-C at the terminal reaches the harness alone,
            # which stops the adapter itself (stop, then the group killed), and whatever
            # the adapter started (a shell's child, a worker) goes with it.
            start_new_session=True,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        threading.Thread(target=self._read_stdout, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()
        _LIVE.add(self)
        stop_at_exit(stop_all)

    def _read_stdout(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.popen.stderr is not None
        for line in self.popen.stderr:
            self.stderr.append(line.decode("utf-8", "replace").rstrip())

    def send(self, message: Mapping[str, Any]) -> None:
        assert self.popen.stdin is not None
        try:
            self.popen.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            self.popen.stdin.flush()
        except BrokenPipeError:
            # The process went away before reading: say how it ended, as receive() does,
            # rather than a broken pipe that depends on who was quicker.
            try:
                code = self.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                raise ProcessExited("adapter process closed its standard input") from None
            raise ProcessExited(f"adapter process exited (code {code})") from None

    def receive(self, timeout: float, noise: list[str]) -> dict[str, Any]:
        """The next protocol line; whole stray lines (not starting with ``{``) go to ``noise``."""
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise ProcessHung(f"no reply within {timeout:.0f} s") from None
            if line is None:
                code = self.popen.wait()
                raise ProcessExited(f"adapter process exited (code {code})")
            text = line.decode("utf-8", "replace").strip()
            if not text:
                continue
            if not text.startswith("{"):
                noise.append(text[:500])
                continue
            try:
                data = json.loads(text)
            except ValueError as exc:
                raise ProtocolError(f"malformed reply: not JSON ({exc}): {text[:200]}") from None
            if not isinstance(data, dict):
                raise ProtocolError(f"malformed reply: not an object: {text[:200]}")
            return data

    def tail(self) -> str:
        if self.popen.poll() is not None:
            self._stderr_reader.join(timeout=1.0)  # an exited process: its last words too
        return " / ".join(list(self.stderr)[-5:])

    def ask_to_stop(self, *, polite: bool = True) -> None:
        """``stop`` (when polite) and the end of stdin, without waiting.

        Anything may fail here, and must not keep a kill that follows from happening:
        called from a signal handler (an interrupted worker), the write can land inside
        another write to the same pipe (RuntimeError: reentrant call).
        """
        if self.owner != os.getpid():
            return  # a forked copy: the process belongs to the parent
        with contextlib.suppress(Exception):
            if polite:
                self.send({"cmd": "stop"})
        with contextlib.suppress(Exception):
            assert self.popen.stdin is not None
            self.popen.stdin.close()

    def stop(self, *, polite: bool = True) -> None:
        """Ask politely (``stop``, end of stdin), then kill: never left running.

        A hung process is killed at once (``polite=False``): it would not read the stop.
        """
        _LIVE.discard(self)
        if self.owner != os.getpid():
            return  # a forked copy: the process belongs to the parent
        try:
            self.ask_to_stop(polite=polite)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=2 if polite else 0.001)
        finally:
            _kill_group(self.popen)  # the process if it is still there, and what it started
            with contextlib.suppress(Exception):
                self.popen.wait()


def _kill_group(popen: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the process group the adapter leads (the process alone where there are none)."""
    killpg = getattr(os, "killpg", None)
    if killpg is None:  # Windows
        with contextlib.suppress(OSError):
            popen.kill()
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        killpg(popen.pid, signal.SIGKILL)


class ProcessHung(Exception):
    pass


class ProcessExited(Exception):
    pass


# ---------------------------------------------------------------------------------------
# The adapter
# ---------------------------------------------------------------------------------------


class StdioAdapter:
    """An implementation in any language behind the stdio protocol, as an ``Adapter``.

    ``command`` is a shell-like string (split with :func:`shlex.split`, no shell) or an
    argv list. The process is started and the handshake done here, so that a command that
    cannot start is an :class:`~stream_harness.adapters.protocol.AdapterLoadError` (one line, exit 2), and
    ``name``, ``protocols`` and ``level`` are known before the first run.
    ``validate=True`` also checks every request against the schemas (replies are always
    checked: that is how a malformed reply becomes a result).
    """

    # Each reply has its own timeout (``timeout``); --run-timeout is for in-process adapters.
    bounds_own_runs = True

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        cwd: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        start_timeout: float | None = None,
        validate: bool = False,
    ) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise AdapterLoadError("adapter command is empty")
        self.cwd = Path(cwd) if cwd is not None else None
        self.env = env
        self.timeout = timeout
        self.start_timeout = start_timeout if start_timeout is not None else start_timeout_setting()
        self.validate = validate
        self._proc: StdioProcess | None = None
        self._seq = 0
        self._failed_starts = 0
        # Replies already found valid, by their text without seq: most splits of a case get
        # the same reply, and validating one costs about 0.2 ms, a tenth of a JS run.
        self._valid: set[str] = set()
        try:
            started = self._start()
        except (OSError, ProcessHung, ProcessExited, ProtocolError) as exc:
            raise AdapterLoadError(
                f"adapter command {shlex.join(self.argv)!r} did not start: {exc}"
            ) from None
        impl = started["implementation"]
        self.implementation: dict[str, Any] = dict(impl)
        self.name: str = str(impl["name"])
        self.protocols: frozenset[str] = frozenset(started["protocols"])
        self.level: AdapterLevel = "event" if started["surface"] == "events" else "message"
        # Several WebSocket turns on one connection (the session checks), when declared.
        self.sessions: bool = started.get("sessions") is True
        # Declared conventions are checked now (a bad declaration is a load error); the
        # bundled table is read at the first message reply, as before (an event-level
        # adapter never needs it).
        self._conventions: AdapterConventions | None = None
        if started.get("conventions") is not None:
            try:
                self._conventions = conventions_of(self.name, self.protocols, started)
            except (ProtocolError, ConventionsError) as exc:
                self.close()
                raise AdapterLoadError(f"adapter {self.name!r}: {exc}") from None

    @property
    def conventions(self) -> AdapterConventions:
        """The conventions ``message`` replies are read by (:func:`conventions_of`)."""
        if self._conventions is None:
            self._conventions = conventions_of(self.name, self.protocols, {})
        return self._conventions

    # -- process lifecycle -----------------------------------------------------------------

    def _start(self) -> dict[str, Any]:
        """Start the process and do the handshake; the process is kept only if it answered."""
        try:
            proc = StdioProcess(self.argv, self.cwd, self.env)
        except OSError:
            self._failed_starts += 1
            raise
        try:
            request = {"cmd": "start", "version": PROTOCOL_VERSION}
            if self.validate:
                validate("start", request)
            proc.send(request)
            try:
                reply = proc.receive(self.start_timeout, [])
            except ProcessHung:
                raise ProcessHung(
                    f"no started reply within {self.start_timeout:g} s (the start timeout)"
                ) from None
            # Declared conventions are checked apart, so that their error names the adapter.
            validate("started", {k: v for k, v in reply.items() if k != "conventions"})
        except (OSError, ProcessHung, ProcessExited, ProtocolError) as exc:
            tail = proc.tail()
            proc.stop(polite=not isinstance(exc, ProcessHung))  # a silent process reads no stop
            self._failed_starts += 1
            message = f"{exc}: {tail}" if tail else str(exc)
            raise type(exc)(message) from None
        self._proc = proc
        self._failed_starts = 0
        return reply

    def _process(self) -> StdioProcess:
        if self._proc is not None and self._proc.owner != os.getpid():
            self._proc = None  # forked into a worker: start our own
        if self._proc is None:
            if self._failed_starts >= MAX_FAILED_STARTS:
                raise ProcessExited(f"given up after {MAX_FAILED_STARTS} failed starts")
            started = self._start()
            if started["implementation"].get("name") != self.name:
                raise ProtocolError("malformed reply: the restarted adapter has another name")
        return self._proc  # type: ignore[return-value]  # set by _start

    def _discard(self, *, polite: bool = True) -> str:
        """Stop the current process (it crashed, hung or fell out of step); its stderr tail."""
        proc, self._proc = self._proc, None
        if proc is None:
            return ""
        tail = proc.tail()
        proc.stop(polite=polite)
        return tail

    def close(self) -> None:
        self._discard()

    def __enter__(self) -> StdioAdapter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the Adapter protocol -------------------------------------------------------------

    def version(self) -> str:
        """The library version, with language, runtime and nested libraries (reports show it)."""
        impl = self.implementation
        extra = [str(impl["language"])]
        if impl.get("runtime"):
            extra.append(str(impl["runtime"]))
        libs = impl.get("libraries") or {}
        extra += [
            f"{k} {v}" for k, v in libs.items() if str(v) != str(impl["version"]) or "nested" in k
        ]
        return f"{impl['version']} ({'; '.join(extra)})"

    def run(
        self, protocol: str, chunks: Sequence[bytes], *, status: int = 200, headers: Headers = None
    ) -> AdapterResult:
        self._seq += 1
        seq = self._seq
        request = run_request(seq, protocol, chunks, status, headers, CURRENT_CASE.get())
        if self.validate:
            validate("run", request)
        noise: list[str] = []
        try:
            proc = self._process()
            proc.send(request)
            reply = proc.receive(timeout_for(self.timeout, chunks), noise)
            self._validate_result(reply)
            if reply["seq"] != seq:
                raise ProtocolError(f"malformed reply: seq {reply['seq']} answers run {seq}")
        except (OSError, ProcessHung, ProcessExited, ProtocolError) as exc:
            tail = self._discard(polite=not isinstance(exc, ProcessHung))
            crashed = f"{exc}: {tail}" if tail else str(exc)
            return AdapterResult(
                message=None, crashed=crashed, raw=_noise(noise), hung=isinstance(exc, ProcessHung)
            )
        try:
            return self._result(protocol, chunks, status, headers, reply, noise)
        except (ProtocolError, ValueError) as exc:
            # Valid JSON of the right shape whose content does not parse (an event the
            # contract does not know): the adapter's fault, recorded, and the process kept.
            return AdapterResult(
                message=None, crashed=f"malformed reply: {exc}"[:500], raw=_noise(noise)
            )

    def run_session(
        self, protocol: str, base_url: str, turns: Sequence[SessionTurn]
    ) -> list[AdapterResult]:
        """The ``session`` command: the adapter plays ``turns`` on one WebSocket connection
        to ``base_url`` and answers one result a turn, each read as a ``run`` reply is."""
        self._seq += 1
        seq = self._seq
        request = {
            "cmd": "session",
            "seq": seq,
            "session": {
                "protocol": protocol,
                "base_url": base_url,
                "turns": [
                    {"create": dict(t.create), "chained": t.chained, "context": list(t.context)}
                    for t in turns
                ],
            },
        }
        if self.validate:
            validate("session", request)
        noise: list[str] = []
        try:
            proc = self._process()
            proc.send(request)
            reply = proc.receive(self.timeout * max(1, len(turns)), noise)
            validate("session_result", reply)
            if reply["seq"] != seq:
                raise ProtocolError(f"malformed reply: seq {reply['seq']} answers session {seq}")
            for r in reply["results"]:
                validate("result", {"seq": seq, **r})
        except (OSError, ProcessHung, ProcessExited, ProtocolError) as exc:
            tail = self._discard(polite=not isinstance(exc, ProcessHung))
            crashed = f"{exc}: {tail}" if tail else str(exc)
            return [
                AdapterResult(
                    message=None,
                    crashed=crashed,
                    raw=_noise(noise),
                    hung=isinstance(exc, ProcessHung),
                )
            ]
        out = []
        for turn, r in zip(turns, reply["results"], strict=False):
            try:
                out.append(self._result(protocol, [turn.recorded], 101, None, r, noise))
            except (ProtocolError, ValueError) as exc:
                out.append(AdapterResult(message=None, crashed=f"malformed reply: {exc}"[:500]))
        return out

    def _validate_result(self, reply: dict[str, Any]) -> None:
        """:func:`validate` of a ``result``, skipped for a reply seen valid before (but for
        its ``seq``, which is checked against the run's by the caller)."""
        key = json.dumps({k: v for k, v in reply.items() if k != "seq"}, sort_keys=True)
        if key in self._valid and type(reply.get("seq")) is int and reply["seq"] >= 0:
            return
        validate("result", reply)
        if len(self._valid) >= 4096:
            self._valid.clear()
        self._valid.add(key)

    def _result(
        self,
        protocol: str,
        chunks: Sequence[bytes],
        status: int,
        headers: Mapping[str, Sequence[str]] | None,
        reply: Mapping[str, Any],
        noise: list[str],
    ) -> AdapterResult:
        raw: dict[str, Any] = {**(reply.get("raw") or {}), **_noise(noise)}
        if "requests" in reply:
            raw["requests"] = reply["requests"]
        if "errored" in reply:
            return AdapterResult(
                message=None, crashed=f"adapter error: {reply['errored']['message']}", raw=raw
            )
        events: list[Event] | None = None
        message = None
        if "events" in reply:
            replied = list(reply["events"])
            if replied and isinstance(replied[-1], Mapping):
                replied[-1] = terminal_from_raw(protocol, replied[-1], headers)
            events = [EVENT_ADAPTER.validate_python(e) for e in replied]
            last = events[-1] if events else None
            message = last.message if isinstance(last, DoneEvent | ErrorEvent) else None
        elif "message" in reply:
            reference = reference_message(protocol, chunks, status, headers)
            message = fill_missing_ids(
                finish(self.conventions, protocol, collected(reply["message"]), reference),
                reference,
            )
        raised = reply.get("raised")
        if raised is None:
            return AdapterResult(message=message, events=events, raw=raw)
        # The summary is one line (as exception_summary makes it); the message keeps the
        # provider's text as it was, since checks look for it verbatim.
        text = str(raised["message"])
        oneline = " ".join(text.split())
        summary = f"{raised['name']}: {oneline}" if oneline else str(raised["name"])
        raw["exception"] = summary
        return AdapterResult(
            message=failed_message(message, text if text.strip() else str(raised["name"])),
            events=events,
            raised=summary,
            raw=raw,
        )


def _noise(noise: list[str]) -> dict[str, Any]:
    return {"stdout_noise": noise} if noise else {}


def conventions_of(
    name: str, protocols: frozenset[str], started: Mapping[str, Any]
) -> AdapterConventions:
    """The conventions a ``message`` reply is read by: the ones the adapter declares in its
    ``started`` reply, else the bundled table's entry of its name, else the defaults.

    Declaring them is how an adapter written elsewhere gets its library's vocabulary undone
    without an entry in ``specs/adapter_conventions.yaml`` (which ships inside the
    package). A declaration replaces a bundled entry of the same name whole: the adapter
    speaks for its library. Raises :class:`ProtocolError` or :class:`ConventionsError` in
    one line when the declaration is malformed.
    """
    declared = started.get("conventions")
    if declared is None:
        table = all_conventions()
        return table[name] if name in table else table[DEFAULT_CONVENTIONS]
    try:
        validate("started", started)
    except ProtocolError as exc:
        raise ProtocolError(f"declared conventions: {exc}") from None
    source = "the conventions of its started reply"
    found = parse_conventions({"adapters": {name: declared}}, source)[name]
    strangers = sorted(set(found.protocols) - protocols)
    if strangers:
        raise ConventionsError(
            f"{source}: protocol(s) {strangers} not among the protocols it handles {sorted(protocols)}"
        )
    return found


def terminal_from_raw(
    protocol: str, event: Mapping[str, Any], headers: Mapping[str, Sequence[str]] | None
) -> dict[str, Any]:
    """An event-level reply's terminal event, completed from the raw values it carries.

    An adapter in another language may hand over the provider's raw stop value
    (``raw_stop_reason``) and, for an error, the raw error (``raw_error``: its status and
    body) instead of re-implementing ``specs/stop_reasons.yaml`` and the error
    classification; the harness maps them as the reference does. What the event states is
    kept, so that a library's own mapping stays under test; only what it leaves out is
    filled in. A terminal without ``reason`` gets its type too (a stop value the table maps
    to ``error`` makes it an ``error`` event). Contradictions are :class:`ProtocolError`.
    """
    out = dict(event)
    has_stop = "raw_stop_reason" in out
    raw_stop = out.pop("raw_stop_reason", None)
    raw_error = out.pop("raw_error", None)
    if not has_stop and raw_error is None:
        return out
    if out.get("type") not in ("done", "error"):
        raise ProtocolError("raw_stop_reason and raw_error belong on the terminal event only")
    message = dict(out.get("message") or {})
    stated = message.get("provider_stop_reason")
    if raw_stop is not None and stated is not None and stated != raw_stop:
        raise ProtocolError(
            f"raw_stop_reason {raw_stop!r} contradicts message.provider_stop_reason {stated!r}"
        )
    raw = stated if stated is not None else raw_stop
    message["provider_stop_reason"] = raw
    blocks = message.get("content") or []
    has_calls = any(isinstance(b, Mapping) and b.get("type") == "tool_call" for b in blocks)
    error_message: str | None = None
    info: dict[str, Any] | None = None
    if raw_error is not None:
        reason = "error"
        error_message, info = _raw_error(protocol, raw_error, raw, headers)
    else:
        mapping = map_stop_reason(protocol, raw, has_tool_calls=has_calls)
        reason = mapping.reason
        if reason in ("error", "aborted"):
            error_message = mapping.error_message
    ends_in_error = reason in ("error", "aborted")
    if "reason" not in out:
        if out["type"] == "error":
            out["reason"] = reason if ends_in_error else "error"
        else:
            out["type"] = "error" if ends_in_error else "done"
            out["reason"] = reason
    elif raw_error is not None and out["type"] == "done":
        raise ProtocolError("raw_error on a done event that states its reason")
    if out["type"] == "error":
        if out.get("error_message") is None:
            # As the reference's accumulator words an error stop (Accumulator.finish).
            out["error_message"] = error_message or f"stream stopped with {raw!r}"
        if out.get("error") is None:
            if info is None:
                found = classify(
                    message=out["error_message"], provider_stop_reason=raw, protocol=protocol
                )
                origin = "provider" if raw is not None else "stream"
                info = found.model_copy(update={"origin": origin}).model_dump(mode="json")
            out["error"] = info
        if message.get("error_message") is None:
            message["error_message"] = out["error_message"]
    if message.get("stop_reason") is None:
        message["stop_reason"] = out["reason"]
    out["message"] = message
    return out


def _raw_error(
    protocol: str,
    raw_error: Mapping[str, Any],
    raw_stop: str | None,
    headers: Mapping[str, Sequence[str]] | None,
) -> tuple[str, dict[str, Any]]:
    """The error message and classification of a raw error, as the reference makes them:
    an HTTP error (status >= 400) exactly as ``http_error_events`` does, with the run's
    headers (a ``retry-after``); an in-stream error from its body alone."""
    status = raw_error.get("status")
    body = raw_error.get("body")
    text = body if isinstance(body, str) or body is None else json.dumps(body)
    if isinstance(status, int) and status >= 400:
        hdrs = {k: list(v) for k, v in (headers or {}).items()}
        terminal = http_error_events(protocol, status, (text or "").encode(), hdrs)[-1]
        assert isinstance(terminal, ErrorEvent) and terminal.error is not None
        return terminal.error_message, terminal.error.model_dump(mode="json")
    details = error_details_from_body(body) if body is not None else None
    message = (details.message if details else None) or "the provider reported an error"
    found = classify(
        message=details.message if details else None,
        body=body,
        provider_stop_reason=raw_stop,
        protocol=protocol,
    )
    return message, found.model_dump(mode="json")


def fill_missing_ids(
    message: AssistantMessage, reference: AssistantMessage | None
) -> AssistantMessage:
    """Ids for the tool calls the library gave none (sent as ``null``).

    A library that has no id for a call (the wire sent none, or only its own placeholder)
    cannot be asked to invent the reference's synthetic one: a call without an id takes the
    id of the reference's call at the same place among the tool calls (the n-th call, the
    n-th) when their names and arguments agree, else ``toolcall_<index>``, which differs
    from the reference and shows as a difference.
    """
    if not any(isinstance(b, ToolCall) and not b.id for b in message.content):
        return message
    ref_calls = [b for b in (reference.content if reference else []) if isinstance(b, ToolCall)]
    blocks = []
    n = 0
    for i, block in enumerate(message.content):
        if isinstance(block, ToolCall):
            want = ref_calls[n] if n < len(ref_calls) else None
            n += 1
            if not block.id:
                agrees = want is not None and (want.name, want.arguments) == (
                    block.name,
                    block.arguments,
                )
                new_id = want.id if want is not None and agrees else f"toolcall_{i}"
                block = block.model_copy(update={"id": new_id})
        blocks.append(block)
    return message.model_copy(update={"content": blocks})


def collected(message: Mapping[str, Any]) -> Collected:
    """A ``message`` reply as :class:`Collected`, for the conventions to map (the schema held)."""
    content: list[TextBlock | ThinkingBlock | ToolCall] = []
    for block in message.get("content") or []:
        kind = block["type"]
        if kind == "text":
            if block["content"]:  # the contract never has an empty text block
                content.append(
                    TextBlock(content=block["content"], signature=block.get("signature"))
                )
        elif kind == "thinking":
            content.append(
                ThinkingBlock(
                    content=block["content"],
                    signature=block.get("signature"),
                    redacted=bool(block.get("redacted", False)),
                )
            )
        else:
            args = block["arguments"]
            content.append(
                ToolCall(
                    id=block.get("id") or "",  # none: fill_missing_ids
                    name=block["name"],
                    arguments=tool_arguments(args) if isinstance(args, str) else dict(args),
                    signature=block.get("signature"),
                )
            )
    usage = message.get("usage")
    return Collected(
        content=content,
        stop=message.get("stop_reason"),
        usage=None
        if usage is None
        else LibraryUsage(
            input=usage.get("input", 0),
            output=usage.get("output", 0),
            cache_read=usage.get("cache_read", 0),
            cache_write=usage.get("cache_write", 0),
            thinking=usage.get("thinking", 0),
            total=usage.get("total"),
        ),
        model=message.get("model"),
        response_id=message.get("response_id"),
        refusal=message.get("refusal"),
        error=message.get("error"),
        stop_details=message.get("stop_details"),
    )


def command_adapter(spec: str) -> StdioAdapter:
    """``cmd:<command line>`` as an adapter (what ``--adapter-command`` gives ``load_adapter``)."""
    return StdioAdapter(spec.removeprefix(COMMAND_PREFIX))
