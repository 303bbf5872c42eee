"""AWS event-stream (Bedrock ``application/vnd.amazon.eventstream``): bytes -> messages.

Frame layout (AWS "Event stream encoding",
https://docs.aws.amazon.com/lexv2/latest/dg/event-stream-encoding.html): a 12-byte
prelude (total length and headers length, both 4-byte big-endian, then a CRC32 of those
8 bytes), the headers, the payload, and a CRC32 of everything before it. The CRC is the
ordinary IEEE CRC32 of ``zlib.crc32``.

Decisions:

* Every error fails the decoder (``feed`` and ``close`` return ``[]`` afterwards): a bad
  prelude CRC means the length cannot be trusted, so no later frame can be found, and a
  bad message CRC means the bytes were damaged somewhere we cannot see. Messages decoded
  before the error stay emitted.
* The prelude CRC is checked before the lengths are believed, so a damaged length is
  reported as soon as its 12 bytes are in, instead of waiting for a frame that will
  never come.
* Bounds follow the AWS limits (headers at most 128 KiB, payload at most 16 MiB);
  anything beyond, or a total length too small to hold the frame, is an error.
* Header values: bool, byte, short, int, long and timestamp (milliseconds since the
  epoch) become ``bool`` / ``int``, bytes become ``bytes``, string ``str``, and uuid its
  canonical ``str``. Bedrock only sends strings; the mapping loses the integer width,
  so ``encode_message`` of a decoded message is byte-identical only for headers of
  type bool, int (32-bit), bytes and string.
* A header name that occurs twice is an error (the AWS format allows at most one).
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, TypeAlias

from ._types import FramingError

HeaderValue: TypeAlias = str | int | bool | bytes

_PRELUDE: Final = struct.Struct(">III")
_UINT32: Final = struct.Struct(">I")
_PRELUDE_LEN: Final = 12
_OVERHEAD: Final = 16  # prelude + message CRC
_MAX_HEADERS: Final = 128 * 1024
_MAX_PAYLOAD: Final = 16 * 1024 * 1024

# Header value type -> (struct format, size) for the fixed-size integer types.
_FIXED: Final[dict[int, struct.Struct]] = {
    2: struct.Struct(">b"),  # byte
    3: struct.Struct(">h"),  # short
    4: struct.Struct(">i"),  # integer
    5: struct.Struct(">q"),  # long
    8: struct.Struct(">q"),  # timestamp, milliseconds since the epoch
}
_UINT16: Final = struct.Struct(">H")

_OPEN: Final = 0
_FAILED: Final = 1
_CLOSED: Final = 2


@dataclass(frozen=True, slots=True)
class EventStreamMessage:
    """One frame: its headers and its raw payload (JSON for Bedrock)."""

    headers: dict[str, HeaderValue]
    payload: bytes

    def _text_header(self, name: str) -> str | None:
        value = self.headers.get(name)
        return value if isinstance(value, str) else None

    @property
    def message_type(self) -> str | None:
        """``event``, ``exception`` or ``error``."""
        return self._text_header(":message-type")

    @property
    def event_type(self) -> str | None:
        """E.g. ``contentBlockDelta``, or ``chunk`` for InvokeModelWithResponseStream."""
        return self._text_header(":event-type")

    @property
    def exception_type(self) -> str | None:
        """E.g. ``throttlingException`` on an ``exception`` message."""
        return self._text_header(":exception-type")


EventStreamOutput: TypeAlias = EventStreamMessage | FramingError


class _BadHeaders(Exception):
    """Internal: a malformed header block; becomes a FramingError, never escapes."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.message = message
        self.index = index


class EventStreamDecoder:
    """Incremental event-stream parser: any chunking of a body gives the same outputs."""

    def __init__(
        self, max_headers_bytes: int = _MAX_HEADERS, max_payload_bytes: int = _MAX_PAYLOAD
    ) -> None:
        self.max_headers_bytes = max_headers_bytes
        self.max_payload_bytes = max_payload_bytes
        self._state = _OPEN
        self._buf = bytearray()
        self._base = 0  # stream offset of _buf[0]

    def feed(self, chunk: bytes) -> list[EventStreamOutput]:
        if self._state:
            return []
        buf = self._buf
        buf += chunk
        out: list[EventStreamOutput] = []
        pos = 0
        while len(buf) - pos >= _PRELUDE_LEN:
            total, headers_len, prelude_crc = _PRELUDE.unpack_from(buf, pos)
            frame_at = self._base + pos
            if zlib.crc32(buf[pos : pos + 8]) != prelude_crc:
                out.append(
                    self._fail(f"prelude CRC mismatch in the frame at byte {frame_at}", frame_at)
                )
                return out
            payload_len = total - _OVERHEAD - headers_len
            if total < _OVERHEAD or payload_len < 0:
                out.append(
                    self._fail(
                        f"impossible lengths in the frame at byte {frame_at}: total {total}, "
                        f"headers {headers_len}",
                        frame_at,
                    )
                )
                return out
            if headers_len > self.max_headers_bytes or payload_len > self.max_payload_bytes:
                out.append(
                    self._fail(
                        f"frame at byte {frame_at} exceeds the limits: headers {headers_len} "
                        f"bytes (max {self.max_headers_bytes}), payload {payload_len} bytes "
                        f"(max {self.max_payload_bytes})",
                        frame_at,
                    )
                )
                return out
            if len(buf) - pos < total:
                break
            crc_at = pos + total - 4
            if zlib.crc32(buf[pos:crc_at]) != _UINT32.unpack_from(buf, crc_at)[0]:
                out.append(
                    self._fail(f"message CRC mismatch in the frame at byte {frame_at}", frame_at)
                )
                return out
            headers_end = pos + _PRELUDE_LEN + headers_len
            try:
                headers = _parse_headers(buf, pos + _PRELUDE_LEN, headers_end)
            except _BadHeaders as exc:
                where = self._base + exc.index
                out.append(
                    self._fail(f"{exc.message} at byte {where} (frame at byte {frame_at})", where)
                )
                return out
            out.append(EventStreamMessage(headers, bytes(buf[headers_end:crc_at])))
            pos += total
        if pos:
            del buf[:pos]
            self._base += pos
        return out

    def close(self) -> list[EventStreamOutput]:
        if self._state:
            return []
        self._state = _CLOSED
        if self._buf:
            remain = len(self._buf)
            self._buf = bytearray()
            return [
                FramingError(f"incomplete event-stream frame: {remain} bytes remain", self._base)
            ]
        return []

    def _fail(self, message: str, offset: int) -> FramingError:
        self._state = _FAILED
        self._buf = bytearray()
        return FramingError(message, offset)


