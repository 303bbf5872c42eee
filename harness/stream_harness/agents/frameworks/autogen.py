"""AutoGen's ``AssistantAgent`` (autogen-agentchat) with a streaming model client.

The clients are autogen-ext's ``OpenAIChatCompletionClient(base_url=...)`` and
``AnthropicChatCompletionClient(base_url=...)``, each given a ``model_info`` (required for
a model name AutoGen does not know, agent-frameworks.md), and the agent streams
(``model_client_stream=True``). The run is ``agent.run_stream(task=...)`` drained to its
``TaskResult``; the answer is the last message's text. Tools are ``BaseTool``s whose
argument model reports the task's JSON schema as is.

Two settings are not AutoGen's defaults, because with them an ``AssistantAgent`` is not a
loop: by default it makes one tool round and answers with the tool's result as text,
never asking the model again. ``max_tool_iterations`` is the task's turn limit and
``reflect_on_tool_use=True``, so the model sees the results and writes the answer.
Retries are the SDK clients' defaults (AutoGen passes ``max_retries`` only when given).
"""

from __future__ import annotations

from typing import Any, Final

from stream_harness.agents.frameworks import support
from stream_harness.agents.protocol import AgentOutcome, AgentTask, AgentTool

NAME: Final = "autogen"
PROTOCOLS: Final = frozenset({"openai-completions", "anthropic-messages"})
MODEL_INFO: Final[dict[str, Any]] = {
    "vision": False,
    "function_calling": True,
    "json_output": True,
    "structured_output": True,
    "family": "unknown",
}


class AutoGenAdapter:
    name = NAME
    protocols = PROTOCOLS
    conventions = support.conventions_for(NAME)
    settings = (
        "reflect_on_tool_use=True and max_tool_iterations=<turn limit> (by default an "
        "AssistantAgent answers with the tool result after one round); model_info given; "
        "retries and delays at their defaults"
    )

    def version(self) -> str:
        return support.version_of("autogen-agentchat", "autogen-ext", "openai", "anthropic")

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        agents, tools_mod, pydantic = support.load(
            NAME, "autogen-agentchat", "autogen_agentchat.agents", "autogen_core.tools", "pydantic"
        )
        client = _client(task)
        agent = agents.AssistantAgent(
            name="stream_harness",
            model_client=client,
            tools=[_tool(tools_mod, pydantic, t) for t in task.tools],
            system_message=task.system,
            model_client_stream=True,
            reflect_on_tool_use=True,
            max_tool_iterations=task.limits.max_turns,
        )

        async def run() -> Any:
            result: Any = None
            try:
                async for item in agent.run_stream(task=task.prompt):
                    result = item  # the last item is the TaskResult
            finally:
                await client.close()
            return result

        return support.run_guarded(run, task, _answer)


def _answer(result: Any) -> AgentOutcome:
    last = result.messages[-1]
    content = getattr(last, "content", None)
    text = content if isinstance(content, str) else last.to_text()
    return support.finished(
        text, stop_reason=str(result.stop_reason), messages=len(result.messages)
    )


def _client(task: AgentTask) -> Any:
    if task.protocol == "openai-completions":
        (mod,) = support.load(NAME, "autogen-ext[openai]", "autogen_ext.models.openai")
        return mod.OpenAIChatCompletionClient(
            model=task.model,
            base_url=support.openai_url(task),
            api_key=task.api_key,
            model_info=MODEL_INFO,
        )
    if task.protocol == "anthropic-messages":
        (mod,) = support.load(NAME, "autogen-ext[anthropic]", "autogen_ext.models.anthropic")
        return mod.AnthropicChatCompletionClient(
            model=task.model,
            base_url=support.root_url(task),
            api_key=task.api_key,
            model_info=MODEL_INFO,
        )
    raise support.unsupported(NAME, task, PROTOCOLS)


def _tool(tools_mod: Any, pydantic: Any, tool: AgentTool) -> Any:
    arguments_model = support.arguments_model(pydantic, tool)

    class LedgerTool(tools_mod.BaseTool):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(arguments_model, str, tool.name, tool.description)

        async def run(self, args: Any, cancellation_token: Any) -> str:
            return tool.call(args.model_dump())

    return LedgerTool()
