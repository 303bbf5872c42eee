"""Running adapters x cases x checks into results, the raw material of every report."""

from __future__ import annotations

import contextlib
import os
import signal
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

from stream_harness.adapters.processes.deadline import DEFAULT_RUN_TIMEOUT, RunTimedOut, prepare
from stream_harness.adapters.processes.exit_hooks import stop_now
from stream_harness.adapters.protocol import Adapter
from stream_harness.conformance.cases import Case
from stream_harness.conformance.checks import CHECKS
from stream_harness.conformance.checks.engine import (
    Check,
    CheckContext,
    Failure,
    as_json,
    outcome_of,
    outcome_of_events,
)
from stream_harness.conformance.config import DEFAULT_SINGLE_CUT_LIMIT
from stream_harness.conformance.expectations import Expectations, outcome_for
from stream_harness.conformance.generated_ids import steady_texts
from stream_harness.conformance.outcomes import FAILING, Outcome, fault_outcome
from stream_harness.conformance.shard import Shard
from stream_harness.contract.diff import first_difference

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


@dataclass(frozen=True, slots=True)
class CaseResult:
    adapter: str
    case: str
    check: str
    outcome: Outcome
    failures: tuple[Failure, ...] = ()
    issue: str | None = None  # the upstream issue of a known failure

    @property
    def ok(self) -> bool:
        """Passing for CI purposes: a known failure does not break the build, a fix does not either."""
        return self.outcome not in FAILING


@dataclass
class RunConfig:
    examples: int = 100
    seed: int = 0
    checks: Sequence[Check] = CHECKS
    single_cut_limit: int = DEFAULT_SINGLE_CUT_LIMIT
    # A reproduce command replays one split or one truncation offset instead of drawing them.
    only_cuts: tuple[int, ...] | None = None
    only_truncate: int | None = None
    only_plan: int | None = None  # ``--split plan:K``: the K-th split of each case's plan
    # Seconds one run of an in-process adapter may take (--run-timeout); None: unbounded.
    run_timeout: float | None = DEFAULT_RUN_TIMEOUT
    # Only the (adapter, case) pairs of this shard run (``--shard K/N``).
    shard: Shard | None = None
    # Carried into reproduce commands (conformance/reproduce.py): the known failures' folder
    # and the table this run read.
    expectations: Path | None = None
    config_file: Path | None = None

    def replayed(self) -> str | None:
        """What a reproduce run replays instead of drawing splits (``--split``,
        ``--truncate``), as its summary says it; None for a run that draws them."""
        if self.only_truncate is not None:
            return f"1 truncation replayed (at byte {self.only_truncate})"
        if self.only_plan is not None:
            return f"1 split replayed (split {self.only_plan} of the plan of seed {self.seed})"
        if self.only_cuts is not None:
            return "1 split replayed"
        return None

    def covers(self, adapter: Adapter, case: Case) -> bool:
        """Whether this run checks ``adapter`` on ``case``: its protocol, and its shard."""
        if case.protocol not in adapter.protocols:
            return False
        return self.shard is None or self.shard.owns(adapter.name, case.id)

    def context(self, case: Case, adapter: Adapter, spec: str | None = None) -> CheckContext:
        """The one (adapter, case) context every caller builds: the runner and pytest items."""
        return CheckContext(
            case, adapter, examples=self.examples, seed=self.seed,
            single_cut_limit=self.single_cut_limit, adapter_spec=spec,
            only_cuts=self.only_cuts, only_truncate=self.only_truncate, only_plan=self.only_plan,
            run_timeout=self.run_timeout, expectations=self.expectations, config_file=self.config_file,
        )  # fmt: skip


@dataclass
class AdapterRun:
    adapter: Adapter
    version: str
    results: list[CaseResult] = field(default_factory=list)
    spec: str | None = None  # how the user named the adapter (reproduce commands repeat it)


