"""Agent scenarios: a conversation with faults, served over HTTP in several protocols.

The loop's scenarios (:mod:`stream_harness.loop.scenario`) script a run on virtual time
and state the loop's own expected events; an agent scenario scripts only what the model
server answers and what the tools return, because the agent under test is a black box
seen through the requests it sends and the tools it runs. It is the same YAML family
(``kind: agent`` at the top; the same one-line :class:`ScenarioError`), and one file
is served in every protocol it lists, which is how a handful of conversations cover
every fault on every protocol (specs/scenarios.md, "Agent scenarios").
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stream_harness.agents.scenario.faults import (
    FaultSpec,
    InCall,
    Resolved,
    broken_arguments,
    normalize,
    place_offset,
    unexpressible,
)
from stream_harness.agents.scenario.render import (
    PROTOCOLS,
    Fault,
    Script,
    ScriptedCall,
    Served,
    render,
    served_from_bytes,
)
from stream_harness.contract.facts import bundled_cassettes
from stream_harness.loop.scenario import ScenarioError, find_scenarios, read_scenario_yaml
from stream_harness.loop.spec_errors import validation_problem
from stream_harness.providers.registry import UnknownProtocolError, detect_protocol
from stream_harness.recordings.cassette import CassetteError, load_cassette
from stream_harness.recordings.inputs import display_path
from stream_harness.recordings.transport import response_headers

__all__ = [
    "AgentScenario",
    "FaultSpec",
    "ScenarioError",
    "ToolScript",
    "find_agent_scenarios",
    "load_agent_scenario",
]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunSpec(_Spec):
    returns: Any = "ok"
    raises: str | None = None


class ToolSpec(_Spec):
    description: str = ""
    schema_: dict[str, Any] = Field(default_factory=lambda: {"type": "object"}, alias="schema")
    side_effect: bool = False
    returns: Any = "ok"
    raises: str | None = None
    runs: list[RunSpec] = []


class CallSpec(_Spec):
    id: str
    name: str
    arguments: dict[str, Any] = {}


class ScriptSpec(_Spec):
    text: str = ""
    thinking: str | None = None
    tool_calls: list[CallSpec] = []
    delta_size: int = Field(12, ge=1)


class ResponseSpec(_Spec):
    script: ScriptSpec | None = None
    cassette: str | None = None  # a recorded response instead: relative to the scenario file
    interaction: int = Field(0, ge=0)
    match: str | None = Field(None, min_length=1)  # served to the first request containing it
    fault: FaultSpec = FaultSpec()
    repeat: int = Field(1, ge=1, le=20)

    @model_validator(mode="after")
    def _one_source(self) -> ResponseSpec:
        if self.cassette is not None and self.script is not None:
            raise ValueError("a response is a script or a cassette, not both")
        if self.cassette is not None:
            f = self.fault
            if f != FaultSpec(cut_at=f.cut_at, pace=f.pace):
                raise ValueError("a recorded response takes only the faults cut_at and pace")
        return self


class AgentScenarioSpec(_Spec):
    kind: Literal["agent"]
    name: str | None = None
    description: str = ""
    protocols: list[str] = list(PROTOCOLS)
    model: str = "model"
    system: str | None = None
    prompt: str = "Hello"
    tools: dict[str, ToolSpec] = {}
    responses: list[ResponseSpec] = Field(min_length=1)
    checks: list[str] | None = None  # only these checks apply (default: all)
    skip_checks: list[str] = []

    @model_validator(mode="after")
    def _known(self) -> AgentScenarioSpec:
        unknown = [p for p in self.protocols if p not in PROTOCOLS]
        if unknown:
            raise ValueError(f"unknown protocol(s) {unknown} (known: {', '.join(PROTOCOLS)})")
        return self


@dataclass(frozen=True, slots=True)
class ToolScript:
    """What the ledger answers for a tool: per run (0-based), then the tool's default."""

    name: str
    description: str
    schema: Mapping[str, Any]
    side_effect: bool
    default: tuple[Any, str | None]  # (returns, raises)
    runs: tuple[tuple[Any, str | None], ...]

    def answer(self, nth: int) -> tuple[Any, str | None]:
        return self.runs[nth] if nth < len(self.runs) else self.default


