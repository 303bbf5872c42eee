"""pydantic-ai's ``Agent`` as an agent under test, on each model class of its own.

``OpenAIChatModel`` / ``OpenAIResponsesModel`` on an ``OpenAIProvider(base_url=...)``,
``AnthropicModel`` on an ``AnthropicProvider(base_url=...)`` and ``GoogleModel`` on a
``GoogleProvider`` whose google-genai client has the server as ``base_url``: the clients a
user builds for another endpoint (agent-frameworks.md). ``Agent.run`` streams only when
given an ``event_stream_handler`` (it then drives each model request through
``request_stream``), so one that drains the events is passed: the row is the streaming
path. Tools are declared with ``Tool.from_schema`` from the task's JSON schemas.

Retries: pydantic-ai adds no HTTP retry layer (its ``retries`` count re-asks the model
after a tool or output validation error); each provider's SDK client keeps its defaults.
Nothing is changed from the defaults. The configured rows switch on what users do:
``pydantic-ai-agent[retries=N]`` (the agent's retry budget for tools and output) and
``pydantic-ai-agent[http.retries=N]``, the retrying transport of pydantic-ai's documented
recipe (``AsyncHTTPX2TenacityTransport`` with ``wait_retry_after`` and
``validate_response=raise_for_status``) as every provider's ``http_client``. Bedrock's
provider takes a boto3 client, which has no ``http_client`` to give the transport, so
``pydantic-ai-agent[http.retries=N]`` does not speak bedrock-converse-stream: run there,
it would be the row at its defaults (botocore's own retries) judged by the transport's
declared policy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from stream_harness.agents.frameworks import support
from stream_harness.agents.protocol import AgentOutcome, AgentTask, AgentTool

NAME: Final = "pydantic-ai-agent"
PROTOCOLS: Final = frozenset(
    {
        "openai-completions",
        "openai-responses",
        "anthropic-messages",
        "google-generative-ai",
        "bedrock-converse-stream",
    }
)


class PydanticAIAgentAdapter(support.Options):
    KNOWN: ClassVar[Mapping[str, str]] = {
        "retries": "Agent(retries=N): the retry budget of tools and output validation",
        "http.retries": "the documented AsyncHTTPX2TenacityTransport as the providers' http_client",
    }
    name = NAME
    protocols = PROTOCOLS
    conventions = support.conventions_for(NAME)
    settings = "none: provider clients and Agent at their defaults"

    def __init__(self, options: Mapping[str, object] | None = None) -> None:
        super().__init__(options)
        if self.option("http.retries", 0):
            # The retrying transport is an httpx client; BedrockProvider has none to take it.
            self.protocols = PROTOCOLS - {"bedrock-converse-stream"}

    def version(self) -> str:
        return support.version_of("pydantic-ai-slim", "openai", "anthropic", "google-genai")

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        (agent_mod,) = support.load(NAME, "pydantic-ai-slim", "pydantic_ai")
        model = self._model(task)
        tools = [_tool(agent_mod, t) for t in task.tools]
        agent = agent_mod.Agent(
            model,
            tools=tools,
            system_prompt=task.system or (),
            name="stream-harness",
            retries=self.option("retries", 1),
        )
        limits = agent_mod.UsageLimits(request_limit=task.limits.max_turns)

        async def drain(_ctx: Any, events: Any) -> None:
            async for _ in events:
                pass

        async def run() -> Any:
            return await agent.run(task.prompt, usage_limits=limits, event_stream_handler=drain)

        return support.run_guarded(run, task, lambda result: support.finished(result.output))

    def _model(self, task: AgentTask) -> Any:
        if task.protocol in ("openai-completions", "openai-responses"):
            models, providers = support.load(
                NAME,
                "pydantic-ai-slim[openai]",
                "pydantic_ai.models.openai",
                "pydantic_ai.providers.openai",
            )
            provider = providers.OpenAIProvider(
                base_url=support.openai_url(task),
                api_key=task.api_key,
                http_client=self._http_client(),
            )
            cls = (
                models.OpenAIChatModel
                if task.protocol == "openai-completions"
                else models.OpenAIResponsesModel
            )
            return cls(task.model, provider=provider)
        if task.protocol == "anthropic-messages":
            models, providers = support.load(
                NAME,
                "pydantic-ai-slim[anthropic]",
                "pydantic_ai.models.anthropic",
                "pydantic_ai.providers.anthropic",
            )
            provider = providers.AnthropicProvider(
                base_url=support.root_url(task),
                api_key=task.api_key,
                http_client=self._http_client(),
            )
            return models.AnthropicModel(task.model, provider=provider)
        if task.protocol == "google-generative-ai":
            models, providers, genai, types = support.load(
                NAME,
                "pydantic-ai-slim[google]",
                "pydantic_ai.models.google",
                "pydantic_ai.providers.google",
                "google.genai",
                "google.genai.types",
            )
            client = genai.Client(
                api_key=task.api_key,
                http_options=types.HttpOptions(
                    base_url=support.root_url(task), httpx_async_client=self._http_client()
                ),
            )
            return models.GoogleModel(task.model, provider=providers.GoogleProvider(client=client))
        if task.protocol == "bedrock-converse-stream" and task.protocol in self.protocols:
            models, providers = support.load(
                NAME,
                "pydantic-ai-slim[bedrock]",
                "pydantic_ai.models.bedrock",
                "pydantic_ai.providers.bedrock",
            )
            # Static made-up credentials (SigV4-signed, the server checks no signature): a
            # bearer api_key is refused by botocore over plain HTTP, and none is read from
            # the environment.
            provider = providers.BedrockProvider(
                base_url=support.root_url(task),
                region_name="us-east-1",
                aws_access_key_id="stream-harness",
                aws_secret_access_key=task.api_key,
            )
            return models.BedrockConverseModel(task.model, provider=provider)
        raise support.unsupported(NAME, task, self.protocols)

    def _http_client(self) -> Any:
        """The retrying client of pydantic-ai's recipe (docs: retries.md, "transport
        retries"), verbatim but for the attempts; None (the provider's own) by default."""
        retries = self.option("http.retries", 0)
        if not retries:
            return None
        models, retries_mod, tenacity, httpx2 = support.load(
            NAME, "pydantic-ai-slim[retries]", "pydantic_ai.models", "pydantic_ai.retries",
            "tenacity", "httpx2",
        )  # fmt: skip
        transport = retries_mod.AsyncHTTPX2TenacityTransport(
            retries_mod.RetryConfig(
                retry=tenacity.retry_if_exception_type(httpx2.HTTPStatusError),
                wait=retries_mod.wait_retry_after(max_wait=120),
                stop=tenacity.stop_after_attempt(retries + 1),
                reraise=True,
            ),
            validate_response=lambda r: r.raise_for_status(),
        )
        return models.create_async_httpx2_client(transport=transport)


def _tool(agent_mod: Any, tool: AgentTool) -> Any:
    call = support.user_function(tool)
    return agent_mod.Tool.from_schema(
        call, name=tool.name, description=tool.description, json_schema=support.schema(tool)
    )
