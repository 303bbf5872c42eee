"""Where the time of a matrix group goes: the harness's share against the library's.

Issue 17, part 4: the full matrix (every group of specs/matrix.toml, Python and JS) over
the bundled cassettes at 100 splits should fit in 15 minutes on 2 cores. A group's run is
process start, loading the adapters and cases, then (adapter x case x check) runs; this
script runs the suite in-process, one adapter at a time, on a subset, and splits the CPU
time of every adapter run into

- ``checks``: the harness outside the adapter (drawing splits, comparing messages,
  shrinking, completing failures);
- ``reference``: the reference normalizer a message-level adapter's mapping reads
  (``conventions.reference_message``);
- ``mapping``: the conventions turning the library's objects into the contract's message
  (``conventions.finish``);
- ``stdio``: for an adapter in another language, the Python side of the protocol
  (request, JSON, schema validation of the reply, parsing events);
- ``library``: the rest of the adapter's run: the library's own code, plus for a stdio
  adapter the CPU of its process (read from ``/proc``), which includes the few
  microseconds its side of the protocol costs.

It fits the library's CPU per run as ``fixed + per_chunk x chunks`` and projects the full
run (the bundled cassettes, ``--examples`` splits) from the splits the checks would draw,
so the lead can see the floor without running the full matrix. Startup (interpreter,
imports, adapter load) is measured separately.

Run it in the group's environment, where the adapters' libraries are installed::

    python benchmarks/bench_matrix.py --adapters reference,openai-sdk \\
        --cassettes cassettes/openai-completions --examples 100
    ~/.cache/stream-harness/matrix/aisuite-*/bin/python benchmarks/bench_matrix.py \\
        --adapters aisuite --cassettes cassettes/openai-completions

Rows are merged by adapter into ``benchmarks/results/matrix.json`` under ``--label``
(e.g. ``before`` / ``after``). CPU time throughout, since the machine is shared.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.protocol import Adapter, AdapterLevel, AdapterResult
from stream_harness.conformance.cases import Case, load_cases
from stream_harness.conformance.checks.engine import CheckContext
from stream_harness.conformance.expectations import expectations_for
from stream_harness.conformance.runner import RunConfig, run_adapter
from stream_harness.contract.facts import bundled_cassettes

RESULTS = Path(__file__).resolve().parent / "results" / "matrix.json"
_TICK = os.sysconf("SC_CLK_TCK")


def child_cpu(pid: int | None) -> float:
    """CPU seconds (user + system) of a running child process, from /proc; 0 if unknown."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


