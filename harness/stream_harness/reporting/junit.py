"""``junit.xml``: the results as CI dashboards read them.

One ``testsuite`` per adapter, one ``testcase`` per (case, check) with
``classname = adapter.check`` and ``name = case id``. A new failure is ``<failure>``, and so
is an adapter's ``timeout`` or ``crash`` (its ``type`` says which: the row's failure, not
the harness's), a check that raised is ``<error>``, a known failure is ``<skipped>``
carrying its issue (dashboards then show it without failing the build, as CI does), and a
fix passes with a note in ``system-out``.

Each fact is written once (issue 36, point 6): the run's (tool, seed, splits, scope,
verdict) in the ``properties`` of the root ``testsuites``, a row's (version, level,
protocols; an agent's settings and conventions) in its suite's ``properties``. A known
failure carries its message and reproduce command, not the expected and observed values
(report.jsonl has them): two thousand of them are the same few findings, and new
failures are what a dashboard reader opens. Built with ElementTree, which escapes markup; characters that
XML 1.0 cannot hold at all (NUL and most C0 controls, which provider bytes may carry)
are written as ``\\xNN`` so the file always parses.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from stream_harness.reporting.report import AgentRow, Counts, Report, Result, agent_summaries

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(value: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", value)


def _details(r: Result, *, brief: bool = False) -> str:
    """Every failure of the result with its fields; ``brief``: the message and the
    reproduce command only (a known failure: report.jsonl keeps the values)."""
    parts = []
    for i, f in enumerate(r.failures, start=1):
        fields = [
            (label, value) for label, value in f.fields() if not brief or label == "reproduce"
        ]
        lines = [f"[{i}] {f.message}", *(f"{label}: {value}" for label, value in fields)]
        parts.append("\n".join(lines))
    return xml_safe("\n\n".join(parts))


def _properties(parent: ET.Element, facts: list[tuple[str, str]]) -> None:
    props = ET.SubElement(parent, "properties")
    for key, value in facts:
        ET.SubElement(props, "property", name=key, value=xml_safe(value))


def _testcase(parent: ET.Element, r: Result) -> None:
    case = ET.SubElement(
        parent, "testcase", classname=xml_safe(f"{r.adapter}.{r.check}"), name=xml_safe(r.case)
    )
    first = r.failures[0].message if r.failures else r.outcome
    if r.outcome in ("failed", "timeout", "crashed"):
        ET.SubElement(case, "failure", message=xml_safe(first), type=r.outcome).text = _details(r)
    elif r.outcome == "errored":
        ET.SubElement(case, "error", message=xml_safe(first), type="errored").text = _details(r)
    elif r.outcome == "known_failure":
        note = f"known failure: {r.issue}" if r.issue else "known failure"
        ET.SubElement(case, "skipped", message=xml_safe(note)).text = _details(r, brief=True)
    elif r.outcome == "fixed":
        ET.SubElement(case, "system-out").text = xml_safe(
            f"listed as a known failure ({r.issue}) but passed: drop the expectation entry"
        )


def _agent_testcase(parent: ET.Element, r: AgentRow) -> None:
    case = ET.SubElement(
        parent,
        "testcase",
        classname=xml_safe(f"{r.agent}.{r.check}"),
        name=xml_safe(f"{r.scenario}[{r.protocol}]"),
    )
    advice = f"\nadvice: {r.advice}" if r.advice else ""
    details = xml_safe(
        f"{r.message}{advice}\nreproduce: {r.command}" if r.command else r.message + advice
    )
    if r.outcome in ("failed", "timeout", "crashed"):
        ET.SubElement(case, "failure", message=xml_safe(r.message), type=r.outcome).text = details
    elif r.outcome == "errored":
        ET.SubElement(case, "error", message=xml_safe(r.message), type="errored").text = details
    elif r.outcome == "known_failure":
        note = f"known failure: {r.issue}" if r.issue else "known failure"
        ET.SubElement(case, "skipped", message=xml_safe(note)).text = details
    elif r.outcome == "fixed":
        ET.SubElement(case, "system-out").text = xml_safe(
            f"listed as a known failure ({r.issue}) but passed: drop the expectation entry"
        )


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
        ],
    )
    stamp = report.started.strftime("%Y-%m-%dT%H:%M:%S")
    by_adapter: dict[str, list[Result]] = {}
    for r in report.results:
        by_adapter.setdefault(r.adapter, []).append(r)
    for adapter in report.adapters:
        rows = by_adapter.get(adapter.name, [])
        suite = ET.SubElement(root, "testsuite", name=xml_safe(adapter.name), timestamp=stamp)
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
        suite = ET.SubElement(
            root, "testsuite", name=xml_safe(f"agent:{summary.agent}"), timestamp=stamp
        )
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
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
