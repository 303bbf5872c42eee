"""``stream-harness matrix``: every adapter group in its own pinned environment, one merged report.

The third-party libraries cannot share an environment (their pins conflict:
third-party-adapters.md, section 1), so the matrix is built per group from
``specs/matrix.toml``: one cached virtual environment per group (uv when it is on
``PATH`` or beside this Python, else ``python -m venv`` and pip) holding this checkout,
editable, and exactly the group's pins. ``stream-harness report`` runs inside each, into
a scratch folder, and the per-group reports are merged with
:func:`stream_harness.reporting.merge_reports` into one report whose header lists each group's
pins, build and run times; every adapter row carries the library version that ran. The
agent frameworks' groups (an ``agents`` list) are built the same way and run
``stream-harness agents`` after the stream groups; their agent rows join the same report.

Everything that touches processes goes through a :class:`Runner` (``subprocess.run`` by
default), so the logic (what is built where, what runs with which arguments, how results
merge, what a failed group does) is tested with a fake runner and no installs.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import importlib.metadata
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from stream_harness.adapters.processes.js import node_binary
from stream_harness.conformance.config import Config, ConfigError, check_numbers, load_config
from stream_harness.conformance.expectations import (
    Expectations,
    expectation_folders_shown,
    expectations_for,
)
from stream_harness.conformance.shard import ShardError, parse_shard
from stream_harness.conformance.suite import expectations_for_adapter
from stream_harness.contract import facts
from stream_harness.contract.facts import bundled_js, origin, spec_path
from stream_harness.reporting import Report, load_report, merge_reports, reclassify, write_report
from stream_harness.reporting.console import FORMATS, choose_format, render, skipped_lines
from stream_harness.reporting.keep import keep_previous
from stream_harness.reporting.progress import Heartbeat, progress_every
from stream_harness.reporting.report import ReportError, kept_agent_rows
from stream_harness.reporting.shards import replaces_whole_report

PINS_NAME: Final = "matrix.toml"
MARKER: Final = ".stream-harness-env.json"

Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


class MatrixError(ValueError):
    """A problem the user must fix (bad pins file, unknown group); one line."""


@dataclass(frozen=True, slots=True)
class Group:
    name: str
    requirements: tuple[str, ...]
    adapters: tuple[str, ...]
    description: str = ""
    # A folder of the project with a package.json and package-lock.json (adapters-js):
    # its `npm ci` goes into the environment too, for the stdio adapters it holds.
    npm: str | None = None
    # Agent adapters (harness/stream_harness/agents/frameworks) this environment holds: the agent
    # frameworks' groups have these and no stream adapters; `stream-harness matrix` runs
    # `stream-harness agents` on them after the stream groups.
    agents: tuple[str, ...] = ()
    # An agent group's exploration budget: `stream-harness agents --explore N` schedules per
    # (agent, base scenario, protocol) when the matrix runs with --explore.
    explore: int | None = None

    def key(self, project: Sequence[str]) -> str:
        """What the environment is built from: a change of pins, Python or harness rebuilds
        it, and for a JS group a change of the sources copied into it (:func:`js_sources_digest`)."""
        text = json.dumps(
            [
                sorted(self.requirements),
                sys.version_info[:2],
                list(project),
                facts.version(),
                js_sources_digest(js_source(self.npm)) if self.npm else "",
                harness_dependencies(),
            ]
        )
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def harness_dependencies() -> list[str]:
    """stream-harness's own declared requirements, as installed. Part of an environment's
    key because a checkout (or a release) that adds one, as `websockets` came with the
    WebSocket replay, keeps its version number: a cached environment built before would
    lack it and every run in it would fail to import."""
    try:
        return sorted(importlib.metadata.requires("stream-harness") or [])
    except importlib.metadata.PackageNotFoundError:
        return []


def default_pins() -> Path:
    return spec_path(PINS_NAME)


def harness_requirement() -> list[str]:
    """How a group environment gets this same stream-harness: the checkout it was installed
    from (editable), the wheel file it was installed from, else this version from the index."""
    found = origin()
    if found.path is not None and found.path.is_dir():
        return ["-e", str(found.path)] if found.editable else [str(found.path)]
    if found.path is not None and found.path.is_file():
        return [str(found.path)]
    return [f"stream-harness=={found.version}"]


def load_groups(path: Path) -> list[Group]:
    """The groups of the pins file, in file order, checked for shape and duplicate adapters."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise MatrixError(f"{path}: {exc}") from None
    raw = data.get("groups")
    if not isinstance(raw, dict) or not raw:
        raise MatrixError(f"{path}: needs at least one [groups.<name>] table")
    groups = []
    owner: dict[tuple[str, str], str] = {}
    for name, entry in raw.items():
        reqs = entry.get("requirements") if isinstance(entry, dict) else None
        adapters = entry.get("adapters") if isinstance(entry, dict) else None
        agents = entry.get("agents", []) if isinstance(entry, dict) else None
        if not (isinstance(reqs, list) and all(isinstance(r, str) for r in reqs)):
            raise MatrixError(f"{path}: groups.{name}.requirements must be a list of strings")
        if not (isinstance(agents, list) and all(isinstance(a, str) for a in agents)):
            raise MatrixError(f"{path}: groups.{name}.agents must be a list of strings")
        if agents and adapters is None:
            adapters = []  # an agent framework's group: no stream adapter
        if not (
            isinstance(adapters, list)
            and (adapters or agents)
            and all(isinstance(a, str) for a in adapters)
        ):
            raise MatrixError(f"{path}: groups.{name}.adapters must be a non-empty list of strings")
        # Stream adapters and agents are rows of two tables: `reference` may be one of each.
        for kind, names in (("adapter", adapters), ("agent", agents)):
            for a in names:
                if (kind, a) in owner:
                    # The merge would refuse two rows for one adapter anyway; say it here, early.
                    raise MatrixError(
                        f"{path}: {kind} {a!r} is in groups {owner[kind, a]!r} and {name!r}"
                    )
                owner[kind, a] = name
        npm = entry.get("npm")
        if npm is not None and not isinstance(npm, str):
            raise MatrixError(f"{path}: groups.{name}.npm must be a folder name")
        explore = entry.get("explore")
        if explore is not None and not (
            agents and isinstance(explore, int) and not isinstance(explore, bool) and explore >= 1
        ):
            raise MatrixError(
                f"{path}: groups.{name}.explore must be a number of schedules >= 1, in an agent group"
            )
        groups.append(
            Group(
                name, tuple(reqs), tuple(adapters), str(entry.get("description", "")), npm,
                tuple(agents), explore,
            )
        )  # fmt: skip
    return groups


