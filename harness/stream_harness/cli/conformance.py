"""``stream-harness check``, ``report`` and ``merge``: the conformance suite from the shell.

Exit status, for both: 0 when something was checked and nothing new failed, 1 when there
are new (untriaged) failures, timeouts, crashes or errored checks (the verdict says FAILED), 2 when
the input is bad (a missing folder, a cassette that does not load, an adapter that does
not import, nothing to check), with one line naming the problem. ``merge`` combines the
report folders of a sharded ``report`` (``--shard K/N``) into the one a single run writes.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from stream_harness.adapters.loading import DEFAULT_ADAPTERS, is_known_name, load_adapter
from stream_harness.adapters.protocol import AdapterLoadError
from stream_harness.agents.conformance.runner import ExpectationError, expectations_for_agents
from stream_harness.agents.reporting.triage import reclassify_agents
from stream_harness.conformance.config import (
    MAX_EXAMPLES,
    Config,
    ConfigError,
    check_numbers,
    load_config,
)
from stream_harness.conformance.expectations import ExpectationsError, expectation_folders_shown
from stream_harness.conformance.runner import AdapterRun, run_adapters
from stream_harness.conformance.shard import Shard, ShardError, parse_shard
from stream_harness.conformance.suite import Suite, SuiteError, expectations_for_adapter, prepare
from stream_harness.recordings.cassette import CassetteError, load_cassette
from stream_harness.recordings.chunking import SplitSpecError, parse_cuts
from stream_harness.reporting import (
    Report,
    ReportError,
    build_report,
    load_report,
    reclassify,
    write_report,
)
from stream_harness.reporting.console import (
    FORMATS,
    Format,
    choose_format,
    is_terminal,
    render,
    skipped_lines,
)
from stream_harness.reporting.keep import keep_previous
from stream_harness.reporting.progress import DEFAULT_EVERY, Heartbeat, progress_every
from stream_harness.reporting.shards import merge_shards, replaces_whole_report


class CommandError(Exception):
    """One line for the user; the CLI prints it and exits 2."""


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The options every suite command shares; unset ones fall back to [tool.stream-harness]."""
    p.add_argument(
        "--adapter",
        action="append",
        dest="adapters",
        help="adapter: built-in name, entry-point name or module:object (repeatable)",
    )
    p.add_argument(
        "--adapter-command", action="append", default=[],
        help="an executable speaking the stdio adapter protocol (specs/adapter-protocol.md), e.g. \"node adapter.mjs\" (repeatable; the same as --adapter 'cmd:...')",
    )  # fmt: skip
    p.add_argument(
        "--cassettes",
        action="append",
        help="cassette folder or file (repeatable; default: [tool.stream-harness] cassettes, else the bundled cassettes)",
    )
    p.add_argument(
        "--examples",
        type=int,
        help=f"random splits per split-sensitive check (default 100, at most {MAX_EXAMPLES})",
    )
    p.add_argument(
        "--single-cut-limit",
        type=int,
        help="every single cut point is tried on bodies up to this many bytes (default: [tool.stream-harness] single_cut_limit, else 256; raise it to hunt, 0 for none)",
    )
    p.add_argument("--seed", type=int, help="seed of the random splits (default 0)")
    p.add_argument(
        "--check", action="append", dest="checks", help="only these check ids (repeatable)"
    )
    p.add_argument(
        "--expectations",
        help=f"folder of <adapter>.yaml known-failure files (default: {expectations_default()})",
    )
    p.add_argument(
        "--run-timeout", type=float, metavar="SECONDS",
        help="seconds one run of an in-process (Python) adapter may take before it is recorded as timeout (a failure) and abandoned (default: [tool.stream-harness] run_timeout, else 30, as a stdio adapter's reply)",
    )  # fmt: skip
    p.add_argument(
        "--skip-unusable",
        action="store_true",
        help="skip cassettes that do not load or hold nothing to check, each listed with its reason, instead of failing (other projects' recordings; skipping all is still an error)",
    )
    p.add_argument(
        "--shard", metavar="K/N",
        help="run only shard K of N: the (adapter, case) pairs whose hash falls to it, the same on every machine (`stream-harness merge` combines the shards' reports)",
    )  # fmt: skip
    p.add_argument(
        "--allow-empty-shard", action="store_true",
        help="a shard with no pair to check writes an empty report instead of failing (for drivers that merge the shards afterwards)",
    )  # fmt: skip


