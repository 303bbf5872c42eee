"""A per-cassette summary of the reference normalizer over a cassette directory.

This is what ``stream-harness report`` prints before the full conformance report
exists; it also serves as a quick sanity view when adding cassettes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from stream_harness.contract.events import DoneEvent, ErrorEvent, TextBlock, ThinkingBlock, ToolCall
from stream_harness.contract.rules import check_contract
from stream_harness.providers.reference import detect_protocol
from stream_harness.providers.registry import UnknownProtocolError
from stream_harness.recordings.cassette import CassetteError, load_cassette
from stream_harness.recordings.golden import interaction_events


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


def run_summary(root: Path, console: Console | None = None) -> int:
    console = console or Console()
    if not root.is_dir():
        console.print(f"stream-harness: {root}: no such cassette directory", style="red")
        return 2
    rows = summarise(root)
    if not rows:
        console.print(f"stream-harness: {root}: no cassettes in it: nothing was checked", style="red")
        return 2
    table = Table(title=f"Reference normalizer over {root}", show_lines=False)
    for col in ("cassette", "#", "protocol", "http", "terminal", "stop (raw)", "blocks", "contract", "note"):
        table.add_column(col, overflow="fold")
    for r in rows:
        verdict = "[green]ok[/green]" if r.violations == 0 and r.interaction >= 0 else f"[red]{r.violations} violations[/red]"
        table.add_row(
            r.cassette, str(r.interaction), r.protocol, str(r.status), r.terminal, r.stop, r.blocks, verdict,
            (r.problem[:70] + "...") if len(r.problem) > 70 else r.problem,
        )  # fmt: skip
    console.print(table)
    bad = sum(1 for r in rows if r.violations or r.interaction < 0)
    console.print(f"{len(rows)} interactions, {bad} with contract violations or load errors")
    return 1 if bad else 0
