"""``stream-harness check`` and ``stream-harness report``: the conformance suite from the shell."""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from harness.adapter import Adapter, AdapterLoadError, available_adapters, load_adapter
from harness.conformance import CHECKS, CHECKS_BY_ID, bundled_cassettes
from harness.conformance.cases import Case, Skipped, load_cases
from harness.conformance.expectations import ExpectationsError, expectations_for
from harness.conformance.runner import AdapterRun, RunConfig, run_adapters
from harness.reporting import build_report, write_report
from harness.reporting.keep import keep_previous


class CommandError(Exception):
    """One line for the user; the CLI prints it and exits 2."""


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--adapter", action="append", help="adapter: built-in name, entry-point name or module:object (repeatable)")
    p.add_argument(
        "--adapter-command", action="append", default=[],
        help="an executable speaking the stdio adapter protocol (specs/adapter-protocol.md), e.g. \"node adapter.mjs\" (repeatable)",
    )  # fmt: skip
    p.add_argument("--cassettes", action="append", help="cassette folder or file (repeatable; default: the bundled cassettes/)")
    p.add_argument("--examples", type=int, default=100, help="random splits per split-sensitive check (default 100)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random splits (default 0)")
    p.add_argument("--check", action="append", dest="checks", help="only these check ids (repeatable)")
    p.add_argument("--jobs", type=int, default=0, help="worker processes (default: one per core; 1 runs in-process)")


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("check", help="run the conformance suite; exit 1 on any new failure")
    _add_common(p)
    p.set_defaults(func=check_command)

    p = sub.add_parser("report", help="the main job: run the suite and write conformance_report/")
    _add_common(p)
    p.add_argument("--out", default=str(bundled_cassettes().parent / "conformance_report"), help="report folder (default: conformance_report/)")
    p.add_argument(
        "--fresh", action="store_true",
        help="drop the rows of adapters this run did not run (default: keep them from the report in --out when it describes the same cases, checks, seed and examples)",
    )  # fmt: skip
    p.set_defaults(func=report_command)


def _adapters(names: list[str] | None, *, default_all: bool) -> list[Adapter]:
    if not names:
        names = available_adapters() if default_all else ["reference"]
    out = []
    for name in names:
        try:
            out.append(load_adapter(name))
        except AdapterLoadError as exc:
            raise CommandError(str(exc)) from None
    return out


def _config(args: argparse.Namespace) -> RunConfig:
    if args.examples < 0:
        raise CommandError(f"--examples must be >= 0, got {args.examples}")
    if args.checks:
        unknown = sorted(set(args.checks) - set(CHECKS_BY_ID))
        if unknown:
            raise CommandError(f"unknown check id(s) {unknown} (known: {', '.join(CHECKS_BY_ID)})")
        checks = [CHECKS_BY_ID[c] for c in args.checks]
    else:
        checks = list(CHECKS)
    return RunConfig(examples=args.examples, seed=args.seed, checks=checks)


def _cases(args: argparse.Namespace) -> tuple[list[Case], list[Skipped]]:
    roots = [Path(p) for p in args.cassettes] if args.cassettes else [bundled_cassettes()]
    for root in roots:
        if not root.exists():
            raise CommandError(f"{root}: no such cassette folder or file")
    cases, skipped = load_cases(roots, bundled_root=bundled_cassettes())
    if not cases:
        raise CommandError(f"no conformance cases under {', '.join(map(str, roots))}")
    return cases, skipped


def run_suite(args: argparse.Namespace, *, default_all: bool, console: Console) -> tuple[list[AdapterRun], list[Case], list[Skipped], RunConfig]:
    named = [*(args.adapter or []), *(f"cmd:{c}" for c in args.adapter_command)]
    adapters = _adapters(named or None, default_all=default_all)
    config = _config(args)
    cases, skipped = _cases(args)
    expectations = []
    for adapter in adapters:
        try:
            expectations.append(expectations_for(adapter.name))
        except ExpectationsError as exc:
            raise CommandError(str(exc)) from None
    jobs = args.jobs if args.jobs > 0 else (os.cpu_count() or 1)
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console, transient=True, disable=not console.is_terminal,
    ) as progress:  # fmt: skip
        tasks = [progress.add_task(adapter.name, total=len(cases)) for adapter in adapters]

        def advance(adapter_index: int, done: int) -> None:
            progress.advance(tasks[adapter_index], done)

        runs = run_adapters(adapters, cases, config, expectations, jobs=jobs, progress=advance)
    return runs, cases, skipped, config


def print_summary(runs: list[AdapterRun], console: Console) -> int:
    table = Table(title="stream-harness conformance")
    table.add_column("adapter")
    table.add_column("version")
    for check in CHECKS:
        table.add_column(check.id, justify="center")
    new_failures = 0
    for run in runs:
        cells = []
        for check in CHECKS:
            rows = [r for r in run.results if r.check == check.id]
            if not rows:
                cells.append("[dim]-[/dim]")
                continue
            counts = Counter(r.outcome for r in rows)
            bad = counts["failed"] + counts["errored"]
            new_failures += bad
            text = f"{counts['passed'] + counts['fixed']}/{len(rows)}"
            if counts["known_failure"]:
                text += f" ({counts['known_failure']} known)"
            style = "red" if bad else ("yellow" if counts["known_failure"] else "green")
            cells.append(f"[{style}]{text}[/{style}]")
        table.add_row(run.adapter.name, run.version, *cells)
    console.print(table)
    for run in runs:
        for r in run.results:
            if r.outcome in ("failed", "errored"):
                first = r.failures[0] if r.failures else None
                text = escape(f"[{run.adapter.name}] {r.check} :: {r.case}: {first.message if first else r.outcome}")
                console.print(f"[red]FAIL[/red] {text}", highlight=False)
                if first and first.command:
                    console.print(f"     reproduce: {first.command}", highlight=False, markup=False)
    return new_failures


def check_command(args: argparse.Namespace) -> int:
    console = Console(stderr=False)
    try:
        runs, _, _, _ = run_suite(args, default_all=False, console=console)
    except CommandError as exc:
        print(f"stream-harness: {exc}", file=sys.stderr)
        return 2
    return 1 if print_summary(runs, console) else 0


def report_command(args: argparse.Namespace) -> int:

    console = Console()
    started = datetime.now(UTC)
    try:
        runs, cases, skipped, config = run_suite(args, default_all=True, console=console)
    except CommandError as exc:
        print(f"stream-harness: {exc}", file=sys.stderr)
        return 2
    finished = datetime.now(UTC)
    report = build_report(
        runs, cases, skipped, config, started=started, finished=finished,
        environment={"python": platform.python_version(), "platform": platform.platform(terse=True)},
    )  # fmt: skip
    out = Path(args.out)
    if not args.fresh:
        report, note = keep_previous(report, out)
        if note:
            console.print(note, highlight=False, markup=False)
    written = write_report(report, out)
    failures = print_summary(runs, console)
    console.print(f"wrote {', '.join(str(p) for p in written)} ({(finished - started).total_seconds():.1f} s)")
    return 1 if failures else 0

