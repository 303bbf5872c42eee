"""What the loop asks its host to do: the commands among its outputs.

The machine never acts itself; each command names one thing for the host to carry out (send
a request, start a tool, sleep, ask the user) or to stop doing, so the host owns every bit
of I/O and time and the machine stays a pure function of its inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from stream_harness.contract.events import ToolCall
from stream_harness.loop.events import AgentEvent
from stream_harness.loop.messages import Message
from stream_harness.loop.tools import PermissionAnswer, ToolSpec


@dataclass(frozen=True)
class SendRequest:
    request_id: int
    model: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]


@dataclass(frozen=True)
class CancelRequest:
    request_id: int


@dataclass(frozen=True)
class StartTool:
    key: str
    call: ToolCall
    context: dict[str, Any]


@dataclass(frozen=True)
class CancelTool:
    key: str


@dataclass(frozen=True)
class StartTimer:
    timer_id: int
    delay: float


@dataclass(frozen=True)
class CancelTimer:
    timer_id: int


@dataclass(frozen=True)
class AskPermission:
    """Ask the user whether a call may run (seed 000's ``PermissionNext.ask``); the host
    answers with :meth:`AgentLoop.permission_answer`. ``permission`` is ``doom_loop`` or the
    tool's name; ``count`` is the doom-loop streak (0 for a tool permission)."""

    ask_id: int
    key: str
    permission: str
    tool_call_id: str
    name: str
    arguments: dict[str, Any]
    count: int = 0


@dataclass(frozen=True)
class CancelPermission:
    """The question is moot (abort, or its attempt was discarded); any answer is ignored."""

    ask_id: int


Command: TypeAlias = (
    SendRequest
    | CancelRequest
    | StartTool
    | CancelTool
    | StartTimer
    | CancelTimer
    | AskPermission
    | CancelPermission
)
Output: TypeAlias = AgentEvent | Command
AskFn: TypeAlias = Callable[[AskPermission], PermissionAnswer]
"""A host that answers at once; without one the loop emits :class:`AskPermission` and waits."""
