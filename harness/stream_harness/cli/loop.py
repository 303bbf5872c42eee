"""``stream-harness loop``: run one scenario and print its agent events, or check a folder.

``stream-harness loop SCENARIO`` prints one JSON line per agent event (exit 0; 1 when the run
breaks an invariant). ``stream-harness loop --check DIR`` runs every scenario under DIR and
compares it with its ``expect`` (exit 0 when all pass, 1 when one fails, 2 when one cannot be
loaded or run, or when DIR holds no scenario: a check of nothing is not green). Bad input (a
missing, unreadable, non-UTF-8 or invalid file, an empty folder) is one line naming the file
and the problem, exit 2, never a traceback; the summary line states the verdict the exit
status gives.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from stream_harness.contract.facts import bundled_scenarios
from stream_harness.loop.events import agent_event_to_json
from stream_harness.loop.scenario import (
    ScenarioError,
    check_scenario,
    find_scenarios,
    load_scenario,
    run_scenario,
)


def add_loop_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``loop`` on the ``stream-harness`` subparsers (argparse's _SubParsersAction)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "loop",
        help="run an agent-loop scenario on virtual time and print its agent events as JSON lines",
        description="Run an agent-loop scenario (specs/scenarios.md) on virtual time.",
    )
    p.add_argument(
        "scenario", nargs="?", help="a scenario YAML file, or the name of a bundled scenario"
    )
    p.add_argument(
        "--check",
        metavar="DIR",
        nargs="?",
        const="",
        help="run every scenario under DIR (default: the bundled scenarios) and compare with its expect block",
    )
    p.set_defaults(func=loop_command)
    return p


def loop_command(args: argparse.Namespace) -> int:
    if args.check is not None:
        if args.scenario:
            return _usage("give a SCENARIO or --check DIR, not both")
        return _check(Path(args.check) if args.check else bundled_scenarios())
    if not args.scenario:
        return _usage("give a SCENARIO file or --check DIR")
    try:
        scenario = load_scenario(_scenario_path(args.scenario))
    except ScenarioError as exc:
        return _usage(str(exc))
    try:
        run = run_scenario(scenario)
    except Exception as exc:  # a loaded scenario always runs; if not, say so in one line
        return _usage(f"{scenario.path}: the run failed: {type(exc).__name__}: {exc}")
    out = sys.stdout
    for event in run.events:
        out.write(agent_event_to_json(event) + "\n")
    for violation in run.violations:
        print(f"stream-harness: {scenario.path}: invariant {violation}", file=sys.stderr)
    return 1 if run.violations else 0


def _check(directory: Path) -> int:
    if not directory.is_dir():
        return _usage(f"{directory}: not a directory")
    files = find_scenarios(directory)
    if not files:
        return _usage(f"{directory}: no scenario files (*.yaml)")
    failed = broken = 0
    for file in files:
        try:
            scenario = load_scenario(file)
        except ScenarioError as exc:
            broken += 1
            print(f"ERROR {exc}")
            continue
        try:
            problems = check_scenario(run_scenario(scenario))
        except Exception as exc:
            broken += 1
            print(f"ERROR {file}: the run failed: {type(exc).__name__}: {exc}")
            continue
        if problems:
            failed += 1
            print(f"FAIL  {scenario.name} ({file})")
            for problem in problems:
                print(f"      {problem}")
        else:
            print(f"ok    {scenario.name}")
    passed = len(files) - failed - broken
    code = 2 if broken else 1 if failed else 0
    verdict = ("OK", "FAILED", "ERROR")[code]
    print(
        f"{verdict}: {passed} passed, {failed} failed, {broken} not loadable or not runnable "
        f"({len(files)} scenarios)"
    )
    return code


def _scenario_path(given: str) -> Path:
    """A file as given; a bare name that is no file here names a bundled scenario."""
    path = Path(given)
    if path.exists() or "/" in given:
        return path
    bundled = bundled_scenarios() / (given if given.endswith(".yaml") else f"{given}.yaml")
    return bundled if bundled.is_file() else path


def _usage(message: str) -> int:
    print(f"stream-harness: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (``python -m stream_harness.cli.loop``) until the lead wires ``loop`` into
    stream_harness.cli.main."""
    parser = argparse.ArgumentParser(prog="stream-harness")
    sub = parser.add_subparsers(dest="command")
    add_loop_parser(sub)
    args = parser.parse_args(["loop", *(sys.argv[1:] if argv is None else argv)])
    try:
        code: int = args.func(args)
    except BrokenPipeError:  # `... loop s.yaml | head`
        return 0
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
