"""The bounds on hostile input, in one place: each documented, each configurable.

The reference must never break on what a server, a proxy or a fuzzer sends: no
traceback, no hang, no unbounded memory. Every input that could grow without bound has a
limit here, and going past one is a one-line error that names the limit (and, for
files, the file), never a RecursionError or a MemoryError.

Each limit is read from the environment once, at import (``STREAM_HARNESS_<NAME>``, an
integer), so a user with a legitimately larger input raises it without code:

=================================  ==========  =============================================
limit                              default     what it bounds
=================================  ==========  =============================================
``JSON_MAX_DEPTH``                 512         nesting of any JSON the normalizers parse:
                                               wire payloads, tool-call arguments
``FRAME_MAX_BYTES``                16 MiB      one SSE line, JSON line, JSON-array element,
                                               event-stream payload
``DECOMPRESSED_MAX_BYTES``         64 MiB      a cassette body after gzip/deflate/br
``DECOMPRESSION_MAX_RATIO``        1000        decompressed size / compressed size (past
                                               1 MiB of output)
``YAML_MAX_DEPTH``                 600         nesting of a cassette's YAML (JSON depth
                                               plus the cassette's own levels)
``YAML_MAX_ALIAS_EXPANSION``       1,000,000   nodes and scalar characters that YAML
                                               aliases add when expanded (billion laughs)
=================================  ==========  =============================================

Why 512 for JSON: json.loads recurses once per level and hits the interpreter's
recursion limit near 1,000 (less when called from deep in a stack), and so do pydantic's
serializer and most consumers; 512 leaves room for all of them, and no provider sends
anything close (the deepest tool arguments in the corpus are under 20 levels).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Final


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(f"STREAM_HARNESS_{name}")
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        return default
    return value if value > 0 else default


JSON_MAX_DEPTH: Final = _env_int("JSON_MAX_DEPTH", 512)
FRAME_MAX_BYTES: Final = _env_int("FRAME_MAX_BYTES", 16 * 1024 * 1024)
DECOMPRESSED_MAX_BYTES: Final = _env_int("DECOMPRESSED_MAX_BYTES", 64 * 1024 * 1024)
DECOMPRESSION_MAX_RATIO: Final = _env_int("DECOMPRESSION_MAX_RATIO", 1000)
YAML_MAX_DEPTH: Final = _env_int("YAML_MAX_DEPTH", 600)
YAML_MAX_ALIAS_EXPANSION: Final = _env_int("YAML_MAX_ALIAS_EXPANSION", 1_000_000)

# Brackets outside strings; a string token is skipped whole (escapes included).
_BRACKET_TOKENS: Final = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)


class TooDeep(ValueError):
    """JSON nested deeper than :data:`JSON_MAX_DEPTH` (a ValueError, as json's errors are)."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"nested too deep (more than {limit} levels; STREAM_HARNESS_JSON_MAX_DEPTH)"
        )
        self.limit = limit


def json_depth_exceeds(text: str, limit: int = JSON_MAX_DEPTH) -> bool:
    """True when ``text`` opens more than ``limit`` brackets at once outside strings.

    Linear and iterative. The common case costs a ``len`` or two ``str.count`` calls: a
    text with no more characters, or no more opening brackets, than the limit cannot nest
    deeper. Unbalanced or truncated text
    is measured as far as it goes (a truncated deep text is still too deep).
    """
    if len(text) <= limit or text.count("{") + text.count("[") <= limit:
        return False  # (most wire payloads are shorter than the limit: one len() call)
    depth = 0
    for match in _BRACKET_TOKENS.finditer(text):
        c = match.group()
        if c == "{" or c == "[":
            depth += 1
            if depth > limit:
                return True
        elif c == "}" or c == "]":
            depth -= 1
    return False


def loads(text: str | bytes) -> Any:
    """``json.loads`` with the depth bound: :class:`TooDeep` instead of a RecursionError."""
    probe = text if isinstance(text, str) else text.decode("utf-8", "replace")
    if json_depth_exceeds(probe):
        raise TooDeep(JSON_MAX_DEPTH)
    return json.loads(text)


__all__ = [
    "DECOMPRESSED_MAX_BYTES",
    "DECOMPRESSION_MAX_RATIO",
    "FRAME_MAX_BYTES",
    "JSON_MAX_DEPTH",
    "YAML_MAX_ALIAS_EXPANSION",
    "YAML_MAX_DEPTH",
    "TooDeep",
    "json_depth_exceeds",
    "loads",
]
