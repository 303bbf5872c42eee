"""Writing the report folder: four renderings of one model, each file replaced atomically."""

from __future__ import annotations

from pathlib import Path

from stream_harness.recordings.atomic import write_atomic
from stream_harness.reporting import html, jsonl, junit, markdown
from stream_harness.reporting.report import Report

REPORT_FILES = ("report.jsonl", "README.md", "report.html", "junit.xml")


def write_report(report: Report, directory: Path) -> list[Path]:
    """Write report.jsonl, README.md, report.html and junit.xml; return their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    # The header once: the order and report.jsonl both need it.
    header = jsonl.header_of(report)
    report = jsonl.in_written_order(report, header)
    texts = dict(
        zip(
            REPORT_FILES,
            (
                jsonl.render(report, header),
                markdown.render(report),
                html.render(report),
                junit.render(report),
            ),
            strict=True,
        )
    )
    paths = []
    for name, text in texts.items():
        path = directory / name
        # A lone surrogate in a message (bytes decoded with surrogateescape) must not abort
        # the write; inside JSON strings backslashreplace even yields the right \\uXXXX.
        write_atomic(path, text, errors="backslashreplace")
        paths.append(path)
    return paths
