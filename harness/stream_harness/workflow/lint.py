"""``stream-harness lint``: secrets, malformed cassettes, bodies that do not normalize.

One line per finding, ``<file>: interaction <i>: <kind> in <where>: <detail>``, so that a
CI log names what to fix without a debugger. Secrets are printed masked (first characters
and length), never whole: the log is as public as the cassette.

Three scans, cheapest and most important first:

1. the file's raw text, by the patterns of ``specs/secrets.yaml``: catches secrets in keys
   the loader does not read;
2. every interaction as loaded (headers, URI, bodies after undoing gzip, ``parsed_body``
   rebuilt): catches what raw text hides (base64 ``!!binary`` gzip bodies, YAML-mapping
   JSON bodies) and gives the interaction number;
3. every streaming response through the reference normalizer and the contract checker.

A file that does not load is one ``malformed`` finding and nothing else is checked in it.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from stream_harness.contract.events import ErrorEvent
from stream_harness.contract.rules import check_contract
from stream_harness.providers.reference import normalize
from stream_harness.providers.registry import (
    UnknownProtocolError,
    by_cassette_folder,
    detect_protocol,
    is_registered,
    protocol_ids,
)
from stream_harness.recordings.cassette import (
    Cassette,
    CassetteError,
    Interaction,
    NotACassette,
    load_cassette,
)
from stream_harness.workflow.command import add_detected_protocol, fail
from stream_harness.workflow.secrets import Hit, SecretTable, load_table

__all__ = [
    "Finding",
    "LintReport",
    "add_lint_parser",
    "iter_cassette_files",
    "lint_cassette",
    "lint_command",
    "lint_file",
    "lint_paths",
    "secret_findings",
]

_MAX_VIOLATIONS = 3  # per interaction; the rest is counted, not listed
# How the reference normalizers word an error that is the body's fault rather than the
# provider's (harness/stream_harness/providers/base.py: framing faults, malformed JSON, malformed events).
# ErrorInfo carries no structured marker for this yet, so the wording is the contract; it
# only decides whether a note is printed.
MALFORMED_PREFIXES = ("malformed ", "framing error")


def _short(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


@dataclass(frozen=True, slots=True)
class Finding:
    path: str
    interaction: int | None
    kind: str
    where: str
    detail: str

    def __str__(self) -> str:
        line = self.path
        if self.interaction is not None:
            line += f": interaction {self.interaction}"
        line += f": {self.kind}"
        if self.where:
            line += f" in {self.where}"
        if self.detail:
            line += f": {self.detail}"
        return line


@dataclass(slots=True)
class LintReport:
    files: int = 0
    interactions: int = 0
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Things not checked, and why (e.g. no reference normalizer for a protocol)."""
    passed_over: list[str] = field(default_factory=list)
    """YAML files that are ours but not cassettes (agent-loop scenarios)."""


# ---------------------------------------------------------------------------
# Secrets
# ---------------------------------------------------------------------------


def _interaction_hits(
    interaction: Interaction, table: SecretTable, literals: Sequence[str]
) -> Iterator[tuple[str, Hit]]:
    req, resp = interaction.request, interaction.response
    for side, headers in (("request", req.headers), ("response", resp.headers)):
        for name, values in headers.items():
            for value in values:
                for hit in table.scan_header(name, value, literals):
                    yield f"{side} header {name}", hit
    for hit in table.scan_uri(req.uri, literals):
        yield "request uri", hit
    for side, body in (("request", req.body), ("response", resp.body)):
        for hit in table.scan(body.decode("latin-1"), "body", literals):
            yield f"{side} body", hit


