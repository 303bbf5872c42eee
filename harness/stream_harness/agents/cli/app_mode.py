"""``stream-harness agents --app CMD [--tool SCENARIO_TOOL=YOURS]``: the user's program as a row.

Kept apart from :mod:`stream_harness.agents.cli.command` (which calls in here) so that app mode is
one module: the flags, the adapter it builds (its protocol found by one probe run unless
``--protocol`` names it), and the reproduce commands of its rows, which name ``--app``
and the ``--tool`` mapping rather than an agent spec no loader knows.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from stream_harness.agents.app import AppAdapter, client_conventions, detect_protocol
from stream_harness.agents.binding import ToolBinding, parse_tool_mapping
from stream_harness.agents.conformance.runner import AgentResult
from stream_harness.agents.scenario.model import AgentScenario

APP_SPEC_PREFIX: Final = "app:"


def add_app_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--app",
        metavar="CMD",
        help="run this program (a shell command) once per scenario and protocol, unchanged: each "
        "SDK's base-URL and key variables point at the scenario server, the prompt is in "
        "$STREAM_HARNESS_PROMPT or {prompt} (README, 'Your agent as it runs'); without "
        "--protocol, one probe run finds the protocol it speaks",
    )
    p.add_argument(
        "--tool",
        action="append",
        metavar="SCENARIO_TOOL=YOURS",
        help="with --app: bind a scenario's tool to one of your program's tools "
        "(charge_card=refund_order); repeatable; unmapped tools are bound by name, else by "
        "role (a side-effect tool, a read tool) among the tools the program offers",
    )


def app_adapter(
    args: argparse.Namespace, scenarios: Sequence[AgentScenario]
) -> tuple[str, AppAdapter]:
    """The (spec, adapter) of ``--app``; raises AppError or BindingError (one line)."""
    binding = ToolBinding(parse_tool_mapping(args.tool or ()), auto=True)
    binding.check(scenarios)
    cwd = Path(args.project or ".")  # the program runs where the user ran `agents`
    # One probe run: the protocol (unless --protocol names it) and the client, whose retry
    # policy the row then declares as a framework row on that client does.
    probe = detect_protocol(args.app, cwd=cwd, timeout=args.timeout)
    protocols = args.protocol or [probe.protocol]
    conventions = client_conventions(probe.client)
    adapter = AppAdapter(
        args.app,
        frozenset(protocols),
        binding,
        cwd=cwd,
        conventions=conventions,
        user_agent=probe.user_agent,
    )
    return APP_SPEC_PREFIX + args.app, adapter


def app_reproduce(results: list[AgentResult], args: argparse.Namespace) -> list[AgentResult]:
    """Each app row's reproduce command, naming ``--app CMD`` and every ``--tool``."""
    if not args.app:
        return results
    spec = shlex.quote(APP_SPEC_PREFIX + args.app)
    extra = shlex.join(["--app", args.app, *(x for t in args.tool or () for x in ("--tool", t))])
    return [
        dataclasses.replace(r, command=r.command.replace(f"--agent {spec}", extra))
        if r.agent == "app"
        else r
        for r in results
    ]


def spawn_app(adapters: Sequence[tuple[str, Any]], spec: str) -> AppAdapter | None:
    """A job's own copy of the app row is the row itself: it keeps no state between runs."""
    found = dict(adapters).get(spec)
    return found if isinstance(found, AppAdapter) else None
