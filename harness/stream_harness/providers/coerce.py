"""Reading wire JSON values as the types a normalizer needs, without ever raising.

Wire JSON is whatever the server (or a fuzzer) sent: ``json.loads`` accepts ``NaN``,
``Infinity`` and ``1e400`` (a float infinity), a field may hold a string where a number
belongs, a bool is an ``int`` to Python. Every normalizer reads its fields through these
few helpers, once, so that "a count or an index" means the same thing in every protocol
and no ``int(float("nan"))`` can raise a ValueError in the middle of a stream. They were
copied across the provider modules before; one module keeps one answer.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard


def is_int(value: object) -> TypeGuard[int]:
    """A JSON integer proper (``True`` is an int to Python, not to JSON)."""
    return isinstance(value, int) and not isinstance(value, bool)


def as_int(value: object) -> int | None:
    """A count or an index, or None for anything that is not a whole finite number.

    An integral float (``3.0``, which some servers write) is its integer; ``NaN``,
    ``Infinity``, ``1e400``, ``1.5``, a bool, a string are None: the caller treats the
    field as absent.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def as_str(value: object) -> str | None:
    """A non-empty string, else None (most wire fields treat "" as unset)."""
    return value if isinstance(value, str) and value else None


def as_text(value: object) -> str | None:
    """Any string, the empty one included, else None."""
    return value if isinstance(value, str) else None


def as_dict(value: Any) -> dict[str, Any]:
    """An object field, or ``{}`` for anything else."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """A list field, or ``[]`` for anything else."""
    return value if isinstance(value, list) else []


def dicts(value: Any) -> list[dict[str, Any]]:
    """The objects in a list field; anything else in their place is passed over."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


__all__ = ["as_dict", "as_int", "as_list", "as_str", "as_text", "dicts", "is_int"]
