"""The package's shape, kept by a test: one-way dependencies, no cycles, no hidden imports.

Data flows one way (specs/architecture.md): bytes -> wire -> providers -> unified events
-> consumers. The subpackages are ranked in that order and a module may import only from
its own subpackage or from a lower rank, so a consumer can never be imported by what it
consumes. Function-level imports of the package's own modules would hide edges from this
graph (the way two import cycles once stayed open), so they are allowed only in the entry
points, each for a reason given below; the graph counts them anyway. Imports under
``if TYPE_CHECKING:`` count too: a type-only edge upward or around a circle is the same
knot for a reader (and for the next runtime import along it), so a type both sides need
is declared below them (providers/types.py, reporting/runs.py).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "stream_harness"

# Lowest first. A module may import its own part and any lower rank; parts of one rank are
# independent of each other. A dotted name is a part of the agent wing (agents/), ranked
# right above the stream stage it builds on, so the wing is layered as the stream half is;
# a module belongs to the longest name it lies in (agents.cli before agents).
RANKS: tuple[frozenset[str], ...] = (
    frozenset(
        {"contract"}
    ),  # the unified events, their rules, limits, partial JSON, the facts reader
    frozenset({"wire"}),  # framing: bytes -> frames
    frozenset({"errors"}),  # provider errors classified once
    frozenset({"providers"}),  # one normalizer per wire protocol, the registry, the accumulator
    frozenset({"recordings"}),  # cassettes, replay transport, goldens, chunk plans
    frozenset({"workflow", "server"}),  # record/import/lint/bless; the loopback HTTP server
    frozenset({"loop"}),  # the reference agent loop
    frozenset({"adapters"}),  # the implementations under test, in-process, stdio, gateways
    frozenset(
        {"agents.scenario", "agents.server"}
    ),  # agent scenarios, their faults and bytes; the server that plays them
    frozenset(
        {"agents"}
    ),  # the agent adapters: their protocol, frameworks, stdio, JS, app mode, tool runs
    frozenset({"conformance"}),  # cases, checks, runner, expectations, fuzzing
    frozenset(
        {"agents.conformance"}
    ),  # the agent checks, their runner, exploration, the pytest fixture
    frozenset({"reporting"}),  # report files and terminal tables
    frozenset({"agents.reporting"}),  # the agent rows' console output and triage
    frozenset({"matrix"}),  # one environment per library group
    frozenset({"agents.cli"}),  # `stream-harness agents`
    frozenset({"cli"}),  # the command line
    frozenset(
        {"pytest_plugin"}
    ),  # pytest --harness, its markers and fixtures: one module per plugin
)
# The package root: the public API (lazy names), the pytest plugin and the data packages.
ROOT_MODULES = {"__init__.py", "py.typed"}
PARTS = sorted((name for rank in RANKS for name in rank), key=lambda name: -name.count("."))
ROOT_PACKAGES = {name for name in PARTS if "." not in name} | {"_bundled"}

# Entry points that import on use, and why. Nothing else may import its own package's
# modules inside a function.
LAZY_ALLOWED = {
    **{
        f"{PACKAGE}.pytest_plugin.{part}": "loaded by pytest in every run of every project that installs us: imports on use"
        for part in ("options", "stream_items", "agent_items", "markers")
    },
    f"{PACKAGE}.cli.main": "each subcommand imports what it needs, so `--help` and a one-file command stay fast",
}


def _package_dir() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    lazy: bool


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        if "_bundled" in parts:
            continue
        out[".".join(parts)] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module an import statement loads: ``pkg.mod.Name`` -> ``pkg.mod``."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _edges(modules: dict[str, Path]) -> Iterator[Edge]:
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        yield from _visit(tree, name, path.name == "__init__.py", modules, lazy=False)


def _visit(
    node: ast.AST, name: str, is_package: bool, modules: dict[str, Path], *, lazy: bool
) -> Iterator[Edge]:
    """The import edges under ``node``, ``lazy`` inside a function; those under
    ``if TYPE_CHECKING:`` are edges like any other."""
    for child in ast.iter_child_nodes(node):
        child_lazy = lazy or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
        if isinstance(child, ast.Import | ast.ImportFrom):
            for target in _targets(child, name, is_package):
                resolved = _resolve(target, modules) if target.split(".")[0] == PACKAGE else None
                if resolved and resolved != name:
                    yield Edge(name, resolved, child.lineno, child_lazy)
        yield from _visit(child, name, is_package, modules, lazy=child_lazy)


def _targets(node: ast.Import | ast.ImportFrom, name: str, is_package: bool) -> list[str]:
    """The dotted names an import statement loads, relative imports resolved."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
        base = ".".join([*parts, base] if base else parts)
    return [f"{base}.{alias.name}" for alias in node.names]


MODULES = _modules(_package_dir())
EDGES = list(_edges(MODULES))


def _subpackage(module: str) -> str:
    """The ranked part ``module`` lies in: ``stream_harness.agents.cli.explore`` -> ``agents.cli``."""
    inside = module.partition(".")[2]
    for name in PARTS:
        if inside == name or inside.startswith(f"{name}."):
            return name
    return inside.partition(".")[0]


def _rank(module: str) -> int | None:
    sub = _subpackage(module)
    for index, names in enumerate(RANKS):
        if sub in names:
            return index
    return None


def test_the_graph_was_read() -> None:
    """Guards the tests below against passing on an empty graph."""
    assert len(MODULES) > 100 and len(EDGES) > 300


