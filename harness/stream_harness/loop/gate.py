"""The permission gate: may a started call run? The doom-loop question, then the tool's rule.

The gate decides and reports (its ``doom_loop`` and ``permission`` events, its questions to
the host); carrying the verdict out (starting the tool, recording a refusal, freeing the
executor's slot) is the caller's, so the rules of opencode's ``PermissionNext`` and its
doom-loop check read in one place.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Literal, TypeAlias

from stream_harness.loop.commands import AskFn, AskPermission
from stream_harness.loop.config import LoopConfig
from stream_harness.loop.events import DoomLoop, Permission, call_fields
from stream_harness.loop.messages import ToolResultKind
from stream_harness.loop.outbox import Outbox
from stream_harness.loop.tools import (
    DOOM_LOOP_DENIED,
    PERMISSION_DENIED,
    PERMISSION_REJECTED,
    DoomLoopAction,
    PermissionAction,
    PermissionAnswer,
)
from stream_harness.loop.turns import Gate, Turn


@dataclass(frozen=True)
class Refusal:
    """The call may not run; it gets this error result instead."""

    content: str
    kind: ToolResultKind


Verdict: TypeAlias = Literal["run", "wait"] | Refusal
"""``run``: start the tool; ``wait``: a question is out (the host answers it later)."""


class PermissionGate:
    """The run's permission state: the answers ``always`` given so far and the questions'
    ids. ``ask``: a host that answers at once; without one the gate asks with
    :class:`AskPermission` and the call waits."""

    def __init__(self, config: LoopConfig, ask: AskFn | None, outbox: Outbox) -> None:
        self.config = config
        self._ask = ask
        self._outbox = outbox
        self._always: set[str] = set()
        self._always_tools: set[str] = set()
        self._ask_id = 0

    def rule(self, name: str) -> PermissionAction:
        rules = self.config.permissions
        return rules.get(name, rules.get("*", "allow"))

    def advance(self, turn: Turn, gate: Gate) -> Verdict:
        """Take ``gate`` as far as it goes: to the run, to a refusal, or to a question."""
        call = gate.call
        while True:
            if gate.stage == "doom_loop":
                if not gate.doom:
                    gate.stage = "tool"
                    continue
                action = self.config.doom_loop
                if action == "allow" or call.name in self._always:
                    self._emit_doom(turn, gate, action, "allow")
                    gate.stage = "tool"
                    continue
                if action == "deny":
                    return self._refuse_doom(turn, gate, action, "deny")
                answer = self._question(turn, gate, "doom_loop", gate.doom)
            elif gate.stage == "tool":
                rule = self.rule(call.name)
                if rule == "allow" or call.name in self._always_tools:
                    gate.stage = "run"
                    continue
                if rule == "deny":
                    return self._refuse_tool(turn, gate, rule, "deny")
                answer = self._question(turn, gate, call.name, 0)
            else:
                return "run"
            if answer is None:
                return "wait"
            refusal = self.answer(turn, gate, answer)
            if refusal is not None:
                return refusal

    def waiting(self, turn: Turn, ask_id: int) -> Gate | None:
        """The call waiting for the answer to ``ask_id``, taken off the waiting list; None
        when the question is moot."""
        gate = next((g for g in turn.gates.values() if g.ask_id == ask_id), None)
        if gate is not None:
            gate.ask_id = None
            del turn.gates[gate.key]
        return gate

    def answer(self, turn: Turn, gate: Gate, answer: PermissionAnswer) -> Refusal | None:
        """Apply the user's answer to the gate's current question: None when the call passes
        this stage. Both questions take an answer the same way; ``always`` is remembered per
        question (the doom-loop one and the tool's own are separate permissions)."""
        doom = gate.stage == "doom_loop"
        if answer == "deny":
            refuse = self._refuse_doom if doom else self._refuse_tool
            return refuse(turn, gate, "ask", answer)
        if answer == "always":
            (self._always if doom else self._always_tools).add(gate.call.name)
        report = self._emit_doom if doom else self._emit_permission
        report(turn, gate, "ask", answer)
        gate.stage = "tool" if doom else "run"
        return None

    def _question(
        self, turn: Turn, gate: Gate, permission: str, count: int
    ) -> PermissionAnswer | None:
        self._ask_id += 1
        call = gate.call
        request = AskPermission(
            ask_id=self._ask_id,
            key=gate.key,
            permission=permission,
            tool_call_id=call.id,
            name=call.name,
            arguments=copy.deepcopy(call.arguments),
            count=count,
        )
        if self._ask is not None:
            return self._ask(request)
        gate.ask_id = self._ask_id
        turn.gates[gate.key] = gate
        self._outbox.put(request)
        return None

    def _emit_doom(
        self, turn: Turn, gate: Gate, action: DoomLoopAction, decision: PermissionAnswer
    ) -> None:
        about = call_fields(self._outbox.now(), turn.index, gate.key, gate.call)
        self._outbox.put(DoomLoop(**about, count=gate.doom, action=action, decision=decision))

    def _emit_permission(
        self, turn: Turn, gate: Gate, action: PermissionAction, decision: PermissionAnswer
    ) -> None:
        about = call_fields(self._outbox.now(), turn.index, gate.key, gate.call)
        self._outbox.put(Permission(**about, action=action, decision=decision))

    def _refuse_doom(
        self, turn: Turn, gate: Gate, action: DoomLoopAction, decision: PermissionAnswer
    ) -> Refusal:
        # seed 000: a refused doom-loop question throws out of the stream handler, the
        # message gets an error and the loop stops (research/seed-systems.md A.3).
        self._emit_doom(turn, gate, action, decision)
        turn.blocked = True
        text = DOOM_LOOP_DENIED.format(name=gate.call.name, count=gate.doom)
        return Refusal(text, "doom_loop_denied")

    def _refuse_tool(
        self, turn: Turn, gate: Gate, action: PermissionAction, decision: PermissionAnswer
    ) -> Refusal:
        self._emit_permission(turn, gate, action, decision)
        if action == "ask":
            # seed 000 tool-error: a PermissionNext.RejectedError sets ``blocked`` (the loop
            # returns "stop"); a rule's DeniedError does not (research/seed-systems.md A.1).
            turn.blocked = True
            return Refusal(PERMISSION_REJECTED, "permission_rejected")
        return Refusal(PERMISSION_DENIED, "permission_denied")
