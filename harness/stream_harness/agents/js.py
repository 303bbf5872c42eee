"""The JavaScript/TypeScript agent loops of ``adapters-js/agents/``, by name.

Each is a Node script speaking the stdio protocol's agent messages
(:mod:`stream_harness.agents.stdio`), found and started as the JS stream adapters are
(:mod:`stream_harness.adapters.processes.js`: ``node`` or ``STREAM_HARNESS_NODE``, the folder's
``npm ci`` install or ``STREAM_HARNESS_JS``). Without them, loading says in one line what
is missing, so the CLI exits 2, the matrix skips the row with that line and tests skip.

A row's conventions are sourced data like the Python frameworks'
(``specs/agent_conventions.yaml``, under its name): the script may declare its own in
``agent_started``, but the bundled rows keep theirs in the one facts file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import partial
from typing import Final

from stream_harness.adapters.processes.js import js_root, node_argv
from stream_harness.agents.frameworks.support import conventions_for
from stream_harness.agents.stdio import StdioAgent
from stream_harness.contract import facts

# agent row name -> script under adapters-js/agents/
SCRIPTS: Final[dict[str, str]] = {
    "js-ai-sdk-agent": "ai-sdk-stream-text.mjs",
    "js-ai-sdk-tool-loop-agent": "ai-sdk-tool-loop-agent.mjs",
    "js-openai-agents": "openai-agents.mjs",
    "js-langgraph": "langgraph.mjs",
    "js-mastra": "mastra.mjs",
}


# The options a row's configurations may set (agents/configuration.py), per script: given
# to the script as ``--options JSON`` when it starts, which applies them to its calls.
OPTIONS: Final[dict[str, dict[str, str]]] = {
    "js-ai-sdk-agent": {"maxRetries": "streamText({maxRetries: N})"},
}


class JSAgentMissingError(ImportError):
    """Node, the adapters folder or its install is missing here: one line saying which."""


def declared_conventions(name: str) -> dict[str, object] | None:
    """The row's entry in specs/agent_conventions.yaml, or None when it has none."""
    if name not in facts.load_yaml("agent_conventions")["frameworks"]:
        return None
    return conventions_for(name)


def js_agent(name: str, options: Mapping[str, object] | None = None) -> StdioAgent:
    known = OPTIONS.get(name, {})
    unknown = sorted(set(options or {}) - set(known))
    if unknown:
        raise ValueError(f"no option {unknown[0]!r} (it has: {', '.join(sorted(known)) or 'none'})")
    try:
        argv = node_argv(f"agents/{SCRIPTS[name]}")
    except ValueError as exc:
        raise JSAgentMissingError(str(exc)) from None
    if options:
        argv = [*argv, "--options", json.dumps(dict(options), sort_keys=True)]
    agent = StdioAgent(argv, cwd=js_root())
    conventions = declared_conventions(name)
    if conventions is not None and not agent.conventions:
        agent.conventions = conventions
    return agent


# The factories the registry names (``stream_harness.agents.js:<attribute>``), one a script.
ai_sdk_agent: Final = partial(js_agent, "js-ai-sdk-agent")
ai_sdk_tool_loop_agent: Final = partial(js_agent, "js-ai-sdk-tool-loop-agent")
openai_agents: Final = partial(js_agent, "js-openai-agents")
langgraph: Final = partial(js_agent, "js-langgraph")
mastra: Final = partial(js_agent, "js-mastra")

JS_AGENTS: Final[dict[str, str]] = {
    name: f"stream_harness.agents.js:{name.removeprefix('js-').replace('-', '_')}"
    for name in SCRIPTS
}
