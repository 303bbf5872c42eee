"""The agent adapter protocol: run one framework's agent for one prompt.

Kept as small as the stream adapters' protocol so that a framework is one module. The
harness owns everything observable: the model server (which records every request) and
the tools (each tool's body is a call to the server's ledger endpoint, which records the
execution and returns the scripted result). The adapter only wires the framework to
them and reports how the run ended, so its own view never grades itself.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

# Versioned like the stdio stream protocol: an adapter in another language states which
# version it speaks, and a harness refuses one it does not know.
AGENT_PROTOCOL_VERSION = 1


class ToolFailed(Exception):
    """The scripted tool raised: frameworks see an ordinary exception from the tool."""


@dataclass(frozen=True, slots=True)
class AgentTool:
    """One tool as the framework must declare it, executed through the ledger."""

    name: str
    description: str
    parameters: Mapping[str, Any]  # a JSON Schema of the arguments object
    ledger_url: str

    def call(self, arguments: Mapping[str, Any], *, timeout: float = 30.0) -> str:
        """Execute through the ledger; the scripted result as text (JSON unless a string).

        Frameworks' tool functions rarely see the provider's call id, so the ledger
        records name and arguments in order and the harness pairs them with the calls it
        served. A scripted failure raises :class:`ToolFailed`.
        """
        body = json.dumps({"tool": self.name, "arguments": dict(arguments)}).encode()
        request = urllib.request.Request(
            self.ledger_url, data=body, headers={"content-type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as reply:
                answer = json.loads(reply.read() or b"{}")
        except urllib.error.HTTPError as exc:
            raise ToolFailed(f"ledger refused the call: HTTP {exc.code}") from None
        if "error" in answer:
            raise ToolFailed(str(answer["error"]))
        result = answer.get("result")
        return result if isinstance(result, str) else json.dumps(result)


@dataclass(frozen=True, slots=True)
class AgentLimits:
    """Bounds the harness asks for; retry counts and backoff stay the framework's own."""

    max_turns: int = 10
    timeout_s: float = 60.0


@dataclass(frozen=True, slots=True)
class AgentTask:
    """One agent run: where the model is, what it is called, the prompt and the tools.

    ``base_url`` is the server root (``http://127.0.0.1:PORT``); the adapter appends what
    its client expects (``/v1`` for OpenAI clients). The server answers request k with
    the scenario's response k whatever the path, and records every request.
    """

    scenario: str
    protocol: str
    base_url: str
    model: str
    prompt: str
    tools: tuple[AgentTool, ...] = ()
    system: str | None = None
    api_key: str = "sk-stream-harness"
    limits: AgentLimits = field(default_factory=AgentLimits)


@dataclass(frozen=True, slots=True)
class AgentOutcome:
    """How the run ended, as the framework reported it.

    ``output`` is the final text the framework returned; ``error_type`` and
    ``error_message`` the exception it raised instead (its class name and message).
    ``raw`` holds anything else worth showing in a report (the framework's own result).
    """

    output: str | None = None
    error_type: str | None = None
    error_message: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def raised(self) -> bool:
        return self.error_type is not None


class AgentRunTimedOut(TimeoutError):
    """The agent's run outlasted the task's own bound (``AgentLimits.timeout_s``): a hang,
    labelled ``timeout`` as a run that never returns is, not an outcome the agent chose
    (a framework waiting out a one-hour ``retry-after`` raised this, and A12 read it as an
    error that did not name the fault)."""


@runtime_checkable
class AgentAdapter(Protocol):
    """The protocol every agent under test satisfies.

    ``conventions`` declares the policies frameworks legitimately differ on (for
    instance ``max_retries``, ``retries_after_partial_output``, ``retry_after_cap_s``),
    shown beside the row and used by the checks instead of failing them; ``settings``
    says what the adapter changed from the framework's defaults (only delays, through the
    framework's own settings), so a row is honest about what ran.
    """

    name: str
    protocols: frozenset[str]
    conventions: Mapping[str, Any]
    settings: str

    def version(self) -> str:
        """The framework version that ran."""

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        """Run the agent once to its end; may raise (the runner records it as a crash)."""
