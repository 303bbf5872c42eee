"""A streamed top-level JSON array: bytes -> one ``JSONLine`` per element | ``FramingError``.

Gemini's ``streamGenerateContent`` without ``alt=sse`` answers with one pretty-printed
JSON array that grows as the model writes: ``[{…}\\n,\\r\\n{…}\\n]``. Each element is
handed on as soon as its closing bracket arrives, so a consumer sees the stream live.

The end of an element is found without parsing (re-running ``json.loads`` on a growing
buffer would be quadratic): one regex match finds a whole element, and the comma before
it, when the buffer already holds it; otherwise a scanner that keeps its depth and
in-string state across chunks takes over. Each byte is looked at no more than twice.
Both work on bytes: the bytes they look for (brackets, quotes, backslashes) are ASCII
and never occur inside a multi-byte UTF-8 sequence, so a character split across chunks
needs no care. Each finished element is then decoded and parsed once with
``json.loads``.

Decisions where Gemini's documentation is silent:

* A body that is one JSON object instead of an array (Gemini's error responses,
  ``{"error": {...}}`` with HTTP 4xx) is emitted as a single element, so a normalizer
  reads errors and chunks the same way.
* Elements must be objects or arrays; a bare string, number or literal is a
  ``FramingError``. Gemini never sends them, and bracketed values are what make the
  element end findable without lookahead.
* An element whose brackets balance but whose text is not valid JSON or not valid UTF-8
  is a ``FramingError`` for that element only: the scanner still knows where the next
  element starts, so decoding goes on. Any other error (a missing comma, text after the
  closing ``]``, a missing ``]`` at ``close()``) fails the decoder: ``feed`` and
  ``close`` return ``[]`` afterwards. Elements emitted before stay emitted.
* A UTF-8 BOM before the array is skipped.
"""

from __future__ import annotations

import json
import re
from typing import Final, TypeAlias

from stream_harness.contract.limits import FRAME_MAX_BYTES
from stream_harness.contract.limits import loads as bounded_loads

from ._types import FramingError, JSONLine

JSONArrayOutput: TypeAlias = JSONLine | FramingError

# Where the scanner stands.
_START: Final = 0  # nothing but whitespace yet
_FIRST: Final = 1  # after "[": an element or "]"
_NEXT: Final = 2  # after ",": an element
_AFTER: Final = 3  # after an element: "," or "]"
_ELEMENT: Final = 4  # inside an element
_END: Final = 5  # after the closing "]" (or the single object): whitespace only
_FAILED: Final = 6
_CLOSED: Final = 7

# Possessive quantifiers (Python 3.11) keep both linear: no backtracking into a string.
_SKIP: Final = re.compile(rb'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")*+', re.DOTALL)
_STRING_REST: Final = re.compile(rb'(?:[^"\\]++|\\.)*+', re.DOTALL)
_NON_WHITESPACE: Final = re.compile(rb"[^ \t\r\n]")


def _whole_element_pattern(depth: int) -> bytes:
    """A complete bracketed value nested at most ``depth`` deep, as one regex.

    Like the scanner it does not pair bracket kinds (``json.loads`` checks that), so
    where it matches it ends exactly where the scanner would. It fails on an element
    that is incomplete in the buffer or deeper, and the scanner takes over; an element
    is tried once, so every byte is looked at no more than twice.
    """
    string = rb'"(?:[^"\\]++|\\.)*+"'
    inner = rb'(?:[^"\[\]{}]++|' + string + rb")*+"
    for _ in range(depth - 1):
        inner = rb'(?:[^"\[\]{}]++|' + string + rb"|[\[{]" + inner + rb"[\]}])*+"
    return rb"[\[{]" + inner + rb"[\]}]"


