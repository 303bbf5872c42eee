"""Gemini on Vertex AI (``aiplatform.googleapis.com ... :streamGenerateContent``) -> unified events.

The wire is the Gemini ``GenerateContentResponse`` stream, in the same two framings (SSE
with ``?alt=sse``, else a streamed JSON array), so the translator IS the Gemini one
(harness/stream_harness/providers/google_generative_ai.py) over the same injected framing. What Vertex
adds is one transformation in front of it: a request sent with the system parameter
``$alt=json;enum-encoding=int`` (the generated REST clients of google-cloud-aiplatform)
gets its enum fields as proto numbers (``"finishReason": 1``), which are named here from
``specs/vertex_enums.yaml`` before the Gemini translator reads the chunk. Vertex's own
fields (``createTime``, ``trafficType``, ``citationMetadata.citations``, streamed
``partialArgs``) the Gemini translator already reads or ignores. The mapping and its
sources are in specs/protocols/vertex-gemini.md.

Its own registration (``order`` before google-generative-ai, whose URL rule matches
Vertex URLs too) makes Vertex traffic visible as Vertex in reports and detection; the stop
values share the Gemini section of specs/stop_reasons.yaml.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stream_harness.contract import facts
from stream_harness.providers.google_generative_ai import GoogleGenerativeAINormalizer
from stream_harness.providers.registry import Detect, Protocol, register
from stream_harness.wire.framing import SSE_OR_JSON_ARRAY

TABLE_NAME: Final = "vertex_enums.yaml"


class VertexEnumTableError(ValueError):
    """``specs/vertex_enums.yaml`` is malformed (a bug in the package, not the input)."""


class _Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class _EnumSpec(_Spec):
    source: str = Field(min_length=1)
    values: dict[int, str] = Field(min_length=1)


class _FieldSpec(_Spec):
    path: str = Field(min_length=1)
    enum: str = Field(min_length=1)
    source: str = Field(min_length=1)


class _FileSpec(_Spec):
    enums: dict[str, _EnumSpec] = Field(min_length=1)
    fields: list[_FieldSpec] = Field(min_length=1)


# One step of a field path: an object key, and whether its value is a list to walk.
_Step = tuple[str, bool]
_STEP: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[\])?")


@dataclass(frozen=True, slots=True)
class EnumField:
    """One enum-valued field of a chunk: where it is and the names of its numbers."""

    path: str
    steps: tuple[_Step, ...]
    names: Mapping[int, str]


@dataclass(frozen=True, slots=True)
class VertexEnumTable:
    fields: tuple[EnumField, ...]
    # A chunk whose text has none of the fields followed by a number needs no work: one
    # regex search instead of walking every path (the common case is named enums).
    numeric: re.Pattern[str]


def _steps(path: str) -> tuple[_Step, ...]:
    steps = []
    for piece in path.split("."):
        match = _STEP.fullmatch(piece)
        if match is None:
            raise VertexEnumTableError(
                f"specs/{TABLE_NAME}: field path {path!r}: bad step {piece!r}"
            )
        steps.append((match.group(1), match.group(2) is not None))
    if steps[-1][1]:
        raise VertexEnumTableError(f"specs/{TABLE_NAME}: field path {path!r} ends in a list")
    return tuple(steps)


def parse_enum_table(data: Any) -> VertexEnumTable:
    """Check the loaded YAML and build the lookup (separate from the read, for tests)."""
    try:
        spec = _FileSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise VertexEnumTableError(f"specs/{TABLE_NAME}: {where}: {err['msg']}") from None
    fields = []
    for row in spec.fields:
        enum = spec.enums.get(row.enum)
        if enum is None:
            raise VertexEnumTableError(
                f"specs/{TABLE_NAME}: field {row.path!r} names no enum {row.enum!r}"
            )
        fields.append(EnumField(row.path, _steps(row.path), dict(enum.values)))
    leaves = sorted({f.steps[-1][0] for f in fields})
    numeric = re.compile(r'"(?:' + "|".join(leaves) + r')"\s*:\s*-?\d')
    return VertexEnumTable(tuple(fields), numeric)


@functools.cache
def enum_table() -> VertexEnumTable:
    """The table, read once per process through the specs loader."""
    return parse_enum_table(facts.load_yaml(TABLE_NAME))


def _rewrite(value: Any, steps: tuple[_Step, ...], names: Mapping[int, str]) -> Any:
    """``value`` with the enum at ``steps`` named; the same object when nothing changed
    (copy on write: the chunk may be shared with the caller's parsed body)."""
    if not isinstance(value, dict):
        return value
    (key, is_list), rest = steps[0], steps[1:]
    if key not in value:
        return value
    current = value[key]
    if not rest:
        # bool is an int in Python, never an enum number on the wire.
        if type(current) is not int:
            return value
        return {**value, key: names.get(current, str(current))}
    if is_list:
        if not isinstance(current, list):
            return value
        items = [_rewrite(item, rest, names) for item in current]
        if all(new is old for new, old in zip(items, current, strict=True)):
            return value
        return {**value, key: items}
    new = _rewrite(current, rest, names)
    return value if new is current else {**value, key: new}


def named_enums(chunk: Any, raw: str | None = None) -> Any:
    """A chunk with every integer enum of the table replaced by its name.

    ``raw`` (the chunk's JSON text) lets a chunk without any numeric enum skip the walk.
    """
    table = enum_table()
    if raw is not None and table.numeric.search(raw) is None:
        return chunk
    for field in table.fields:
        chunk = _rewrite(chunk, field.steps, field.names)
    return chunk


class VertexGeminiNormalizer(GoogleGenerativeAINormalizer):
    """The Gemini translator, reading chunks whose integer enums were named first."""

    protocol = "vertex-gemini"

    def on_value(self, obj: Any, raw: str) -> None:
        super().on_value(named_enums(obj, raw), raw)


Normalizer = VertexGeminiNormalizer

__all__ = [
    "EnumField",
    "Normalizer",
    "VertexEnumTable",
    "VertexEnumTableError",
    "VertexGeminiNormalizer",
    "enum_table",
    "named_enums",
    "parse_enum_table",
]

PROTOCOL = register(
    Protocol(
        id="vertex-gemini",
        title="Gemini on Vertex AI (streamGenerateContent, incl. integer enums)",
        framing=SSE_OR_JSON_ARRAY,
        translator=VertexGeminiNormalizer,
        detect=Detect(
            # Regional and global hosts, express mode (/v1/publishers/google/models/...),
            # tuned-model endpoints, and the Vertex path behind a proxy.
            url=(
                r"aiplatform\.googleapis\.com/[^?#]*:(?:stream)?[gG]enerateContent",
                r"/projects/[^/?#]+/locations/[^/?#]+/[^?#]*:(?:stream)?[gG]enerateContent",
                r"/publishers/google/models/[^/?#:]+:(?:stream)?[gG]enerateContent",
            ),
            # Vertex-only fields of a chunk (createTime on every chunk, usageMetadata
            # trafficType), after a Gemini field, within the first 4 KiB.
            body=(rb'"(?:candidates|usageMetadata)"\s*:.*"(?:createTime|trafficType)"\s*:',),
        ),
        stop_reasons="google-generative-ai",
        order=39,
    )
)