def expectations_default() -> str:
    """What ``--help`` says about where expectations live: the folder this project
    configures, as the run would use it, never a path inside the installed package."""
    try:
        config = load_config()
    except ConfigError:
        config = Config()
    where = shown_expectations(config)
    if config.expectations is None:
        return f"[tool.stream-harness] expectations, else {where[0]}"
    source = config.source.name if config.source is not None else "the configuration"
    return f"{where[0]}, from {source}'s [tool.stream-harness], then {', '.join(where[1:])}"


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("check", help="run the conformance suite; exit 1 on any new failure")
    add_run_options(p)
    _add_output_options(p)
    p.add_argument(
        "--interaction",
        type=int,
        help="only this interaction of each cassette (reproduce commands use it)",
    )
    p.add_argument(
        "--split",
        help="replay only this split in split-sensitive checks: whole, cuts:A,B,... (A-B: every offset from A to B) or plan:K (the K-th split of the plan --seed, --examples and --single-cut-limit draw)",
    )
    p.add_argument(
        "--truncate",
        type=int,
        help="replay only the body cut after this many bytes in the truncation check",
    )
    p.set_defaults(func=check_command)

    p = sub.add_parser("report", help="the main job: run the suite and write the report folder")
    add_run_options(p)
    _add_output_options(p)
    p.add_argument(
        "--out",
        help="report folder (default: [tool.stream-harness] out, else ./conformance_report)",
    )
    p.add_argument(
        "--fresh", action="store_true",
        help="drop the rows of adapters this run did not run (default: keep them from the report in --out when it describes the same cases, checks, seed, examples and single-cut limit)",
    )  # fmt: skip
    p.add_argument(
        "--keep", action="store_true",
        help="also keep the rows of adapters that no longer exist (no adapter of the name is built in, registered or configured; default: drop them, each named)",
    )  # fmt: skip
    p.set_defaults(func=report_command)

    p = sub.add_parser(
        "merge",
        help="combine the report folders of a sharded run (--shard K/N) into one report; given one "
        "whole report, re-triage it (known failures recomputed from the expectation files)",
    )
    p.add_argument("out", help="report folder to write (as `report --out` writes it)")
    p.add_argument(
        "inputs", nargs="+", metavar="IN",
        help="the shards' report folders (or their report.jsonl files), shards 1..N each once; "
        "or one unsharded report, re-triaged (OUT may be its own folder)",
    )  # fmt: skip
    p.add_argument(
        "--expectations",
        help="folder of <adapter>.yaml known-failure files the outcomes are recomputed from (default: [tool.stream-harness] expectations, then the bundled ones)",
    )
    p.add_argument(
        "--agent-expectations",
        help="agent shards: known failures the agent rows' outcomes are recomputed from, as `agents --expect` takes them (default: [tool.stream-harness] agent_expectations, then the bundled ones)",
    )
    p.add_argument(
        "--fresh", action="store_true",
        help="drop the rows of other adapters from the report already in OUT (default: keep them, as `report` does)",
    )  # fmt: skip
    p.add_argument(
        "--format", choices=FORMATS, default="auto", help="console output (default: auto)"
    )
    p.set_defaults(func=merge_command)


def _add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--jobs",
        type=int,
        default=0,
        help="worker processes (default: one per core; 1 runs in-process)",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="auto",
        help="console output: rich tables on a terminal, plain lines in logs, github annotations (default: auto)",
    )


