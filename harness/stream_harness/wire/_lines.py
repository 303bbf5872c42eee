"""The unfinished last line of the line-based decoders (SSE, JSON lines).

Both cut each chunk after its last line end: the lines before it are decoded at once; the
bytes after it wait for the next line end, kept as the chunks that hold them (joined once,
when the line ends, so a long line fed in small chunks costs linear time). The wait is
bounded by ``max_line_bytes``: past it the decoder fails, whichever way it reports that.
"""

from __future__ import annotations


class LineBuffer:
    """The pending bytes of an unfinished line, for a decoder to subclass."""

    def __init__(self, max_line_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        self._tail: list[bytes] = []
        self._tail_len = 0

    def _hold(self, chunk: bytes) -> bool:
        """Keep a chunk that ends no line; True when the line has grown too long."""
        if not chunk:
            return False
        self._tail.append(chunk)
        self._tail_len += len(chunk)
        return self._tail_len > self.max_line_bytes

    def _whole_lines(self, chunk: bytes, end: int) -> bytes:
        """The pending bytes and ``chunk`` up to ``end`` (just after a line end): whole
        lines, no longer pending."""
        tail = self._tail
        if not tail:
            return chunk[:end]  # no copy when the chunk ends with a line end
        region = b"".join(tail) + chunk[:end]
        tail.clear()
        return region

    def _hold_rest(self, rest: bytes) -> bool:
        """Keep the bytes after a chunk's last line end; True when they are already too long."""
        self._tail_len = len(rest)
        if not rest:
            return False
        self._tail.append(rest)
        return len(rest) > self.max_line_bytes
