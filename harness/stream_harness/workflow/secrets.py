"""Finding credentials and account identifiers, from the table in ``specs/secrets.yaml``.

The scrubber (:mod:`stream_harness.workflow.scrub`) and the linter (:mod:`stream_harness.workflow.lint`)
both ask this module, so a cassette that ``record`` or ``import`` wrote is clean by the very
rule ``lint`` applies, and a new secret kind is one row in the table, not two code paths.

The scanner returns spans (:class:`Hit`), not verdicts: lint turns them into findings, the
scrubber replaces exactly those characters. Bodies are scanned as latin-1 text, so that
offsets are byte offsets and a body that is not UTF-8 (or not text) can be scanned and
edited without changing any byte outside a secret; every pattern is ASCII, so nothing is
lost by not decoding UTF-8.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias
from urllib.parse import unquote_plus, urlsplit

from pydantic import BaseModel, ConfigDict, ValidationError

from stream_harness.contract import facts

__all__ = [
    "LITERAL_KIND",
    "Hit",
    "Pattern",
    "SecretTable",
    "Where",
    "load_table",
]

TABLE_NAME = "secrets.yaml"
LITERAL_KIND = "api-key-from-environment"
"""The kind of a hit on a secret the caller knows (the key ``record`` sent)."""

Where: TypeAlias = Literal["header", "query", "body"]


class _Row(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Marker(_Row):
    marker: str
    source: str


class _Named(_Row):
    name: str
    kind: str
    source: str


class _PatternRow(_Row):
    kind: str
    regex: str
    hints: list[str]
    where: list[Where]
    description: str
    source: str


class _TableFile(_Row):
    placeholder: str
    placeholders: list[_Marker]
    headers: list[_Named]
    query_parameters: list[_Named]
    body_fields: list[_Named]
    patterns: list[_PatternRow]


@dataclass(frozen=True, slots=True)
class Pattern:
    kind: str
    regex: re.Pattern[str]
    where: frozenset[str]
    hints: tuple[str, ...]
    """Lower-case literals, one of which every match contains."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One secret: ``text[start:end]`` of the scanned text is ``secret``."""

    kind: str
    start: int
    end: int
    secret: str

    def masked(self) -> str:
        """Enough to find the secret again, too little to use it: lint output goes to CI logs."""
        shown = 4 if len(self.secret) >= 12 else 2
        return f"{self.secret[:shown]}...({len(self.secret)} chars)"


@dataclass(frozen=True, slots=True)
class SecretTable:
    placeholder: str
    markers: tuple[str, ...]
    """Lower-cased placeholder markers."""
    headers: Mapping[str, str]
    """Lower-cased header name -> kind."""
    query_parameters: Mapping[str, str]
    """Lower-cased query parameter name -> kind."""
    body_fields: Mapping[str, str]
    """JSON member name (case-sensitive, as JSON is) -> kind."""
    patterns: tuple[Pattern, ...]
    field_regex: re.Pattern[str] | None

    @property
    def kinds(self) -> frozenset[str]:
        """Every kind a hit can have."""
        return frozenset(
            [*self.headers.values(), *self.query_parameters.values(), *self.body_fields.values()]
            + [p.kind for p in self.patterns]
            + [LITERAL_KIND]
        )

    def is_placeholder(self, value: str) -> bool:
        lowered = value.lower()
        return any(marker in lowered for marker in self.markers)

    def header_kind(self, name: str) -> str | None:
        """The kind of a header whose whole value is a credential, or None."""
        return self.headers.get(name.strip().lower())

    def sensitive_value(self, value: str) -> bool:
        """A value of a sensitive header or parameter that is neither empty nor a placeholder."""
        return bool(value.strip()) and not self.is_placeholder(value)

    def query_parameter_kind(self, segment: str) -> str | None:
        """The kind of one ``name=value`` query segment when it carries a credential."""
        name, _, value = segment.partition("=")
        kind = self.query_parameters.get(unquote_plus(name).strip().lower())
        if kind is None or not self.sensitive_value(unquote_plus(value)):
            return None
        return kind

    def scan(self, text: str, where: Where, literals: Iterable[str] = ()) -> list[Hit]:
        """Every secret in ``text`` found by the patterns for ``where`` (and, in bodies, the
        JSON fields), plus every occurrence of the ``literals``; sorted, never overlapping."""
        hits: list[Hit] = []
        for literal in literals:
            if not literal:
                continue
            start = text.find(literal)
            while start != -1:
                hits.append(Hit(LITERAL_KIND, start, start + len(literal), literal))
                start = text.find(literal, start + len(literal))
        lowered = text.lower() if self.patterns else ""
        for pattern in self.patterns:
            if where not in pattern.where:
                continue
            # Substring search first: skipping the regex on texts without any of its
            # literals took the scans of lint over the 8 MB corpus from 5.5 s to 1.6 s (cProfile).
            if not any(hint in lowered for hint in pattern.hints):
                continue
            group = "secret" if "secret" in pattern.regex.groupindex else 0
            for match in pattern.regex.finditer(text):
                self._add(hits, pattern.kind, match, group)
        if where == "body" and self.field_regex is not None:
            for match in self.field_regex.finditer(text):
                kind = self.body_fields[match.group("name")]
                self._add(hits, kind, match, "secret")
        return _non_overlapping(hits)

    def scan_header(self, name: str, value: str, literals: Iterable[str] = ()) -> list[Hit]:
        """A sensitive header is one hit on its whole value; any other is scanned."""
        kind = self.header_kind(name)
        if kind is not None:
            return [Hit(kind, 0, len(value), value)] if self.sensitive_value(value) else []
        return self.scan(value, "header", literals)

    def scan_uri(self, uri: str, literals: Iterable[str] = ()) -> list[Hit]:
        """Sensitive query parameters (a hit on the value) and patterns anywhere in the URI."""
        hits: list[Hit] = []
        for seg_start, segment in _query_segments(uri):
            kind = self.query_parameter_kind(segment)
            if kind is not None:
                value_start = seg_start + segment.find("=") + 1
                hits.append(
                    Hit(kind, value_start, seg_start + len(segment), segment.split("=", 1)[1])
                )
        return _non_overlapping(hits + self.scan(uri, "query", literals))

    def _add(self, hits: list[Hit], kind: str, match: re.Match[str], group: int | str) -> None:
        start, end = match.span(group)
        secret = match.group(group)
        if start < end and not self.is_placeholder(secret):
            hits.append(Hit(kind, start, end, secret))


