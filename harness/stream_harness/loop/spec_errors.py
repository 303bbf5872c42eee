"""A scenario file's validation errors said in the file's own terms, never pydantic's.

Scenario files (the loop's and the agents') are validated by pydantic models; its errors
name the library's concepts ("Extra inputs are not permitted", "Value error, ...") and
list no valid keys. The translation is driven by the error and the model's own fields,
not by a list of today's keys, so a field added to a model is named in the next message
without touching this module.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from stream_harness.contract.names import known_names

__all__ = ["validation_problem"]


def validation_problem(exc: ValidationError, model: type[BaseModel] | None) -> tuple[str, str]:
    """``(where, problem)`` for the first error: the dotted path of keys in the file
    (``root`` for the file itself) and one sentence in the file's terms. ``model`` is
    None for a value validated by a type adapter (a union of events): its location is
    then said as pydantic gives it.

    Several errors at one key are one choice (``bool | int`` fails as a boolean and as
    a whole number) and are said as one ``expected A or B``; the count of the rest is
    appended, so a user fixing the first knows there is more.
    """
    errors = _one_branch(exc.errors(), model)
    first = errors[0]
    if first["type"] == "union_forms":
        return first["msg"], f"expected {_forms(first['ctx'])}, got {_shown(first['input'])}"
    where, owner = _locate(model, first["loc"])
    same = [e for e in errors if _locate(model, e["loc"])[0] == where]
    problem = _problem(first, same, owner)
    rest = len({_locate(model, e["loc"])[0] for e in errors}) - 1
    if rest:
        problem += f" (and {rest} more problem(s))"
    return where or "root", problem


# Errors that say a value does not have a branch's shape at all (as opposed to a value of
# the right shape that breaks a bound): a branch without them is the one the file meant.
_SHAPE_ERRORS = frozenset(
    {
        "extra_forbidden",
        "missing",
        "model_type",
        "model_attributes_type",
        "literal_error",
        "dict_type",
    }
)


def _one_branch(errors: list[ErrorDetails], model: type[BaseModel] | None) -> list[ErrorDetails]:
    """A union of mappings (a fault's ``place``: ``{byte: N}``, ``{call: N, at: ...}`` or
    ``after_text``) fails in every branch at once; pydantic lists each branch's errors.
    The file meant the branch whose shape the value has: its errors alone are said. When no
    branch has the value's shape, one synthetic error lists the forms the key takes."""
    first = errors[0]
    split = _union_at(model, first["loc"])
    if split is None:
        return errors
    depth, union = split
    prefix = tuple(first["loc"][:depth])
    here = [e for e in errors if tuple(e["loc"][:depth]) == prefix and len(e["loc"]) > depth]
    branches: dict[str, list[ErrorDetails]] = {}
    for e in here:
        branches.setdefault(str(e["loc"][depth]), []).append(e)
    for branch in branches.values():
        top = [e for e in branch if len(e["loc"]) <= depth + 2]
        if not any(e["type"] in _SHAPE_ERRORS for e in top):
            rest = [e for e in errors if e not in here]
            return [*branch, *rest]
    where = _locate(model, prefix)[0]
    synthetic: Any = {
        "type": "union_forms",
        "loc": prefix,
        "msg": where or "root",
        "input": here[0]["input"],
        "ctx": {"union": union},
    }
    return [synthetic]