def config_from_args(args: argparse.Namespace) -> Config:
    """[tool.stream-harness] with the flags given laid over it."""
    try:
        config = load_config()
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    try:
        check_numbers(
            examples=args.examples,
            single_cut_limit=args.single_cut_limit,
            run_timeout=args.run_timeout,
        )
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    named = [*(args.adapters or []), *(f"cmd:{c}" for c in args.adapter_command)]
    return config.with_overrides(
        cassettes=args.cassettes, adapters=named or None, examples=args.examples, seed=args.seed,
        single_cut_limit=args.single_cut_limit, checks=args.checks, expectations=args.expectations, out=getattr(args, "out", None),
        run_timeout=args.run_timeout,
    )  # fmt: skip


def shard_from_args(args: argparse.Namespace) -> Shard | None:
    if args.shard is None:
        if args.allow_empty_shard:
            raise CommandError("--allow-empty-shard has no effect without --shard")
        return None
    try:
        return parse_shard(args.shard)
    except ShardError as exc:
        raise CommandError(str(exc)) from None


def default_report_adapters() -> list[str]:
    """The reference and each official SDK adapter whose library is installed here."""
    found = []
    for name in DEFAULT_ADAPTERS:
        try:
            load_adapter(name)
        except AdapterLoadError as exc:
            print(f"note: {name} left out: {exc}", file=sys.stderr)
            continue
        found.append(name)
    return found


def run_suite(
    suite: Suite, jobs: int, console: Console, every: float = DEFAULT_EVERY
) -> list[AdapterRun]:
    """The suite on ``jobs`` processes, with rich progress bars on a terminal, and without
    one a progress line every ``every`` seconds (:mod:`stream_harness.reporting.progress`)."""
    jobs = jobs if jobs > 0 else (os.cpu_count() or 1)
    total = len(suite.cases) * len(suite.adapters)
    judged = [0]

    def line(elapsed: float) -> str:
        return f"progress: {judged[0]} of {total} (adapter, case) pair(s) judged, {elapsed:.0f} s"

    # Lines where the bars are off: where stderr is no terminal.
    with Heartbeat(line, 0 if is_terminal(console.file) else every), Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console, transient=True, disable=not is_terminal(console.file),
    ) as progress:  # fmt: skip
        tasks = [progress.add_task(a.spec, total=len(suite.cases)) for a in suite.adapters]

        def advance(adapter_index: int, done: int) -> None:
            judged[0] += done
            progress.advance(tasks[adapter_index], done)

        try:
            return run_adapters(
                [a.adapter for a in suite.adapters], list(suite.cases), suite.run_config,
                [a.expectations for a in suite.adapters], jobs=jobs, progress=advance,
                specs=[a.spec for a in suite.adapters],
            )  # fmt: skip
        except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the CLI prints the line
            exc.add_note(f"{judged[0]} of {total} (adapter, case) pair(s) judged")
            raise


def shown_expectations(config: Config) -> tuple[str, ...]:
    """Where this run's known failures are looked up, as the report names them."""
    project = config.source.parent if config.source is not None else None
    return expectation_folders_shown(config.expectations, project)


def _report(suite: Suite, runs: list[AdapterRun], started: datetime, config: Config) -> Report:
    return build_report(
        runs, list(suite.cases), list(suite.skipped), suite.run_config, started=started,
        finished=datetime.now(UTC),
        environment={"python": platform.python_version(), "platform": platform.platform(terse=True)},
        expectations=shown_expectations(config),
    )  # fmt: skip


