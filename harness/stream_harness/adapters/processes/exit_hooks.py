"""Stopping the processes we started when this process ends, forked workers included.

``atexit`` handlers do not run in a forked multiprocessing worker (the runner's ``--jobs``:
workers leave through ``os._exit``); ``multiprocessing.util.Finalize`` callbacks with an
exit priority run there, and in the main process too (multiprocessing runs them from its
own ``atexit`` hook). A worker that leaves its adapter or gateway processes unstopped
orphans them, and never reaps them: their CPU then appears in no one's account (the
matrix reports each group's).

A worker told to end by a signal (SIGTERM from the runner when the run is interrupted)
does not get to its normal exit: :func:`stop_now` runs the same hooks at once, before the
worker leaves through ``os._exit``.
"""

from __future__ import annotations

import contextlib
import multiprocessing.util
import os
from collections.abc import Callable

_REGISTERED: set[tuple[int, int]] = set()
# This process's hooks, in the order asked, for stop_now (a forked child's copy of its
# parent's list is ignored: the processes are the parent's to stop).
_HOOKS: list[tuple[int, Callable[[], None]]] = []


def stop_at_exit(stop: Callable[[], None]) -> None:
    """Call ``stop`` when this process exits, whether it is the main one or a forked worker;
    once per process however often it is asked (safe to call at every process start).

    Per process, because a finalizer inherited through fork is ignored in the child."""
    key = (os.getpid(), id(stop))
    if key not in _REGISTERED:
        _REGISTERED.add(key)
        _HOOKS.append((key[0], stop))
        multiprocessing.util.Finalize(None, stop, exitpriority=100)


def stop_now() -> None:
    """Run this process's hooks now (each is idempotent: they run again at exit for nothing).

    For a process about to end without its exit handlers: a worker ending on a signal. A
    hook that fails does not keep the others from running."""
    pid = os.getpid()
    for owner, stop in list(_HOOKS):
        if owner == pid:
            with contextlib.suppress(Exception):
                stop()
