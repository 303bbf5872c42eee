"""Processes we start are stopped when the process that started them ends, forked pool
workers included (where atexit does not run)."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from stream_harness.adapters.processes.exit_hooks import stop_at_exit

_MARKS: list[Path] = []


def _mark() -> None:
    for path in _MARKS:
        path.write_text(str(os.getpid()), encoding="utf-8")


def _in_worker(folder: str) -> int:
    _MARKS[:] = [Path(folder) / f"stopped-{os.getpid()}"]
    stop_at_exit(_mark)
    stop_at_exit(_mark)  # asked again: still once
    return os.getpid()


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_a_forked_worker_runs_its_stop_hook_when_the_pool_ends(tmp_path: Path) -> None:
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork")) as pool:
        pid = pool.submit(_in_worker, str(tmp_path)).result()
    mark = tmp_path / f"stopped-{pid}"
    assert mark.is_file() and mark.read_text(encoding="utf-8") == str(pid)
    assert len(list(tmp_path.iterdir())) == 1
