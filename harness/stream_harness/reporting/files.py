"""Writing the report folder: four renderings of one model, each file replaced atomically."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from stream_harness.reporting import html, jsonl, junit, markdown
from stream_harness.reporting.report import Report

REPORT_FILES = ("report.jsonl", "README.md", "report.html", "junit.xml")


def write_text_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder and rename over the target.

    A reader (or a crash) never sees half a report. ``backslashreplace`` keeps a lone
    surrogate in a message (bytes decoded with surrogateescape) from aborting the write;
    inside JSON strings it even yields the right ``\\uXXXX`` escape.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(
            fd, "w", encoding="utf-8", errors="backslashreplace", newline="\n"
        ) as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_report(report: Report, directory: Path) -> list[Path]:
    """Write report.jsonl, README.md, report.html and junit.xml; return their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    texts = dict(
        zip(
            REPORT_FILES,
            (
                jsonl.render(report),
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
        write_text_atomic(path, text)
        paths.append(path)
    return paths
