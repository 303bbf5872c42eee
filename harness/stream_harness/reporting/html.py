"""``report.html``: one self-contained page (inline CSS, no script, nothing fetched).

The matrix is ``<table id="matrix">``; each cell carries ``data-adapter``,
``data-check`` and ``data-outcome`` (``pass`` all passed, ``known`` known failures only,
``fail`` new failures, timeouts, crashes or errors, ``na`` not applicable), so tests and a
headless browser can read it without parsing the cell text. A check that applied to no
adapter gets no column. The page fits the window down to 800 px wide (issue 36, point 5):
the prose keeps a reading width, the tables take the window's, cells wrap after their
slash, and the stream matrix's column heads stand upright; the agent table
(``<table id="agent-matrix">``) lists its checks in natural order (A2 before A10); long
names and paths in lists and paragraphs wrap anywhere rather than widen the page. Cells with
anything but plain passes link to the detail section of that adapter and check, which
shows each new failure and fix in full and the known failures by the issue they cite (the
first one's message and command, then every result's key): 3,000 known failures are a few
library bugs, and report.jsonl keeps each one's message and values. Every string from a result goes through
:func:`html.escape`, and only http(s) URLs become links: messages quote provider bytes
and library output, and a report must be safe to open.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from html import escape
from typing import Protocol, TypeVar

from stream_harness.reporting.conventions import conventions_lines
from stream_harness.reporting.digest import (
    agent_check_order,
    natural_key,
    short_version,
    shown_checks,
)
from stream_harness.reporting.report import (
    AgentSummary,
    Cell,
    FailureInfo,
    Report,
    Result,
    agent_summaries,
    matrix,
    outcome_meanings,
    problems,
    timestamp,
)

_URL = re.compile(r"https?://[^\s<>\"'`]+")
# Past this many checks the stream matrix's heads stand upright: side by side they are
# wider than a 1400 px window (sixteen names of up to 26 characters).
UPRIGHT_OVER = 6

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em 1.5em; color: #1b1b1b; }
body > :not(table) { max-width: 72em; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: .2em 1em; }
dl.meta dt { font-weight: 600; } dl.meta dd { margin: 0; overflow-wrap: anywhere; }
table.grid { border-collapse: collapse; max-width: 100%; }
.grid th, .grid td { border: 1px solid #bbb; padding: .3em .45em; text-align: center; }
.grid thead th { vertical-align: bottom; font-weight: 600; }
.grid th[scope=row] { text-align: left; font-weight: 600; overflow-wrap: anywhere; min-width: 7em; max-width: 15em; }
.grid th[scope=row] small { display: block; font-weight: normal; color: #555; }
.grid td small { display: block; font-size: .85em; }
.grid td a { color: inherit; } .grid td.na { white-space: nowrap; }
.upright thead th:not(:first-child) { writing-mode: vertical-rl; transform: rotate(180deg); text-align: left; }
@media (max-width: 1000px) {
  body { font-size: 12px; margin: 1em .5em; }
  .grid th, .grid td { padding: .2em .25em; }
  .grid td small { display: none; }
}
.pass { background: #c8efc8; } .known { background: #fde2a6; }
.fail { background: #f6b5b0; } .na { background: #e4e4e4; color: #666; }
.legend span { display: inline-block; padding: .1em .6em; margin-right: .5em; border: 1px solid #bbb; }
section.group { margin: 1.5em 0; }
.known-group { border-left: 4px solid; padding: .2em .8em; margin: .8em 0; }
.known-group p.cases code { display: inline-block; margin: 0 .3em .2em 0; }
article.result { border-left: 4px solid #bbb; padding: .2em .8em; margin: .8em 0; }
article.failed, article.errored, article.timeout, article.crashed { border-color: #d9534f; }
article.known_failure, .known-group { border-color: #e8a317; } article.fixed { border-color: #5cb85c; }
pre { background: #f5f5f5; padding: .5em; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
code { background: #f5f5f5; padding: 0 .2em; }
li, p, h3, h4 { overflow-wrap: anywhere; } /* a long name or source path wraps, the page does not scroll */
""".strip()


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _link(url: str) -> str:
    if _URL.fullmatch(url):
        return f'<a href="{_e(url)}">{_e(url)}</a>'
    return f"<code>{_e(url)}</code>"