def select(groups: Sequence[Group], names: Sequence[str] | None) -> list[Group]:
    if not names:
        return list(groups)
    known = {g.name: g for g in groups}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise MatrixError(f"unknown group(s) {unknown} (known: {', '.join(known)})")
    return [known[n] for n in names]


# ---------------------------------------------------------------------------------------
# Environments
# ---------------------------------------------------------------------------------------


def find_uv() -> str | None:
    """uv on PATH, else next to the running Python (a venv that pip-installed uv)."""
    found = shutil.which("uv")
    if found:
        return found
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None


@dataclass(frozen=True, slots=True)
class Env:
    group: str
    path: Path
    cached: bool
    seconds: float
    installer: str

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @property
    def cli(self) -> Path:
        return self.path / "bin" / "stream-harness"


def build_commands(
    group: Group, path: Path, project: Sequence[str], *, uv: str | None, python: str
) -> list[list[str]]:
    """The commands that create ``path`` and install the project and the group's pins."""
    if uv:
        return [
            [uv, "venv", "--quiet", "--python", python, str(path)],
            [
                uv,
                "pip",
                "install",
                "--quiet",
                # Bytecode now, as pip writes it by default: uv does not, and a run with
                # PYTHONDONTWRITEBYTECODE set (CI, sandboxes) would compile every import from
                # source in every worker, langchain-google-vertexai's 3,200 modules in 30 s.
                "--compile-bytecode",
                "--python",
                str(path / "bin" / "python"),
                *project,
                *group.requirements,
            ],
        ]
    return [
        [python, "-m", "venv", str(path)],
        [
            str(path / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            *project,
            *group.requirements,
        ],
    ]


def ensure_env(
    group: Group,
    cache: Path,
    project: Sequence[str],
    runner: Runner,
    *,
    uv: str | None,
    python: str = sys.executable,
    rebuild: bool = False,
) -> Env:
    """The group's environment, built unless a complete one with the same key is cached.

    The marker file is written last, so an interrupted build is rebuilt, never reused.
    """
    key = group.key(project)
    path = cache / f"{group.name}-{key}"
    marker = path / MARKER
    if not rebuild and marker.is_file():
        return Env(
            group.name,
            path,
            cached=True,
            seconds=0.0,
            installer=json.loads(marker.read_text())["installer"],
        )
    if path.exists():
        shutil.rmtree(path)
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    for argv in build_commands(group, path, project, uv=uv, python=python):
        done = runner(argv)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout or "").strip().splitlines()[-3:]
            raise MatrixError(
                f"group {group.name}: `{' '.join(argv[:3])} ...` failed: {' / '.join(tail)}"
            )
    installer = "uv" if uv else "venv+pip"
    if group.npm:
        _npm_ci(group, path, runner)
        installer += "+npm ci"
    seconds = time.monotonic() - started
    path.mkdir(parents=True, exist_ok=True)
    marker.write_text(
        json.dumps({"key": key, "requirements": list(group.requirements), "installer": installer})
    )
    return Env(group.name, path, cached=False, seconds=seconds, installer=installer)


JS_FILES: Final = ("package.json", "package-lock.json")
JS_DIRS: Final = ("lib", "adapters", "agents")


def js_source(name: str) -> Path:
    """A JS folder by its name in the repository (``adapters-js`` or a folder under it,
    such as the Portkey gateway's ``adapters-js/proxies/portkey``); shipped as package data."""
    if name == "adapters-js":
        return bundled_js()
    sub = name.removeprefix("adapters-js/")
    if (
        sub != name
        and ".." not in Path(sub).parts
        and (bundled_js() / sub / "package.json").is_file()
    ):
        return bundled_js() / sub
    raise MatrixError(
        f"npm folder {name!r}: not adapters-js nor a folder of it with a package.json"
    )