# Measured (benchmarks/bench_wire.py shapes, whole bodies): one regex call per element
# instead of one scanner step per bracket makes the decoder 1.4-1.6 times as fast; with
# it, decoding plus json.loads costs about 1.6-2x json.loads alone.
_WHOLE_ELEMENT: Final = re.compile(_whole_element_pattern(12), re.DOTALL)
_NEXT_ELEMENT: Final = re.compile(
    rb"[ \t\r\n]*+,[ \t\r\n]*+(" + _whole_element_pattern(12) + rb")", re.DOTALL
)
_BOM: Final = b"\xef\xbb\xbf"
_QUOTE: Final = 0x22
_BACKSLASH: Final = 0x5C
_OPENERS: Final = frozenset(b"[{")


class JSONArrayDecoder:
    """Incremental streamed-array parser: any chunking of a body gives the same outputs."""

    def __init__(self, max_element_bytes: int = FRAME_MAX_BYTES) -> None:
        # One element is held whole until its closing bracket: bounded like one SSE line
        # or one JSON line (stream_harness.contract.limits.FRAME_MAX_BYTES).
        self.max_element_bytes = max_element_bytes
        self._phase = _START
        self._buf = bytearray()
        self._base = 0  # stream offset of _buf[0]
        self._pos = 0  # next index of _buf to scan
        self._start = 0  # index in _buf where the current element starts
        self._depth = 0
        self._in_string = False
        self._single = False  # the body is one object, not an array

    def feed(self, chunk: bytes) -> list[JSONArrayOutput]:
        if self._phase >= _FAILED:
            return []
        self._buf += chunk
        out: list[JSONArrayOutput] = []
        self._scan(out)
        if self._phase < _FAILED:
            self._compact()
            if self._phase == _ELEMENT and len(self._buf) - self._start > self.max_element_bytes:
                out.append(self._too_large(self._base + self._start))
        return out

    def _too_large(self, offset: int) -> FramingError:
        self._phase = _FAILED
        self._buf = bytearray()
        return FramingError(
            f"array element starting at byte {offset} is longer than "
            f"{self.max_element_bytes} bytes (STREAM_HARNESS_FRAME_MAX_BYTES)",
            offset,
        )

    def close(self) -> list[JSONArrayOutput]:
        phase = self._phase
        if phase >= _FAILED:
            return []
        self._phase = _CLOSED
        end = self._base + len(self._buf)
        self._buf = bytearray()
        if phase == _END:
            return []
        if phase == _START:
            return [FramingError("body ended before a JSON array or object started", end)]
        if phase == _ELEMENT:
            start = self._base + self._start
            what = "JSON object" if self._single else "JSON array was not closed: its last element"
            return [
                FramingError(
                    f"{what} starting at byte {start} is incomplete "
                    f"({end - start} bytes before the end of the body)",
                    start,
                )
            ]
        return [FramingError("JSON array was not closed: body ended before its ']'", end)]

    # -- internals ---------------------------------------------------------------

    def _scan(self, out: list[JSONArrayOutput]) -> None:
        buf = self._buf
        n = len(buf)
        pos = self._pos
        phase = self._phase
        depth = self._depth
        in_string = self._in_string
        while pos < n:
            if phase == _ELEMENT:
                if in_string:
                    # Inside a string that was cut by the end of an earlier chunk.
                    pos = _STRING_REST.match(buf, pos).end()  # type: ignore[union-attr]
                    if pos >= n or buf[pos] == _BACKSLASH:
                        break  # the string, or an escape at its end, goes on later
                    pos += 1  # the closing quote
                    in_string = False
                    continue
                # Skip, in C, everything up to the next bracket: plain bytes and whole
                # strings. It stops early only at a string the buffer does not finish.
                pos = _SKIP.match(buf, pos).end()  # type: ignore[union-attr]
                if pos >= n:
                    break
                byte = buf[pos]
                pos += 1
                if byte == _QUOTE:
                    in_string = True
                elif byte in _OPENERS:
                    depth += 1
                else:
                    depth -= 1
                    if depth == 0:
                        phase = _END if self._single else _AFTER
                        self._emit(out, self._start, pos)
                continue
            if phase == _AFTER:
                # The common case: a comma and the whole next element, one C call each.
                following = _NEXT_ELEMENT.match(buf, pos)
                while following is not None:
                    self._emit(out, following.start(1), following.end(1))
                    pos = following.end()
                    following = _NEXT_ELEMENT.match(buf, pos)
            match = _NON_WHITESPACE.search(buf, pos)
            if match is None:
                pos = n
                break
            i = match.start()
            byte = buf[i]
            if byte in _OPENERS and phase in (_FIRST, _NEXT):
                whole = _WHOLE_ELEMENT.match(buf, i)
                if whole is not None:  # the common case: one C call for the element
                    phase, pos = _AFTER, whole.end()
                    self._emit(out, i, pos)
                    continue
                phase, depth, self._start, pos = _ELEMENT, 1, i, i + 1
            elif phase == _AFTER and byte == 0x2C:  # ","
                phase, pos = _NEXT, i + 1
            elif byte == 0x5D and phase in (_AFTER, _FIRST):  # "]"
                phase, pos = _END, i + 1
            elif phase == _START and byte == 0x5B:  # "["
                phase, pos = _FIRST, i + 1
            elif phase == _START and byte == 0x7B:  # "{": one object, not an array
                self._single = True
                phase, depth, self._start, pos = _ELEMENT, 1, i, i + 1
            elif phase == _START and self._base + i == 0 and _BOM.startswith(buf[:3]):
                if n < len(_BOM):
                    break  # wait for the rest of what may be a BOM
                pos = len(_BOM)
            else:
                out.append(self._unexpected(i, phase))
                phase = _FAILED
                break
        self._pos = pos
        self._phase = phase
        self._depth = depth
        self._in_string = in_string

    def _emit(self, out: list[JSONArrayOutput], start: int, end: int) -> None:
        offset = self._base + start
        if end - start > self.max_element_bytes:
            out.append(
                FramingError(
                    f"array element starting at byte {offset} is longer than "
                    f"{self.max_element_bytes} bytes (STREAM_HARNESS_FRAME_MAX_BYTES)",
                    offset,
                )
            )
            return
        try:
            raw = self._buf[start:end].decode("utf-8")
        except UnicodeDecodeError as exc:
            out.append(
                FramingError(
                    f"array element starting at byte {offset}: invalid UTF-8 at byte "
                    f"{offset + exc.start} ({exc.reason})",
                    offset + exc.start,
                )
            )
            return
        try:
            value = bounded_loads(raw)
        except (ValueError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            excerpt = raw[:60] + ("..." if len(raw) > 60 else "")
            out.append(
                FramingError(
                    f"array element starting at byte {offset} is not valid JSON ({reason}): "
                    f"{excerpt!r}",
                    offset,
                )
            )
            return
        out.append(JSONLine(value, raw))

    def _unexpected(self, index: int, phase: int) -> FramingError:
        offset = self._base + index
        # One byte only: what follows it depends on how the body was chunked.
        found = bytes(self._buf[index : index + 1])
        expected = {
            _START: "'[' or '{' to start the body",
            _FIRST: "an element ('{' or '[') or ']'",
            _NEXT: "an element ('{' or '[') after ','",
            _AFTER: "',' or ']' after an element",
            _END: "only whitespace after the end of the JSON value",
        }[phase]
        self._buf = bytearray()
        return FramingError(f"expected {expected} at byte {offset}, found {found!r}", offset)

    def _compact(self) -> None:
        """Drop consumed bytes so the buffer holds at most the unfinished element."""
        cut = self._start if self._phase == _ELEMENT else self._pos
        if self._phase == _START and self._base == 0 and cut < len(_BOM):
            return  # keep what may still be the start of a BOM
        if cut:
            del self._buf[:cut]
            self._base += cut
            self._pos -= cut
            self._start = max(self._start - cut, 0)