@dataclass(frozen=True, slots=True)
class Recorded:
    """A recorded response a scenario serves: its protocol and what was recorded."""

    protocol: str
    status: int
    headers: Mapping[str, str]
    body: bytes


@dataclass(frozen=True)
class AgentScenario:
    path: Path
    name: str
    spec: AgentScenarioSpec
    tools: tuple[ToolScript, ...]
    recorded: Mapping[int, Recorded] = field(default_factory=dict)  # response index -> recording

    @property
    def protocols(self) -> tuple[str, ...]:
        """The protocols it is served in: those listed, less those that cannot express
        one of its faults (:attr:`unexpressible`)."""
        if self.recorded:
            return (next(iter(self.recorded.values())).protocol,)
        return tuple(p for p in self.spec.protocols if p not in self.unexpressible)

    @property
    def unexpressible(self) -> dict[str, str]:
        """protocol -> why it cannot serve one of the faults (Gemini sends whole calls; a
        call without an id where every server sends one, specs/call_ids.yaml)."""
        out: dict[str, str] = {}
        for response in self.spec.responses:
            calls = len((response.script or ScriptSpec()).tool_calls)
            faults = [normalize(response.fault, calls), response.fault.mutate]
            for protocol in self.spec.protocols:
                for fault in faults:
                    why = unexpressible(fault, protocol) if fault is not None else None
                    if why is not None:
                        out.setdefault(protocol, why)
        return out

    def applies(self, check: str) -> bool:
        if check in self.spec.skip_checks:
            return False
        return self.spec.checks is None or check in self.spec.checks

    def served(self, protocol: str) -> list[Served]:
        """Every response rendered in ``protocol``, ``repeat`` expanded: request k gets k."""
        out: list[Served] = []
        served_ids: list[str] = []  # every call id served so far, for a reused one
        for i, response in enumerate(self.spec.responses):
            f = response.fault
            recording = self.recorded.get(i)
            if recording is not None:
                served = served_from_bytes(
                    recording.protocol,
                    recording.status,
                    recording.headers,
                    recording.body,
                    cut_at=f.cut_at,
                    pace=f.pace,
                    fault="cut_at" if f.cut_at is not None else "recorded",
                )
                out.extend([served] * response.repeat)
                continue
            s = response.script or ScriptSpec()
            calls = [ScriptedCall(c.id, c.name, c.arguments) for c in s.tool_calls]
            if f.mutate is not None:
                calls[f.mutate.call - 1] = self._mutated(i, calls, served_ids)
            served_ids += [c.id for c in calls if c.id]
            script = Script(
                text=s.text,
                thinking=s.thinking,
                tool_calls=tuple(calls),
                delta_size=s.delta_size,
            )
            fault = _fault_of(f)
            served = render(protocol, script, fault, model=self.spec.model, ident=f"sh{i}")
            out.extend([served] * response.repeat)
        return out

    def _mutated(
        self, i: int, calls: Sequence[ScriptedCall], served_ids: Sequence[str]
    ) -> ScriptedCall:
        """Response ``i``'s call as ``mutate`` serves it (checked valid when loaded)."""
        mutate = self.spec.responses[i].fault.mutate
        assert mutate is not None
        n = mutate.call - 1
        call = calls[n]
        arguments: Mapping[str, Any] = call.arguments
        if mutate.args is not None:
            schema = next(t.schema for t in self.tools if t.name == call.name)
            broken = broken_arguments(call.arguments, schema, mutate.args)
            assert broken is not None
            arguments = broken
        ident = call.id
        if mutate.id == "missing":
            ident = ""
        elif mutate.id == "fresh":
            ident = f"{call.id}_r{i}"
        elif mutate.id == "reused":
            earlier = [*served_ids, *(c.id for c in calls[:n] if c.id)]
            ident = earlier[-1]
        return ScriptedCall(ident, call.name, arguments)

    @property
    def faults(self) -> list[str]:
        kinds = {_fault_of(r.fault).kind for r in self.spec.responses}
        return sorted(kinds - {"none"})