def secret_findings(
    cassette: Cassette,
    *,
    raw: bytes | None = None,
    literals: Sequence[str] = (),
    table: SecretTable | None = None,
) -> list[Finding]:
    """The secrets in a loaded cassette, and in its raw file text when given."""
    table = table if table is not None else load_table()
    path = str(cassette.path)
    findings: list[Finding] = []
    seen: list[str] = []
    for interaction in cassette.interactions:
        for where, hit in _interaction_hits(interaction, table, literals):
            seen.append(hit.secret)
            findings.append(Finding(path, interaction.index, hit.kind, where, hit.masked()))
    if raw is not None:
        text = raw.decode("latin-1")
        for hit in table.scan(text, "body", literals):
            # Already reported with its interaction (the same secret, or a header value
            # that contains it): the raw scan only adds what the loader did not read.
            if any(hit.secret in s or s in hit.secret for s in seen):
                continue
            line = text.count("\n", 0, hit.start) + 1
            findings.append(
                Finding(path, None, hit.kind, "file text", f"line {line}: {hit.masked()}")
            )
    return findings


# ---------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------


def _protocol(path: Path, interaction: Interaction, override: str | None) -> str:
    if override:
        return override
    return by_cassette_folder(path.parent.name) or detect_protocol(interaction)


def normalize_findings(
    cassette: Cassette, protocol: str | None = None
) -> tuple[list[Finding], list[str]]:
    """Findings for streaming interactions the reference cannot normalize cleanly (it
    raises, or its events break the contract), and notes on those it could not check
    (a protocol it cannot tell, or one without a reference normalizer) and on bodies
    whose wire bytes are broken."""
    available = set(protocol_ids())
    path = str(cassette.path)
    findings: list[Finding] = []
    notes: list[str] = []
    for interaction in cassette.interactions:
        if not interaction.is_streaming:
            continue
        try:
            proto = _protocol(cassette.path, interaction, protocol)
        except UnknownProtocolError:
            # Not the cassette's fault: a wire protocol the harness does not know (legacy
            # /v1/complete, Bedrock InvokeModel...). Said, but not failed on.
            notes.append(
                f"{path}: interaction {interaction.index}: not normalized (cannot tell the "
                f"protocol of {interaction.request.uri}; name it with --protocol)"
            )
            continue
        if proto not in available:
            notes.append(
                f"{path}: interaction {interaction.index}: not normalized (no reference normalizer for {proto})"
            )
            continue
        resp = interaction.response
        try:
            events = list(normalize(proto, [resp.body], status=resp.status, headers=resp.headers))
        except Exception as exc:  # the finding is exactly "the normalizer broke"
            detail = f"{proto} normalizer raised {type(exc).__name__}: {' '.join(str(exc).split())}"
            findings.append(Finding(path, interaction.index, "normalize", "response body", detail))
            continue
        for event in events:
            if isinstance(event, ErrorEvent) and event.error_message.startswith(MALFORMED_PREFIXES):
                # A note, not a finding: broken wire bytes are a legitimate fixture (a
                # cut stream, a CRC mismatch) and the reference handled them as it should.
                notes.append(
                    f"{path}: interaction {interaction.index}: the {proto} stream is malformed "
                    f"(the reference ends it in an error): {_short(event.error_message)}"
                )
        violations = check_contract(events)
        for violation in violations[:_MAX_VIOLATIONS]:
            findings.append(
                Finding(path, interaction.index, "contract", f"{proto} events", str(violation))
            )
        if len(violations) > _MAX_VIOLATIONS:
            more = len(violations) - _MAX_VIOLATIONS
            findings.append(
                Finding(
                    path,
                    interaction.index,
                    "contract",
                    f"{proto} events",
                    f"and {more} more violation(s)",
                )
            )
    return findings, notes


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------


def lint_cassette(
    cassette: Cassette,
    *,
    raw: bytes | None = None,
    protocol: str | None = None,
    check_normalize: bool = True,
    literals: Sequence[str] = (),
) -> tuple[list[Finding], list[str]]:
    findings = secret_findings(cassette, raw=raw, literals=literals)
    if not cassette.interactions:
        findings.append(Finding(str(cassette.path), None, "malformed", "", "no interactions"))
    notes: list[str] = []
    if check_normalize:
        more, notes = normalize_findings(cassette, protocol)
        findings += more
    return findings, notes


