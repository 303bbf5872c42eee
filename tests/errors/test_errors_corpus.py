"""The table rows that quote a corpus cassette, replayed from the cassette itself.

The tables hold only the message text; this checks that the real recorded body (status,
headers and all) yields the same message and the same classification, so a row cannot
drift from the traffic it cites. Skips cleanly when the corpus is absent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stream_harness.contract import facts
from stream_harness.errors import classify, error_details_from_body
from stream_harness.recordings.cassette import load_cassette


def _corpus_rows() -> list[Any]:
    rows = []
    for table, section in (("overflow.yaml", "cases"), ("retry.yaml", "error_cases")):
        for index, row in enumerate(facts.load_yaml(table)[section]):
            if "corpus" in row:
                name = f"{table.split('.')[0]}[{index}]-{row['corpus']['file'].split('/')[-1]}"
                rows.append(pytest.param(row, id=name))
    return rows


ROWS = _corpus_rows()


def test_every_corpus_error_file_is_cited() -> None:
    # The overflow and error cassettes of MANIFEST.tsv all appear as rows.
    cited = {row.values[0]["corpus"]["file"] for row in ROWS}
    assert len(cited) >= 12
    assert any("context_window_exceeded[cohere]" in name for name in cited)


@pytest.mark.corpus
@pytest.mark.parametrize("row", ROWS)
def test_row_matches_the_recorded_response(row: dict[str, Any], corpus_dir: Path) -> None:
    pointer = row["corpus"]
    cassette = load_cassette(corpus_dir / pointer["file"])
    response = cassette.interactions[pointer["interaction"]].response
    recorded = error_details_from_body(response.body)
    assert recorded.message is not None
    assert recorded.message == error_details_from_body(row.get("body")).message
    info = classify(
        status=response.status,
        body=response.body,
        headers=response.headers,
        protocol=row.get("protocol"),
    )
    if "expected" in row and isinstance(row["expected"], str):
        assert (info.kind == "overflow") is (row["expected"] == "overflow"), info
    else:
        for field, expected in row["expected"].items():
            assert getattr(info, field) == expected, (field, info)