def anchors(report: Report) -> dict[tuple[str, str], str]:
    """A stable, unique, URL-safe id for each (adapter, check) that has a detail section."""
    out: dict[tuple[str, str], str] = {}
    used: set[str] = set()
    for adapter, check, _ in problems(report):
        base = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{adapter}--{check}")
        candidate, n = base, 1
        while candidate in used:
            n += 1
            candidate = f"{base}-{n}"
        used.add(candidate)
        out[(adapter, check)] = candidate
    return out


def _wrapping(text: str) -> str:
    """A cell's ``passed/total (notes)`` with a break allowed after the slash and the notes
    on a line of their own: the table narrows to the window instead of overflowing it. The
    stream matrix's column heads stand upright when there are many (UPRIGHT_OVER)."""
    head, _, notes = text.partition(" (")
    body = _e(head).replace("/", "/<wbr>") if head != "n/a" else head
    return body + (f"<small> ({_e(notes)}</small>" if notes else "")


def _cell(cell: Cell, anchor: str | None) -> str:
    shown = _wrapping(cell.text)
    body = f'<a href="#{_e(anchor)}">{shown}</a>' if anchor else shown
    return (
        f'<td class="{cell.status}" data-adapter="{_e(cell.adapter)}" data-check="{_e(cell.check)}"'
        f' data-outcome="{cell.status}" title="{_e(cell.text)}">{body}</td>'
    )


def _row_head(name: str, version: str) -> str:
    return (
        f'<th scope="row" title="{_e(name)} {_e(version)}">{_e(name)} '
        f"<small>{_e(short_version(version))}</small></th>"
    )


def _matrix(report: Report, links: dict[tuple[str, str], str]) -> str:
    checks, hidden = shown_checks(report)
    shown = {c.id for c in checks}
    head = "".join(f'<th scope="col" title="{_e(c.title)}">{_e(c.id)}</th>' for c in checks)
    rows = []
    for adapter, cells in zip(report.adapters, matrix(report), strict=True):
        tds = "".join(_cell(c, links.get((c.adapter, c.check))) for c in cells if c.check in shown)
        rows.append(f"<tr>{_row_head(adapter.name, adapter.version)}{tds}</tr>")
    note = (
        f'<p class="hidden-checks">Not shown, applied to no adapter: {_e(", ".join(c.id for c in hidden))}</p>'
        if hidden
        else ""
    )
    return (
        f'<table id="matrix" class="{"grid upright" if len(checks) > UPRIGHT_OVER else "grid"}">\n<thead><tr><th>adapter</th>{head}</tr></thead>\n<tbody>\n'
        + "\n".join(rows)
        + f"\n</tbody>\n</table>{note}"
    )


# How each of FailureInfo.fields() is shown: the long JSON values folded away.
_FIELD_HTML = {
    "split": "<p>smallest split: <code>{}</code></p>",
    "reproduce": '<p>reproduce:</p><pre class="command">{}</pre>',
    "first difference at": "<p>first difference at <code>{}</code></p>",
    "stdout besides the protocol": '<p>the adapter printed on stdout besides the protocol:</p><pre class="noise">{}</pre>',
    "expected": "<details><summary>expected</summary><pre>{}</pre></details>",
    "observed": "<details><summary>observed</summary><pre>{}</pre></details>",
}


def _failure(f: FailureInfo) -> str:
    parts = [f'<pre class="message">{_e(f.message)}</pre>']
    parts += [_FIELD_HTML[label].format(_e(value)) for label, value in f.fields()]
    return '<div class="failure">' + "".join(parts) + "</div>"


def _result(r: Result) -> str:
    head = f"<h4><code>{_e(r.case)}</code>: {_e(r.outcome)}</h4>"
    issue = f"<p>issue: {_link(r.issue)}</p>" if r.issue else ""
    if r.outcome == "fixed":
        issue += "<p>passed although listed as known: drop the expectation entry</p>"
    return f'<article class="result {_e(r.outcome)}">{head}{issue}{"".join(_failure(f) for f in r.failures)}</article>'


