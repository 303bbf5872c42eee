"""The agent rows known by name: ``stream-harness agents --agent NAME``.

A plain dict, so that a framework adapter module adds itself with one line
(:func:`register_agent`) and the CLI, the plugin and the matrix read the same table.
Values are ``module:object`` specs, imported only when named: a framework's library is
optional, and importing every one to list them would pull in all of them.
"""

from __future__ import annotations

from stream_harness.agents.frameworks import FRAMEWORKS
from stream_harness.agents.js import JS_AGENTS

AGENTS: dict[str, str] = {
    "reference": "stream_harness.agents.reference:ReferenceAgent",
    **FRAMEWORKS,
    **JS_AGENTS,
}


def register_agent(name: str, spec: str) -> None:
    """Make ``name`` mean the agent adapter at ``spec`` (``module:object``)."""
    if ":" not in spec:
        raise ValueError(f"an agent spec is module:object, got {spec!r}")
    AGENTS[name] = spec
