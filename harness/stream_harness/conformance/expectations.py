"""Per-adapter expectation files: known failures, each with the upstream issue.

In the spirit of web-platform-tests' metadata: expectations live outside the checks, in
``specs/expectations/<adapter>.yaml`` (a portable spelling of the adapter name, see
:func:`expectation_file_name`), so that a report separates new failures from known
ones and flags a known failure that now passes (time to drop the entry)::

    adapter: openai-sdk
    known_failures:
      - check: error-surfacing
        case: "openai-completions/in_band_error*"   # fnmatch pattern on the case id
        issue: https://github.com/openai/openai-python/issues/NNNN
        reason: the SDK accumulates the error chunk as content

A case that passes is ``fixed`` only when an entry names it alone; a pattern entry
(``openai-completions/*``) stands for a class of cases, and a member that passes is just
``passed``. Outcomes are recomputed from these files whenever a report keeps rows of an
earlier run (:func:`stream_harness.reporting.report.reclassify`).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

import yaml

from stream_harness.contract.facts import ENV_VAR as SPECS_ENV
from stream_harness.contract.facts import YAML_LOADER, bundle_is_writable, specs_dir


class ExpectationsError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class KnownFailure:
    check: str
    case: str
    issue: str
    reason: str = ""

    def matches(self, check: str, case_id: str) -> bool:
        return fnmatch.fnmatchcase(check, self.check) and fnmatch.fnmatchcase(case_id, self.case)

    @property
    def is_pattern(self) -> bool:
        """An entry for a class of cases (``openai-completions/*``): a case of the class
        that passes is not news, unlike a single listed case that passes (``fixed``)."""
        return _is_glob(self.check) or _is_glob(self.case)


def _is_glob(text: str) -> bool:
    """Whether fnmatch reads ``text`` as a pattern rather than as itself."""
    return any(c in text for c in "*?[")


def outcome_for(
    failed: bool, known: KnownFailure | None
) -> tuple[Literal["passed", "failed", "known_failure", "fixed"], str | None]:
    """The outcome of a check that ran, and the issue it cites: the one rule, shared by
    the runner and by :func:`stream_harness.reporting.report.reclassify`."""
    if failed:
        return ("known_failure", known.issue) if known is not None else ("failed", None)
    if known is not None and not known.is_pattern:
        return "fixed", known.issue
    return "passed", None


@dataclass(frozen=True, slots=True)
class Expectations:
    adapter: str
    known: tuple[KnownFailure, ...] = ()
    # Per check: the entries that can apply, split into listed cases and patterns, each
    # with its place in ``known`` (the first entry that matches wins). Filled on first use:
    # a scan of every entry with fnmatch per row was most of reclassifying a kept matrix.
    _by_check: dict[str, _CheckEntries] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def lookup(self, check: str, case_id: str) -> KnownFailure | None:
        entries = self._by_check.get(check)
        if entries is None:
            entries = self._by_check[check] = _CheckEntries.of(self.known, check)
        listed = entries.cases.get(case_id)
        for place, k in entries.patterns:
            if listed is not None and place > listed[0]:
                break
            if fnmatch.fnmatchcase(case_id, k.case):
                return k
        return listed[1] if listed is not None else None


@dataclass(frozen=True, slots=True)
class _CheckEntries:
    cases: dict[str, tuple[int, KnownFailure]]
    patterns: tuple[tuple[int, KnownFailure], ...]

    @classmethod
    def of(cls, known: tuple[KnownFailure, ...], check: str) -> _CheckEntries:
        cases: dict[str, tuple[int, KnownFailure]] = {}
        patterns: list[tuple[int, KnownFailure]] = []
        for place, k in enumerate(known):
            if not fnmatch.fnmatchcase(check, k.check):
                continue
            if _is_glob(k.case):
                patterns.append((place, k))
            else:
                cases.setdefault(k.case, (place, k))
        return cls(cases, tuple(patterns))


# The file format (README, "Known failures"): ``causes`` holds shared fields, referenced
# from entries as YAML anchors (``{<<: *truncated, case: ...}``).
TOP_LEVEL_KEYS: Final = frozenset({"adapter", "known_failures", "causes"})
ENTRY_KEYS: Final = frozenset({"check", "case", "issue", "reason"})


def load_expectations(path: Path, adapter: str) -> Expectations:
    if not path.is_file():
        return Expectations(adapter)
    try:
        # libyaml when built: `report` reads every adapter's file to reclassify kept rows.
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=YAML_LOADER) or {}
    except yaml.YAMLError as exc:
        raise ExpectationsError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise ExpectationsError(f"{path}: expected a mapping with adapter and known_failures")
    # A misspelt key would drop its entries unseen, and the failures they cover would
    # count as new (or, misspelt the other way, a whole file would silently match nothing).
    unknown = sorted(set(map(str, data)) - TOP_LEVEL_KEYS)
    if unknown:
        raise ExpectationsError(
            f"{path}: unknown key {unknown[0]!r} (known: {', '.join(sorted(TOP_LEVEL_KEYS))}; "
            "shared fields go under causes)"
        )
    named = data.get("adapter")
    if named is not None and named != adapter:
        raise ExpectationsError(f"{path}: names adapter {named!r}, but is the file of {adapter!r}")
    rows = data.get("known_failures")
    if rows is None:
        rows = []
    if not isinstance(rows, list):
        raise ExpectationsError(f"{path}: known_failures must be a list")
    known = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not all(
            isinstance(row.get(k), str) for k in ("check", "case", "issue")
        ):
            raise ExpectationsError(
                f"{path}: known_failures[{i}] needs string fields check, case and issue"
            )
        extra = sorted(set(map(str, row)) - ENTRY_KEYS)
        if extra:
            raise ExpectationsError(
                f"{path}: known_failures[{i}]: unknown field {extra[0]!r} (known: {', '.join(sorted(ENTRY_KEYS))})"
            )
        known.append(
            KnownFailure(row["check"], row["case"], row["issue"], str(row.get("reason", "")))
        )
    return Expectations(adapter, tuple(known))


# Characters a Windows file name cannot hold (plus the path separators), and what an adapter
# name's ``->`` (a proxy row, ``litellm-proxy[anthropic-messages->openai-completions]``)
# becomes in its file name. The files ship in the wheel, so ``pip install`` on Windows
# would fail on a ``>`` in one of them.
UNPORTABLE_CHARS: Final = frozenset('<>:"|?*\\/')
_ARROW: Final = ("->", "--to--")


def expectation_file_name(adapter: str) -> str:
    """The portable file name of ``adapter``'s expectations: the one place that derives it.

    ``->`` becomes ``--to--`` (readable, and :func:`adapter_from_file_name` undoes it);
    any other character no file system takes is refused rather than silently mangled."""
    stem = adapter.replace(*_ARROW)
    bad = sorted({c for c in stem if c in UNPORTABLE_CHARS or ord(c) < 32})
    if bad or not stem or stem[-1] in ". " or _ARROW[1] in adapter:
        raise ExpectationsError(f"adapter name {adapter!r} has no portable expectation file name")
    return f"{stem}.yaml"


def adapter_from_file_name(name: str) -> str:
    """The adapter whose expectations ``name`` (``<stem>.yaml``, or a path's name) holds."""
    stem = name[: -len(".yaml")] if name.endswith(".yaml") else name
    return stem.replace(_ARROW[1], _ARROW[0])


def expectations_dir() -> Path:
    return specs_dir() / "expectations"


# How reports, the README and --help name the bundled expectation files of an installed
# stream-harness: their real path is inside site-packages, which means nothing to a
# reader of a published report and is not where a user adds entries.
BUNDLED_EXPECTATIONS: Final = "the files bundled with stream-harness"


def shown_folder(folder: Path, project: Path | None = None) -> str:
    """``folder`` as a reader of the project knows it: relative to the project root when
    inside it, else as given (relative to the working directory, or absolute)."""
    root = (project or Path.cwd()).resolve()
    try:
        return (Path.cwd() / folder).resolve().relative_to(root).as_posix() or "."
    except ValueError:
        return str(folder)


def expectation_folders_shown(
    user_dir: Path | None, project: Path | None = None
) -> tuple[str, ...]:
    """Where a run looks known failures up, in order, as reports and help texts name them:
    the project's folder, then the bundled files (their path in a checkout of
    stream-harness or a ``STREAM_HARNESS_SPECS`` folder, :data:`BUNDLED_EXPECTATIONS` when
    installed: never a site-packages path)."""
    shown = [shown_folder(user_dir, project)] if user_dir is not None else []
    if bundle_is_writable() or os.environ.get(SPECS_ENV):
        bundled = shown_folder(expectations_dir(), project)
        if bundled not in shown:
            shown.append(bundled)
    else:
        shown.append(BUNDLED_EXPECTATIONS)
    return tuple(shown)


def unclaimed_files(directory: Path, adapters: Iterable[str]) -> list[Path]:
    """Expectation files in ``directory`` named for none of ``adapters``: a misspelt file
    name (or an adapter renamed) whose known failures silently stopped applying."""
    names = {expectation_file_name(a) for a in adapters}
    return sorted(p for p in directory.glob("*.yaml") if p.name not in names)


def expectations_for(adapter: str, directory: Path | None = None) -> Expectations:
    return load_expectations(
        (directory or expectations_dir()) / expectation_file_name(adapter), adapter
    )
