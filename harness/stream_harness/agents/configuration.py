"""Rows at the configurations users set: ``agno[retries=1]`` is the ``agno`` row with
``Agent(retries=1)``, its own row everywhere a row name goes.

A framework's defaults are not what its users run: the retry layers they switch on (an
agent-level retry that restarts a run, a model-level retry inside a stream) are where tools
run twice and text is shown twice, so each such setting is a row of its own. The
configurations a row may take are declared once, as sourced data, under the row's entry in
``specs/agent_conventions.yaml`` (``configurations``: the settings line shown beside the
row and the conventions the setting implies); the name inside the brackets is the
setting itself, ``key=value`` pairs joined by ``,``, which the adapter applies (its
``OPTIONS`` says which keys it knows). A name that is not declared is refused in one line
listing the declared ones: an undeclared setting would run with conventions nobody checked.
``specs/matrix.toml`` lists the configured rows each agent group runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stream_harness.agents.frameworks.support import CONVENTIONS, conventions_for
from stream_harness.agents.registry import AGENTS
from stream_harness.contract import facts

OptionValue = int | float | bool | str


class ConfigurationError(ValueError):
    """A row name whose configuration is not declared, or malformed; ``str()`` is one line."""


def split_row(name: str) -> tuple[str, str | None]:
    """``agno[retries=1]`` -> ``("agno", "retries=1")``; a plain name has no configuration.

    A gateway row (``litellm-proxy[a->b]``) is a stream adapter, never an agent row, so the
    bracket here always holds a configuration.
    """
    base, bracket, rest = name.partition("[")
    if not bracket or not rest.endswith("]") or not base:
        return name, None
    return base, rest[:-1]


def row_name(base: str, configuration: str | None) -> str:
    return base if configuration is None else f"{base}[{configuration}]"


def declared(base: str) -> dict[str, Mapping[str, Any]]:
    """The configurations ``specs/agent_conventions.yaml`` declares for row ``base``."""
    entry = facts.load_yaml(CONVENTIONS)["frameworks"].get(base) or {}
    return dict(entry.get("configurations") or {})


def options_of(configuration: str) -> dict[str, OptionValue]:
    """``retries=1,delay=0.5`` -> ``{"retries": 1, "delay": 0.5}``: what the adapter applies."""
    out: dict[str, OptionValue] = {}
    for part in configuration.split(","):
        key, eq, raw = part.partition("=")
        key, raw = key.strip(), raw.strip()
        if not eq or not key or not raw:
            raise ConfigurationError(f"configuration {configuration!r}: {part!r} is not key=value")
        out[key] = _value(raw)
    return out


def _value(raw: str) -> OptionValue:
    if raw in ("true", "false"):
        return raw == "true"
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            continue
    return raw


def check(base: str, configuration: str) -> dict[str, OptionValue]:
    """The options of a declared configuration of ``base``, or one line saying what is wrong.

    Which options exist is the adapter's to say (its constructor refuses one it cannot
    apply); here only whether the row declares this configuration at all.
    """
    configurations = declared(base)
    if configuration not in configurations:
        known = ", ".join(row_name(base, c) for c in sorted(configurations)) or "none"
        raise ConfigurationError(
            f"agent {row_name(base, configuration)!r}: unknown configuration {configuration!r} "
            f"of {base!r} (known: {known})"
        )
    return options_of(configuration)


def describe(base: str, configuration: str) -> str:
    """The declared settings line of a configuration, shown beside the row."""
    return str(declared(base)[configuration]["settings"])


def configure(adapter: Any, base: str, configuration: str) -> None:
    """Name the loaded adapter for its row and give it the configuration's conventions.

    ``adapter`` was built with the configuration's options; what the row then says of
    itself (its name in reports, reproduce commands and expectation files, the policies
    the checks read, the settings shown beside it) comes from the declaration.
    """
    adapter.name = row_name(base, configuration)
    adapter.conventions = conventions_for(base, configuration)
    shown = describe(base, configuration)
    shown = f"configuration {configuration}: {shown}"
    adapter.settings = f"{adapter.settings}; {shown}" if adapter.settings else shown


def is_known_row(name: str) -> bool:
    """Whether ``name`` is a bundled agent row: a registered name, or one at a configuration
    its entry declares (what an expectations file or a report row may name)."""
    base, configuration = split_row(name)
    if base not in AGENTS:
        return False
    return configuration is None or configuration in declared(base)
