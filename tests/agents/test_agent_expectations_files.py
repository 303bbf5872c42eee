"""The bundled known failures of the agent rows (specs/agent-expectations/) stay honest.

Each file is what ``stream-harness agents --expect`` reads, for the agent it is named
after; every entry names a bundled scenario, a check and a protocol the scenario and the
agent both have, and a reason that cites an upstream issue URL or a finding file that
exists. A stale or mistyped entry would otherwise only show when the framework is run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stream_harness.agents.conformance.checks import CHECK_IDS
from stream_harness.agents.conformance.runner import load_agent_expectations
from stream_harness.agents.scenario.render import PROTOCOLS

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "specs" / "agent-expectations").glob("*.yaml"))
SCENARIOS = {p.stem for p in (ROOT / "cassettes" / "agent-scenarios").glob("*.yaml")}
FINDING = re.compile(r"conformance_report/findings/[\w.-]+\.md")


def test_there_are_expectation_files() -> None:
    assert FILES, "specs/agent-expectations/ holds no file"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_each_known_failure_names_what_exists_and_cites_its_source(path: Path) -> None:
    entries = load_agent_expectations(path)
    assert entries, f"{path.name}: no entry"
    for e in entries:
        where = f"{path.name}: {e.scenario} {e.check} {e.protocol}"
        assert e.agent == path.stem, where
        # an explored entry (with faults) names its base, or none: `~explored`
        base = e.scenario.removesuffix("~explored") if e.faults is not None else e.scenario
        assert base in SCENARIOS or (e.faults and not base), where
        assert e.check in CHECK_IDS, where
        assert e.protocol is None or e.protocol in PROTOCOLS, where
        cited = FINDING.findall(e.reason)
        assert cited or "https://github.com/" in e.reason, where
        for finding in cited:
            assert (ROOT / finding).is_file(), f"{where}: {finding} does not exist"
