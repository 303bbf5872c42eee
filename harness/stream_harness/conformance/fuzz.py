"""``stream-harness fuzz``: mutate every bundled cassette of every protocol and check that
the stream handling never breaks.

For each protocol, hypothesis draws a streaming body of that protocol's cassettes, one
mutation of it (harness/stream_harness/conformance/mutations.py: byte flips, truncation, duplicated, dropped and
reordered units, garbage, oversized fields, deep nesting, invalid UTF-8, numbers out of
range) and a split into chunks, and runs it through the reference normalizer (or an
adapter under test, ``--adapter module:object``). Each run is checked (:func:`problems`):

* no exception escapes, and a run ends within ``--timeout`` seconds (no hang);
* exactly one terminal event, the last one, and the contract (C1-C12) holds;
* nothing received before the fault is lost: the terminal message holds every text and
  thinking delta that was emitted, and a truncated body's text is a prefix of the whole
  body's;
* the reference's own safety net did not fire (an ``internal error`` is a bug of ours)
  and any split gives the events of the whole body.

A finding is shrunk by hypothesis to a minimal reproducer, written next to the results
file as the mutated body with the ``stream-harness normalize`` command that replays it.
Results (mutations per protocol, findings, time) go to a JSON file. Exit status: 0 when
mutations ran and found nothing, 1 on findings, 2 on bad input (no cassettes, no
mutations, an adapter that does not load): never green on nothing.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hseed
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.processes.deadline import RunTimedOut, run_within
from stream_harness.adapters.protocol import AdapterLoadError
from stream_harness.conformance.config import ConfigError, load_config
from stream_harness.conformance.mutations import Mutation, framing_of, mutations
from stream_harness.contract.events import (
    DoneEvent,
    ErrorEvent,
    Event,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallDeltaEvent,
)
from stream_harness.contract.facts import bundled_cassettes
from stream_harness.contract.rules import check_contract
from stream_harness.providers.base import INTERNAL_ERROR
from stream_harness.providers.registry import choices_metavar, get_normalizer, protocol_ids
from stream_harness.recordings.cassette import CassetteError, load_cassette
from stream_harness.recordings.chunking import format_cuts, split_at

Runner = Callable[[str, Sequence[bytes]], list[Event] | None]


class FuzzInputError(Exception):
    """Bad input to the fuzz command (printed as one line, exit status 2)."""


class Hang(Exception):
    """A run took longer than its time budget."""


class AdapterCrashed(Exception):
    """An adapter's run raised; the message is its crash line (adapters/crash.py)."""


# -- one run ----------------------------------------------------------------------------------


def reference_events(protocol: str, chunks: Sequence[bytes]) -> list[Event]:
    """The reference normalizer's events, fed chunk by chunk and closed."""
    norm = get_normalizer(protocol)
    out: list[Event] = []
    for chunk in chunks:
        out.extend(norm.feed(chunk))
    out.extend(norm.close())
    return out


def _delta_texts(events: Sequence[Event]) -> dict[int, str]:
    parts: dict[int, list[str]] = {}
    for event in events:
        if isinstance(event, TextDeltaEvent | ThinkingDeltaEvent):
            parts.setdefault(event.content_index, []).append(event.delta)
    return {i: "".join(p) for i, p in parts.items()}


def _block_texts(event: Event) -> dict[int, str]:
    if not isinstance(event, DoneEvent | ErrorEvent):
        return {}
    out = {}
    for i, block in enumerate(event.message.content):
        content = getattr(block, "content", None)
        if isinstance(content, str) and block.type in ("text", "thinking"):
            out[i] = content
    return out


def _unparseable_calls(events: Sequence[Event]) -> set[int]:
    """content_index of the tool calls whose argument text is not one strict JSON value."""
    fragments: dict[int, list[str]] = {}
    for event in events:
        if isinstance(event, ToolCallDeltaEvent):
            fragments.setdefault(event.content_index, []).append(event.delta)
    out = set()
    for index, parts in fragments.items():
        try:
            json.loads("".join(parts))
        except (ValueError, RecursionError):
            out.add(index)
    return out