def _known_group(
    head: str, issue: str | None, keys: list[str], message: str, command: str | None
) -> str:
    """Known failures citing one issue: the issue, how many, the first one's message and
    reproduce command, then every result by its key. Three thousand of them are a few
    library bugs: their own messages and values stay in report.jsonl (issue 36, point 5)."""
    cited = _link(issue) if issue else "no issue given"
    run = f'<pre class="command">{_e(command)}</pre>' if command else ""
    return (
        f'<div class="known-group"><p>{head}known failure: {cited}: {len(keys)} result(s); '
        f'the first: {_e(message)}</p>{run}<p class="cases">{" ".join(keys)}</p></div>'
    )


class _Cited(Protocol):
    @property
    def issue(self) -> str | None: ...


_C = TypeVar("_C", bound=_Cited)


def _by_issue(rows: Iterable[_C]) -> dict[str | None, list[_C]]:
    """Known failures under the issue they cite, in first-seen order: the page shows each
    group once, stream and agent rows alike."""
    groups: dict[str | None, list[_C]] = {}
    for r in rows:
        groups.setdefault(r.issue, []).append(r)
    return groups


def _known_results(results: list[Result]) -> str:
    out = []
    for issue, rows in _by_issue(results).items():
        first = rows[0].failures[0] if rows[0].failures else None
        keys = [f"<code>{_e(r.case)}</code>" for r in rows]
        message, command = (first.message, first.command) if first else ("", None)
        out.append(_known_group("", issue, keys, message, command))
    return "".join(out)


def _details(report: Report, links: dict[tuple[str, str], str]) -> str:
    groups = problems(report)
    if not groups:
        return "<p>None: every applicable check passed.</p>"
    return "\n".join(
        f'<section class="group" id="{_e(links[(adapter, check)])}">'
        f"<h3>{_e(adapter)} / {_e(check)}</h3>\n"
        + "\n".join(_result(r) for r in results if r.outcome != "known_failure")
        + _known_results([r for r in results if r.outcome == "known_failure"])
        + "</section>"
        for adapter, check, results in groups
    )


def _metadata(report: Report) -> str:
    verdict = report.verdict
    adapters = ", ".join(f"{_e(a.name)} {_e(a.version)} ({a.level} level)" for a in report.adapters)
    stream = [  # no row for the stream settings of a report that ran no stream check
        ("seed", str(report.seed)),
        ("random splits per check", str(report.examples)),
        ("every single cut of bodies up to", f"{report.single_cut_limit} bytes"),
        # Folded: 45 version lines would push the matrix below the first screen.
        (
            "adapters",
            f"<details><summary>{len(report.adapters)} adapter(s)</summary>{adapters}</details>"
            if adapters
            else "none",
        ),
    ]
    rows = [
        ("tool", f"stream-harness {_e(report.tool_version)}"),
        ("run", f"{timestamp(report.started)} to {timestamp(report.finished)}"),
        *([] if report.agent_only else stream),
        ("checked", f"{_e(report.scope)} (skipped inputs: {len(report.skipped)})"),
        *((_e(k), _e(v)) for k, v in report.environment.items()),
        ("verdict", _e(verdict)),
    ]
    return '<dl class="meta">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


def _guide(report: Report) -> str:
    outcomes = "".join(
        f"<li><code>{_e(o)}</code>: {_e(m)}</li>" for o, m in outcome_meanings(report).items()
    )
    return (
        "<p>A <em>case</em> is one recorded response (one interaction of a cassette). A "
        "<em>check</em> is one rule of the contract (<code>specs/contract.md</code>, catalogue in "
        "<code>specs/checks.md</code>) tested on every case it applies to. Each matrix cell counts, "
        "for one adapter and one check, the cases that passed out of those checked; follow a "
        "coloured cell to its failures.</p>\n"
        f"<ul>{outcomes}</ul>\n"
        "<p>To reproduce a failure, run the command shown under it: it feeds the same recorded "
        "body, cut into the smallest split that still showed the failure, and prints the events.</p>\n"
        '<p class="legend"><span class="pass">all passed</span><span class="known">known failures only</span>'
        '<span class="fail">new failures, timeouts, crashes or errors</span><span class="na">not applicable</span></p>'
    )