def js_sources_digest(source: Path) -> str:
    """One hash of what :func:`_npm_ci` copies from a JS folder: its package.json and lock
    file and every file under its script folders (lib/, adapters/, agents/), by path and
    content. Part of the environment's key because the scripts are copies, not the checkout's
    files: the harness is installed editable, so a changed ``lib/agent-protocol.mjs`` keeps
    the version number, and a cached environment would run the old copy."""
    digest = hashlib.sha256()
    files = [source / name for name in JS_FILES]
    for name in JS_DIRS:
        files += sorted(p for p in (source / name).rglob("*") if p.is_file())
    for path in files:
        if path.is_file():
            digest.update(path.relative_to(source).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def node_missing() -> str | None:
    """Why a JS group cannot run here (no node, or no npm to install its lock file), or None."""
    if node_binary() is None:
        return "node is not on PATH (Node >= 20; or set STREAM_HARNESS_NODE)"
    if shutil.which("npm") is None:
        return "npm is not on PATH (it installs the group's lock file)"
    return None


def _npm_ci(group: Group, path: Path, runner: Runner) -> None:
    """The group's JS folder copied into the environment and installed from its lock file.

    The scripts are copied next to their node_modules, because Node resolves a package from
    the importing file's folder upwards.
    """
    source = js_source(str(group.npm))
    target = path / "js"
    target.mkdir(parents=True, exist_ok=True)
    for name in JS_FILES:
        shutil.copy2(source / name, target / name)
    for name in JS_DIRS:
        if (source / name).is_dir():
            shutil.copytree(source / name, target / name, dirs_exist_ok=True)
    argv = ["npm", "ci", "--prefix", str(target), "--no-audit", "--no-fund"]
    done = runner(argv)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout or "").strip().splitlines()[-3:]
        raise MatrixError(f"group {group.name}: `npm ci` failed: {' / '.join(tail)}")


# ---------------------------------------------------------------------------------------
# Running and merging
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SuiteOptions:
    """What every group's ``stream-harness report`` gets: the same, so the reports merge."""

    cassettes: tuple[str, ...] = ()
    examples: int = 100
    seed: int = 0
    checks: tuple[str, ...] = ()
    single_cut_limit: int | None = None  # None: each group's own default (the same harness)
    skip_unusable: bool = False  # --skip-unusable: each group lists the same skipped files
    # ``K/N``: every group runs shard K of its own pairs. A group may have none in a small
    # shard; the matrix's own merge then counts the shard as a whole.
    shard: str | None = None
    run_timeout: float | None = None  # --run-timeout: each group's in-process adapters alike
    agent_jobs: int = 1  # --agent-jobs: `stream-harness agents --jobs` in each agent group
    # --explore: each agent group also runs its exploration budget (`agents --explore N`), a
    # run of its own beside the bundled scenarios', the shrunk failures saved into this folder.
    explore: bool = False
    save_failures: str | None = None
    # The report already in --out: its explored failures are run again first
    # (`agents --prior-report`), so a rerun keeps their shrunk schedules while they fail.
    prior_report: str | None = None

    def argv(self, env: Env, group: Group, out: Path) -> list[str]:
        # A JS group's adapters find their install in the environment (harness/stream_harness/adapters/processes/js.py).
        prefix = ["env", f"STREAM_HARNESS_JS={env.path / 'js'}"] if group.npm else []
        argv = [
            *prefix,
            str(env.cli),
            "report",
            "--out",
            str(out),
            "--examples",
            str(self.examples),
            "--seed",
            str(self.seed),
        ]
        if self.single_cut_limit is not None:
            argv += ["--single-cut-limit", str(self.single_cut_limit)]
        if self.shard is not None:
            argv += ["--shard", self.shard, "--allow-empty-shard"]
        if self.run_timeout is not None:
            argv += ["--run-timeout", repr(self.run_timeout)]
        for name in group.adapters:
            # By name, not module:object: reproduce commands in the merged report repeat it,
            # and the name is what a reader types in the group's environment.
            argv += ["--adapter", name]
        for c in self.cassettes:
            argv += ["--cassettes", c]
        for c in self.checks:
            argv += ["--check", c]
        if self.skip_unusable:
            argv.append("--skip-unusable")
        return argv

    def agent_argv(self, env: Env, group: Group, out: Path) -> list[str]:
        """``stream-harness agents`` on the group's agents over the bundled agent scenarios,
        with the bundled known failures (and the project's, as any run here reads them).
        The stream settings (cassettes, checks, splits) mean nothing to an agent run."""
        prefix = ["env", f"STREAM_HARNESS_JS={env.path / 'js'}"] if group.npm else []
        argv = [*prefix, str(env.cli), "agents", "--out", str(out)]
        for name in group.agents:
            argv += ["--agent", name]
        if self.shard is not None:
            argv += ["--shard", self.shard, "--allow-empty-shard"]
        if self.agent_jobs > 1:
            argv += ["--jobs", str(self.agent_jobs)]
        if self.explore and group.explore is not None:
            argv += ["--explore", str(group.explore), "--seed", str(self.seed)]
            if self.save_failures is not None:
                argv += ["--save-failures", self.save_failures]
            if self.prior_report is not None:
                argv += ["--prior-report", self.prior_report]
        return argv


