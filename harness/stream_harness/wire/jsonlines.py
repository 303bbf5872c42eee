"""Newline-delimited JSON (Ollama ``/api/chat``): bytes -> ``JSONLine`` | ``FramingError``.

Lines end at LF; a CR before it is dropped (CRLF bodies), and so is a UTF-8 BOM at the
start of the stream. Blank or whitespace-only lines are skipped (they still count for
line numbers). A last line without a line end is parsed at ``close()``, since a server
may omit the final newline and the line is still whole.

A line that is not valid UTF-8 or not valid JSON is reported as a ``FramingError`` and
decoding goes on with the next line: an LF is unambiguous, so one bad line does not
put the framing of the following ones in doubt, and dropping them would lose data. Only
a line longer than ``max_line_bytes`` (counting everything before the LF, a CR
included) fails the decoder (``feed`` and ``close`` then
return ``[]``), because the decoder would otherwise have to buffer without bound.
"""

from __future__ import annotations

import json
from typing import Final, TypeAlias

from stream_harness.contract.limits import loads as bounded_loads

from ._lines import LineBuffer
from ._types import FramingError, JSONLine

JSONLinesOutput: TypeAlias = JSONLine | FramingError

_OPEN: Final = 0
_FAILED: Final = 1
_CLOSED: Final = 2
_EXCERPT_CHARS: Final = 60
_BOM: Final = b"\xef\xbb\xbf"


class JSONLinesDecoder(LineBuffer):
    """Incremental NDJSON parser: any chunking of a body gives the same outputs."""

    def __init__(self, max_line_bytes: int = 16 * 1024 * 1024) -> None:
        super().__init__(max_line_bytes)
        self._state = _OPEN
        self._offset = 0  # stream offset of the unfinished line
        self._line_no = 0  # lines completed so far

    def feed(self, chunk: bytes) -> list[JSONLinesOutput]:
        if self._state:  # failed or closed
            return []
        if type(chunk) is not bytes:
            chunk = bytes(chunk)
        end = chunk.rfind(b"\n") + 1
        if not end:
            if self._hold(chunk):
                return [self._line_too_long(self._offset)]
            return []
        region = self._whole_lines(chunk, end)
        out: list[JSONLinesOutput] = []
        if len(region) <= self.max_line_bytes:
            self._region(region, out)
        else:
            lines = region.split(b"\n")
            lines.pop()  # the empty string after the last LF
            limit = self._first_long(lines)
            self._lines(lines[:limit], out)
            if limit < len(lines):
                out.append(self._line_too_long(self._offset))
                return out
        if self._hold_rest(chunk[end:]):
            out.append(self._line_too_long(self._offset))
        return out

    def close(self) -> list[JSONLinesOutput]:
        if self._state:
            return []
        self._state = _CLOSED
        out: list[JSONLinesOutput] = []
        if self._tail:
            self._lines([b"".join(self._tail)], out)
            self._tail = []
        return out

    # -- internals ---------------------------------------------------------------

    def _first_long(self, lines: list[bytes]) -> int:
        limit = self.max_line_bytes
        for i, line in enumerate(lines):
            if len(line) > limit:
                return i
        return len(lines)

    def _region(self, region: bytes, out: list[JSONLinesOutput]) -> None:
        """Whole lines ending in LF: one decode and a bare ``json.loads`` per line.

        At the first line that needs care (blank, BOM, bad JSON or UTF-8) the rest of
        the region goes to ``_lines``, which does every check; so both paths give the
        same outputs, and this one stays a three-step loop for well-formed bodies.
        """
        try:
            text = region.decode("utf-8")
        except UnicodeDecodeError:
            self._lines(region.split(b"\n")[:-1], out)
            return
        lines = text[:-1].split("\n")
        if "\r" in text:
            lines = [line[:-1] if line[-1:] == "\r" else line for line in lines]
        loads = bounded_loads
        append = out.append
        for i, line in enumerate(lines):
            try:
                append(JSONLine(loads(line), line))
            except (ValueError, RecursionError):
                rest = region.split(b"\n", i)[-1] if i else region
                self._offset += len(region) - len(rest)
                self._line_no += i
                self._lines(rest.split(b"\n")[:-1], out)
                return
        self._offset += len(region)
        self._line_no += len(lines)

    def _lines(self, lines: list[bytes], out: list[JSONLinesOutput]) -> None:
        loads = bounded_loads
        offset = self._offset
        line_no = self._line_no
        for line in lines:
            line_no += 1
            start = offset
            offset += len(line) + 1
            if line_no == 1 and line[:3] == _BOM:
                line = line[3:]
                start += 3
            if line[-1:] == b"\r":
                line = line[:-1]
            if not line.strip(b" \t\r"):
                continue
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                out.append(
                    FramingError(
                        f"line {line_no}: invalid UTF-8 at byte {start + exc.start} "
                        f"({exc.reason}): {_excerpt(line)}",
                        start + exc.start,
                    )
                )
                continue
            try:
                value = loads(text)
            except (ValueError, RecursionError) as exc:
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                out.append(
                    FramingError(
                        f"line {line_no}: invalid JSON ({reason}): {_excerpt(line)}", start
                    )
                )
                continue
            out.append(JSONLine(value, text))
        # Offsets are kept at the unfinished line: after close() nothing reads them.
        self._offset = offset
        self._line_no = line_no

    def _line_too_long(self, offset: int) -> FramingError:
        self._state = _FAILED
        self._tail = []
        return FramingError(
            f"line {self._line_no + 1} starting at byte {offset} is longer than "
            f"{self.max_line_bytes} bytes",
            offset,
        )


def _excerpt(line: bytes) -> str:
    text = line[: _EXCERPT_CHARS * 4].decode("utf-8", "replace")
    return repr(text[:_EXCERPT_CHARS] + ("..." if len(text) > _EXCERPT_CHARS else ""))
