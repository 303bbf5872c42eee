"""The ``--harness-*`` options, their checks and the [tool.stream-harness] table they
override: the ground the stream items, the agent items and the markers share.

Imports of the engine are deferred: the plugin loads in every pytest run of every
project that installs stream-harness, so it must cost nothing unless used.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from stream_harness.conformance.config import Config


# The options that override [tool.stream-harness], by the Config field they set.
OPTION_FIELDS = {
    "cassettes": "--harness-cassettes",
    "adapters": "--harness-adapter",
    "examples": "--harness-examples",
    "seed": "--harness-seed",
    "single_cut_limit": "--harness-single-cut-limit",
    "checks": "--harness-check",
    "expectations": "--harness-expectations",
    "run_timeout": "--harness-run-timeout",
}
AGENT_OPTIONS = ("--harness-agent", "--harness-agent-scenarios")
# The ones the marker and harness_chunks read too: they stand without --harness.
MARKER_FIELDS = frozenset({"cassettes", "seed"})


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("stream-harness", "stream-harness conformance")
    group.addoption(
        "--harness",
        action="store_true",
        default=False,
        help="run the stream-harness conformance suite",
    )
    group.addoption(
        "--harness-adapter",
        action="append",
        default=None,
        help="adapter to check: a built-in name, an entry-point name or module:object (repeatable; default: [tool.stream-harness] adapters, else reference)",
    )
    group.addoption(
        "--harness-cassettes",
        action="append",
        default=None,
        help="cassette folder or file (repeatable; default: [tool.stream-harness] cassettes, else the bundled cassettes)",
    )
    group.addoption(
        "--harness-examples",
        type=int,
        default=None,
        help="random splits per split-sensitive check (default: [tool.stream-harness] examples, else 100)",
    )
    group.addoption(
        "--harness-single-cut-limit",
        type=int,
        default=None,
        help="every single cut point is tried on bodies up to this many bytes (default: [tool.stream-harness] single_cut_limit, else 256; raise it to hunt, 0 for none)",
    )
    group.addoption(
        "--harness-seed", type=int, default=None, help="seed for the random splits (default 0)"
    )
    group.addoption(
        "--harness-check", action="append", default=None, help="only these check ids (repeatable)"
    )
    group.addoption(
        "--harness-expectations", default=None, help="folder of <adapter>.yaml known-failure files"
    )
    group.addoption(
        "--harness-run-timeout",
        type=float,
        default=None,
        help="seconds one run of an in-process adapter may take before its check is recorded as timeout (default: [tool.stream-harness] run_timeout, else 30)",
    )
    group.addoption(
        "--harness-agent",
        action="append",
        default=None,
        help="agent adapter to check against the agent contract: a registered name, module:object or cmd:COMMAND (repeatable; with --harness)",
    )
    group.addoption(
        "--harness-agent-scenarios",
        default=None,
        help="agent scenario file or folder (default: the bundled agent scenarios; with --harness-agent)",
    )


def pytest_configure(config: pytest.Config) -> None:
    _take_selected_ids(config)
    suite_only = [
        option
        for field, option in OPTION_FIELDS.items()
        if field not in MARKER_FIELDS and config.getoption(option) is not None
    ] + [option for option in AGENT_OPTIONS if config.getoption(option) is not None]
    if suite_only and not config.getoption("--harness"):
        # Without --harness the suite does not run: the option would be ignored while the
        # run passes. (--harness-cassettes and --harness-seed also feed the marker and the
        # harness_chunks fixture, so they stand alone.)
        raise pytest.UsageError(f"stream-harness: {suite_only[0]} has no effect without --harness")
    numbers = ("--harness-examples", "--harness-single-cut-limit", "--harness-run-timeout")
    if any(config.getoption(option) is not None for option in numbers):
        # Checked as the CLI checks its flags (the entry point imports on use: see the module docstring).
        from stream_harness.conformance.config import ConfigError, check_numbers

        try:
            check_numbers(
                examples=config.getoption("--harness-examples"),
                single_cut_limit=config.getoption("--harness-single-cut-limit"),
                run_timeout=config.getoption("--harness-run-timeout"),
                prefix="--harness-",
            )
        except ConfigError as exc:
            raise pytest.UsageError(f"stream-harness: {exc}") from None
    given = config.getoption("--harness-cassettes") or []
    missing = [p for p in given if not Path(p).exists()]
    if missing and not config.getoption("--harness"):
        # Without --harness only the markers read it: a wrong path would otherwise be
        # dropped unseen while the run passes. (With --harness the suite's collection
        # says it, as every other bad input.)
        raise pytest.UsageError(f"stream-harness: {missing[0]}: no such cassette folder or file")


def _config(config: pytest.Config, test_file: Path | None = None) -> Config:
    """[tool.stream-harness] with the --harness-* options laid over it: the table of the
    project holding ``test_file`` (a marker's test), else of the paths pytest was given
    (the suite's items), never the current folder's: ``pytest proj/tests --harness`` run
    from a monorepo's root reads proj/pyproject.toml."""
    from stream_harness.conformance.config import config_for_paths, load_config

    table = (
        load_config(test_file) if test_file is not None else config_for_paths(_given_paths(config))
    )
    return table.with_overrides(
        **{field: config.getoption(option) for field, option in OPTION_FIELDS.items()}
    )


def _given_paths(config: pytest.Config) -> list[Path]:
    """The files and folders on pytest's command line (node ids cut to their file), else
    the rootdir: where the tests of this run live."""
    base = config.invocation_params.dir
    paths = [base / arg.split("::")[0] for arg in config.args]
    return [p for p in paths if p.exists()] or [config.rootpath]


NODE_ROOT = "stream-harness"
_SELECTED = pytest.StashKey[list[str]]()


def _take_selected_ids(config: pytest.Config) -> None:
    """Harness node ids given as arguments are ours to select, not paths for pytest to find:
    they are taken out of the arguments (and imply --harness)."""
    args = list(config.args)
    ours = [a for a in args if a == NODE_ROOT or a.startswith(NODE_ROOT + "::")]
    config.stash[_SELECTED] = ours
    if ours:
        config.args[:] = [a for a in args if a not in ours]
        config.option.harness = True


def adapter_segment(spec: str) -> str:
    """An adapter spec as one segment of a node id. pytest reads a trailing ``[...]`` as
    parameters and ``::`` as nesting, so a gateway row's brackets become parentheses; the
    reproduce command keeps the spec as given."""
    return spec.replace("[", "(").replace("]", ")").replace("::", ":")


class HarnessMarkerError(Exception):
    """A ``harness_cassettes`` marker that names nothing to test: a collection error."""