@dataclass
class GroupRun:
    group: Group
    env: Env | None = None
    report: Report | None = None
    seconds: float = 0.0
    error: str | None = None
    # Why the group did not run on this machine at all (a JS group without node or npm):
    # a skip, said in one line, not a failure of the matrix.
    skipped: str | None = None
    # CPU (user + system) of the group's run and every process it waited for: its workers,
    # Node adapters, gateways. None where the platform cannot tell (no os.wait4).
    cpu_seconds: float | None = None
    # The run of the group's agents (``stream-harness agents``) rather than its stream adapters.
    agents: bool = False
    # The agents' exploration (``agents --explore N``), a run apart from their bundled scenarios.
    explored: bool = False

    @property
    def label(self) -> str:
        """The group's name in the header; a group with both kinds has two runs, an explored
        agent group one more."""
        if self.explored:
            return f"{self.group.name} (explored)"
        both = self.group.adapters and self.group.agents
        return f"{self.group.name} (agents)" if self.agents and both else self.group.name


@dataclass
class MatrixRun:
    runs: list[GroupRun] = field(default_factory=list)
    report: Report | None = None

    @property
    def failed_groups(self) -> list[GroupRun]:
        return [r for r in self.runs if r.error]


def run_group(
    group: Group,
    env: Env,
    options: SuiteOptions,
    scratch: Path,
    runner: Runner,
    *,
    agents: bool = False,
    explored: bool = False,
) -> GroupRun:
    out = scratch / (
        f"{group.name}.explored" if explored else f"{group.name}.agents" if agents else group.name
    )
    if agents:
        # The bundled scenarios' run and the exploration's are two runs of one group.
        argv = replace(options, explore=explored).agent_argv(env, group, out)
    else:
        argv = options.argv(env, group, out)
    started = time.monotonic()
    done = runner(argv)
    seconds = time.monotonic() - started
    cpu = getattr(done, "cpu_seconds", None)
    # `report` and `agents` exit 1 when they found new failures: a result, not a broken run.
    if done.returncode not in (0, 1) or not (out / "report.jsonl").is_file():
        tail = (done.stderr or done.stdout or "").strip().splitlines()[-3:]
        return GroupRun(
            group, env, seconds=seconds, error=f"exit {done.returncode}: {' / '.join(tail)}",
            cpu_seconds=cpu, agents=agents, explored=explored,
        )  # fmt: skip
    return GroupRun(
        group, env, load_report(out / "report.jsonl"), seconds=seconds, cpu_seconds=cpu,
        agents=agents, explored=explored,
    )  # fmt: skip


def describe(run: GroupRun) -> str:
    """One header line per group: its pins, and where the time went."""
    env = run.env
    build = (
        "not built"
        if env is None
        else ("cached" if env.cached else f"built in {env.seconds:.0f} s with {env.installer}")
    )
    cpu = f", {run.cpu_seconds:.0f} s of CPU" if run.cpu_seconds is not None else ""
    if run.skipped:
        return f"SKIPPED ({run.skipped})"
    status = f"FAILED ({run.error})" if run.error else f"ran in {run.seconds:.0f} s{cpu}"
    return f"{', '.join(run.group.requirements) or 'no pins'}; env {build}; {status}"


def merge_runs(
    runs: Sequence[GroupRun], expectations: Callable[[str], Expectations] = expectations_for
) -> Report:
    """The groups' reports as one, with each group's pins and timings in the header.

    The agent groups' reports hold agent rows only, under a header of their own (no seed,
    splits or cases: an agent run has none), which :func:`merge_reports` would refuse to
    put beside the stream reports; their rows join the stream groups' merged report (or,
    when no stream group ran, the first agent report's header). Under ``--shard`` their
    runs add to the shard's units, so ``stream-harness merge`` counts the whole.
    """
    stream = [r.report for r in runs if r.report is not None and not r.agents]
    agent = [r.report for r in runs if r.report is not None and r.agents]
    if not stream and not agent:
        raise MatrixError(
            "no group produced a report: "
            + "; ".join(f"{r.label}: {r.error or r.skipped}" for r in runs)
        )
    # The known/failed split follows the expectation files as they are at merge time.
    merged = reclassify(merge_reports(stream), expectations) if stream else agent[0]
    rest = agent if stream else agent[1:]
    if rest:
        rows = merged.agent_results + tuple(a for r in rest for a in r.agent_results)
        shard = merged.shard
        if shard is not None:
            shard = shard.model_copy(
                update={
                    "pairs": shard.pairs + sum(r.shard.pairs for r in rest if r.shard),
                    "total_pairs": shard.total_pairs
                    + sum(r.shard.total_pairs for r in rest if r.shard),
                }
            )
        try:  # the report's own check: one row per (agent, scenario, protocol, check)
            merged = Report.model_validate({**dict(merged), "agent_results": rows, "shard": shard})
        except ValueError as exc:
            raise MatrixError(f"cannot merge the agent groups' rows: {exc}") from None
    environment = {k: v for k, v in merged.environment.items()}
    for run in runs:
        environment[f"group {run.label}"] = describe(run)
    # The run spans every group: an agent group that ends last ends it (the header said
    # "07:08 to 07:20" of a matrix that ran until 07:30).
    reports = [*stream, *agent]
    span = {
        "started": min(r.started for r in reports),
        "finished": max(r.finished for r in reports),
    }
    return merged.model_copy(update={"environment": dict(sorted(environment.items())), **span})


