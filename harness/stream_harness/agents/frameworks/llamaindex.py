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

Model description: LlamaIndex looks its model up by name (context window, chat or not,
function calling), and the scenarios' model name is no real one: ``OpenAI`` raises
``Unknown model``, ``Anthropic`` and ``OpenAIResponses`` call it no function-calling model
(``FunctionAgent`` then refuses it), and ``GoogleGenAI`` sends ``GET models/<name>`` when
built, unless given ``context_window`` and ``max_tokens``. So each LLM is described as a
function-calling chat model of ``CONTEXT_WINDOW`` tokens (a subclass whose ``metadata``
says so, what ``OpenAILike`` does from its fields), and GoogleGenAI gets both values.
"""

from __future__ import annotations

from typing import Any, Final

from stream_harness.agents.frameworks import support
from stream_harness.agents.protocol import AgentOutcome, AgentTask, AgentTool

NAME: Final = "llamaindex"
PROTOCOLS: Final = frozenset(
    {"openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"}
)
CONTEXT_WINDOW: Final = 200_000
MAX_TOKENS: Final = 4096  # GoogleGenAI skips its model lookup only when given this too


class LlamaIndexAdapter:
    name = NAME
    protocols = PROTOCOLS
    conventions = support.conventions_for(NAME)
    settings = (
        "retries and delays at their defaults; the LLM described as a function-calling chat "
        f"model of {CONTEXT_WINDOW} tokens (the scenarios' model name is none LlamaIndex "
        f"knows); GoogleGenAI given context_window and max_tokens={MAX_TOKENS} (else it "
        "looks the model up when built)"
    )

    def version(self) -> str:
        return support.version_of(
            "llama-index-core",
            "llama-index-llms-openai",
            "llama-index-llms-anthropic",
            "llama-index-llms-google-genai",
        )

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        workflow, tools_mod, pydantic = support.load(
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

        return support.run_guarded(
            run, task, lambda result: support.finished(result.response.content or "")
        )


def _llm(task: AgentTask) -> Any:
    if task.protocol in ("openai-completions", "openai-responses"):
        (mod,) = support.load(NAME, "llama-index-llms-openai", "llama_index.llms.openai")
        cls = mod.OpenAI if task.protocol == "openai-completions" else mod.OpenAIResponses
        return _described(cls)(
            model=task.model, api_base=support.openai_url(task), api_key=task.api_key
        )
    if task.protocol == "anthropic-messages":
        (mod,) = support.load(NAME, "llama-index-llms-anthropic", "llama_index.llms.anthropic")
        return _described(mod.Anthropic)(
            model=task.model, base_url=support.root_url(task), api_key=task.api_key
        )
    if task.protocol == "google-generative-ai":
        mod, types = support.load(
            NAME,
            "llama-index-llms-google-genai",
            "llama_index.llms.google_genai",
            "google.genai.types",
        )
        return mod.GoogleGenAI(
            model=task.model,
            api_key=task.api_key,
            http_options=types.HttpOptions(base_url=support.root_url(task)),
            context_window=CONTEXT_WINDOW,
            max_tokens=MAX_TOKENS,
        )
    raise support.unsupported(NAME, task, PROTOCOLS)


def _described(cls: Any) -> Any:
    """``cls`` whose ``metadata`` describes a function-calling chat model by our values,
    not by a lookup of the model name (which fails for a name LlamaIndex does not know)."""
    (llms,) = support.load(NAME, "llama-index-core", "llama_index.core.llms")

    class Described(cls):  # type: ignore[misc]
        @property
        def metadata(self) -> Any:
            return llms.LLMMetadata(
                context_window=CONTEXT_WINDOW,
                num_output=-1,
                is_chat_model=True,
                is_function_calling_model=True,
                model_name=self.model,
            )

    return Described


def _tool(tools_mod: Any, pydantic: Any, tool: AgentTool) -> Any:
    arguments_model = support.arguments_model(pydantic, tool)

    def call(**arguments: Any) -> str:
        return tool.call(arguments)

    metadata = tools_mod.ToolMetadata(
        name=tool.name, description=tool.description, fn_schema=arguments_model
    )
    return tools_mod.FunctionTool.from_defaults(fn=call, tool_metadata=metadata)
