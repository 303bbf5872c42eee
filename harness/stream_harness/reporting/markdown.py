"""``README.md``: the report as a person reads it on a code host, next to the committed files.

A summary, not the record (issue 36, point 5): one line per matrix row, new failures in
full, known failures grouped by finding with a count and one reproduce command each
(:mod:`stream_harness.reporting.digest`); ``report.html`` and ``report.jsonl`` hold every
row. A code host stops rendering a Markdown file long before a megabyte.

Everything taken from a result (adapter names, case ids, messages) is escaped: messages
quote provider bytes and library output, and must not turn into markup, links or
broken table rows.
"""

from __future__ import annotations

import re

from stream_harness.contract.diff import short_diff_of_texts
from stream_harness.reporting.conventions import conventions_lines
from stream_harness.reporting.digest import (
    Finding,
    agent_check_order,
    agent_findings,
    by_issue,
    fixes,
    natural_key,
    new_failures,
    shown_checks,
    stream_findings,
)
from stream_harness.reporting.report import (
    FAILING,
    AgentSummary,
    Cell,
    Report,
    Result,
    agent_summaries,
    matrix,
    outcome_meanings,
    timestamp,
)

MESSAGE_LIMIT = 500  # README lines stay readable; report.jsonl and report.html keep it all
# New failures shown in full; past it, one line per adapter and check (a run gone badly
# wrong must not make a page nobody can open: report.html has them all).
NEW_FAILURES_SHOWN = 100
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&#])")
_URL = re.compile(r"https?://[^\s<>`]+")


def text(value: str) -> str:
    """Inline text with Markdown punctuation backslash-escaped and line breaks flattened."""
    return _SPECIAL.sub(r"\\\1", " ".join(value.split()))


def code(value: str) -> str:
    """A code span whose fence is longer than any backtick run inside it (CommonMark)."""
    flat = value.replace("\r", " ").replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def _clip(value: str) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= MESSAGE_LIMIT else flat[: MESSAGE_LIMIT - 1] + "…"


def _link(url: str) -> str:
    """An autolink for a plain http(s) URL; anything else stays inert code."""
    if _URL.fullmatch(url):
        return f"<{url}>"
    return code(url)


def _cell(cell: Cell) -> str:
    return f"**{cell.text}**" if cell.status == "fail" else cell.text


def _metadata(report: Report) -> list[str]:
    verdict = report.verdict
    if report.did_fail:
        verdict = "**FAILED**" + verdict[len("FAILED") :]
    adapters = ", ".join(
        f"{text(a.name)} {text(a.version)} ({a.level} level)" for a in report.adapters
    )
    env = ", ".join(f"{text(k)} {text(v)}" for k, v in report.environment.items())
    stream = [  # no line for the stream settings of a report that ran no stream check
        f"- Seed: {report.seed}; random splits per check: {report.examples}; every single cut of bodies up to {report.single_cut_limit} bytes",
        f"- Adapters: {adapters or 'none'}",
    ]
    return [
        f"- Tool: stream-harness {text(report.tool_version)}",
        f"- Run: {timestamp(report.started)} to {timestamp(report.finished)}",
        *([] if report.agent_only else stream),
        f"- Checked: {text(report.scope)}; skipped inputs: {len(report.skipped)}",
        f"- Environment: {env or 'not recorded'}",
        f"- Verdict: {verdict}",
    ]


def _guide(report: Report) -> list[str]:
    lines = [
        "A *case* is one recorded response (one interaction of a cassette). A *check* is one",
        "rule of the contract (`specs/contract.md`, catalogue in `specs/checks.md`) tested on",
        "every case it applies to. Each matrix cell counts, for one adapter and one check, the",
        "cases that passed out of those checked; `n/a` means the check applied to none (for",
        "example an event-level check on an adapter that only returns the final message).",
        "",
        "Outcomes:",
        "",
    ]
    lines += [
        f"- `{outcome}`: {text(meaning)}" for outcome, meaning in outcome_meanings(report).items()
    ]
    lines += [
        "",
        "To reproduce a failure, run the command listed under it: it feeds the same recorded",
        "body, cut into the smallest split that still showed the failure (`--split cuts:...`),",
        "and prints the events. This page is a summary: new failures in full, known failures",
        "grouped by the issue they cite, with a count per row and one reproduce command each.",
        "`report.html` lists every failure (a known one by its key), `report.jsonl` holds",
        "every result in full (expected and observed values), `junit.xml` is for CI dashboards.",
    ]
    return lines


def _matrix(report: Report) -> list[str]:
    checks, hidden = shown_checks(report)
    shown = {c.id for c in checks}
    head = "| adapter | " + " | ".join(text(c.id) for c in checks) + " |"
    rule = "|---|" + "---|" * len(checks)
    rows = [
        f"| {text(adapter.name)} {text(adapter.version)} | "
        + " | ".join(_cell(c) for c in cells if c.check in shown)
        + " |"
        for adapter, cells in zip(report.adapters, matrix(report), strict=True)
    ]
    legend = [
        f"- {text(c.id)}: {text(c.title)} (enforces {text(c.enforces)}; {c.level} level)"
        for c in checks
    ]
    if hidden:
        legend.append(
            f"- not shown, applied to no adapter: {text(', '.join(c.id for c in hidden))}"
        )
    return [head, rule, *rows, "", "Checks:", "", *legend]


