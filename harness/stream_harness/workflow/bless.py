"""``stream-harness bless``: (re)write a cassette's expected events and show what changed.

The events come from the reference normalizer through :func:`stream_harness.recordings.golden.render_cassette`
(the same text the golden tests compare against) and land where
:func:`stream_harness.recordings.golden.expected_path` says. Before anything is written the command prints a
unified diff against the files already there, so blessing is a reviewed act: the diff is
what goes into the pull request. Expected files left over from interactions the cassette no
longer has are removed (and shown as removed).

Two guards: an expected file is checked for secrets with the table lint uses (error texts
end up in events, and a golden file is as public as a cassette), and events that break the
contract are reported as warnings, because blessing them records a bug as the truth.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from stream_harness.contract.events import events_from_jsonl
from stream_harness.contract.facts import bundle_is_writable
from stream_harness.contract.rules import check_contract
from stream_harness.providers.registry import UnknownProtocolError, by_cassette_folder
from stream_harness.recordings.atomic import write_atomic
from stream_harness.recordings.cassette import CassetteError, load_cassette
from stream_harness.recordings.golden import expected_path, is_bundled, render_cassette
from stream_harness.workflow.command import add_detected_protocol, fail
from stream_harness.workflow.secrets import load_table

__all__ = ["GoldenChange", "add_bless_parser", "apply_changes", "bless_command", "plan_bless"]


@dataclass(frozen=True, slots=True)
class GoldenChange:
    path: Path
    old: str | None
    """The current file's text; None when there is none."""
    new: str | None
    """The text to write; None when the file is to be removed."""

    @property
    def changed(self) -> bool:
        return self.old != self.new

    @property
    def status(self) -> str:
        if not self.changed:
            return "unchanged"
        if self.old is None:
            return "new"
        if self.new is None:
            return "removed"
        return "updated"

    def diff(self) -> str:
        label = _display(self.path)
        return "".join(
            difflib.unified_diff(
                (self.old or "").splitlines(keepends=True),
                (self.new or "").splitlines(keepends=True),
                fromfile="/dev/null" if self.old is None else f"a/{label}",
                tofile="/dev/null" if self.new is None else f"b/{label}",
            )
        )


class BlessError(Exception):
    """Nothing was written; the message is one line."""

    def __init__(self, message: str, code: int, details: list[str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.details = details or []


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _default_protocol(cassette_path: Path) -> str | None:
    return by_cassette_folder(cassette_path.parent.name)


def plan_bless(
    cassette_path: Path, *, protocol: str | None = None, root: Path | None = None
) -> tuple[list[GoldenChange], list[str]]:
    """The changes blessing would make, and contract warnings; raises BlessError."""
    cassette_path = Path(cassette_path)
    try:
        cassette = load_cassette(cassette_path)
    except CassetteError as exc:
        raise BlessError(str(exc), 2) from None
    try:
        rendered = render_cassette(cassette, protocol or _default_protocol(cassette_path))
    except UnknownProtocolError as exc:
        raise BlessError(f"{cassette_path}: {exc}", 2) from None
    except Exception as exc:  # a normalizer bug must not become a golden file
        raise BlessError(
            f"{cassette_path}: the reference normalizer raised {type(exc).__name__}: {exc}", 1
        ) from None

    table = load_table()
    leaks = [
        f"{expected_path(cassette_path, i, root=root)}: {hit.kind}: {hit.masked()}"
        for i, text in rendered.items()
        for hit in table.scan(text, "body")
    ]
    if leaks:
        raise BlessError(
            f"{cassette_path}: not blessed: the events hold secrets (scrub the cassette first)",
            1,
            leaks,
        )

    warnings = [
        f"{cassette_path}: interaction {i}: {violation}"
        for i, text in rendered.items()
        for violation in check_contract(events_from_jsonl(text))
    ]
    changes = []
    wanted = set()
    for index, text in sorted(rendered.items()):
        target = expected_path(cassette_path, index, root=root)
        wanted.add(target)
        changes.append(GoldenChange(target, _read(target), text))
    for stale in _existing(expected_path(cassette_path, 0, root=root)):
        if stale not in wanted:
            changes.append(GoldenChange(stale, _read(stale), None))
    return changes, warnings


def _existing(first: Path) -> list[Path]:
    """Every expected file of one cassette: ``<stem>.jsonl`` and ``<stem>.<i>.jsonl``."""
    stem = first.name[: -len(".jsonl")]
    numbered = re.compile(re.escape(stem) + r"\.[0-9]+\.jsonl")
    found = [first] if first.is_file() else []
    if first.parent.is_dir():
        found += sorted(p for p in first.parent.iterdir() if numbered.fullmatch(p.name))
    return found


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def apply_changes(changes: list[GoldenChange]) -> None:
    """Write (atomically: a reader sees the old file or the new one) and remove."""
    for change in changes:
        if not change.changed:
            continue
        if change.new is None:
            change.path.unlink(missing_ok=True)
            continue
        write_atomic(change.path, change.new)


def add_bless_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "bless",
        help="write or update a cassette's expected events (beside it; bundled ones under specs/expected/) and show the diff",
        description="Exit status 1 with --check when the expected files differ (or when the events hold a secret), 2 on a bad cassette.",
    )
    p.add_argument("cassette", metavar="CASSETTE", help="cassettes/<protocol>/<name>.yaml")
    add_detected_protocol(
        p, "wire protocol id (default: the folder name when it is one, else detected)"
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="only show the diff; exit 1 if blessing would change anything",
    )
    p.add_argument(
        "--expected-dir",
        metavar="DIR",
        help="root of <protocol>/<name>.jsonl expected files (default: beside the cassette, as <name>.expected.jsonl)",
    )
    p.set_defaults(func=bless_command)
    return p


def bless_command(args: argparse.Namespace) -> int:
    root = Path(args.expected_dir) if args.expected_dir else None
    if (
        root is None
        and not args.check
        and is_bundled(Path(args.cassette))
        and not bundle_is_writable()
    ):
        return fail(
            f"{args.cassette}: a cassette bundled with stream-harness; the installed "
            "package is never written to (copy the cassette into your project and bless the copy)",
            2,
        )
    try:
        changes, warnings = plan_bless(Path(args.cassette), protocol=args.protocol, root=root)
    except BlessError as exc:
        return fail(str(exc), exc.code, exc.details)
    for change in changes:
        if change.changed:
            sys.stdout.write(change.diff())
    for warning in warnings:
        print(f"warning: contract: {warning}", file=sys.stderr)
    changed = [c for c in changes if c.changed]
    if not args.check:
        apply_changes(changes)
    verb = "would be" if args.check else "were"
    for change in changes:
        status = change.status
        if args.check and change.changed:
            status = f"differs (would be {status})"
        print(f"{_display(change.path)}: {status}", file=sys.stderr)
    print(
        f"bless: {len(changed)} of {len(changes)} expected file(s) {verb} changed", file=sys.stderr
    )
    return 1 if args.check and changed else 0