def run_matrix(
    groups: Sequence[Group],
    *,
    options: SuiteOptions,
    cache: Path,
    project: Sequence[str],
    runner: Runner,
    uv: str | None,
    python: str = sys.executable,
    rebuild: bool = False,
    progress: Callable[[str], None] = lambda _: None,
    jobs: int = 1,
    expectations: Callable[[str], Expectations] = expectations_for,
) -> MatrixRun:
    """Build (or reuse) every group's environment, run the suite in each, merge the reports.

    A group whose environment fails to build or whose run fails is recorded and the
    others go on: the merged report then lacks that group's adapters, and the header
    says why.
    """
    matrix = MatrixRun()
    _ENDING.clear()
    with tempfile.TemporaryDirectory(prefix="stream-harness-matrix-") as tmp:
        one = functools.partial(
            _group_run, tmp=Path(tmp), options=options, cache=cache, project=project,
            runner=runner, uv=uv, python=python, rebuild=rebuild, progress=progress,
        )  # fmt: skip

        # Groups are independent processes in separate folders; `jobs` of them at once,
        # the longest first (as the last run timed them), so that the end of the run is
        # short groups side by side, not one long group alone on a core. Results keep the
        # pins file's order whatever finishes first.
        # The agent groups run after the stream groups (same pool, submitted last).
        # Under --explore each agent group's exploration is one more run, the longest of all,
        # started first.
        timings = load_timings(cache)
        stream_groups = [g for g in groups if g.adapters]
        agent_groups = [g for g in groups if g.agents]
        explored = [g for g in agent_groups if options.explore and g.explore is not None]
        # An exploration mostly waits (the frameworks' SDKs back off after each HTTP error:
        # 86 s of CPU in 367 s for openai-agents' rows), so the explorations get a pool of
        # their own beside the `jobs` groups that compute.
        with (
            ThreadPoolExecutor(max_workers=max(1, jobs)) as pool,
            ThreadPoolExecutor(max_workers=max(1, jobs)) as waiting,
        ):
            futures = {
                f"{g.name}\0explored": waiting.submit(one, g, True, True)
                for g in longest_first(explored, timings, suffix=" (explored)")
            }
            futures.update(
                {g.name: pool.submit(one, g) for g in longest_first(stream_groups, timings)}
            )
            futures.update(
                {
                    f"{g.name}\0agents": pool.submit(one, g, True)
                    for g in longest_first(agent_groups, timings)
                }
            )
            try:
                matrix.runs = (
                    [futures[g.name].result() for g in stream_groups]
                    + [futures[f"{g.name}\0agents"].result() for g in agent_groups]
                    + [futures[f"{g.name}\0explored"].result() for g in explored]
                )
            except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM as the CLI raises it
                # The groups' processes would run to their end while the pool's exit waits
                # for them: no group starts now, and the running ones are ended.
                # Counted before the running groups are ended: a group killed now returns
                # at once, and would read as finished.
                finished = sum(1 for f in futures.values() if f.done() and not f.cancelled())
                pool.shutdown(wait=False, cancel_futures=True)
                waiting.shutdown(wait=False, cancel_futures=True)
                end_running()
                exc.add_note(f"{finished} of {len(groups)} group(s) finished")
                raise
        if options.shard is None:  # a shard's times are a part's: they would mislead the order
            save_timings(cache, matrix.runs)
    matrix.report = merge_runs(matrix.runs, expectations)
    return matrix


def _group_run(
    group: Group,
    agents: bool = False,
    explored: bool = False,
    *,
    tmp: Path,
    options: SuiteOptions,
    cache: Path,
    project: Sequence[str],
    runner: Runner,
    uv: str | None,
    python: str,
    rebuild: bool,
    progress: Callable[[str], None],
) -> GroupRun:
    """One run of :func:`run_matrix`: a group's environment (built or reused), then its
    suite; a group that cannot run is a GroupRun saying why."""
    unusable = node_missing() if group.npm else None
    if unusable:
        progress(f"{group.name}: skipped, {unusable}")
        return GroupRun(group, skipped=unusable, agents=agents, explored=explored)
    progress(f"{group.name}: environment")
    try:
        # Under a lock: a group's bundled and explored runs share one environment.
        with _env_lock(group.name):
            env = ensure_env(group, cache, project, runner, uv=uv, python=python, rebuild=rebuild)
    except MatrixError as exc:
        return GroupRun(group, error=str(exc), agents=agents, explored=explored)
    names = group.agents if agents else group.adapters
    what = "exploring " if explored else "agents " if agents else ""
    progress(f"{group.name}: running {what}{', '.join(names)}")
    done = run_group(group, env, options, tmp, runner, agents=agents, explored=explored)
    progress(f"{group.name}: {describe(done)}")
    return done


TIMINGS: Final = "timings.json"


