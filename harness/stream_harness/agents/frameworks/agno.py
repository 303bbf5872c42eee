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

Runs at once (``agents --jobs``) are threads of one process, each on an event loop of its
own, and agno keeps one process-wide run cancellation registry
(``agno.run.cancel._cancellation_manager``) whose async methods take one ``asyncio.Lock``.
Two runs in two threads that meet in it bind that lock to one loop: the other waits on a
future of a loop that is not its own (a run that never sends its request) or raises
"bound to a different event loop" (578 rows of one matrix run, and a hang in a few
seconds with four threads registering runs). Its sections hold no ``await``, so
:func:`_one_lock_for_every_loop` lets the async methods take the registry's threading
lock instead (agno's own sync methods' lock; the change agno#10016 proposes for another
race in the same registry): each run's registration is as agno's, but loop-safe.
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
    settings = (
        "telemetry=False; retries and delays at their defaults; the run cancellation "
        "registry's async methods on its threading lock (runs on several threads)"
    )

    def version(self) -> str:
        return support.version_of("agno", "openai", "anthropic", "google-genai")

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        agent_mod, function_mod, cancel = support.load(
            NAME, "agno", "agno.agent", "agno.tools.function", "agno.run.cancel"
        )
        _one_lock_for_every_loop(cancel.get_cancellation_manager())
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


class _ThreadLockAsync:
    """``async with`` over a threading lock: for critical sections without an ``await``,
    which may then be entered from any thread's event loop (an ``asyncio.Lock`` belongs
    to the one loop that first waited on it)."""

    def __init__(self, lock: Any) -> None:
        self.lock = lock

    async def __aenter__(self) -> None:
        self.lock.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self.lock.release()


def _one_lock_for_every_loop(manager: Any) -> None:
    """agno's in-memory cancellation registry, its async methods on its threading lock
    (the module docstring says why). Once per process; a registry without the two locks
    (another manager, a later agno) is left as it is."""
    lock = getattr(manager, "_lock", None)
    if lock is None or not hasattr(manager, "_async_lock"):
        return
    if not isinstance(manager._async_lock, _ThreadLockAsync):
        manager._async_lock = _ThreadLockAsync(lock)


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