class Meter:
    """CPU seconds by label, of functions wrapped in place (their module attribute)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._undo: list[Callable[[], None]] = []

    def wrap(self, module: Any, attr: str, label: str) -> None:
        original = getattr(module, attr)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[label] = self.seconds.get(label, 0.0) + time.process_time() - start

        setattr(module, attr, timed)
        self._undo.append(lambda: setattr(module, attr, original))

    def restore(self) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()


class TimedAdapter:
    """An adapter that records, per run, its chunks and CPU (own and its process's)."""

    def __init__(self, inner: Adapter) -> None:
        self.inner = inner
        self.name: str = inner.name
        self.level: AdapterLevel = inner.level
        self.protocols: frozenset[str] = inner.protocols
        self.runs: list[
            tuple[str, int, float, float]
        ] = []  # protocol, chunks, python cpu, child cpu

    def version(self) -> str:
        return self.inner.version()

    def _pid(self) -> int | None:
        proc = getattr(self.inner, "_proc", None)
        return proc.popen.pid if proc is not None else None

    def run(
        self,
        protocol: str,
        chunks: Sequence[bytes],
        *,
        status: int = 200,
        headers: Mapping[str, Sequence[str]] | None = None,
    ) -> AdapterResult:
        pid = self._pid()
        child0, cpu0 = child_cpu(pid), time.process_time()
        try:
            return self.inner.run(protocol, chunks, status=status, headers=headers)
        finally:
            cpu = time.process_time() - cpu0
            # A restarted process has another pid; its start is not this run's library time.
            child = child_cpu(pid) - child0 if pid is not None and pid == self._pid() else 0.0
            self.runs.append((protocol, len(chunks), cpu, child))


@contextlib.contextmanager
def metered() -> Iterator[Meter]:
    """The harness's functions inside an adapter run, wrapped where the adapters call them."""
    meter = Meter()

    for module_name in (
        "stream_harness.adapters.library",
        "stream_harness.adapters.processes.stdio",
    ):
        try:
            module = __import__(module_name, fromlist=["_"])
        except ImportError:
            continue
        for attr, label in (("reference_message", "reference"), ("finish", "mapping")):
            if hasattr(module, attr):
                meter.wrap(module, attr, label)
    try:
        yield meter
    finally:
        meter.restore()


def fit(runs: Sequence[tuple[int, float]]) -> tuple[float, float]:
    """Least squares ``cpu = fixed + per_chunk x chunks``; never negative."""
    n = len(runs)
    if n == 0:
        return 0.0, 0.0
    mx = sum(c for c, _ in runs) / n
    my = sum(t for _, t in runs) / n
    var = sum((c - mx) ** 2 for c, _ in runs)
    slope = sum((c - mx) * (t - my) for c, t in runs) / var if var else 0.0
    slope = max(0.0, slope)
    return max(0.0, my - slope * mx), slope


def planned_runs(
    adapter: Adapter, cases: Sequence[Case], examples: int
) -> dict[str, tuple[int, int]]:
    """Per protocol, the distinct adapter runs and their chunks that a full run's checks
    make on these cases: the whole body, every split the split-sensitive checks draw, about
    two truncations (shrinking a failure is not counted: it depends on the failure)."""
    out: dict[str, tuple[int, int]] = {}
    for case in cases:
        if case.protocol not in adapter.protocols:
            continue
        ctx = CheckContext(case, adapter, examples=examples)
        keys = {(), *(tuple(s) for s in ctx.splits())}
        runs, chunks = out.get(case.protocol, (0, 0))
        out[case.protocol] = (runs + len(keys) + 2, chunks + sum(len(k) + 1 for k in keys) + 2)
    return out


def default_subset(protocols: frozenset[str], cases: Sequence[Case]) -> list[Case]:
    """Per protocol: the median-sized stream, the largest stream a single-cut sweep covers
    (every cut of a body up to 1 KB is tried), and the first error response, so that each
    kind of run a full run makes is in the fit."""
    chosen: list[Case] = []
    for protocol in sorted(protocols):
        mine = [c for c in cases if c.protocol == protocol]
        streams = sorted((c for c in mine if c.status < 400), key=lambda c: len(c.body))
        small = [c for c in streams if len(c.body) <= 1024]
        errors = [c for c in mine if c.status >= 400]
        picks = [streams[len(streams) // 2]] if streams else []
        picks += small[-1:] + errors[:1]
        chosen += [c for c in picks if c not in chosen]
    return chosen


def startup_seconds(names: Sequence[str]) -> float:
    """CPU of a fresh interpreter importing the harness and loading these adapters."""
    code = (
        "from stream_harness.adapters.loading import load_adapter\n"
        "from stream_harness.cli.conformance import run_suite\n"
        f"for n in {list(names)!r}:\n"
        "    a = load_adapter(n); a.version()\n"
    )
    start = os.times()
    subprocess.run([sys.executable, "-c", code], check=False, capture_output=True)
    end = os.times()
    return (end.children_user - start.children_user) + (end.children_system - start.children_system)


def measure(name: str, cases: list[Case], examples: int, full_cases: list[Case]) -> dict[str, Any]:
    timed = TimedAdapter(load_adapter(name))
    with metered() as meter:
        cpu0 = time.process_time()
        run = run_adapter(timed, cases, RunConfig(examples=examples), expectations_for(timed.name))
        total_python = time.process_time() - cpu0
    close = getattr(timed.inner, "close", None)
    if callable(close):
        close()
    in_runs = sum(r[2] for r in timed.runs)
    child = sum(r[3] for r in timed.runs)
    seconds = dict(meter.seconds)
    reference = seconds.get("reference", 0.0)
    mapping = seconds.get("mapping", 0.0)
    # A stdio run's Python time (waiting on the pipe is not CPU) is the protocol's: the
    # request, JSON, the reply's schema validation and parsing; its process's is the library's.
    is_stdio = hasattr(timed.inner, "_proc")
    own = in_runs - reference - mapping
    stdio = own if is_stdio else 0.0
    library = child if is_stdio else own
    harness_total = total_python - (0.0 if is_stdio else own)
    harness_per_run = harness_total / max(1, len(timed.runs))
    # The first run of each protocol builds what the adapter keeps and pays the libraries'
    # lazy imports and model builds: a one-time cost, left out of the per-run fit.
    firsts = {r[0]: i for i, r in reversed(list(enumerate(timed.runs)))}
    steady = [r for i, r in enumerate(timed.runs) if firsts[r[0]] != i]
    fits: dict[str, tuple[float, float]] = {}
    for protocol in sorted({r[0] for r in steady}):
        mine = [(r[1], (0.0 if is_stdio else r[2]) + r[3]) for r in steady if r[0] == protocol]
        fits[protocol] = fit(mine)
    overall = fit([(r[1], (0.0 if is_stdio else r[2]) + r[3]) for r in steady])
    planned = planned_runs(timed, full_cases, 100)
    projected_library = 0.0
    projected_runs = 0
    per_protocol: dict[str, Any] = {}
    for protocol, (runs, chunks) in sorted(planned.items()):
        fixed, per_chunk = fits.get(protocol, overall)
        lib_s = runs * fixed + chunks * per_chunk
        projected_library += lib_s
        projected_runs += runs
        per_protocol[protocol] = {
            "runs": runs, "chunks": chunks,
            "library_fixed_ms": round(fixed * 1e3, 3), "library_per_chunk_us": round(per_chunk * 1e6, 3),
            "measured": protocol in fits, "projected_library_cpu_s": round(lib_s, 1),
        }  # fmt: skip
    outcomes: dict[str, int] = {}
    for r in run.results:
        outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
    return {
        "adapter": name,
        "version": run.version,
        "cases": [c.id for c in cases],
        "results": len(run.results),
        "outcomes": outcomes,
        "runs": len(timed.runs),
        "chunks": sum(r[1] for r in timed.runs),
        "cpu_s": {
            "total": round(total_python + child, 3),
            "checks": round(total_python - in_runs, 3),
            "reference": round(reference, 3),
            "mapping": round(mapping, 3),
            "stdio": round(stdio, 3),
            "library": round(library, 3),
        },
        "harness_per_run_ms": round(harness_per_run * 1e3, 3),
        "full_at_100_splits": {
            "runs": projected_runs,
            "projected_library_cpu_s": round(projected_library, 1),
            "projected_harness_cpu_s": round(projected_runs * harness_per_run, 1),
            "by_protocol": per_protocol,
        },
    }


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--adapters", required=True, help="comma-separated adapter names")
    p.add_argument(
        "--cassettes", action="append",
        help="subset measured (default: per protocol the adapter speaks, three bundled cases: see default_subset)",
    )  # fmt: skip
    p.add_argument(
        "--examples", type=int, default=100, help="random splits per check in the measured run"
    )
    p.add_argument("--label", default="latest", help="where the rows go in the results file")
    p.add_argument("--results", type=Path, default=RESULTS)
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    names = [n for n in args.adapters.split(",") if n]
    full_cases, _ = load_cases([bundled_cassettes()])
    rows = {}
    for name in names:
        if args.cassettes:
            cases, _ = load_cases([Path(c) for c in args.cassettes])
        else:
            cases = default_subset(load_adapter(name).protocols, full_cases)
        row = measure(name, cases, args.examples, full_cases)
        rows[name] = row
        c, full = row["cpu_s"], row["full_at_100_splits"]
        print(
            f"{name}: {len(cases)} cases, {row['runs']} runs, {row['chunks']} chunks, {row['results']} results {row['outcomes']}\n"
            f"  CPU {c['total']:.2f} s = checks {c['checks']:.2f} + reference {c['reference']:.2f} + mapping "
            f"{c['mapping']:.2f} + stdio {c['stdio']:.2f} + library {c['library']:.2f}; harness {row['harness_per_run_ms']:.3f} ms/run"
        )
        for protocol, pp in full["by_protocol"].items():
            print(
                f"  {protocol}: library {pp['library_fixed_ms']:.2f} ms/run + {pp['library_per_chunk_us']:.1f} us/chunk"
                f"{'' if pp['measured'] else ' (not measured: overall fit)'}; full: {pp['runs']} runs, {pp['chunks']} chunks -> {pp['projected_library_cpu_s']:.0f} s"
            )
        print(
            f"  full bundled run at 100 splits: {full['runs']} runs -> library {full['projected_library_cpu_s']:.0f} s + "
            f"harness {full['projected_harness_cpu_s']:.0f} s CPU (projected)"
        )
    startup = startup_seconds(names)
    print(f"startup (interpreter, imports, adapters loaded): {startup:.2f} s CPU")
    if args.no_write:
        return
    data = json.loads(args.results.read_text()) if args.results.is_file() else {}
    section = data.setdefault(args.label, {})
    for name, row in rows.items():
        row["startup_cpu_s"] = round(startup, 2)
        row["examples"] = args.examples
        row["load_average"] = [round(x, 1) for x in os.getloadavg()]
        row["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version()}
        section[name] = row
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {args.results} [{args.label}]")


if __name__ == "__main__":
    main()
