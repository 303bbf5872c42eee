"""What a conformance run is about, prepared once for the CLI, the pytest plugin and the API.

All three start from the same :class:`~stream_harness.conformance.config.Config` and end here, so they agree
on which cassettes, adapters, expectation files and checks a run uses, and they refuse the
same inputs: a run that would check nothing is an error, never a pass.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.protocol import Adapter, AdapterLoadError
from stream_harness.conformance.cases import Case, CaseLoadError, Skipped, load_cases
from stream_harness.conformance.checks import CHECKS, CHECKS_BY_ID
from stream_harness.conformance.checks.engine import Check
from stream_harness.conformance.config import Config, ConfigError, check_numbers
from stream_harness.conformance.expectations import (
    Expectations,
    ExpectationsError,
    adapter_from_file_name,
    expectation_file_name,
    expectations_dir,
    load_expectations,
    unclaimed_files,
)
from stream_harness.conformance.runner import RunConfig
from stream_harness.conformance.shard import Shard
from stream_harness.contract.facts import bundled_cassettes


class SuiteError(ValueError):
    """Why a run cannot start or would check nothing: one line, naming the file or flag."""


@dataclass(frozen=True)
class LoadedAdapter:
    spec: str  # as the user named it: reproduce commands repeat it
    adapter: Adapter
    expectations: Expectations


@dataclass(frozen=True)
class Suite:
    adapters: tuple[LoadedAdapter, ...]
    cases: tuple[Case, ...]
    skipped: tuple[Skipped, ...]
    run_config: RunConfig
    roots: tuple[Path, ...]
    planned: int  # (adapter, case, check) triples that will run

    @property
    def cassette_count(self) -> int:
        return len({c.cassette for c in self.cases})

    def describe(self) -> str:
        """The one line every summary starts with: how much is about to be checked."""
        cfg = self.run_config
        # A reproduce command draws nothing: saying "100 random splits" would be false.
        splits = cfg.replayed() or (
            f"{cfg.examples} random split(s) per split-sensitive check, every single cut of "
            f"bodies up to {cfg.single_cut_limit} bytes, seed {cfg.seed}"
        )
        return (
            f"{self.cassette_count} cassette(s), {len(self.cases)} case(s), "
            f"{len(cfg.checks)} check(s), {len(self.adapters)} adapter(s), {self.planned} check run(s), "
            + splits
            + (f", shard {cfg.shard}" if cfg.shard is not None else "")
        )


def cassette_roots(config: Config) -> tuple[Path, ...]:
    return config.cassettes or (bundled_cassettes(),)


def expectations_for_adapter(name: str, user_dir: Path | None) -> Expectations:
    """The user's ``<name>.yaml`` when their folder has one, else the bundled one (if any)."""
    file_name = expectation_file_name(name)
    for folder in (user_dir, expectations_dir()):
        if folder is not None and (folder / file_name).is_file():
            return load_expectations(folder / file_name, name)
    return Expectations(name, ())


def prepare(
    config: Config,
    adapters: Sequence[str | Adapter] | None = None,
    *,
    default_adapters: Sequence[str] = ("reference",),
    interaction: int | None = None,
    only_cuts: tuple[int, ...] | None = None,
    only_truncate: int | None = None,
    only_plan: int | None = None,
    skip_unusable: bool = False,
    shard: Shard | None = None,
    allow_empty_shard: bool = False,
) -> Suite:
    """Load everything a run needs, or raise :class:`SuiteError` saying what is missing.

    With ``shard``, only that shard's (adapter, case) pairs are planned; a shard left with
    nothing to check is an error too (a CI job that checked nothing must not pass), unless
    ``allow_empty_shard`` (a driver that merges the shards afterwards, such as the matrix
    running each group as one shard, and whose merge then counts the whole).
    """
    checks = _checks(config)
    loaded = _load_adapters(config, adapters if adapters else (config.adapters or default_adapters))
    roots, cases, skipped = _cases(config, interaction, skip_unusable)
    planned = _planned(loaded, cases, checks, shard, allow_empty_shard)
    run_config = RunConfig(
        examples=config.examples, seed=config.seed, checks=checks,
        single_cut_limit=config.single_cut_limit,
        only_cuts=only_cuts, only_truncate=only_truncate, only_plan=only_plan, run_timeout=config.run_timeout,
        shard=shard, expectations=config.expectations, config_file=config.source,
    )  # fmt: skip
    return Suite(tuple(loaded), tuple(cases), tuple(skipped), run_config, tuple(roots), planned)


