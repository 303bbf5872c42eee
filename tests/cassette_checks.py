"""vcrpy replay of a bundled cassette, shared by the provider test modules.

Imported by bare name (pytest's default import mode puts tests/ on sys.path), so each
module keeps its own protocol-specific assertions on the replayed request. Goldens,
split invariance and mutations are parametrized over every protocol instead:
tests/recordings/test_goldens.py and tests/conformance/test_robustness.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stream_harness.recordings.cassette import Interaction, load_cassette


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


# -- streams through a normalizer ---------------------------------------------------------


# -- mutations of SSE bodies ----------------------------------------------------------------


