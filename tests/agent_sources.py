"""A user's agent that never asks the model, as source text a test writes into a project.

It fails A12 on every scenario (it answers without a request), so the tests of exit codes,
known failures and reports have a failing agent of a user's own to load by module:object.
"""

from __future__ import annotations


def lazy_agent_source(protocol: str = "openai-completions") -> str:
    """``lazy_agent.py``'s text: class ``Lazy``, row name ``lazy``, speaking ``protocol``."""
    return (
        "from stream_harness.agents.protocol import AgentOutcome\n"
        "class Lazy:\n"
        "    name = 'lazy'\n"
        f"    protocols = frozenset({{{protocol!r}}})\n"
        "    conventions = {}\n"
        "    settings = ''\n"
        "    def version(self): return '0'\n"
        "    def run_agent(self, task): return AgentOutcome(output='made up')\n"
    )
