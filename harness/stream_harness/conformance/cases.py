"""Conformance cases: one recorded response each, with what the reference makes of it.

A case is one interaction of one cassette whose protocol we know and that is either a
stream or an HTTP error (non-LLM calls recorded alongside, such as OAuth token exchanges,
are not cases). Its expectation is the golden file under ``specs/expected/`` when the
cassette is bundled, else the reference normalizer's events on the whole body.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from stream_harness.contract.events import DoneEvent, ErrorEvent, Event
from stream_harness.contract.facts import ResourceError, bundled_cassettes
from stream_harness.providers.reference import detect_protocol, normalize
from stream_harness.providers.registry import UnknownProtocolError
from stream_harness.providers.registry import protocol_ids as protocols
from stream_harness.recordings.cassette import Cassette, CassetteError, NotACassette, load_cassette
from stream_harness.recordings.golden import expected_path, read_expected


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
        """The golden events if committed, else the reference's events on the whole body.

        Read once per case (suite planning, every adapter's checks and the report all ask);
        callers get their own list.
        """
        return list(self._expected)

    @functools.cached_property
    def _expected(self) -> tuple[Event, ...]:
        if self.golden is not None and self.golden.is_file():
            return tuple(read_expected(self.golden))
        return tuple(
            normalize(self.protocol, [self.body], status=self.status, headers=self.headers)
        )

    @functools.cached_property
    def _expected_json(self) -> bytes:
        return "\n".join(e.model_dump_json() for e in self._expected).encode()

    def expected_sha256(self) -> str:
        """A digest of the expected events, so a report can tell when its rows went stale."""
        return hashlib.sha256(self._expected_json).hexdigest()

    @functools.cached_property
    def served(self) -> bytes:
        """What the stream served as text a failure may quote: its bytes, and the reference's
        events on them, since some wires carry ids encoded (Bedrock's InvokeModel: base64
        JSON inside event-stream). Made once per case, for every failure of it."""
        return self.body + self._expected_json

    def warnings(self) -> list[str]:
        """What the reference recovered from on the whole body (a report shows it)."""
        found: list[str] = []
        for _ in normalize(
            self.protocol, [self.body], status=self.status, headers=self.headers, warnings=found
        ):
            pass
        return found

    def cut_ends_in_error(self, n: int) -> bool:
        """Whether the reference ends the body cut after ``n`` bytes in an error: a cut
        that leaves the stream unfinished (the truncation check counts no other)."""
        found = self._cut_ends_in_error.get(n)
        if found is None:
            events = normalize(
                self.protocol, [self.body[:n]], status=self.status, headers=self.headers
            )
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


class CaseLoadError(ValueError):
    """Input that leaves nothing, or something unreadable, to check: one line naming the file."""


def cassette_files(root: Path) -> list[Path]:
    """The YAML files given or below a folder, sorted; hidden and ``_``-prefixed folders
    (generators, virtual environments) are not looked into."""
    if root.is_file():
        return [root]
    return sorted(
        p
        for p in [*root.rglob("*.yaml"), *root.rglob("*.yml")]
        if p.is_file()
        and not any(part.startswith(("_", ".")) for part in p.relative_to(root).parts[:-1])
    )


def bundled_root() -> Path | None:
    """The bundled cassettes folder, resolved (None when installed without its data)."""
    try:
        return bundled_cassettes().resolve()
    except ResourceError:
        return None


def case_name(path: Path, root: Path, bundled: Path | None) -> Path:
    """What a case's id is made of: the file relative to the folder the user gave, except
    that a bundled cassette (under ``bundled``, :func:`bundled_root`) is always named from
    the bundled folder.

    So ``check --cassettes <bundled>/openai-completions/x.yaml`` (a reproduce command, or a
    narrowed run) meets the same case as the full run, with the same known failures; two
    bundled protocol folders given together do not collide on a shared file name.
    """
    if bundled is not None:
        try:
            return path.resolve().relative_to(bundled)
        except ValueError:
            pass
    return path.relative_to(root) if path != root else Path(path.name)


def load_cases(
    roots: Iterable[Path], *, skip_unusable: bool = False
) -> tuple[list[Case], list[Skipped]]:
    """Cases under the given cassette folders (or files), plus what was passed over and why.

    Never quietly empty: a path that does not exist, a folder without cassettes, or a file
    that does not load raises :class:`CaseLoadError`; so does a cassette from which no case
    comes (no stream or error response of a protocol we know), unless ``skip_unusable``,
    which lists such a file, and a file that does not load as a cassette, in the skipped
    instead, one entry per file with its reason (a folder of another project's recordings
    mixes streams with token exchanges and files of other formats). Interactions that are
    neither a stream nor an error response are not cases and are listed as skipped.
    Agent-loop scenarios are passed over.
    """
    known = set(protocols())
    bundled = bundled_root()
    cases: list[Case] = []
    skipped: list[Skipped] = []
    for root in roots:
        root = Path(root)
        if not root.exists():
            raise CaseLoadError(f"{root}: no such cassette folder or file")
        files = cassette_files(root)
        found_cassette = False
        for path in files:
            rel = case_name(path, root, bundled)
            try:
                cassette = load_cassette(path)
            except NotACassette:
                continue
            except CassetteError as exc:
                if not skip_unusable:
                    raise CaseLoadError(str(exc)) from None
                found_cassette = True  # a file meant as a cassette: skipped, and said why
                at = f"interaction {exc.index}: " if exc.index is not None else ""
                skipped.append(Skipped(rel.as_posix(), f"does not load: {at}{exc.problem}"))
                continue
            found_cassette = True
            found, passed, reasons = _cassette_cases(path, rel, cassette, known)
            if found:
                cases.extend(found)
                skipped.extend(passed)
                continue
            why = reasons[0] if reasons else "no stream or error response in it"
            if not skip_unusable:
                raise CaseLoadError(f"{path}: nothing to check: {why}")
            # The whole file is skipped: one entry naming it, not one per interaction.
            whys = list(dict.fromkeys(s.reason for s in passed)) or [why]
            skipped.append(Skipped(rel.as_posix(), f"nothing to check: {'; '.join(whys)}"))
        if not found_cassette:
            raise CaseLoadError(f"{root}: no cassettes in it (vcrpy *.yaml files)")
    return cases, skipped


def _cassette_cases(
    path: Path, rel: Path, cassette: Cassette, known: set[str]
) -> tuple[list[Case], list[Skipped], list[str]]:
    """The cases of one cassette, the interactions passed over, and why those of a
    protocol we cannot read were (the reason a cassette with no case gives)."""
    cases: list[Case] = []
    skipped: list[Skipped] = []
    reasons: list[str] = []
    for inter in cassette.interactions:
        where = f"{rel.as_posix()}#{inter.index}"
        if not (inter.is_streaming or inter.response.status >= 400):
            skipped.append(Skipped(where, "not a stream nor an error response"))
            continue
        try:
            protocol = detect_protocol(inter)
        except UnknownProtocolError as exc:
            reasons.append(str(exc))
            skipped.append(Skipped(where, str(exc)))
            continue
        if protocol not in known:
            reasons.append(f"no reference normalizer for {protocol}")
            skipped.append(Skipped(where, f"no reference normalizer for {protocol}"))
            continue
        body = inter.response.body
        golden = expected_path(path, inter.index)
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
                golden=golden if golden.is_file() else None,
            )
        )
    return cases, skipped, reasons
