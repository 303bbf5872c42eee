"""The check catalogue's shape: an engine that knows no kind of adapter, one module per
family, and the catalogue in the order reports are sorted by."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from stream_harness.conformance.checks import CHECKS, gateway, resumption, session, stream

# What the engine may import of the adapters: the interface every check runs an adapter
# through, never an adapter (a family that needs one, as the gateway and session checks
# do, imports it in its own module).
ENGINE_MAY_IMPORT = {
    "stream_harness.adapters.protocol": "the Adapter protocol and its result",
    "stream_harness.adapters.processes.deadline": "one run bounded by --run-timeout",
}


PACKAGE = "stream_harness.conformance.checks"


def _imports(path: Path) -> set[str]:
    """Every module a module of the checks package imports, at any depth (functions and
    TYPE_CHECKING included), relative imports resolved."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level <= 1, f"{path}:{node.lineno}: an import from above the checks package"
            base = ".".join(filter(None, [PACKAGE if node.level else "", node.module or ""]))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def test_the_engine_imports_no_adapter() -> None:
    spec = importlib.util.find_spec(f"{PACKAGE}.engine")
    assert spec is not None and spec.origin is not None
    imported = _imports(Path(spec.origin))
    adapters = {
        m
        for m in imported
        if m == "stream_harness.adapters" or m.startswith("stream_harness.adapters.")
    }
    assert adapters, "the graph was not read: the engine runs adapters through their protocol"
    wrong = sorted(
        m
        for m in adapters
        if not any(m == ok or m.startswith(f"{ok}.") for ok in ENGINE_MAY_IMPORT)
    )
    assert not wrong, f"the check engine imports adapters: {wrong}"


@pytest.mark.parametrize(
    "family", [stream, session, resumption, gateway], ids=lambda m: m.__name__.rpartition(".")[2]
)
def test_a_family_builds_on_the_engine_alone(family: ModuleType) -> None:
    """Families are side by side: one never imports another, so each can be read alone."""
    assert family.__file__ is not None
    ours = {m for m in _imports(Path(family.__file__)) if m.startswith(PACKAGE)}
    engine = f"{PACKAGE}.engine"
    assert {m for m in ours if m != engine and not m.startswith(f"{engine}.")} == set()


def test_the_catalogue_is_its_families_in_report_order() -> None:
    assert [c.id for c in CHECKS] == [
        "contract",
        "split-invariance",
        "expected",
        "live-arguments",
        "stop-reason",
        "error-surfacing",
        "truncation",
        "overflow-classification",
        "message-framing",
        "session-turns",
        "session-chaining",
        "previous-response-recovery",
        "resumption",
        "proxy-streaming",
        "proxy-upstream-cut",
        "proxy-error-status",
    ]
    assert CHECKS == (*stream.CHECKS, *session.CHECKS, *resumption.CHECKS, *gateway.CHECKS)
    for family in (stream, session, resumption, gateway):
        assert all(c.run.__module__ == family.__name__ for c in family.CHECKS), family.__name__
