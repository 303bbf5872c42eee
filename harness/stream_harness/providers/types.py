"""The two shapes the registry names, declared here so that it imports neither owner.

The registry sits below the normalizers it hands out (their base imports the accumulator,
which reads the stop-reason tables through the registry) and below the recordings whose
interactions it detects, so naming ``providers.base.Normalizer`` or
``recordings.cassette.Interaction`` there, even for typing only, would close a cycle or
point an import upward (tests/test_import_graph.py counts both). Structural types say what
the registry and its callers use, and every normalizer and interaction fits them as is.
"""

from __future__ import annotations

from typing import Any, Protocol

from stream_harness.contract.events import Event


class Accumulating(Protocol):
    """The accumulator behind a normalizer, as far as its callers read it: a reader that
    resumes a stream (adapters/protocol.py) asks where it stands and ends a refused resume
    in an error (``providers.accumulator.Accumulator`` fits)."""

    @property
    def response_id(self) -> str | None: ...
    @property
    def terminated(self) -> bool: ...
    def fail(self, error_message: str, *, status: int | None = None, body: Any = None) -> None: ...


class Translator(Protocol):
    """A normalizer as the registry hands it out (``providers.base.Normalizer`` fits)."""

    @property
    def acc(self) -> Accumulating: ...
    def feed(self, chunk: bytes) -> list[Event]: ...
    def close(self) -> list[Event]: ...
    @property
    def warnings(self) -> list[str]: ...


class Side(Protocol):
    """One side of a recorded exchange, as detection reads it."""

    @property
    def body(self) -> bytes: ...
    def header(self, name: str) -> str | None: ...


class Sent(Side, Protocol):
    @property
    def method(self) -> str: ...
    @property
    def uri(self) -> str: ...


class Exchange(Protocol):
    """A recorded request and its response (``recordings.cassette.Interaction`` fits)."""

    @property
    def index(self) -> int: ...  # named when no protocol matches
    @property
    def request(self) -> Sent: ...
    @property
    def response(self) -> Side: ...
