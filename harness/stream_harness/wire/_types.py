"""Output types shared by more than one framing decoder.

They are defined once here so that a consumer can match on ``FramingError`` whatever
framing produced it, and so that the NDJSON and JSON-array decoders, which both yield
one JSON value at a time, hand the normalizers the same object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# ``eq=True`` is kept (tests compare outputs of different chunkings); the objects may
# hold dicts, so they are not hashable in practice, and nothing needs them to be.


@dataclass(frozen=True, slots=True)
class FramingError:
    """The byte stream broke its framing; returned as a value, never raised.

    ``offset`` counts bytes from the start of everything fed to the decoder (a BOM
    included), so the same broken body reports the same offset however it was chunked,
    and a report can point into the recorded body.
    """

    message: str
    offset: int


@dataclass(frozen=True, slots=True)
class JSONLine:
    """One complete JSON value cut out of a stream.

    ``raw`` is the exact text the value was parsed from (for NDJSON the line without its
    line end), kept so that reports and cassettes can show what the provider sent.
    """

    value: Any
    raw: str
