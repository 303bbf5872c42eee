"""Conformance cases: one recorded response each, with what the reference makes of it.

A case is one interaction of one cassette whose protocol we know and that is either a
stream or an HTTP error (non-LLM calls recorded alongside, such as OAuth token exchanges,
are not cases). Its expectation is the golden file under ``specs/expected/`` when the
cassette is bundled, else the reference normalizer's events on the whole body.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from harness.cassette import CassetteError, load_cassette
from harness.events import DoneEvent, ErrorEvent, Event
from harness.golden import expected_path, read_expected
from harness.normalize import detect_protocol, normalize
from harness.providers import UnknownProtocolError, protocols


@dataclass(frozen=True)
class Case:
    id: str
    cassette: Path
    interaction: int
    protocol: str
    status: int
    headers: dict[str, list[str]]
    body: bytes = field(repr=False)
    sha256: str
    golden: Path | None = None
    # What the reference makes of body[:n], by n: the same for every adapter under test.
    _cut_ends_in_error: dict[int, bool] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def is_error_response(self) -> bool:
        return self.status >= 400

    def expected_events(self) -> list[Event]:
        """The golden events if committed, else the reference's events on the whole body."""
        if self.golden is not None and self.golden.is_file():
            return read_expected(self.golden)
        return list(normalize(self.protocol, [self.body], status=self.status, headers=self.headers))

    def cut_ends_in_error(self, n: int) -> bool:
        """Whether the reference ends the body cut after ``n`` bytes in an error: a cut
        that leaves the stream unfinished (the truncation check counts no other)."""
        found = self._cut_ends_in_error.get(n)
        if found is None:
            events = normalize(self.protocol, [self.body[:n]], status=self.status, headers=self.headers)
            found = self._cut_ends_in_error[n] = isinstance(list(events)[-1], ErrorEvent)
        return found

    def expected_terminal(self) -> DoneEvent | ErrorEvent:
        last = self.expected_events()[-1]
        assert isinstance(last, DoneEvent | ErrorEvent)
        return last


@dataclass(frozen=True)
class Skipped:
    where: str
    reason: str


def _cassette_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(
        p
        for p in root.rglob("*.yaml")
        if not any(part.startswith("_") or part == "scenarios" for part in p.relative_to(root).parts[:-1])
    )


def load_cases(roots: Iterable[Path], *, bundled_root: Path | None = None) -> tuple[list[Case], list[Skipped]]:
    """Cases under the given cassette folders (or files), plus what was passed over and why."""
    known = set(protocols())
    cases: list[Case] = []
    skipped: list[Skipped] = []
    bundled = bundled_root.resolve() if bundled_root is not None else None
    for root in roots:
        root = Path(root)
        for path in _cassette_files(root):
            rel = path.relative_to(root) if path != root else Path(path.name)
            try:
                cassette = load_cassette(path)
            except CassetteError as exc:
                skipped.append(Skipped(str(path), str(exc)))
                continue
            for inter in cassette.interactions:
                where = f"{rel}#{inter.index}"
                if not (inter.is_streaming or inter.response.status >= 400):
                    skipped.append(Skipped(where, "not a stream nor an error response"))
                    continue
                try:
                    protocol = detect_protocol(inter)
                except UnknownProtocolError as exc:
                    skipped.append(Skipped(where, str(exc)))
                    continue
                if protocol not in known:
                    skipped.append(Skipped(where, f"no reference normalizer for {protocol}"))
                    continue
                golden = None
                if bundled is not None and path.resolve().is_relative_to(bundled):
                    golden = expected_path(path, inter.index)
                body = inter.response.body
                cases.append(
                    Case(
                        id=where,
                        cassette=path,
                        interaction=inter.index,
                        protocol=protocol,
                        status=inter.response.status,
                        headers=dict(inter.response.headers),
                        body=body,
                        sha256=hashlib.sha256(body).hexdigest(),
                        golden=golden,
                    )
                )
    return cases, skipped
