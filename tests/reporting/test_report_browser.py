"""The conformance report's page, opened in a real headless browser.

Debian's chromium renders the page; the tests take screenshots (kept under pytest's
tmp folder, for a person to look at) and read the rendered DOM: the matrix table must be
there with one row per adapter of the committed report.jsonl and one coloured cell per
adapter and check, each cell's colour class matching its outcome. The page rendered from
the committed report.jsonl must fit a 1400 px and an 800 px window (issue 36, point 5):
a script added to a copy of the page (the page itself has none) measures the laid-out
tables in the browser and writes the numbers into the DOM that chromium dumps. Skipped
when /usr/bin/chromium is absent (``apt-get install chromium``).
"""

from __future__ import annotations

import html as html_text
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from report_fixtures import make_report
from stream_harness.reporting import html, load_report
from stream_harness.reporting.digest import shown_checks
from stream_harness.reporting.report import AgentRow, Report

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


def _chromium(tmp_path: Path, *args: str, width: int = 1400) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    flags = [f for f in FLAGS if not f.startswith("--window-size")] + [f"--window-size={width},900"]
    argv = [CHROMIUM, *flags, "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


# Added to a copy of the page under test: measures what the browser laid out, once loaded.
MEASURE = """<script>
window.addEventListener('load', () => {
  const out = {viewport: document.documentElement.clientWidth,
               page: document.documentElement.scrollWidth, tables: {}};
  for (const t of document.querySelectorAll('table')) {
    const box = t.getBoundingClientRect();
    out.tables[t.id] = {scroll: t.scrollWidth, left: box.left, right: box.right,
                        heads: [...t.querySelectorAll('thead th')].map(th => th.textContent)};
  }
  const pre = document.createElement('pre');
  pre.id = 'measured';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def _laid_out(tmp_path: Path, page: str, width: int) -> dict[str, Any]:
    """The page in a ``width`` px window: a screenshot for a person, the measured layout."""
    probe = tmp_path / f"probe-{width}.html"
    probe.write_text(page.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    shot = tmp_path / f"report-{width}.png"
    done = _chromium(tmp_path, f"--screenshot={shot}", probe.as_uri(), width=width)
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", done.stderr[-2000:]
    dom = _chromium(tmp_path, "--dump-dom", probe.as_uri(), width=width)
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom.stdout, re.S)
    assert found, dom.stderr[-2000:]
    measured: dict[str, Any] = json.loads(html_text.unescape(found.group(1)))
    return measured


def _assert_fits(measured: dict[str, Any], width: int) -> None:
    viewport = measured["viewport"]
    assert viewport == width, measured  # no scrollbar took a part of the window
    assert measured["page"] <= viewport, (
        f"the page scrolls sideways: {measured['page']} > {viewport}"
    )
    for name, table in measured["tables"].items():
        assert table["scroll"] <= viewport, (name, table["scroll"], viewport)
        assert 0 <= table["left"] and table["right"] <= viewport, (
            name,
            table["left"],
            table["right"],
        )


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
    checks = [c.id for c in shown_checks(report)[0]]
    assert [r.split()[0] for r in cells.rows] == adapters
    assert [(a, c) for a, c, _, _ in cells.cells] == [(a, c) for a in adapters for c in checks]
    for adapter, check, outcome, css in cells.cells:
        assert outcome in ("pass", "known", "fail", "na"), (adapter, check)
        assert css == outcome  # the colour class is the outcome
    # Every row header shows the library version that ran (its first part: the rest is in the metadata).
    for row, info in zip(cells.rows, report.adapters, strict=True):
        assert re.split(r" \(|;|,", info.version)[0] in row


@pytest.fixture(scope="module")
def committed_page() -> str:
    """report.html rendered now from the committed report.jsonl: the page as this code
    makes it, whatever the committed report.html was rendered by."""
    return html.render(load_report(REPORT / "report.jsonl"))


@pytest.mark.parametrize("width", [1400, 800])
def test_the_page_of_the_committed_report_fits_the_window(
    tmp_path: Path, committed_page: str, width: int
) -> None:
    measured = _laid_out(tmp_path, committed_page, width)
    assert {"matrix", "agent-matrix"} <= set(measured["tables"]), measured["tables"].keys()
    _assert_fits(measured, width)


def _agent_row(agent: str, check: str, outcome: str) -> AgentRow:
    return AgentRow(
        agent=agent, agent_version="1.0 (python 3.11; a long list of nested libraries, 2.0)",
        scenario="cut_at_byte", protocol="openai-completions", check=check, title="t",
        outcome=outcome, command=f"stream-harness agents --agent {agent} --check {check}",  # type: ignore[arg-type]
    )  # fmt: skip


def _made_up_report() -> Report:
    """The hand-made fixture report (beta's contract column is n/a, alpha left out so
    that no adapter ran contract) with agent checks A1 to A13 given in string order."""
    base = make_report()
    report = base.model_copy(
        update={
            "adapters": base.adapters[1:],
            "results": tuple(r for r in base.results if r.adapter == "beta"),
            "agent_results": tuple(
                _agent_row(agent, check, "failed" if check == "A10" else "passed")
                for agent in ("fw", "reference")
                for check in sorted(f"A{n}" for n in range(1, 14))
            ),
        }
    )
    return Report.model_validate(report.model_dump())


@pytest.mark.parametrize("width", [1400, 800])
def test_n_a_columns_are_hidden_and_agent_checks_come_in_natural_order(
    tmp_path: Path, width: int
) -> None:
    measured = _laid_out(tmp_path, html.render(_made_up_report()), width)
    _assert_fits(measured, width)
    # contract applied to no adapter of this report: no column for it.
    assert measured["tables"]["matrix"]["heads"] == ["adapter", "split-invariance", "truncation"]
    assert measured["tables"]["agent-matrix"]["heads"] == [
        "agent",
        *(f"A{n}" for n in range(1, 14)),
    ]