def _result(r: Result) -> list[str]:
    first = r.failures[0] if r.failures else None
    if first:
        message = text(_clip(first.message))
    elif r.outcome == "fixed":
        message = "passed although listed as known: drop the expectation entry"
    else:
        message = "(no message)"
    more = f" (+{len(r.failures) - 1} more)" if len(r.failures) > 1 else ""
    lines = [f"- {code(r.case)}: **{r.outcome}**: {message}{more}"]
    diff = short_diff_of_texts(first.expected, first.observed, first.path) if first else None
    if diff:
        lines.append(f"  - {text(diff)}")
    if first and first.command:
        lines.append(f"  - reproduce: {code(first.command)}")
    if first and first.stdout_noise:  # quoted as the console and report.html quote it
        lines.append(f"  - stdout besides the protocol: {code(_clip(first.stdout_noise))}")
    if r.issue:
        lines.append(f"  - issue: {_link(r.issue)}")
    return lines


def _new_failures(report: Report) -> list[str]:
    groups = new_failures(report)
    if not groups:
        return ["None: nothing fails the run."]
    lines: list[str] = []
    shown = 0
    rest: list[tuple[str, str, list[Result]]] = []
    for adapter, check, results in groups:
        if shown >= NEW_FAILURES_SHOWN:
            rest.append((adapter, check, results))
            continue
        lines += [f"### {text(adapter)} / {text(check)}", ""]
        for r in results[: NEW_FAILURES_SHOWN - shown]:
            lines += _result(r)
        if len(results) > NEW_FAILURES_SHOWN - shown:
            rest.append((adapter, check, results[NEW_FAILURES_SHOWN - shown :]))
        shown += len(results)
        lines.append("")
    if rest:
        lines += [
            f"### Not shown here: {sum(len(r) for _, _, r in rest)} more (report.html has them all)",
            "",
        ]
        lines += [f"- {text(a)} / {text(c)}: {len(r)}" for a, c, r in rest]
        lines.append("")
    return lines[:-1]


def _finding(group: list[Finding]) -> list[str]:
    """One finding: the issue, how many results in which rows, one command to see it. The
    example's message is left to report.html: the issue names the finding, and the command
    names the case."""
    issue = _link(group[0].issue) if group[0].issue else "no issue given"
    count = sum(f.count for f in group)
    what = f"{count} result{'s' if count != 1 else ''}"
    checks = ", ".join(dict.fromkeys(c for f in group for c in f.checks))
    rows = group[0].row if len(group) == 1 else ", ".join(f"{f.row} {f.count}" for f in group)
    lines = [f"- {issue}: {what} ({text(checks)}) in {text(rows)}"]
    command = next((f.command for f in group if f.command), None)
    if command:
        lines.append(f"  - reproduce: {code(command)}")
    return lines


def _known(findings: list[Finding]) -> list[str]:
    if not findings:
        return ["None."]
    total = sum(f.count for f in findings)
    groups = by_issue(findings)
    lines = [
        f"{total} known failure(s) of {len(groups)} finding(s), by the issue their expectation entries cite:",
        "",
    ]
    for group in groups:
        lines += _finding(group)
    return lines


def _fixes(report: Report) -> list[str]:
    rows = fixes(report)
    return [
        f"- {text(r.adapter)} / {text(r.check)} {code(r.case)}: passed although listed as known "
        f"({_link(r.issue) if r.issue else 'no issue given'}): drop the expectation entry"
        for r in rows
    ] or ["None."]


def _agents(report: Report, agents: list[AgentSummary]) -> list[str]:
    checks = agent_check_order(agents)
    lines = [
        "| agent | version | " + " | ".join(checks) + " |",
        "|---|---|" + "---|" * len(checks),
    ]
    for a in agents:
        cells = []
        for c in checks:
            n = a.by_check.get(c)
            cells.append(
                "" if n is None else f"{n.passed}/{n.total}" + (" **!**" if n.did_fail else "")
            )
        lines.append(f"| {text(a.agent)} | {text(a.version)} | " + " | ".join(cells) + " |")
    lines.append("")
    for a in agents:
        first, *rest = conventions_lines(a.conventions)
        lines.append(
            f"- {text(a.agent)}: settings {text(a.settings or 'none')}; conventions: {text(first)}"
            + "".join(f"; {text(r)}" for r in rest)
        )
    rows = report.agent_results
    failing = sorted(
        (r for r in rows if r.outcome in FAILING or r.outcome == "fixed"),
        key=lambda r: (r.agent, natural_key(r.check)),
    )
    lines += ["", "### New agent failures and fixes", ""]
    for r in failing:
        issue = f" ({text(r.issue)})" if r.issue else ""
        lines.append(
            f"- {r.outcome} {text(r.agent)} {text(r.scenario)} \\[{text(r.protocol)}\\] "
            f"{text(r.check)}: {text(_clip(r.message))}{issue}; reproduce: {code(r.command or '')}"
        )
        if r.advice:
            lines.append(f"  - advice: {text(r.advice)}")
    if not failing:
        lines.append("None.")
    lines += ["", "### Known agent failures, by finding", "", *_known(agent_findings(rows))]
    return lines


def render(report: Report) -> str:
    skipped = [f"- {code(s.where)}: {text(s.reason)}" for s in report.skipped] or ["None."]
    sections = [
        ["# stream-harness conformance report"],
        _metadata(report),
        ["## How to read this report"],
        _guide(report),
        ["## Matrix"],
        _matrix(report),
        ["## New failures"],
        _new_failures(report),
        ["## Known failures, by finding"],
        _known(stream_findings(report)),
        ["## Fixed: listed as known, now passing"],
        _fixes(report),
        ["## Wire anomalies the reference recovered from"],
        [f"- {code(c.id)}: {text(w)}" for c in report.cases for w in c.warnings] or ["None."],
        ["## Skipped inputs"],
        skipped,
    ]
    agents = agent_summaries(report)
    if agents:
        sections += [["## Agent rows (specs/agent-contract.md)"], _agents(report, agents)]
    return "\n\n".join("\n".join(s) for s in sections) + "\n"