def run_adapter(
    adapter: Adapter,
    cases: Iterable[Case],
    config: RunConfig,
    expectations: Expectations | None = None,
    progress: Callable[[], None] | None = None,
    *,
    spec: str | None = None,
) -> AdapterRun:
    try:
        version = adapter.version()
    except Exception as exc:  # a broken version() is still a result, not a crash of the run
        version = f"unknown ({type(exc).__name__})"
    run = AdapterRun(adapter, version, spec=spec)
    for case in cases:
        if not config.covers(adapter, case):
            if progress:
                progress()
            continue
        ctx = config.context(case, adapter, spec)
        expected = ctx.expected
        for check in config.checks:
            if not check.applicable(adapter, case, expected):
                continue
            run.results.append(run_one(check, ctx, expectations))
        if progress:
            progress()
    return run


def run_one(check: Check, ctx: CheckContext, expectations: Expectations | None) -> CaseResult:
    """One check on one case, its failures made complete, its outcome decided."""
    adapter, case_id = ctx.adapter.name, ctx.case.id
    known = expectations.lookup(check.id, case_id) if expectations else None
    faults_before = ctx.faults()
    try:
        failures = tuple(complete(f, check, ctx) for f in check.run(ctx))
    except RunTimedOut as exc:
        # The adapter's timeout, not a harness error: nothing more was judged. Both
        # values given, so that completing the failure does not run the adapter again.
        failure = Failure(
            str(exc), command=ctx.command(check.id, exc.cuts or ()), path="run",
            expected=as_json({"run": f"returns within {ctx.run_timeout:g} s"}), observed=as_json({"run": exc.outcome}),
        )  # fmt: skip
        outcome, issue = fault_outcome("timeout", known)
        return CaseResult(adapter, case_id, check.id, outcome, (failure,), issue)
    except Exception as exc:
        tb = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        failure = complete(Failure(f"the check raised: {tb}"), check, ctx)
        return CaseResult(adapter, case_id, check.id, "errored", (failure,))
    if failures:
        # A run of this check that the adapter did not finish (a stdio process that hung,
        # died or broke the protocol; an in-process adapter raising from its own code)
        # labels the failure: the check judged a crash, not the library's events.
        fault = ctx.faults().since(faults_before)
        if fault is not None:
            outcome, issue = fault_outcome(fault, known)
            return CaseResult(adapter, case_id, check.id, outcome, failures, issue)
    outcome, issue = outcome_for(bool(failures), known)
    return CaseResult(adapter, case_id, check.id, outcome, failures, issue)


def complete(failure: Failure, check: Check, ctx: CheckContext) -> Failure:
    """Every failure, wherever it is shown, says how to replay it and what differed, and
    quotes what the adapter printed on stdout besides the protocol while running the case."""
    if failure.command is None:
        failure = replace(failure, command=ctx.command(check.id))
    if failure.stdout_noise is None:
        failure = replace(failure, stdout_noise=ctx.stdout_noise())
    if failure.expected is None or failure.observed is None:
        expected = outcome_of_events(ctx.expected)
        observed = outcome_of(ctx.whole())
        failure = replace(
            failure,
            expected=as_json(expected),
            observed=as_json(observed),
            path=first_difference(expected, observed),
        )
    return steady(failure, ctx.case.served)


def steady(failure: Failure, served: bytes) -> Failure:
    """The failure's texts with the ids its library made up as numbered placeholders
    (conformance/generated_ids.py), so that the same verdict reads the same on every run."""
    message, expected, observed, noise = steady_texts(
        [failure.message, failure.expected, failure.observed, failure.stdout_noise], served
    )
    assert message is not None
    return replace(
        failure, message=message, expected=expected, observed=observed, stdout_noise=noise
    )


# -- parallel runs -----------------------------------------------------------------------
#
# A run is (adapter x case x check) work with no shared state, so it spreads over
# processes: each task is one adapter on a slice of the cases. Workers are forked, so they
# inherit the loaded cases, adapters and checks instead of pickling them (functions in the
# check catalogue do not pickle); where fork is unavailable the run stays sequential.