def _replay_options(args: argparse.Namespace, config: Config) -> dict[str, Any]:
    """--split / --truncate pin one case and one check: what a reproduce command passes."""
    if args.split is None and args.truncate is None:
        return {"interaction": args.interaction}
    if (
        len(config.cassettes) != 1
        or not config.cassettes[0].is_file()
        or args.interaction is None
        or len(config.checks) != 1
    ):
        raise CommandError(
            "--split and --truncate replay one case: give one --cassettes FILE, --interaction N and one --check"
        )
    only_cuts: tuple[int, ...] | None = None
    if args.split is not None and args.split.startswith("plan:"):
        index = args.split[len("plan:") :]
        if not index.isdigit():
            raise CommandError(
                f"bad --split {args.split!r}: plan:K takes the split's place in the plan, a whole number"
            )
        return {
            "interaction": args.interaction,
            "only_plan": int(index),
            "only_truncate": args.truncate,
        }
    if args.split is not None:
        if args.split != "whole" and not args.split.startswith("cuts:"):
            raise CommandError(
                f"bad --split {args.split!r}: a replay takes whole, cuts:A,B,... or plan:K"
            )
        only_cuts = ()
        if args.split.startswith("cuts:"):
            try:
                body = (
                    load_cassette(config.cassettes[0]).interactions[args.interaction].response.body
                )
            except (CassetteError, IndexError) as exc:
                raise CommandError(f"{config.cassettes[0]}: {exc}") from None
            try:
                only_cuts = tuple(parse_cuts(args.split[len("cuts:") :], len(body)))
            except SplitSpecError as exc:
                raise CommandError(str(exc)) from None
    if args.truncate is not None and args.truncate < 1:
        raise CommandError(f"--truncate must be >= 1, got {args.truncate}")
    return {"interaction": args.interaction, "only_cuts": only_cuts, "only_truncate": args.truncate}


def _run(
    args: argparse.Namespace, prepared: Callable[[Config], Suite]
) -> tuple[Config, Report] | int:
    """The configuration and report of the suite ``prepared`` makes, or, when the arguments
    cannot make one, exit status 2 with the reason said: ``check`` and ``report`` differ
    only in the suite they run and what they do with the report."""
    try:
        every = progress_every()
        config = config_from_args(args)
        suite = prepared(config)
    except (CommandError, SuiteError, ValueError) as exc:
        print(f"stream-harness: {exc}", file=sys.stderr)
        return 2
    for line in skipped_lines(suite.skipped):
        print(line, file=sys.stderr)
    started = datetime.now(UTC)
    runs = run_suite(suite, args.jobs, Console(stderr=True), every)
    return config, _report(suite, runs, started, config)


def check_command(args: argparse.Namespace) -> int:
    form = choose_format(args.format)
    done = _run(
        args,
        lambda config: prepare(
            config, skip_unusable=args.skip_unusable, shard=shard_from_args(args),
            allow_empty_shard=args.allow_empty_shard, **_replay_options(args, config),
        ),
    )  # fmt: skip
    if isinstance(done, int):
        return done
    _config, report = done
    render(report, form)
    return 1 if report.did_fail else 0


def _report_suite(args: argparse.Namespace, config: Config) -> Suite:
    shard = shard_from_args(args)
    clash = replaces_whole_report(config.out) if shard is not None else None
    if clash:
        raise CommandError(clash)
    defaults = default_report_adapters() if not config.adapters else []
    return prepare(
        config, default_adapters=defaults, skip_unusable=args.skip_unusable, shard=shard,
        allow_empty_shard=args.allow_empty_shard,
    )  # fmt: skip


def adapter_exists(config: Config) -> Callable[[str], bool]:
    """Whether an adapter of an earlier report can still be run: a name stream-harness
    knows (built-in, third-party, entry point, gateway row) or the name of an adapter the
    project's table configures (loaded once, only when a name is not known otherwise)."""
    configured: set[str] | None = None

    def exists(name: str) -> bool:
        nonlocal configured
        if is_known_name(name):
            return True
        if configured is None:
            configured = set()
            project = config.source.parent if config.source is not None else None
            try:  # the table's adapters: config.adapters are this run's when --adapter is given
                table = load_config().adapters
            except ConfigError:
                table = ()
            for spec in table:
                try:
                    configured.add(load_adapter(spec, project=project).name)
                except AdapterLoadError:
                    continue
        return name in configured

    return exists


