"""``--shard K/N``: which (adapter, case) pairs a shard runs, and that the runner and the
suite's planning honour it."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections import Counter

import pytest

from stream_harness.adapters.protocol import ReferenceAdapter
from stream_harness.conformance.cases import Case, load_cases
from stream_harness.conformance.checks import CHECKS_BY_ID
from stream_harness.conformance.config import Config
from stream_harness.conformance.runner import RunConfig, run_adapters
from stream_harness.conformance.shard import Shard, ShardError, parse_shard, shard_of
from stream_harness.conformance.suite import SuiteError, prepare
from stream_harness.contract.facts import bundled_cassettes

BUNDLED_CASES = [c.id for c in load_cases([bundled_cassettes()])[0]]
ADAPTERS = [
    "reference",
    "openai-sdk",
    "litellm",
    "js-openai",
    "litellm-proxy[anthropic-messages->openai-completions]",
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1/1", Shard(1, 1)), ("2/4", Shard(2, 4)), ("4/4", Shard(4, 4)), (" 3/7 ", Shard(3, 7))],
)
def test_shard_syntax(text: str, expected: Shard) -> None:
    assert parse_shard(text) == expected
    assert str(expected) == f"{expected.index}/{expected.count}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0/4", "K must be from 1 to N"),
        ("5/4", "K must be from 1 to N"),
        ("1/0", "N must be from 1"),
        ("3", "expected K/N"),
        ("a/b", "expected K/N"),
        ("-1/4", "expected K/N"),
        ("1/4/2", "expected K/N"),
        ("1/100000", "N must be from 1 to 1000"),
    ],
)
def test_bad_shards_are_one_line_errors_naming_the_flag(text: str, message: str) -> None:
    with pytest.raises(ShardError, match=message) as caught:
        parse_shard(text)
    assert str(caught.value).startswith(f"--shard {text!r}") and "\n" not in str(caught.value)


def test_a_pair_shard_is_the_documented_hash_of_its_two_names() -> None:
    """sha256 of "adapter\\0case", first 8 bytes big-endian, mod N, plus 1 (README): so any
    tool, in any language, can tell where a pair runs."""
    for adapter in ADAPTERS:
        for case in BUNDLED_CASES[:40]:
            digest = hashlib.sha256(adapter.encode() + b"\x00" + case.encode()).digest()
            for n in (1, 2, 3, 4, 7):
                assert shard_of(adapter, case, n) == int.from_bytes(digest[:8], "big") % n + 1


def test_the_split_does_not_depend_on_pythonhashseed() -> None:
    """The shards of one run are separate processes on separate machines."""
    code = (
        "from stream_harness.conformance.shard import shard_of;"
        "print([shard_of(a, c, 4) for a in ('reference', 'openai-sdk') for c in ('x/a.yaml#0', 'y/b.yaml#1', 'z#2')])"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("0", "1", "12345")
    }
    assert len(outputs) == 1


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_every_pair_falls_to_exactly_one_shard(n: int) -> None:
    pairs = [(a, c) for a in ADAPTERS for c in BUNDLED_CASES]
    owners = {pair: [k for k in range(1, n + 1) if Shard(k, n).owns(*pair)] for pair in pairs}
    assert all(len(found) == 1 for found in owners.values())


def test_four_shards_of_the_bundled_pairs_are_balanced() -> None:
    """About a quarter each: within 15% of the mean over the ~1,200 pairs of five rows."""
    pairs = [(a, c) for a in ADAPTERS for c in BUNDLED_CASES]
    sizes = Counter(shard_of(a, c, 4) for a, c in pairs)
    mean = len(pairs) / 4
    assert sorted(sizes) == [1, 2, 3, 4]
    assert all(abs(size - mean) <= 0.15 * mean for size in sizes.values()), sizes


class Renamed(ReferenceAdapter):
    """A second row, so that shards split an adapter's cases, not just adapters."""

    name = "renamed"


def _cases() -> list[Case]:
    return list(load_cases([bundled_cassettes() / "openai-completions"])[0])


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_shards_of_a_run_are_the_run(jobs: int) -> None:
    """Shards 1..3 together give exactly the whole run's results, each once, in the same
    sequential and forked runners."""
    cases = _cases()
    adapters = [ReferenceAdapter(), Renamed()]
    checks = [CHECKS_BY_ID["contract"], CHECKS_BY_ID["split-invariance"]]

    def results(shard: Shard | None) -> list[tuple[str, str, str, str]]:
        config = RunConfig(examples=2, checks=checks, single_cut_limit=0, shard=shard)
        runs = run_adapters(adapters, cases, config, [None, None], jobs=jobs)
        return [(r.adapter, r.case, r.check, r.outcome) for run in runs for r in run.results]

    whole = results(None)
    parts = [results(Shard(k, 3)) for k in (1, 2, 3)]
    assert all(parts), "a shard of 50 pairs came out empty"
    for k, part in enumerate(parts, start=1):
        assert all(shard_of(a, c, 3) == k for a, c, _, _ in part)
    assert sorted(r for part in parts for r in part) == sorted(whole)
    assert len(whole) == 2 * len(cases) * 2


def test_an_empty_shard_is_an_error_unless_a_merge_follows() -> None:
    """One adapter on one case: one shard of two has it, the other has nothing to check."""
    cassette = bundled_cassettes() / "openai-completions" / "tool_call_single.yaml"
    config = Config(cassettes=(cassette,), checks=("contract",))
    [case] = load_cases([cassette])[0]
    empty = Shard(3 - shard_of("reference", case.id, 2), 2)
    with pytest.raises(
        SuiteError,
        match=rf"nothing to check in shard {empty}: none of the run's 1 \(adapter, case\) pair",
    ):
        prepare(config, shard=empty)
    assert prepare(config, shard=empty, allow_empty_shard=True).planned == 0
    full = Shard(shard_of("reference", case.id, 2), 2)
    assert prepare(config, shard=full).planned == 1
