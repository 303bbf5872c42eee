"""Issue 24.3: a run's memory stays flat in the number of splits.

Splits are drawn as they are judged, and a case keeps only the first runs for other checks
to reuse, so 5,000 examples hold no more than 50 do.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence

from stream_harness import AdapterResult, ReferenceAdapter
from stream_harness.conformance.cases import load_cases
from stream_harness.conformance.checks.engine import RUN_CACHE_LIMIT, CheckContext
from stream_harness.conformance.checks.stream import check_split_invariance
from stream_harness.contract.facts import bundled_cassettes


class Counting(ReferenceAdapter):
    def __init__(self) -> None:
        super().__init__()
        self.runs = 0

    def run(
        self,
        protocol: str,
        chunks: Sequence[bytes],
        *,
        status: int = 200,
        headers: Mapping[str, Sequence[str]] | None = None,
    ) -> AdapterResult:
        self.runs += 1
        return super().run(protocol, chunks, status=status, headers=headers)


def _context(examples: int) -> tuple[CheckContext, Counting]:
    cases, _ = load_cases([bundled_cassettes() / "openai-completions" / "text_plain.yaml"])
    adapter = Counting()
    return CheckContext(cases[0], adapter, examples=examples, single_cut_limit=0), adapter


def test_splits_are_drawn_lazily() -> None:
    ctx, _ = _context(10_000)
    assert inspect.isgenerator(ctx.iter_splits())
    first = next(ctx.iter_splits())
    assert first and all(isinstance(k, int) for k in first)


def test_the_run_cache_is_bounded_however_many_examples() -> None:
    ctx, adapter = _context(2_000)
    assert check_split_invariance(ctx) == []
    assert adapter.runs > 2_000  # every split was judged...
    assert len(ctx._runs) == RUN_CACHE_LIMIT  # ...and no more than the first runs were kept
    small, _ = _context(10)
    assert check_split_invariance(small) == []
    assert len(small._runs) <= RUN_CACHE_LIMIT
    # the splits are the same, drawn lazily or listed
    assert list(_context(50)[0].iter_splits()) == _context(50)[0].splits()
