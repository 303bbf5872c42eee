"""LlamaIndex's ``FunctionAgent`` (agent workflows), streaming by default.

The LLMs are LlamaIndex's own integrations, each pointed at the server: ``OpenAI``
(Chat Completions) and ``OpenAIResponses`` with ``api_base``, ``Anthropic`` with
``base_url``, ``GoogleGenAI`` with google-genai ``HttpOptions(base_url=...)``. The run is
``agent.run(user_msg=...)``, its event stream drained, then awaited for the
``AgentOutput``. Tools are ``FunctionTool``s whose ``fn_schema`` reports the task's JSON
schema as is.

Retries: each integration's defaults, which stack a LlamaIndex tenacity layer on the SDK
client's own: ``OpenAI(max_retries=3)`` goes both to the openai client and to
``llm_retry_decorator`` (random exponential 1 to 20 s, stopping after 60 s),
``Anthropic(max_retries=10)`` to the anthropic client, ``GoogleGenAI(max_retries=3)``.
Nothing is changed.
"""

from __future__ import annotations

from typing import Any, Final

from stream_harness.agents.frameworks.support import (
    conventions_for,
    finished,
    load,
    openai_url,
    root_url,
    run_guarded,
    schema,
    unsupported,
    version_of,
)
from stream_harness.agents.protocol import AgentOutcome, AgentTask, AgentTool

NAME: Final = "llamaindex"
PROTOCOLS: Final = frozenset(
    {"openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"}
)


class LlamaIndexAdapter:
    name = NAME
    protocols = PROTOCOLS
    conventions = conventions_for(NAME)
    settings = "none: LLM integrations and FunctionAgent (streaming=True) at their defaults"

    def version(self) -> str:
        return version_of(
            "llama-index-core",
            "llama-index-llms-openai",
            "llama-index-llms-anthropic",
            "llama-index-llms-google-genai",
        )

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        workflow, tools_mod, pydantic = load(
            NAME,
            "llama-index-core",
            "llama_index.core.agent.workflow",
            "llama_index.core.tools",
            "pydantic",
        )
        llm = _llm(task)
        agent = workflow.FunctionAgent(
            tools=[_tool(tools_mod, pydantic, t) for t in task.tools],
            llm=llm,
            system_prompt=task.system,
        )

        async def run() -> Any:
            handler = agent.run(user_msg=task.prompt, max_iterations=task.limits.max_turns)
            async for _ in handler.stream_events():
                pass
            return await handler

        return run_guarded(run, task, lambda result: finished(result.response.content or ""))


def _llm(task: AgentTask) -> Any:
    if task.protocol in ("openai-completions", "openai-responses"):
        (mod,) = load(NAME, "llama-index-llms-openai", "llama_index.llms.openai")
        cls = mod.OpenAI if task.protocol == "openai-completions" else mod.OpenAIResponses
        return cls(model=task.model, api_base=openai_url(task), api_key=task.api_key)
    if task.protocol == "anthropic-messages":
        (mod,) = load(NAME, "llama-index-llms-anthropic", "llama_index.llms.anthropic")
        return mod.Anthropic(model=task.model, base_url=root_url(task), api_key=task.api_key)
    if task.protocol == "google-generative-ai":
        mod, types = load(
            NAME,
            "llama-index-llms-google-genai",
            "llama_index.llms.google_genai",
            "google.genai.types",
        )
        return mod.GoogleGenAI(
            model=task.model,
            api_key=task.api_key,
            http_options=types.HttpOptions(base_url=root_url(task)),
        )
    raise unsupported(NAME, task, PROTOCOLS)


def _tool(tools_mod: Any, pydantic: Any, tool: AgentTool) -> Any:
    declared = schema(tool)

    class Arguments(pydantic.BaseModel):  # type: ignore[misc]
        # What the model is told is the task's schema, not one pydantic derives.
        model_config = pydantic.ConfigDict(extra="allow")

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return declared

    def call(**arguments: Any) -> str:
        return tool.call(arguments)

    metadata = tools_mod.ToolMetadata(
        name=tool.name, description=tool.description, fn_schema=Arguments
    )
    return tools_mod.FunctionTool.from_defaults(fn=call, tool_metadata=metadata)
