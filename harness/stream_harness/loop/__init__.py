"""The reference agent loop, stream policies and delta coalescing (specs/agent-loop.md).

- :class:`AgentLoop` (stream_harness.loop.state): the sans-I/O state machine of one agent run.
- :class:`Simulation` / :class:`Scheduler` (stream_harness.loop.scheduler): drive it on virtual time.
- Scenarios (stream_harness.loop.scenario, specs/scenarios.md): YAML-scripted runs with expectations.
- :func:`check_events` / :func:`check_history` (stream_harness.loop.invariants): the invariants L1-L7 and L11 on a log.
- :class:`PolicyRunner` and example policies (stream_harness.loop.policies): seed 001's stream policies.
- :class:`CoalescingStream` (stream_harness.loop.coalesce): seed 002's delta coalescing.
"""

from __future__ import annotations

from stream_harness.loop.clock import Clock, SystemClock, VirtualClock
from stream_harness.loop.coalesce import CoalescingStream
from stream_harness.loop.events import AgentEvent, agent_event_from_json, agent_event_to_json
from stream_harness.loop.invariants import check_events, check_history
from stream_harness.loop.messages import Message, ToolResult, UserMessage
from stream_harness.loop.policies import (
    BufferingPolicy,
    PolicyContext,
    PolicyRunner,
    StreamState,
    ToolCallJudgePolicy,
)
from stream_harness.loop.retry import RetryPolicy, backoff_delay
from stream_harness.loop.scenario import ScenarioError, check_scenario, load_scenario, run_scenario
from stream_harness.loop.scheduler import ModelResponse, Scheduler, Simulation, ToolPlan
from stream_harness.loop.state import AgentLoop, LoopConfig, LoopState
from stream_harness.loop.tools import ToolOutcome, ToolSpec

__all__ = [
    "AgentEvent",
    "AgentLoop",
    "BufferingPolicy",
    "Clock",
    "CoalescingStream",
    "LoopConfig",
    "LoopState",
    "Message",
    "ModelResponse",
    "PolicyContext",
    "PolicyRunner",
    "RetryPolicy",
    "ScenarioError",
    "Scheduler",
    "Simulation",
    "StreamState",
    "SystemClock",
    "ToolCallJudgePolicy",
    "ToolOutcome",
    "ToolPlan",
    "ToolResult",
    "ToolSpec",
    "UserMessage",
    "VirtualClock",
    "agent_event_from_json",
    "agent_event_to_json",
    "backoff_delay",
    "check_events",
    "check_history",
    "check_scenario",
    "load_scenario",
    "run_scenario",
]