def report_command(args: argparse.Namespace) -> int:
    form = choose_format(args.format)
    done = _run(args, lambda config: _report_suite(args, config))
    if isinstance(done, int):
        return done
    config, report = done
    seconds = (report.finished - report.started).total_seconds()  # this run's, before kept rows
    out = config.out
    # A shard's folder holds exactly its part of the run: rows kept from an earlier report
    # would be merged as this shard's (`merge` keeps them instead, as one run would).
    if not args.fresh and report.shard is None:
        exists = adapter_exists(config)
        report, notes = keep_previous(
            report, out, lambda name: expectations_for_adapter(name, config.expectations),
            exists=exists, keep_missing=args.keep,
        )  # fmt: skip
        for note in notes:
            print(note, file=sys.stderr)
    return _publish(report, out, form, f"{seconds:.0f} s")


def _publish(report: Report, out: Path, form: Format, how: str) -> int:
    """Write the report's files, show it, say where: the exit status of `report` and
    `merge` (2 when the folder cannot be written, else the verdict's)."""
    try:
        written = write_report(report, out)
    except OSError as exc:
        print(
            f"stream-harness: {out}: cannot write the report: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return 2
    render(report, form)
    print(f"wrote {', '.join(str(p) for p in written)} ({how})")
    return 1 if report.did_fail else 0


def _shard_report_path(given: str) -> Path:
    path = Path(given)
    if path.is_dir():
        return path / "report.jsonl"
    if path.is_file():
        return path
    raise CommandError(f"{given}: no such shard report folder or report.jsonl")


def _reclassify_agent_rows(report: Report, given: str | None, config: Config) -> Report:
    """The agent rows' known failures from the agent expectation files as they are here."""
    if not report.agent_results:
        return report
    user = Path(given) if given else config.agent_expectations
    agents = list(dict.fromkeys(row.agent for row in report.agent_results))
    scenarios = {row.scenario for row in report.agent_results}
    try:
        expectations, warnings = expectations_for_agents(agents, user, scenarios)
    except ExpectationError as exc:
        raise CommandError(f"--agent-expectations: {exc}" if given else str(exc)) from None
    for warning in warnings:
        print(f"stream-harness: warning: {warning}", file=sys.stderr)
    return reclassify_agents(report, expectations)


def merge_command(args: argparse.Namespace) -> int:
    """Shards 1..N of one run in, the report a single run writes out; exit as `report` does."""
    form = choose_format(args.format)
    out = Path(args.out)
    try:
        paths = [_shard_report_path(given) for given in args.inputs]
        named = [(str(path), load_report(path)) for path in paths]
        # One whole (unsharded) report: re-triaged as it stands, in place if OUT is its
        # folder (expectation files edited after a 40-minute matrix run need no rerun).
        whole = len(named) == 1 and named[0][1].shard is None
        for path in [] if whole else paths:
            if path.parent.resolve() == out.resolve():
                raise CommandError(
                    f"{args.out}: is shard input {path}: write the merged report to another folder"
                )
        merged = named[0][1] if whole else merge_shards(named)
        config = load_config().with_overrides(expectations=args.expectations)
        if config.expectations is not None and not config.expectations.is_dir():
            raise CommandError(f"{config.expectations}: no such expectations folder")
        # Outcomes follow the expectation files as they are here, as for rows `report`
        # keeps: the shards' results are their failures, the triage is the merge's.
        report = reclassify(
            merged, lambda name: expectations_for_adapter(name, config.expectations)
        ).model_copy(update={"expectations": shown_expectations(config)})
        report = _reclassify_agent_rows(report, args.agent_expectations, config)
    except (CommandError, ReportError, ConfigError, ExpectationsError, ExpectationError) as exc:
        print(f"stream-harness: {exc}", file=sys.stderr)
        return 2
    if not report.results and not report.agent_results:  # agent shards hold agent rows only
        print(
            f"stream-harness: nothing was checked: the {len(paths)} shard(s) hold no results",
            file=sys.stderr,
        )
        return 2
    if not args.fresh and not whole:
        report, notes = keep_previous(
            report, out, lambda name: expectations_for_adapter(name, config.expectations),
            exists=adapter_exists(config),
        )  # fmt: skip
        for note in notes:
            print(note, file=sys.stderr)
    done = f"re-triaged {paths[0]}" if whole else f"merged {len(paths)} shards"
    return _publish(report, out, form, done)