def _cycles(modules: dict[str, Path], edges: list[Edge]) -> list[list[str]]:
    """Tarjan's strongly connected components over every edge, lazy and type-only ones included."""
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for edge in edges:
        graph[edge.source].add(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = 0

    def strongconnect(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for succ in graph[node]:
            if succ not in index:
                strongconnect(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            strongconnect(node)
    return cycles


def _wrong_way(edges: list[Edge]) -> list[str]:
    """Every edge that points up the ranks, or into the package root."""
    wrong = []
    for edge in edges:
        source_rank, target_rank = _rank(edge.source), _rank(edge.target)
        if target_rank is None:  # the package root or the plugin: nothing below imports them
            wrong.append(
                f"{edge.source}:{edge.line} imports {edge.target}, which is above every subpackage"
            )
        elif source_rank is None:  # the root and the plugin may use anything below
            continue
        elif _subpackage(edge.source) == _subpackage(edge.target):
            continue
        elif target_rank >= source_rank:
            wrong.append(
                f"{edge.source}:{edge.line} imports {edge.target} "
                f"({_subpackage(edge.source)} must not depend on {_subpackage(edge.target)})"
            )
    return wrong


def test_no_import_cycles() -> None:
    cycles = _cycles(MODULES, EDGES)
    assert not cycles, f"import cycles: {cycles}"


def test_dependencies_point_one_way() -> None:
    wrong = _wrong_way(EDGES)
    assert not wrong, "\n".join(wrong)


def _synthetic(tmp_path: Path, files: dict[str, str]) -> tuple[dict[str, Path], list[Edge]]:
    """The graph of a made-up package tree: ``files`` maps paths under the package to sources."""
    root = tmp_path / PACKAGE
    for rel, source in {"__init__.py": "", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    modules = _modules(root)
    return modules, list(_edges(modules))


TYPE_ONLY_UP = f"""\
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from {PACKAGE}.recordings.cassette import Interaction
"""


def test_a_type_only_import_up_the_ranks_is_reported(tmp_path: Path) -> None:
    """The edge providers/registry.py once hid from this test: typing against recordings."""
    modules, edges = _synthetic(
        tmp_path,
        {
            "providers/__init__.py": "",
            "providers/registry.py": TYPE_ONLY_UP,
            "recordings/__init__.py": "",
            "recordings/cassette.py": "class Interaction: ...\n",
        },
    )
    assert _wrong_way(edges) == [
        f"{PACKAGE}.providers.registry:4 imports {PACKAGE}.recordings.cassette (providers must not depend on recordings)"
    ]
    assert not _cycles(modules, edges)


def test_a_type_only_import_closing_a_circle_is_reported(tmp_path: Path) -> None:
    """The circle providers/ once kept: a runtime edge one way, a type-only one back."""
    modules, edges = _synthetic(
        tmp_path,
        {
            "providers/__init__.py": "",
            "providers/base.py": f"from {PACKAGE}.providers.registry import get\n",
            "providers/registry.py": (
                "from typing import TYPE_CHECKING\n\n"
                f"if TYPE_CHECKING:\n    from {PACKAGE}.providers.base import Normalizer\n\n"
                "def get() -> None: ...\n"
            ),
        },
    )
    assert _cycles(modules, edges) == [
        [f"{PACKAGE}.providers.base", f"{PACKAGE}.providers.registry"]
    ]


def test_no_hidden_imports_outside_the_entry_points() -> None:
    hidden = [
        f"{edge.source}:{edge.line} imports {edge.target} inside a function"
        for edge in EDGES
        if edge.lazy and edge.source not in LAZY_ALLOWED
    ]
    assert not hidden, "\n".join(hidden)


def test_reporting_never_imports_the_runner_or_the_checks() -> None:
    """Reports read results; they must not be able to produce them (or be tied to how)."""
    forbidden = {
        f"{PACKAGE}.conformance.runner",
        f"{PACKAGE}.conformance.checks",
        f"{PACKAGE}.conformance.suite",
    }
    bad = [
        f"{e.source}:{e.line} -> {e.target}"
        for e in EDGES
        if _subpackage(e.source) == "reporting"
        and (e.target in forbidden or e.target.startswith(f"{PACKAGE}.conformance.checks."))
    ]
    assert not bad, bad


def test_the_root_holds_only_the_api_the_plugin_and_subpackages() -> None:
    root = _package_dir()
    files = {p.name for p in root.iterdir() if p.is_file()}
    folders = {p.name for p in root.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert files <= ROOT_MODULES, f"modules at the package root: {sorted(files - ROOT_MODULES)}"
    assert folders <= ROOT_PACKAGES, f"subpackages in no rank: {sorted(folders - ROOT_PACKAGES)}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _subpackage(m) == "providers"))
def test_every_protocol_module_is_imported_by_the_providers_package(module: str) -> None:
    """The package lists its protocol modules (no discovery): one left out never registers."""
    source = MODULES[module].read_text(encoding="utf-8")
    registers = any(
        isinstance(node, ast.Expr | ast.Assign)
        and isinstance(node.value, ast.Call)
        and ast.unparse(node.value.func).endswith("register")
        for node in ast.parse(source).body
    )
    if registers:
        assert module in _imported_by_providers(), (
            f"{module} registers a protocol but stream_harness.providers does not import it"
        )


@functools.cache
def _imported_by_providers() -> frozenset[str]:
    """What importing the providers package loads, in a fresh interpreter (this one may
    have imported any module already)."""
    code = "import sys, stream_harness.providers; print('\\n'.join(sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return frozenset(done.stdout.split())
