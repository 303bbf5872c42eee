"""SIGINT and SIGTERM end a real ``stream-harness check`` cleanly: exit 130 / 143, one line
saying the run was interrupted and how far it got, no traceback, and every process the run
started (pool workers, stdio adapter processes and what they started) ended.

The adapter is a stdio adapter written here in Python (no Node needed) that records its
pid and the pid of a child it starts, and is slow enough that the run is still going when
the signal comes. With Node and the JS adapters installed, one run of ``js-openai`` too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from stream_harness.adapters.processes.js import missing as js_missing
from stream_harness.contract.facts import bundled_cassettes

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

# A stdio adapter that answers every run after a pause (so a run lasts), with a child of
# its own that never ends by itself: the group kill must take it.
SLOW_ADAPTER = textwrap.dedent(
    """
    import json, os, subprocess, sys, time
    pids = sys.argv[1]
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    with open(pids, "a") as f:
        f.write(f"{os.getpid()}\\n{child.pid}\\n")
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["cmd"] == "stop":
            break
        if msg["cmd"] == "start":
            reply = {"version": 1, "implementation": {"name": "slow", "language": "python", "version": "0"},
                     "protocols": ["openai-completions"], "surface": "message"}
        else:
            time.sleep(0.05)
            reply = {"seq": msg["seq"], "errored": {"message": "slow adapter"}}
        sys.stdout.write(json.dumps(reply) + "\\n")
        sys.stdout.flush()
    """
)

# Generous: a bound on "it ended", not a speed target.
ENDED_WITHIN = 60.0
OPENAI_CASE = "openai-completions/text_plain.yaml"


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie has ended: reaping it is its parent's business)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def descendants(root: int) -> set[int]:
    """Every process under ``root`` now (Linux /proc; empty elsewhere)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            parents[int(entry.name)] = int(
                entry.joinpath("stat").read_text().rsplit(")", 1)[1].split()[1]
            )
        except (OSError, ValueError, IndexError):
            continue
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier} - found
        found |= frontier
    return found


def still_running(pids: set[int]) -> str:
    return "processes still running: " + "; ".join(
        f"{p} {_cmdline(p)!r}" for p in sorted(pids) if alive(p)
    )


def wait_for(predicate: object, what: str, within: float = ENDED_WITHIN) -> None:
    deadline = time.monotonic() + within
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"{what} within {within:.0f} s")
        time.sleep(0.05)


