"""Every bundled cassette of every protocol (``protocols()``) normalizes to its reviewed
golden events, and those events keep the contract. One parametrized test instead of a
copy per provider module; the protocol-specific checks of each cassette stay there."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_harness.contract.facts import specs_dir
from stream_harness.contract.rules import check_contract
from stream_harness.providers import protocols
from stream_harness.recordings.cassette import load_cassette
from stream_harness.recordings.golden import expected_path, interaction_events, read_expected

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes"
CASES = [
    (protocol, path)
    for protocol in protocols()
    for path in sorted((CASSETTES / protocol).glob("*.yaml"))
]


@pytest.mark.parametrize("protocol", protocols())
def test_every_protocol_has_enough_bundled_cassettes(protocol: str) -> None:
    assert sum(1 for p, _ in CASES if p == protocol) >= 10


@pytest.mark.parametrize(("protocol", "path"), CASES, ids=[f"{p}/{path.stem}" for p, path in CASES])
def test_golden(protocol: str, path: Path) -> None:
    for inter in load_cassette(path).interactions:
        expected = read_expected(expected_path(path, inter.index))
        events = interaction_events(inter, protocol)
        assert events == expected, (
            f'regenerate with: python -c "from stream_harness.recordings.golden import write_expected; '
            f"write_expected('{path}')\" and review the diff"
        )
        assert check_contract(events) == []


def test_every_golden_file_has_its_cassette() -> None:
    expected_root = specs_dir() / "expected"
    orphans = []
    for golden in sorted(expected_root.glob("*/*.jsonl")):
        stem = golden.name.split(".")[0]
        if not (CASSETTES / golden.parent.name / f"{stem}.yaml").is_file():
            orphans.append(str(golden.relative_to(expected_root)))
    assert orphans == []
