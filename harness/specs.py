"""Where the fact tables live, and one cached reader for them.

The tables in ``specs/`` are the source of truth that code and tests both read, so there is
exactly one way to find the folder: ``STREAM_HARNESS_SPECS`` when set (an installed copy,
a test that points at a scratch folder), else the ``specs/`` beside the package in a
checkout. Loaded tables are cached for the life of the process: they are read-only data,
and callers must treat the returned objects as immutable.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import yaml

ENV_VAR = "STREAM_HARNESS_SPECS"
# libyaml's loader when PyYAML was built with it: the same safe subset, about 10x faster on
# the larger tables (the pure-Python loader takes seconds on them).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def specs_dir() -> Path:
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    return Path(__file__).resolve().parent.parent / "specs"


@functools.cache
def load_yaml(name: str) -> Any:
    """Parse ``specs/<name>`` (``.yaml`` is added when ``name`` has no suffix).

    Safe loading only: the tables are data, never objects. Errors (missing file, bad YAML)
    propagate, because a broken table is a bug in the repository, not in the input.
    """
    path = specs_dir() / name
    if not path.suffix:
        path = path.with_suffix(".yaml")
    with path.open(encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_LOADER)
