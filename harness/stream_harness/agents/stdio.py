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
as the stream messages' are (:mod:`stream_harness.adapters.processes.stdio`): the agent's replies
always, so that a misspelt field (``error`` for ``error_type``) is a crash that names it
rather than an outcome silently read as empty; the harness's own requests with
``validate=True`` (the tests, keeping the page and the code in step).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from stream_harness.adapters.processes.stdio import (
    ProcessExited,
    ProcessHung,
    ProtocolError,
    StdioProcess,
)
from stream_harness.adapters.processes.stdio import validate as validate_message
from stream_harness.agents.conventions import conventions_problem
from stream_harness.agents.protocol import (
    AGENT_PROTOCOL_VERSION,
    AgentOutcome,
    AgentTask,
)

COMMAND_PREFIX: Final = "cmd:"
START_TIMEOUT_S: Final = 30.0
# Seconds past the task's own timeout before a silent process counts as hung: an agent that
# stops itself at timeout_s (as the task asks) still gets to say how it ended. Less than the
# runner's own grace (agents/conformance/runner.py GRACE_S), so the process is killed first.
REPLY_GRACE_S: Final = 3.0


class StdioAgentError(RuntimeError):
    """The process did not answer as the protocol says; one line."""


class StdioAgentHung(StdioAgentError):
    """The agent's reply did not come within its timeout: a run labelled ``timeout``, not
    ``crashed`` (conformance/outcomes.py)."""


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


def _receive(proc: StdioProcess, timeout: float) -> dict[str, Any]:
    """The next protocol line of an agent process, any failure as one :class:`StdioAgentError`
    (stray stdout lines, a framework's console noise, are skipped)."""
    try:
        return proc.receive(timeout, [])
    except ProcessHung as exc:
        raise StdioAgentHung(str(exc)) from None
    except ProcessExited:
        raise StdioAgentError(f"the process exited ({proc.tail() or 'no stderr'})") from None
    except ProtocolError as exc:
        raise StdioAgentError(f"a {exc}") from None


def _send(proc: StdioProcess, message: Mapping[str, Any]) -> None:
    try:
        proc.send(message)
    except ProcessExited as exc:
        raise StdioAgentError(str(exc)) from None


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
        self._proc: StdioProcess | None = None
        self._seq = 0
        started = self._start()
        self.name: str = str(started.get("name") or self.argv[0])
        self.protocols: frozenset[str] = frozenset(started.get("protocols") or ())
        self.conventions: Mapping[str, Any] = dict(started.get("conventions") or {})
        problem = conventions_problem(self.conventions)
        if problem:
            self.close()
            raise StdioAgentError(f"agent command {shlex.join(self.argv)!r}: {problem}")
        self.settings: str = str(started.get("settings") or "")
        self._version = str(started.get("framework_version") or "unknown")

    def _start(self) -> dict[str, Any]:
        try:
            proc = StdioProcess(self.argv, self.cwd, None)
        except OSError as exc:
            raise StdioAgentError(
                f"agent command {shlex.join(self.argv)!r} did not start: {exc}"
            ) from None
        request = {"cmd": "agent_start", "version": AGENT_PROTOCOL_VERSION}
        if self.validate:
            check_message("agent_start", request)
        try:
            _send(proc, request)
            started = _receive(proc, START_TIMEOUT_S)
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
            _send(self._proc, request)
            reply = _receive(self._proc, task.limits.timeout_s + REPLY_GRACE_S)
        except (StdioAgentError, OSError, ValueError) as exc:
            self.close(polite=False)  # hung, out of step or dead: the next run starts afresh
            raise (StdioAgentHung if isinstance(exc, StdioAgentHung) else StdioAgentError)(
                str(exc)
            ) from None
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
