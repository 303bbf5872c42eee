"""What every normalizer is: a sans-I/O ``feed`` / ``close`` state machine over bytes.

A normalizer is handed a framing decoder (the one its protocol is registered with,
harness/stream_harness/providers/registry.py and harness/stream_harness/wire/framing.py) and owns an
:class:`~stream_harness.providers.accumulator.Accumulator`; its only job is to translate the frames it is
given into accumulator calls, whatever cut them out of the bytes. It never raises: framing faults, malformed JSON and
an early EOF all end the stream in an ``error`` event that keeps what was received.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from stream_harness.contract.events import Event
from stream_harness.contract.limits import JSON_MAX_DEPTH, TooDeep, json_depth_exceeds
from stream_harness.providers.accumulator import Accumulator
from stream_harness.providers.registry import get
from stream_harness.wire import FramingError, JSONLine, SSEEvent
from stream_harness.wire.framing import FrameDecoder

# How the never-raise net's error message starts (the fuzzer tells it from a provider's own
# words, which may say "internal error" too).
INTERNAL_ERROR = "internal error in the "


class Normalizer(ABC):
    """Feed response-body bytes, get unified events; ``close`` gives the terminal event.

    ``feed`` and ``close`` live here only, and are the one choke point of the never-raise
    rule for every framing: the bytes go through the injected decoder (:meth:`on_bytes`,
    :meth:`on_close`), a translator implements :meth:`dispatch` and :meth:`on_eof`,
    and any exception in them (a bug of ours, or an input we did not foresee) becomes an
    error event that keeps everything received before it (:meth:`internal_error`),
    never a traceback. A subclass that overrides ``feed`` or ``close`` would step around
    the net, so defining one is a TypeError at class creation.
    """

    protocol: ClassVar[str]

    def __init__(self, frames: FrameDecoder | None = None) -> None:
        """``frames`` is the decoder of the framing the protocol is registered with.

        It is injected (harness/stream_harness/providers/registry.py ``Protocol.normalizer``): a translator reads
        frames and never chooses how they were cut out of the bytes. Without one (a
        translator made directly, as tests do), the registration's framing is used.
        """
        self.acc = Accumulator(self.protocol)
        if frames is None:
            frames = get(self.protocol).framing.decoder()
        self.frames: FrameDecoder = frames

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in ("feed", "close"):
            if name in cls.__dict__:
                raise TypeError(
                    f"{cls.__name__} overrides Normalizer.{name}; implement "
                    f"on_bytes / on_close instead (the never-raise choke point)"
                )

    def feed(self, chunk: bytes) -> list[Event]:
        """Consume the next piece of the body; return the events it completes."""
        acc = self.acc
        if acc.terminated:
            return []
        try:
            self.on_bytes(chunk)
        except Exception as exc:  # the never-raise choke point
            self.internal_error(exc)
        return acc.drain()

    def close(self) -> list[Event]:
        """The body has ended: return the remaining events, always ending in a terminal one."""
        acc = self.acc
        if not acc.terminated:
            try:
                self.on_close()
            except Exception as exc:  # the never-raise choke point
                self.internal_error(exc)
        if not acc.terminated:  # every path above terminates; a subclass might not
            acc.fail("stream ended without a terminal event")
        return acc.drain()

    @property
    def warnings(self) -> list[str]:
        """Wire anomalies the normalizer recovered from (see Accumulator.warn)."""
        return self.acc.warnings

    def on_bytes(self, chunk: bytes) -> None:
        """Cut the next piece of the body into frames and translate them."""
        acc = self.acc
        for piece in framing_slices(chunk):
            self.dispatch(self.frames.feed(piece))
            if acc.terminated:
                return

    def on_close(self) -> None:
        """The body has ended: translate the frames left, then the end of the body."""
        self.dispatch(self.frames.close())
        if not self.acc.terminated:
            self.on_eof()

    @abstractmethod
    def dispatch(self, items: Iterable[Any]) -> None:
        """Translate frames (or FramingErrors) into accumulator calls, stopping once the
        stream is terminated."""

    @abstractmethod
    def on_eof(self) -> None:
        """The body ended before the protocol's terminal signal."""

    def on_framing_error(self, error: FramingError) -> None:
        """The body broke its framing: end the stream in an error that keeps what came."""
        self.fail(f"framing error at byte {error.offset}: {error.message}")

    def fail(
        self,
        message: str,
        *,
        status: int | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """End in an error, after handing the accumulator what the translator holds."""
        self.before_terminal()
        self.acc.fail(message, status=status, body=body, headers=headers)

    def before_terminal(self) -> None:
        """Hand the accumulator what the translator still holds (blocks open on the wire,
        metadata kept for the end) before an error ends the stream, so that the error's
        message keeps all of it. Nothing by default: most translators hold nothing back."""
        return

    def internal_error(self, exc: Exception) -> None:
        """An exception escaped the translator: end in an error that keeps what came.

        The message names the normalizer and the exception, so a fuzz finding or a user
        report points at the bug; the accumulator closes the open blocks with their
        content. Should even that fail (the fault left the accumulator inconsistent), a
        bare error terminal is still the last word, never a traceback.
        """
        message = f"{INTERNAL_ERROR}{self.protocol} normalizer: {exc!r}"
        try:
            self.acc.fail(message[:2000])
        except Exception:  # pragma: no cover - the accumulator itself is broken
            self.acc.force_fail(message[:2000])


# The C scanner behind json.loads, called directly. For a payload of a few hundred bytes
# json.loads spends more than half of its time in its Python wrapper (two whitespace
# regex matches, three calls): 1.65 us -> 0.77 us measured on an Anthropic text delta,
# the largest single saving of bench_normalizers.py.
# (JSONDecoder sets scan_once in __init__; typeshed does not declare it.)
_Scanner = Callable[[str, int], tuple[Any, int]]
_scan_once: _Scanner = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def parse_json(text: str) -> Any:
    """Exactly ``json.loads(text)``: the same value, or the same exception.

    The scanner alone takes a value that fills the whole text; anything else (leading or
    trailing whitespace, a BOM, extra data, an error) goes to ``json.loads`` itself, so
    that every error and its message are the library's. (Nesting within three levels of
    the recursion limit may parse here where json.loads, three calls deeper, would give
    up; how deep json.loads gets depends on its caller's stack anyway.)

    Nesting deeper than ``stream_harness.contract.limits.JSON_MAX_DEPTH`` is refused first with
    :class:`~stream_harness.contract.limits.TooDeep` (a ValueError), so no caller ever sees a
    RecursionError from a hostile payload.
    """
    if json_depth_exceeds(text):
        raise TooDeep(JSON_MAX_DEPTH)
    try:
        value, end = _scan_once(text, 0)
    except Exception:  # StopIteration (no value at 0), RecursionError, ...
        return json.loads(text)
    if end == len(text):
        return value
    return json.loads(text)


class CallIds:
    """Unique tool-call ids for protocols whose wire may omit or repeat them.

    A wire id is kept the first time it is seen; a missing or repeated one becomes
    ``f"{name}_{n}"`` with ``n`` counting synthetic ids in this stream (provider-facts
    case 36). pi appends ``Date.now()``, which a replay harness cannot have: a counter
    keeps any split of the body giving the same ids.
    """

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._synthetic = 0

    def assign(self, wire_id: str | None, name: str | None) -> str:
        if wire_id is not None and wire_id not in self._seen:
            self._seen.add(wire_id)
            return wire_id
        while True:
            self._synthetic += 1
            candidate = f"{name or 'call'}_{self._synthetic}"
            if candidate not in self._seen:
                self._seen.add(candidate)
                return candidate


def excerpt(text: str, limit: int = 80) -> str:
    """A short, single-line rendering of wire text for error messages."""
    flat = text.replace("\r", "\\r").replace("\n", "\\n")
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


_FRAMING_SLICE = 64 * 1024


def framing_slices(chunk: bytes) -> list[bytes]:
    """``chunk`` cut into pieces of at most 64 KB for the framing decoder.

    A whole body fed at once would have all its framed events exist at the same time
    before the first is translated; a slice at a time they are made and dropped as they
    go (about 20% faster on the 6 MB Chat Completions body of bench_normalizers.py). The
    decoders give the same output for any split of their input, so the events are the
    same.
    """
    if len(chunk) <= _FRAMING_SLICE:
        return [chunk]
    return [chunk[i : i + _FRAMING_SLICE] for i in range(0, len(chunk), _FRAMING_SLICE)]


class SSENormalizer(Normalizer):
    """Base for the protocols whose frames are named events with a JSON data payload:
    counting, JSON decoding and the EOF rule live here.

    The frames are SSE events as they come, or JSON values cut by another framing (JSON
    lines, array elements: a :class:`~stream_harness.wire.JSONLine`), which are named by their
    ``"type"`` as SSE would name them; the translator sees the same event either way.
    """

    def __init__(self, frames: FrameDecoder | None = None) -> None:
        super().__init__(frames)
        self.events_seen = 0

    def dispatch(self, items: Iterable[SSEEvent | JSONLine | FramingError]) -> None:
        acc = self.acc
        for item in items:
            if isinstance(item, FramingError):
                self.on_framing_error(item)
            else:
                self.events_seen += 1
                self.on_event(item if isinstance(item, SSEEvent) else named_event(item))
            if acc.terminated:
                return

    def malformed(self, what: str) -> None:
        """An event the protocol does not allow: end in an error that says which, keeping
        what came before it."""
        self.fail(f"malformed event #{self.events_seen}: {what}")

    def load_json(self, event: SSEEvent) -> Any:
        """Parse an event's data; on failure end the stream in an error and return None."""
        try:
            return parse_json(event.data)
        except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
            self.acc.fail(
                f"malformed JSON in SSE event #{self.events_seen} ({event.event}): "
                f"{exc}: {excerpt(event.data)}"
            )
            return None

    @abstractmethod
    def on_event(self, event: SSEEvent) -> None:
        """Translate one SSE event into accumulator calls."""

    def on_eof(self) -> None:
        """The body ended before the protocol's terminal signal (default: an error)."""
        self.acc.fail("stream ended without a terminal event")


class JSONFrameNormalizer(Normalizer):
    """Base for the protocols whose frames are JSON values with no event name to dispatch
    on (Gemini chunks, Ollama lines, Bedrock event-stream frames): counting, JSON decoding,
    framing faults and ending in an error that keeps what came live here.

    A value cut by a JSON framing arrives parsed (a :class:`~stream_harness.wire.JSONLine`);
    one carried by an SSE event is parsed here: the translator's :meth:`on_value` sees the
    same value either way. Frames that are not JSON text (an event-stream message, a bad
    chunk of its payload) go to :meth:`on_frame`, which counts them if its protocol does.
    """

    # What the protocol calls a frame, in the messages that count them ("chunk #3").
    frame_noun: ClassVar[str] = "frame"
    # Whether an SSE event whose data is blank is a keep-alive (passed over, uncounted)
    # rather than a frame that fails to parse.
    blank_event_is_keepalive: ClassVar[bool] = False

    def __init__(self, frames: FrameDecoder | None = None) -> None:
        super().__init__(frames)
        self.frames_seen = 0

    def dispatch(self, items: Iterable[Any]) -> None:
        acc = self.acc
        for item in items:
            if acc.terminated:
                return
            if isinstance(item, FramingError):
                self.on_framing_error(item)
            elif isinstance(item, JSONLine):
                self.frames_seen += 1
                self.on_value(item.value, item.raw)
            elif isinstance(item, SSEEvent):
                if self.blank_event_is_keepalive and not item.data.strip():
                    continue
                self.frames_seen += 1
                try:
                    value = parse_json(item.data)
                except ValueError as exc:
                    self.malformed_json(exc, item.data)
                    continue
                self.on_value(value, item.data)
            else:
                self.on_frame(item)

    def on_value(self, value: Any, raw: str) -> None:
        """Translate one JSON value (``raw``: the text it was parsed from)."""
        raise TypeError(f"{self.protocol}: unexpected JSON value frame")

    def on_frame(self, frame: Any) -> None:
        """Translate a frame that is not JSON text."""
        raise TypeError(f"{self.protocol}: unexpected frame {type(frame).__name__}")

    def malformed_json(self, exc: ValueError, text: str) -> None:
        """A frame's text is not JSON."""
        self.fail(
            f"malformed JSON in {self.frame_noun} #{self.frames_seen}: {exc}: {excerpt(text)}"
        )

    def malformed(self, what: str) -> None:
        """A frame the protocol does not allow: end in an error that says which."""
        self.fail(f"malformed {self.frame_noun} #{self.frames_seen}: {what}")

    @property
    def none_received(self) -> str:
        """What an end-of-body message adds when not one frame came."""
        return f" (no {self.frame_noun}s received)" if self.frames_seen == 0 else ""


def named_event(line: JSONLine) -> SSEEvent:
    """A JSON value from a non-SSE framing as the SSE event that would have carried it:
    the data is its text, the name its ``"type"`` (SSE's default, ``message``, without)."""
    value = line.value
    kind = value.get("type") if isinstance(value, dict) else None
    return SSEEvent(data=line.raw, event=kind if isinstance(kind, str) and kind else "message")
