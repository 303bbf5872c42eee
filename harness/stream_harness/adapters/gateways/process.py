"""A gateway as a subprocess on 127.0.0.1: a free port, readiness polled, log kept, always stopped.

A gateway takes seconds to start (LiteLLM 7-19 s here, Portkey under one), so a run
starts it once, lazily, and stops it when the run ends: :meth:`GatewayProcess.stop` from a
``with`` block, from the adapter's ``close()``, or from ``atexit`` for whatever is left.
It runs in its own session, so stopping it (SIGTERM to the group, SIGKILL after a grace
period) takes its workers with it and the port is free again. Its stdout and stderr go
to a log file that outlives it, for the report; a start that fails says why with the
log's last lines.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final

from stream_harness.adapters.processes.exit_hooks import stop_at_exit

HOST: Final = "127.0.0.1"
POLL_EVERY: Final = 0.05
STOP_GRACE: Final = 5.0


class GatewayError(RuntimeError):
    """The gateway did not start or died; the message is one line with its log's tail."""


def free_port() -> int:
    """A port the kernel just handed out on 127.0.0.1 (bound, then released for the gateway)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def port_is_free(port: int) -> bool:
    """Whether a server could listen on ``port`` again (as servers do, with SO_REUSEADDR:
    the closed connections' TIME_WAIT does not hold a port, a listener or a bound socket does)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((HOST, port))
        except OSError:
            return False
        return True


def http_get(port: int, path: str, timeout: float = 2.0) -> tuple[int, bytes] | None:
    """GET on loopback without any proxy settings from the environment; None if refused."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    except (OSError, http.client.HTTPException):
        return None
    finally:
        conn.close()


_LIVE: set[GatewayProcess] = set()


def _stop_all() -> None:
    for proc in list(_LIVE):
        proc.stop()


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the process that started it dies (Linux), so
    a runner killed outright leaves no gateway behind."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class GatewayProcess:
    """One gateway process. ``argv`` gets the port it must listen on."""

    def __init__(
        self,
        name: str,
        argv: Callable[[int], Sequence[str]],
        *,
        ready_path: str,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        log_dir: Path | None = None,
        start_timeout: float = 90.0,
        is_ready: Callable[[int, bytes], bool] = lambda status, _body: status == 200,
    ) -> None:
        self.name = name
        self._argv = argv
        self.ready_path = ready_path
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.log_dir = log_dir
        self.start_timeout = start_timeout
        self.is_ready = is_ready
        self.port = 0
        self.popen: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None
        self.started_in: float | None = None  # seconds from spawn to ready
        self.owner = os.getpid()

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> GatewayProcess:
        self.port = free_port()
        folder = self.log_dir or Path(tempfile.mkdtemp(prefix=f"stream-harness-{self.name}-"))
        folder.mkdir(parents=True, exist_ok=True)
        self.log_path = folder / f"{self.name}-{self.port}.log"
        began = time.monotonic()
        with open(self.log_path, "wb") as log:
            try:
                self.popen = subprocess.Popen(
                    list(self._argv(self.port)),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=self.env,
                    cwd=self.cwd,
                    start_new_session=True,
                    preexec_fn=_die_with_parent if sys.platform == "linux" else None,
                )
            except OSError as exc:
                raise GatewayError(f"{self.name} did not start: {exc}") from None
        self.owner = os.getpid()
        _LIVE.add(self)
        stop_at_exit(_stop_all)
        deadline = began + self.start_timeout
        while True:
            code = self.popen.poll()
            if code is not None:
                tail = self.tail()
                self.stop()
                raise GatewayError(
                    f"{self.name} exited with code {code} before it was ready: {tail}"
                )
            found = http_get(self.port, self.ready_path, timeout=1.0)
            if found is not None and self.is_ready(*found):
                self.started_in = time.monotonic() - began
                return self
            if time.monotonic() > deadline:
                tail = self.tail()
                self.stop()
                raise GatewayError(
                    f"{self.name} not ready on {self.ready_path} within {self.start_timeout:.0f} s: {tail}"
                )
            time.sleep(POLL_EVERY)

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def how_it_ended(self) -> str:
        """``killed by SIGSEGV`` or ``exit code 1`` (empty while it runs): a crash of the
        gateway's own runtime reads differently from an exit it chose."""
        code = self.popen.poll() if self.popen is not None else None
        if code is None:
            return ""
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"

    def died_within(self, seconds: float) -> bool:
        """Whether the process exits within ``seconds`` (a dropped connection: did it die?)."""
        if self.popen is None:
            return True
        try:
            self.popen.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    def stop(self) -> None:
        """SIGTERM to its process group, SIGKILL after the grace period; idempotent."""
        _LIVE.discard(self)
        popen, self.popen = self.popen, None
        if popen is None or self.owner != os.getpid():
            return  # never started, already stopped, or a forked copy: the parent's to stop
        if popen.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(popen.pid, signal.SIGTERM)
            try:
                popen.wait(timeout=STOP_GRACE)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(popen.pid, signal.SIGKILL)
                popen.wait()
        # Workers of its group that outlived the leader (a uvicorn worker, a node child).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(popen.pid, signal.SIGKILL)

    def __enter__(self) -> GatewayProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- reading -----------------------------------------------------------------------

    def tail(self, lines: int = 6) -> str:
        """The log's last non-empty lines, joined on one line."""
        if self.log_path is None or not self.log_path.is_file():
            return ""
        text = self.log_path.read_bytes()[-8192:].decode("utf-8", "replace")
        kept = [line.strip() for line in text.splitlines() if line.strip()]
        return " / ".join(kept[-lines:])[:800]
