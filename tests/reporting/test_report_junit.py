"""junit.xml: valid XML, one suite per adapter, counts CI dashboards agree with."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from report_fixtures import C1, C2, C3, KNOWN_ISSUE, REPRO, alpha_run, beta_run, make_report
from stream_harness.conformance import CaseResult, Failure
from stream_harness.reporting.junit import render


def _counts(element: ET.Element) -> tuple[str | None, ...]:
    return tuple(element.get(k) for k in ("tests", "failures", "errors", "skipped"))


def test_suites_and_counts() -> None:
    root = ET.fromstring(render(make_report()))
    assert root.tag == "testsuites"
    assert _counts(root) == ("13", "2", "1", "2")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["alpha", "beta"]
    assert [_counts(s) for s in suites] == [("9", "1", "1", "1"), ("4", "1", "0", "1")]
    # the counts agree with the elements, as dashboards recount them
    for suite in suites:
        assert len(suite.findall("testcase")) == int(suite.get("tests", "-1"))
        assert len(suite.findall("testcase/failure")) == int(suite.get("failures", "-1"))
        assert len(suite.findall("testcase/error")) == int(suite.get("errors", "-1"))
        assert len(suite.findall("testcase/skipped")) == int(suite.get("skipped", "-1"))
    props = {p.get("name"): p.get("value") for p in suites[1].iter("property")}
    assert props == {
        "adapter.version": "2.5",
        "adapter.level": "message",
        "adapter.protocols": "openai-completions",
    }
    run = {p.get("name"): p.get("value") for p in root.findall("properties/property")}
    assert run["seed"] == "7" and run["verdict"].startswith("FAILED")


def test_each_fact_is_written_once() -> None:
    # Issue 36, point 5: the run's facts once on the root, a row's once on its suite; a known
    # failure carries the issue it cites and nothing else (report.jsonl and report.html keep
    # its message, values and command); a passed testcase has no children at all.
    root = ET.fromstring(render(make_report()))
    names = [p.get("name") for p in root.iter("property")]
    assert names.count("seed") == names.count("verdict") == names.count("tool_version") == 1, names
    assert names.count("adapter.version") == len(root.findall("testsuite"))
    skipped = list(root.iter("skipped"))
    assert skipped and all(s.text is None and len(s) == 0 for s in skipped)
    assert all((s.get("message") or "").startswith("known failure") for s in skipped)
    failure = next(f for f in root.iter("failure") if "C3:" in (f.get("message") or ""))
    text = failure.text or ""
    assert "expected:" in text and "observed:" in text  # a new failure keeps them all
    assert (failure.get("message") or "") not in text  # the message once, as the attribute
    passed = [c for c in root.iter("testcase") if c.get("classname") == "alpha.truncation"]
    assert passed and all(len(c) == 0 and c.text is None for c in passed)


def test_an_adapter_timeout_or_crash_is_a_failure_of_its_kind() -> None:
    run = beta_run()
    run.results += [
        CaseResult(
            "beta",
            C3,
            "contract",
            "timeout",
            (Failure("did not return within the run timeout of 1 s"),),
        ),
        CaseResult("beta", C2, "contract", "crashed", (Failure("the process running beta died"),)),
    ]
    root = ET.fromstring(render(make_report([run])))
    kinds = sorted(f.get("type") or "" for f in root.iter("failure"))
    assert kinds == ["crashed", "failed", "timeout"]
    assert root.find("error") is None and root.get("errors") == "0" and root.get("failures") == "3"


def test_testcase_names_failures_and_known_issues() -> None:
    root = ET.fromstring(render(make_report([alpha_run()])))
    cases = {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}
    assert set(cases) == {
        (f"alpha.{check}", case)
        for case in (C1, C2, C3)
        for check in ("contract", "split-invariance", "truncation")
    }
    failure = cases[("alpha.contract", C2)].find("failure")
    assert failure is not None
    assert failure.get("message") == "C3: toolcall_delta for content_index 1 before its start"
    assert f"reproduce: {REPRO}" in (failure.text or "")
    skipped = cases[("alpha.split-invariance", C2)].find("skipped")
    assert skipped is not None and skipped.get("message") == f"known failure: {KNOWN_ISSUE}"
    error = cases[("alpha.contract", C3)].find("error")
    assert error is not None and "KeyError" in (error.get("message") or "")
    fixed = cases[("alpha.split-invariance", C3)]
    assert fixed.find("failure") is None and fixed.find("skipped") is None
    assert "drop the expectation entry" in (fixed.findtext("system-out") or "")


def test_characters_xml_cannot_hold_are_escaped_and_the_file_still_parses() -> None:
    run = beta_run()
    run.results.append(
        CaseResult("beta", C3, "contract", "failed", (Failure('nul\x00 esc\x1b <&> "q"'),))
    )
    root = ET.fromstring(render(make_report([run])))
    failure = next(c for c in root.iter("testcase") if c.get("classname") == "beta.contract").find(
        "failure"
    )
    assert failure is not None
    assert failure.get("message") == 'nul\\x00 esc\\x1b <&> "q"'


def test_a_passed_testcase_is_one_short_line() -> None:
    # 50,000 passed testcases are most of the committed junit.xml: each is its element and
    # the two names, no indentation, no children (issue 36, point 5).
    lines = render(make_report([alpha_run()])).splitlines()
    assert f'<testcase classname="alpha.truncation" name="{C1}"/>' in lines
    assert not [line for line in lines if line.startswith(" ")]
