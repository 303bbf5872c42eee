"""A bound on one run of an in-process adapter: ``--run-timeout`` (default 30 s, as a stdio
adapter's reply).

Python cannot stop a thread, and a library that hangs (a read that never returns, a lock
never released, an endless loop in its parser) would hang the whole report. The choices
were three, and this module takes the first:

- **run the adapter on a thread of its own and stop waiting for it** after the timeout.
  The run is recorded as ``timeout`` (the adapter's failure), with its reproduce command,
  and the report goes on. The
  thread cannot be killed: it is left to finish (a daemon, so it never keeps the process
  alive), and while it is still stuck the adapter is not called again (it was never meant
  to be called concurrently), so its remaining checks are ``timeout`` at once, each saying
  why; once the stuck run returns, the adapter is used again. Cheap (one hand-over between
  two threads per run, 30 to 100 µs on a loaded machine against the 1-5 ms a library takes), works in any
  thread, under pytest and in the runner's forked workers alike, and on every platform;
- SIGALRM raising in the main thread would end the run itself, but only in the main
  thread, only on POSIX, clashes with pytest-timeout and any library's own alarm, and an
  exception raised at an arbitrary point can be swallowed by a library's ``except``;
- running each in-process adapter in a child process (killable) would move every library
  run behind a pipe and a pickle: the cost of a stdio adapter, for every library.

What a thread cannot bound is a library holding the GIL in native code: nothing in the
process runs then; ``--jobs`` workers and the signal handling still end such a run.

What the clock measures is the run, not the loading of the library: an adapter whose
library imports a protocol's modules on first use (LangChain's Vertex AI chat model pulls
in google-cloud-aiplatform, 5 s with bytecode, 30 s compiled from source on a loaded
machine) says which with ``prepare(protocol)``, called by :func:`prepare` on the caller's
thread before the clock starts, and before the runner forks its workers, so that they
inherit the modules instead of each importing them inside its first run.

An adapter that bounds its own runs says so with ``bounds_own_runs = True`` (the stdio
adapters, whose replies have their timeout; the gateways, whose requests have theirs; the
reference, the yardstick, bounded by its input limits) and runs as before, on the
caller's thread.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import queue
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from stream_harness.adapters.processes.stdio import timeout_for
from stream_harness.adapters.protocol import Adapter, AdapterResult, safe_run

DEFAULT_RUN_TIMEOUT: Final = 30.0


class RunTimedOut(Exception):
    """A run exceeded the run timeout, or was not made because an earlier one is still
    stuck; the message is one line. Raised to the caller (a check), never hidden in a
    result: the runner records it as a ``timeout`` check, replaying ``cuts`` (the split that
    hung, when the caller knows it) in its reproduce command."""

    cuts: tuple[int, ...] | None = None

    def __init__(self, message: str, outcome: str) -> None:
        super().__init__(message)
        self.outcome = outcome  # "timed out", or "not run" (an earlier run is still stuck)


def prepare(adapter: Adapter, protocols: Iterable[str]) -> None:
    """The adapter's optional ``prepare(protocol)`` for each of ``protocols``, unbounded:
    the imports a run of that protocol would do, done outside the run timeout. Calling it
    again is cheap (the modules are already loaded); a failure to load is the run's to
    report (the run meets the same failure inside its bound and records it), so nothing
    the hook raises leaves here."""
    hook = getattr(adapter, "prepare", None)
    if callable(hook):
        for protocol in sorted(set(protocols)):
            with contextlib.suppress(Exception):
                hook(protocol)


def bounded(adapter: Adapter) -> bool:
    """Whether the run timeout applies to this adapter (see the module docstring)."""
    return not getattr(adapter, "bounds_own_runs", False)


@dataclass
class _Job:
    call: Callable[[], AdapterResult]
    what: str
    # Held until the run returns: a bare lock is the cheapest hand-back between two
    # threads (a third of an Event's cost, which is a condition over a lock).
    done: _thread.LockType = field(default_factory=_thread.allocate_lock)
    result: AdapterResult | None = None
    error: BaseException | None = None

    def __post_init__(self) -> None:
        self.done.acquire()

    def finished(self) -> bool:
        return not self.done.locked()


class _Runner:
    """One adapter's thread in one process (a forked worker starts its own: threads do not
    survive fork)."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter  # kept, so that the id keying _RUNNERS is not reused
        self.owner = os.getpid()
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self.stuck: _Job | None = None
        self.prepared: set[str] = set()  # protocols whose prepare() ran in this process
        self.stuck_after = 0.0
        thread = threading.Thread(
            target=self._serve, name=f"stream-harness adapter {adapter.name}", daemon=True
        )
        thread.start()

    def _serve(self) -> None:
        while True:
            job = self.jobs.get()
            try:
                job.result = job.call()
            except BaseException as exc:  # SystemExit, KeyboardInterrupt: raised in the caller
                job.error = exc
            job.done.release()

    def call(self, job: _Job, base: float, timeout: float) -> AdapterResult:
        if self.stuck is not None:
            if not self.stuck.finished():
                raise RunTimedOut(
                    f"not run: the adapter is still stuck in a run that exceeded the run timeout of "
                    f"{self.stuck_after:g} s ({self.stuck.what})",
                    "not run",
                )
            self.stuck = None
        self.jobs.put(job)
        if not job.done.acquire(timeout=timeout):
            self.stuck, self.stuck_after = job, base
            raise RunTimedOut(
                f"the adapter did not return within the run timeout of {base:g} s ({job.what}): "
                "the run is abandoned, the report goes on",
                "timed out",
            )
        if job.error is not None:
            raise job.error
        assert job.result is not None
        return job.result


_RUNNERS: dict[int, _Runner] = {}
_LOCK = threading.Lock()


def _runner(adapter: Adapter) -> _Runner:
    with _LOCK:
        runner = _RUNNERS.get(id(adapter))
        if runner is None or runner.owner != os.getpid() or runner.adapter is not adapter:
            runner = _RUNNERS[id(adapter)] = _Runner(adapter)
        return runner


def run_within(
    adapter: Adapter,
    timeout: float | None,
    protocol: str,
    chunks: Sequence[bytes],
    *,
    status: int = 200,
    headers: Mapping[str, Sequence[str]] | None = None,
    case: str | None = None,
    what: str = "",
) -> AdapterResult:
    """:func:`~stream_harness.adapters.protocol.safe_run`, bounded by ``timeout`` seconds
    (scaled with the work as a stdio adapter's is: a large body in 1-byte chunks takes
    longer) when the adapter does not bound its own runs; None: unbounded.

    The adapter's :func:`prepare` for ``protocol`` runs first, outside the bound.
    Raises :class:`RunTimedOut`; ``what`` names the run in its message; ``case`` is
    passed on (the case id the run is for, set in the adapter's thread)."""
    if timeout is None or not bounded(adapter):
        return safe_run(adapter, protocol, chunks, status=status, headers=headers, case=case)
    runner = _runner(adapter)
    # Not while a run is stuck (this one will not be made): the stuck run may hold the
    # import lock of a module the hook would wait for.
    if protocol not in runner.prepared and (runner.stuck is None or runner.stuck.finished()):
        prepare(adapter, (protocol,))
        runner.prepared.add(protocol)
    job = _Job(
        lambda: safe_run(adapter, protocol, chunks, status=status, headers=headers, case=case),
        what or case or protocol,
    )
    return runner.call(job, timeout, timeout_for(timeout, chunks))
