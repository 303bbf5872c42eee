"""The one gate every new cassette passes: scrubbed, written, re-read, linted, then placed.

``record`` and ``import`` hand their (already scrubbed) interactions to
:func:`write_checked`. It writes the cassette into a private folder beside the target,
reads that file back, and lints the bytes that would land; only a clean file is moved into
place, with one ``os.replace`` (or ``os.link`` when an existing file must not be
replaced), so the target is either the old file, the new complete file, or absent, never
half a cassette, whatever fails or interrupts in between.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from stream_harness.recordings.cassette import (
    CassetteError,
    Interaction,
    dump_cassette,
    load_cassette,
)
from stream_harness.workflow.command import EXIT_INTERRUPTED, fail
from stream_harness.workflow.lint import normalize_findings, secret_findings

__all__ = [
    "TargetExistsError",
    "WriteError",
    "WriteResult",
    "refuse_existing",
    "scratch_dir",
    "write_checked",
    "write_failure",
]


class WriteError(Exception):
    """Nothing was written; ``str()`` is one line saying why."""

    def __init__(self, message: str, details: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.details = list(details)


class TargetExistsError(WriteError):
    """The target exists and replacing it was not asked for (a usage error, not a failure)."""


@dataclass(frozen=True, slots=True)
class WriteResult:
    path: Path
    interactions: int
    warnings: list[str]
    """Findings that do not stop the write: streams the reference does not normalize
    cleanly (worth recording: that is what a conformance case is)."""


@contextmanager
def scratch_dir(target: Path) -> Iterator[Path]:
    """A private folder beside ``target`` (same file system, so the final move is atomic),
    removed on the way out, on success, error or KeyboardInterrupt alike."""
    target.parent.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def write_failure(exc: BaseException, out: str) -> int:
    """What stopped a command from writing ``out``, said, as its exit status.

    Only a cassette refused by the gate (:class:`WriteError`) is a failure (1), with the
    findings below it; anything else the caller passes is a usage error (2).
    """
    if isinstance(exc, KeyboardInterrupt):
        # SIGTERM comes as a subclass (the CLI's Terminated): 143, as for every command.
        code = EXIT_INTERRUPTED if type(exc) is KeyboardInterrupt else 128 + signal.SIGTERM
        return fail(f"{out}: interrupted; nothing written", code)
    if isinstance(exc, WriteError) and not isinstance(exc, TargetExistsError):
        return fail(str(exc), 1, exc.details)
    return fail(str(exc), 2)


def refuse_existing(target: Path, force: bool) -> None:
    if target.exists() and not force:
        raise TargetExistsError(f"{target}: already exists; pass --force to replace it")


def write_checked(
    interactions: Sequence[Interaction],
    target: Path,
    *,
    scratch: Path,
    force: bool = False,
    literals: Sequence[str] = (),
    protocol: str | None = None,
) -> WriteResult:
    """Write ``interactions`` to ``target`` if, read back, they hold no secret."""
    refuse_existing(target, force)
    staged = scratch / target.name
    try:
        dump_cassette(interactions, staged)
        written = load_cassette(staged)
    except CassetteError as exc:
        raise WriteError(f"{target}: the cassette does not read back: {exc.problem}") from None
    # Findings name the target, not the scratch file a user never sees.
    written = replace(written, path=target)
    leaks = secret_findings(written, raw=staged.read_bytes(), literals=literals)
    if leaks:
        raise WriteError(
            f"{target}: not written: {len(leaks)} secret(s) left after scrubbing",
            [str(f) for f in leaks],
        )
    problems, _notes = normalize_findings(written, protocol)
    _place(staged, target, force)
    return WriteResult(target, len(written.interactions), [str(f) for f in problems])


def _place(staged: Path, target: Path, force: bool) -> None:
    if force:
        os.replace(staged, target)
        return
    try:
        # Creates the name only if nobody took it since refuse_existing looked.
        os.link(staged, target)
    except FileExistsError:
        raise TargetExistsError(f"{target}: already exists; pass --force to replace it") from None
    except OSError:  # a file system without hard links
        refuse_existing(target, force)
        os.replace(staged, target)
