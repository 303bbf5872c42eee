"""pytest plugin (entry point ``pytest11``): run the conformance suite as test items.

``pytest --harness`` adds one test item per (adapter, case, check), so a CI failure reads
``stream-harness::openai-sdk::split-invariance[openai-completions/parallel_tool_calls.yaml#0]``
with the reproduce command in the report; such ids (or a prefix) select items on the
command line, and ``-k``, ``--lf`` and ``--ff`` work on them as on any test. Options pick the adapter(s), cassette folders and
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
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import httpx

    from stream_harness.conformance.cases import Case
    from stream_harness.conformance.checks.engine import Check
    from stream_harness.conformance.config import Config
    from stream_harness.conformance.runner import CaseResult, RunConfig
    from stream_harness.conformance.suite import LoadedAdapter, Suite
    from stream_harness.recordings.cassette import Interaction
    from stream_harness.server.serve import ReplayServer


# The options that override [tool.stream-harness], by the Config field they set.
OPTION_FIELDS = {
    "cassettes": "--harness-cassettes",
    "adapters": "--harness-adapter",
    "examples": "--harness-examples",
    "seed": "--harness-seed",
    "single_cut_limit": "--harness-single-cut-limit",
    "checks": "--harness-check",
    "expectations": "--harness-expectations",
    "run_timeout": "--harness-run-timeout",
}
AGENT_OPTIONS = ("--harness-agent", "--harness-agent-scenarios")
# The ones the marker and harness_chunks read too: they stand without --harness.
MARKER_FIELDS = frozenset({"cassettes", "seed"})


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("stream-harness", "stream-harness conformance")
    group.addoption("--harness", action="store_true", default=False, help="run the stream-harness conformance suite")
    group.addoption(
        "--harness-adapter",
        action="append",
        default=None,
        help="adapter to check: a built-in name, an entry-point name or module:object (repeatable; default: [tool.stream-harness] adapters, else reference)",
    )
    group.addoption("--harness-cassettes", action="append", default=None, help="cassette folder or file (repeatable; default: [tool.stream-harness] cassettes, else the bundled cassettes)")
    group.addoption("--harness-examples", type=int, default=None, help="random splits per split-sensitive check (default: [tool.stream-harness] examples, else 100)")
    group.addoption("--harness-single-cut-limit", type=int, default=None, help="every single cut point is tried on bodies up to this many bytes (default: [tool.stream-harness] single_cut_limit, else 256; raise it to hunt, 0 for none)")
    group.addoption("--harness-seed", type=int, default=None, help="seed for the random splits (default 0)")
    group.addoption("--harness-check", action="append", default=None, help="only these check ids (repeatable)")
    group.addoption("--harness-expectations", default=None, help="folder of <adapter>.yaml known-failure files")
    group.addoption("--harness-run-timeout", type=float, default=None, help="seconds one run of an in-process adapter may take before its check is recorded as timeout (default: [tool.stream-harness] run_timeout, else 30)")
    group.addoption(
        "--harness-agent",
        action="append",
        default=None,
        help="agent adapter to check against the agent contract: a registered name, module:object or cmd:COMMAND (repeatable; with --harness)",
    )
    group.addoption(
        "--harness-agent-scenarios",
        default=None,
        help="agent scenario file or folder (default: the bundled agent scenarios; with --harness-agent)",
    )


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
    _take_selected_ids(config)
    suite_only = [
        option for field, option in OPTION_FIELDS.items() if field not in MARKER_FIELDS and config.getoption(option) is not None
    ] + [option for option in AGENT_OPTIONS if config.getoption(option) is not None]
    if suite_only and not config.getoption("--harness"):
        # Without --harness the suite does not run: the option would be ignored while the
        # run passes. (--harness-cassettes and --harness-seed also feed the marker and the
        # harness_chunks fixture, so they stand alone.)
        raise pytest.UsageError(f"stream-harness: {suite_only[0]} has no effect without --harness")
    numbers = ("--harness-examples", "--harness-single-cut-limit", "--harness-run-timeout")
    if any(config.getoption(option) is not None for option in numbers):
        # Checked as the CLI checks its flags (the entry point imports on use: see the module docstring).
        from stream_harness.conformance.config import ConfigError, check_numbers

        try:
            check_numbers(
                examples=config.getoption("--harness-examples"),
                single_cut_limit=config.getoption("--harness-single-cut-limit"),
                run_timeout=config.getoption("--harness-run-timeout"),
                prefix="--harness-",
            )
        except ConfigError as exc:
            raise pytest.UsageError(f"stream-harness: {exc}") from None
    given = config.getoption("--harness-cassettes") or []
    missing = [p for p in given if not Path(p).exists()]
    if missing and not config.getoption("--harness"):
        # Without --harness only the markers read it: a wrong path would otherwise be
        # dropped unseen while the run passes. (With --harness the suite's collection
        # says it, as every other bad input.)
        raise pytest.UsageError(f"stream-harness: {missing[0]}: no such cassette folder or file")


def _config(config: pytest.Config, test_file: Path | None = None) -> Config:
    """[tool.stream-harness] with the --harness-* options laid over it: the table of the
    project holding ``test_file`` (a marker's test), else of the paths pytest was given
    (the suite's items), never the current folder's: ``pytest proj/tests --harness`` run
    from a monorepo's root reads proj/pyproject.toml."""
    from stream_harness.conformance.config import config_for_paths, load_config

    table = load_config(test_file) if test_file is not None else config_for_paths(_given_paths(config))
    return table.with_overrides(**{field: config.getoption(option) for field, option in OPTION_FIELDS.items()})


def _given_paths(config: pytest.Config) -> list[Path]:
    """The files and folders on pytest's command line (node ids cut to their file), else
    the rootdir: where the tests of this run live."""
    base = config.invocation_params.dir
    paths = [base / arg.split("::")[0] for arg in config.args]
    return [p for p in paths if p.exists()] or [config.rootpath]


# -- the suite as items ----------------------------------------------------------------


class HarnessFailure(Exception):
    def __init__(self, result: CaseResult) -> None:
        super().__init__(result.failures[0].message if result.failures else result.outcome)
        self.result = result


class HarnessItem(pytest.Item):
    def __init__(self, *, loaded: LoadedAdapter, case: Case, check: Check, run_config: RunConfig, **kw: Any) -> None:
        super().__init__(**kw)
        self.loaded = loaded
        self.case = case
        self.check = check
        self.run_config = run_config

    def runtest(self) -> None:
        from stream_harness.conformance.runner import run_one

        ctx = self.run_config.context(self.case, self.loaded.adapter, self.loaded.spec)
        result = run_one(self.check, ctx, self.loaded.expectations)
        if not result.ok:  # failed, timeout, crashed or errored (conformance/outcomes.py)
            raise HarnessFailure(result)
        if result.outcome == "known_failure":
            pytest.xfail(f"known failure: {result.issue}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, HarnessFailure):
            # The lines the console and run_conformance show, with the rules the check enforces.
            from stream_harness.conformance.failure_text import failure_lines

            result = excinfo.value.result
            lines = failure_lines(result)
            lines.insert(1, f"    enforces {self.check.enforces} (specs/contract.md); adapter as given: {self.loaded.spec}")
            for more in result.failures[1:]:
                lines.append(f"  and: {more.message}")
            return "\n".join(lines)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.case.cassette, None, f"[{self.loaded.spec}] {self.check.id} :: {self.case.id}"


def adapter_segment(spec: str) -> str:
    """An adapter spec as one segment of a node id. pytest reads a trailing ``[...]`` as
    parameters and ``::`` as nesting, so a gateway row's brackets become parentheses; the
    reproduce command keeps the spec as given."""
    return spec.replace("[", "(").replace("]", ")").replace("::", ":")


class HarnessCollector(pytest.Collector):
    """The suite as one collector, so that bad input is a collection error, never a pass.

    Its node id is ``stream-harness``; an item's is
    ``stream-harness::<adapter>::<check>[<case>]``, which ``-k``, ``--lf``/``--ff`` and the
    command line (``pytest "stream-harness::reference::contract[ollama/plain_text.yaml#0]"``,
    or any prefix of it) select like any test's.
    """

    def collect(self) -> Iterator[pytest.Collector]:
        from stream_harness.conformance.suite import prepare

        suite = prepare(_config(self.config))
        for loaded in suite.adapters:
            yield AdapterCollector.from_parent(self, name=adapter_segment(loaded.spec), loaded=loaded, suite=suite)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        from stream_harness.conformance.config import ConfigError
        from stream_harness.conformance.suite import SuiteError

        if isinstance(excinfo.value, SuiteError | ConfigError):
            return f"stream-harness: {excinfo.value}"
        return str(super().repr_failure(excinfo))


class AdapterCollector(pytest.Collector):
    """One adapter's items: ``<check>[<case>]``."""

    def __init__(self, *, loaded: LoadedAdapter, suite: Suite, **kw: Any) -> None:
        super().__init__(**kw)
        self.loaded = loaded
        self.suite = suite

    def collect(self) -> Iterator[pytest.Item]:
        for case in self.suite.cases:
            if case.protocol not in self.loaded.adapter.protocols:
                continue
            expected = case.expected_events()
            for check in self.suite.run_config.checks:
                if check.applicable(self.loaded.adapter, case, expected):
                    name = f"{check.id}[{case.id}]"
                    yield HarnessItem.from_parent(
                        self,
                        name=name,
                        # Given as text, so pytest parses the [case] part as parameters
                        # exactly as it parses an id read back from its cache (--lf, --ff).
                        nodeid=f"{self.nodeid}::{name}",
                        loaded=self.loaded,
                        case=case,
                        check=check,
                        run_config=self.suite.run_config,
                    )


NODE_ROOT = "stream-harness"
_SELECTED = pytest.StashKey[list[str]]()


def _take_selected_ids(config: pytest.Config) -> None:
    """Harness node ids given as arguments are ours to select, not paths for pytest to find:
    they are taken out of the arguments (and imply --harness)."""
    args = list(config.args)
    ours = [a for a in args if a == NODE_ROOT or a.startswith(NODE_ROOT + "::")]
    config.stash[_SELECTED] = ours
    if ours:
        config.args[:] = [a for a in args if a not in ours]
        config.option.harness = True


def _selected(nodeid: str, selected: list[str]) -> bool:
    return not selected or any(nodeid == s or nodeid.startswith((s + "::", s + "[")) for s in selected)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """First of this hook's plain implementations, so -k, -m, --lf and --ff (theirs run
    later or wrap it) see the harness items as they see collected tests."""
    if not config.getoption("--harness"):
        return
    collector = HarnessCollector.from_parent(session, name=NODE_ROOT, nodeid=NODE_ROOT)
    # Collected through pytest's own hooks, so a SuiteError is reported as a collection
    # error and the run stops ("1 error during collection"), as a broken test module does.
    report = session.ihook.pytest_make_collect_report(collector=collector)
    session.ihook.pytest_collectreport(report=report)
    if report.passed:
        selected = config.stash.get(_SELECTED, [])
        items.extend(
            item for node in report.result for item in session.genitems(node) if _selected(item.nodeid, selected)
        )
    if config.getoption("--harness-agent"):
        agents = AgentsCollector.from_parent(session, name=AGENTS_ROOT, nodeid=AGENTS_ROOT)
        report = session.ihook.pytest_make_collect_report(collector=agents)
        session.ihook.pytest_collectreport(report=report)
        if report.passed:
            items.extend(item for node in report.result for item in session.genitems(node))


# -- agent conformance as items --------------------------------------------------------

AGENTS_ROOT = "stream-harness-agents"


class AgentCheckFailure(Exception):
    pass


class AgentRunCache:
    """One observed run per (agent, scenario, protocol), shared by that run's check items:
    an agent run is the expensive part, its checks are reads of what was observed."""

    def __init__(self) -> None:
        self.runs: dict[tuple[str, str, str], Any] = {}

    def get(self, agent: Any, scenario: Any, protocol: str) -> Any:
        from stream_harness.agents.conformance.runner import observe

        key = (agent.name, str(scenario.path), protocol)
        if key not in self.runs:
            self.runs[key] = observe(agent, scenario, protocol)
        return self.runs[key]


class AgentsCollector(pytest.Collector):
    """``stream-harness-agents::<agent>::<check>[<scenario>-<protocol>]``; bad input (an
    agent that does not load, a scenario that does not parse, no scenario) is a collection
    error, never a pass."""

    def collect(self) -> Iterator[pytest.Item]:
        from stream_harness.agents.conformance.checks import CHECKS
        from stream_harness.agents.loading import load_agent
        from stream_harness.agents.scenario.model import (
            bundled_agent_scenarios,
            find_agent_scenarios,
            load_agent_scenario,
        )

        given = self.config.getoption("--harness-agent-scenarios")
        root = Path(given) if given else bundled_agent_scenarios()
        if not root.exists():
            raise HarnessMarkerError(f"--harness-agent-scenarios: {root}: no such file or folder")
        files = find_agent_scenarios(root)
        if not files:
            raise HarnessMarkerError(
                f"--harness-agent-scenarios: {root}: no agent scenario (*.yaml)"
            )
        scenarios = [load_agent_scenario(f) for f in files]
        cache = AgentRunCache()
        loaded = [(spec, load_agent(spec, self.config.rootpath)) for spec in self.config.getoption("--harness-agent")]
        known = _agent_known_failures(self.config, [a.name for _, a in loaded], scenarios)
        for spec, agent in loaded:
            for scenario in scenarios:
                for protocol in scenario.protocols:
                    if protocol not in agent.protocols:
                        continue
                    for check in CHECKS:
                        if not scenario.applies(check.id):
                            continue
                        name = f"{check.id}[{scenario.name}-{protocol}]"
                        item = AgentCheckItem.from_parent(
                            self,
                            name=name,
                            nodeid=f"{self.nodeid}::{adapter_segment(spec)}::{name}",
                            spec=spec,
                            agent=agent,
                            scenario=scenario,
                            protocol=protocol,
                            check=check,
                            cache=cache,
                        )
                        entry = next(
                            (e for e in known if e.matches(agent.name, scenario.name, protocol, check.id)),
                            None,
                        )
                        if entry is not None:
                            # Strict: a known failure that passes fails, as `agents` exits 1 on it.
                            item.add_marker(pytest.mark.xfail(strict=True, reason=f"known failure: {entry.reason}"))
                        yield item

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        from stream_harness.agents.loading import AgentLoadError
        from stream_harness.agents.scenario.model import ScenarioError

        if isinstance(excinfo.value, AgentLoadError | ScenarioError | HarnessMarkerError):
            return f"stream-harness: {excinfo.value}"
        return str(super().repr_failure(excinfo))


def _agent_known_failures(config: pytest.Config, agents: list[str], scenarios: list[Any]) -> list[Any]:
    """The agents' known failures as `stream-harness agents` reads them: the project's
    ``agent_expectations``, then the bundled ``specs/agent-expectations/``."""
    from stream_harness.agents.conformance.runner import ExpectationError, expectations_for_agents
    from stream_harness.conformance.expectations import ExpectationsError

    try:
        known, notes = expectations_for_agents(
            agents, _config(config).agent_expectations, {s.name for s in scenarios}
        )
    except (ExpectationError, ExpectationsError) as exc:
        raise HarnessMarkerError(str(exc)) from None
    for note in notes:
        warnings.warn(f"stream-harness: {note}", UserWarning, stacklevel=2)
    return known


class AgentCheckItem(pytest.Item):
    def __init__(
        self,
        *,
        spec: str,
        agent: Any,
        scenario: Any,
        protocol: str,
        check: Any,
        cache: AgentRunCache,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self.spec, self.agent, self.scenario = spec, agent, scenario
        self.protocol, self.check, self.cache = protocol, check, cache

    def runtest(self) -> None:
        from stream_harness.agents.conformance.checks import judge
        from stream_harness.agents.conformance.runner import reproduce

        run = self.cache.get(self.agent, self.scenario, self.protocol)
        verdict = next(v for v in judge(run) if v.check == self.check.id)
        if verdict.status == "skipped":
            if self.get_closest_marker("xfail") is not None:
                # Listed as a known failure, yet no longer judged: returning makes the
                # strict xfail an XPASS, a failure, as a known failure that passes is; the
                # expectations file stays true.
                return
            pytest.skip(verdict.message)
        if verdict.status == "failed":
            command = reproduce(self.spec, self.scenario, self.protocol, self.check.id)
            advice = f"\n    advice: {verdict.advice}" if verdict.advice else ""
            # A run that hung or crashed fails under its own label, as in the CLI's rows.
            label = ("TIMEOUT " if run.hung else "CRASHED ") if run.crash is not None else ""
            raise AgentCheckFailure(
                f"{label}{self.check.id} {self.check.title}: {verdict.message}{advice}"
                f"\n    reproduce: {command}"
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, AgentCheckFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return (
            self.scenario.path,
            None,
            f"[{self.spec}] {self.check.id} :: {self.scenario.name} [{self.protocol}]",
        )


# -- fixtures and marker for users' own tests ------------------------------------------


def _marker_interactions(item: pytest.Function) -> list[tuple[str, Interaction]] | None:
    marker = item.get_closest_marker("harness_cassettes")
    if marker is None:
        return None
    from stream_harness.conformance.cases import cassette_files
    from stream_harness.conformance.suite import cassette_roots
    from stream_harness.providers.reference import detect_protocol
    from stream_harness.recordings.cassette import NotACassette, load_cassette

    paths = [_marker_path(item, p) for p in marker.args] or list(cassette_roots(_config(item.config, item.path)))
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


class HarnessMarkerError(Exception):
    """A ``harness_cassettes`` marker that names nothing to test: a collection error."""


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
        metafunc.parametrize("harness_cassette", [inter for _, inter in found], ids=[name for name, _ in found])
        return
    from stream_harness.conformance.checks.engine import split_plan

    splits = marker.kwargs.get("splits", DEFAULT_MARKER_SPLITS)
    if not isinstance(splits, int) or isinstance(splits, bool) or splits < 1:
        raise HarnessMarkerError(f"harness_cassettes: splits must be a whole number >= 1, got {splits!r}")
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
def harness_transport(harness_cassette: Interaction, harness_chunks: list[bytes]) -> httpx.MockTransport:
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