def start_check(tmp_path: Path, adapter: str, jobs: int) -> subprocess.Popen[str]:
    env = {**os.environ, "STREAM_HARNESS_CONFIG": ""}
    return subprocess.Popen(
        [sys.executable, "-m", "stream_harness.cli.main", "check", "--adapter", adapter,
         "--cassettes", str(bundled_cassettes() / "openai-completions"), "--examples", "200",
         "--jobs", str(jobs), "--format", "plain"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # its own group, as a shell job has
    )  # fmt: skip


def interrupt_and_check(proc: subprocess.Popen[str], signum: int, pids: set[int]) -> str:
    """Send ``signum`` once ``pids`` are known; the exit status, the stderr and the pids gone."""
    pids |= descendants(proc.pid)
    if signum == signal.SIGINT:
        os.killpg(proc.pid, signum)  # Ctrl-C at a terminal: the whole foreground group
    else:
        proc.send_signal(signum)  # a CI runner cancelling the job: the process alone
    try:
        _, err = proc.communicate(timeout=ENDED_WITHIN)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(
            f"the run did not end within {ENDED_WITHIN:.0f} s of {signal.Signals(signum).name}"
        )
    assert proc.returncode == 128 + signum, err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if "interrupted" in line]
    assert len(lines) == 1, err
    assert f"interrupted ({'SIGTERM' if signum == signal.SIGTERM else 'Ctrl-C'})" in lines[0]
    assert "(adapter, case) pair(s) judged" in lines[0] and "nothing was reported" in lines[0]
    wait_for(lambda: not any(alive(p) for p in pids), still_running(pids))
    return err


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ends_the_run_and_every_process_it_started(
    tmp_path: Path, signum: int, jobs: int
) -> None:
    script = tmp_path / "slow_adapter.py"
    script.write_text(SLOW_ADAPTER, encoding="utf-8")
    pid_file = tmp_path / "pids"
    proc = start_check(tmp_path, f"cmd:{sys.executable} {script} {pid_file}", jobs)
    # The adapter loaded in the parent, and with --jobs 2 one more in each worker.
    expected = 2 * (1 + (jobs if jobs > 1 else 0))

    def recorded() -> list[int]:
        return [int(p) for p in pid_file.read_text().split()] if pid_file.is_file() else []

    try:
        wait_for(
            lambda: len(recorded()) >= expected or proc.poll() is not None,
            "the adapters did not start",
        )
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(0.5)  # into the runs
        interrupt_and_check(proc, signum, set(recorded()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert len(recorded()) >= expected


@pytest.mark.skipif(
    js_missing() is not None, reason=f"JS adapters not runnable here: {js_missing()}"
)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ends_a_js_adapter_run_with_its_node_processes(
    tmp_path: Path, signum: int
) -> None:
    proc = start_check(tmp_path, "js-openai", 2)
    try:
        # Node processes: the parent's and one per worker.
        wait_for(
            lambda: (
                sum("node" in _cmdline(p) for p in descendants(proc.pid)) >= 3
                or proc.poll() is not None
            ),
            "the node adapters did not start",
        )
        assert proc.poll() is None, proc.communicate()[1]
        interrupt_and_check(proc, signum, set())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGINT, 0), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
def test_serve_stops_on_ctrl_c_and_is_terminated_by_sigterm(
    tmp_path: Path, signum: int, code: int
) -> None:
    """Ctrl-C is serve's documented way to stop (exit 0); SIGTERM is a termination (143),
    as for every command, and the server is stopped either way."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "stream_harness.cli.main", "serve", str(bundled_cassettes() / OPENAI_CASE)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "STREAM_HARNESS_CONFIG": ""},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        assert "serving" in proc.stdout.readline()
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=ENDED_WITHIN)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == code, err
    assert "Traceback" not in err, err


def test_an_interrupted_recording_writes_nothing_and_says_which_signal(tmp_path: Path) -> None:
    from stream_harness.cli.main import Terminated
    from stream_harness.workflow.writer import write_failure

    assert write_failure(KeyboardInterrupt(), str(tmp_path / "x.yaml")) == 130
    assert write_failure(Terminated(), str(tmp_path / "x.yaml")) == 143


@pytest.mark.skipif(
    js_missing() is not None, reason=f"JS agent rows not runnable here: {js_missing()}"
)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ends_a_js_agent_run_with_one_node_process_per_job(
    tmp_path: Path, signum: int
) -> None:
    # retries_exhausted keeps LangGraph.js retrying for its whole 60 s: the runs are busy
    # and read no stop request, so the processes must be killed, not waited for.
    env = {**os.environ, "STREAM_HARNESS_CONFIG": ""}
    proc = subprocess.Popen(
        [sys.executable, "-m", "stream_harness.cli.main", "agents", "--agent", "js-langgraph",
         "--jobs", "2", "--scenarios",
         str(bundled_cassettes() / "agent-scenarios" / "retries_exhausted.yaml")],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        nodes: set[int] = set()

        def two_nodes() -> bool:
            nodes.update(p for p in descendants(proc.pid) if "node" in _cmdline(p))
            return len(nodes) >= 2 or proc.poll() is not None

        wait_for(two_nodes, "the two node processes did not start")
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(1.0)  # into the runs
        if signum == signal.SIGINT:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        _, err = proc.communicate(timeout=ENDED_WITHIN)
        assert proc.returncode == 128 + signum, err
        assert "Traceback" not in err, err
        (line,) = [x for x in err.splitlines() if "interrupted" in x]
        assert f"interrupted ({'SIGTERM' if signum == signal.SIGTERM else 'Ctrl-C'})" in line
        wait_for(lambda: not any(alive(p) for p in nodes), still_running(nodes))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
