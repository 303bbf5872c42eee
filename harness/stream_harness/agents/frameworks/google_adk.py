"""Google's Agent Development Kit: an ``LlmAgent`` run by an ``InMemoryRunner``, SSE streaming.

The models are ADK's own: ``Gemini`` given an injected google-genai ``Client`` whose
``base_url`` is the server, and ``AnthropicLlm`` given an injected ``AsyncAnthropic``
(agent-frameworks.md: ADK's ``Claude`` class routes to Vertex AI instead). The run is
``runner.run_async(..., run_config=RunConfig(streaming_mode=StreamingMode.SSE))``; the
answer is the text of the last final-response event. Tools are ``BaseTool``s declaring
the task's JSON schema as ``parameters_json_schema``.

Retries: ``Gemini.retry_options`` is None by default, so google-genai never retries; the
anthropic client keeps its defaults. Nothing is changed.
"""

from __future__ import annotations

from typing import Any, Final

from stream_harness.agents.frameworks import support
from stream_harness.agents.protocol import AgentOutcome, AgentTask, AgentTool

NAME: Final = "google-adk"
PROTOCOLS: Final = frozenset({"google-generative-ai", "anthropic-messages"})


class GoogleADKAdapter:
    name = NAME
    protocols = PROTOCOLS
    conventions = support.conventions_for(NAME)
    settings = "none: Gemini / AnthropicLlm on injected clients, RunConfig(streaming_mode=SSE), retries at their defaults"

    def version(self) -> str:
        return support.version_of("google-adk", "google-genai", "anthropic")

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        agents, runners, tools_mod, types = support.load(
            NAME,
            "google-adk",
            "google.adk.agents",
            "google.adk.runners",
            "google.adk.tools",
            "google.genai.types",
        )
        agent = agents.LlmAgent(
            name="stream_harness",
            model=_model(task),
            instruction=task.system or "",
            tools=[_tool(tools_mod, types, t) for t in task.tools],
        )
        runner = runners.InMemoryRunner(agent=agent, app_name="stream-harness")
        config = agents.RunConfig(
            streaming_mode=agents.run_config.StreamingMode.SSE,
            max_llm_calls=task.limits.max_turns,
        )

        async def run() -> list[Any]:
            session = await runner.session_service.create_session(
                app_name="stream-harness", user_id="harness"
            )
            message = types.Content(role="user", parts=[types.Part(text=task.prompt)])
            return [
                event
                async for event in runner.run_async(
                    user_id="harness", session_id=session.id, new_message=message, run_config=config
                )
            ]

        return support.run_guarded(run, task, _answer)


def _answer(events: list[Any]) -> AgentOutcome:
    finals = [e for e in events if e.is_final_response() and not e.partial]
    if not finals:
        return AgentOutcome(
            error_type="NoFinalResponse", error_message=f"{len(events)} events, none final"
        )
    last = finals[-1]
    if last.error_code:
        return AgentOutcome(error_type=str(last.error_code), error_message=str(last.error_message))
    parts = (last.content.parts if last.content else None) or []
    return support.finished(
        "".join(p.text for p in parts if p.text and not p.thought), events=len(events)
    )


def _model(task: AgentTask) -> Any:
    if task.protocol == "google-generative-ai":
        google_llm, genai, types = support.load(
            NAME, "google-adk", "google.adk.models.google_llm", "google.genai", "google.genai.types"
        )
        client = genai.Client(
            api_key=task.api_key, http_options=types.HttpOptions(base_url=support.root_url(task))
        )
        return google_llm.Gemini(model=task.model, client=client)
    if task.protocol == "anthropic-messages":
        anthropic_llm, anthropic = support.load(
            NAME, "google-adk[anthropic]", "google.adk.models.anthropic_llm", "anthropic"
        )
        client = anthropic.AsyncAnthropic(base_url=support.root_url(task), api_key=task.api_key)
        return anthropic_llm.AnthropicLlm(model=task.model, client=client)
    raise support.unsupported(NAME, task, PROTOCOLS)


def _tool(tools_mod: Any, types: Any, tool: AgentTool) -> Any:
    declared = support.schema(tool)

    class LedgerTool(tools_mod.BaseTool):  # type: ignore[misc]
        def _get_declaration(self) -> Any:
            return types.FunctionDeclaration(
                name=tool.name, description=tool.description, parameters_json_schema=declared
            )

        async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
            return tool.call(args)

    return LedgerTool(name=tool.name, description=tool.description)
