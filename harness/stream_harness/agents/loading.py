"""Finding an agent adapter: a registered name, ``module:object`` relative to the project,
or ``cmd:COMMAND`` (a process speaking the stdio protocol's agent messages); a registered
name may carry a declared configuration, ``agno[retries=1]``
(:mod:`stream_harness.agents.configuration`).

The same rules as the stream adapters (:mod:`stream_harness.adapters.loading`): the object
is an adapter instance, a class or a zero-argument factory; the project folder is on the
import path for the import, so a user's ``mypkg:MyAgent`` is found from their own
directory; every problem is one line (:class:`AgentLoadError`), never a traceback.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from stream_harness.adapters.loading import _one_line, _project_on_path
from stream_harness.agents.configuration import (
    ConfigurationError,
    OptionValue,
    check,
    configure,
    split_row,
)
from stream_harness.agents.conventions import conventions_problem
from stream_harness.agents.frameworks.support import missing_framework
from stream_harness.agents.protocol import AgentAdapter
from stream_harness.agents.registry import AGENTS
from stream_harness.agents.stdio import COMMAND_PREFIX, StdioAgent, StdioAgentError
from stream_harness.contract.names import known_names


class AgentLoadError(ValueError):
    """An agent spec that names nothing usable; ``str()`` is one line."""


def load_agent(spec: str, project: Path | None = None) -> AgentAdapter:
    base, configuration = (spec, None) if spec.startswith(COMMAND_PREFIX) else split_row(spec)
    options: dict[str, OptionValue] | None = None
    if configuration is not None:
        if base not in AGENTS:
            raise AgentLoadError(
                f"agent {spec!r}: {base!r} is not a known name ({known_names(base, sorted(AGENTS))})"
            )
        try:
            options = check(base, configuration)
        except ConfigurationError as exc:
            raise AgentLoadError(str(exc)) from None
    target = AGENTS.get(base, spec)
    if target.startswith(COMMAND_PREFIX):
        try:
            return StdioAgent(target.removeprefix(COMMAND_PREFIX))
        except StdioAgentError as exc:
            raise AgentLoadError(f"agent {spec!r}: {exc}") from None
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise AgentLoadError(
            f"agent {spec!r}: not a known name ({known_names(spec, sorted(AGENTS))}) "
            "nor module:object nor cmd:COMMAND"
        )
    try:
        with _project_on_path(project):
            module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AgentLoadError(f"agent {spec!r}: cannot import {module_name}: {exc}") from None
    except Exception as exc:  # the user's module raised at import
        raise AgentLoadError(
            f"agent {spec!r}: importing {module_name} raised {_one_line(exc)}"
        ) from None
    obj: object = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise AgentLoadError(f"agent {spec!r}: {module_name} has no {attr}")
        obj = getattr(obj, part)
    try:
        if options is not None:  # a bundled row's factory, given the configuration's options
            candidate = obj(options=options) if callable(obj) else None
        else:
            candidate = (
                obj()
                if isinstance(obj, type) or (callable(obj) and not isinstance(obj, AgentAdapter))
                else obj
            )
    except ImportError as exc:
        raise AgentLoadError(f"agent {spec!r} cannot start: {exc}") from None
    except Exception as exc:
        raise AgentLoadError(f"agent {spec!r}: constructing it raised {_one_line(exc)}") from None
    if not isinstance(candidate, AgentAdapter):
        raise AgentLoadError(
            f"agent {spec!r} is not an AgentAdapter (needs name, protocols, conventions, "
            "settings, version(), run_agent())"
        )
    missing = missing_framework(candidate.name)  # the base row's name: its framework
    if missing is not None:
        raise AgentLoadError(str(missing))
    if configuration is not None:
        configure(candidate, base, configuration)
    problem = conventions_problem(candidate.conventions)
    if problem is not None:
        raise AgentLoadError(f"agent {spec!r}: {problem}")
    return candidate
