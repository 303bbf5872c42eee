"""``README.md``: the report as a person reads it on a code host, next to the committed files.

Everything taken from a result (adapter names, case ids, messages) is escaped: messages
quote provider bytes and library output, and must not turn into markup, links or
broken table rows.
"""

from __future__ import annotations

import re

from stream_harness.contract.diff import short_diff_of_texts
from stream_harness.reporting.conventions import conventions_lines
from stream_harness.reporting.report import (
    AgentSummary,
    Cell,
    Report,
    Result,
    agent_summaries,
    matrix,
    outcome_meanings,
    problems,
    timestamp,
)

MESSAGE_LIMIT = 500  # README lines stay readable; report.jsonl and report.html keep it all
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
    lines += [f"- `{outcome}`: {text(meaning)}" for outcome, meaning in outcome_meanings(report).items()]
    lines += [
        "",
        "To reproduce a failure, run the command listed under it: it feeds the same recorded",
        "body, cut into the smallest split that still showed the failure (`--split cuts:...`),",
        "and prints the events. `report.jsonl` holds every failure in full (expected and",
        "observed values), `report.html` shows them, `junit.xml` is for CI dashboards.",
    ]
    return lines


def _matrix(report: Report) -> list[str]:
    head = "| adapter | " + " | ".join(text(c.id) for c in report.checks) + " |"
    rule = "|---|" + "---|" * len(report.checks)
    rows = [
        f"| {text(adapter.name)} {text(adapter.version)} | "
        + " | ".join(_cell(c) for c in cells)
        + " |"
        for adapter, cells in zip(report.adapters, matrix(report), strict=True)
    ]
    legend = [
        f"- {text(c.id)}: {text(c.title)} (enforces {text(c.enforces)}; {c.level} level)"
        for c in report.checks
    ]
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


def _failures(report: Report) -> list[str]:
    groups = problems(report)
    if not groups:
        return ["None: every applicable check passed."]
    lines: list[str] = []
    for adapter, check, results in groups:
        lines += [f"### {text(adapter)} / {text(check)}", ""]
        for r in results:
            lines += _result(r)
        lines.append("")
    return lines[:-1]


def _agents(agents: list[AgentSummary]) -> list[str]:
    checks = list(dict.fromkeys(c for a in agents for c in a.by_check))
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
    for a in agents:
        for r in a.problems:
            issue = f" ({text(r.issue)})" if r.issue else ""
            lines.append(
                f"- {r.outcome} {text(r.agent)} {text(r.scenario)} \\[{text(r.protocol)}\\] "
                f"{text(r.check)}: {text(_clip(r.message))}{issue}; reproduce: {code(r.command or '')}"
            )
            if r.advice:
                lines.append(f"  - advice: {text(r.advice)}")
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
        ["## Failures, known failures and fixes"],
        _failures(report),
        ["## Wire anomalies the reference recovered from"],
        [f"- {code(c.id)}: {text(w)}" for c in report.cases for w in c.warnings] or ["None."],
        ["## Skipped inputs"],
        skipped,
    ]
    agents = agent_summaries(report)
    if agents:
        sections += [["## Agent rows (specs/agent-contract.md)"], _agents(agents)]
    return "\n\n".join("\n".join(s) for s in sections) + "\n"
