"""Stopping the processes we started when this process ends, forked workers included.

``atexit`` handlers do not run in a forked multiprocessing worker (the runner's ``--jobs``:
workers leave through ``os._exit``); ``multiprocessing.util.Finalize`` callbacks with an
exit priority run there, and in the main process too (multiprocessing runs them from its
own ``atexit`` hook). A worker that leaves its adapter or gateway processes unstopped
orphans them, and never reaps them: their CPU then appears in no one's account (the
matrix reports each group's).
"""

from __future__ import annotations

import multiprocessing.util
import os
from collections.abc import Callable

_REGISTERED: set[tuple[int, int]] = set()


def stop_at_exit(stop: Callable[[], None]) -> None:
    """Call ``stop`` when this process exits, whether it is the main one or a forked worker;
    once per process however often it is asked (safe to call at every process start).

    Per process, because a finalizer inherited through fork is ignored in the child."""
    key = (os.getpid(), id(stop))
    if key not in _REGISTERED:
        _REGISTERED.add(key)
        multiprocessing.util.Finalize(None, stop, exitpriority=100)
