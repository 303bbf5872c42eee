"""One-line fault builders over the agent scenario format, for the pytest fixture.

``rate_limit(retry_after=2)`` is the same YAML a scenario file holds (specs/scenarios.md,
"Agent scenarios"), built as a mapping: a payment turn, the fault on the next response,
then the answer. So a test says which fault in one line, the checks that judge it are the
bundled ones, and ``Draft.yaml()`` is the file to keep when the test grows into one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from stream_harness.agents.scenario.model import AgentScenario, load_agent_scenario

_PAYMENT: Final[Mapping[str, Any]] = {
    "description": "Charge the customer card (a payment; it must happen once).",
    "schema": {
        "type": "object",
        "properties": {"amount_cents": {"type": "integer"}, "customer": {"type": "string"}},
        "required": ["amount_cents", "customer"],
    },
    "side_effect": True,
    "returns": {"charged": True, "receipt": "r-1001"},
}
_CALL: Final[Mapping[str, Any]] = {
    "text": "Charging now.",
    "tool_calls": [
        {
            "id": "call_c1",
            "name": "charge_card",
            "arguments": {"amount_cents": 4200, "customer": "cus_ada"},
        }
    ],
}
_DONE: Final[Mapping[str, Any]] = {"script": {"text": "Done: receipt r-1001."}}


@dataclass(frozen=True, slots=True)
class Draft:
    """An agent scenario as a mapping, named; :meth:`load` writes it and reads it back
    through the one loader, so a builder's scenario is validated like a file."""

    name: str
    raw: Mapping[str, Any]

    def yaml(self) -> str:
        return yaml.safe_dump(dict(self.raw), sort_keys=False)

    def load(self, folder: Path) -> AgentScenario:
        path = folder / f"{self.name}.yaml"
        path.write_text(self.yaml(), encoding="utf-8")
        return load_agent_scenario(path)


def _draft(
    name: str, description: str, *responses: Mapping[str, Any], prompt: str | None = None
) -> Draft:
    return Draft(
        name,
        {
            "kind": "agent",
            "description": description,
            "prompt": prompt or "Charge Ada 42 dollars and confirm.",
            "tools": {"charge_card": dict(_PAYMENT)},
            "responses": [dict(r) for r in responses],
        },
    )


def rate_limit(retry_after: float | None = 2, *, status: int = 429) -> Draft:
    """A 429 (or ``status``) after the payment, with ``retry-after`` seconds (None: none)."""
    headers = {} if retry_after is None else {"retry-after": f"{retry_after:g}"}
    fault = {"status": status, "headers": headers}
    return _draft(
        f"http_{status}_retry_after_{retry_after:g}"
        if retry_after is not None
        else f"http_{status}",
        f"HTTP {status} after the payment: retried after the hint, the payment not repeated.",
        {"script": dict(_CALL)},
        {"script": {}, "fault": fault},
        _DONE,
    )


def truncate(at: int = 300) -> Draft:
    """The answer after the payment cut mid-stream at byte ``at``: retried, not recharged."""
    return _draft(
        f"truncate_{at}",
        "The answer after the payment is cut mid-stream: the retry resends the conversation.",
        {"script": dict(_CALL)},
        {
            "script": {"text": "Your card was charged 42.00 dollars, receipt r-1001, thank you."},
            "fault": {"cut_at": at},
        },
        _DONE,
    )


def cut_tool_args() -> Draft:
    """The payment call's arguments cut mid-stream: no tool runs on them."""
    return _draft(
        "cut_tool_args",
        "The stream is cut inside the payment's arguments: nothing runs on them.",
        {"script": dict(_CALL), "fault": {"cut_in_tool_args": True}},
        {"script": dict(_CALL)},
        _DONE,
    )


def no_finish() -> Draft:
    """The answer ends without its terminal event (no ``finish_reason``): not a done turn."""
    return _draft(
        "no_finish",
        "The answer's stream ends without its terminal event: the turn is not complete.",
        {"script": dict(_CALL)},
        {"script": {"text": "Done: receipt r-1001."}, "fault": {"no_terminal_event": True}},
        _DONE,
    )


def overflow() -> Draft:
    """A 400 context overflow after the payment: surfaced, never retried as it was."""
    return _draft(
        "overflow",
        "A 400 context-length error: never retried unchanged.",
        {"script": dict(_CALL)},
        {"script": {}, "fault": {"status": 400, "overflow": True}},
        _DONE,
    )


def server_error(status: int = 500) -> Draft:
    """A 5xx with no hint after the payment: retried within the row's bound."""
    return _draft(
        f"http_{status}",
        f"HTTP {status} after the payment: retried, the payment not repeated.",
        {"script": dict(_CALL)},
        {"script": {}, "fault": {"status": status}},
        _DONE,
    )
