"""The committed conformance_report/report.html, opened in a real headless browser.

Debian's chromium renders the page; the test takes a screenshot (kept under pytest's
tmp folder, for a person to look at) and reads the rendered DOM: the matrix table must be
there with one row per adapter of the committed report.jsonl and one coloured cell per
adapter and check, each cell's colour class matching its outcome. Skipped when
/usr/bin/chromium is absent (``apt-get install chromium``).
"""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from stream_harness.reporting import load_report

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "conformance_report"
CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
)

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)"
)

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,900",
]


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    argv = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


class _Cells(HTMLParser):
    """The matrix cells of a DOM dump: (adapter, check, outcome, class) per ``td``, row headers."""

    def __init__(self) -> None:
        super().__init__()
        self.in_matrix = False
        self.in_row_header = False
        self.cells: list[tuple[str, str, str, str]] = []
        self.rows: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table" and a.get("id") == "matrix":
            self.in_matrix = True
        elif self.in_matrix and tag == "td" and "data-adapter" in a:
            self.cells.append(
                (
                    a["data-adapter"] or "",
                    a.get("data-check") or "",
                    a.get("data-outcome") or "",
                    a.get("class") or "",
                )
            )
        elif self.in_matrix and tag == "th" and a.get("scope") == "row":
            self.in_row_header = True
            self.rows.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.in_matrix = False
        if tag == "th":
            self.in_row_header = False

    def handle_data(self, data: str) -> None:
        if self.in_row_header:
            self.rows[-1] += data


def test_the_committed_report_renders_its_matrix(tmp_path: Path) -> None:
    page = REPORT / "report.html"
    report = load_report(REPORT / "report.jsonl")
    url = page.resolve().as_uri()

    shot = tmp_path / "report.png"
    done = _chromium(tmp_path, f"--screenshot={shot}", url)
    assert shot.is_file(), done.stderr[-2000:]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000  # a page, not a blank

    dom = _chromium(tmp_path, "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    cells = _Cells()
    cells.feed(dom.stdout)
    adapters = [a.name for a in report.adapters]
    checks = [c.id for c in report.checks]
    assert [r.split()[0] for r in cells.rows] == adapters
    assert [(a, c) for a, c, _, _ in cells.cells] == [(a, c) for a in adapters for c in checks]
    for adapter, check, outcome, css in cells.cells:
        assert outcome in ("pass", "known", "fail", "na"), (adapter, check)
        assert css == outcome  # the colour class is the outcome
    # Every row header shows the library version that ran.
    for row, info in zip(cells.rows, report.adapters, strict=True):
        assert info.version.split(",")[0] in row
