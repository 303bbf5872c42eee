"""The user's configuration: one ``[tool.stream-harness]`` table, read the same way by all.

The CLI, the pytest plugin and ``run_conformance`` each start from :func:`load_config`,
then lay their own flags or arguments over it (:meth:`Config.with_overrides`), so that a
project states its cassette folders, adapters, expectations and output folder once.

Relative paths in the table are relative to the ``pyproject.toml`` that holds it (so a
test run from a sub-folder finds the same cassettes); relative paths given on the command
line or to the API are relative to the current directory, and are kept as the user typed
them so that reproduce commands can be pasted back. The table is found by walking up to
the first ``pyproject.toml`` from where the run is about: the shell commands start from the
current directory, but the pytest plugin and ``run_conformance`` start from the test's own
file (or the paths pytest was given), so that a monorepo's ``pytest proj/tests`` reads
``proj/pyproject.toml`` and never the parent folder's table, or none and the bundled
cassettes (a run green on data that is not the project's). ``STREAM_HARNESS_CONFIG`` names
a file instead (any TOML file with that table), and ``STREAM_HARNESS_CONFIG=`` (empty)
turns the lookup off.
"""

from __future__ import annotations

import difflib
import math
import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from stream_harness.adapters.processes.deadline import DEFAULT_RUN_TIMEOUT
from stream_harness.contract.names import known_names

CONFIG_ENV = "STREAM_HARNESS_CONFIG"
TABLE = "stream-harness"
DEFAULT_OUT = Path("conformance_report")
DEFAULT_EXAMPLES = 100
# Every single cut point is tried for bodies up to this many bytes (``--single-cut-limit``).
# Measured over the 36 rows of the committed matrix, every split failure that the sweep of
# bodies up to 1 KB found was also found by the drawn splits and the trouble-spot split,
# which cost a third of its runs (benchmarks/README.md); raise it to hunt.
DEFAULT_SINGLE_CUT_LIMIT: Final = 256
# The most random splits a run may ask for per split-sensitive check and case: enough to
# hunt (the committed matrix uses 100), and a bound on a mistyped value (1000000) that
# would otherwise run for days. Hunting beyond it: more seeds, not more examples.
MAX_EXAMPLES: Final = 10_000


class ConfigError(ValueError):
    """A configuration that cannot be used; the message is one line naming file and key."""


@dataclass(frozen=True)
class Config:
    """What a run is about. An empty ``cassettes`` means the bundled cassettes."""

    cassettes: tuple[Path, ...] = ()
    adapters: tuple[str, ...] = ()
    expectations: Path | None = None
    # ``stream-harness agents``' known failures: a folder of <agent>.yaml files (or one file)
    # replacing the bundled ones of the same agents (specs/agent-expectations/).
    agent_expectations: Path | None = None
    examples: int = DEFAULT_EXAMPLES
    single_cut_limit: int = DEFAULT_SINGLE_CUT_LIMIT
    seed: int = 0
    checks: tuple[str, ...] = ()
    out: Path = DEFAULT_OUT
    run_timeout: float = DEFAULT_RUN_TIMEOUT  # seconds one run of an in-process adapter may take
    # The pyproject.toml (or $STREAM_HARNESS_CONFIG file) in force, table or not: the
    # project's own modules are imported from its folder.
    source: Path | None = field(default=None, compare=False)

    def with_overrides(self, **given: Any) -> Config:
        """Flags over the table: a value of None (flag not given) keeps the table's."""
        changes: dict[str, Any] = {}
        for name, value in given.items():
            if value is None:
                continue
            if name == "cassettes":
                value = tuple(Path(p) for p in value)
            elif name in ("adapters", "checks"):
                value = tuple(value)
            elif name in ("out", "expectations", "agent_expectations"):
                value = Path(value)
            changes[name] = value
        return replace(self, **changes)


_KEYS: Mapping[str, str] = {
    "cassettes": "a list of folders or files",
    "adapters": "a list of adapter specs (built-in name, entry-point name or module:object)",
    "expectations": "a folder of <adapter>.yaml known-failure files",
    "agent_expectations": "a folder of <agent>.yaml known-failure files (or one file)",
    "examples": f"a whole number from 0 to {MAX_EXAMPLES}",
    "single_cut_limit": "a whole number >= 0 (bytes)",
    "seed": "a whole number",
    "checks": "a list of check ids",
    "out": "the report folder",
    "run_timeout": "a number of seconds > 0",
}


def check_numbers(
    *,
    examples: int | None,
    single_cut_limit: int | None,
    run_timeout: float | None = None,
    prefix: str = "--",
) -> None:
    """The numeric settings as every front end checks them (CLI flags, pytest options, the API).

    ``prefix`` names the option as its front end spells it (``--``, ``--harness-``).
    """
    if examples is not None and not 0 <= examples <= MAX_EXAMPLES:
        raise ConfigError(
            f"{prefix}examples must be a whole number from 0 to {MAX_EXAMPLES}, got {examples}"
        )
    if single_cut_limit is not None and single_cut_limit < 0:
        raise ConfigError(f"{prefix}single-cut-limit must be >= 0, got {single_cut_limit}")
    if run_timeout is not None and not (math.isfinite(run_timeout) and run_timeout > 0):
        raise ConfigError(
            f"{prefix}run-timeout must be a number of seconds > 0, got {run_timeout:g}"
        )