def _agent_problems(a: AgentSummary) -> str:
    """An agent's new failures and fixes in full, its known failures by the issue they cite."""
    rows = sorted(a.problems, key=lambda r: natural_key(r.check))
    full = "".join(
        f'<article class="result {_e(r.outcome)}"><h4>{_e(r.agent)} {_e(r.scenario)} [{_e(r.protocol)}] '
        f'{_e(r.check)}: {_e(r.outcome)}</h4><pre class="message">{_e(r.message)}</pre>'
        + (f'<p class="advice">advice: {_e(r.advice)}</p>' if r.advice else "")
        + f"<p>reproduce: <code>{_e(r.command or '')}</code></p></article>"
        for r in rows
        if r.outcome != "known_failure"
    )
    known = "".join(
        _known_group(
            f"<code>{_e(a.agent)}</code>: ",
            issue,
            [f"<code>{_e(r.scenario)} [{_e(r.protocol)}] {_e(r.check)}</code>" for r in group],
            group[0].message,
            group[0].command,
        )
        for issue, group in _by_issue(r for r in rows if r.outcome == "known_failure").items()
    )
    return full + known


def _agents(agents: list[AgentSummary]) -> str:
    """The agent rows beside the stream matrix; nothing when the report has none."""
    if not agents:
        return ""
    checks = agent_check_order(agents)
    head = "".join(f'<th scope="col">{_e(c)}</th>' for c in checks)
    body = []
    for a in agents:
        cells = []
        for c in checks:
            n = a.by_check.get(c)
            cls = (
                "na"
                if n is None
                else "fail"
                if n.did_fail
                else "known"
                if n.known_failure or n.fixed
                else "pass"
            )
            text = "n/a" if n is None else f"{n.passed}/<wbr>{n.total}"
            cells.append(
                f'<td class="{cls}" data-agent="{_e(a.agent)}" data-check="{_e(c)}" data-outcome="{cls}">{text}</td>'
            )
        body.append(f"<tr>{_row_head(a.agent, a.version)}{''.join(cells)}</tr>")
    notes = "".join(
        f"<li><code>{_e(a.agent)}</code>: settings {_e(a.settings or 'none')}; conventions: "
        + "<br>".join(_e(line) for line in conventions_lines(a.conventions))
        + "<details><summary>sources</summary><ul>"
        + "".join(
            f"<li><code>{_e(k)}</code>: {_e(v)}</li>"
            for k, v in sorted((a.conventions.get("sources") or {}).items())
        )
        + "</ul></details></li>"
        for a in agents
    )
    problems_ = "".join(_agent_problems(a) for a in agents)
    return (
        "<h2>Agent rows</h2>\n<p>Agent loops run on agent scenarios with faults, judged by the "
        "agent contract (<code>specs/agent-contract.md</code>): passed out of checked, per check.</p>\n"
        f'<table id="agent-matrix" class="grid">'
        f"<thead><tr><th>agent</th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>\n"
        f"<ul>{notes}</ul>\n{problems_ or '<p>No agent failures.</p>'}\n"
    )


def render(report: Report) -> str:
    links = anchors(report)
    skipped = "".join(
        f"<li><code>{_e(s.where)}</code>: {_e(s.reason)}</li>" for s in report.skipped
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        "<title>stream-harness conformance report</title>\n"
        f"<style>\n{CSS}\n</style>\n</head>\n<body>\n"
        "<h1>stream-harness conformance report</h1>\n"
        f"{_metadata(report)}\n"
        f"<h2>How to read this report</h2>\n{_guide(report)}\n"
        f"<h2>Matrix</h2>\n{_matrix(report, links)}\n"
        f"<h2>Failures, known failures and fixes</h2>\n{_details(report, links)}\n"
        f"<h2>Skipped inputs</h2>\n{f'<ul>{skipped}</ul>' if skipped else '<p>None.</p>'}\n"
        f"{_agents(agent_summaries(report))}"
        "</body>\n</html>\n"
    )