def event_problems(events: Sequence[Event], *, reference: bool = True) -> list[str]:
    """What is wrong with one run's events (empty: nothing)."""
    out: list[str] = []
    if not events:
        return ["no events at all"]
    terminals = [e for e in events if e.type in ("done", "error")]
    if len(terminals) != 1:
        out.append(f"{len(terminals)} terminal events (exactly one expected)")
    elif events[-1].type not in ("done", "error"):
        out.append("the terminal event is not the last one")
    tolerated = _unparseable_calls(events)
    for v in check_contract(events):
        at = events[v.index] if v.index is not None and v.index < len(events) else None
        if v.rule == "C9" and getattr(at, "content_index", None) in tolerated:
            # harness/stream_harness/contract/partial_json.py: past a parse failure the final value need not
            # extend the live one; mutated argument text produces exactly that.
            continue
        out.append(f"contract {v.rule}: {v.message}")
    last = events[-1]
    if reference and isinstance(last, ErrorEvent) and last.error_message.startswith(INTERNAL_ERROR):
        out.append(f"the never-raise net fired: {last.error_message[:200]}")
    kept = _block_texts(last)
    for index, streamed in _delta_texts(events).items():
        if kept.get(index) != streamed:
            out.append(f"block {index}: text streamed before the end is not in the final message")
    return out


def problems(
    protocol: str,
    mutation: Mutation,
    cuts: Sequence[int],
    *,
    run: Runner | None = None,
    baseline: list[Event] | None = None,
) -> list[str]:
    """Every problem of one mutant split at ``cuts`` (reference unless ``run`` is given)."""
    runner = run or reference_events
    chunks = split_at(mutation.body, cuts)
    try:
        events = runner(protocol, chunks)
    except Hang:
        raise
    except AdapterCrashed as exc:  # already one line, with where in the adapter's code
        return [f"raised {str(exc)[:300]}"]
    except Exception as exc:
        summary = " ".join(traceback.format_exception_only(type(exc), exc)[-1].split())
        return [f"raised {summary[:300]}"]
    if events is None:  # a message-level adapter that returned: nothing more to check
        return []
    out = event_problems(events, reference=run is None)
    if run is None:
        whole = reference_events(protocol, [mutation.body])
        if whole != events:
            out.append("the split gives other events than the whole body")
    if mutation.kind == "truncate" and baseline:
        full = _block_texts(baseline[-1])
        for index, text in _block_texts(events[-1]).items():
            if index in full and not full[index].startswith(text):
                out.append(f"block {index}: a truncated body's text is not a prefix of the whole")
    return out


# -- the runs ------------------------------------------------------------------------------


@dataclass(slots=True)
class Finding:
    protocol: str
    cassette: str
    kind: str
    detail: str
    problems: list[str]
    body_file: str = ""
    command: str = ""
    cuts: list[int] = field(default_factory=list)
    body: bytes = b""  # the shrunk mutant (written to body_file, not to the JSON)

    def as_json(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "cassette": self.cassette,
            "kind": self.kind,
            "detail": self.detail,
            "problems": self.problems,
            "body_bytes": len(self.body),
            "body_file": self.body_file,
            "command": self.command,
        }


@dataclass(slots=True)
class ProtocolResult:
    protocol: str
    cassettes: int
    bodies: int
    mutations: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0


def streaming_bodies(cassettes: Path, protocol: str) -> tuple[int, list[tuple[str, bytes]]]:
    """(number of cassettes, [(cassette path, body)]) of one protocol's successful streams."""
    folder = cassettes / protocol
    paths = sorted(folder.glob("*.yaml")) if folder.is_dir() else []
    out = []
    for path in paths:
        try:
            cassette = load_cassette(path)
        except CassetteError:
            continue  # lint's business
        for inter in cassette.interactions:
            if inter.response.status < 400 and inter.response.body:
                out.append((str(path), inter.response.body))
    return len(paths), out


