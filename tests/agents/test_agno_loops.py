"""agno's run cancellation registry across event loops (agents --jobs runs agents on
threads, each with a loop of its own): the async methods of the process-wide registry take
one asyncio.Lock, which belongs to the first loop that waits on it, so two runs that meet in
it leave one waiting forever (or raising "bound to a different event loop"); the agno row
puts them on the registry's threading lock (harness/stream_harness/agents/frameworks/agno.py).

The stand-in has agno's two locks and a section without an ``await``, as agno's
``InMemoryRunCancellationManager`` has; the last test takes agno's own registry where agno
is installed (the matrix group agent-agno).
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import Any

import pytest

from stream_harness.agents.frameworks.agno import _one_lock_for_every_loop, _ThreadLockAsync


class _Registry:
    """agno's InMemoryRunCancellationManager, as far as its locks go."""

    def __init__(self) -> None:
        self.runs: dict[str, bool] = {}
        self._lock = threading.Lock()
        self._async_lock: Any = asyncio.Lock()

    async def aregister_run(self, run_id: str) -> None:
        async with self._async_lock:
            self.runs[run_id] = False


def _meet(registry: Any, hold: float = 0.3) -> tuple[threading.Thread, threading.Thread]:
    """Two runs on two threads' loops: the first holds the registry's async lock for
    ``hold`` seconds (a section without an await, on a loaded machine), the second asks for
    it meanwhile. Returns the two threads, started."""
    entered = threading.Event()

    async def holder() -> None:
        async with registry._async_lock:
            entered.set()
            time.sleep(hold)

    async def waiter() -> None:
        entered.wait(10)
        await registry.aregister_run("second")

    threads = (
        threading.Thread(target=asyncio.run, args=(holder(),), daemon=True),
        threading.Thread(target=asyncio.run, args=(waiter(),), daemon=True),
    )
    for thread in threads:
        thread.start()
    return threads


def test_an_asyncio_lock_met_by_two_loops_leaves_one_waiting() -> None:
    """What the agno rows met (the test's own premise: without it the next test proves nothing)."""
    registry = _Registry()
    holder, waiter = _meet(registry)
    holder.join(10)
    waiter.join(1.0)
    assert waiter.is_alive() and "second" not in registry.runs
    # Wake the stranded loop (its future was completed from another thread, which never
    # wakes a loop): the thread then ends.
    loop = registry._async_lock._loop
    loop.call_soon_threadsafe(lambda: None)
    waiter.join(10)


def test_on_the_threading_lock_both_runs_register() -> None:
    registry = _Registry()
    _one_lock_for_every_loop(registry)
    assert isinstance(registry._async_lock, _ThreadLockAsync)
    for thread in _meet(registry):
        thread.join(10)
        assert not thread.is_alive()
    assert registry.runs == {"second": False}
    _one_lock_for_every_loop(registry)  # once: the wrapper is not wrapped again
    assert registry._async_lock.lock is registry._lock


def test_a_registry_without_the_two_locks_is_left_as_it_is() -> None:
    class Other:
        _async_lock = asyncio.Lock()

    other = Other()
    _one_lock_for_every_loop(other)
    assert isinstance(other._async_lock, asyncio.Lock)


def test_agnos_own_registry_serves_runs_on_several_loops() -> None:
    cancel = pytest.importorskip("agno.run.cancel")
    registry = cancel.get_cancellation_manager()
    _one_lock_for_every_loop(registry)
    errors: list[BaseException] = []

    def runs(worker: int) -> None:
        async def register() -> None:
            for k in range(300):
                await cancel.aregister_run(f"h6-{worker}-{k}")
                await cancel.acleanup_run(f"h6-{worker}-{k}")

        try:
            asyncio.run(register())
        except BaseException as exc:  # kept for the assertion
            errors.append(exc)

    # Thread switches inside the sections, as under load (without the threading lock,
    # four threads strand a run within seconds).
    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=runs, args=(w,), daemon=True) for w in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
            assert not thread.is_alive(), "a run is stranded in agno's cancellation registry"
    finally:
        sys.setswitchinterval(switching)
    assert errors == []