def load_timings(cache: Path) -> dict[str, float]:
    """Each group's wall time in its last run, kept beside the environments; a missing or
    unreadable file is no timings (the order is then the pins file's)."""
    try:
        data = json.loads((cache / TIMINGS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: float(v) for k, v in data.items() if isinstance(v, int | float)}


def save_timings(cache: Path, runs: Sequence[GroupRun]) -> None:
    timings = load_timings(cache)
    timings.update(
        {r.label: round(r.seconds, 1) for r in runs if r.error is None and r.skipped is None}
    )
    try:
        cache.mkdir(parents=True, exist_ok=True)
        (cache / TIMINGS).write_text(
            json.dumps(timings, indent=1, sort_keys=True), encoding="utf-8"
        )
    except OSError:
        pass  # an order hint only


def longest_first(
    groups: Sequence[Group], timings: Mapping[str, float], suffix: str = ""
) -> list[Group]:
    """Groups never timed first (they may be long), then by last time, longest first;
    ties keep the pins file's order. ``suffix``: the run's label after the group's name
    (`` (explored)``), under which its time was kept."""
    order = {g.name: i for i, g in enumerate(groups)}

    def key(g: Group) -> tuple[bool, float, int]:
        label = g.name + suffix
        return (label in timings, -timings.get(label, 0.0), order[g.name])

    return sorted(groups, key=key)


_ENV_LOCKS: dict[str, threading.Lock] = {}
_ENV_LOCKS_GUARD = threading.Lock()


def _env_lock(name: str) -> threading.Lock:
    """One lock per group: its runs (stream, agents, explored) build its environment once."""
    with _ENV_LOCKS_GUARD:
        return _ENV_LOCKS.setdefault(name, threading.Lock())


class Finished(subprocess.CompletedProcess[str]):
    """A finished command, with the CPU it and the processes it waited for used."""

    cpu_seconds: float | None = None


# The commands subprocess_runner is running, for end_running; set once a run is ending.
_RUNNING: set[subprocess.Popen[str]] = set()
_ENDING = threading.Event()
# How long an interrupted group's run has to end its own workers and adapters (it gets
# SIGTERM and handles it as the CLI does) before it is killed.
END_GRACE: Final = 15.0


def end_running() -> None:
    """SIGTERM to every command running, SIGKILL after the grace period; none start after."""
    _ENDING.set()
    running = list(_RUNNING)
    for proc in running:
        with contextlib.suppress(OSError):
            proc.terminate()
    # Reaped by the threads that started them (their wait4, for the CPU account): here
    # only watched leaving, then killed if they do not.
    deadline = time.monotonic() + END_GRACE
    while _RUNNING and time.monotonic() < deadline:
        time.sleep(0.05)
    for proc in list(_RUNNING):
        with contextlib.suppress(OSError):
            proc.kill()


def subprocess_runner(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    if _ENDING.is_set():
        return subprocess.CompletedProcess(
            list(argv), -signal.SIGTERM, "", "not started: the run was interrupted"
        )
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    if not hasattr(os, "wait4"):
        return subprocess.run(list(argv), capture_output=True, text=True, env=env, check=False)
    # Popen and os.wait4 instead of subprocess.run, for the child's own resource usage: with
    # groups running side by side, the process-wide RUSAGE_CHILDREN would mix them.
    with subprocess.Popen(
        list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as proc:
        _RUNNING.add(proc)
        streams: dict[str, str] = {}

        def drain(name: str, pipe: Any) -> None:
            streams[name] = pipe.read()

        readers = [
            threading.Thread(target=drain, args=("out", proc.stdout), daemon=True),
            threading.Thread(target=drain, args=("err", proc.stderr), daemon=True),
        ]
        for t in readers:
            t.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            _RUNNING.discard(proc)
        proc.returncode = os.waitstatus_to_exitcode(status)
        for t in readers:
            t.join()
    done = Finished(list(argv), proc.returncode, streams.get("out", ""), streams.get("err", ""))
    done.cpu_seconds = usage.ru_utime + usage.ru_stime
    return done


# ---------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "stream-harness" / "matrix"


def add_matrix_parser(sub: Any) -> None:
    p = sub.add_parser(
        "matrix",
        help="run the suite in one pinned environment per adapter group and merge the reports",
    )
    configure_parser(p)
    p.set_defaults(func=matrix_command)


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--pins",
        type=Path,
        default=None,
        help="pins file (default: the matrix.toml bundled with stream-harness)",
    )
    p.add_argument("--group", action="append", dest="groups", help="only these groups (repeatable)")
    p.add_argument(
        "--cassettes",
        action="append",
        help="cassette folder or file (repeatable; default: the bundled cassettes/)",
    )
    p.add_argument(
        "--examples",
        type=int,
        default=None,
        help="random splits per split-sensitive check (default: [tool.stream-harness] examples, else 100)",
    )
    p.add_argument("--seed", type=int, default=None, help="seed of the random splits (default 0)")
    p.add_argument(
        "--single-cut-limit",
        type=int,
        default=None,
        help="every single cut point is tried on bodies up to this many bytes (default: [tool.stream-harness] single_cut_limit, else 256; raise it to hunt, 0 for none)",
    )
    p.add_argument(
        "--check", action="append", dest="checks", help="only these check ids (repeatable)"
    )
    p.add_argument(
        "--out",
        default=None,
        help="report folder (default: [tool.stream-harness] out, else ./conformance_report)",
    )
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="where environments are kept (default: ~/.cache/stream-harness/matrix)",
    )
    p.add_argument(
        "--python",
        default=sys.executable,
        help="the interpreter environments are built with (default: this one)",
    )
    p.add_argument("--rebuild", action="store_true", help="rebuild environments even when cached")
    _add_run_flags(p)


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    """How the groups run and what the run shows (after the suite and environment flags)."""
    p.add_argument(
        "--fresh",
        action="store_true",
        help="drop the rows of adapters this run did not run (default: keep them from the "
        "report in --out when it describes the same cases, checks, seed, examples and single-cut limit)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="groups run at once (default 1; each run is one process)",
    )
    p.add_argument(
        "--agent-jobs",
        type=int,
        default=4,
        help="agent runs at once inside each agent group (`stream-harness agents --jobs`; "
        "default 4: an agent run mostly waits on retry delays and timeouts)",
    )
    p.add_argument(
        "--explore",
        action="store_true",
        help="the agent groups explore fault schedules (`agents --explore N`, N the group's "
        "`explore` budget in the pins file) instead of running the bundled scenarios; the "
        "explored rows join the agents' other rows and the shrunk failures are saved in "
        "<out>/explored/",
    )
    p.add_argument(
        "--skip-unusable",
        action="store_true",
        help="passed to every group: skip cassettes that do not load or hold nothing to check, each listed with its reason (skipping all is still an error)",
    )
    p.add_argument(
        "--run-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="passed to every group: seconds one run of an in-process adapter may take before its check is recorded as timeout (default: each group's [tool.stream-harness] run_timeout, else 30)",
    )
    p.add_argument(
        "--shard",
        metavar="K/N",
        default=None,
        help="run only shard K of N of every group's (adapter, case) pairs (`stream-harness merge` combines the shards' reports)",
    )
    p.add_argument("--list", action="store_true", help="print the groups and exit")
    p.add_argument(
        "--format", choices=FORMATS, default="auto", help="console output (default: auto)"
    )


def matrix_command(args: argparse.Namespace, runner: Runner = subprocess_runner) -> int:
    project = harness_requirement()
    try:
        groups = select(load_groups(args.pins or default_pins()), args.groups)
    except MatrixError as exc:
        print(f"stream-harness: {exc}", file=sys.stderr)
        return 2
    if args.list:
        for g in groups:
            names = ", ".join([*g.adapters, *(f"agent {a}" for a in g.agents)])
            print(f"{g.name}: {names}  [{', '.join(g.requirements)}]")
        return 0
    try:
        config, options, every = _settings(args)
    except MatrixError as exc:
        print(f"stream-harness: {exc}", file=sys.stderr)
        return 2
    started = datetime.now(UTC)
    try:
        result = _run_in_view(args, groups, options, config, project, runner, every)
    except MatrixError as exc:
        print(f"stream-harness: {exc}", file=sys.stderr)
        return 2
    assert result.report is not None
    # The groups ran in this project: their known failures came from its folder.
    root = config.source.parent if config.source is not None else None
    report = result.report.model_copy(
        update={"expectations": expectation_folders_shown(config.expectations, root)}
    )
    for line in skipped_lines(report.skipped):
        print(f"matrix: {line}", file=sys.stderr)
    if (
        report.shard is not None
        and not report.results
        and not report.agent_results
        and not result.failed_groups
    ):
        # Each group may have nothing in a shard (--allow-empty-shard); the matrix may not.
        print(
            f"stream-harness: nothing to check in shard {report.shard.label}: none of the matrix's "
            f"{report.shard.total_pairs} (adapter, case) pairs falls to it; use fewer shards",
            file=sys.stderr,
        )
        return 2
    report = _with_previous_rows(report, args, config, groups)
    written = write_report(report, config.out)
    if args.explore and report.shard is None:
        stale = prune_saved_failures(report, Path(config.out) / "explored")
        if stale:
            print(f"matrix: removed {stale} shrunk failure file(s) no row of the report names")
    seconds = (datetime.now(UTC) - started).total_seconds()
    for run in result.runs:
        print(f"{run.label}: {describe(run)}")
    render(report, choose_format(args.format))
    print(f"wrote {', '.join(str(p) for p in written)} ({seconds:.0f} s)")
    if result.failed_groups:
        # The verdict above covers the groups that ran; the last word must agree with the
        # exit status, so it says the matrix is incomplete.
        names = ", ".join(run.label for run in result.failed_groups)
        print(f"verdict: ERROR: group(s) {names} did not run; the rows above are the other groups'")
        return 2
    return 1 if report.did_fail else 0


def _settings(args: argparse.Namespace) -> tuple[Config, SuiteOptions, float]:
    """The run's configuration, what every group is given, and the heartbeat's period;
    a flag or setting the run cannot use raises :class:`MatrixError` saying which."""
    for flag, value in (
        ("--examples", args.examples),
        ("--single-cut-limit", args.single_cut_limit),
    ):
        if value is not None and value < 0:
            raise MatrixError(f"{flag} must be >= 0, got {value}")
    if args.agent_jobs < 1:
        raise MatrixError(f"--agent-jobs must be >= 1, got {args.agent_jobs}")
    if args.explore and args.shard:
        raise MatrixError("--explore: not with --shard (lower the groups' explore budgets instead)")
    try:
        check_numbers(examples=None, single_cut_limit=None, run_timeout=args.run_timeout)
        shard = parse_shard(args.shard) if args.shard is not None else None
        config = load_config().with_overrides(
            cassettes=args.cassettes,
            examples=args.examples,
            seed=args.seed,
            checks=args.checks,
            out=args.out,
            single_cut_limit=args.single_cut_limit,
        )
    except (ConfigError, ShardError) as exc:
        raise MatrixError(str(exc)) from None
    missing = [c for c in config.cassettes if not c.exists()]
    if missing:
        raise MatrixError(f"{missing[0]}: no such cassette folder or file")
    clash = replaces_whole_report(config.out) if shard is not None else None
    if clash:
        raise MatrixError(clash)
    options = SuiteOptions(
        cassettes=tuple(str(c) for c in config.cassettes),
        examples=config.examples,
        seed=config.seed,
        checks=config.checks,
        single_cut_limit=config.single_cut_limit,
        shard=str(shard) if shard is not None else None,
        skip_unusable=args.skip_unusable,
        run_timeout=args.run_timeout,
        agent_jobs=args.agent_jobs,
        explore=args.explore,
        save_failures=str(Path(config.out).resolve() / "explored") if args.explore else None,
        prior_report=_prior_report(config.out) if args.explore else None,
    )
    try:
        every = progress_every()
    except ValueError as exc:
        raise MatrixError(str(exc)) from None
    return config, options, every


def prune_saved_failures(report: Report, folder: Path) -> int:
    """Remove the scenario files in ``folder`` (``<out>/explored``) that no row of
    ``report`` names as its saved failure: an earlier exploration's schedules, shrunk
    otherwise or fixed since, would otherwise pile up beside the report. Returns how many."""
    if not folder.is_dir():
        return 0
    named = {
        Path(str(r.explored["saved"])).name
        for r in report.agent_results
        if r.explored is not None and r.explored.get("saved")
    }
    removed = 0
    for path in folder.glob("*.yaml"):
        if path.name not in named:
            path.unlink()
            removed += 1
    return removed


def _prior_report(out: Path) -> str | None:
    """The report in ``out`` when there is one to replay explored failures from."""
    path = Path(out).resolve() / "report.jsonl"
    return str(path) if path.is_file() else None


def _run_in_view(
    args: argparse.Namespace,
    groups: Sequence[Group],
    options: SuiteOptions,
    config: Config,
    project: Sequence[str],
    runner: Runner,
    every: float,
) -> MatrixRun:
    """:func:`run_matrix` with each milestone on stderr, and a heartbeat between them."""
    last = ["starting"]

    def milestone(line: str) -> None:
        last[0] = line
        print(f"matrix: {line}", file=sys.stderr, flush=True)

    # Groups run for minutes between milestones: in a log, a line every `every` seconds.
    alive = Heartbeat(
        lambda s: f"matrix: still running, {s:.0f} s (last: {last[0]})",
        0 if sys.stderr.isatty() else every,
    )
    with alive:
        return run_matrix(
            groups, options=options, cache=args.cache_dir or default_cache(), project=project,
            runner=runner, uv=find_uv(), python=args.python, rebuild=args.rebuild, jobs=args.jobs,
            progress=milestone,
            expectations=lambda name: expectations_for_adapter(name, config.expectations),
        )  # fmt: skip


def _with_previous_rows(
    report: Report, args: argparse.Namespace, config: Config, groups: Sequence[Group]
) -> Report:
    """The report to write: unless ``--fresh`` or a shard, the rows of the report in
    ``--out`` this run did not replace are kept (each kept or dropped one noted)."""
    # A shard's folder holds exactly its part of the run (`merge` keeps other rows instead).
    if not args.fresh and report.shard is None and not any(g.adapters for g in groups):
        # Agent groups alone (`--group agent-langgraph`): their rows replace those agents'
        # in the report there, whose stream rows and header stay as they were (as
        # `stream-harness agents --out` does); a stream header of no run would keep nothing.
        report, note = _onto_previous(report, config.out)
        if note:
            print(f"matrix: {note}", file=sys.stderr)
    elif not args.fresh and report.shard is None:
        report, notes = keep_previous(
            report, config.out, lambda name: expectations_for_adapter(name, config.expectations)
        )
        for note in notes:
            print(f"matrix: {note}", file=sys.stderr)
    return report


def _onto_previous(report: Report, out: Path) -> tuple[Report, str | None]:
    """``report``'s agent rows in place of those agents' rows of ``out``'s report, whose
    other rows and header are kept; ``report`` itself when there is none to keep."""
    path = out / "report.jsonl"
    if not path.is_file():
        return report, None
    try:
        previous = load_report(path)
    except (ReportError, ValueError, OSError) as exc:
        return report, f"not keeping the rows of {path}: {exc}"
    if previous.shard is not None:
        return report, None
    kept = kept_agent_rows(previous.agent_results, report.agent_results)
    environment = {**previous.environment}
    environment.update({k: v for k, v in report.environment.items() if k.startswith("group ")})
    merged = previous.model_copy(
        update={
            "agent_results": kept + report.agent_results,
            "finished": report.finished,
            "environment": dict(sorted(environment.items())),
        }
    )
    return merged, f"kept the stream rows and other agents' rows of {path} (--fresh drops them)"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m stream_harness.matrix.groups``: the same command, before it is wired into the CLI."""
    parser = argparse.ArgumentParser(prog="stream-harness matrix")
    configure_parser(parser)
    return matrix_command(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
