"""The ``harness_cassettes`` and ``agent_scenarios`` markers and their fixtures, for users'
own tests over cassettes and agent scenarios (they need no ``--harness``).

Imports of the engine are deferred (see stream_harness.pytest_plugin.options).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from stream_harness.pytest_plugin.options import HarnessMarkerError, _config

if TYPE_CHECKING:
    import httpx

    from stream_harness.recordings.cassette import Interaction
    from stream_harness.server.serve import ReplayServer


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "harness_cassettes(*paths, protocol=None, splits=20): parametrize the test over the streaming interactions "
        "of these cassette files/folders (fixture harness_cassette)",
    )
    config.addinivalue_line(
        "markers",
        "agent_scenarios(*scenarios, protocols=('openai-completions',), tools={}): parametrize the test "
        "over these agent scenarios (bundled names, files, folders or stream_harness.agents.fault_builders "
        "builders; none: every bundled one) and protocols (fixture agent_scenario)",
    )


def _marker_interactions(item: pytest.Function) -> list[tuple[str, Interaction]] | None:
    marker = item.get_closest_marker("harness_cassettes")
    if marker is None:
        return None
    from stream_harness.conformance.cases import cassette_files
    from stream_harness.conformance.suite import cassette_roots
    from stream_harness.providers.reference import detect_protocol
    from stream_harness.recordings.cassette import NotACassette, load_cassette

    paths = [_marker_path(item, p) for p in marker.args] or list(
        cassette_roots(_config(item.config, item.path))
    )
    protocol = marker.kwargs.get("protocol")
    found: list[tuple[str, Interaction]] = []
    for root in paths:
        if not root.exists():
            raise HarnessMarkerError(f"harness_cassettes: {root}: no such cassette folder or file")
        for path in cassette_files(root):
            try:
                cassette = load_cassette(path)
            except NotACassette:
                continue
            for inter in cassette.interactions:
                if not inter.is_streaming:
                    continue
                if protocol and detect_protocol(inter) != protocol:
                    continue
                found.append((f"{path.name}#{inter.index}", inter))
    return found


def _marker_path(item: pytest.Function, given: str | Path) -> Path:
    """A marker path: absolute, or relative to the test file's folder, else to the rootdir."""
    path = Path(given)
    if path.is_absolute():
        return path
    beside = item.path.parent / path
    return beside if beside.exists() else item.config.rootpath / path


# Splits a test using harness_chunks is run on per interaction, unless the marker says
# ``splits=N``: the whole body, the cheap exhaustive splits of small bodies, every trouble
# spot at once, then random ones (the plan `stream-harness check` uses, seeded alike).
DEFAULT_MARKER_SPLITS = 20


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "agent_scenario" in metafunc.fixturenames:
        from stream_harness.agents.conformance.fixture import MARKER, choices

        marker = metafunc.definition.get_closest_marker(MARKER)
        beside = Path(str(metafunc.definition.path)).parent
        chosen = choices(marker.args, marker.kwargs, beside) if marker else choices((), {})
        metafunc.parametrize("agent_scenario", chosen, ids=[c.id for c in chosen], indirect=True)
    if "harness_cassette" not in metafunc.fixturenames:
        return
    found = _marker_interactions(metafunc.definition)
    if found is None:
        return
    marker = metafunc.definition.get_closest_marker("harness_cassettes")
    assert marker is not None
    if not found:
        raise HarnessMarkerError(
            f"harness_cassettes: no streaming interactions in {', '.join(map(str, marker.args)) or 'the configured cassettes'}"
        )
    if "harness_chunks" not in metafunc.fixturenames:
        metafunc.parametrize(
            "harness_cassette", [inter for _, inter in found], ids=[name for name, _ in found]
        )
        return
    from stream_harness.conformance.checks.engine import split_plan

    splits = marker.kwargs.get("splits", DEFAULT_MARKER_SPLITS)
    if not isinstance(splits, int) or isinstance(splits, bool) or splits < 1:
        raise HarnessMarkerError(
            f"harness_cassettes: splits must be a whole number >= 1, got {splits!r}"
        )
    seed = metafunc.config.getoption("--harness-seed") or 0
    params: list[tuple[Interaction, list[int]]] = []
    ids: list[str] = []
    for name, inter in found:
        body = inter.response.body
        plan = [[], *split_plan(body, f"{seed}:{name}", splits, single_cut_limit=0)][: splits + 1]
        for number, cuts in enumerate(plan):
            params.append((inter, cuts))
            ids.append(f"{name}-whole" if not cuts else f"{name}-split{number}")
    metafunc.parametrize(("harness_cassette", "harness_cuts"), params, ids=ids)


@pytest.fixture
def harness_cassette(request: pytest.FixtureRequest) -> Interaction:
    """The recorded interaction the test is parametrized over (needs the harness_cassettes marker)."""
    param = getattr(request, "param", None)
    if param is None:
        pytest.skip("harness_cassette needs @pytest.mark.harness_cassettes(...)")
    inter: Interaction = param
    return inter


@pytest.fixture
def harness_cuts(request: pytest.FixtureRequest) -> list[int]:
    """Where ``harness_chunks`` cuts the body: one split of the plan per test item."""
    param = getattr(request, "param", None)
    if param is None:
        pytest.skip("harness_cuts needs @pytest.mark.harness_cassettes(...)")
    cuts: list[int] = param
    return cuts


@pytest.fixture
def harness_chunks(harness_cassette: Interaction, harness_cuts: list[int]) -> list[bytes]:
    """The cassette body cut one way per test item: the whole, the one-byte split of small
    bodies, every trouble spot, then seeded random splits (``--harness-seed``)."""
    from stream_harness.recordings.chunking import split_at

    return split_at(harness_cassette.response.body, harness_cuts)


@pytest.fixture
def harness_transport(
    harness_cassette: Interaction, harness_chunks: list[bytes]
) -> httpx.MockTransport:
    """An httpx transport that answers any request with the cassette's response, in harness_chunks."""
    from stream_harness.recordings.transport import replay_transport

    transport: httpx.MockTransport = replay_transport(harness_cassette.response, harness_chunks)
    return transport


@pytest.fixture
def harness_replay_server() -> Iterator[Callable[..., ReplayServer]]:
    """Start ``stream-harness serve`` in-process: ``server = harness_replay_server(paths, split=..., delay=...)``.

    For clients that take no custom transport, or run in another process or language: point
    the client's base URL at ``server.url``. Every server started is stopped after the test.
    """
    from stream_harness.server.serve import replay_server

    with contextlib.ExitStack() as stack:

        def start(cassettes: Sequence[str | Path], **options: Any) -> ReplayServer:
            return stack.enter_context(replay_server(cassettes, **options))

        yield start


@pytest.fixture
def agent_scenario(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """One agent scenario in one protocol (the agent_scenarios marker; default: every
    bundled one on openai-completions): ``agent_scenario.run(your_agent)`` runs it with
    each SDK pointed at the scenario server, ``agent_scenario.assert_conformant()`` judges."""
    from stream_harness.agents.conformance.fixture import make_fixture

    return make_fixture(request.param, tmp_path)