def lint_file(
    path: Path,
    *,
    protocol: str | None = None,
    check_normalize: bool = True,
    literals: Sequence[str] = (),
    report: LintReport | None = None,
) -> LintReport:
    report = report if report is not None else LintReport()
    try:
        raw = path.read_bytes()
        cassette = load_cassette(path)
    except NotACassette as exc:
        report.passed_over.append(str(exc.path))
        return report
    except OSError as exc:
        report.files += 1
        report.findings.append(
            Finding(str(path), None, "malformed", "", f"cannot read file: {exc.strerror or exc}")
        )
        return report
    except CassetteError as exc:
        report.files += 1
        report.findings.append(Finding(exc.path, exc.index, "malformed", "", exc.problem))
        return report
    report.files += 1
    report.interactions += len(cassette.interactions)
    findings, notes = lint_cassette(
        cassette, raw=raw, protocol=protocol, check_normalize=check_normalize, literals=literals
    )
    report.findings += findings
    report.notes += notes
    return report


def iter_cassette_files(paths: Iterable[Path], exclude: Sequence[str] = ()) -> Iterator[Path]:
    """The files given, and every ``*.yaml``/``*.yml`` below the directories given, sorted;
    hidden files and folders (temporary files, ``.venv``) are skipped, and so are paths
    (relative to the folder given) that match an ``exclude`` glob."""
    for path in paths:
        if not path.is_dir():
            yield path
            continue
        for found in sorted(path.rglob("*")):
            rel = found.relative_to(path)
            if found.suffix not in (".yaml", ".yml") or not found.is_file():
                continue
            if any(part.startswith(".") for part in rel.parts):
                continue
            if any(fnmatch.fnmatchcase(rel.as_posix(), pattern) for pattern in exclude):
                continue
            yield found


def lint_paths(
    paths: Iterable[Path],
    *,
    protocol: str | None = None,
    check_normalize: bool = True,
    exclude: Sequence[str] = (),
) -> LintReport:
    report = LintReport()
    for path in iter_cassette_files(paths, exclude):
        lint_file(path, protocol=protocol, check_normalize=check_normalize, report=report)
    return report


# ---------------------------------------------------------------------------
# Command
# ---------------------------------------------------------------------------


def add_lint_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "lint",
        help="check cassettes for secrets and account ids, malformed files, and streams that do not normalize cleanly",
        description="Exit status 1 when anything is found (one line per finding), 2 on a bad argument.",
    )
    p.add_argument(
        "paths",
        nargs="*",
        default=["cassettes"],
        metavar="PATH",
        help="cassette files or folders (default: ./cassettes)",
    )
    add_detected_protocol(
        p,
        "protocol of every streaming interaction (default: the folder name when it is a protocol id, else detected)",
    )
    p.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip files whose path below a folder given matches (e.g. 'scenarios/*'); repeatable",
    )
    p.add_argument(
        "--secrets-only",
        action="store_true",
        help="only look for secrets (skip the normalization check)",
    )
    p.set_defaults(func=lint_command)
    return p


def lint_command(args: argparse.Namespace) -> int:
    if args.protocol is not None and not is_registered(args.protocol):
        return fail(f"unknown protocol {args.protocol!r} (known: {', '.join(protocol_ids())})", 2)
    paths = [Path(p) for p in args.paths]
    missing = [p for p in paths if not p.exists()]
    if missing:
        return fail(f"{missing[0]}: no such file or folder", 2)
    report = lint_paths(
        paths, protocol=args.protocol, check_normalize=not args.secrets_only, exclude=args.exclude
    )
    for finding in report.findings:
        print(finding)
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    if report.passed_over:
        print(
            f"note: passed over {len(report.passed_over)} agent-loop scenario file(s), e.g. {report.passed_over[0]}",
            file=sys.stderr,
        )
    if report.files == 0:
        return fail(f"no cassettes in {', '.join(map(str, paths))}: nothing was checked", 2)
    print(
        f"lint: {report.files} file(s), {report.interactions} interaction(s), {len(report.findings)} finding(s)",
        file=sys.stderr,
    )
    return 1 if report.findings else 0