_FORK_STATE: (
    tuple[list[Adapter], list[Case], RunConfig, list[Expectations | None], list[str | None]] | None
) = None


def _run_slice(adapter_index: int, start: int, stop: int) -> list[CaseResult]:
    assert _FORK_STATE is not None, "worker started without the forked run state"
    adapters, cases, config, expectations, specs = _FORK_STATE
    run = run_adapter(
        adapters[adapter_index],
        cases[start:stop],
        config,
        expectations[adapter_index],
        spec=specs[adapter_index],
    )
    return run.results


def _run_pool(
    tasks: Sequence[tuple[int, int, int]],
    workers: int,
    finished: Callable[[tuple[int, int, int], list[CaseResult]], None] | None = None,
) -> tuple[dict[tuple[int, int, int], list[CaseResult]], list[tuple[int, int, int]], str]:
    """Run ``tasks`` on a fresh forked pool: what finished, what a dead worker took down
    with it, and how the pool broke (empty when it did not). ``finished`` hears of each
    task as it finishes, so that progress moves during the run, not at its end."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    done: dict[tuple[int, int, int], list[CaseResult]] = {}
    lost: list[tuple[int, int, int]] = []
    died = ""
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_worker_signals,
    )
    try:
        futures = {}
        for t in tasks:
            # A worker may die while tasks are still being submitted: the pool then refuses
            # the rest, which are as unfinished as the tasks it took down.
            try:
                futures[pool.submit(_run_slice, *t)] = t
            except BrokenProcessPool as exc:
                lost.append(t)
                died = died or str(exc)
        for future in as_completed(futures):
            key = futures[future]
            try:
                done[key] = future.result()
            except BrokenProcessPool as exc:
                lost.append(key)
                died = died or str(exc)
                continue
            if finished is not None:
                finished(key, done[key])
    except BaseException:
        # Ctrl-C or SIGTERM (the CLI raises it) in the parent: the workers would otherwise
        # run their queue to the end while the parent waits in the pool's exit.
        _end_workers(pool)
        raise
    pool.shutdown(wait=True)
    return done, sorted(lost), died


# How long an interrupted worker has to stop its adapter and gateway processes (a stdio
# adapter gets 2 s to take its stop, a gateway 5 s) before it is killed.
WORKER_GRACE: Final = 8.0


def _worker_signals() -> None:
    """In each forked worker: SIGINT is the parent's to handle (a Ctrl-C reaches the whole
    foreground process group; the parent then ends the workers), and SIGTERM stops the
    processes this worker started, then ends it at once. Python's own handling would raise
    in the task, and the pool would send that back as the task's result and go on."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _worker_terminated)


