"""smolagents' ``ToolCallingAgent`` on ``OpenAIServerModel``, with ``stream_outputs=True``.

``OpenAIServerModel(api_base=...)`` is smolagents' client for any OpenAI-compatible
server (agent-frameworks.md); it speaks Chat Completions only. Each task tool is a
``Tool`` subclass whose ``inputs`` are read from the JSON schema (a property not required
is ``nullable``) and whose ``forward`` calls the ledger. A ``ToolCallingAgent`` run ends
only through its ``final_answer`` tool: a model turn of plain text is a parsing error the
agent records and retries on its next step, which scenarios have to script. Its memory
replays tool calls and results as text (``Calling tools: [...]`` from the assistant, then
a user ``Observation:``), not as tool messages paired by id.

Retries: the openai client's defaults, and smolagents' own ``ApiModel(retry=True)`` layer
for rate-limit errors (``RETRY_MAX_ATTEMPTS = 3``; ``RETRY_WAIT = 60`` s times 2 times
1 to 2 of jitter before each sleep: 120 to 240 s first). smolagents documents no setting for that delay (only ``retry`` on
or off), so nothing is changed: a rate-limited run waits minutes, and the row says so.
"""

from __future__ import annotations

from typing import Any, Final

from stream_harness.agents.frameworks import support
from stream_harness.agents.protocol import AgentOutcome, AgentTask, AgentTool

NAME: Final = "smolagents"
PROTOCOLS: Final = frozenset({"openai-completions"})
JSON_TYPES: Final = frozenset({"string", "boolean", "integer", "number", "array", "object", "null"})


class SmolagentsAdapter:
    name = NAME
    protocols = PROTOCOLS
    conventions = support.conventions_for(NAME)
    settings = "none: OpenAIServerModel and ToolCallingAgent(stream_outputs=True) at their defaults (its rate-limit waits, 120 to 240 s first, stay)"

    def version(self) -> str:
        return support.version_of("smolagents", "openai")

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        if task.protocol not in PROTOCOLS:
            raise support.unsupported(NAME, task, PROTOCOLS)
        (smol,) = support.load(NAME, "smolagents[openai]", "smolagents")
        model = smol.OpenAIServerModel(
            model_id=task.model, api_base=support.openai_url(task), api_key=task.api_key
        )
        agent = smol.ToolCallingAgent(
            tools=[_tool(smol, t) for t in task.tools],
            model=model,
            stream_outputs=True,
            max_steps=task.limits.max_turns,
            instructions=task.system,
            verbosity_level=smol.LogLevel.OFF,
        )
        try:
            output = agent.run(task.prompt)
        except Exception as exc:  # the framework's raise is the run's outcome
            return support.raised(exc)
        return support.finished(output, steps=len(agent.memory.steps))


def _tool(smol: Any, tool: AgentTool) -> Any:
    props, required = support.properties(tool)
    inputs = {}
    for key, prop in props.items():
        kind = prop.get("type") if isinstance(prop, dict) else None
        entry: dict[str, Any] = {
            "type": kind if isinstance(kind, str) and kind in JSON_TYPES else "any",
            "description": str((prop or {}).get("description") or key),
        }
        if key not in required:
            entry["nullable"] = True
        inputs[key] = entry

    call = support.user_function(tool)

    def forward(self: Any, *args: Any, **kwargs: Any) -> str:
        # A raw string comes positionally (smolagents' tool(arguments)) and binds to the
        # first input, as in a user's forward; the nullable inputs the model left out
        # come as None, which a user's forward sees as its default.
        return call(*args, **{k: v for k, v in kwargs.items() if v is not None})

    cls = type(
        f"LedgerTool_{tool.name}",
        (smol.Tool,),
        {
            "name": tool.name,
            "description": tool.description,
            "inputs": inputs,
            "output_type": "string",
            "skip_forward_signature_validation": True,
            "forward": forward,
        },
    )
    return cls()