def _mutation_word(f: FaultSpec) -> str | None:
    """``args_wrong_type_call_1``, ``id_reused_call_2``: the word of a call served wrong."""
    if f.mutate is None:
        return None
    what = f"args_{f.mutate.args}" if f.mutate.args else f"id_{f.mutate.id}"
    return f"{what}_call_{f.mutate.call}"


def _fault_of(f: FaultSpec) -> Fault:
    return Fault(
        cut_at=f.cut_at,
        cut_in_tool_args=f.cut_in_tool_args,
        http_status=f.status,
        headers=f.headers,
        body=f.body,
        overflow=f.overflow,
        error_event=f.error_event_after_200,
        length_stop_in_tool_call=f.length_stop_in_tool_call,
        no_terminal_event=f.no_terminal_event,
        pace=f.pace,
        place=f.place,
        ending=f.ending,
        error_kind=f.kind,
        label=_mutation_word(f),
    )


def find_agent_scenarios(root: str | os.PathLike[str]) -> list[Path]:
    """The agent scenario files under ``root`` (a file is itself), sorted."""
    path = Path(root)
    return [path] if path.is_file() else find_scenarios(path)


def load_agent_scenario(path: str | os.PathLike[str]) -> AgentScenario:
    """Read and validate one file; every problem is a one-line :class:`ScenarioError`."""
    file = Path(path)
    raw = read_scenario_yaml(file)
    if not isinstance(raw, dict):
        raise ScenarioError(file, "", "an agent scenario is a YAML mapping")
    if raw.get("kind") != "agent":
        raise ScenarioError(file, "kind", "an agent scenario says `kind: agent`")
    try:
        spec = AgentScenarioSpec.model_validate(raw)
    except ValidationError as exc:
        raise ScenarioError(file, *validation_problem(exc, AgentScenarioSpec)) from None
    tools: list[ToolScript] = []
    for name, tool in spec.tools.items():
        try:
            jsonschema.validators.validator_for(tool.schema_).check_schema(tool.schema_)
        except jsonschema.SchemaError as exc:
            raise ScenarioError(file, f"tools.{name}.schema", exc.message) from None
        tools.append(
            ToolScript(
                name,
                tool.description or f"The {name} tool.",
                tool.schema_,
                tool.side_effect,
                (tool.returns, tool.raises),
                tuple((r.returns, r.raises) for r in tool.runs),
            )
        )
    for i, response in enumerate(spec.responses):
        script = response.script or ScriptSpec()
        for j, call in enumerate(script.tool_calls):
            if call.name not in spec.tools:
                where = f"responses.{i}.script.tool_calls.{j}.name"
                raise ScenarioError(file, where, f"no tool {call.name!r} in tools")
        cut = response.fault.cut_in_tool_args
        calls = len(script.tool_calls)
        if (
            cut is not False
            and not (cut is True and calls)
            and not (not isinstance(cut, bool) and 1 <= cut <= calls)
        ):
            where = f"responses.{i}.fault.cut_in_tool_args"
            raise ScenarioError(
                file, where, f"the script has {calls} tool call(s): nothing to cut in"
            )
        if response.fault.length_stop_in_tool_call and not script.tool_calls:
            where = f"responses.{i}.fault.length_stop_in_tool_call"
            raise ScenarioError(file, where, "needs a tool call in the script")
        _check_fault(file, i, response.fault, script, spec)
    recorded = _recordings(file, spec)
    return AgentScenario(file, spec.name or file.stem, spec, tuple(tools), recorded)