def _union_at(model: type[BaseModel] | None, loc: Sequence[int | str]) -> tuple[int, Any] | None:
    """Where ``loc`` enters a branch of a union of models: (its index, the union)."""
    current: Any = Any if model is None else model
    for i, part in enumerate(loc):
        current = _unwrap(current)
        origin = typing.get_origin(current)
        args = typing.get_args(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            current = _field(current, part)
        elif origin in (typing.Union, types.UnionType) and isinstance(part, str):
            if any(isinstance(a, type) and issubclass(a, BaseModel) for a in args):
                return i, current
            current = Any
        elif origin in (list, tuple) and args:
            current = args[0]
        elif origin is dict and len(args) == 2:
            current = args[1]
        else:
            return None
    return None


def _forms(ctx: Mapping[str, Any]) -> str:
    """The forms a union of mappings takes, as a file writes them: ``{byte}``, ``after_text``."""
    out: list[str] = []
    for arg in typing.get_args(_annotated(ctx["union"])):
        arg = _annotated(arg)
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            out.append("{" + ", ".join(_keys(arg)) + "}")
        elif typing.get_origin(arg) is typing.Literal:
            out.extend(str(v) for v in typing.get_args(arg))
        elif arg is not type(None):
            out.append(getattr(arg, "__name__", str(arg)))
    return "one of " + ", ".join(out)


def _annotated(annotation: Any) -> Any:
    return (
        typing.get_args(annotation)[0]
        if typing.get_origin(annotation) is typing.Annotated
        else annotation
    )


def _problem(
    first: ErrorDetails, same: Sequence[ErrorDetails], owner: type[BaseModel] | None
) -> str:
    kind = first["type"]
    if kind == "extra_forbidden":
        key = str(first["loc"][-1])
        keys = _keys(owner) if owner is not None else []
        return f"unknown key {key!r} ({known_names(key, keys)})" if keys else f"unknown key {key!r}"
    if kind == "missing":
        return "a required key, missing"
    if kind in ("value_error", "assertion_error"):
        error = (first.get("ctx") or {}).get("error")
        return str(error) if error is not None else _expected(first)
    wanted = list(
        dict.fromkeys(_expected(e) for e in same if e["type"] not in ("value_error", "missing"))
    )
    either = wanted[0] if len(wanted) == 1 else ", ".join(wanted[:-1]) + ", or " + wanted[-1]
    return f"expected {either}, got {_shown(first['input'])}"


_TYPES: Mapping[str, str] = {
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "string_type": "a string",
    "dict_type": "a mapping",
    "list_type": "a list",
    "tuple_type": "a list",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "none_required": "nothing (null)",
}


def _expected(error: ErrorDetails) -> str:
    kind = error["type"]
    ctx: Mapping[str, Any] = error.get("ctx") or {}
    if kind in _TYPES:
        return _TYPES[kind]
    bounds = {
        "greater_than_equal": ("a number >= ", "ge"),
        "greater_than": ("a number > ", "gt"),
        "less_than_equal": ("a number <= ", "le"),
        "less_than": ("a number < ", "lt"),
    }
    if kind in bounds:
        text, key = bounds[kind]
        bound = ctx.get(key)
        return f"{text}{bound:g}" if isinstance(bound, float) else f"{text}{bound}"
    if kind in ("literal_error", "enum"):
        return f"one of {ctx.get('expected', '')}".replace("'", "")
    if kind in ("too_short", "string_too_short"):
        return (
            f"at least {ctx.get('min_length')} item(s)"
            if kind == "too_short"
            else "a non-empty string"
        )
    if kind in ("too_long", "string_too_long"):
        return (
            f"at most {ctx.get('max_length')} item(s)"
            if kind == "too_long"
            else f"a string of at most {ctx.get('max_length')} characters"
        )
    # A kind no model here uses today: pydantic's own sentence, made to read as ours.
    msg = error["msg"].removeprefix("Input should be ").removeprefix("Value error, ")
    return msg[:1].lower() + msg[1:]


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _keys(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


def _locate(
    model: type[BaseModel] | None, loc: Sequence[int | str]
) -> tuple[str, type[BaseModel] | None]:
    """The path of keys as the file spells them, and the model the last key was looked
    up in (None when the last step was no model's key).

    pydantic's location also names the branch of a union it tried (``int``, ``bool``);
    those are not keys of the file, and are left out by walking the model's own
    annotations alongside the location.
    """
    path: list[str] = []
    current: Any = Any if model is None else model
    holder: type[BaseModel] | None = None
    for part in loc:
        current = _unwrap(current)
        holder = None
        origin = typing.get_origin(current)
        args = typing.get_args(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            holder = current
            current = _field(current, part)
        elif origin in (typing.Union, types.UnionType) and isinstance(part, str):
            # The name of the branch tried, not a key: a model branch is walked on into.
            named = [a for a in map(_annotated, args) if getattr(a, "__name__", None) == part]
            current = named[0] if named else Any
            continue
        elif origin in (list, tuple) and args:
            current = args[0]
        elif origin is dict and len(args) == 2:
            current = args[1]
        else:
            current = Any
        path.append(str(part))
    return ".".join(path), holder


def _field(model: type[BaseModel], part: int | str) -> Any:
    for name, f in model.model_fields.items():
        if part in (name, f.alias):
            return f.annotation
    return None


def _unwrap(annotation: Any) -> Any:
    """``X | None`` is X: the file either has the key or leaves it out."""
    annotation = _annotated(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        if len(models) == 1:
            return models[0]
        if len(args) == 1:
            return args[0]
    return annotation