def _non_overlapping(hits: list[Hit]) -> list[Hit]:
    # Earlier hits win: literals, then the table's rows in order (specific before generic),
    # then JSON fields; a field whose value is an sk- key is reported as the key.
    kept: list[Hit] = []
    for hit in hits:
        if all(hit.end <= k.start or hit.start >= k.end for k in kept):
            kept.append(hit)
    return sorted(kept, key=lambda h: h.start)


def _query_segments(uri: str) -> list[tuple[int, str]]:
    """(offset in ``uri``, ``name=value``) for each query segment."""
    query = urlsplit(uri).query
    if not query:
        return []
    offset = uri.find("?") + 1
    out = []
    for segment in query.split("&"):
        if segment:
            out.append((offset, segment))
        offset += len(segment) + 1
    return out


def split_query(uri: str) -> tuple[str, list[str], str]:
    """``uri`` as (everything before the query, the ``name=value`` segments, the fragment)."""
    base, sep, rest = uri.partition("?")
    if not sep:
        return uri, [], ""
    query, hash_sign, fragment = rest.partition("#")
    return base, [s for s in query.split("&") if s], hash_sign + fragment


@functools.cache
def load_table() -> SecretTable:
    """The table in ``specs/secrets.yaml``, checked once; a broken table raises ValueError
    (it is a bug in the repository, not in the user's input)."""
    try:
        data = _TableFile.model_validate(facts.load_yaml(TABLE_NAME))
    except ValidationError as exc:
        raise ValueError(f"specs/{TABLE_NAME}: {exc}") from exc
    patterns = []
    for row in data.patterns:
        try:
            regex = re.compile(row.regex, re.ASCII)
        except re.error as exc:
            raise ValueError(f"specs/{TABLE_NAME}: pattern {row.kind}: {exc}") from exc
        if not row.hints or any(h != h.lower() or not h for h in row.hints):
            raise ValueError(
                f"specs/{TABLE_NAME}: pattern {row.kind}: hints must be non-empty lower-case literals"
            )
        patterns.append(Pattern(row.kind, regex, frozenset(row.where), tuple(row.hints)))
    fields = {row.name: row.kind for row in data.body_fields}
    field_regex = None
    if fields:
        names = "|".join(re.escape(name) for name in sorted(fields, key=len, reverse=True))
        # A JSON member with a string value; escaped quotes (tool arguments inside a string)
        # do not match, because the name must be between unescaped quotes.
        field_regex = re.compile(
            rf'(?<!\\)"(?P<name>{names})"\s*:\s*"(?P<secret>(?:[^"\\]|\\.)*)"', re.ASCII
        )
    return SecretTable(
        placeholder=data.placeholder,
        markers=tuple(m.marker.lower() for m in data.placeholders),
        headers={row.name.lower(): row.kind for row in data.headers},
        query_parameters={row.name.lower(): row.kind for row in data.query_parameters},
        body_fields=fields,
        patterns=tuple(patterns),
        field_regex=field_regex,
    )
