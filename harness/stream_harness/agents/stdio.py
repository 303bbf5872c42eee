"""Agent adapters in any language: the ``agent_*`` messages of the stdio protocol.

An agent written in Node, Go or anything else is run as one long-lived process speaking
JSON lines on stdio (specs/adapter-protocol.md, "Agent runs"): a handshake that says what
the agent is (``agent_start`` -> ``agent_started``), then one ``agent_run`` per scenario run
answered by one ``agent_outcome``. The process needs no tool plumbing of ours: each tool in
the task carries its ledger URL and the agent's tool body POSTs
``{"tool": NAME, "arguments": {...}}`` there, as the Python :class:`AgentTool` does.

A process that dies, hangs past the task's time or answers out of step is a crash of
that run (raised from :meth:`StdioAgent.run_agent`, which the runner records as a result)
and is restarted for the next one.

The messages have JSON Schemas (``specs/adapter-protocol/agent_*.schema.json``), checked
as the stream messages' are (:mod:`stream_harness.adapters.stdio`): the agent's replies
always, so that a misspelt field (``error`` for ``error_type``) is a crash that names it
rather than an outcome silently read as empty; the harness's own requests with
``validate=True`` (the tests, keeping the page and the code in step).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from stream_harness.adapters.exit_hooks import stop_at_exit
from stream_harness.adapters.stdio import ProtocolError
from stream_harness.adapters.stdio import validate as validate_message
from stream_harness.agents.protocol import (
    AGENT_PROTOCOL_VERSION,
    AgentOutcome,
    AgentTask,
    over_cap_problem,
)

COMMAND_PREFIX: Final = "cmd:"
START_TIMEOUT_S: Final = 30.0
# Seconds past the task's own timeout before a silent process counts as hung: an agent that
# stops itself at timeout_s (as the task asks) still gets to say how it ended. Less than the
# runner's own grace (conformance/agent_runner.py GRACE_S), so the process is killed first.
REPLY_GRACE_S: Final = 3.0


class StdioAgentError(RuntimeError):
    """The process did not answer as the protocol says; one line."""


def check_message(kind: str, data: Any) -> None:
    """Raise :class:`StdioAgentError` naming the first schema violation of an ``agent_*``
    message (``kind`` is its schema's name: agent_start, agent_started, agent_run,
    agent_outcome)."""
    try:
        validate_message(kind, data)
    except ProtocolError as exc:
        raise StdioAgentError(str(exc)) from None


def task_message(task: AgentTask, seq: int) -> dict[str, Any]:
    """The ``agent_run`` message for ``task`` (specs/adapter-protocol.md)."""
    return {
        "cmd": "agent_run",
        "seq": seq,
        "task": {
            "scenario": task.scenario,
            "protocol": task.protocol,
            "base_url": task.base_url,
            "model": task.model,
            "prompt": task.prompt,
            "system": task.system,
            "api_key": task.api_key,
            "tools": [
                {
                    "name": t.name,
                    "description": t.description,
                    "parameters": dict(t.parameters),
                    "ledger_url": t.ledger_url,
                }
                for t in task.tools
            ],
            "limits": {"max_turns": task.limits.max_turns, "timeout_s": task.limits.timeout_s},
        },
    }


_LIVE: set[_Process] = set()


def stop_all() -> None:
    """Every agent process asked to stop at once, then given 2 s between them (not 2 s
    each: a process busy in a run reads no stop, and one per job would add up), then the
    groups killed."""
    procs = list(_LIVE)
    for proc in procs:
        proc.ask_to_stop()
    deadline = time.monotonic() + 2.0
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.popen.wait(timeout=max(0.0, deadline - time.monotonic()))
    for proc in procs:
        proc.stop(polite=False)


class _Process:
    def __init__(self, argv: Sequence[str], cwd: Path | None = None) -> None:
        self.owner = os.getpid()
        self.popen = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            cwd=cwd,
            # Its own process group, as the stream adapters' (adapters/stdio.py): a Ctrl-C
            # reaches the harness alone, which stops the agent and whatever it started.
            start_new_session=True,
        )
        _LIVE.add(self)
        stop_at_exit(stop_all)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: deque[str] = deque(maxlen=20)
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _drain(self) -> None:
        assert self.popen.stderr is not None
        for line in self.popen.stderr:
            self.stderr.append(line.rstrip())

    def send(self, message: Mapping[str, Any]) -> None:
        assert self.popen.stdin is not None
        self.popen.stdin.write(json.dumps(message) + "\n")
        self.popen.stdin.flush()

    def receive(self, timeout: float) -> dict[str, Any]:
        """The next JSON object line; other lines (console noise) are skipped."""
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise StdioAgentError(f"no reply within {timeout:g} s") from None
            if line is None:
                tail = " / ".join(list(self.stderr)[-3:])
                raise StdioAgentError(f"the process exited ({tail or 'no stderr'})")
            if not line.lstrip().startswith("{"):
                continue
            try:
                value = json.loads(line)
            except ValueError:
                raise StdioAgentError(f"a malformed reply: {line.strip()[:120]}") from None
            if isinstance(value, dict):
                return value

    def ask_to_stop(self) -> None:
        """``stop`` and the end of stdin, without waiting."""
        if self.owner != os.getpid():
            return
        with contextlib.suppress(Exception):
            self.send({"cmd": "stop"})
        with contextlib.suppress(Exception):
            assert self.popen.stdin is not None
            self.popen.stdin.close()

    def stop(self, *, polite: bool = True) -> None:
        """Ask politely (``stop``, end of stdin), then kill the group: never left running.
        A hung process is killed at once (``polite=False``): it would not read the stop."""
        _LIVE.discard(self)
        if self.owner != os.getpid():
            return  # a forked copy: the process belongs to the parent
        try:
            with contextlib.suppress(Exception):
                if polite:
                    self.send({"cmd": "stop"})
            with contextlib.suppress(Exception):
                assert self.popen.stdin is not None
                self.popen.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=2 if polite else 0.001)
        finally:
            killpg = getattr(os, "killpg", None)
            if killpg is None:  # Windows
                with contextlib.suppress(OSError):
                    self.popen.kill()
            else:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    killpg(self.popen.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                self.popen.wait()


class StdioAgent:
    """An agent in another language, as an :class:`~stream_harness.agents.protocol.AgentAdapter`."""

    def __init__(
        self, command: str | Sequence[str], *, validate: bool = False, cwd: Path | None = None
    ) -> None:
        self.validate = validate
        self.cwd = cwd
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise StdioAgentError("agent command is empty")
        self._proc: _Process | None = None
        self._seq = 0
        started = self._start()
        self.name: str = str(started.get("name") or self.argv[0])
        self.protocols: frozenset[str] = frozenset(started.get("protocols") or ())
        self.conventions: Mapping[str, Any] = dict(started.get("conventions") or {})
        for where, policy in [
            ("conventions", self.conventions),
            *(
                (f"conventions.by_protocol.{p}", v)
                for p, v in (self.conventions.get("by_protocol") or {}).items()
                if isinstance(v, Mapping)
            ),
        ]:
            problem = over_cap_problem(policy, where)
            if problem:
                self.close()
                raise StdioAgentError(f"agent command {shlex.join(self.argv)!r}: {problem}")
        self.settings: str = str(started.get("settings") or "")
        self._version = str(started.get("framework_version") or "unknown")

    def _start(self) -> dict[str, Any]:
        try:
            proc = _Process(self.argv, self.cwd)
        except OSError as exc:
            raise StdioAgentError(
                f"agent command {shlex.join(self.argv)!r} did not start: {exc}"
            ) from None
        request = {"cmd": "agent_start", "version": AGENT_PROTOCOL_VERSION}
        if self.validate:
            check_message("agent_start", request)
        proc.send(request)
        try:
            started = proc.receive(START_TIMEOUT_S)
        except StdioAgentError as exc:
            proc.stop()
            raise StdioAgentError(
                f"agent command {shlex.join(self.argv)!r} did not start: {exc}"
            ) from None
        if (
            started.get("kind") != "agent_started"
            or started.get("version") != AGENT_PROTOCOL_VERSION
        ):
            proc.stop()
            raise StdioAgentError(
                f"agent command {shlex.join(self.argv)!r} answered agent_start with "
                f"{json.dumps(started)[:120]} (expected kind agent_started, version {AGENT_PROTOCOL_VERSION})"
            )
        try:
            check_message("agent_started", started)
        except StdioAgentError as exc:
            proc.stop()
            raise StdioAgentError(f"agent command {shlex.join(self.argv)!r}: {exc}") from None
        self._proc = proc
        return started

    def version(self) -> str:
        return self._version

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        if self._proc is None or self._proc.popen.poll() is not None:
            self._start()
        assert self._proc is not None
        self._seq += 1
        request = task_message(task, self._seq)
        if self.validate:
            check_message("agent_run", request)
        try:
            self._proc.send(request)
            reply = self._proc.receive(task.limits.timeout_s + REPLY_GRACE_S)
        except (StdioAgentError, OSError, ValueError) as exc:
            self.close(polite=False)  # hung, out of step or dead: the next run starts afresh
            raise StdioAgentError(str(exc)) from None
        if reply.get("kind") != "agent_outcome" or reply.get("seq") != self._seq:
            self.close(polite=False)
            raise StdioAgentError(
                f"expected agent_outcome for seq {self._seq}, got {json.dumps(reply)[:120]}"
            )
        try:
            check_message("agent_outcome", reply)
        except StdioAgentError:
            self.close(polite=False)
            raise
        raw = reply.get("raw")
        return AgentOutcome(
            output=_text(reply.get("output")),
            error_type=_text(reply.get("error_type")),
            error_message=_text(reply.get("error_message")),
            raw=raw if isinstance(raw, dict) else {},
        )

    def close(self, *, polite: bool = True) -> None:
        if self._proc is not None:
            self._proc.stop(polite=polite)
            self._proc = None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
