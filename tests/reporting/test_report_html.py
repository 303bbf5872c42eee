"""report.html: the matrix as a parser sees it, links to details, and hostile strings."""

from __future__ import annotations

from html.parser import HTMLParser

from report_fixtures import C3, EXPECTED_MATRIX, HOSTILE, KNOWN_ISSUE, REPRO, beta_run, make_report
from stream_harness.conformance import CaseResult, Failure
from stream_harness.reporting.html import render
from stream_harness.reporting.report import FailureInfo, Report, Result


class Page(HTMLParser):
    """Collects the matrix cells, every id, every href, and every tag name."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.cells: dict[tuple[str, str], tuple[str, str, str | None]] = {}
        self._in_matrix = False
        self._cell: dict[str, str | None] | None = None
        self._text: list[str] = []
        self._link: str | None = None
        self.messages: list[str] = []
        self._in_message = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append(tag)
        self.attrs.extend(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "a" and a.get("href"):
            self.hrefs.append(str(a["href"]))
            if self._cell is not None:
                self._link = a["href"]
        if tag == "table" and a.get("id") == "matrix":
            self._in_matrix = True
        if self._in_matrix and tag == "td":
            self._cell, self._text, self._link = a, [], None
        if tag == "pre" and a.get("class") == "message":
            self._in_message, self._text = True, []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_matrix = False
        if tag == "td" and self._cell is not None:
            key = (str(self._cell["data-adapter"]), str(self._cell["data-check"]))
            self.cells[key] = (str(self._cell["data-outcome"]), "".join(self._text), self._link)
            self._cell = None
        if tag == "pre" and self._in_message:
            self.messages.append("".join(self._text))
            self._in_message = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None or self._in_message:
            self._text.append(data)


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def test_matrix_cells_carry_the_hand_worked_outcomes_and_counts() -> None:
    page = parse(render(make_report()))
    assert {k: v[:2] for k, v in page.cells.items()} == EXPECTED_MATRIX


def test_cells_with_problems_link_to_an_existing_detail_section_and_clean_cells_do_not() -> None:
    page = parse(render(make_report()))
    links = {key: link for key, (_, _, link) in page.cells.items()}
    assert links == {
        ("alpha", "contract"): "#alpha--contract",
        ("alpha", "split-invariance"): "#alpha--split-invariance",
        ("alpha", "truncation"): None,
        ("beta", "contract"): None,
        ("beta", "split-invariance"): "#beta--split-invariance",
        ("beta", "truncation"): "#beta--truncation",
    }
    for link in filter(None, links.values()):
        assert link[1:] in page.ids


def test_a_green_cell_holding_a_fix_still_links_to_it() -> None:
    run = beta_run()
    run.results = [CaseResult("beta", C3, "truncation", "fixed", (), "https://example.org/i/9")]
    page = parse(render(make_report([run])))
    assert page.cells[("beta", "truncation")] == ("pass", "1/1 (1 fixed)", "#beta--truncation")


def test_anchor_ids_stay_unique_when_names_slug_alike() -> None:
    from stream_harness.reporting.html import anchors

    a, b = beta_run(), beta_run()
    b.adapter.name = "beta!"
    b.results = [
        CaseResult("beta!", r.case, r.check, r.outcome, r.failures, r.issue) for r in b.results
    ]
    a.adapter.name = "beta?"
    a.results = [
        CaseResult("beta?", r.case, r.check, r.outcome, r.failures, r.issue) for r in a.results
    ]
    ids = list(anchors(make_report([a, b])).values())
    assert len(ids) == len(set(ids)) == 4


def test_details_show_every_message_and_the_reproduce_command() -> None:
    html = render(make_report())
    page = parse(html)
    assert HOSTILE in page.messages  # text content, once unescaped by the parser
    assert "C3: toolcall_delta for content_index 1 before its start" in page.messages
    assert REPRO in html
    assert f'<a href="{KNOWN_ISSUE}">' in html


def test_hostile_strings_are_escaped_and_never_become_markup() -> None:
    run = beta_run()
    run.results.append(
        CaseResult(
            "beta",
            C3,
            "contract",
            "failed",
            (Failure('"><img src=x onerror=alert(1)>', expected="</pre><script>x</script>"),),
        )
    )
    html = render(make_report([run]))
    page = parse(html)
    assert "<script" not in html
    assert "&lt;script&gt;" in html
    assert "img" not in page.tags and "script" not in page.tags
    assert not [name for name, _ in page.attrs if name.startswith("on")]
    # javascript: as an issue "URL" stays text, never a link
    assert not [h for h in page.hrefs if not (h.startswith("#") or h.startswith("https://"))]
    assert "javascript:alert(1)</code>" in html


def test_the_page_is_self_contained() -> None:
    page = parse(render(make_report()))
    assert {"script", "link", "img", "iframe", "object"}.isdisjoint(page.tags)
    assert "style" in page.tags
    assert not [v for name, v in page.attrs if name == "src"]


def test_known_failures_are_grouped_by_issue_with_one_command_and_every_case() -> None:
    # Issue 36, point 5: 600 known failures of 3 issues are 3 groups, each with its count,
    # the first one's message and reproduce command and every result by its key; their own
    # messages and values stay in report.jsonl, while a new failure keeps them.
    issues = [f"https://github.com/example/lib/issues/{n}" for n in (20, 21, 22)]
    small = make_report([beta_run()])
    cases = [
        small.cases[0].model_copy(update={"id": f"openai-completions/case_{i}.yaml#0"})
        for i in range(600)
    ]
    rows = [
        Result(
            adapter="beta",
            case=c.id,
            check="truncation",
            outcome="known_failure",
            failures=(
                FailureInfo(message=f"cut at byte {i}", command=f"repro {i}", expected="EXP"),
            ),
            issue=issues[i % 3],
        )
        for i, c in enumerate(cases)
    ]
    new = FailureInfo(message="new", expected="NEW-EXPECTED")
    rows.append(
        Result(
            adapter="beta",
            case=cases[0].id,
            check="split-invariance",
            outcome="failed",
            failures=(new,),
        )
    )
    report = Report.model_validate({**small.model_dump(), "cases": cases, "results": rows})
    page = render(report)
    assert page.count('<div class="known-group">') == 3
    for issue in issues:
        assert page.count(f'<a href="{issue}">{issue}</a>: 200 result(s)') == 1
    assert page.count('<pre class="command">repro ') == 3  # the first of each group
    for i in range(600):
        assert page.count(f"<code>openai-completions/case_{i}.yaml#0</code>") == 1 + (i == 0)
    assert [f"the first: cut at byte {i}<" in page for i in range(4)] == [True, True, True, False]
    assert "EXP<" not in page and "NEW-EXPECTED" in page