@contextmanager
def _budget(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` when the block runs longer than ``seconds`` (main thread, Unix)."""
    if seconds <= 0 or not hasattr(signal, "setitimer"):
        yield
        return

    def _alarm(signum: int, frame: Any) -> None:
        raise Hang(f"no result after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def fuzz_protocol(
    protocol: str,
    bodies: list[tuple[str, bytes]],
    *,
    examples: int,
    seed: int,
    timeout: float,
    run: Runner | None = None,
    max_findings: int = 5,
) -> ProtocolResult:
    """Run ``examples`` mutations of ``bodies``; each distinct finding shrunk to a minimum."""
    result = ProtocolResult(protocol, len({c for c, _ in bodies}), len(bodies))
    baselines = {body: reference_events(protocol, [body]) for _, body in bodies}
    seen: set[str] = set()
    start = time.perf_counter()
    remaining = examples
    shrinking = [False]
    current: list[Any] = []  # the last failing case (hypothesis replays the minimal one last)
    cases = _drawn_cases(protocol, bodies)

    while remaining > 0 and len(result.findings) < max_findings:
        batch = remaining
        current.clear()

        @_batch_settings(batch)
        @given(case=cases)
        def one(case: tuple[int, Mutation, list[int]]) -> None:
            index, mutation, cuts = case
            cassette, original = bodies[index]
            if not shrinking[0]:
                result.mutations += 1
                result.by_kind[mutation.kind] = result.by_kind.get(mutation.kind, 0) + 1
            baseline = baselines[original]
            try:
                with _budget(timeout):
                    found = problems(protocol, mutation, cuts, run=run, baseline=baseline)
            except Hang as exc:
                found = [f"hang: {exc}"]
            signature = found[0].split(":")[0] if found else ""
            if found and signature not in seen:
                shrinking[0] = True
                current[:] = [cassette, mutation, cuts, found]
                raise AssertionError(found[0])

        test = hseed(seed + len(result.findings))(one)
        try:
            test()
        except AssertionError:
            cassette, mutation, cuts, found = current
            result.findings.append(
                Finding(
                    protocol,
                    cassette,
                    mutation.kind,
                    mutation.detail,
                    found,
                    cuts=list(cuts),
                    body=mutation.body,
                )
            )
            seen.add(found[0].split(":")[0])
        shrinking[0] = False
        remaining = examples - result.mutations
        if not current:
            break
    result.seconds = time.perf_counter() - start
    return result


def _drawn_cases(
    protocol: str, bodies: list[tuple[str, bytes]]
) -> SearchStrategy[tuple[int, Mutation, list[int]]]:
    """One fuzz case: which body, its mutation, and up to six cuts of the mutant."""

    @st.composite
    def cases(draw: st.DrawFn) -> tuple[int, Mutation, list[int]]:
        index = draw(st.integers(0, len(bodies) - 1))
        body = bodies[index][1]
        mutation = draw(mutations(body, framing_of(protocol, body)))
        size = max(1, len(mutation.body))
        cuts = sorted(set(draw(st.lists(st.integers(1, size), max_size=6))))
        return index, mutation, cuts

    return cases()


def _batch_settings(batch: int) -> settings:
    """Hypothesis settings for one batch of ``batch`` examples: no deadline or database,
    generate then shrink, stop at the first bug."""
    return settings(
        max_examples=batch,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate, Phase.shrink],
        report_multiple_bugs=False,
    )


def _write_reproducers(
    results: list[ProtocolResult], out: Path, adapter: str, timeout: float
) -> None:
    """Each shrunk mutant as a raw body beside the results, with the command replaying it."""
    folder = out.parent / (out.stem + "-findings")
    for res in results:
        for n, finding in enumerate(res.findings):
            folder.mkdir(parents=True, exist_ok=True)
            body_file = folder / f"{res.protocol}-{n}.body"
            body_file.write_bytes(finding.body)
            finding.body_file = str(body_file)
            split = format_cuts(split_at(finding.body, finding.cuts))
            finding.command = (
                f"stream-harness normalize {body_file} --protocol {res.protocol} --split {split}"
                + (f" --adapter {adapter}" if adapter != "reference" else "")
                # The bound the finding was made under (a hang pasted at the 30 s default waits 30 s).
                + (f" --run-timeout {timeout:g}" if adapter != "reference" and timeout > 0 else "")
            )


def run_fuzz(
    cassettes: Path,
    protocols: Sequence[str],
    *,
    examples: int,
    seed: int = 0,
    timeout: float = 10.0,
    adapter: str | None = None,
    out: Path | None = None,
) -> dict[str, Any]:
    """Fuzz every protocol; returns the results document (also written to ``out``)."""
    if examples <= 0:
        raise FuzzInputError(f"--examples must be positive (got {examples}): nothing would run")
    if not cassettes.is_dir():
        raise FuzzInputError(f"{cassettes}: not a directory of cassettes")
    run: Runner | None = None
    adapter_name = "reference"
    handled = set(protocol_ids())
    if adapter is not None and adapter != "reference":
        run, adapter_name, handled = _adapter_runner(adapter, timeout)
    selected = [p for p in (protocols or protocol_ids()) if p in handled]
    unknown = [p for p in protocols if p not in protocol_ids()]
    if unknown:
        raise FuzzInputError(
            f"unknown protocol(s): {', '.join(unknown)} (known: {', '.join(protocol_ids())})"
        )
    results: list[ProtocolResult] = []
    started = time.perf_counter()
    for protocol in selected:
        count, bodies = streaming_bodies(cassettes, protocol)
        if not bodies:
            continue
        res = fuzz_protocol(
            protocol, bodies, examples=examples, seed=seed, timeout=timeout, run=run
        )
        res.cassettes = count
        results.append(res)
    if not results:
        raise FuzzInputError(
            f"{cassettes}: no streaming cassette of {', '.join(selected) or 'any protocol'}"
        )
    if sum(r.mutations for r in results) == 0:
        raise FuzzInputError("no mutation ran")
    if out is not None:
        _write_reproducers(results, out, adapter or "reference", timeout)
    document = {
        "adapter": adapter_name,
        "cassettes": str(cassettes),
        "examples_per_protocol": examples,
        "seed": seed,
        "timeout_seconds": timeout,
        "seconds": round(time.perf_counter() - started, 2),
        "protocols": [
            {
                "protocol": r.protocol,
                "cassettes": r.cassettes,
                "bodies": r.bodies,
                "mutations": r.mutations,
                "by_kind": dict(sorted(r.by_kind.items())),
                "findings": [f.as_json() for f in r.findings],
                "seconds": round(r.seconds, 2),
            }
            for r in results
        ],
    }
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return document


def _adapter_runner(spec: str, timeout: float) -> tuple[Runner, str, set[str]]:
    """The adapter's runs, each bounded by ``timeout`` as `check` bounds them (on a thread
    of its own: the SIGALRM budget reaches only the main thread, and a library's
    ``except Exception`` swallows it); a run that does not return is a :class:`Hang`."""
    try:
        # A module:object of the project is imported from its folder, as `check` imports it.
        source = load_config().source
        adapter = load_adapter(spec, project=source.parent if source is not None else None)
    except AdapterLoadError as exc:
        raise FuzzInputError(str(exc)) from None

    def run(protocol: str, chunks: Sequence[bytes]) -> list[Event] | None:
        try:
            result = run_within(
                adapter, timeout if timeout > 0 else None, protocol, chunks, status=200,
                headers={"content-type": ["text/event-stream"]},
            )  # fmt: skip
        except RunTimedOut as exc:
            raise Hang(str(exc)) from None
        if result.crashed:
            raise AdapterCrashed(result.crashed)
        return list(result.events) if result.events is not None else None

    return run, adapter.name, set(adapter.protocols)


# -- the command ------------------------------------------------------------------------------


def _cassette_root(given: str | None) -> Path:
    if given:
        return Path(given)
    configured = load_config().cassettes
    return configured[0] if configured else bundled_cassettes()


def _cmd_fuzz(args: argparse.Namespace) -> int:
    try:
        document = run_fuzz(
            _cassette_root(args.cassettes),
            args.protocol or [],
            examples=args.examples,
            seed=args.seed,
            timeout=args.timeout,
            adapter=args.adapter,
            out=Path(args.out) if args.out else None,
        )
    except (FuzzInputError, ConfigError) as exc:
        print(f"stream-harness fuzz: {exc}", file=sys.stderr)
        return 2
    findings = 0
    for proto in document["protocols"]:
        found = proto["findings"]
        findings += len(found)
        print(
            f"{proto['protocol']}: {proto['mutations']} mutations of {proto['bodies']} bodies "
            f"({proto['cassettes']} cassettes), {len(found)} finding(s), {proto['seconds']} s"
        )
        for f in found:
            print(f"  {f['kind']} ({f['detail']}): {'; '.join(f['problems'])[:300]}")
            print(f"    reproduce: {f['command']}")
    if args.out:
        print(f"results: {args.out}")
    return 1 if findings else 0


def add_parser(subparsers: Any) -> None:
    """Register ``stream-harness fuzz`` (called from harness/stream_harness/cli/main.py)."""
    p = subparsers.add_parser(
        "fuzz",
        help="mutate every bundled cassette of every protocol and check nothing breaks",
    )

    p.add_argument(
        "--cassettes",
        default=None,
        help="cassette folder, one sub-folder per protocol (default: the first of [tool.stream-harness] cassettes, else the bundled cassettes)",
    )
    p.add_argument(
        "--protocol",
        action="append",
        metavar=choices_metavar(),
        help="only this protocol (repeatable)",
    )
    p.add_argument(
        "--examples", type=int, default=1000, help="mutations per protocol (default 1000)"
    )
    p.add_argument(
        "--seed", type=int, default=0, help="hypothesis seed (default 0: the same run every time)"
    )
    p.add_argument(
        "--timeout", type=float, default=10.0, help="seconds one run may take before it is a hang"
    )
    p.add_argument(
        "--adapter", help="fuzz this adapter (name or module:object) instead of the reference"
    )
    p.add_argument(
        "--out",
        default="fuzz-results.json",
        help="write the results (JSON) here; reproducers go beside it (default fuzz-results.json)",
    )
    p.set_defaults(func=_cmd_fuzz)


__all__ = [
    "Finding",
    "FuzzInputError",
    "ProtocolResult",
    "add_parser",
    "event_problems",
    "problems",
    "run_fuzz",
]
