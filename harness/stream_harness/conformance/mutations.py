"""Hostile variations of real response bodies, for robustness tests and ``stream-harness fuzz``.

One mutation engine serves the robustness suite (tests/conformance/test_robustness.py) and the fuzz
command, so that what CI checks on every protocol and what a long fuzz run explores are
the same mutations. Each draws one change of a real body, in the body's own units (SSE
events, JSON lines, AWS event-stream frames), so that most mutants still get past the
framing and reach the protocol translator:

======================  =====================================================================
kind                    change
======================  =====================================================================
``flip``                one bit of one byte flipped
``truncate``            the body cut at any byte (a dropped connection)
``drop``                one unit removed
``duplicate``           one unit sent twice
``reorder``             two units swapped
``garbage``             a malformed or unexpected unit inserted at a boundary
``oversized``           a JSON string value replaced by a long one (64 KiB to 2 MiB)
``deep``                a JSON value replaced by nesting around the depth limit or far past it
``utf8``                invalid UTF-8 inside a JSON string
``number``              a JSON number replaced by NaN, Infinity, 1e400, a huge or negative
                        integer, a fraction, a string, a bool or null
``field``               any JSON value replaced by a random JSON value (type confusion:
                        an object where a string belongs, a list for an index, ...)
======================  =====================================================================

Value-level kinds (``oversized``, ``deep``, ``utf8``, ``number``, ``field``) edit the JSON text in
place; in an event-stream frame they edit the payload and re-encode the frame with fresh
CRCs, so the frame still decodes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Final

from hypothesis import strategies as st

from stream_harness.contract.limits import JSON_MAX_DEPTH
from stream_harness.providers.registry import get
from stream_harness.recordings.chunking import SSE_EVENT_END, cut_after
from stream_harness.wire import EventStreamDecoder
from stream_harness.wire.eventstream import EventStreamMessage, encode_message
from stream_harness.wire.framing import Units

# The units a body is cut into (the registered framing decides which: harness/stream_harness/wire/framing.py).
Framing = Units

KINDS: Final = (
    "flip",
    "truncate",
    "drop",
    "duplicate",
    "reorder",
    "garbage",
    "oversized",
    "deep",
    "utf8",
    "number",
    "field",
)


@dataclass(frozen=True, slots=True)
class Mutation:
    """One mutant: what was done (``kind``, ``detail``) and the resulting body."""

    kind: str
    detail: str
    body: bytes


def framing_of(protocol: str, body: bytes) -> Framing:
    """How a protocol's body divides into units: its registered framing says (Gemini's
    JSON-array form goes by lines, its SSE form by events)."""
    return get(protocol).framing.units(body)


def units(body: bytes, framing: Framing) -> list[bytes]:
    """The body cut into its units; their concatenation is always ``body``."""
    if framing == "lines":
        return body.splitlines(keepends=True) or [body]
    if framing == "eventstream":
        out, i = [], 0
        while i < len(body):
            total = int.from_bytes(body[i : i + 4], "big") if len(body) - i >= 4 else 0
            if total < 16 or i + total > len(body):
                out.append(body[i:])
                break
            out.append(body[i : i + total])
            i += total
        return out or [body]
    return cut_after(body, SSE_EVENT_END) or [body]


_GARBAGE: Final[dict[Framing, tuple[bytes, ...]]] = {
    "sse": (
        b"data: {not json\n\n",
        b"data: \n\n",
        b"garbage without colon\n\n",
        b": comment\n\n",
        b"event: unknown_event\ndata: {}\n\n",
        b"data: [1,2,3]\n\n",
        b"data: null\n\n",
        b"\xff\xfe\n\n",
        b'data: {"type": "error"}\n\n',
        b"retry: -1\nid: \x00\n\n",
    ),
    "lines": (
        b"{not json\n",
        b"\n",
        b"null\n",
        b"[1,2,3]\n",
        b'{"error": "boom"}\n',
        b"\xff\xfe\n",
        b'{"done": true}\n',
    ),
    "eventstream": (
        b"\x00" * 16,
        b"garbage",
        b"\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
    ),
}

_NUMBER: Final = re.compile(rb"(?<=[:\[,])[ ]*-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_STRING_VALUE: Final = re.compile(rb'(?<=:)[ ]*"(?:[^"\\\n]|\\.)*"')
_ANY_VALUE: Final = re.compile(
    rb'(?<=:)[ ]*(?:"(?:[^"\\\n]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null)'
)

_HOSTILE_NUMBERS: Final = (
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"1e400",
    b"-1",
    b"18446744073709551617",
    b"1.5",
    b'"7"',
    b"true",
    b"null",
    b"9" * 5000,
)
_BAD_UTF8: Final = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\x80")


_JSON_VALUES: Final = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.5, 1e300, -0.0])
    | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def _deep_value(depth: int, kind: str) -> bytes:
    if kind == "array":
        return b"[" * depth + b"1" + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


def _edit_json(draw: st.DrawFn, text: bytes, kind: str) -> tuple[bytes, str] | None:
    """One value-level edit of JSON text, or None when the text has no place for it."""
    pattern = {"number": _NUMBER, "oversized": _STRING_VALUE, "utf8": _STRING_VALUE}.get(
        kind, _ANY_VALUE
    )
    spots = [m.span() for m in pattern.finditer(text)]
    if not spots:
        return None
    start, end = draw(st.sampled_from(spots))
    if kind == "number":
        value = draw(st.sampled_from(_HOSTILE_NUMBERS))
        detail = f"number at byte {start} -> {value[:24]!r}"
    elif kind == "oversized":
        size = draw(st.sampled_from([64 * 1024, 512 * 1024, 2 * 1024 * 1024]))
        value = b'"' + b"x" * size + b'"'
        detail = f"string at byte {start} -> {size} bytes"
    elif kind == "field":
        value = json.dumps(draw(_JSON_VALUES), ensure_ascii=False).encode("utf-8", "surrogatepass")
        detail = f"value at byte {start} -> {value[:40]!r}"
    elif kind == "utf8":
        at = draw(st.integers(start + 1, max(start + 1, end - 1)))
        bad = draw(st.sampled_from(_BAD_UTF8))
        return text[:at] + bad + text[at:], f"invalid UTF-8 {bad!r} at byte {at}"
    else:  # deep
        depth = draw(
            st.sampled_from([JSON_MAX_DEPTH - 1, JSON_MAX_DEPTH, JSON_MAX_DEPTH + 1, 5000, 100_000])
        )
        shape = draw(st.sampled_from(["array", "object"]))
        value = _deep_value(depth, shape)
        detail = f"value at byte {start} -> {shape} nested {depth} deep"
    return text[:start] + value + text[end:], detail


def _reencode(frame: bytes, edit: bytes) -> bytes | None:
    """An event-stream frame with another payload and fresh CRCs (None if it does not decode)."""
    decoded = EventStreamDecoder().feed(frame)
    if len(decoded) != 1 or not isinstance(decoded[0], EventStreamMessage):
        return None
    return encode_message(decoded[0].headers, edit)


@st.composite
def mutations(draw: st.DrawFn, body: bytes, framing: Framing) -> Mutation:
    """One mutation of ``body`` (kinds in the module docstring), drawn by hypothesis."""
    kind = draw(st.sampled_from(KINDS))
    parts = units(body, framing)
    if kind == "flip" and body:
        at = draw(st.integers(0, len(body) - 1))
        bit = draw(st.integers(0, 7))
        flipped = bytearray(body)
        flipped[at] ^= 1 << bit
        return Mutation(kind, f"bit {bit} of byte {at}", bytes(flipped))
    if kind == "truncate" and body:
        at = draw(st.integers(0, len(body) - 1))
        return Mutation(kind, f"cut at byte {at}", body[:at])
    if kind in ("drop", "duplicate") and parts:
        i = draw(st.integers(0, len(parts) - 1))
        if kind == "drop":
            rest = parts[:i] + parts[i + 1 :]
        else:
            rest = parts[: i + 1] + parts[i:]
        return Mutation(kind, f"unit {i} of {len(parts)}", b"".join(rest))
    if kind == "reorder" and len(parts) >= 2:
        i = draw(st.integers(0, len(parts) - 2))
        j = draw(st.integers(i + 1, len(parts) - 1))
        swapped = list(parts)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        return Mutation(kind, f"units {i} and {j} of {len(parts)} swapped", b"".join(swapped))
    if kind == "garbage":
        i = draw(st.integers(0, len(parts)))
        junk = draw(st.sampled_from(_GARBAGE[framing]))
        return Mutation(
            kind, f"{junk[:24]!r} before unit {i}", b"".join([*parts[:i], junk, *parts[i:]])
        )
    if kind in ("oversized", "deep", "utf8", "number", "field") and parts:
        i = draw(st.integers(0, len(parts) - 1))
        unit = parts[i]
        if framing == "eventstream":
            decoded = EventStreamDecoder().feed(unit)
            if len(decoded) == 1 and isinstance(decoded[0], EventStreamMessage):
                edit = _edit_json(draw, decoded[0].payload, kind)
                if edit is not None:
                    frame = _reencode(unit, edit[0])
                    if frame is not None:
                        changed = [*parts[:i], frame, *parts[i + 1 :]]
                        return Mutation(kind, f"frame {i}: {edit[1]}", b"".join(changed))
        else:
            edit = _edit_json(draw, unit, kind)
            if edit is not None:
                changed = [*parts[:i], edit[0], *parts[i + 1 :]]
                return Mutation(kind, f"unit {i}: {edit[1]}", b"".join(changed))
    # Nothing to do for this kind on this body (empty body, no JSON value there): cut it.
    at = draw(st.integers(0, max(0, len(body) - 1)))
    return Mutation("truncate", f"cut at byte {at}", body[:at])


__all__ = ["KINDS", "Framing", "Mutation", "framing_of", "mutations", "units"]
