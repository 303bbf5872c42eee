"""The reproduce command of a failure, built in one place from every option that can
change its verdict.

A reproduce command that leaves out an option the failing run had is a command that
passes: a hang found under ``--run-timeout 2`` replayed at the 30 s default, a failure of
the message-framing check (whose rounds are drawn from ``--seed`` and ``--examples``)
replayed with other draws, a failure of a project found from its test file
(``pytest proj/tests`` run from a monorepo's root) replayed against the table of the folder
the user pastes it in. So every front end (``check``, ``report`` rows, the pytest plugin,
``run_conformance``) asks :func:`check_command`, and it writes:

- the case: adapter, cassette, interaction, check; the split (``--split``) or truncation
  offset that failed, when one did;
- ``--run-timeout`` whenever the run's differs from what the replay's table gives;
- ``--seed``, ``--examples`` and ``--single-cut-limit`` likewise, when the command pins no
  split (with a split pinned, nothing is drawn);
- ``--expectations`` when the run had a folder the table does not name;
- ``STREAM_HARNESS_CONFIG=<file>`` before it when the table the run read is not the one
  the current folder finds (its adapter is imported from that project's folder).

A split is written in its shortest exact form (runs of consecutive cuts as ``A-B``:
one byte per chunk of a 3,240-byte body is ``cuts:1-3239``, not 9,000 characters); one
that stays longer than :data:`SPLIT_TEXT_LIMIT` is named by its place in the split plan
(``plan:K``), which ``--seed``, ``--examples`` and ``--single-cut-limit`` then pin.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from stream_harness.adapters.processes.deadline import DEFAULT_RUN_TIMEOUT
from stream_harness.agents.protocol import AgentLimits
from stream_harness.conformance.config import (
    CONFIG_ENV,
    DEFAULT_EXAMPLES,
    DEFAULT_SINGLE_CUT_LIMIT,
    Config,
    ConfigError,
    find_config_file,
    read_config_file,
)
from stream_harness.recordings.chunking import compact_cuts
from stream_harness.recordings.inputs import display_path

# The longest ``--split`` text a reproduce command carries; a longer split is named by its
# place in the plan, so that the command fits one terminal line with the rest.
SPLIT_TEXT_LIMIT: Final = 120


@dataclass(frozen=True)
class ReplayOptions:
    """The options of a run that decide a replayed case's verdict."""

    examples: int = DEFAULT_EXAMPLES
    seed: int = 0
    single_cut_limit: int = DEFAULT_SINGLE_CUT_LIMIT
    run_timeout: float | None = DEFAULT_RUN_TIMEOUT
    expectations: Path | None = None
    config_file: Path | None = None  # the table the run read (None: none, or not known)


def split_text(cuts: Sequence[int]) -> str:
    """``cuts`` as a ``--split`` value: ``whole`` or ``cuts:`` with runs as ``A-B``."""
    return "cuts:" + compact_cuts(cuts) if cuts else "whole"


def check_command(
    options: ReplayOptions,
    *,
    adapter: str,
    cassette: str,
    interaction: int,
    check: str,
    cuts: Sequence[int] = (),
    plan_index: int | None = None,
    truncate: int | None = None,
) -> str:
    """The ``stream-harness check`` line that replays one check on one case.

    ``plan_index`` is the place of ``cuts`` in the case's split plan, when known: the name
    a split too long to print goes by."""
    parts = case_parts(adapter=adapter, cassette=cassette, interaction=interaction, check=check)
    pinned = bool(cuts) or truncate is not None
    by_plan = False
    if cuts:
        text = split_text(cuts)
        if len(text) > SPLIT_TEXT_LIMIT and plan_index is not None:
            text, by_plan = f"plan:{plan_index}", True
        parts += ["--split", text]
    if truncate is not None:
        parts += ["--truncate", str(truncate)]
    # The replay reads the same table (the prefix below sees to it): what the table says
    # need not be repeated, what the run had instead must be.
    table = _table(options.config_file)
    if not pinned or by_plan:
        if options.seed != table.seed:
            parts += ["--seed", str(options.seed)]
        if options.examples != table.examples:
            parts += ["--examples", str(options.examples)]
        if options.single_cut_limit != table.single_cut_limit:
            parts += ["--single-cut-limit", str(options.single_cut_limit)]
    if options.run_timeout is not None and options.run_timeout != table.run_timeout:
        parts += ["--run-timeout", f"{options.run_timeout:g}"]
    if options.expectations is not None and (
        table.expectations is None or table.expectations.resolve() != options.expectations.resolve()
    ):
        parts += ["--expectations", display_path(options.expectations)]
    return config_prefix(options.config_file) + shlex.join(parts)


def case_parts(*, adapter: str, cassette: str, interaction: int, check: str) -> list[str]:
    """The words every ``check`` command of this case starts with, before its options
    (the report's reader rebuilds a failure's command from them and its options)."""
    return ["stream-harness", "check", "--adapter", adapter, "--cassettes", cassette,
            "--interaction", str(interaction), "--check", check]  # fmt: skip


def _table(config_file: Path | None) -> Config:
    """The table a replay reads (defaults when none, or when it no longer reads)."""
    try:
        return read_config_file(config_file)
    except ConfigError:
        return Config()


def config_prefix(config_file: Path | None) -> str:
    """``STREAM_HARNESS_CONFIG=<file> `` when the table the run read is not the one a
    command started in the current folder reads, or was named by that variable (a command
    pasted into a fresh shell must not depend on it); else nothing."""
    if config_file is None:
        return ""
    here = None if os.environ.get(CONFIG_ENV) is not None else find_config_file()
    if here is not None and here.resolve() == config_file.resolve():
        return ""
    return f"{CONFIG_ENV}={shlex.quote(display_path(config_file.resolve()))} "


def agents_command(
    *,
    agent: str,
    scenarios: str,
    protocol: str,
    check: str,
    limits: AgentLimits | None = None,
    explore: tuple[int, int] | None = None,
) -> str:
    """The ``stream-harness agents`` line that replays one check of one agent run, with the
    bounds the run had (``--timeout``, ``--max-turns``) when they are not the defaults: a
    run cut off by ``--max-turns 3`` replayed at 10 turns may pass. ``explore``, (draws,
    seed), replays an exploration (``--explore N --seed S``), which the report's reader
    rebuilds for an explored row that passed."""
    parts = ["stream-harness", "agents", "--agent", agent, "--scenarios", scenarios]
    parts += ["--protocol", protocol, "--check", check]
    default = AgentLimits()
    if limits is not None and limits.timeout_s != default.timeout_s:
        parts += ["--timeout", f"{limits.timeout_s:g}"]
    if limits is not None and limits.max_turns != default.max_turns:
        parts += ["--max-turns", str(limits.max_turns)]
    if explore is not None:
        parts += ["--explore", str(explore[0]), "--seed", str(explore[1])]
    return shlex.join(parts)
