"""Tool-call bookkeeping: from a committed (or, eager, a completed) call to its one result.

Every call goes lookup and schema, the executor's queue, the permission gate, the tool, and
ends with exactly one result in its turn (L1), whatever the path: ran, raised, refused,
truncated, cancelled or never executed. The state machine says when (a response ended, a
tool finished, an abort); this object keeps the per-turn records straight and emits the
tool events and commands.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from stream_harness.contract.events import ToolCall
from stream_harness.loop.commands import AskFn, CancelPermission, CancelTool, StartTool
from stream_harness.loop.config import LoopConfig
from stream_harness.loop.events import (
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    call_fields,
)
from stream_harness.loop.executor import Job, Started, ToolExecutor
from stream_harness.loop.gate import PermissionGate, Refusal, Verdict
from stream_harness.loop.messages import ToolResult, ToolResultKind, error_result
from stream_harness.loop.outbox import Outbox
from stream_harness.loop.tools import (
    CANCELLED,
    MALFORMED_ARGUMENTS,
    NOT_EXECUTED,
    TOOL_RAISED,
    TRUNCATED,
    UNKNOWN_TOOL,
    DoomLoopTracker,
    PermissionAnswer,
    ToolOutcome,
    ToolSpec,
)
from stream_harness.loop.turns import Attempt, Gate, Turn


class ToolCalls:
    """The run's tool side: the tools, the doom-loop streaks and the permission gate."""

    def __init__(
        self,
        config: LoopConfig,
        tools: Mapping[str, ToolSpec],
        ask: AskFn | None,
        outbox: Outbox,
    ) -> None:
        self.config = config
        self.tools = tools
        self.doom = DoomLoopTracker()
        self.gate = PermissionGate(config, ask, outbox)
        self._outbox = outbox

    # -- queueing ------------------------------------------------------------------------------

    def release(self, turn: Turn, attempt: Attempt) -> None:
        """Eager mode: queue the held calls that are next in call order."""
        while attempt.released in attempt.held:
            call = attempt.held.pop(attempt.released)
            self.enqueue(turn, attempt, attempt.released, call)
            attempt.released += 1

    def queue_rest(self, turn: Turn, attempt: Attempt, *, truncated: bool) -> None:
        """The response is committed: queue every call not queued yet, or, when the output
        limit cut the response (its calls may be incomplete), answer them as truncated."""
        for position in range(attempt.released, len(turn.calls)):
            call = turn.calls[position]
            if truncated:
                result = error_result(call, TRUNCATED.format(name=call.name), "truncated")
                self.record(turn, position, result)
            else:
                self.enqueue(turn, attempt, position, call)

    def enqueue(self, turn: Turn, attempt: Attempt, position: int, call: ToolCall) -> None:
        key = f"{turn.index}.{attempt.number}.{position}"
        turn.keys[key] = position
        turn.calls_by_position[position] = call
        job = self._prepare(turn, key, call, position, attempt.malformed.get(position))
        self.run(turn, turn.executor.add(job))

    def _prepare(
        self, turn: Turn, key: str, call: ToolCall, position: int, malformed: str | None
    ) -> Job:
        """Lookup, strict JSON and schema, in that order (research/seed-systems.md E.2); a
        call that fails one is answered at once: ``malformed`` is the argument text of a
        call whose ``toolcall_end`` did not parse strictly, whose arguments are only the
        repair's guess (A13). Every call counts toward doom-loop streaks (in call
        order); the doom-loop question itself is the permission gate's, asked when the call
        would start (seed 000 asks it at ``tool-call``, before the tool runs)."""
        streak = self.doom.observe(call.name, call.arguments)
        spec = self.tools.get(call.name)
        problem: ToolResult | None = None
        if spec is None:
            problem = error_result(call, UNKNOWN_TOOL.format(name=call.name), "unknown_tool")
        elif malformed is not None:
            text = MALFORMED_ARGUMENTS.format(name=call.name, raw=malformed)
            problem = error_result(call, text, "invalid_arguments")
        elif (invalid := spec.validate(call.arguments)) is not None:
            problem = error_result(call, invalid, "invalid_arguments")
        if problem is not None:
            turn.immediate[key] = problem
            return Job(key=key, position=position, safe=False, immediate=True)
        assert spec is not None
        if streak >= self.config.doom_loop_threshold:
            turn.doom[key] = streak
        return Job(key=key, position=position, safe=spec.is_concurrency_safe(call.arguments))

    # -- starting ------------------------------------------------------------------------------

    def run(self, turn: Turn, started: list[Started]) -> None:
        """Carry out what the executor started, in order; a call the gate refuses frees its
        slot at once, and what that lets start is carried out in the same pass."""
        work = list(started)
        while work:
            item = work.pop(0)
            key = item.job.key
            position = turn.keys[key]
            if item.job.immediate:
                self.record(turn, position, turn.immediate.pop(key))
                continue
            gate = Gate(
                key=key,
                position=position,
                call=turn.calls_by_position[position],
                context=item.context,
                batch=item.batch,
                safe=item.job.safe,
                doom=turn.doom.get(key, 0),
            )
            work.extend(self._carry_out(turn, gate, self.gate.advance(turn, gate)))

    def answer(self, turn: Turn, ask_id: int, answer: PermissionAnswer) -> bool:
        """The host's answer to a question of the gate; False (ignored) when it is moot."""
        gate = self.gate.waiting(turn, ask_id)
        if gate is None:
            return False
        refusal = self.gate.answer(turn, gate, answer)
        verdict = refusal if refusal is not None else self.gate.advance(turn, gate)
        self.run(turn, self._carry_out(turn, gate, verdict))
        return True

    def _carry_out(self, turn: Turn, gate: Gate, verdict: Verdict) -> list[Started]:
        """Start the tool, or refuse it (its executor slot is then free, and the calls that
        may start now are returned), or leave it waiting for the host's answer."""
        if isinstance(verdict, Refusal):
            self.record(turn, gate.position, error_result(gate.call, verdict.content, verdict.kind))
            return turn.executor.finish(gate.key)
        if verdict == "run":
            self._start(turn, gate)
        return []

    def _start(self, turn: Turn, gate: Gate) -> None:
        key, call = gate.key, gate.call
        turn.running[key] = gate.position
        turn.started_tools = True
        self._outbox.put(
            ToolExecutionStart(
                **call_fields(self._outbox.now(), turn.index, key, call),
                arguments=call.arguments,
                context=gate.context,
                batch=gate.batch,
                safe=gate.safe,
            )
        )
        # Copies: a tool that mutates what it was given must not change history or the
        # context the next batch sees.
        self._outbox.put(
            StartTool(key=key, call=call.model_copy(deep=True), context=copy.deepcopy(gate.context))
        )

    # -- running and ending --------------------------------------------------------------------

    def update(self, turn: Turn, key: str, data: Any) -> None:
        if key in turn.running:
            call = turn.calls_by_key(key)
            self._outbox.put(
                ToolExecutionUpdate(
                    time=self._outbox.now(),
                    turn=turn.index,
                    key=key,
                    tool_call_id=call.id,
                    data=data,
                )
            )

    def finished(self, turn: Turn, key: str, outcome: ToolOutcome) -> None:
        """A running tool ended: its result, and the calls its end lets start."""
        position = turn.running.pop(key)
        call = turn.calls_by_key(key)
        if outcome.failed:
            text = TOOL_RAISED.format(type=outcome.error_type, message=outcome.error_message)
            result = error_result(call, text, "error")
        else:
            result = ToolResult(tool_call_id=call.id, name=call.name, content=outcome.value)
        self._outbox.put(
            ToolExecutionEnd(
                **call_fields(self._outbox.now(), turn.index, key, call),
                outcome="error" if outcome.failed else "ok",
            )
        )
        self.record(turn, position, result)
        modifiers = () if outcome.failed else outcome.modifiers
        self.run(turn, turn.executor.finish(key, modifiers))

    def cancel_running(self, turn: Turn) -> None:
        """Cancel every started call: running tools, and calls waiting for a permission
        answer (they never ran, so no tool event; their question is withdrawn)."""
        for key in turn.executor.cancel():
            gate = turn.gates.pop(key, None)
            if gate is not None:
                assert gate.ask_id is not None
                self._outbox.put(CancelPermission(gate.ask_id))
                self.record(turn, gate.position, error_result(gate.call, CANCELLED, "cancelled"))
                continue
            position = turn.running.pop(key)
            call = turn.calls_by_position[position]
            self._outbox.put(CancelTool(key))
            self._outbox.put(
                ToolExecutionEnd(
                    **call_fields(self._outbox.now(), turn.index, key, call), outcome="cancelled"
                )
            )
            self.record(turn, position, error_result(call, CANCELLED, "cancelled"))

    def fill_results(self, turn: Turn, kind: ToolResultKind, *, error: str | None = None) -> None:
        """Give every call of the committed message that has no result one (L1)."""
        for position, call in enumerate(turn.calls):
            if position in turn.results:
                continue
            if kind == "cancelled":
                text = CANCELLED
            else:
                text = NOT_EXECUTED.format(name=call.name, error=error or "error")
            self.record(turn, position, error_result(call, text, kind))

    def forget(self, turn: Turn, attempt: Attempt, context: dict[str, Any]) -> None:
        """A discarded attempt leaves no trace (L7): whatever it queued (only calls the loop
        answered itself, since a started tool forbids a discard) is forgotten, doom-loop
        streaks included, and its questions are withdrawn."""
        self.doom = attempt.doom_snapshot
        for gate in turn.gates.values():
            assert gate.ask_id is not None
            self._outbox.put(CancelPermission(gate.ask_id))
        turn.gates.clear()
        turn.doom.clear()
        turn.executor = ToolExecutor(self.config.concurrency_limit, context)
        turn.keys.clear()
        turn.calls_by_position.clear()
        turn.immediate.clear()
        turn.results.clear()
        turn.blocked = False

    @staticmethod
    def record(turn: Turn, position: int, result: ToolResult) -> None:
        if position in turn.results:  # pragma: no cover - guarded by the callers
            raise AssertionError(f"second result for call {position}")
        turn.results[position] = result
