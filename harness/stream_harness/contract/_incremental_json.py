"""The state machine behind :class:`stream_harness.contract.partial_json.IncrementalJSON`.

It reads JSON text in fragments and keeps only what it has not consumed yet (an
unfinished number or literal, or half an escape: a few characters), so feeding costs
time linear in the total input. Everything it has parsed lives in a stack of open
containers; a container that closes becomes a finished value and is never copied or
rebuilt again. :meth:`Parser.live` rebuilds only the spine (shallow copies of the open
containers) so that a live value handed out earlier never changes under its holder.

Policy lives in :mod:`stream_harness.contract.partial_json`: which value to show for run-together
values, and when to hand the whole text to the recovery cascade instead of trusting
this parser. This module only reports what it saw: the completed top-level values,
whether a string needed repair, and the first thing it could not parse (``failure``).

String repairs follow ``partial_json.repair_json`` exactly, so the decoded value of a
string equals what a strict parse of the repaired text gives: a raw control character
stands for itself, an invalid escape (``\\w``, a ``\\u`` without four hex digits)
stands for a literal backslash followed by the characters as written.
"""

from __future__ import annotations

import re
from typing import Any, Final

from stream_harness.contract.limits import JSON_MAX_DEPTH

# What the next token may be.
_VALUE: Final = 0  # a value: at the top level, after ':' or after ',' in an array
_VALUE_OR_END: Final = 1  # after '['
_KEY: Final = 2  # after ',' in an object
_KEY_OR_END: Final = 3  # after '{'
_COLON: Final = 4  # after a key
_COMMA_OR_END: Final = 5  # after a value inside a container
_AFTER_TOP: Final = 6  # after a complete top-level value: only whitespace is JSON here

# Which string is open.
_NO_STRING: Final = 0
_VALUE_STRING: Final = 1
_KEY_STRING: Final = 2

# A pending number longer than this is not worth re-scanning on every fragment; the
# parser stops and the cascade decides at close (json.loads rejects ints this long).
MAX_PENDING_SCALAR: Final = 4096
# Every live value rebuilds the open containers, so depth bounds the cost of a read;
# past this depth the parser stops. The same bound as the cascade's (stream_harness.contract.limits), so
# that the live values and the final value agree at every depth, the limit included.
MAX_DEPTH: Final = JSON_MAX_DEPTH

