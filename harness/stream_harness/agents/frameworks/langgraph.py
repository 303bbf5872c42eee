"""LangChain's agent (``langchain.agents.create_agent``, a LangGraph graph), streamed.

The chat models are the provider packages' own, each pointed at the server by its
``base_url``: ``ChatOpenAI`` (Chat Completions, or Responses with
``use_responses_api=True``), ``ChatAnthropic`` and ``ChatGoogleGenerativeAI`` (its
``base_url`` goes to the google-genai client), all with ``streaming=True``. The graph runs
with ``astream(stream_mode="values")``, each model call streaming token by token, and the
run's answer is the text of the last message of the final state. Tools are
``StructuredTool``s with the task's JSON schemas as ``args_schema`` (a dict schema is
passed to the model as is).

Retries: each chat model's default (``ChatOpenAI`` leaves the openai client's 2,
``ChatAnthropic`` sets 2, ``ChatGoogleGenerativeAI`` sets 6 attempts through google-genai's
``HttpRetryOptions``, exponential from 1 s). Nothing is changed. The configured rows
switch on what users do: ``langgraph[ModelRetryMiddleware.max_retries=N]`` (create_agent's
model-retry middleware, at its other defaults) and ``langgraph[max_retries=N]`` (each chat
model's own ``max_retries``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from stream_harness.agents.frameworks import support
from stream_harness.agents.protocol import AgentOutcome, AgentTask, AgentTool

NAME: Final = "langgraph"
PROTOCOLS: Final = frozenset(
    {
        "openai-completions",
        "openai-responses",
        "anthropic-messages",
        "google-generative-ai",
        "bedrock-converse-stream",
    }
)


class LangGraphAdapter(support.Options):
    KNOWN: ClassVar[Mapping[str, str]] = {
        "ModelRetryMiddleware.max_retries": "create_agent(middleware=[ModelRetryMiddleware(max_retries=N)])",
        "max_retries": "the chat model's max_retries=N",
    }
    name = NAME
    protocols = PROTOCOLS
    conventions = support.conventions_for(NAME)
    settings = (
        "chat models (streaming=True) and create_agent at their defaults; ChatBedrockConverse "
        "disable_streaming=False (the scenarios' model id is none it knows to stream)"
    )

    def version(self) -> str:
        return support.version_of(
            "langchain",
            "langgraph",
            "langchain-openai",
            "langchain-anthropic",
            "langchain-google-genai",
            "langchain-aws",
        )

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        agents, tools_mod, middleware = support.load(
            NAME,
            "langchain",
            "langchain.agents",
            "langchain_core.tools",
            "langchain.agents.middleware",
        )
        model = _model(task, self.options.get("max_retries"))
        retries = self.option("ModelRetryMiddleware.max_retries", 0)
        agent = agents.create_agent(
            model,
            [_tool(tools_mod, t) for t in task.tools],
            system_prompt=task.system,
            middleware=[middleware.ModelRetryMiddleware(max_retries=retries)] if retries else (),
        )
        config = {"recursion_limit": 2 * task.limits.max_turns + 1}

        async def run() -> Any:
            state: Any = None
            inputs = {"messages": [{"role": "user", "content": task.prompt}]}
            async for values in agent.astream(inputs, config, stream_mode="values"):
                state = values  # the last is the final state
            return state

        return support.run_guarded(run, task, _answer)


def _answer(state: Any) -> AgentOutcome:
    # ``text`` is a property in langchain-core 1.x (a str that still answers a call).
    return support.finished(str(state["messages"][-1].text), messages=len(state["messages"]))


def _model(task: AgentTask, max_retries: object) -> Any:
    # Only a configured row passes max_retries: each chat model's default differs.
    retries = {} if max_retries is None else {"max_retries": max_retries}
    if task.protocol in ("openai-completions", "openai-responses"):
        (openai_mod,) = support.load(NAME, "langchain-openai", "langchain_openai")
        return openai_mod.ChatOpenAI(
            model=task.model,
            base_url=support.openai_url(task),
            api_key=task.api_key,
            streaming=True,
            use_responses_api=task.protocol == "openai-responses",
            **retries,
        )
    if task.protocol == "anthropic-messages":
        (anthropic_mod,) = support.load(NAME, "langchain-anthropic", "langchain_anthropic")
        return anthropic_mod.ChatAnthropic(
            model=task.model, base_url=support.root_url(task), api_key=task.api_key, streaming=True,
            **retries,
        )  # fmt: skip
    if task.protocol == "google-generative-ai":
        (google_mod,) = support.load(NAME, "langchain-google-genai", "langchain_google_genai")
        return google_mod.ChatGoogleGenerativeAI(
            model=task.model, base_url=support.root_url(task), google_api_key=task.api_key, streaming=True,
            **retries,
        )  # fmt: skip
    if task.protocol == "bedrock-converse-stream":
        (aws_mod,) = support.load(NAME, "langchain-aws", "langchain_aws")
        # boto3 pointed at the server, with made-up static keys (SigV4-signed, unchecked);
        # streaming=True as for the others, and disable_streaming=False: the scenarios'
        # model id is none langchain-aws knows to stream, so it would fall back to Converse.
        return aws_mod.ChatBedrockConverse(
            model=task.model,
            streaming=True,
            disable_streaming=False,
            endpoint_url=support.root_url(task),
            region_name="us-east-1",
            aws_access_key_id="stream-harness",
            aws_secret_access_key=task.api_key,
            **retries,  # max_retries: retries.max_attempts of the botocore Config
        )
    raise support.unsupported(NAME, task, PROTOCOLS)


def _tool(tools_mod: Any, tool: AgentTool) -> Any:
    call = support.user_function(tool)
    return tools_mod.StructuredTool.from_function(
        func=call, name=tool.name, description=tool.description, args_schema=support.schema(tool)
    )
