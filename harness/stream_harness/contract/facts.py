"""Everything stream-harness reads at run time, found one way: as package data.

The repository keeps the design card's top-level folders (``specs/``, ``cassettes/``); the
build maps them into the wheel as the packages ``stream_harness._bundled.specs`` and
``stream_harness._bundled.cassettes`` (``setup.py``), and an editable install maps the same names
onto the checkout's folders. So ``importlib.resources`` finds them in a checkout, an
editable install and an installed wheel alike, and no code walks up from ``__file__``.

``STREAM_HARNESS_SPECS`` replaces the fact tables folder (a test pointing at a scratch
copy, a user trying an edited table); nothing else is configurable here, because the
bundled data is read-only: user files live in the user's project (``stream_harness.conformance.config``).
Loaded tables are cached for the life of the process and must be treated as immutable.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.resources
import json
import os
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ENV_VAR = "STREAM_HARNESS_SPECS"
DISTRIBUTION = "stream-harness"
SPECS_PACKAGE = "stream_harness._bundled.specs"
CASSETTES_PACKAGE = "stream_harness._bundled.cassettes"
JS_PACKAGE = "stream_harness._bundled.adapters_js"
# libyaml's loader when PyYAML was built with it: the same safe subset, about 10x faster on
# the larger tables (the pure-Python loader takes seconds on them).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# The same loader for the other readers of YAML data files (the expectation files).
YAML_LOADER = _LOADER


class ResourceError(RuntimeError):
    """The installation is incomplete: bundled data is missing. Not the user's input."""


def _package_dir(package: str) -> Path:
    try:
        root = importlib.resources.files(package)
    except ModuleNotFoundError:
        raise ResourceError(
            f"stream-harness is installed without its data ({package} is missing); "
            "reinstall it from a wheel or with `pip install -e .` from a checkout"
        ) from None
    # Installed as files (wheel or editable), the traversable is a real path; the harness
    # hands paths to users (reproduce commands), so a zipped install is not supported.
    if not isinstance(root, Path):
        raise ResourceError(
            f"stream-harness data in {root} is not on the file system (zipped install?)"
        )
    return root


def specs_dir() -> Path:
    """The fact tables, schemas, expected events, expectations and matrix pins."""
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    return _package_dir(SPECS_PACKAGE)


def bundled_cassettes() -> Path:
    """The cassettes that ship with stream-harness (the reference suite)."""
    return _package_dir(CASSETTES_PACKAGE)


def bundled_scenarios() -> Path:
    """The agent-loop scenarios that ship with stream-harness."""
    return bundled_cassettes() / "scenarios"


def bundled_js() -> Path:
    """The JS/TS adapters' sources, package.json and lock file (``adapters-js/``); their
    node_modules are installed by ``npm ci`` into a matrix environment, or in a checkout."""
    return _package_dir(JS_PACKAGE)


def agent_expectations_dir() -> Path:
    """``specs/agent-expectations/``: the bundled known failures of the agent rows, one
    ``<agent>.yaml`` each. The folder may hold no file (no known failure) or be absent."""
    return specs_dir() / "agent-expectations"


def spec_path(name: str) -> Path:
    """``specs/<name>``; callers that read a file we ship use this, never a path of their own."""
    return specs_dir() / name


@functools.cache
def load_yaml(name: str) -> Any:
    """Parse ``specs/<name>`` (``.yaml`` is added when ``name`` has no suffix).

    Safe loading only: the tables are data, never objects. Errors (missing file, bad YAML)
    propagate, because a broken table is a bug in the package, not in the user's input.
    """
    path = spec_path(name)
    if not path.suffix:
        path = path.with_suffix(".yaml")
    with path.open(encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_LOADER)


@dataclass(frozen=True, slots=True)
class Origin:
    """Where the running stream-harness was installed from (PEP 610 ``direct_url.json``)."""

    editable: bool
    path: Path | None  # a local source folder or wheel file; None for an index install
    version: str


@functools.cache
def origin() -> Origin:
    # Every copy of the metadata on sys.path: a build's egg-info in the working directory
    # can shadow the installed one, and only the installed one says where it came from.
    # The version is the distribution's (pyproject reads it from stream_harness.__version__),
    # so this module needs nothing from the package root above it.
    dists = list(importlib.metadata.distributions(name=DISTRIBUTION))
    __version__ = dists[0].version if dists else "0+unknown"
    raw = next((text for dist in dists if (text := dist.read_text("direct_url.json"))), None)
    if not raw:
        return Origin(editable=False, path=None, version=__version__)
    data = json.loads(raw)
    url = str(data.get("url", ""))
    path = (
        Path(urllib.parse.unquote(urllib.parse.urlparse(url).path))
        if url.startswith("file:")
        else None
    )
    editable = bool(data.get("dir_info", {}).get("editable", False))
    return Origin(editable=editable, path=path, version=__version__)


def version() -> str:
    """stream-harness's version, as installed (the same as ``stream_harness.__version__``)."""
    return origin().version


def bundle_is_writable() -> bool:
    """True in a source checkout (an editable install), where the bundled folders are the
    repository's own; an installed package is never written to."""
    return origin().editable
