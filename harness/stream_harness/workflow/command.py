"""What the cassette commands (record, import, bless, lint) say on the command line alike.

A problem is one ``stream-harness: ...`` line on stderr, its details indented below,
and the exit status each command's description promises (2: the arguments or input,
1: the cassette was refused, 130: interrupted); the options two commands share are
described once, so ``--help`` says the same thing in both.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from stream_harness.providers.registry import choices_metavar, registered
from stream_harness.workflow.endpoints import endpoints

EXIT_INTERRUPTED = 130


def fail(message: str, code: int, details: Sequence[str] = ()) -> int:
    """Say what went wrong on stderr and give the exit status to return."""
    print(f"stream-harness: {message}", file=sys.stderr)
    for line in details:
        print(f"  {line}", file=sys.stderr)
    return code


def add_endpoint_protocol(p: argparse.ArgumentParser) -> None:
    """``--protocol``, required: a request is sent to (or was sent to) its endpoint, or a
    WebSocket session is recorded or imported (no HTTP endpoint of its own)."""
    websocket = {p.id for p in registered() if p.framing.name == "websocket-json"}
    choices = sorted({*endpoints(), *websocket})
    p.add_argument("--protocol", required=True, choices=choices, help="wire protocol id")


def add_out(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--out",
        required=True,
        metavar="CASSETTE",
        help="where to write, e.g. cassettes/<protocol>/<name>.yaml",
    )


def add_detected_protocol(p: argparse.ArgumentParser, help: str) -> None:
    """``--protocol``, optional: left out, the cassette's folder or body tells it."""
    p.add_argument("--protocol", metavar=choices_metavar(), help=help)
