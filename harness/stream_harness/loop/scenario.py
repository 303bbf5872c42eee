"""Scenarios: a YAML file that scripts one agent run and states what must come out of it.

The format is documented in specs/scenarios.md. Loading validates everything up front (the
schema, the cassettes it names, the protocols, the tools' JSON Schemas, inline events), so
that a bad scenario is one line naming the file and the field, and a loaded scenario can
always run. Running it is a :class:`~stream_harness.loop.scheduler.Simulation` on virtual time;
checking it compares the run with ``expect`` and runs the invariant checker on the log.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stream_harness.contract.events import (
    EVENT_ADAPTER,
    AssistantMessage,
    ErrorInfo,
    ErrorKind,
    Event,
    StopReason,
    TextBlock,
)
from stream_harness.loop.clock import DEFAULT_EPOCH, VirtualClock
from stream_harness.loop.commands import AskPermission, SendRequest
from stream_harness.loop.events import AgentEnd, AgentEvent, CompactionReason, EndReason, TurnSignal
from stream_harness.loop.invariants import Violation, check_events, check_history
from stream_harness.loop.messages import Message, ToolResult, ToolResultKind, UserMessage, summarize
from stream_harness.loop.retry import RetryPolicy
from stream_harness.loop.scheduler import (
    ModelResponse,
    Scheduler,
    Simulation,
    SimulationResult,
    ToolPlan,
)
from stream_harness.loop.spec_errors import validation_problem
from stream_harness.loop.state import AgentLoop, LoopConfig
from stream_harness.loop.tools import (
    AppendTo,
    ContextModifier,
    PermissionAnswer,
    SafeWhen,
    SetKeys,
    ToolOutcome,
    ToolSpec,
    ToolSpecError,
)
from stream_harness.providers.accumulator import Accumulator
from stream_harness.providers.reference import detect_protocol
from stream_harness.providers.registry import UnknownProtocolError, is_registered, protocol_ids
from stream_harness.recordings.cassette import CassetteError, load_cassette
from stream_harness.recordings.chunking import SplitSpecError, apply_split

__all__ = [
    "Scenario",
    "ScenarioError",
    "ScenarioRun",
    "check_scenario",
    "find_scenarios",
    "load_scenario",
    "run_scenario",
]


class ScenarioError(Exception):
    """A scenario that cannot be loaded; ``str()`` is one line: file, field, problem."""

    def __init__(self, path: str | os.PathLike[str], where: str, problem: str) -> None:
        super().__init__(path, where, problem)
        self.path = os.fspath(path)
        self.where = where
        self.problem = " ".join(problem.split())

    def __str__(self) -> str:
        return (
            f"{self.path}: {self.where}: {self.problem}"
            if self.where
            else f"{self.path}: {self.problem}"
        )


# ---------------------------------------------------------------------------------------
# The YAML schema
# ---------------------------------------------------------------------------------------


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class RetrySpec(_Spec):
    max_retries: int = Field(5, ge=0)
    base: float = Field(2.0, ge=0)
    factor: float = Field(2.0, ge=1)
    cap: float = Field(60.0, ge=0)
    kinds: list[ErrorKind] = ["rate_limit", "overloaded", "transient"]
    message_patterns: list[str] = ["timeout"]
    network: bool = True

    def compile(self) -> RetryPolicy:
        return RetryPolicy(
            self.max_retries,
            self.base,
            self.factor,
            self.cap,
            kinds=tuple(self.kinds),
            message_patterns=tuple(self.message_patterns),
            network=self.network,
        )


class AnswerSpec(_Spec):
    answer: Literal["allow", "deny", "always"]
    after: float = Field(0.0, ge=0)


Answer = Literal["allow", "deny", "always"] | AnswerSpec


def _answer(entry: Answer) -> tuple[PermissionAnswer, float]:
    return (entry.answer, entry.after) if isinstance(entry, AnswerSpec) else (entry, 0.0)


class DoomLoopSpec(_Spec):
    action: Literal["ask", "deny", "allow"] = "ask"
    threshold: int = Field(3, ge=1)
    answers: list[Answer] = []
    continue_on_deny: bool = False


class PermissionsSpec(_Spec):
    rules: dict[str, Literal["ask", "deny", "allow"]] = {"*": "allow"}
    answers: list[Answer] = []


class CompactionSpec(_Spec):
    threshold: float = Field(0.9, gt=0, le=1)
    tokens: Literal["prompt", "input", "total"] = "prompt"
    pre_request: bool = True
    then: Literal["stop", "continue"] = "stop"


class ConfigSpec(_Spec):
    model: str = "model"
    fallback_model: str | None = None
    fallback_after: int = Field(3, ge=1)
    retry: RetrySpec = RetrySpec()
    concurrency_limit: int = Field(10, ge=1)
    doom_loop: DoomLoopSpec = DoomLoopSpec()
    permissions: PermissionsSpec = PermissionsSpec()
    context_window: int | None = Field(None, ge=1)
    compaction: CompactionSpec = CompactionSpec()
    eager_tools: bool = False
    max_turns: int = Field(100, ge=1)
    epoch: datetime = DEFAULT_EPOCH


class UpdateSpec(_Spec):
    after: float = Field(ge=0)
    data: Any = None


class ModifierSpec(_Spec):
    set: dict[str, Any] | None = None
    append: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one(self) -> ModifierSpec:
        if (self.set is None) == (self.append is None):
            raise ValueError("give exactly one of set, append")
        return self

    def compile(self) -> ContextModifier:
        return SetKeys(self.set) if self.set is not None else AppendTo(self.append or {})


class RunSpec(_Spec):
    duration: float = Field(0.0, ge=0)
    returns: Any = "ok"
    raises: str | None = None
    echo: bool = False
    updates: list[UpdateSpec] = []
    modifies: list[ModifierSpec] = []


class ToolDef(RunSpec):
    json_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"}, alias="schema")
    concurrency_safe: bool | dict[str, Any] = False
    """true / false, or a JSON Schema: a call is safe when its input matches it (seed 003's
    per-input ``isConcurrencySafe(parsed)``)."""
    description: str = ""
    runs: list[RunSpec] = []


class ScriptCall(_Spec):
    id: str | None = None
    name: str
    arguments: dict[str, Any] | None = None
    raw_arguments: str | None = None

    @model_validator(mode="after")
    def _one(self) -> ScriptCall:
        if self.arguments is not None and self.raw_arguments is not None:
            raise ValueError("give at most one of arguments, raw_arguments")
        return self


class ScriptError(_Spec):
    message: str
    kind: ErrorKind = "transient"
    retryable: bool | None = None
    retry_after: float | None = Field(None, gt=0)
    status: int | None = None


class ScriptSpec(_Spec):
    thinking: str | None = None
    text: str | None = None
    tool_calls: list[ScriptCall] = []
    stop: Literal["stop", "length", "tool_use"] | None = None
    error: ScriptError | None = None
    usage: dict[Literal["input", "output", "cache_read", "cache_write", "total"], int] = {}
    model: str | None = None
    delta_size: int = Field(16, ge=1)


class ResponseSpec(_Spec):
    cassette: str | None = None
    interaction: int | None = Field(None, ge=0)
    body: str | None = None
    events: list[dict[str, Any]] | None = None
    script: ScriptSpec | None = None
    raise_: str | None = Field(None, alias="raise")
    protocol: str | None = None
    status: int | None = Field(None, ge=100, le=599)
    headers: dict[str, str] = {}
    split: str = "whole"
    latency: float = Field(0.0, ge=0)
    interval: float = Field(0.0, ge=0)
    cut_after: int | None = Field(None, ge=0)
    fail: str | None = None
    eof_after: int | None = Field(None, ge=0)
    repeat: int = Field(1, ge=1)

    @model_validator(mode="after")
    def _one_source(self) -> ResponseSpec:
        given = [
            name
            for name, value in (
                ("cassette", self.cassette),
                ("body", self.body),
                ("events", self.events),
                ("script", self.script),
                ("raise", self.raise_),
            )
            if value is not None
        ]
        if len(given) == 0 and self.status is not None:
            return self  # a bare HTTP error: status (+ headers), empty body
        if len(given) != 1:
            raise ValueError(
                "give exactly one of cassette, body, events, script, raise (or a bare status); got "
                + (", ".join(given) or "none")
            )
        return self


class AbortSpec(_Spec):
    after_event: int | None = Field(None, ge=1)
    at: float | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _one(self) -> AbortSpec:
        if (self.after_event is None) == (self.at is None):
            raise ValueError("give exactly one of after_event, at")
        return self


class FaultsSpec(_Spec):
    abort: AbortSpec | None = None


class ToolResultExpect(_Spec):
    tool_call_id: str | None = None
    name: str | None = None
    kind: ToolResultKind | None = None
    is_error: bool | None = None
    content: Any = None
    content_contains: str | None = None


class ExpectSpec(_Spec):
    end_reason: EndReason | None = None
    error_message_contains: str | None = None
    turns: int | None = None
    signals: list[TurnSignal] | None = None
    retries: int | None = None
    retry_delays: list[float] | None = None
    fallbacks: int | None = None
    requests: list[str] | None = None
    request_sizes: list[int] | None = None
    end_time: float | None = None
    events: list[str] | None = None
    events_include: list[str] | None = None
    events_exclude: list[str] | None = None
    history: list[str] | None = None
    last_text: str | None = None
    tool_results: list[ToolResultExpect] | None = None
    tool_starts: list[str] | None = None
    tool_ends: list[str] | None = None
    tool_batches: list[list[str]] | None = None
    tool_contexts: dict[str, dict[str, Any]] | None = None
    tool_start_times: dict[str, float] | None = None
    max_concurrency: int | None = None
    doom_loops: list[str] | None = None
    compactions: list[CompactionReason] | None = None
    context: dict[str, Any] | None = None


class ScenarioSpec(_Spec):
    name: str | None = None
    description: str = ""
    protocol: str | None = None
    config: ConfigSpec = ConfigSpec()
    prompt: str = "Hello"
    context: dict[str, Any] = {}
    tools: dict[str, ToolDef] = {}
    responses: list[ResponseSpec]
    faults: FaultsSpec = FaultsSpec()
    expect: ExpectSpec = ExpectSpec()


# ---------------------------------------------------------------------------------------
# Compiled scenario
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScenarioTool:
    """A tool's behaviour: the tool-level run spec, overridden per run by ``runs[n]``."""

    spec: ToolDef

    def plan(
        self, call_name: str, arguments: Mapping[str, Any], context: Mapping[str, Any], nth: int
    ) -> ToolPlan:
        run: RunSpec = self.spec.runs[nth] if nth < len(self.spec.runs) else self.spec
        modifiers = tuple(m.compile() for m in run.modifies)
        value = dict(arguments) if run.echo else run.returns
        raises = run.raises

        def execute() -> ToolOutcome:
            if raises is not None:
                raise ToolRaised(raises)
            return ToolOutcome(value=value, modifiers=modifiers)

        return ToolPlan(
            duration=run.duration, updates=[(u.after, u.data) for u in run.updates], execute=execute
        )


