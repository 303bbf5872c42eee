"""Tools as the loop sees them: a spec to validate against, an outcome, and the texts of
the results the loop writes on a tool's behalf.

Validation uses jsonschema (the validator class the schema's ``$schema`` names, Draft 2020-12
by default) and never coerces: the arguments a tool receives are the ``toolcall_end``
arguments unchanged (specs/agent-loop.md, L9). pi coerces ("5" -> 5) on a copy; we choose
not to, because a reference should show what the model sent.

The result texts are pinned here once, each with the system it comes from
(research/seed-systems.md E.2 asks to "pick one set of strings and pin it").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import jsonschema
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator

# -- result texts ----------------------------------------------------------------

# Claude Code, "No such tool available: <name>" [agreed] (seed-systems.md C.3), without its
# <tool_use_error> wrapper: is_error already says it.
UNKNOWN_TOOL = "No such tool available: {name}"
# pi validation.ts (seed-systems.md B.4): header, one "  - path: message" line per error,
# then the arguments as received (2-space JSON).
INVALID_ARGUMENTS = (
    'Validation failed for tool "{name}":\n{issues}\n\nReceived arguments:\n{arguments}'
)
# opencode's `invalid` tool output (research/seed-systems.md A.2: "The arguments provided to
# the tool are invalid: <error>"), the error ours: a call whose argument text was not valid
# JSON never runs on the recovery cascade's guess (specs/agent-contract.md, A13; seed-systems
# E.2 VALIDATING 2: "Unparseable JSON is an immediate error").
MALFORMED_ARGUMENTS = (
    'The arguments provided to the tool are invalid: tool "{name}" was not executed, its '
    "arguments are not valid JSON. Received:\n{raw}\nRe-issue the tool call with its "
    "arguments as one JSON object."
)
# Python's own "Type: message" form; pi keeps only err.message, but Python exceptions often
# have an empty message and the type is then all there is.
TOOL_RAISED = "{type}: {message}"
# opencode processor, the part error of an interrupted tool (seed-systems.md A.2).
CANCELLED = "Tool execution aborted"
# pi agent-loop 0781c3c7, verbatim (seed-systems.md B.3).
TRUNCATED = (
    'Tool call "{name}" was not executed: the response hit the output token limit, so its '
    "arguments may be truncated. Re-issue the tool call with complete arguments."
)
# Ours: opencode asks a permission and throws RejectedError; the model needs a reason.
DOOM_LOOP_DENIED = (
    'Tool call "{name}" was not executed: the same call with identical input came {count} '
    "times in a row (doom loop)."
)
# Ours: a call inside a response that ended in error is committed with the message, so it
# needs a result (L1) although nothing ran.
NOT_EXECUTED = 'Tool call "{name}" was not executed: the model response ended in error ({error}).'
# opencode PermissionNext.RejectedError.message, verbatim: the user answered no when asked.
PERMISSION_REJECTED = "The user rejected permission to use this specific tool call."
# opencode PermissionNext.DeniedError.message, its first sentence: a configured rule said no.
PERMISSION_DENIED = (
    "The user has specified a rule which prevents you from using this specific tool call."
)


class ToolSpecError(ValueError):
    """A tool whose schema is not a valid JSON Schema."""


ConcurrencySafety = bool | Callable[[Mapping[str, Any]], bool]
"""Whether a call may run beside others: a constant, or Claude Code's per-input
``isConcurrencySafe(parsed)`` (a shell tool is safe for ``ls``, not for ``rm``)."""


@dataclass(frozen=True)
class SafeWhen:
    """A call is concurrency-safe when its input matches this JSON Schema (the scenario form
    of ``isConcurrencySafe(parsed)``: ``concurrency_safe: {schema}``)."""

    schema: Mapping[str, Any]

    def __call__(self, arguments: Mapping[str, Any]) -> bool:
        cls = jsonschema.validators.validator_for(
            dict(self.schema), default=jsonschema.Draft202012Validator
        )
        return bool(cls(dict(self.schema)).is_valid(arguments))


@dataclass(frozen=True)
class ToolSpec:
    """What the loop knows of a tool before running it.

    ``concurrency_safe`` is decided per call from its parsed input, as Claude Code's
    ``partitionToolCalls`` does (seeds/003 ``mk3``): a constant, or a function of the
    arguments; a call whose input fails validation is never safe (it does not run at all).
    """

    name: str
    schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    concurrency_safe: ConcurrencySafety = False
    description: str = ""
    _validator: Validator = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        cls = jsonschema.validators.validator_for(
            dict(self.schema), default=jsonschema.Draft202012Validator
        )
        try:
            cls.check_schema(dict(self.schema))
        except SchemaError as exc:
            where = "/".join(str(p) for p in exc.path) or "root"
            raise ToolSpecError(
                f"tool {self.name!r}: invalid JSON Schema at {where}: {exc.message}"
            ) from None
        object.__setattr__(self, "_validator", cls(dict(self.schema)))

    def is_concurrency_safe(self, arguments: Mapping[str, Any]) -> bool:
        """seeds/003: ``isSafe = parse.success ? Boolean(isConcurrencySafe(parsed)) : false``;
        a predicate that raises makes the call unsafe (research/seed-systems.md C.1)."""
        safety = self.concurrency_safe
        if isinstance(safety, bool):
            return safety
        if self.validate(arguments) is not None:
            return False
        try:
            return bool(safety(arguments))
        except Exception:
            return False

    def validate(self, arguments: Mapping[str, Any]) -> str | None:
        """The error text for arguments that fail the schema, else None. Never mutates them."""
        errors = sorted(
            self._validator.iter_errors(arguments), key=lambda e: [str(p) for p in e.absolute_path]
        )
        if not errors:
            return None
        lines = []
        for error in errors:
            path = "/".join(str(p) for p in error.absolute_path) or "root"
            lines.append(f"  - {path}: {error.message}")
        return INVALID_ARGUMENTS.format(
            name=self.name,
            issues="\n".join(lines),
            arguments=json.dumps(arguments, indent=2, ensure_ascii=False, sort_keys=False),
        )


def canonical_input(arguments: Mapping[str, Any]) -> str:
    """The identity of a tool input for the doom-loop check.

    Canonical JSON (sorted keys, no whitespace): two inputs are identical when they are equal
    as JSON values, whatever their key order. opencode compares ``JSON.stringify`` strings,
    which is key-order sensitive; the contract's arguments are parsed objects, and a model that
    reorders keys is repeating itself just the same.
    """
    return json.dumps(
        arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )


class DoomLoopTracker:
    """Counts consecutive identical tool calls over the whole run.

    A call extends the streak when it has the same name and canonical input as the call
    before it (in call order, across turns); any other call restarts the streak at 1. Text
    between calls does not break a streak: a model that says "let me try again" and repeats
    the call is the loop we want to catch (opencode looks only inside one message, where any
    text part resets the count; research/seed-systems.md A.3).
    """

    def __init__(self) -> None:
        self._last: tuple[str, str] | None = None
        self._streak = 0

    def observe(self, name: str, arguments: Mapping[str, Any]) -> int:
        """Record a call; return the length of the streak it ends (1 for a fresh call)."""
        key = (name, canonical_input(arguments))
        self._streak = self._streak + 1 if key == self._last else 1
        self._last = key
        return self._streak


# -- outcomes -----------------------------------------------------------------------


class ContextModifier(Protocol):
    """A change a tool asks to make to the shared tool context (Claude Code's
    ``contextModifier``). It gets a copy and returns the new context."""

    def __call__(self, context: dict[str, Any], /) -> dict[str, Any]: ...


@dataclass(frozen=True)
class SetKeys:
    """``{set: {key: value}}``: the scenario form of a context modifier."""

    values: Mapping[str, Any]

    def __call__(self, context: dict[str, Any], /) -> dict[str, Any]:
        return {**context, **self.values}


@dataclass(frozen=True)
class AppendTo:
    """``{append: {key: item}}``: append to a list in the context (created when missing)."""

    values: Mapping[str, Any]

    def __call__(self, context: dict[str, Any], /) -> dict[str, Any]:
        out = dict(context)
        for key, item in self.values.items():
            current = out.get(key)
            out[key] = [*current, item] if isinstance(current, list) else [item]
        return out


@dataclass(frozen=True)
class ToolOutcome:
    """How a tool run ended: a value, or an exception's type and message, plus modifiers."""

    value: Any = None
    error_type: str | None = None
    error_message: str = ""
    modifiers: tuple[ContextModifier, ...] = ()

    @property
    def failed(self) -> bool:
        return self.error_type is not None

    @classmethod
    def raised(cls, exc: BaseException) -> ToolOutcome:
        return cls(error_type=type(exc).__name__, error_message=str(exc))


PermissionAction = Literal["ask", "deny", "allow"]
"""A gate rule (opencode's ruleset actions): run, refuse, or ask the user."""
PermissionAnswer = Literal["allow", "deny", "always"]
"""The user's answer (opencode's once / reject / always): ``always`` allows and stops asking
for that tool."""
DoomLoopAction = PermissionAction
DoomLoopAnswer = PermissionAnswer
