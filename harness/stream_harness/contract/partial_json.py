"""Best-effort values from JSON text that may be truncated, slightly broken, or doubled.

Tool-call arguments arrive as JSON fragments. Mid-stream, consumers want a live value
to show; at the end they want the best value the text allows, and never an exception.
Both follow pi's ``parseStreamingJson`` (with oh-my-pi's ``repairJson``), plus one step
for values run together.

The recovery cascade (:func:`parse_partial`, :func:`cascade`)
------------------------------------------------------------------

0. Empty or whitespace-only text gives ``{}``; so does text nested deeper than
   ``stream_harness.contract.limits.JSON_MAX_DEPTH`` (step ``too_deep``, checked without recursion: the
   accumulator turns it into an error, never a silent ``{}``).
1. ``strict``: ``json.loads(text)``.
2. ``repaired``: ``json.loads(repair_json(text))``, tried only if the repair changed
   something. :func:`repair_json` rewrites, inside strings only, a raw control character
   as its escape (``\\b \\t \\n \\f \\r`` short forms, else ``\\u00XX``) and doubles the
   backslash of an invalid escape (``\\w``, ``\\s``, ``\\p``, a ``\\u`` without four hex
   digits, a backslash at the end of the text).
3. ``run_together``: the repaired text starts with a complete JSON value and more
   follows it (``{"a":1}{"b":2}``: parallel calls squashed into one call's arguments,
   or arguments sent twice). The complete values read one after another, with
   whitespace allowed between them, are combined: if all are equal, that value; if all
   are objects, one object merged in order, a later key replacing an earlier one's value
   in the earlier one's place (as if each ``}{`` were a ``,``); otherwise the first.
   A rest that is not a complete value (a truncated next value, stray ``]``) is dropped.
   This step sits before partial parsing because a text that holds a complete value and
   then more is not a truncation, and partial-json-parser fails on it ("Extra data").
4. ``partial``: partial-json-parser on the text (it completes a truncated text and may
   guess: ``tr`` becomes ``true``, ``12.`` becomes ``12``).
5. ``repaired_partial``: partial-json-parser on the repaired text, if the repair changed
   something.
6. ``failed``: ``{}``.

A partial step (4, 5) that yields ``None`` gives ``{}`` (pi's ``result ?? {}``). Every
step catches any ``Exception``: partial-json-parser raises more than JSONDecodeError
(IndexError on ``]]]``, AssertionError on some inputs), json raises RecursionError on
deep nesting.

The live value (:class:`IncrementalJSON`)
-----------------------------------------

The live value after each fragment is a prefix of the final value, in this sense:

- Object keys appear in input order and never vanish. A key appears as soon as its
  value has started being a string, array or object, or when its number or literal is
  complete. Array elements appear under the same rule.
- A string is shown as its decoded prefix and only grows; never with half an escape
  sequence (nor half a surrogate pair).
- Numbers and literals (``true``, ``false``, ``null``, and ``NaN``/``Infinity``, which
  json.loads accepts) appear only when complete: a literal when its last character
  arrives, a number when a delimiter follows it, or at close.
- Completed values (every value but the last one of each open container) equal their
  final values. So while the text is one JSON value, valid so far, each live value is
  a prefix of every later one and of the final value.
- Before the top-level value has started, or while it is an unfinished number or
  literal, the live value is ``{}`` (what the cascade gives for empty text).
- After complete top-level values, the live value is those values combined by the rule
  of cascade step 3; a value that follows them shows only once complete.
- Input that is not JSON, even after string repairs (a stray character, trailing
  commas, an unfinished number longer than 4096 characters, nesting deeper than
  ``JSON_MAX_DEPTH``)
  freezes the live value at the longest prefix that was; ``failure`` says where.
  String repairs are made on the fly (a raw newline shows as a newline, ``\\w`` as a
  backslash and ``w``), so such strings stay live. Past a failure the final value is
  the cascade's, which need not extend the live value (it may be ``{}``).
- With duplicate keys the later value replaces the earlier, as in json.loads; within
  one JSON value that is the only case where a live value is not a prefix of the next.

Live values share their finished children with each other and with the final value:
treat them as read-only.

``close()`` returns exactly ``parse_partial(text)`` for the whole text: the parser's own
value when the text was one strict JSON value, the cascade's result otherwise (repairs,
truncation, run-together values, failure, nesting deeper than 100 where json.loads
could hit the recursion limit).
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from typing import Any, Final, NamedTuple

import partial_json_parser as _pjp

from stream_harness.contract._incremental_json import MISSING, Parser
from stream_harness.contract.limits import json_depth_exceeds

__all__ = ["Cascade", "IncrementalJSON", "Step", "cascade", "parse_partial", "repair_json"]


# ---------------------------------------------------------------------------
# Repair
# ---------------------------------------------------------------------------

_STRING_SPECIAL = re.compile(r'["\\\x00-\x1f]')
_VALID_ESCAPE_CHARS: Final = frozenset('"\\/bfnrt')
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_SHORT_CONTROL_ESCAPES: Final = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def repair_json(text: str) -> str:
    """Fix what models get wrong inside JSON strings; the same string if nothing was.

    A port of oh-my-pi's ``repairJson``: one pass that copies unchanged spans and
    tracks strings by their quotes (outside a string it only looks for the next ``"``).
    """
    out: list[str] = []
    copied = 0  # text[:copied] is already in out
    pos = 0
    n = len(text)
    while True:
        quote = text.find('"', pos)
        if quote < 0:
            break
        pos = quote + 1
        while True:  # inside a string
            found = _STRING_SPECIAL.search(text, pos)
            if found is None:
                pos = n
                break
            at = found.start()
            char = text[at]
            if char == '"':
                pos = at + 1
                break
            if char == "\\":
                follower = text[at + 1 : at + 2]
                if follower in _VALID_ESCAPE_CHARS:
                    pos = at + 2
                    continue
                if follower == "u" and _HEX4.match(text, at + 2):
                    pos = at + 6
                    continue
                replacement = "\\\\"
            else:
                replacement = _SHORT_CONTROL_ESCAPES.get(char) or f"\\u{ord(char):04x}"
            out.append(text[copied:at])
            out.append(replacement)
            copied = pos = at + 1
        if pos >= n:
            break
    if not out:
        return text
    out.append(text[copied:])
    return "".join(out)


# ---------------------------------------------------------------------------
# The cascade
# ---------------------------------------------------------------------------


class Step(StrEnum):
    """Which cascade step produced the value (module docstring, steps 0-6)."""

    EMPTY = "empty"
    TOO_DEEP = "too_deep"
    STRICT = "strict"
    REPAIRED = "repaired"
    RUN_TOGETHER = "run_together"
    PARTIAL = "partial"
    REPAIRED_PARTIAL = "repaired_partial"
    FAILED = "failed"


class Cascade(NamedTuple):
    value: Any
    step: Step


_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def parse_partial(text: str) -> Any:
    """The best value ``text`` allows, by the cascade in the module docstring; never raises."""
    return cascade(text).value


def cascade(text: str) -> Cascade:
    """:func:`parse_partial` plus the step that decided, for checks that must flag
    repaired, run-together or truncated arguments."""
    if not text.strip():
        return Cascade({}, Step.EMPTY)
    if json_depth_exceeds(text):
        return Cascade({}, Step.TOO_DEEP)
    try:
        return Cascade(json.loads(text), Step.STRICT)
    except Exception:
        pass
    repaired = repair_json(text)
    changed = repaired is not text
    if changed:
        try:
            return Cascade(json.loads(repaired), Step.REPAIRED)
        except Exception:
            pass
    values = _leading_values(repaired)
    if values:
        return Cascade(combine_values(values), Step.RUN_TOGETHER)
    for step, candidate in ((Step.PARTIAL, text), (Step.REPAIRED_PARTIAL, repaired)):
        if step is Step.REPAIRED_PARTIAL and not changed:
            break
        try:
            value = _pjp.loads(candidate)
        except Exception:
            continue
        return Cascade({} if value is None else value, step)
    return Cascade({}, Step.FAILED)


def _leading_values(text: str) -> list[Any]:
    """The complete JSON values at the start of ``text``, one after another."""
    values: list[Any] = []
    pos = _WS.match(text).end()  # type: ignore[union-attr]  # always matches
    while pos < len(text):
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except Exception:
            break
        values.append(value)
        pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
    return values


def combine_values(values: list[Any]) -> Any:
    """One value for run-together values (cascade step 3); ``values`` is not empty."""
    first = values[0]
    if all(value == first for value in values[1:]):
        return first
    if all(isinstance(value, dict) for value in values):
        merged: dict[str, Any] = {}
        for value in values:
            merged.update(value)
        return merged
    return first


# ---------------------------------------------------------------------------
# Incremental
# ---------------------------------------------------------------------------

# json.loads recurses per nesting level; past this depth close() lets the cascade decide,
# so that a RecursionError there is reproduced rather than papered over.
_TRUSTED_DEPTH: Final = 100


class IncrementalJSON:
    """Live values from JSON text fed in fragments (rules in the module docstring).

    ``push`` costs time linear in the fragment (the text is never re-parsed);
    ``value`` costs no more than building the live value, and only when the text changed
    since the last read. ``close`` does not change state: feeding may continue after it.
    """

    def __init__(self) -> None:
        self._parser = Parser()
        self._parts: list[str] = []
        self._live: Any = {}
        self._stale = False
        # Text given to feed_whole and not read by the parser yet (see there).
        self._unread: str | None = None

    def push(self, fragment: str) -> None:
        """Feed a fragment without building the live value."""
        if fragment:
            self._parts.append(fragment)
            if self._unread is not None:
                unread, self._unread = self._unread, None
                self._parser.push(unread)
            if self._parser.failure is None:
                self._parser.push(fragment)
                self._stale = True

    def feed_whole(self, text: str, value: Any) -> Any:
        """Feed ``text``, a whole JSON value whose strict parse is ``value``; return it.

        For arguments that arrive parsed (Gemini sends a call's ``args`` as an object,
        which the normalizer dumps to text): reading the text again in Python would cost
        20 times ``json.loads`` (5 ms for 100 KB), so the parser reads it only if more
        text follows. The caller guarantees ``json.loads(text) == value``; the live and
        final values are then ``value`` itself. After other input it is ``feed(text)``.
        """
        if self._parts or not text:
            return self.feed(text)
        self._parts.append(text)
        self._unread = text
        self._live = value
        self._stale = False
        return value

    def feed(self, fragment: str) -> Any:
        """Feed a fragment; return the live value after it."""
        self.push(fragment)
        return self.value

    @property
    def value(self) -> Any:
        """The live value after the input so far."""
        if self._stale:
            self._stale = False
            parser = self._parser
            if parser.values:
                self._live = combine_values(parser.values)
            else:
                live = parser.live()
                self._live = {} if live is MISSING else live
        return self._live

    @property
    def text(self) -> str:
        """The whole input so far."""
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    @property
    def failure(self) -> str | None:
        """Where the input stopped being JSON (even after string repairs), if it did."""
        return self._parser.failure

    def close(self) -> Any:
        """The final value: always equal to ``parse_partial(self.text)``."""
        return self.close_cascade().value

    def close_cascade(self) -> Cascade:
        """The final value with the cascade step that gave it (``cascade(self.text)``),
        so a consumer can tell a strict parse from a repaired guess (agent check A13)
        without a second parse of the text."""
        if self._unread is not None:
            return Cascade(self._live, Step.STRICT)  # the strict parse (feed_whole)
        parser = self._parser
        values = parser.finish()
        if (
            values is not None
            and len(values) == 1
            and not parser.repaired
            and parser.max_depth <= _TRUSTED_DEPTH
        ):
            return Cascade(values[0], Step.STRICT)
        return cascade(self.text)


# "No parsed value was given" (None is a JSON value).
_NOTHING: Any = object()


class ArgumentsLog:
    """One tool call's argument fragments, readable as the live value after any of them.

    The accumulator feeds every fragment here and hands each ``toolcall_delta`` a
    position instead of a built value (events.DeferredArguments), because most consumers
    never read most live values, and building each one costs a parse of the fragment in
    Python plus a copy of the text so far. Feeding only keeps the fragment. Reading parses
    up to the position with one :class:`IncrementalJSON` that only moves forward (an
    older position than the last read starts a new one), so reading every event in order,
    during the stream or after it, stays linear in the text plus the values read. The
    value at a position is the same however and whenever it is read: the parser is
    pushed the same fragments. The final value is :func:`parse_partial` of the whole text
    (json.loads first), which is what :meth:`IncrementalJSON.close` guarantees too.
    """

    __slots__ = ("_at", "_cursor", "_parsed", "_parts")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._cursor = IncrementalJSON()
        self._at = 0
        # The value of a call that arrived parsed (feed_whole as the first fragment).
        self._parsed: Any = _NOTHING

    def feed(self, fragment: str) -> int:
        """Keep a fragment; return the position whose live value follows it."""
        self._parts.append(fragment)
        return len(self._parts)

    def feed_whole(self, text: str, value: Any) -> int:
        """Keep ``text``, a whole JSON value whose strict parse is ``value``.

        As :meth:`IncrementalJSON.feed_whole`: when it is the call's first text, its live
        and final values are ``value`` itself, never a parse of ``text``.
        """
        if not self._parts and text:
            self._parsed = value
        self._parts.append(text)
        return len(self._parts)

    @property
    def text(self) -> str:
        return "".join(self._parts)  # never joined in place: positions index the fragments

    def value_at(self, position: int) -> Any:
        """The live value after the first ``position`` fragments."""
        if position == 1 and self._parsed is not _NOTHING:
            return self._parsed
        if position < self._at:
            self._cursor, self._at = IncrementalJSON(), 0
        cursor = self._cursor
        for fragment in self._parts[self._at : position]:
            cursor.push(fragment)
        self._at = position
        return cursor.value

    @property
    def value(self) -> Any:
        """The live value after every fragment so far."""
        return self.value_at(len(self._parts))

    @property
    def too_deep(self) -> bool:
        """The text nests deeper than ``JSON_MAX_DEPTH``: its value is ``{}`` by the
        cascade's step ``too_deep``, which the accumulator reports as an error."""
        return json_depth_exceeds(self.text)

    def close(self) -> Any:
        """The final value: ``parse_partial`` of the whole text."""
        return self.close_cascade().value

    def close_cascade(self) -> Cascade:
        """The final value and the cascade step that gave it: ``cascade`` of the whole text."""
        if len(self._parts) == 1 and self._parsed is not _NOTHING:
            return Cascade(self._parsed, Step.STRICT)
        if self._at == len(self._parts):
            return self._cursor.close_cascade()  # read to the end already: no second parse
        return cascade(self.text)
