"""Hypothesis drives the agent-loop state machine through every interleaving it likes.

Rules are the things that can happen to a run: the model answers (text, tool calls, an
error of any kind, a client failure), events arrive a few at a time, a tool finishes (ok or
raising, with or without a context modifier) or reports progress, the retry timer fires, the
user aborts (twice), a cancelled tool finishes late. After every step the invariants of
specs/agent-loop.md are checked, several of them against oracles written here rather than
read back from the machine:

- L1/L2 exactly one result per call, in call order (history and event log);
- L3 concurrency bounds and batch order (from this test's own record of running tools);
- L4 modifier timing: the context a tool starts with equals the initial context plus the
  modifiers of every call that finished ok in an earlier batch (this test partitions the
  calls itself, Claude Code's rule) or an earlier response;
- L6 event grammar (stream_harness.loop.invariants);
- L7 retry hygiene: a resend within a turn carries the same history as the failed request,
  a retry never follows a tool start, an overflow is never retried;
- L11 abort: a second abort and any input after the end give nothing; after an abort no
  request, tool start, timer or permission question is ever issued, a late tool finish or
  answer adds nothing, and no question is left open;
- issue 16: a response may end (EOF) at any point, before or after its terminal event, and
  the run never waits forever; the permission gate's questions are answered in any order
  (allow, deny, always), and a call whose rule is ``ask`` never starts without an allow;
  concurrency safety is decided per call from its input (grep is safe only for path "a").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from stream_harness.contract.events import DoneEvent, ErrorEvent, Event
from stream_harness.loop.clock import VirtualClock
from stream_harness.loop.commands import (
    AskPermission,
    CancelPermission,
    CancelTimer,
    CancelTool,
    Output,
    SendRequest,
    StartTimer,
    StartTool,
)
from stream_harness.loop.events import AGENT_EVENT_TYPES, AgentEvent, Fallback, Retry, TurnStart
from stream_harness.loop.invariants import check_events, check_history
from stream_harness.loop.messages import Message, UserMessage
from stream_harness.loop.retry import RetryPolicy
from stream_harness.loop.scenario import ScriptCall, ScriptError, ScriptSpec, script_events
from stream_harness.loop.state import AgentLoop, LoopConfig, LoopState
from stream_harness.loop.tools import AppendTo, SafeWhen, ToolOutcome, ToolSpec

PATH_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
TOOLS = [
    ToolSpec("read", PATH_SCHEMA, concurrency_safe=True),
    # Safe or not by input (seed 003's isConcurrencySafe(parsed)): only for path "a".
    ToolSpec(
        "grep", PATH_SCHEMA, concurrency_safe=SafeWhen({"properties": {"path": {"const": "a"}}})
    ),
    ToolSpec("write", PATH_SCHEMA, concurrency_safe=False),
    ToolSpec("bash", PATH_SCHEMA, concurrency_safe=False),
]
SAFE = {"read": True, "write": False, "bash": False}


def is_safe(name: str, arguments: Mapping[str, Any]) -> bool:
    """This test's own oracle of a call's safety (the checker gets it too)."""
    if name == "grep":
        return arguments.get("path") == "a"
    return SAFE.get(name, False)


INITIAL_CONTEXT: dict[str, Any] = {"log": []}

# Biased toward valid safe calls, so that parallel batches (where order matters) are common.
calls = st.lists(
    st.tuples(
        st.sampled_from(["read", "grep", "read", "grep", "write", "bash", "nope"]),
        st.sampled_from(["a", "b", "a", 1]),
    ),
    max_size=5,
)
errors = st.builds(
    ScriptError,
    message=st.sampled_from(
        ["Overloaded", "rate limited", "upstream reset", "bad request", "too long"]
    ),
    kind=st.sampled_from(["overloaded", "rate_limit", "transient", "fatal", "overflow"]),
    retry_after=st.sampled_from([None, 1.5]),
)
completed = st.fixed_dictionaries(
    {
        "kind": st.just("done"),
        "text": st.sampled_from([None, "Checking.", "Done, all good."]),
        "calls": calls,
        "stop": st.sampled_from([None, None, None, "length"]),
        "usage": st.sampled_from([0, 100, 100, 950]),
    }
)
failed = st.fixed_dictionaries(
    {
        "kind": st.just("error"),
        "text": st.sampled_from([None, "Partial"]),
        "calls": calls,
        "error": errors,
    }
)
raised = st.fixed_dictionaries(
    {
        "kind": st.just("raise"),
        "message": st.sampled_from(["read ECONNRESET", "boom", "getaddrinfo ENOTFOUND x"]),
        "network": st.booleans(),
    }
)
# Mostly completed responses, so that runs get to their tools; one_of picks its branches
# about evenly, hence the repetition.
responses = st.one_of(completed, completed, completed, failed, raised)


def partition(safety: list[bool | None]) -> list[int]:
    """Claude Code's partitionToolCalls, as batch numbers: a run of consecutive safe calls is
    one batch, every other call (unsafe, or None: answered without running) its own."""
    out: list[int] = []
    batch = -1
    previous_safe = False
    for safe in safety:
        if safe and previous_safe:
            out.append(batch)
        else:
            batch += 1
            out.append(batch)
        previous_safe = bool(safe)
    return out


class AgentLoopMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []

    # -- set-up -------------------------------------------------------------------------

    @initialize(
        limit=st.integers(1, 3),
        eager=st.booleans(),
        max_retries=st.integers(0, 2),
        fallback=st.booleans(),
        window=st.sampled_from([None, 1000]),
        abort_after=st.one_of(st.none(), st.integers(1, 30)),
        gated=st.sampled_from([(), ("bash",), ("bash", "read")]),
        doom=st.sampled_from(["allow", "ask"]),
    )
    def setup(
        self,
        limit: int,
        eager: bool,
        max_retries: int,
        fallback: bool,
        window: int | None,
        abort_after: int | None,
        gated: tuple[str, ...],
        doom: str,
    ) -> None:
        # Abort timing is drawn here, as a number of steps, so that most runs get far before
        # the user aborts: an always-enabled abort rule ends nearly every run at once.
        self.abort_after = abort_after
        self.config = LoopConfig(
            model="primary",
            fallback_model="backup" if fallback else None,
            fallback_after=2,
            retry=RetryPolicy(max_retries=max_retries, base=1.0),
            concurrency_limit=limit,
            doom_loop="ask" if doom == "ask" else "allow",
            permissions={"*": "allow", **dict.fromkeys(gated, "ask")},
            continue_on_deny=True,
            eager_tools=eager,
            context_window=window,
            max_turns=6,
        )
        self._new_loop()

    def _new_loop(self) -> None:
        self.clock = VirtualClock()
        self.loop = AgentLoop(
            self.config,
            TOOLS,
            [UserMessage(content="go")],
            clock=self.clock,
            context=INITIAL_CONTEXT,
        )
        self.events: list[AgentEvent] = []
        self.request: SendRequest | None = None
        self.script: list[Event] | None = None
        self.running: dict[str, StartTool] = {}
        self.cancelled: set[str] = set()
        self.timer: StartTimer | None = None
        self.timer_due = 0.0
        self.aborted = False
        self.call_ids = 0
        self.responses_seen = 0
        # call id -> (response number, position, batch, safe)
        self.call_info: dict[str, tuple[int, int, int]] = {}
        self.ok_modifiers: list[
            tuple[int, int, int, str]
        ] = []  # (response, position, batch, call id)
        self.last_started: dict[int, tuple[int, int]] = {}
        self.turn_requests: list[tuple[Message, ...]] = []
        self.steps = 0
        self.overloads = 0
        self.tools_started = 0
        self.tools_at_request = 0
        self.asks: dict[int, AskPermission] = {}
        self.allowed: set[tuple[str, str]] = set()  # (key, permission) the user allowed
        self.always: set[str] = set()
        self._apply(self.loop.start())

    @property
    def done(self) -> bool:
        return self.loop.state is LoopState.DONE

    # -- applying outputs, with the checks that need to see each one ---------------------------

    def _apply(self, outputs: list[Output]) -> None:
        for output in outputs:
            if isinstance(output, AGENT_EVENT_TYPES):
                self.events.append(output)
                if isinstance(output, TurnStart):
                    self.turn_requests = []
                    # Between turns every batch so far has closed: the context holds every
                    # modifier of a call that finished ok, in call order (L4).
                    expected = [call_id for *_, call_id in sorted(self.ok_modifiers)]
                    if self.loop.context != {"log": expected}:
                        self.problems.append(
                            f"L4: turn {output.turn} starts with {self.loop.context}, expected log {expected}"
                        )
                if isinstance(output, Retry) and output.error_kind == "overflow":
                    self.problems.append("L7: overflow retried")
                continue
            if self.aborted and isinstance(
                output, SendRequest | StartTool | StartTimer | AskPermission
            ):
                self.problems.append(f"L11: {type(output).__name__} after abort")
            if isinstance(output, SendRequest):
                if self.turn_requests and output.messages != self.turn_requests[-1]:
                    self.problems.append("L7: a resend within the turn changed the history")
                self.turn_requests.append(output.messages)
                self.tools_at_request = self.tools_started
                self.request, self.script = output, None
            elif isinstance(output, StartTool):
                self._started(output)
            elif isinstance(output, CancelTool):
                if self.running.pop(output.key, None) is None:
                    self.problems.append(f"CancelTool for {output.key}, which is not running")
                self.cancelled.add(output.key)
            elif isinstance(output, StartTimer):
                self.timer, self.timer_due = output, self.clock.now() + output.delay
            elif isinstance(output, AskPermission):
                self.asks[output.ask_id] = output
            elif isinstance(output, CancelPermission):
                if self.asks.pop(output.ask_id, None) is None:
                    self.problems.append(f"CancelPermission for {output.ask_id}, never asked")
            elif isinstance(output, CancelTimer):
                self.timer = None
        self._check_concurrency()

    def _started(self, command: StartTool) -> None:
        name = command.call.name
        if (
            self.config.permissions.get(name) == "ask"
            and name not in self.always
            and (command.key, name) not in self.allowed
        ):
            self.problems.append(f"gate: {command.key} ({name}) started without an allow")
        if any(a.key == command.key for a in self.asks.values()):
            self.problems.append(f"gate: {command.key} started with a question open")
        self.tools_started += 1
        self.running[command.key] = command
        response, position, batch = self.call_info[command.call.id]
        # Batches start in order. Within a parallel batch a call waiting for a permission
        # answer starts when answered, so start order there follows the answers; without a
        # gate it is call order.
        last_batch, last_position = self.last_started.get(response, (-1, -1))
        gated = bool(self.config.permissions.keys() - {"*"}) or self.config.doom_loop == "ask"
        if batch < last_batch or (not gated and batch == last_batch and position <= last_position):
            self.problems.append(f"L3: call {position} of response {response} started out of order")
        self.last_started[response] = (max(batch, last_batch), position)
        expected = [
            call_id
            for r, p, b, call_id in sorted(self.ok_modifiers)
            if r < response or (r == response and b < batch)
        ]
        if command.context != {"log": expected}:
            self.problems.append(
                f"L4: {command.call.id} (batch {batch}) saw {command.context}, expected log {expected}"
            )

    def _check_concurrency(self) -> None:
        if len(self.running) > self.config.concurrency_limit:
            self.problems.append(
                f"L3: {len(self.running)} tools run, limit {self.config.concurrency_limit}"
            )
        if len(self.running) > 1 and any(
            not is_safe(c.call.name, c.call.arguments) for c in self.running.values()
        ):
            self.problems.append(
                f"L3: an unsafe tool overlaps: {sorted(c.call.name for c in self.running.values())}"
            )

    def _tick(self, seconds: float = 0.1) -> None:
        self.steps += 1
        self.clock.advance_to(self.clock.now() + seconds)

    # -- rules --------------------------------------------------------------------------------

    @precondition(lambda self: self.request is not None and self.script is None and not self.done)
    @rule(response=responses)
    def model_responds(self, response: dict[str, Any]) -> None:
        assert self.request is not None
        self._tick(0.0)
        self.responses_seen += 1
        if response["kind"] == "raise":
            self.script = []
            self._apply(
                self.loop.request_failed(
                    self.request.request_id, response["message"], network=response["network"]
                )
            )
            self.overloads = 0  # a client failure is never an overload
            return
        script_calls = []
        safety: list[bool | None] = []
        for name, path in response["calls"]:
            self.call_ids += 1
            script_calls.append(
                ScriptCall(id=f"c{self.call_ids}", name=name, arguments={"path": path})
            )
            valid = name in {"read", "grep", "write", "bash"} and isinstance(path, str)
            safety.append(is_safe(name, {"path": path}) if valid else None)
        batches = partition(safety)
        for position, call in enumerate(script_calls):
            assert call.id is not None
            self.call_info[call.id] = (self.responses_seen, position, batches[position])
        spec = ScriptSpec(
            text=response["text"],
            tool_calls=script_calls,
            stop=response.get("stop"),
            error=response.get("error"),
            usage={"input": response.get("usage", 0)},
            delta_size=6,
        )
        self.script = script_events(spec)

    @precondition(lambda self: bool(self.script) and not self.done)
    @rule(n=st.integers(1, 4))
    def events_arrive(self, n: int) -> None:
        assert self.script is not None and self.request is not None
        self._tick()
        batch, self.script = self.script[:n], self.script[n:]
        request = self.request
        for event in batch:
            started = self.tools_started > self.tools_at_request  # in this attempt (eager mode)
            out = self.loop.model_event(request.request_id, event)
            self._apply(out)
            if isinstance(event, DoneEvent | ErrorEvent):
                self._check_fallback(event, out, request.model, started)

    def _check_fallback(self, event: Event, out: list[Output], model: str, started: bool) -> None:
        """Oracle for the fallback rule: the N-th overload in a row (any other outcome resets
        the count) switches to the fallback model, unless a tool already started."""
        overloaded = (
            isinstance(event, ErrorEvent)
            and event.error is not None
            and event.error.kind == "overloaded"
        )
        self.overloads = self.overloads + 1 if overloaded else 0
        expected = (
            overloaded
            and not started
            and self.config.fallback_model is not None
            and model != self.config.fallback_model
            and self.overloads >= self.config.fallback_after
        )
        fell_back = any(isinstance(o, Fallback) for o in out)
        if fell_back != expected:
            self.problems.append(
                f"fallback: expected {expected}, got {fell_back} after {self.overloads} overloads"
            )
        if fell_back:
            self.overloads = 0

    @precondition(
        lambda self: self.request is not None and self.script is not None and not self.done
    )
    @rule()
    def response_ends(self) -> None:
        """The body ends here, at any point of the stream: before the terminal event the
        attempt fails (and may be retried), after it nothing happens."""
        assert self.request is not None
        self._tick()
        self.script = []
        out = self.loop.response_ended(self.request.request_id)
        if out:
            self.overloads = 0  # an early end is a network failure, never an overload
        self._apply(out)

    @precondition(lambda self: bool(self.asks) and not self.done)
    @rule(i=st.integers(0, 5), answer=st.sampled_from(["allow", "deny", "always"]))
    def user_answers(self, i: int, answer: str) -> None:
        self._tick()
        ask_id = sorted(self.asks)[i % len(self.asks)]
        ask = self.asks.pop(ask_id)
        if answer != "deny":
            self.allowed.add((ask.key, ask.permission))
            if answer == "always" and ask.permission != "doom_loop":
                self.always.add(ask.permission)
        self._apply(self.loop.permission_answer(ask_id, answer))  # type: ignore[arg-type]
        if self.loop.permission_answer(ask_id, "allow"):
            self.problems.append(f"a second answer to {ask_id} did something")

    @precondition(lambda self: bool(self.running))
    @rule(i=st.integers(0, 5), ok=st.booleans(), modify=st.booleans(), progress=st.booleans())
    def tool_finishes(self, i: int, ok: bool, modify: bool, progress: bool) -> None:
        self._tick()
        key = sorted(self.running)[i % len(self.running)]
        if progress:
            out = self.loop.tool_update(key, {"progress": i})
            assert [e.type for e in out] == ["tool_execution_update"]
            self._apply(out)
        command = self.running.pop(key)
        if ok:
            modifiers = (AppendTo({"log": command.call.id}),) if modify else ()
            outcome = ToolOutcome(value="fine", modifiers=modifiers)
            if modify:
                response, position, batch = self.call_info[command.call.id]
                self.ok_modifiers.append((response, position, batch, command.call.id))
        else:
            outcome = ToolOutcome(
                error_type="OSError", error_message="boom", modifiers=(AppendTo({"log": "never"}),)
            )
        self._apply(self.loop.tool_finished(key, outcome))

    @precondition(lambda self: self.timer is not None)
    @rule()
    def retry_timer_fires(self) -> None:
        assert self.timer is not None
        timer, self.timer = self.timer, None
        self.clock.advance_to(max(self.clock.now(), self.timer_due))
        self._apply(self.loop.wake(timer.timer_id))

    @rule(data=st.data())
    def whatever_comes_next(self, data: st.DataObject) -> None:
        """The one rule that is always enabled: it does the next thing the run waits for.

        Hypothesis picks a rule, then gives up on a step (an "invalid" example) after a few
        picks whose precondition is false; with one rule valid in every state, no step is
        lost, and the specific rules above still offer the other interleavings (a tool that
        finishes while events are pending, in eager mode)."""
        if self.done:
            self.next_run()
        elif self.script:
            self.events_arrive(data.draw(st.integers(1, 4), label="n"))
        elif self.request is not None and self.script is None:
            self.model_responds(data.draw(responses, label="response"))
        elif self.asks:
            self.user_answers(
                data.draw(st.integers(0, 5), label="i"),
                data.draw(st.sampled_from(["allow", "deny", "always"]), label="answer"),
            )
        elif self.running:
            self.tool_finishes(
                data.draw(st.integers(0, 5), label="i"),
                data.draw(st.booleans(), label="ok"),
                data.draw(st.booleans(), label="modify"),
                progress=False,
            )
        elif self.timer is not None:
            self.retry_timer_fires()

    @precondition(
        lambda self: (
            not self.done and self.abort_after is not None and self.steps >= self.abort_after
        )
    )
    @rule()
    def user_aborts(self) -> None:
        self.aborted = True
        self._apply(self.loop.abort())
        second = self.loop.abort()
        if second:
            self.problems.append(f"L11: a second abort produced {second}")
        if not self.done:
            self.problems.append("L11: the run did not end at the abort")
        for key in sorted(self.cancelled):
            late = self.loop.tool_finished(key, ToolOutcome(value="late"))
            if late:
                self.problems.append(f"L11: a late finish of cancelled {key} produced {late}")
        if self.asks:
            self.problems.append(f"L11: questions left open after the abort: {sorted(self.asks)}")
        if self.request is not None and self.loop.response_ended(self.request.request_id):
            self.problems.append("L11: a response end after the abort did something")

    @precondition(lambda self: self.done)
    @rule()
    def next_run(self) -> None:
        # Inputs after the end give nothing (L11)...
        assert self.loop.abort() == []
        assert self.loop.wake(1) == []
        assert self.loop.tool_finished("1.1.0", ToolOutcome()) == []
        if self.request is not None:
            assert self.loop.request_failed(self.request.request_id, "late") == []
        # ...and a terminal state needs a rule, or hypothesis stops with "No progress can be
        # made" (research/ecosystem.md 2(b)).
        self._check_all(complete=True)
        self._new_loop()

    # -- invariants -------------------------------------------------------------------------

    def _check_all(self, complete: bool) -> None:
        violations = check_events(
            self.events,
            complete=complete,
            concurrency_limit=self.config.concurrency_limit,
            safe_tools=is_safe,
        )
        violations += check_history(self.loop.history, complete=complete)
        assert not violations, [str(v) for v in violations]

    @invariant()
    def no_problem_seen(self) -> None:
        assert not self.problems, self.problems

    @invariant()
    def log_and_history_keep_the_invariants(self) -> None:
        self._check_all(complete=self.done)

    @invariant()
    def the_run_never_waits_forever(self) -> None:
        """Every way a response can end is an input: a run that is not over always waits for
        something the host can deliver (an event, a response, a tool, a timer, an answer)."""
        if self.done:
            return
        waiting_for_response = self.request is not None and (
            self.script is None or bool(self.script)
        )
        assert waiting_for_response or self.running or self.timer or self.asks, (
            f"stuck in {self.loop.state}"
        )

    @invariant()
    def the_machine_agrees_on_what_runs(self) -> None:
        turn = self.loop._turn
        running = set(turn.running) if turn is not None else set()
        assert running == set(self.running), (running, set(self.running))


TestAgentLoopMachine = AgentLoopMachine.TestCase
TestAgentLoopMachine.settings = settings(
    max_examples=200,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
