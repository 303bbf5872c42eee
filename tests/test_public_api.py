"""The public names of ``stream_harness``: each is what it says, whatever was imported first.

A public name that is also a submodule's name is shadowed by the module as soon as
something imports that submodule (``from harness import detect_protocol, normalize`` once
gave the module ``normalize``). Each order is tried in a fresh interpreter, because the
first import is the one that loads the submodules.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

import stream_harness

NAMES = [name for name in stream_harness.__all__ if name != "__version__"]

PROBE = """
import json, sys, types
names = json.loads(sys.argv[1])
kinds = {}
for name in names:
    exec(f"from stream_harness import {name} as value")
    kinds[name] = "module" if isinstance(value, types.ModuleType) else type(value).__name__
print(json.dumps(kinds))
"""


def test_no_public_name_is_a_submodule_name() -> None:
    submodules = {
        name
        for name in dir(stream_harness)
        if isinstance(getattr(stream_harness, name, None), types.ModuleType)
    }
    import pkgutil

    children = {info.name for info in pkgutil.iter_modules(stream_harness.__path__)}
    assert not set(NAMES) & (children | submodules)


@pytest.mark.parametrize("first", NAMES)
def test_every_name_survives_any_first_import(first: str) -> None:
    """``first`` imported alone, then every name, then every name again in reverse."""
    order = [first, *NAMES, *reversed(NAMES)]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(order)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    kinds = json.loads(done.stdout)
    assert "module" not in kinds.values(), kinds
    assert set(kinds) == set(NAMES)


def test_the_names_are_the_documented_objects() -> None:
    from stream_harness.adapters.protocol import Adapter, AdapterResult, ReferenceAdapter
    from stream_harness.contract.events import AssistantMessage
    from stream_harness.providers.reference import normalize

    assert stream_harness.normalize is normalize
    assert stream_harness.Adapter is Adapter and stream_harness.AdapterResult is AdapterResult
    assert stream_harness.ReferenceAdapter is ReferenceAdapter
    assert stream_harness.AssistantMessage is AssistantMessage
    assert callable(stream_harness.run_conformance) and callable(stream_harness.load_adapter)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = stream_harness.nope  # type: ignore[attr-defined]


def test_importing_the_package_imports_nothing_else() -> None:
    """The pytest plugin imports the package in every test run of every user's project."""
    code = (
        "import sys, stream_harness.pytest_plugin; "
        "print(sorted(m for m in sys.modules if m.startswith('stream_harness')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.replace("'", '"')) == [
        "stream_harness",
        "stream_harness.pytest_plugin",
    ]


def test_the_plugins_parts_import_nothing_else() -> None:
    """pytest also loads every module the plugin's entry module names (``pytest_plugins``)."""
    code = (
        "import importlib, sys, stream_harness.pytest_plugin as entry; "
        "[importlib.import_module(name) for name in entry.pytest_plugins]; "
        "print(sorted(m for m in sys.modules if m.startswith('stream_harness')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    parts = ["agent_items", "markers", "options", "stream_items"]
    assert json.loads(done.stdout.replace("'", '"')) == [
        "stream_harness",
        "stream_harness.pytest_plugin",
        *(f"stream_harness.pytest_plugin.{part}" for part in parts),
    ]
