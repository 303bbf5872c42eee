"""pytest plugin (entry point ``pytest11``): run the conformance suite as test items.

``pytest --harness`` adds one test item per (adapter, case, check), so a CI failure reads
``[openai-sdk] split-invariance :: openai-completions/parallel_tool_calls.yaml#0`` with
the reproduce command in the report. Options pick the adapter(s), cassette folders and
the number of random splits. Fixtures and a marker let users drive their own tests over
cassettes:

.. code-block:: python

    @pytest.mark.harness_cassettes("cassettes/openai-completions")
    def test_my_client(harness_cassette, harness_chunks, harness_transport):
        client = MyClient(transport=harness_transport)   # serves the body in harness_chunks
        ...

Imports of the engine are deferred: the plugin loads in every pytest run of every
project that installs stream-harness, so it must cost nothing unless used.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import httpx

    from harness.adapter import Adapter
    from harness.cassette import Interaction
    from harness.conformance.cases import Case
    from harness.conformance.checks import Check, Failure
    from harness.serve import ReplayServer


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("stream-harness", "stream-harness conformance")
    group.addoption("--harness", action="store_true", default=False, help="run the stream-harness conformance suite")
    group.addoption(
        "--harness-adapter",
        action="append",
        default=None,
        help="adapter to check: a built-in name, an entry-point name or module:object (repeatable; default: reference)",
    )
    group.addoption("--harness-cassettes", action="append", default=None, help="cassette folder (repeatable; default: the bundled cassettes)")
    group.addoption("--harness-examples", type=int, default=20, help="random splits per split-sensitive check (default 20)")
    group.addoption("--harness-seed", type=int, default=0, help="seed for the random splits (default 0)")
    group.addoption("--harness-check", action="append", default=None, help="only these check ids (repeatable)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "harness_cassettes(*paths, protocol=None): parametrize the test over the streaming interactions "
        "of these cassette files/folders (fixture harness_cassette)",
    )


def _cassette_roots(config: pytest.Config) -> list[Path]:
    from harness.conformance import bundled_cassettes

    given = config.getoption("--harness-cassettes")
    return [Path(p) for p in given] if given else [bundled_cassettes()]


# -- the suite as items ----------------------------------------------------------------


class HarnessFailure(Exception):
    def __init__(self, failures: tuple[Failure, ...]) -> None:
        super().__init__(failures[0].message if failures else "failed")
        self.failures = failures


class HarnessItem(pytest.Item):
    def __init__(self, *, adapter: Adapter, case: Case, check: Check, examples: int, seed: int, **kw: Any) -> None:
        super().__init__(**kw)
        self.adapter = adapter
        self.case = case
        self.check = check
        self.examples = examples
        self.seed = seed

    def runtest(self) -> None:
        from harness.conformance.checks import CheckContext

        ctx = CheckContext(self.case, self.adapter, examples=self.examples, seed=self.seed)
        failures = tuple(self.check.run(ctx))
        if failures:
            raise HarnessFailure(failures)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, HarnessFailure):
            lines = [f"{self.check.id} ({self.check.enforces}) failed for adapter {self.adapter.name!r} on {self.case.id}:"]
            for f in excinfo.value.failures:
                lines.append(f"  - {f.message}")
                if f.expected or f.observed:
                    lines.append(f"      expected: {f.expected}\n      observed: {f.observed}")
                if f.command:
                    lines.append(f"      reproduce: {f.command}")
            return "\n".join(lines)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.case.cassette, None, f"[{self.adapter.name}] {self.check.id} :: {self.case.id}"


class HarnessCollector(pytest.Collector):
    def collect(self) -> Iterator[pytest.Item]:
        from harness.conformance import (
            CHECKS,
            CHECKS_BY_ID,
            bundled_cassettes,
            load_adapter,
            load_cases,
        )

        config = self.config
        names = config.getoption("--harness-adapter") or ["reference"]
        wanted = config.getoption("--harness-check")
        unknown = sorted(set(wanted or []) - set(CHECKS_BY_ID))
        if unknown:
            raise pytest.UsageError(f"--harness-check: unknown check id(s) {unknown} (known: {sorted(CHECKS_BY_ID)})")
        checks = [CHECKS_BY_ID[c] for c in wanted] if wanted else list(CHECKS)
        cases, _ = load_cases(_cassette_roots(config), bundled_root=bundled_cassettes())
        examples = config.getoption("--harness-examples")
        seed = config.getoption("--harness-seed")
        for name in names:
            try:
                adapter = load_adapter(name)
            except ValueError as exc:
                raise pytest.UsageError(f"--harness-adapter: {exc}") from None
            for case in cases:
                if case.protocol not in adapter.protocols:
                    continue
                expected = case.expected_events()
                for check in checks:
                    if check.applicable(adapter, case, expected):
                        yield HarnessItem.from_parent(
                            self,
                            name=f"[{adapter.name}] {check.id} :: {case.id}",
                            adapter=adapter,
                            case=case,
                            check=check,
                            examples=examples,
                            seed=seed,
                        )


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--harness"):
        return
    collector = HarnessCollector.from_parent(session, name="stream-harness")
    items.extend(collector.collect())


# -- fixtures and marker for users' own tests ------------------------------------------


def _marker_interactions(item: pytest.Function) -> list[tuple[str, Interaction]] | None:
    marker = item.get_closest_marker("harness_cassettes")
    if marker is None:
        return None
    from harness.cassette import load_cassette
    from harness.normalize import detect_protocol

    paths = [Path(p) for p in marker.args] or _cassette_roots(item.config)
    protocol = marker.kwargs.get("protocol")
    found: list[tuple[str, Interaction]] = []
    for root in paths:
        files = [root] if root.is_file() else sorted(root.rglob("*.yaml"))
        for path in files:
            if any(part.startswith("_") or part == "scenarios" for part in path.parts):
                continue
            for inter in load_cassette(path).interactions:
                if not inter.is_streaming:
                    continue
                if protocol and detect_protocol(inter) != protocol:
                    continue
                found.append((f"{path.name}#{inter.index}", inter))
    return found


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "harness_cassette" not in metafunc.fixturenames:
        return
    found = _marker_interactions(metafunc.definition)
    if found is None:
        return
    if not found:
        metafunc.parametrize("harness_cassette", [pytest.param(None, marks=pytest.mark.skip(reason="no streaming interactions in the harness_cassettes paths"))])
        return
    metafunc.parametrize("harness_cassette", [inter for _, inter in found], ids=[name for name, _ in found])


@pytest.fixture
def harness_cassette(request: pytest.FixtureRequest) -> Interaction:
    """The recorded interaction the test is parametrized over (needs the harness_cassettes marker)."""
    param = getattr(request, "param", None)
    if param is None:
        pytest.skip("harness_cassette needs @pytest.mark.harness_cassettes(...)")
    inter: Interaction = param
    return inter


@pytest.fixture
def harness_chunks(harness_cassette: Interaction, request: pytest.FixtureRequest) -> list[bytes]:
    """The cassette body cut at seeded random points (seed from --harness-seed and the test id)."""
    from harness.chunking import random_cuts, split_at

    body = harness_cassette.response.body
    seed = hash((request.config.getoption("--harness-seed"), request.node.nodeid)) & 0xFFFFFFFF
    return split_at(body, random_cuts(body, seed))


@pytest.fixture
def harness_transport(harness_cassette: Interaction, harness_chunks: list[bytes]) -> httpx.MockTransport:
    """An httpx transport that answers any request with the cassette's response, in harness_chunks."""
    from harness.replay import replay_transport

    transport: httpx.MockTransport = replay_transport(harness_cassette.response, harness_chunks)
    return transport


@pytest.fixture
def harness_replay_server() -> Iterator[Callable[..., ReplayServer]]:
    """Start ``stream-harness serve`` in-process: ``server = harness_replay_server(paths, split=..., delay=...)``.

    For clients that take no custom transport, or run in another process or language: point
    the client's base URL at ``server.url``. Every server started is stopped after the test.
    """
    from harness.serve import replay_server

    with contextlib.ExitStack() as stack:

        def start(cassettes: Sequence[str | Path], **options: Any) -> ReplayServer:
            return stack.enter_context(replay_server(cassettes, **options))

        yield start