def find_config_file(start: Path | None = None) -> Path | None:
    """The file the table is read from: ``$STREAM_HARNESS_CONFIG``, else the pyproject.toml
    nearest to ``start`` (a folder, or a file: its folder; default the current directory)."""
    named = os.environ.get(CONFIG_ENV)
    if named is not None:
        return Path(named) if named else None
    here = (start or Path.cwd()).resolve()
    if not here.is_dir():
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_config(start: Path | None = None) -> Config:
    """The configuration in force at ``start`` (see :func:`find_config_file`); defaults
    when there is no table, with the pyproject.toml found kept as ``source``: it still
    says which project a ``module:object`` adapter is imported from."""
    return read_config_file(find_config_file(start))


def load_project_config(project: Path) -> Config:
    """The configuration of the project rooted at ``project``: its own pyproject.toml (or
    the TOML file given), no walk up, no environment: the caller said which project."""
    path = project / "pyproject.toml" if project.is_dir() else project
    if not path.is_file():
        what = "no pyproject.toml in it" if project.is_dir() else "no such folder or file"
        raise ConfigError(
            f"{project}: {what} (the project root is the folder of its pyproject.toml)"
        )
    return read_config_file(path)


def config_for_paths(paths: Sequence[Path]) -> Config:
    """The one configuration a run over ``paths`` (a pytest command line's files and
    folders) is about: that of the project holding them. Paths of two projects, each with
    its own pyproject.toml, are an error: one run, one table."""
    found = {find_config_file(p) for p in paths} if paths else {find_config_file()}
    if len(found) > 1:
        named = sorted(str(f) if f is not None else "one with no pyproject.toml" for f in found)
        raise ConfigError(
            f"the paths given belong to {len(found)} projects ({', '.join(named)}): "
            "run one project's tests at a time, or name one table with $" + CONFIG_ENV
        )
    return read_config_file(found.pop())


def read_config_file(path: Path | None) -> Config:
    """The table in ``path``; defaults when there is none."""
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    tools = data.get("tool")
    table = tools.get(TABLE) if isinstance(tools, dict) else None
    if table is None:
        near = _near_miss(tools)
        if near is not None:
            # Never a silent fallback to the bundled cassettes: the run would pass unchecked.
            raise ConfigError(f"{path}: [tool.{near}] is not read: did you mean [tool.{TABLE}]?")
        return Config(source=path)
    return parse_table(table, path)


def _near_miss(tools: object) -> str | None:
    """A ``[tool.*]`` table that is almost ours (``stream_harness``, ``stream-harnes``, ...)."""
    if not isinstance(tools, dict):
        return None
    for name in tools:
        folded = "".join(ch for ch in str(name).lower() if ch.isalnum())
        if folded == "streamharness" or difflib.get_close_matches(
            str(name), [TABLE], n=1, cutoff=0.8
        ):
            return str(name)
    return None


def parse_table(table: object, path: Path) -> Config:
    where = f"{path}: [tool.{TABLE}]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} ({known_names(unknown[0], _KEYS)})")
    base = path.parent

    def paths(key: str) -> tuple[Path, ...]:
        return tuple(_under(base, v) for v in strings(key))

    def strings(key: str) -> tuple[str, ...]:
        value = table[key]
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) and v for v in items):
            raise ConfigError(f"{where} {key}: expected {_KEYS[key]}")
        return tuple(items)

    def integer(key: str, minimum: int | None, maximum: int | None = None) -> int:
        value = table[key]
        if (
            not isinstance(value, int)
            or isinstance(value, bool)
            or (minimum is not None and value < minimum)
            or (maximum is not None and value > maximum)
        ):
            raise ConfigError(f"{where} {key}: expected {_KEYS[key]}, got {value!r}")
        return value

    def folder(key: str) -> Path:
        value = table[key]
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{where} {key}: expected {_KEYS[key]}")
        return _under(base, value)

    def timeout(key: str) -> float:
        value = table[key]
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not (math.isfinite(value) and value > 0)
        ):
            raise ConfigError(f"{where} {key}: expected {_KEYS[key]}, got {value!r}")
        return float(value)

    # Each key read by its kind, in this order (the first bad one is the error).
    readers: dict[str, Callable[[str], Any]] = {
        "cassettes": paths,
        "adapters": strings,
        "checks": strings,
        "expectations": folder,
        "agent_expectations": folder,
        "out": folder,
        "examples": lambda key: integer(key, 0, MAX_EXAMPLES),
        "single_cut_limit": lambda key: integer(key, 0),
        "seed": lambda key: integer(key, None),
        "run_timeout": timeout,
    }
    changes = {key: read(key) for key, read in readers.items() if key in table}
    return replace(Config(source=path), **changes)


def _under(base: Path, value: str) -> Path:
    """A path from the table, relative to the table's file, shown relative to the cwd when it can be."""
    path = Path(value)
    if path.is_absolute():
        return path
    full = base / path
    try:
        return full.relative_to(Path.cwd())
    except ValueError:
        return full