# The C json scanner uses only ASCII digits (``\d`` would admit other Unicode digits).
_WS = re.compile(r"[ \t\n\r]*")
_STRING_RUN = re.compile(r'[^"\\\x00-\x1f]*')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
# Every character that could still belong to the number being read.
_NUMBER_SPAN = re.compile(r"-?[0-9]*(?:\.[0-9]*)?(?:[eE][-+]?[0-9]*)?")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_HEX_PREFIX = re.compile(r"[0-9a-fA-F]{0,3}")
_LOW_SURROGATE = re.compile(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_ESCAPE_PREFIX = re.compile(r"(?:\\(?:u[0-9a-fA-F]{0,3})?)?")

_SIMPLE_ESCAPES: Final = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
# json.loads accepts NaN and the infinities, so they count as literals here too.
_LITERALS: Final[dict[str, Any]] = {
    "true": True,
    "false": False,
    "null": None,
    "NaN": float("nan"),
    "Infinity": float("inf"),
    "-Infinity": float("-inf"),
}
_LITERAL_BY_FIRST: Final = {word[0]: word for word in _LITERALS if word[0] != "-"}


class _Missing:
    """Marks "no live value yet" (distinct from a live ``None``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


class _Frame:
    """One open container; ``items`` holds only finished children."""

    __slots__ = ("is_object", "items", "key")

    def __init__(self, is_object: bool) -> None:
        self.is_object = is_object
        self.items: Any = {} if is_object else []
        self.key = ""  # the key whose value is being read (objects only)


class Parser:
    """Incremental JSON reader over a sequence of top-level values.

    After a complete top-level value, anything but whitespace starts the next one, so
    run-together values (``{"a":1}{"b":2}``) are read one after another into
    :attr:`values`. Once ``failure`` is set the parser ignores further input: its state
    stays that of the longest prefix it could read.
    """

    def __init__(self) -> None:
        self._pending = ""  # unconsumed text: a partial number, literal or escape
        self._offset = 0  # position of _pending in the whole input, for messages
        self._expect = _VALUE
        self._stack: list[_Frame] = []
        self._string = _NO_STRING
        self._pieces: list[str] = []  # decoded string parts not yet joined
        self._joined = ""  # decoded string prefix already joined
        self.values: list[Any] = []
        self.repaired = False
        self.max_depth = 0
        self.failure: str | None = None

    # -- input ----------------------------------------------------------------------

    def push(self, fragment: str) -> None:
        if self.failure is not None or not fragment:
            return
        buf = self._pending + fragment if self._pending else fragment
        try:
            pos = self._run(buf)
        except ValueError as exc:  # int() past Python's digit limit
            self.failure = f"{exc} (after offset {self._offset})"
            return
        if self.failure is not None:
            return
        self._offset += pos
        self._pending = buf[pos:]
        if len(self._pending) > MAX_PENDING_SCALAR:
            self.failure = (
                f"token longer than {MAX_PENDING_SCALAR} characters at offset {self._offset}"
            )

    def _fail(self, buf: str, pos: int, what: str) -> int:
        self.failure = f"{what} {buf[pos : pos + 1]!r} at offset {self._offset + pos}"
        return len(buf)

    def _run(self, buf: str) -> int:
        """Consume as much of ``buf`` as can be decided; return where to resume."""
        n = len(buf)
        pos = 0
        stack = self._stack
        while True:
            if self._string:
                pos = self._scan_string(buf, pos, n)
                if self._string:
                    return pos
            if pos >= n:
                return pos
            c = buf[pos]
            if c in " \t\n\r":
                pos = _WS.match(buf, pos).end()  # type: ignore[union-attr]  # always matches
                if pos >= n:
                    return pos
                c = buf[pos]
            expect = self._expect
            if expect == _COMMA_OR_END:
                if c == ",":
                    self._expect = _KEY if stack[-1].is_object else _VALUE
                elif (c == "}" and stack[-1].is_object) or (c == "]" and not stack[-1].is_object):
                    self._add(stack.pop().items)
                else:
                    return self._fail(buf, pos, "expected ',' or a closing bracket, got")
                pos += 1
            elif expect == _COLON:
                if c != ":":
                    return self._fail(buf, pos, "expected ':', got")
                self._expect = _VALUE
                pos += 1
            elif expect == _KEY or expect == _KEY_OR_END:
                if c == '"':
                    self._open_string(_KEY_STRING)
                elif c == "}" and expect == _KEY_OR_END:
                    self._add(stack.pop().items)
                else:
                    return self._fail(buf, pos, "expected a key, got")
                pos += 1
            elif c == "]" and expect == _VALUE_OR_END:
                self._add(stack.pop().items)
                pos += 1
            else:  # a value (after _AFTER_TOP: the next run-together value)
                if c == '"':
                    self._open_string(_VALUE_STRING)
                elif c == "{" or c == "[":
                    if len(stack) >= MAX_DEPTH:
                        return self._fail(buf, pos, f"nesting deeper than {MAX_DEPTH} at")
                    stack.append(_Frame(c == "{"))
                    self.max_depth = max(self.max_depth, len(stack))
                    self._expect = _KEY_OR_END if c == "{" else _VALUE_OR_END
                else:
                    end = self._scalar(buf, pos, n)
                    if end < 0:
                        return pos  # may continue in the next fragment
                    pos = end
                    continue
                pos += 1

    def _scalar(self, buf: str, pos: int, n: int) -> int:
        """Read a number or literal at ``pos``; -1 if it may still continue."""
        c = buf[pos]
        word = "-Infinity" if buf.startswith("-I", pos) else _LITERAL_BY_FIRST.get(c)
        if word is not None:
            if buf.startswith(word, pos):
                self._add(_LITERALS[word])
                return pos + len(word)
            if pos + len(word) > n and word.startswith(buf[pos:]):
                return -1
            return self._fail(buf, pos, "unexpected")
        end = _NUMBER_SPAN.match(buf, pos).end()  # type: ignore[union-attr]
        if end >= n:
            return -1  # a delimiter must follow before the number is known
        if end == pos or not _NUMBER.fullmatch(buf, pos, end):
            return self._fail(buf, pos, "unexpected")
        self._add(_number(buf[pos:end]))
        return end

    def _add(self, value: Any) -> None:
        if self._stack:
            frame = self._stack[-1]
            if frame.is_object:
                frame.items[frame.key] = value
            else:
                frame.items.append(value)
            self._expect = _COMMA_OR_END
        else:
            self.values.append(value)
            self._expect = _AFTER_TOP

    # -- strings --------------------------------------------------------------------

    def _open_string(self, kind: int) -> None:
        self._string = kind
        self._pieces = []
        self._joined = ""

    def _scan_string(self, buf: str, pos: int, n: int) -> int:
        """Decode string content from ``pos``; return where to resume."""
        pieces = self._pieces
        while True:
            end = _STRING_RUN.match(buf, pos).end()  # type: ignore[union-attr]
            if end > pos:
                pieces.append(buf[pos:end])
            if end >= n:
                return n
            c = buf[end]
            if c == '"':
                self._close_string()
                return end + 1
            if c == "\\":
                decoded = self._escape(buf, end, n)
                if decoded is None:
                    return end  # half an escape: wait, never show it
                pieces.append(decoded[0])
                pos = decoded[1]
            else:  # a raw control character: repair_json escapes it, so it stands for itself
                self.repaired = True
                pieces.append(c)
                pos = end + 1

    def _escape(self, buf: str, at: int, n: int) -> tuple[str, int] | None:
        """Decode the escape at ``at`` (a backslash): (text, resume) or None to wait."""
        if at + 1 >= n:
            return None
        simple = _SIMPLE_ESCAPES.get(buf[at + 1])
        if simple is not None:
            return simple, at + 2
        if buf[at + 1] == "u":
            digits = buf[at + 2 : at + 6]
            if _HEX4.fullmatch(digits):
                code = int(digits, 16)
                # A high surrogate pairs with a following \uDC00-\uDFFF escape, as in json.loads.
                if 0xD800 <= code <= 0xDBFF:
                    after = buf[at + 6 : at + 12]
                    if _LOW_SURROGATE.fullmatch(after):
                        low = int(after[2:], 16)
                        return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), at + 12
                    if len(after) < 6 and _ESCAPE_PREFIX.fullmatch(after):
                        return None
                return chr(code), at + 6
            if at + 6 > n and _HEX_PREFIX.fullmatch(digits):
                return None
        # Invalid escape: repair_json doubles the backslash and reads on after it.
        self.repaired = True
        return "\\", at + 1

    def _string_so_far(self) -> str:
        if self._pieces:
            self._joined += "".join(self._pieces)
            self._pieces.clear()
        return self._joined

    def _close_string(self) -> None:
        text = self._string_so_far()
        kind = self._string
        self._string = _NO_STRING
        self._joined = ""
        if kind == _KEY_STRING:
            self._stack[-1].key = text
            self._expect = _COLON
        else:
            self._add(text)

    # -- output ---------------------------------------------------------------------

    def live(self) -> Any:
        """The value after the last completed one, as far as read; MISSING if none.

        Only the spine is new: each open container is a shallow copy of its finished
        children plus its open child.
        """
        child: Any = self._string_so_far() if self._string == _VALUE_STRING else MISSING
        for frame in reversed(self._stack):
            items = frame.items.copy()
            if child is not MISSING:
                if frame.is_object:
                    items[frame.key] = child
                else:
                    items.append(child)
            child = items
        return child

    def finish(self) -> list[Any] | None:
        """The top-level values if the input ended cleanly here, else None.

        Clean means: no failure, no open string or container, and the unconsumed rest
        (if any) is a complete top-level number (the end of input delimits it).
        """
        if self.failure is not None or self._string or self._stack:
            return None
        if not self._pending:
            return self.values
        if self._expect in (_VALUE, _AFTER_TOP) and _NUMBER.fullmatch(self._pending):
            try:
                return [*self.values, _number(self._pending)]
            except ValueError:  # past sys.get_int_max_str_digits(): the cascade decides
                return None
        return None


def _number(token: str) -> int | float:
    if "." in token or "e" in token or "E" in token:
        return float(token)
    return int(token)
