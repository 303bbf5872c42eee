"""``junit.xml``: the results as CI dashboards read them.

One ``testsuite`` per adapter, one ``testcase`` per (case, check) with
``classname = adapter.check`` and ``name = case id``. A new failure is ``<failure>``, and so
is an adapter's ``timeout`` or ``crash`` (its ``type`` says which: the row's failure, not
the harness's), a check that raised is ``<error>``, a known failure is ``<skipped>``
carrying its issue (dashboards then show it without failing the build, as CI does), and a
fix passes with a note in ``system-out``.

Each fact is written once (issue 36, point 5): the run's (tool, seed, splits, scope,
verdict) in the ``properties`` of the root ``testsuites``, a row's (version, level,
protocols; an agent's settings and conventions) in its suite's ``properties``. A passed
testcase is one unindented line with no children (50,000 of them are most of the file:
about 99 bytes each on the committed matrix, 33 of them markup). A known failure is
``<skipped>`` with the issue it cites and nothing else: 3,000 of them are a few findings,
and report.html groups them with a reproduce command per finding, report.jsonl keeps their
values. A new failure's message is its ``message`` attribute and its text holds the rest
(advice, values, reproduce command), not the message again.

Built with ElementTree, which escapes markup; characters that XML 1.0 cannot hold at all
(NUL and most C0 controls, which provider bytes may carry) are written as ``\\xNN`` so
the file always parses.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from stream_harness.reporting.report import AgentRow, Counts, Report, Result, agent_summaries

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(value: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", value)


def _details(r: Result) -> str:
    """Every failure of the result with its fields. The first one's message is the
    element's ``message`` attribute, so it is not written again."""
    parts = []
    for i, f in enumerate(r.failures, start=1):
        head = [] if i == 1 else [f"[{i}] {f.message}"]
        parts.append("\n".join([*head, *(f"{label}: {value}" for label, value in f.fields())]))
    return xml_safe("\n\n".join(parts))


def _properties(parent: ET.Element, facts: list[tuple[str, str]]) -> None:
    props = ET.SubElement(parent, "properties")
    for key, value in facts:
        ET.SubElement(props, "property", name=key, value=xml_safe(value))


def _testcase(parent: ET.Element, r: Result) -> None:
    case = ET.SubElement(
        parent, "testcase", classname=xml_safe(f"{r.adapter}.{r.check}"), name=xml_safe(r.case)
    )
    first = r.failures[0] if r.failures else None
    message = first.message if first else r.outcome
    if r.outcome in ("failed", "timeout", "crashed"):
        ET.SubElement(case, "failure", message=xml_safe(message), type=r.outcome).text = _details(r)
    elif r.outcome == "errored":
        ET.SubElement(case, "error", message=xml_safe(message), type="errored").text = _details(r)
    elif r.outcome == "known_failure":
        _known(case, r.issue)
    elif r.outcome == "fixed":
        _fixed(case, r.issue)


def _known(case: ET.Element, issue: str | None) -> None:
    """A known failure is skipped with the issue it cites, and nothing else: its message,
    values and reproduce command are report.jsonl's and report.html's (3,000 of them are
    a few findings; a dashboard reader opens the new failures)."""
    note = f"known failure: {issue}" if issue else "known failure"
    ET.SubElement(case, "skipped", message=xml_safe(note))


def _fixed(case: ET.Element, issue: str | None) -> None:
    ET.SubElement(case, "system-out").text = xml_safe(
        f"listed as a known failure ({issue}) but passed: drop the expectation entry"
    )


def _agent_testcase(parent: ET.Element, r: AgentRow) -> None:
    case = ET.SubElement(
        parent,
        "testcase",
        classname=xml_safe(f"{r.agent}.{r.check}"),
        name=xml_safe(f"{r.scenario}[{r.protocol}]"),
    )
    lines = [f"advice: {r.advice}"] if r.advice else []  # the message is the attribute
    details = xml_safe("\n".join([*lines, *([f"reproduce: {r.command}"] if r.command else [])]))
    if r.outcome in ("failed", "timeout", "crashed"):
        ET.SubElement(case, "failure", message=xml_safe(r.message), type=r.outcome).text = details
    elif r.outcome == "errored":
        ET.SubElement(case, "error", message=xml_safe(r.message), type="errored").text = details
    elif r.outcome == "known_failure":
        _known(case, r.issue)
    elif r.outcome == "fixed":
        _fixed(case, r.issue)


def _tally(element: ET.Element, counts: Counts) -> None:
    element.set("tests", str(counts.total))
    element.set("failures", str(counts.failed + counts.timeout + counts.crashed))
    element.set("errors", str(counts.errored))
    element.set("skipped", str(counts.known_failure))


def render(report: Report) -> str:
    root = ET.Element("testsuites", name="stream-harness conformance")
    _tally(root, report.counts)
    stream = [] if report.agent_only else [
        ("seed", str(report.seed)), ("examples", str(report.examples)), ("single_cut_limit", str(report.single_cut_limit)),
    ]  # fmt: skip
    _properties(
        root,
        [
            ("tool_version", report.tool_version),
            *stream,
            ("scope", report.scope),
            ("verdict", report.verdict),
            # Once, not on every suite: a regeneration changes these lines only.
            ("started", report.started.strftime("%Y-%m-%dT%H:%M:%S")),
        ],
    )
    by_adapter: dict[str, list[Result]] = {}
    for r in report.results:
        by_adapter.setdefault(r.adapter, []).append(r)
    for adapter in report.adapters:
        rows = by_adapter.get(adapter.name, [])
        suite = ET.SubElement(root, "testsuite", name=xml_safe(adapter.name))
        _tally(suite, Counts.of(rows))
        _properties(
            suite,
            [
                ("adapter.version", adapter.version),
                ("adapter.level", adapter.level),
                ("adapter.protocols", " ".join(adapter.protocols)),
            ],
        )
        for r in rows:
            _testcase(suite, r)
    for summary in agent_summaries(report):
        rows_ = [a for a in report.agent_results if a.agent == summary.agent]
        suite = ET.SubElement(root, "testsuite", name=xml_safe(f"agent:{summary.agent}"))
        _tally(suite, summary.counts)
        conventions = json.dumps(
            summary.conventions, sort_keys=True, ensure_ascii=False, default=str
        )
        _properties(
            suite,
            [
                ("agent.version", summary.version),
                ("agent.settings", summary.settings),
                ("agent.conventions", conventions),
            ],
        )
        for row in rows_:
            _agent_testcase(suite, row)
    ET.indent(root, space="")  # a line per element, no indentation: 50,000 passed testcases
    # ElementTree escapes ">" in text and attributes, so " />" only ever closes an element.
    body = ET.tostring(root, encoding="unicode").replace(" />", "/>")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + body + "\n"
