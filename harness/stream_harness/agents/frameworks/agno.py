"""agno's ``Agent``, streamed (``arun(stream=True, stream_events=True)``), telemetry off.

The models are agno's own: ``OpenAIChat`` and ``OpenAIResponses`` with ``base_url``,
``Claude`` and ``Gemini`` with the server in ``client_params`` (the SDK client's
``base_url``; google-genai's through ``http_options``), as agent-frameworks.md found. Tools
are ``Function``s with the task's JSON schema as ``parameters`` and
``skip_entrypoint_processing`` (so agno does not re-derive the schema from the Python
signature). agno reports a failed run as a ``RunErrorEvent`` instead of raising; the row
takes its ``error_type`` and text as the raise.

Retries: ``Agent(retries=0)`` and the model's ``retries=0`` are agno's defaults (no layer
of its own); the SDK clients keep theirs. ``telemetry=False`` (agent-frameworks.md: it
would call home); nothing else is changed. The rows ``agno[retries=N]`` and
``agno[model.retries=N]`` switch on agno's two layers (the run started again, the model
stream started again), as users do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from stream_harness.agents.frameworks import support
from stream_harness.agents.protocol import AgentOutcome, AgentTask, AgentTool

NAME: Final = "agno"
PROTOCOLS: Final = frozenset(
    {"openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"}
)


class AgnoAdapter(support.Options):
    KNOWN: ClassVar[Mapping[str, str]] = {
        "retries": "Agent(retries=N): a failed run is started again, whole",
        "model.retries": "the model's retries=N: a failed model stream is started again",
    }
    name = NAME
    protocols = PROTOCOLS
    conventions = support.conventions_for(NAME)
    settings = "telemetry=False; retries and delays at their defaults"

    def version(self) -> str:
        return support.version_of("agno", "openai", "anthropic", "google-genai")

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        agent_mod, function_mod = support.load(NAME, "agno", "agno.agent", "agno.tools.function")
        agent = agent_mod.Agent(
            model=_model(task, self.option("model.retries", 0)),
            retries=self.option("retries", 0),
            tools=[_tool(function_mod, t) for t in task.tools],
            instructions=task.system,
            telemetry=False,
            tool_call_limit=task.limits.max_turns,
        )

        async def run() -> list[Any]:
            return [
                event async for event in agent.arun(task.prompt, stream=True, stream_events=True)
            ]

        return support.run_guarded(run, task, _answer)


def _answer(events: list[Any]) -> AgentOutcome:
    kinds = [type(e).__name__ for e in events]
    for event in reversed(events):
        if type(event).__name__ == "RunErrorEvent":
            return AgentOutcome(
                error_type=event.error_type or "RunErrorEvent",
                error_message=str(event.content),
                raw={"events": len(kinds)},
            )
        if type(event).__name__ == "RunCompletedEvent":
            return support.finished(event.content or "", events=len(kinds))
    return AgentOutcome(
        error_type="NoCompletion", error_message=f"no RunCompletedEvent in {kinds[-5:]}"
    )


def _model(task: AgentTask, retries: int) -> Any:
    if task.protocol in ("openai-completions", "openai-responses"):
        chat, responses = support.load(
            NAME, "agno[openai]", "agno.models.openai.chat", "agno.models.openai.responses"
        )
        cls = (
            chat.OpenAIChat if task.protocol == "openai-completions" else responses.OpenAIResponses
        )
        return cls(
            id=task.model, base_url=support.openai_url(task), api_key=task.api_key, retries=retries
        )
    if task.protocol == "anthropic-messages":
        (claude,) = support.load(NAME, "agno[anthropic]", "agno.models.anthropic.claude")
        return claude.Claude(
            id=task.model,
            api_key=task.api_key,
            client_params={"base_url": support.root_url(task)},
            retries=retries,
        )
    if task.protocol == "google-generative-ai":
        (gemini,) = support.load(NAME, "agno[google]", "agno.models.google.gemini")
        return gemini.Gemini(
            id=task.model,
            api_key=task.api_key,
            client_params={"http_options": {"base_url": support.root_url(task)}},
            retries=retries,
        )
    raise support.unsupported(NAME, task, PROTOCOLS)


def _tool(function_mod: Any, tool: AgentTool) -> Any:
    call = support.user_function(tool)
    return function_mod.Function(
        name=tool.name,
        description=tool.description,
        parameters=support.schema(tool),
        entrypoint=call,
        skip_entrypoint_processing=True,
    )
