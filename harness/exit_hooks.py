"""Stopping the processes we started when this process ends, forked workers included.

``atexit`` handlers do not run in a forked multiprocessing worker (the runner's ``--jobs``:
workers leave through ``os._exit``); ``multiprocessing.util.Finalize`` callbacks do. A
worker that leaves its adapter or gateway processes unstopped orphans them, and never
reaps them: their CPU then appears in no one's account (the matrix reports each group's).
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Callable

_REGISTERED: set[tuple[int, int]] = set()


def stop_at_exit(stop: Callable[[], None]) -> None:
    """Call ``stop`` when this process exits, whether it is the main one or a forked worker;
    once per process however often it is asked (safe to call at every process start)."""
    key = (os.getpid(), id(stop))
    if key in _REGISTERED:
        return
    if not _REGISTERED:
        atexit.register(_run_all)
    _REGISTERED.add(key)
    _CALLBACKS[id(stop)] = stop
    import multiprocessing.util

    multiprocessing.util.Finalize(None, stop, exitpriority=100)


_CALLBACKS: dict[int, Callable[[], None]] = {}


def _run_all() -> None:
    for stop in list(_CALLBACKS.values()):
        stop()