class ToolRaised(RuntimeError):
    """What a scenario tool raises with ``raises: message``."""


@dataclass
class Scenario:
    path: Path
    name: str
    spec: ScenarioSpec
    config: LoopConfig
    tools: list[ToolSpec]
    behaviours: dict[str, ScenarioTool]
    responses: list[ModelResponse]


class ScriptExhausted(RuntimeError):
    pass


class ScriptedClient:
    """Answers request n with response n; one past the end raises, as pi's faux provider
    reports "No more faux responses queued"."""

    def __init__(self, responses: Sequence[ModelResponse]) -> None:
        self._responses = list(responses)
        self.used = 0

    def respond(self, request: SendRequest) -> ModelResponse:
        if self.used >= len(self._responses):
            raise ScriptExhausted(f"no more scripted responses ({len(self._responses)} used)")
        self.used += 1
        return self._responses[self.used - 1]


def find_scenarios(directory: str | os.PathLike[str]) -> list[Path]:
    root = Path(directory)
    return sorted(p for p in root.rglob("*") if p.suffix in {".yaml", ".yml"} and p.is_file())


def read_scenario_yaml(file: Path) -> Any:
    """The parsed YAML of a scenario file (loop or agent scenario alike); an unreadable,
    non-UTF-8 or malformed file is a one-line :class:`ScenarioError`."""
    try:
        return yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScenarioError(file, "", exc.strerror or str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(file, "", f"not UTF-8 text (byte {exc.start})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "yaml"
        raise ScenarioError(file, where, getattr(exc, "problem", None) or str(exc)) from None
    except (ValueError, RecursionError) as exc:  # e.g. a NUL byte, absurd nesting
        raise ScenarioError(file, "yaml", str(exc) or type(exc).__name__) from None


def load_scenario(path: str | os.PathLike[str]) -> Scenario:
    """Read and validate a scenario file; every problem is a one-line :class:`ScenarioError`."""
    file = Path(path)
    raw = read_scenario_yaml(file)
    if not isinstance(raw, dict):
        raise ScenarioError(file, "", "a scenario is a YAML mapping")
    try:
        spec = ScenarioSpec.model_validate(raw)
    except ValidationError as exc:
        raise ScenarioError(file, *validation_problem(exc, ScenarioSpec)) from None
    tools: list[ToolSpec] = []
    for name, tool in spec.tools.items():
        try:
            tools.append(
                ToolSpec(name, tool.json_schema, _safety(tool.concurrency_safe), tool.description)
            )
        except ToolSpecError as exc:
            raise ScenarioError(file, f"tools.{name}.schema", str(exc)) from None
        safe = tool.concurrency_safe
        if isinstance(safe, dict):
            try:
                ToolSpec(name, safe)
            except ToolSpecError as exc:
                raise ScenarioError(file, f"tools.{name}.concurrency_safe", str(exc)) from None
    responses: list[ModelResponse] = []
    for i, response in enumerate(spec.responses):
        compiled = _compile_response(file, f"responses.{i}", response, spec.protocol)
        responses.extend([compiled] * response.repeat)
    c = spec.config
    config = LoopConfig(
        model=c.model,
        fallback_model=c.fallback_model,
        fallback_after=c.fallback_after,
        retry=c.retry.compile(),
        concurrency_limit=c.concurrency_limit,
        doom_loop=c.doom_loop.action,
        doom_loop_threshold=c.doom_loop.threshold,
        continue_on_deny=c.doom_loop.continue_on_deny,
        permissions=dict(c.permissions.rules),
        context_window=c.context_window,
        compaction_threshold=c.compaction.threshold,
        compaction_tokens=c.compaction.tokens,
        pre_request_compaction=c.compaction.pre_request,
        eager_tools=c.eager_tools,
        max_turns=c.max_turns,
    )
    return Scenario(
        path=file,
        name=spec.name or file.stem,
        spec=spec,
        config=config,
        tools=tools,
        behaviours={name: ScenarioTool(tool) for name, tool in spec.tools.items()},
        responses=responses,
    )


def _safety(safe: bool | dict[str, Any]) -> bool | SafeWhen:
    return SafeWhen(safe) if isinstance(safe, dict) else safe


def _compile_response(
    file: Path, where: str, r: ResponseSpec, default_protocol: str | None
) -> ModelResponse:
    protocol = r.protocol or default_protocol
    timing: dict[str, Any] = {
        "latency": r.latency,
        "interval": r.interval,
        "cut_after": r.cut_after,
        "failure": r.fail,
        "eof_after": r.eof_after,
    }
    if r.cut_after is not None and r.eof_after is not None:
        raise ScenarioError(file, where, "give at most one of cut_after, eof_after")
    if r.raise_ is not None:
        return ModelResponse(failure=r.raise_, latency=r.latency)
    if r.events is not None:
        events: list[Event] = []
        for n, raw in enumerate(r.events):
            try:
                events.append(EVENT_ADAPTER.validate_python(raw))
            except ValidationError as exc:
                loc, problem = validation_problem(exc, None)
                raise ScenarioError(file, f"{where}.events.{n}", f"{loc}: {problem}") from None
        return ModelResponse(events=events, **timing)
    if r.script is not None:
        return ModelResponse(events=script_events(r.script), **timing)
    status = r.status or 200
    headers = dict(r.headers)
    if r.cassette is not None:
        body, status, headers, protocol = _from_cassette(file, where, r, protocol)
    else:
        body = (r.body or "").encode("utf-8")
    if protocol is None:
        raise ScenarioError(
            file,
            f"{where}.protocol",
            "a body or HTTP status needs a protocol (here or at the top level)",
        )
    if not is_registered(protocol):
        raise ScenarioError(
            file,
            f"{where}.protocol",
            f"unknown protocol {protocol!r} (known: {', '.join(protocol_ids())})",
        )
    try:
        chunks = _split_events(body) if r.split == "events" else apply_split(r.split, body)
    except SplitSpecError as exc:
        raise ScenarioError(file, f"{where}.split", str(exc)) from None
    return ModelResponse(status=status, headers=headers, protocol=protocol, chunks=chunks, **timing)


def _from_cassette(
    file: Path, where: str, r: ResponseSpec, protocol: str | None
) -> tuple[bytes, int, dict[str, str], str]:
    assert r.cassette is not None
    target = (file.parent / r.cassette).resolve()
    try:
        cassette = load_cassette(target)
    except CassetteError as exc:
        raise ScenarioError(file, f"{where}.cassette", str(exc)) from None
    index = r.interaction or 0
    if index >= len(cassette.interactions):
        raise ScenarioError(
            file,
            f"{where}.interaction",
            f"{r.cassette} has {len(cassette.interactions)} interactions",
        )
    interaction = cassette.interactions[index]
    try:
        protocol = protocol or detect_protocol(interaction)
    except UnknownProtocolError as exc:
        raise ScenarioError(file, f"{where}.cassette", str(exc)) from None
    response = interaction.response
    headers = {name: values[0] for name, values in response.headers.items() if values}
    headers.update(r.headers)
    return response.body, r.status or response.status, headers, protocol


def _split_events(body: bytes) -> list[bytes]:
    """One chunk per SSE event (cut after each blank line), so that ``interval`` spaces the
    wire events out in virtual time."""
    parts = body.replace(b"\r\n", b"\n").split(b"\n\n")
    chunks = [p + b"\n\n" for p in parts[:-1] if p.strip()]
    if parts[-1].strip():
        chunks.append(parts[-1])
    return chunks or [body]


def script_events(script: ScriptSpec) -> list[Event]:
    """A contract-valid event stream for a scripted response, built by the same
    :class:`~stream_harness.providers.accumulator.Accumulator` the normalizers use."""
    acc = Accumulator("scripted")
    acc.start(model=script.model)
    size = script.delta_size
    out: list[Event] = []
    key = 0
    for kind, text in (("thinking", script.thinking), ("text", script.text)):
        if not text:
            continue
        for i in range(0, len(text), size):
            (acc.thinking if kind == "thinking" else acc.text)(key, text[i : i + size])
            out.extend(acc.drain())
        acc.end(key)
        key += 1
    import json

    for n, call in enumerate(script.tool_calls):
        raw = (
            call.raw_arguments
            if call.raw_arguments is not None
            else json.dumps(call.arguments or {})
        )
        acc.tool_call(key, id=call.id or f"call_{n}", name=call.name)
        for i in range(0, len(raw), size):
            acc.tool_call(key, delta=raw[i : i + size])
            out.extend(acc.drain())
        acc.end(key)
        key += 1
    if script.usage:
        acc.set_usage(**script.usage)
    if script.error is not None:
        e = script.error
        retryable = (
            e.retryable
            if e.retryable is not None
            else e.kind in ("rate_limit", "overloaded", "transient")
        )
        info = ErrorInfo(
            kind=e.kind, status=e.status, retryable=retryable, retry_after=e.retry_after
        )
        acc.fail(e.message, error=info)
    else:
        stop: StopReason = script.stop or ("tool_use" if script.tool_calls else "stop")
        acc.finish(stop)
    out.extend(acc.drain())
    return out


# ---------------------------------------------------------------------------------------
# Running and checking
# ---------------------------------------------------------------------------------------


@dataclass
class ScenarioRun:
    scenario: Scenario
    result: SimulationResult
    history: list[Message]
    context: dict[str, Any]
    violations: list[Violation] = field(default_factory=list)

    @property
    def events(self) -> list[AgentEvent]:
        return self.result.events


def _keep_last_user(history: Sequence[Message]) -> Sequence[Message]:
    """The reference compactor: a placeholder summary, then the last user request (replayed,
    as opencode does when it compacts in the middle of a turn). A real host summarizes."""
    last = next((m for m in reversed(history) if isinstance(m, UserMessage)), None)
    summary = UserMessage(content=f"[summary of {len(history)} earlier messages]")
    return [summary] if last is None else [summary, last]


def run_scenario(scenario: Scenario) -> ScenarioRun:
    spec = scenario.spec
    clock = VirtualClock(epoch=spec.config.epoch)
    doom_answers = [_answer(a) for a in spec.config.doom_loop.answers]
    tool_answers = [_answer(a) for a in spec.config.permissions.answers]

    def answer(request: AskPermission) -> tuple[PermissionAnswer, float]:
        """The scripted user: answers in order, per question kind; none left means no."""
        queue = doom_answers if request.permission == "doom_loop" else tool_answers
        return queue.pop(0) if queue else ("deny", 0.0)

    loop = AgentLoop(
        scenario.config,
        scenario.tools,
        [UserMessage(content=spec.prompt)],
        clock=clock,
        context=spec.context,
        compactor=_keep_last_user if spec.config.compaction.then == "continue" else None,
    )
    abort = spec.faults.abort
    simulation = Simulation(
        loop,
        ScriptedClient(scenario.responses),
        scenario.behaviours,
        Scheduler(clock),
        abort_after_event=abort.after_event if abort else None,
        abort_at=abort.at if abort else None,
        permissions=answer,
    )
    result = simulation.run()
    violations = check_events(
        result.events,
        concurrency_limit=scenario.config.concurrency_limit,
        safe_tools=_safe_calls(scenario.tools),
    )
    violations += check_history(loop.history)
    if not result.finished:
        violations.append(
            Violation("L6", "the run did not reach agent_end (nothing left to happen)", None)
        )
    return ScenarioRun(scenario, result, loop.history, loop.context, violations)


def _safe_calls(tools: Sequence[ToolSpec]) -> Callable[[str, Mapping[str, Any]], bool]:
    """The checker's own view of which call is safe, from the specs (not from the log)."""
    specs = {t.name: t for t in tools}

    def safe(name: str, arguments: Mapping[str, Any]) -> bool:
        spec = specs.get(name)
        return spec is not None and spec.is_concurrency_safe(arguments)

    return safe


def check_scenario(run: ScenarioRun) -> list[str]:
    """Every difference between the run and ``expect``, one line each (empty: it passed)."""
    expect = run.scenario.spec.expect
    events = run.events
    problems = [f"invariant {v}" for v in run.violations]

    def differ(name: str, expected: Any, actual: Any) -> None:
        if expected is not None and expected != actual:
            problems.append(f"expect.{name}: expected {expected!r}, got {actual!r}")

    end = next((e for e in reversed(events) if isinstance(e, AgentEnd)), None)
    differ("end_reason", expect.end_reason, end.reason if end else None)
    if expect.error_message_contains is not None:
        message = end.error_message if end else None
        if message is None or expect.error_message_contains not in message:
            problems.append(
                f"expect.error_message_contains: {expect.error_message_contains!r} not in {message!r}"
            )
    differ("turns", expect.turns, end.turns if end else None)
    differ("signals", expect.signals, [e.signal for e in events if e.type == "turn_end"])
    retries = [e for e in events if e.type == "retry"]
    differ("retries", expect.retries, len(retries))
    differ("retry_delays", expect.retry_delays, [round(e.delay, 6) for e in retries])
    differ("fallbacks", expect.fallbacks, sum(1 for e in events if e.type == "fallback"))
    differ("requests", expect.requests, [r.model for r in run.result.requests])
    differ("request_sizes", expect.request_sizes, [len(r.messages) for r in run.result.requests])
    if expect.end_time is not None and abs(expect.end_time - run.result.end_time) > 1e-9:
        problems.append(
            f"expect.end_time: expected {expect.end_time!r}, got {run.result.end_time!r}"
        )
    types = [e.type for e in events]
    differ("events", expect.events, types)
    if expect.events_include is not None and not _subsequence(expect.events_include, types):
        problems.append(
            f"expect.events_include: {expect.events_include} is not a subsequence of the events"
        )
    for excluded in expect.events_exclude or []:
        if excluded in types:
            problems.append(f"expect.events_exclude: {excluded} occurs")
    differ("history", expect.history, [summarize(m) for m in run.history])
    if expect.last_text is not None:
        last = next((m for m in reversed(run.history) if isinstance(m, AssistantMessage)), None)
        text = (
            "".join(b.content for b in last.content if isinstance(b, TextBlock)) if last else None
        )
        differ("last_text", expect.last_text, text)
    if expect.tool_results is not None:
        _compare_results(
            expect.tool_results, [m for m in run.history if isinstance(m, ToolResult)], problems
        )
    starts = [e for e in events if e.type == "tool_execution_start"]
    differ("tool_starts", expect.tool_starts, [e.tool_call_id for e in starts])
    differ(
        "tool_ends",
        expect.tool_ends,
        [e.tool_call_id for e in events if e.type == "tool_execution_end"],
    )
    if expect.tool_batches is not None:
        batches: dict[tuple[int, int], list[str]] = {}
        for e in starts:
            batches.setdefault((e.turn, e.batch), []).append(e.tool_call_id)
        differ("tool_batches", expect.tool_batches, list(batches.values()))
    if expect.tool_contexts is not None:
        seen = {e.tool_call_id: e.context for e in starts}
        for call_id, context in expect.tool_contexts.items():
            differ(f"tool_contexts.{call_id}", context, seen.get(call_id))
    if expect.tool_start_times is not None:
        times = {e.tool_call_id: e.time for e in starts}
        for call_id, when in expect.tool_start_times.items():
            differ(f"tool_start_times.{call_id}", when, times.get(call_id))
    differ("max_concurrency", expect.max_concurrency, run.result.max_running)
    differ("doom_loops", expect.doom_loops, [e.decision for e in events if e.type == "doom_loop"])
    differ("compactions", expect.compactions, [e.reason for e in events if e.type == "compaction"])
    differ("context", expect.context, run.context)
    return problems


def _subsequence(needle: Sequence[str], haystack: Sequence[str]) -> bool:
    it = iter(haystack)
    return all(any(x == y for y in it) for x in needle)


def _compare_results(
    expected: Sequence[ToolResultExpect], actual: Sequence[ToolResult], problems: list[str]
) -> None:
    if len(expected) != len(actual):
        problems.append(f"expect.tool_results: expected {len(expected)} results, got {len(actual)}")
    for i, (want, got) in enumerate(zip(expected, actual, strict=False)):
        for name in ("tool_call_id", "name", "kind", "is_error", "content"):
            value = getattr(want, name)
            if value is not None and value != getattr(got, name):
                problems.append(
                    f"expect.tool_results.{i}.{name}: expected {value!r}, got {getattr(got, name)!r}"
                )
        if want.content_contains is not None and want.content_contains not in str(got.content):
            problems.append(
                f"expect.tool_results.{i}.content_contains: {want.content_contains!r} not in {got.content!r}"
            )
