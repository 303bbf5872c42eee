"""The ``stream-harness`` command.

Every user error (a bad flag, an unreadable or malformed cassette, an unknown protocol)
ends in one line on stderr naming the file and the problem and exit status 2; never a
traceback.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from stream_harness.contract import facts


class UsageError(Exception):
    """A problem with what the user asked for; printed as one line."""


def _cmd_normalize(args: argparse.Namespace) -> int:
    from stream_harness.contract.events import event_to_json
    from stream_harness.providers.reference import normalize
    from stream_harness.recordings.chunking import SplitSpecError, apply_split
    from stream_harness.recordings.inputs import InputError, read_body

    try:
        body = read_body(Path(args.file), protocol=args.protocol, interaction=args.interaction)
        chunks = apply_split(args.split, body.data)
    except (InputError, SplitSpecError) as exc:
        raise UsageError(str(exc)) from None
    out = sys.stdout
    if args.adapter and args.adapter != "reference":
        return _run_adapter(
            args.adapter, body.protocol, chunks, body.status, body.headers, args.run_timeout
        )
    warnings: list[str] = []
    for event in normalize(
        body.protocol, chunks, status=body.status, headers=body.headers, warnings=warnings
    ):
        out.write(event_to_json(event) + "\n")
    for warning in warnings:
        print(f"warning: {body.source}: {warning}", file=sys.stderr)
    return 0


def _run_adapter(
    name: str,
    protocol: str,
    chunks: list[bytes],
    status: int,
    headers: dict[str, list[str]],
    run_timeout: float | None,
) -> int:
    """Replay through an adapter under test: its events, or its final message as one line.
    Bounded by the run timeout as `check` bounds it: a hang is one line and exit 1, not a
    terminal that waits for ever."""
    import json

    from stream_harness.adapters.loading import load_adapter
    from stream_harness.adapters.processes.deadline import RunTimedOut, run_within
    from stream_harness.adapters.protocol import AdapterLoadError
    from stream_harness.conformance.config import ConfigError, check_numbers, load_config
    from stream_harness.contract.events import event_to_json

    try:
        check_numbers(examples=None, single_cut_limit=None, run_timeout=run_timeout)
        config = load_config().with_overrides(run_timeout=run_timeout)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    try:
        # A module:object of the project is imported from its folder, as `check` imports it.
        adapter = load_adapter(
            name, project=config.source.parent if config.source is not None else None
        )
    except AdapterLoadError as exc:
        raise UsageError(str(exc)) from None
    if protocol not in adapter.protocols:
        raise UsageError(
            f"adapter {name!r} does not handle {protocol} (it handles {', '.join(sorted(adapter.protocols))})"
        )
    try:
        result = run_within(
            adapter, config.run_timeout, protocol, chunks, status=status, headers=headers
        )
    except RunTimedOut as exc:
        print(f"stream-harness: {exc}", file=sys.stderr)
        return 1
    if result.events is not None:
        for event in result.events:
            sys.stdout.write(event_to_json(event) + "\n")
    else:
        line = {
            "adapter": name,
            "terminal": result.terminal,
            "message": result.message.model_dump() if result.message else None,
            "raised": result.raised,
            "crashed": result.crashed,
        }
        sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
    return 1 if result.crashed else 0


def _cmd_summary(args: argparse.Namespace) -> int:
    from stream_harness.contract.facts import bundled_cassettes
    from stream_harness.reporting.summary import run_summary

    return run_summary(Path(args.cassettes) if args.cassettes else bundled_cassettes(), args.format)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stream-harness",
        description="Replay recorded LLM provider streams through stream adapters and check them against the unified contract.",
    )
    parser.add_argument("--version", action="version", version=f"stream-harness {facts.version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_normalize_parser(sub)
    _add_summary_parser(sub)
    _add_other_parsers(sub)
    return parser


def _add_normalize_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "normalize", help="print the unified events of a cassette or raw body, one JSON line each"
    )
    p.add_argument("file", help="a vcrpy cassette (.yaml) or a raw response body")
    from stream_harness.providers.registry import choices_metavar

    p.add_argument(
        "--protocol",
        metavar=choices_metavar(),
        help="wire protocol id (default: detected from the URL and body)",
    )
    p.add_argument(
        "--interaction",
        type=int,
        help="interaction index in the cassette (default: the first streaming one)",
    )
    p.add_argument(
        "--split",
        default="whole",
        help="feed the body in chunks: whole, bytes:N, random:SEED, cuts:A,B,...",
    )
    p.add_argument(
        "--adapter",
        help="replay through this adapter instead of the reference (as conformance failures name it)",
    )
    p.add_argument(
        "--run-timeout", type=float, metavar="SECONDS",
        help="with --adapter: seconds its run may take (default: [tool.stream-harness] run_timeout, else 30)",
    )  # fmt: skip
    p.set_defaults(func=_cmd_normalize)


def _add_summary_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "summary",
        help="one line per cassette interaction: what the reference normalizer makes of it",
    )
    p.add_argument(
        "--cassettes", default=None, help="cassette directory (default: the bundled cassettes)"
    )
    p.add_argument(
        "--format",
        choices=("auto", "rich", "plain"),
        default="auto",
        help="a table on a terminal, plain lines (never cut or wrapped) in logs (default: auto)",
    )
    p.set_defaults(func=_cmd_summary)


def _add_other_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The other subcommands, each from its own module, in the order `--help` lists them."""
    from stream_harness.agents.cli.command import add_agents_parser
    from stream_harness.cli.conformance import add_parsers as add_conformance
    from stream_harness.cli.loop import add_loop_parser
    from stream_harness.matrix.groups import add_matrix_parser
    from stream_harness.server.serve import add_serve_parser
    from stream_harness.workflow.bless import add_bless_parser
    from stream_harness.workflow.importing import add_import_parser
    from stream_harness.workflow.init import add_init_parser
    from stream_harness.workflow.lint import add_lint_parser
    from stream_harness.workflow.record import add_record_parser

    add_conformance(sub)
    add_matrix_parser(sub)
    add_loop_parser(sub)
    add_agents_parser(sub)
    from stream_harness.conformance.fuzz import add_parser as add_fuzz_parser

    add_fuzz_parser(sub)
    add_serve_parser(sub)
    for add in (
        add_init_parser,
        add_record_parser,
        add_import_parser,
        add_lint_parser,
        add_bless_parser,
    ):
        add(sub)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    # SIGTERM (a CI runner cancelling the job) ends the run as Ctrl-C does: as an exception,
    # so atexit and the finalizers stop the adapter and gateway processes it started.
    previous = (
        signal.signal(signal.SIGTERM, _terminated)
        if threading.current_thread() is threading.main_thread()
        else None
    )
    try:
        code: int = args.func(args)
        return code
    except UsageError as exc:
        print(f"stream-harness: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `stream-harness normalize ... | head`
        return 0
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM as Terminated
        # The partial summary: how far the run got, when the command noted it (run_suite).
        done = "".join(f": {note}" for note in getattr(exc, "__notes__", ()))
        how = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
        print(
            f"stream-harness: interrupted ({how}){done}: the run did not finish, nothing was reported",
            file=sys.stderr,
        )
        return 143 if isinstance(exc, Terminated) else 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread. A KeyboardInterrupt, so that every path that
    ends a run cleanly on Ctrl-C (the runner ending its workers, a recording leaving
    nothing behind) does so on SIGTERM too."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
