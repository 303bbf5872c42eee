"""The reference agent: our own loop (specs/agent-loop.md) over real HTTP, as an agent row.

It is judged like any framework (same server, same ledger, same checks), and it is the
oracle: where a check is policy-free, what the reference does is what every agent must
do, and the reference must pass every bundled scenario (tests/agents/test_reference.py).

The loop is the sans-I/O :class:`~stream_harness.loop.state.AgentLoop`; this host carries
out its commands one at a time on the calling thread: a request is an httpx stream whose
raw bytes go through the protocol's own normalizer, a tool is a call to the ledger, a
retry sleep is a real sleep scaled by ``time_scale`` (the only setting changed from the
loop's defaults, declared in the row's ``conventions`` so that the retry-after check
scales its expectation the same way).
"""

from __future__ import annotations

import functools
import ssl
import time
from collections import deque
from collections.abc import Mapping
from importlib import metadata
from typing import Any, Final

import httpx

from stream_harness.agents.exchange import ToolSchema, encode_request
from stream_harness.agents.protocol import AgentOutcome, AgentTask, AgentTool, ToolFailed
from stream_harness.agents.scenario.render import PROTOCOLS
from stream_harness.contract.events import AssistantMessage, TextBlock
from stream_harness.loop.clock import SystemClock
from stream_harness.loop.commands import Output, SendRequest, StartTimer, StartTool
from stream_harness.loop.config import LoopConfig
from stream_harness.loop.events import AgentEnd
from stream_harness.loop.messages import UserMessage
from stream_harness.loop.retry import RetryPolicy
from stream_harness.loop.state import AgentLoop
from stream_harness.loop.tools import ToolOutcome, ToolSpec
from stream_harness.providers.reference import http_error_events
from stream_harness.providers.registry import get_normalizer

TIME_SCALE: Final = 0.01
"""Real seconds slept per second of retry delay: seed 000's 2 s doubling and a server's
``retry-after`` keep their ratios, and a scenario with five retries takes a fraction of a
second."""

_CUT = "ECONNRESET: the connection closed before the response ended"


class ReferenceAgent:
    """The reference loop as an :class:`~stream_harness.agents.protocol.AgentAdapter`."""

    name = "reference"
    protocols = frozenset(PROTOCOLS)
    settings = (
        f"stream_harness.loop with seed 000's retry policy; retry sleeps scaled by {TIME_SCALE}"
    )

    def __init__(self, time_scale: float = TIME_SCALE, retry: RetryPolicy | None = None) -> None:
        self.time_scale = time_scale
        self.retry = retry or RetryPolicy()
        self.conventions: Mapping[str, Any] = {
            "max_retries": self.retry.max_retries,
            "retry_after_cap_s": self.retry.cap,
            "time_scale": time_scale,
            "retries_after_partial_output": True,
            "eager_tools": False,
        }

    @functools.cached_property
    def _tls(self) -> ssl.SSLContext:
        """One TLS context for every run: ``httpx.Client()`` builds one per client, 20 ms
        of CPU, about half of a run's, for a server it reaches over plain HTTP."""
        return ssl.create_default_context()

    def version(self) -> str:
        return metadata.version("stream-harness")

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        config = LoopConfig(model=task.model, retry=self.retry, max_turns=task.limits.max_turns)
        specs = [ToolSpec(t.name, t.parameters, description=t.description) for t in task.tools]
        loop = AgentLoop(config, specs, [UserMessage(content=task.prompt)], clock=SystemClock())
        tools = {t.name: t for t in task.tools}
        schemas = [ToolSchema(t.name, t.description, t.parameters) for t in task.tools]
        deadline = time.monotonic() + task.limits.timeout_s
        end: AgentEnd | None = None
        queue: deque[Output] = deque(loop.start())
        with httpx.Client(timeout=httpx.Timeout(task.limits.timeout_s), verify=self._tls) as client:
            while queue:
                if time.monotonic() > deadline:
                    return AgentOutcome(
                        error_type="TimeoutError", error_message="the run took too long"
                    )
                out = queue.popleft()
                if isinstance(out, AgentEnd):
                    end = out
                elif isinstance(out, SendRequest):
                    queue.extend(self._request(client, loop, task, schemas, out))
                elif isinstance(out, StartTool):
                    queue.extend(
                        loop.tool_finished(out.key, _run_tool(tools.get(out.call.name), out))
                    )
                elif isinstance(out, StartTimer):
                    time.sleep(out.delay * self.time_scale)
                    queue.extend(loop.wake(out.timer_id))
        if end is None:
            return AgentOutcome(
                error_type="RuntimeError", error_message="the loop stopped without agent_end"
            )
        raw = {"reason": end.reason, "turns": end.turns}
        if end.reason == "completed":
            return AgentOutcome(output=_last_text(loop), raw=raw)
        return AgentOutcome(
            error_type=f"AgentEnd.{end.reason}",
            error_message=end.error_message or end.reason,
            raw=raw,
        )

    def _request(
        self,
        client: httpx.Client,
        loop: AgentLoop,
        task: AgentTask,
        schemas: list[ToolSchema],
        request: SendRequest,
    ) -> list[Output]:
        rid = request.request_id
        path, body = encode_request(
            task.protocol, request.model, request.messages, schemas, system=task.system
        )
        headers = {
            "authorization": f"Bearer {task.api_key}",
            "x-api-key": task.api_key,
            "x-goog-api-key": task.api_key,
        }
        outputs: list[Output] = []
        try:
            with client.stream("POST", task.base_url + path, json=body, headers=headers) as reply:
                head = dict(reply.headers)
                if reply.status_code >= 400:
                    data = reply.read()
                    outputs += loop.response_head(rid, reply.status_code, head, data)
                    for event in http_error_events(task.protocol, reply.status_code, data, head):
                        outputs += loop.model_event(rid, event)
                    return outputs
                outputs += loop.response_head(rid, reply.status_code, head)
                normalizer = get_normalizer(task.protocol)
                try:
                    for chunk in reply.iter_raw():
                        for event in normalizer.feed(chunk):
                            outputs += loop.model_event(rid, event)
                except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
                    outputs += loop.request_failed(rid, f"{_CUT} ({type(exc).__name__})")
                    return outputs
                for event in normalizer.close():
                    outputs += loop.model_event(rid, event)
                outputs += loop.response_ended(rid)
        except httpx.TransportError as exc:
            outputs += loop.request_failed(rid, f"{type(exc).__name__}: {exc}")
        return outputs


def _run_tool(tool: AgentTool | None, command: StartTool) -> ToolOutcome:
    if tool is None:
        return ToolOutcome(error_type="KeyError", error_message=f"no tool {command.call.name!r}")
    try:
        return ToolOutcome(value=tool.call(command.call.arguments))
    except ToolFailed as exc:
        return ToolOutcome(error_type="ToolFailed", error_message=str(exc))


def _last_text(loop: AgentLoop) -> str:
    for message in reversed(loop.history):
        if isinstance(message, AssistantMessage):
            return "".join(b.content for b in message.content if isinstance(b, TextBlock))
    return ""