def _checks(config: Config) -> list[Check]:
    """The run's checks, once its numbers, expectations folder and check ids are valid."""
    try:
        check_numbers(
            examples=config.examples,
            single_cut_limit=config.single_cut_limit,
            run_timeout=config.run_timeout,
            prefix="",
        )
    except ConfigError as exc:
        raise SuiteError(str(exc)) from None
    if config.expectations is not None and not config.expectations.is_dir():
        raise SuiteError(f"{config.expectations}: no such expectations folder")
    unknown = [c for c in config.checks if c not in CHECKS_BY_ID]
    if unknown:
        raise SuiteError(f"unknown check id {unknown[0]!r} (known: {', '.join(CHECKS_BY_ID)})")
    return [CHECKS_BY_ID[c] for c in config.checks] if config.checks else list(CHECKS)


def _load_adapters(config: Config, given_adapters: Sequence[str | Adapter]) -> list[LoadedAdapter]:
    """Each adapter with its known failures; two of one name are an error, and a known
    failures file no adapter claims is a warning to :func:`prepare`'s caller."""
    loaded: list[LoadedAdapter] = []
    for given in given_adapters:
        try:
            # A module:object spec is the project's own: imported from the folder of the
            # pyproject.toml that configures the run, wherever the command runs from.
            project = config.source.parent if config.source is not None else None
            adapter = load_adapter(given, project=project) if isinstance(given, str) else given
        except AdapterLoadError as exc:
            raise SuiteError(str(exc)) from None
        spec = given if isinstance(given, str) else adapter.name
        try:
            exp = expectations_for_adapter(adapter.name, config.expectations)
        except ExpectationsError as exc:
            raise SuiteError(str(exc)) from None
        loaded.append(LoadedAdapter(spec, adapter, exp))
    by_name: dict[str, str] = {}
    for item in loaded:
        if item.adapter.name in by_name:
            raise SuiteError(
                f"adapters {by_name[item.adapter.name]!r} and {item.spec!r} are both named "
                f"{item.adapter.name!r}: their results and known failures would merge into one row"
            )
        by_name[item.adapter.name] = item.spec
    if config.expectations is not None:
        for path in unclaimed_files(config.expectations, by_name):
            warnings.warn(
                f"stream-harness: {path}: no adapter of this run is named {adapter_from_file_name(path.name)!r}; "
                f"its known failures apply to nothing (ran: {', '.join(by_name)})",
                UserWarning,
                stacklevel=3,  # the caller of prepare()
            )
    return loaded


def _cases(
    config: Config, interaction: int | None, skip_unusable: bool
) -> tuple[tuple[Path, ...], list[Case], list[Skipped]]:
    """The cassette roots, their cases (of one interaction, if given) and what was skipped;
    no case at all is an error."""
    roots = cassette_roots(config)
    try:
        cases, skipped = load_cases(roots, skip_unusable=skip_unusable)
    except CaseLoadError as exc:
        raise SuiteError(str(exc)) from None
    if interaction is not None:
        cases = [c for c in cases if c.interaction == interaction]
    if not cases:
        where = ", ".join(map(str, roots))
        at = f" at interaction {interaction}" if interaction is not None else ""
        if skipped and interaction is None:
            first = skipped[0]
            more = f"; and {len(skipped) - 1} more" if len(skipped) > 1 else ""
            raise SuiteError(
                f"no conformance cases in {where}: every input was skipped ({first.where}: {first.reason}{more})"
            )
        raise SuiteError(f"no conformance cases in {where}{at}")
    return roots, cases, skipped


def _planned(
    loaded: Sequence[LoadedAdapter],
    cases: Sequence[Case],
    checks: Sequence[Check],
    shard: Shard | None,
    allow_empty_shard: bool,
) -> int:
    """How many (adapter, case, check) runs this shard plans; none in the whole run is an
    error, and none in the shard too unless ``allow_empty_shard``."""
    planned = whole = 0
    for item in loaded:
        for case in cases:
            if case.protocol not in item.adapter.protocols:
                continue
            expected = case.expected_events()
            applicable = sum(
                1 for check in checks if check.applicable(item.adapter, case, expected)
            )
            whole += applicable
            if shard is None or shard.owns(item.adapter.name, case.id):
                planned += applicable
    if whole == 0:
        names = ", ".join(i.spec for i in loaded)
        protocols = sorted({c.protocol for c in cases})
        raise SuiteError(
            f"no check applies: adapter(s) {names} on {len(cases)} case(s) of {', '.join(protocols)} "
            f"with check(s) {', '.join(c.id for c in checks)}"
        )
    if planned == 0 and shard is not None and not allow_empty_shard:
        pairs = sum(
            1 for item in loaded for case in cases if case.protocol in item.adapter.protocols
        )
        raise SuiteError(
            f"nothing to check in shard {shard}: none of the run's {pairs} (adapter, case) pair(s) "
            "falls to it (pairs are split by hash, so few pairs can leave a shard empty); use fewer "
            "shards, or --allow-empty-shard when `stream-harness merge` combines the shards afterwards"
        )
    return planned
