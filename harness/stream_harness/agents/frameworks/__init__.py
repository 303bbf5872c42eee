"""The built-in agent adapters: Python agent frameworks, one module each, by name.

:mod:`stream_harness.agents.registry` adds them to the names ``--agent`` knows.

Names map to ``module:Class`` specs, so that listing them imports no framework: each is
optional and lives in its own pinned environment (``specs/matrix.toml``, the groups with
an ``agents`` list), because their pins conflict as the stream libraries' do. A module
imports its framework only when an agent runs, and says which package is missing if it
is not installed.
"""

from __future__ import annotations

from typing import Final

FRAMEWORKS: Final[dict[str, str]] = {
    "pydantic-ai-agent": "stream_harness.agents.frameworks.pydantic_ai:PydanticAIAgentAdapter",
    "openai-agents": "stream_harness.agents.frameworks.openai_agents:OpenAIAgentsAdapter",
    "langgraph": "stream_harness.agents.frameworks.langgraph:LangGraphAdapter",
    "smolagents": "stream_harness.agents.frameworks.smolagents:SmolagentsAdapter",
    "llamaindex": "stream_harness.agents.frameworks.llamaindex:LlamaIndexAdapter",
    "autogen": "stream_harness.agents.frameworks.autogen:AutoGenAdapter",
    "agno": "stream_harness.agents.frameworks.agno:AgnoAdapter",
    "strands": "stream_harness.agents.frameworks.strands:StrandsAdapter",
    "google-adk": "stream_harness.agents.frameworks.google_adk:GoogleADKAdapter",
}


# What each row cannot run without: (the distribution to install, a module it provides),
# looked up (never imported) when the row is named, so that a framework that is not
# installed is one line and exit 2 before any run, not a failure of every run (which reads
# in CI as "fails the contract"). A protocol's own extra (langchain-anthropic) is still
# found missing when that protocol runs.
REQUIRES: Final[dict[str, tuple[str, str]]] = {
    "pydantic-ai-agent": ("pydantic-ai-slim", "pydantic_ai"),
    "openai-agents": ("openai-agents", "agents"),
    "langgraph": ("langchain", "langchain.agents"),
    "smolagents": ("smolagents", "smolagents"),
    "llamaindex": ("llama-index-core", "llama_index.core"),
    "autogen": ("autogen-agentchat", "autogen_agentchat"),
    "agno": ("agno", "agno"),
    "strands": ("strands-agents", "strands"),
    "google-adk": ("google-adk", "google.adk"),
}
