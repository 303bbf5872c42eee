"""Binding a scenario's scripted tool calls to the tools the agent under test offers.

The bundled scenarios call ``charge_card`` and ``get_weather``; an agent with its own tools
(``refund_order``, ``lookup_order``) would fail them for a reason that is not its own. So a
run may bind each scenario tool to an offered one, either by a mapping the user gives
(``--tool charge_card=refund_order``) or by role (``auto``): the scenario's side-effect tool
to an offered tool whose name or description says it changes something, its read tool to
another one. The offered tools are only known from the agent's first model request, so the
scenario server asks for the binding then (:class:`Binder` is its hook) and renders the
bound scenario; the checks then read the bound scenario, as if it had been written so.

Scripted arguments are fitted to the offered tool's JSON schema: kept where they are valid,
else generated from the schema, deterministically, reusing the scripted values where a
type matches (so two calls that differed still differ).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import jsonschema

from stream_harness.agents.scenario.model import AgentScenario, AgentScenarioSpec, ToolScript
from stream_harness.agents.scenario.render import Served
from stream_harness.agents.server import Execution, LedgerTool, ScriptedAnswer

AUTO: Final = "auto"

_EFFECT_WORDS: Final = re.compile(
    r"charge|pay|refund|send|create|delete|remove|update|write|book|transfer|cancel|"
    r"submit|purchase|buy|insert|save|email|notify|deploy|place_order",
    re.IGNORECASE,
)
"""Words that mark an offered tool as one that changes something (a design choice, not a
fact about any provider): ``auto`` binds the scenario's side-effect role to such a tool, and
any other tool takes the read role. ``--tool`` overrides it when a name misleads."""


class BindingError(ValueError):
    """A binding that cannot be made (``--tool`` naming no scenario tool); one line."""


@dataclass(frozen=True, slots=True)
class OfferedTool:
    name: str
    description: str
    schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolBinding:
    """How a run binds scenario tools: ``mapping`` (scenario name -> agent's name) first,
    then, with ``auto``, by role over the offered tools; a scenario tool the agent offers
    under its own name stays bound to it."""

    mapping: Mapping[str, str] = field(default_factory=dict)
    auto: bool = True

    def check(self, scenarios: Sequence[AgentScenario]) -> None:
        """Refuse a mapping that names a tool no scenario has (a typo would bind nothing)."""
        known = {t.name for s in scenarios for t in s.tools}
        for name in self.mapping:
            if name not in known:
                raise BindingError(
                    f"--tool {name}=...: no scenario has a tool {name!r} "
                    f"(they have: {', '.join(sorted(known)) or 'none'})"
                )


def parse_tool_mapping(values: Sequence[str]) -> dict[str, str]:
    """``["charge_card=refund", ...]`` -> ``{"charge_card": "refund"}``; a malformed item is
    a one-line :class:`BindingError` naming it."""
    out: dict[str, str] = {}
    for value in values:
        scenario_tool, sep, agent_tool = value.partition("=")
        if not sep or not scenario_tool.strip() or not agent_tool.strip():
            raise BindingError(f"--tool {value}: give SCENARIO_TOOL=YOUR_TOOL (charge_card=charge)")
        out[scenario_tool.strip()] = agent_tool.strip()
    return out


def offered_tools(body: Any) -> list[OfferedTool]:
    """The tools a model request offers, read from any of the served protocols' shapes:
    Chat Completions (``tools[].function``), Responses (``tools[]`` of type function),
    Anthropic (``tools[].input_schema``), Gemini (``tools[].functionDeclarations``) and
    Bedrock Converse (``toolConfig.tools[].toolSpec``, its schema under ``inputSchema.json``)."""
    if not isinstance(body, Mapping):
        return []
    out: list[OfferedTool] = []
    config = body.get("toolConfig")
    listed = config.get("tools") if isinstance(config, Mapping) else body.get("tools")
    for tool in listed or ():
        if not isinstance(tool, Mapping):
            continue
        declared = tool.get("functionDeclarations") or tool.get("function_declarations")
        spec = tool.get("toolSpec")
        if isinstance(spec, Mapping):
            schema = spec.get("inputSchema")
            json_schema = schema.get("json") if isinstance(schema, Mapping) else None
            spec = {**spec, "parameters": json_schema} if isinstance(json_schema, Mapping) else spec
            entries = [spec]
        else:
            entries = declared if isinstance(declared, list) else [tool.get("function", tool)]
        for entry in entries:
            if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
                continue
            schema = next(
                (
                    entry[k]
                    for k in ("parameters", "input_schema", "parametersJsonSchema")
                    if isinstance(entry.get(k), Mapping)
                ),
                {"type": "object"},
            )
            out.append(
                OfferedTool(
                    entry["name"], str(entry.get("description") or ""), _lower_types(schema)
                )
            )
    return out


def _lower_types(schema: Any) -> Any:
    """Gemini's OpenAPI subset spells types in capitals (``OBJECT``); JSON Schema does not."""
    if isinstance(schema, Mapping):
        return {
            k: (v.lower() if k == "type" and isinstance(v, str) else _lower_types(v))
            for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [_lower_types(v) for v in schema]
    return schema


def looks_like_effect(tool: OfferedTool) -> bool:
    return bool(_EFFECT_WORDS.search(tool.name) or _EFFECT_WORDS.search(tool.description[:80]))


def choose(
    scenario: AgentScenario, offered: Sequence[OfferedTool], binding: ToolBinding
) -> dict[str, tuple[OfferedTool | None, str, bool]]:
    """Scenario tool -> (the offered tool, the agent's name, still a side effect)."""
    by_name = {t.name: t for t in offered}
    effects = [t for t in offered if looks_like_effect(t)]
    reads = [t for t in offered if not looks_like_effect(t)]
    out: dict[str, tuple[OfferedTool | None, str, bool]] = {}
    used: set[str] = set()
    pending: list[ToolScript] = []
    for tool in scenario.tools:
        if tool.name in binding.mapping:
            name = binding.mapping[tool.name]
            out[tool.name] = (by_name.get(name), name, tool.side_effect)
        elif tool.name in by_name:
            out[tool.name] = (by_name[tool.name], tool.name, tool.side_effect)
        else:
            pending.append(tool)
            continue
        used.add(out[tool.name][1])
    # The side-effect roles choose first: a payment gets the offered tool that looks like one.
    for tool in sorted(pending, key=lambda t: not t.side_effect):
        if not binding.auto or not offered:
            out[tool.name] = (None, tool.name, tool.side_effect)
            continue
        same_role = effects if tool.side_effect else reads
        pick = _first_unused(same_role, used) or _first_unused(offered, used) or same_role[:1]
        chosen = pick[0] if pick else offered[0]
        used.add(chosen.name)
        # A read tool standing in for a payment is not a payment: A2 then judges nothing.
        out[tool.name] = (chosen, chosen.name, tool.side_effect and looks_like_effect(chosen))
    return out


def _first_unused(tools: Sequence[OfferedTool], used: set[str]) -> list[OfferedTool]:
    return [t for t in tools if t.name not in used][:1]


def bind_scenario(
    scenario: AgentScenario, offered: Sequence[OfferedTool], binding: ToolBinding
) -> AgentScenario:
    """The scenario as if written for the agent's tools: names, schemas and arguments."""
    if scenario.recorded:  # recorded bytes name their own tools: nothing to rebind
        return scenario
    chosen = choose(scenario, offered, binding)
    if all(chosen[t.name][0] is None and chosen[t.name][1] == t.name for t in scenario.tools):
        return scenario
    raw = scenario.spec.model_dump(by_alias=True, exclude_unset=False)
    tools: dict[str, Any] = {}
    for old, spec in raw["tools"].items():
        offered_tool, name, effect = chosen[old]
        entry = dict(spec, side_effect=effect)
        if offered_tool is not None:
            entry["schema"] = dict(offered_tool.schema)
            entry["description"] = offered_tool.description or spec["description"]
        tools.setdefault(name, entry)  # two roles on one tool: the first one's script
    raw["tools"] = tools
    for response in raw["responses"]:
        script = response.get("script")
        if not script:
            continue
        for call in script["tool_calls"]:
            offered_tool, name, _ = chosen[call["name"]]
            call["name"] = name
            if offered_tool is not None:
                call["arguments"] = fit_arguments(call["arguments"], offered_tool.schema)
    spec = AgentScenarioSpec.model_validate(raw)
    scripts = {t.name: t for t in scenario.tools}
    bound: list[ToolScript] = []
    for old, (offered_tool, name, effect) in chosen.items():
        if any(t.name == name for t in bound):
            continue
        t = scripts[old]
        schema = offered_tool.schema if offered_tool is not None else t.schema
        bound.append(ToolScript(name, t.description, schema, effect, t.default, t.runs))
    return AgentScenario(scenario.path, scenario.name, spec, tuple(bound), scenario.recorded)


# -- arguments valid for an offered schema -----------------------------------------------------


def fit_arguments(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> Any:
    """``arguments`` when valid for ``schema``, else a value generated from the schema that
    reuses the scripted values (by key, then by type, in order)."""
    if _valid(arguments, schema):
        return dict(arguments)
    pool = list(arguments.values())
    value = _value(schema, None, dict(arguments), pool)
    return value


def _valid(value: Any, schema: Mapping[str, Any]) -> bool:
    try:
        return bool(jsonschema.validators.validator_for(schema)(schema).is_valid(value))
    except (jsonschema.SchemaError, TypeError):
        return False


_SCALARS: Final[Mapping[str, type | tuple[type, ...]]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
}


def _matches(value: Any, kind: str) -> bool:
    expected = _SCALARS.get(kind)
    if expected is None or (isinstance(value, bool) and kind != "boolean"):
        return False
    return isinstance(value, expected)


def _value(schema: Any, key: str | None, original: dict[str, Any], pool: list[Any]) -> Any:
    if not isinstance(schema, Mapping):
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        given = original.get(key) if key else None
        return given if given in schema["enum"] else schema["enum"][0]
    for branch in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(branch), list) and schema[branch]:
            return _value(schema[branch][0], key, original, pool)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties") or {}
        wanted = list(schema.get("required") or props)
        return {name: _value(props.get(name, {}), name, original, pool) for name in wanted}
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        return [_value(schema.get("items", {}), None, original, pool) for _ in range(count)]
    if kind == "null":
        return None
    if key is not None and _matches(original.get(key), kind):
        value = original[key]
        if value in pool:
            pool.remove(value)
        return _bounded(value, schema, kind)
    for i, value in enumerate(pool):
        if _matches(value, kind):
            del pool[i]
            return _bounded(value, schema, kind)
    for example in (*(schema.get("examples") or ()), schema.get("default")):
        if _matches(example, kind):
            return example
    return _bounded(
        {"string": "example", "integer": 1, "number": 1.0, "boolean": True}.get(kind), schema, kind
    )


def _bounded(value: Any, schema: Mapping[str, Any], kind: str) -> Any:
    if kind in ("integer", "number"):
        low, high = schema.get("minimum"), schema.get("maximum")
        if isinstance(low, int | float) and value < low:
            value = low
        if isinstance(high, int | float) and value > high:
            value = high
        return int(value) if kind == "integer" else value
    if kind == "string":
        text = str(value)
        low = int(schema.get("minLength", 0))
        high = schema.get("maxLength")
        text = text + "x" * max(0, low - len(text))
        return text[: int(high)] if isinstance(high, int) else text
    return value


# -- the server's hook -------------------------------------------------------------------------


@dataclass
class Binder:
    """Binds a scenario on the agent's first model request; the runner then reads the bound
    scenario and what it served (:attr:`scenario`, :attr:`served`)."""

    scenario: AgentScenario
    protocol: str
    binding: ToolBinding
    served: list[Served] = field(default_factory=list)
    offered: list[OfferedTool] = field(default_factory=list)
    bound: bool = False

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def bind(self, body: Any) -> AgentScenario:
        """Bind once (the first request decides; a later one changes nothing)."""
        with self._lock:
            if not self.bound:
                self.offered = offered_tools(body)
                self.scenario = bind_scenario(self.scenario, self.offered, self.binding)
                self.bound = True
            return self.scenario

    def hook(
        self,
        render: Callable[[AgentScenario, str], tuple[list[Served], list[ScriptedAnswer]]],
    ) -> Callable[[bytes], tuple[Sequence[ScriptedAnswer], Mapping[str, LedgerTool]]]:
        """The server's ``rebind``: bind on the first request's body, render the bound
        scenario with ``render`` (the runner's own), keep what it serves for the checks."""

        def rebind(body: bytes) -> tuple[Sequence[ScriptedAnswer], Mapping[str, LedgerTool]]:
            bound = self.bind(_json(body))
            self.served, answers = render(bound, self.protocol)
            tools = {t.name: LedgerTool(t.name, t.default, t.runs) for t in bound.tools}
            return answers, tools

        return rebind

    def wiring_problem(self, ledger: Sequence[Execution], requests: int) -> str | None:
        """A run whose tools report nothing though the agent went on after a side-effect
        call: its tools are not wired to the ledger, which would otherwise pass A2 blind."""
        if ledger or not self.bound:
            return None
        effects = {t.name for t in self.scenario.tools if t.side_effect}
        for served in self.served[: max(0, requests - 1)]:
            called = [c.name for c in served.calls if c.delivered and c.name in effects]
            if called:
                return (
                    f"wiring: the agent went on after a call to {called[0]} (a side-effect tool) "
                    "but no tool run was recorded: report each run with "
                    "stream_harness.agents.record_tool_run(name, arguments), the @side_effect "
                    'decorator, or POST {"tool": NAME, "arguments": {...}} to '
                    "$STREAM_HARNESS_LEDGER_URL"
                )
        return None


def binding_of(adapter: object) -> ToolBinding | None:
    """The binding an agent under test asks for (app mode, the pytest fixture); adapters
    written for the harness wire ``task.tools`` and need none."""
    binding = getattr(adapter, "tool_binding", None)
    return binding if isinstance(binding, ToolBinding) else None


def _json(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None
