"""A per-cassette summary of the reference normalizer over a cassette directory.

This is what ``stream-harness report`` prints before the full conformance report
exists; it also serves as a quick sanity view when adding cassettes.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from stream_harness.contract.events import DoneEvent, ErrorEvent, TextBlock, ThinkingBlock, ToolCall
from stream_harness.contract.rules import check_contract
from stream_harness.providers.reference import detect_protocol
from stream_harness.providers.registry import UnknownProtocolError
from stream_harness.recordings.cassette import CassetteError, load_cassette
from stream_harness.recordings.golden import interaction_events
from stream_harness.reporting.console import console_for, is_terminal


@dataclass(frozen=True, slots=True)
class Row:
    cassette: str
    interaction: int
    protocol: str
    status: int
    terminal: str
    stop: str
    blocks: str
    violations: int
    problem: str = ""


def cassette_files(root: Path) -> list[Path]:
    """Cassettes under ``root``, skipping generator scripts and scenario folders."""
    return sorted(
        p
        for p in root.rglob("*.yaml")
        if not any(part.startswith("_") or part == "scenarios" for part in p.relative_to(root).parts[:-1])
    )


def summarise(root: Path) -> list[Row]:
    rows: list[Row] = []
    for path in cassette_files(root):
        name = str(path.relative_to(root))
        try:
            cassette = load_cassette(path)
        except CassetteError as exc:
            rows.append(Row(name, -1, "?", 0, "-", "-", "-", 0, str(exc)))
            continue
        for inter in cassette.interactions:
            try:
                protocol = detect_protocol(inter)
            except UnknownProtocolError as exc:
                rows.append(Row(name, inter.index, "?", inter.response.status, "-", "-", "-", 0, str(exc)))
                continue
            events = interaction_events(inter, protocol)
            term = events[-1]
            msg = term.message if isinstance(term, DoneEvent | ErrorEvent) else None
            blocks = "-"
            stop = "-"
            if msg is not None:
                t = sum(isinstance(b, TextBlock) for b in msg.content)
                th = sum(isinstance(b, ThinkingBlock) for b in msg.content)
                tc = sum(isinstance(b, ToolCall) for b in msg.content)
                blocks = f"{t} text, {th} thinking, {tc} tool"
                stop = f"{msg.stop_reason} ({msg.provider_stop_reason or '-'})"
            problem = term.error_message if isinstance(term, ErrorEvent) else ""
            rows.append(
                Row(name, inter.index, protocol, inter.response.status, term.type, stop, blocks,
                    len(check_contract(events)), problem)
            )  # fmt: skip
    return rows


def plain_line(r: Row) -> str:
    """One interaction as a log shows it: everything, nothing cut."""
    if r.interaction < 0:
        return f"{r.cassette}: does not load: {r.problem}"
    contract = "contract ok" if r.violations == 0 else f"{r.violations} violations"
    head = f"{r.cassette}#{r.interaction}: {r.protocol}, http {r.status}, {r.terminal}"
    note = f"; note: {' '.join(r.problem.split())}" if r.problem else ""
    return f"{head}, stop {r.stop}, blocks {r.blocks}, {contract}{note}"


def run_summary(root: Path, form: str = "auto", out: TextIO | None = None) -> int:
    """The table on a terminal (or ``form="rich"``), plain lines otherwise; exit 2 when
    there is nothing to summarise, 1 when an interaction breaks the contract or a file
    does not load."""
    out = out or sys.stdout
    if not root.is_dir():
        print(f"stream-harness: {root}: no such cassette directory", file=sys.stderr)
        return 2
    rows = summarise(root)
    if not rows:
        print(f"stream-harness: {root}: no cassettes in it: nothing was checked", file=sys.stderr)
        return 2
    bad = sum(1 for r in rows if r.violations or r.interaction < 0)
    if form == "rich" or (form == "auto" and is_terminal(out)):
        _table(root, rows, console_for(out))
    else:
        for r in rows:
            print(plain_line(r), file=out)
    print(f"{len(rows)} interactions, {bad} with contract violations or load errors", file=out)
    return 1 if bad else 0


def _table(root: Path, rows: list[Row], console: Console) -> None:
    table = Table(title=Text(f"Reference normalizer over {root}"), show_lines=False)
    columns = ["cassette", "#", "protocol", "http", "terminal", "stop (raw)", "blocks", "contract"]
    # A note column empty in every row is not drawn (it would only narrow the others).
    with_note = any(r.problem for r in rows)
    for col in [*columns, *(["note"] if with_note else [])]:
        table.add_column(col, overflow="fold")
    for r in rows:
        ok = r.violations == 0 and r.interaction >= 0
        verdict = Text("ok", style="green") if ok else Text(f"{r.violations} violations", style="red")
        note = [Text((r.problem[:70] + "...") if len(r.problem) > 70 else r.problem)] if with_note else []
        cells = (r.cassette, str(r.interaction), r.protocol, str(r.status), r.terminal, r.stop, r.blocks)
        table.add_row(*(Text(c) for c in cells), verdict, *note)
    console.print(table)