def _worker_terminated(signum: int, frame: object) -> None:
    # Once: the pool's own manager sends every worker SIGTERM again when it sees one die,
    # and a second handler run inside this one would leave through os._exit before the
    # first has killed what it was stopping.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    stop_now()
    os._exit(128 + signum)


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """SIGTERM to every worker, SIGKILL to any still there after the grace period, all reaped."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with contextlib.suppress(OSError, ValueError):
            process.terminate()
    deadline = time.monotonic() + WORKER_GRACE
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AssertionError):
            process.join(max(0.0, deadline - time.monotonic()))
            if process.exitcode is None:
                process.kill()
                process.join()
    # Only now, with every worker gone: the pool's manager thread sees them dead and ends,
    # so the join in shutdown returns (and nothing of the pool is left for the exit hook
    # of concurrent.futures to trip over).
    pool.shutdown(wait=True, cancel_futures=True)


def _died(key: tuple[int, int, int], why: str) -> list[CaseResult]:
    """The results of a case whose process died, alone, however often it was run."""
    assert _FORK_STATE is not None
    adapters, cases, config, expectations, specs = _FORK_STATE
    adapter_index, start, stop = key
    adapter = adapters[adapter_index]
    message = (
        f"the process running {adapter.name} on this case died ({why or 'no reason given'}): "
        "the library crashed it (a fault in native code, os._exit, out of memory)"
    )
    results = []
    for case in cases[start:stop]:
        if not config.covers(adapter, case):
            continue
        ctx = config.context(case, adapter, specs[adapter_index])
        for check in config.checks:
            if check.applicable(adapter, case, ctx.expected):
                failure = Failure(message, command=ctx.command(check.id))
                known = (
                    listed.lookup(check.id, case.id)
                    if (listed := expectations[adapter_index])
                    else None
                )
                outcome, issue = fault_outcome("crashed", known)
                results.append(
                    CaseResult(adapter.name, case.id, check.id, outcome, (failure,), issue)
                )
    return results


def run_adapters(
    adapters: Sequence[Adapter],
    cases: Sequence[Case],
    config: RunConfig,
    expectations: Sequence[Expectations | None],
    *,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    slice_size: int = 6,
    specs: Sequence[str | None] | None = None,
) -> list[AdapterRun]:
    """Run every adapter on every case, on up to ``jobs`` processes.

    ``progress(adapter_index, cases_done)`` is called as slices finish. The results are
    the same as a sequential run's, in the same order.
    """
    import multiprocessing

    global _FORK_STATE
    case_list = list(cases)
    spec_list: list[str | None] = list(specs) if specs is not None else [None] * len(adapters)
    if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        runs = []
        for i, adapter in enumerate(adapters):
            runs.append(
                run_adapter(
                    adapter, case_list, config, expectations[i],
                    progress=(lambda i=i: progress(i, 1)) if progress else None,  # type: ignore[misc]
                    spec=spec_list[i],
                )
            )  # fmt: skip
        return runs
    versions = []
    for adapter in adapters:
        try:
            versions.append(adapter.version())
        except Exception as exc:
            versions.append(f"unknown ({type(exc).__name__})")
    slices = [
        (a, start, min(start + slice_size, len(case_list)))
        for a in range(len(adapters))
        for start in range(0, len(case_list), slice_size)
    ]
    for adapter in adapters:  # before the fork, so the workers inherit what it imports
        prepare(adapter, (case.protocol for case in case_list if config.covers(adapter, case)))
    by_slice: dict[tuple[int, int, int], list[CaseResult]] = {}
    _FORK_STATE = (list(adapters), case_list, config, list(expectations), spec_list)
    try:
        # A library that kills its process (a segfault in an extension, os._exit, the
        # out-of-memory killer) breaks the pool and every task queued with it. That is the
        # library's outcome on one case, not the end of the run: the unfinished work is run
        # again case by case on fresh pools; when a pool breaks before finishing anything,
        # the first unfinished case runs alone, and a death there is pinned on that case as
        # a crashed result. Each round settles at least one case, so this ends.
        def settle(key: tuple[int, int, int], results: list[CaseResult]) -> None:
            by_slice[key] = results
            if progress:
                progress(key[0], key[2] - key[1])

        done, lost, _ = _run_pool(slices, jobs, settle)
        pending = [(a, i, i + 1) for a, start, stop in lost for i in range(start, stop)]
        while pending:
            done, lost, died = _run_pool(pending, jobs, settle)
            if lost and not done:
                first, *lost = lost
                alone, _, died = _run_pool([first], 1, settle)
                if first not in alone:
                    settle(first, _died(first, died))
            pending = lost
    finally:
        _FORK_STATE = None
    runs = []
    for a, adapter in enumerate(adapters):
        run = AdapterRun(adapter, versions[a], spec=spec_list[a])
        # Slices re-run case by case after a crash are keyed per case: order by position.
        for key in sorted(k for k in by_slice if k[0] == a):
            run.results.extend(by_slice[key])
        runs.append(run)
    return runs
