"""The OpenAI Agents SDK (``openai-agents``): ``Runner.run_streamed`` on an ``Agent``.

The model is ``OpenAIChatCompletionsModel`` or ``OpenAIResponsesModel`` on an injected
``AsyncOpenAI(base_url=...)``, the SDK's documented way to use another endpoint
(agent-frameworks.md); tracing is disabled (it would upload to the platform). Tools are
``FunctionTool``s built from the task's JSON schemas (``strict_json_schema=False``: the
harness's schemas are not written for OpenAI's strict mode); a tool that raises is
answered as ``@function_tool`` answers by default (``default_tool_error_function``'s
message goes back to the model), so the row shows the SDK's default tool-failure policy.

Retries: ``ModelSettings.retry`` (runner-managed retries) is opt-in and left off, so the
``AsyncOpenAI`` client's own retries apply at their defaults. Nothing is changed. The
configured rows switch on what users do: ``openai-agents[retry.max_retries=N]``
(``ModelSettings(retry=ModelRetrySettings(max_retries=N,
policy=retry_policies.provider_suggested()))``, the runner-managed retry) and
``openai-agents[max_retries=N]`` (the ``AsyncOpenAI`` client's own).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from stream_harness.agents.frameworks import support
from stream_harness.agents.protocol import AgentOutcome, AgentTask, AgentTool

NAME: Final = "openai-agents"
PROTOCOLS: Final = frozenset({"openai-completions", "openai-responses"})


class OpenAIAgentsAdapter(support.Options):
    KNOWN: ClassVar[Mapping[str, str]] = {
        "retry.max_retries": "ModelSettings(retry=ModelRetrySettings(max_retries=N, policy=retry_policies.provider_suggested()))",
        "max_retries": "AsyncOpenAI(max_retries=N)",
    }
    name = NAME
    protocols = PROTOCOLS
    conventions = support.conventions_for(NAME)
    settings = "tracing disabled (set_tracing_disabled(True)); retries and delays at their defaults"

    def version(self) -> str:
        return support.version_of("openai-agents", "openai")

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        if task.protocol not in PROTOCOLS:
            raise support.unsupported(NAME, task, PROTOCOLS)
        # ``agents.run`` first: a folder named ``agents`` on sys.path (a project's tests/agents,
        # as here) imports as an empty namespace package when openai-agents is absent.
        _, agents, openai = support.load(NAME, "openai-agents", "agents.run", "agents", "openai")
        agents.set_tracing_disabled(True)
        client = openai.AsyncOpenAI(
            base_url=support.openai_url(task),
            api_key=task.api_key,
            max_retries=self.option("max_retries", 2),
        )
        retries = self.option("retry.max_retries", 0)
        settings = (
            agents.ModelSettings(
                retry=agents.ModelRetrySettings(
                    max_retries=retries, policy=agents.retry_policies.provider_suggested()
                )
            )
            if retries
            else agents.ModelSettings()
        )
        cls = (
            agents.OpenAIChatCompletionsModel
            if task.protocol == "openai-completions"
            else agents.OpenAIResponsesModel
        )
        agent = agents.Agent(
            name="stream-harness",
            instructions=task.system,
            model=cls(model=task.model, openai_client=client),
            tools=[_tool(agents, t) for t in task.tools],
            model_settings=settings,
        )

        async def run() -> Any:
            result = agents.Runner.run_streamed(agent, task.prompt, max_turns=task.limits.max_turns)
            async for _ in result.stream_events():
                pass
            return result

        return support.run_guarded(run, task, lambda result: support.finished(result.final_output))


def _tool(agents: Any, tool: AgentTool) -> Any:
    async def invoke(ctx: Any, arguments: str) -> str:
        try:
            return tool.call(json.loads(arguments or "{}"))
        except Exception as exc:
            return str(agents.default_tool_error_function(ctx, exc))

    return agents.FunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=support.schema(tool),
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )
