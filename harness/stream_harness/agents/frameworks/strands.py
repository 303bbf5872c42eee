"""Strands Agents' ``Agent``, streamed (``stream_async``), callback handler off.

The models are Strands' own, each given the server through the SDK client's arguments:
``OpenAIModel`` and ``AnthropicModel`` with ``client_args={"base_url": ...}``
(agent-frameworks.md), ``GeminiModel`` with google-genai ``http_options``. Tools are
``PythonAgentTool``s whose ``inputSchema`` is the task's JSON schema; a tool that raises
is answered as the ``@tool`` decorator answers by default (an ``error`` result,
``"Error: <type> - <message>"``), so the row shows Strands' default tool-failure policy.

Retries: Strands' ``ModelRetryStrategy`` retries a throttled model call (6 attempts, waits
4, 8, 16, 32, 64 s by default: over two minutes a run). The count stays; only the delays
are shortened, through the strategy's own ``initial_delay`` / ``max_delay`` (0.5 s each:
well under the scenarios' shortest retry-after, 1.5 s, so the observed wait is plainly
Strands' own and never a hint met by coincidence, as the default 4 s would meet the short
ones; on Gemini it is the only retry layer and reads no hint, declared
``retry_after_honoured: false``, so A10 shows it rather than judges it). The SDK clients
keep their defaults. The configured rows set what users do:
``strands[ModelRetryStrategy.max_attempts=N]`` (the strategy's attempts, delays as above)
and ``strands[client_args.max_retries=N]`` (the SDK client's own retries, through the
model's ``client_args``). ``BedrockModel`` has no ``client_args`` (it builds a boto3 client,
whose retries are botocore's ``Config``), so ``strands[client_args.max_retries=N]`` does not
speak bedrock-converse-stream: run there, it would be the row at its defaults judged by the
configuration's declared retries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from stream_harness.agents.frameworks import support
from stream_harness.agents.protocol import AgentOutcome, AgentTask, AgentTool

NAME: Final = "strands"
PROTOCOLS: Final = frozenset(
    {"openai-completions", "anthropic-messages", "google-generative-ai", "bedrock-converse-stream"}
)
RETRY_DELAY_S: Final = 0.5


# Each protocol's model and its SDK (google-genai imports httpx2), imported when the adapter
# is built (support.preload).
MODEL_MODULES: Final = (
    "strands",
    "strands.tools.tools",
    "strands.models.openai",
    "strands.models.anthropic",
    "strands.models.gemini",
    "strands.models.bedrock",
)


class StrandsAdapter(support.Options):
    KNOWN: ClassVar[Mapping[str, str]] = {
        "ModelRetryStrategy.max_attempts": "ModelRetryStrategy(max_attempts=N), delays as by default here",
        "client_args.max_retries": "the SDK client's max_retries=N, through the model's client_args",
    }
    name = NAME
    protocols = PROTOCOLS
    conventions = support.conventions_for(NAME)
    settings = (
        f"ModelRetryStrategy(max_attempts=6 as default, initial_delay={RETRY_DELAY_S}, "
        f"max_delay={RETRY_DELAY_S}) instead of waits 4 to 64 s; callback_handler=None"
    )

    def __init__(self, options: Mapping[str, object] | None = None) -> None:
        super().__init__(options)
        support.preload(*MODEL_MODULES)
        if "client_args.max_retries" in self.options:
            # BedrockModel takes no client_args: the setting has nowhere to go there.
            self.protocols = PROTOCOLS - {"bedrock-converse-stream"}

    def version(self) -> str:
        return support.version_of("strands-agents", "openai", "anthropic", "google-genai")

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        strands, tools_mod = support.load(NAME, "strands-agents", "strands", "strands.tools.tools")
        agent = strands.Agent(
            model=_model(task, self.options.get("client_args.max_retries")),
            tools=[_tool(tools_mod, t) for t in task.tools],
            system_prompt=task.system,
            callback_handler=None,
            retry_strategy=strands.ModelRetryStrategy(
                max_attempts=self.option("ModelRetryStrategy.max_attempts", 6),
                initial_delay=RETRY_DELAY_S,
                max_delay=RETRY_DELAY_S,
            ),
        )

        async def run() -> Any:
            result: Any = None
            async for event in agent.stream_async(task.prompt):
                if isinstance(event, dict) and "result" in event:
                    result = event["result"]
            return result

        return support.run_guarded(run, task, _answer)


def _answer(result: Any) -> AgentOutcome:
    if result is None:
        return AgentOutcome(
            error_type="NoResult", error_message="the stream ended without a result"
        )
    # The final message's text blocks (``str(result)`` ends each with a newline of its own).
    content = result.message.get("content", [])
    text = "".join(b["text"] for b in content if isinstance(b, dict) and "text" in b)
    return support.finished(text, stop_reason=str(result.stop_reason))


def _model(task: AgentTask, max_retries: object) -> Any:
    # Only a configured row passes max_retries: each client keeps its own default.
    retries = {} if max_retries is None else {"max_retries": max_retries}
    if task.protocol == "openai-completions":
        (mod,) = support.load(NAME, "strands-agents[openai]", "strands.models.openai")
        return mod.OpenAIModel(
            client_args={"base_url": support.openai_url(task), "api_key": task.api_key, **retries},
            model_id=task.model,
        )
    if task.protocol == "anthropic-messages":
        (mod,) = support.load(NAME, "strands-agents[anthropic]", "strands.models.anthropic")
        return mod.AnthropicModel(
            client_args={"base_url": support.root_url(task), "api_key": task.api_key, **retries},
            model_id=task.model,
            max_tokens=1024,
        )
    if task.protocol == "google-generative-ai":
        (mod,) = support.load(NAME, "strands-agents[gemini]", "strands.models.gemini")
        # google-genai's client takes no max_retries: its own retry is HttpRetryOptions.
        http_options: dict[str, Any] = {"base_url": support.root_url(task)}
        if max_retries is not None:
            http_options["retry_options"] = {"attempts": int(str(max_retries)) + 1}
        return mod.GeminiModel(
            client_args={"api_key": task.api_key, "http_options": http_options},
            model_id=task.model,
        )
    if task.protocol == "bedrock-converse-stream" and max_retries is None:
        # Strands' default model: boto3's bedrock-runtime client, pointed at the server
        # (endpoint_url), the API key as a bearer token (no SigV4, no AWS credentials).
        (mod,) = support.load(NAME, "strands-agents", "strands.models.bedrock")
        return mod.BedrockModel(
            endpoint_url=support.root_url(task),
            api_key=task.api_key,
            region_name="us-east-1",
            model_id=task.model,
            streaming=True,
        )
    raise support.unsupported(NAME, task, PROTOCOLS)


def _tool(tools_mod: Any, tool: AgentTool) -> Any:
    spec = {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": {"json": support.schema(tool)},
    }

    def call(tool_use: Any, **_state: Any) -> dict[str, Any]:
        use_id = tool_use["toolUseId"]
        try:
            text = tool.call(tool_use.get("input") or {})
        except Exception as exc:
            failed = f"Error: {type(exc).__name__} - {exc}"
            return {"toolUseId": use_id, "status": "error", "content": [{"text": failed}]}
        return {"toolUseId": use_id, "status": "success", "content": [{"text": text}]}

    return tools_mod.PythonAgentTool(tool.name, spec, call)
