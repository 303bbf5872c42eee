"""The base of the adapters that run a library in this process, and the response each run replays.

Every official-SDK and third-party library adapter is an :class:`InProcessAdapter`: one
``run`` checks the protocol, collects the library's warnings around its half of the work
and maps what the library kept. The helpers the halves use are in
:mod:`stream_harness.adapters.sdk_support`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

from stream_harness.adapters.protocol import AdapterLevel, AdapterResult, Headers
from stream_harness.adapters.sdk_support import library_warnings, with_warnings
from stream_harness.contract.events import AssistantMessage

__all__ = ["InProcessAdapter", "Replay", "SDKAdapter"]

Outcome = TypeVar("Outcome")


@dataclass(frozen=True, slots=True)
class Replay:
    """The recorded response one run serves, its body in the chunks the check chose.

    The three travel together from ``run`` to every transport an adapter builds; one value
    keeps each adapter's signatures to what differs between them.
    """

    chunks: Sequence[bytes]
    status: int = 200
    headers: Mapping[str, Sequence[str]] | None = None


class InProcessAdapter(Generic[Outcome]):
    """Base of the adapters that run a library in this process on the replayed body.

    One ``run`` for all of them, so that the protocol check and the collecting of the
    library's warnings are the same everywhere. :meth:`drive` is the library's half and
    alone runs inside :func:`library_warnings`; :meth:`result` maps what it kept, outside
    them, so that a warning of the harness's own mapping code is not blamed on the library.
    """

    name: ClassVar[str]
    level: AdapterLevel = "message"
    protocols: frozenset[str] = frozenset()

    def run(
        self, protocol: str, chunks: Sequence[bytes], *, status: int = 200, headers: Headers = None
    ) -> AdapterResult:
        if protocol not in self.protocols:
            raise ValueError(f"{self.name} does not speak {protocol!r}")
        replay = Replay(chunks, status, headers)
        reference = self.reference(protocol, replay)
        with library_warnings() as seen:
            outcome = self.drive(protocol, replay)
        return with_warnings(self.result(protocol, outcome, reference), seen)

    def reference(self, protocol: str, replay: Replay) -> AssistantMessage | None:
        """The reference's message for this response, for adapters whose conventions are
        applied against it; computed before the library runs, outside its warnings."""
        return None

    def drive(self, protocol: str, replay: Replay) -> Outcome:
        raise NotImplementedError

    def result(
        self, protocol: str, outcome: Outcome, reference: AssistantMessage | None
    ) -> AdapterResult:
        raise NotImplementedError


class SDKAdapter(InProcessAdapter[AdapterResult]):
    """An official SDK's adapter: its :meth:`drive` maps the SDK's final object itself (the
    conventions are the reference's, specs/adapters.md), so its outcome is the result."""

    def result(
        self, protocol: str, outcome: AdapterResult, reference: AssistantMessage | None
    ) -> AdapterResult:
        return outcome
