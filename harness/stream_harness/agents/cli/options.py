"""What ``stream-harness agents`` shares with ``check`` about where a user's code is found.

``check`` imports a ``module:object`` adapter from the folder of the pyproject.toml that
configures the run (else the working directory) and the pytest plugin from its root
directory; ``agents`` does the same, so a reproduce command printed in a subfolder of the
project runs there too. A ``--project`` given on the command line is a choice the
printed command must repeat, or it would import from somewhere else.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Sequence
from pathlib import Path

from stream_harness.agents.conformance.runner import AgentResult


def import_root(given: str | None, config_source: Path | None) -> Path:
    """The folder a ``module:object`` agent is imported from."""
    if given is not None:
        return Path(given)
    return config_source.parent if config_source is not None else Path.cwd()


def with_project(results: Sequence[AgentResult], given: str | None) -> list[AgentResult]:
    """Each result's reproduce command, with ``--project`` as it was given (if it was)."""
    if given is None:
        return list(results)
    suffix = " " + shlex.join(["--project", given])
    return [dataclasses.replace(r, command=r.command + suffix) for r in results]
