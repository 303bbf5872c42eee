"""Checks every protocol's bundled cassettes share: golden events and vcrpy replay.

Imported by bare name from the provider test modules (pytest's default import mode puts
tests/ on sys.path), so each module keeps its own protocol-specific assertions while the
common steps live once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.cassette import Interaction, load_cassette
from harness.golden import expected_path, interaction_events, read_expected


def assert_golden(path: Path, protocol: str) -> None:
    """Every interaction of the cassette normalizes to its committed expected events."""
    for inter in load_cassette(path).interactions:
        expected = read_expected(expected_path(path, inter.index))
        assert interaction_events(inter, protocol) == expected, (
            f"regenerate with: python -c \"from harness.golden import write_expected; write_expected('{path}')\""
        )


def replay_with_vcrpy(path: Path) -> tuple[Interaction, Any]:
    """vcrpy itself replays interaction 0 through httpx; returns it with the response."""
    vcr = pytest.importorskip("vcr")
    import httpx

    inter = load_cassette(path).interactions[0]
    recorder = vcr.VCR(record_mode="none")
    with recorder.use_cassette(str(path)), httpx.Client() as client:
        response = client.post(
            inter.request.uri,
            content=inter.request.body,
            headers={"content-type": "application/json"},
        )
    assert response.status_code == inter.response.status
    assert response.content == inter.response.body
    return inter, response