def _check_fault(
    file: Path, i: int, fault: FaultSpec, script: ScriptSpec, spec: AgentScenarioSpec
) -> None:
    """What the model cannot check alone: a place or a mutation that the script has."""
    where = f"responses.{i}.fault"
    resolved: Resolved | None = normalize(fault, len(script.tool_calls))
    place = resolved.place if resolved is not None else None
    counted = len(script.tool_calls)
    if isinstance(place, InCall):
        if place.call > counted:
            raise ScenarioError(
                file,
                f"{where}.place.call",
                f"the script has {counted} tool call(s), not {place.call}",
            )
        arguments = script.tool_calls[place.call - 1].arguments
        if place_offset(arguments, place.at, script.delta_size) is None:
            raise ScenarioError(
                file,
                f"{where}.place.at",
                f"call {place.call}'s arguments have no place {place.at!r}",
            )
    if fault.mutate is not None and fault.mutate.call > counted:
        raise ScenarioError(
            file,
            f"{where}.mutate.call",
            f"the script has {counted} tool call(s), not {fault.mutate.call}",
        )
    mutate = fault.mutate
    if mutate is None:
        return
    call = script.tool_calls[mutate.call - 1]
    schema = spec.tools[call.name].schema_
    if mutate.args is not None and broken_arguments(call.arguments, schema, mutate.args) is None:
        raise ScenarioError(
            file,
            f"{where}.mutate.args",
            f"call {mutate.call}'s arguments cannot be made {mutate.args}",
        )
    earlier = any((r.script or ScriptSpec()).tool_calls for r in spec.responses[:i])
    if mutate.id == "reused" and mutate.call == 1 and not earlier:
        raise ScenarioError(
            file, f"{where}.mutate.id", "no call was served before it to reuse the id of"
        )


def _recordings(file: Path, spec: AgentScenarioSpec) -> dict[int, Recorded]:
    """The recorded responses, loaded and checked: one protocol for the whole scenario."""
    out: dict[int, Recorded] = {}
    for i, response in enumerate(spec.responses):
        if response.cassette is None:
            continue
        where = f"responses.{i}.cassette"
        path = Path(response.cassette)
        path = path if path.is_absolute() else file.parent / path
        try:
            cassette = load_cassette(path)
        except CassetteError as exc:
            raise ScenarioError(file, where, str(exc)) from None
        if response.interaction >= len(cassette.interactions):
            raise ScenarioError(
                file,
                f"responses.{i}.interaction",
                f"{path} has {len(cassette.interactions)} interaction(s)",
            )
        interaction = cassette.interactions[response.interaction]
        try:
            protocol = detect_protocol(interaction)
        except UnknownProtocolError as exc:
            raise ScenarioError(file, where, str(exc)) from None
        headers = dict(response_headers(interaction.response))
        out[i] = Recorded(protocol, interaction.response.status, headers, interaction.response.body)
    found = {r.protocol for r in out.values()}
    if len(found) > 1:
        raise ScenarioError(
            file, "responses", f"recorded responses of several protocols: {sorted(found)}"
        )
    if found and "protocols" in spec.model_fields_set and spec.protocols != sorted(found):
        raise ScenarioError(file, "protocols", f"the recorded responses are {found.pop()} only")
    if found and any(r.cassette is None for r in spec.responses) and not found <= set(PROTOCOLS):
        raise ScenarioError(
            file,
            "responses",
            f"scripted responses cannot be rendered in {found.pop()}: record them too",
        )
    return out


def canonical(arguments: Any) -> str:
    """Arguments as one comparable string (key order and spacing do not matter)."""
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"))


def tool_names(tools: Sequence[ToolScript]) -> list[str]:
    return [t.name for t in tools]


def bundled_agent_scenarios() -> Path:
    """The agent scenarios that ship with stream-harness."""
    return bundled_cassettes() / "agent-scenarios"


def resolve_scenarios_argument(value: str) -> Path | None:
    """``--scenarios VALUE``: a file or folder, else the name of a bundled scenario
    (``no_terminal_event``), so that a reproduce command works on any machine; None when
    it is neither."""
    path = Path(value)
    if path.exists():
        return path
    bundled = bundled_agent_scenarios() / f"{value}.yaml"
    if "/" not in value and bundled.is_file():
        return bundled
    return None


def scenario_argument(path: Path) -> str:
    """How a reproduce command names a scenario file: relative to the working directory
    when under it (as cassette paths are), by name when it is a bundled one elsewhere (a
    wheel's site-packages path means nothing on the next machine), else as it is."""
    shown = display_path(path)
    if Path(shown).is_absolute() and path.parent.resolve() == bundled_agent_scenarios().resolve():
        return path.stem
    return shown