def _parse_headers(buf: bytearray, i: int, end: int) -> dict[str, HeaderValue]:
    headers: dict[str, HeaderValue] = {}
    while i < end:
        at = i
        name_len = buf[i]
        i += 1
        if i + name_len + 1 > end:
            raise _BadHeaders("header name runs past the header block", at)
        try:
            name = buf[i : i + name_len].decode("utf-8")
        except UnicodeDecodeError:
            raise _BadHeaders("header name is not valid UTF-8", at) from None
        i += name_len
        kind = buf[i]
        i += 1
        value: HeaderValue
        if kind == 0:
            value = True
        elif kind == 1:
            value = False
        elif kind in _FIXED:
            fmt = _FIXED[kind]
            if i + fmt.size > end:
                raise _BadHeaders(f"header {name!r} value runs past the header block", at)
            value = fmt.unpack_from(buf, i)[0]
            i += fmt.size
        elif kind in (6, 7):
            if i + 2 > end:
                raise _BadHeaders(f"header {name!r} value runs past the header block", at)
            size = _UINT16.unpack_from(buf, i)[0]
            i += 2
            if i + size > end:
                raise _BadHeaders(f"header {name!r} value runs past the header block", at)
            raw = bytes(buf[i : i + size])
            i += size
            if kind == 6:
                value = raw
            else:
                try:
                    value = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise _BadHeaders(f"header {name!r} string is not valid UTF-8", at) from None
        elif kind == 9:
            if i + 16 > end:
                raise _BadHeaders(f"header {name!r} value runs past the header block", at)
            value = str(uuid.UUID(bytes=bytes(buf[i : i + 16])))
            i += 16
        else:
            raise _BadHeaders(f"header {name!r} has unknown value type {kind}", at)
        if name in headers:
            raise _BadHeaders(f"header {name!r} occurs twice", at)
        headers[name] = value
    return headers


def encode_message(headers: Mapping[str, HeaderValue], payload: bytes) -> bytes:
    """One event-stream frame, for tests and for writing cassettes.

    ``bool`` -> type 0/1, ``int`` -> int32 (type 4) or, outside its range, int64
    (type 5), ``bytes`` -> type 6, ``str`` -> type 7. Unlike the decoders this raises
    (``ValueError``, ``TypeError``) on input it cannot encode: it is only called by code
    that builds test data, where a bad argument is a bug to surface at once.
    """
    parts: list[bytes] = []
    for name, value in headers.items():
        raw_name = name.encode("utf-8")
        if not 0 < len(raw_name) < 256:
            raise ValueError(f"header name must be 1..255 bytes: {name!r}")
        parts.append(bytes([len(raw_name)]) + raw_name)
        if isinstance(value, bool):
            parts.append(b"\x00" if value else b"\x01")
        elif isinstance(value, int):
            if -(2**31) <= value < 2**31:
                parts.append(b"\x04" + _FIXED[4].pack(value))
            elif -(2**63) <= value < 2**63:
                parts.append(b"\x05" + _FIXED[5].pack(value))
            else:
                raise ValueError(f"header {name!r}: integer out of the int64 range")
        elif isinstance(value, bytes | str):
            raw = value if isinstance(value, bytes) else value.encode("utf-8")
            if len(raw) > 0xFFFF:
                raise ValueError(f"header {name!r}: value longer than 65535 bytes")
            parts.append(
                (b"\x06" if isinstance(value, bytes) else b"\x07") + _UINT16.pack(len(raw)) + raw
            )
        else:
            raise TypeError(f"header {name!r}: cannot encode {type(value).__name__}")
    header_block = b"".join(parts)
    total = _OVERHEAD + len(header_block) + len(payload)
    prelude = struct.pack(">II", total, len(header_block))
    prelude += _UINT32.pack(zlib.crc32(prelude))
    message = prelude + header_block + payload
    return message + _UINT32.pack(zlib.crc32(message))
