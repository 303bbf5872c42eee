"""The engine every check family runs on: the context of one (adapter, case) pair, the
split plan, shrinking, and the failure a check returns (the catalogue and its families are
documented in specs/checks.md).

A check returns failures, each with the smallest reproducing split it found and the CLI
line that replays it. Splits are drawn from a seeded PRNG rather than hypothesis' engine,
so that a report is reproducible from its header (the seed) and a run costs exactly
``examples`` adapter calls per check; a failing split is shrunk by removing runs of cut
points, then single ones, until none can go, which takes a planted split bug down to its
single cut point.

The engine runs adapters only through the Adapter protocol and the run deadline: what a
family needs of one kind of adapter (a gateway's exchanges, a WebSocket session) is
imported by that family's module, never here.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from stream_harness.adapters.processes.deadline import DEFAULT_RUN_TIMEOUT, RunTimedOut, run_within
from stream_harness.adapters.protocol import Adapter, AdapterLevel, AdapterResult
from stream_harness.conformance.cases import Case
from stream_harness.conformance.config import DEFAULT_SINGLE_CUT_LIMIT
from stream_harness.conformance.outcomes import Fault
from stream_harness.conformance.reproduce import (
    SPLIT_TEXT_LIMIT,
    ReplayOptions,
    check_command,
    split_text,
)
from stream_harness.contract.diff import first_difference, short_repr
from stream_harness.contract.events import AssistantMessage, DoneEvent, ErrorEvent, Event
from stream_harness.recordings.chunking import SplitSpecError, cuts_of, split_at, trouble_spots
from stream_harness.recordings.inputs import display_path


@dataclass(frozen=True, slots=True)
class Failure:
    """One violation. ``expected`` and ``observed`` are JSON texts, in full; ``path`` is where
    they first differ (:func:`stream_harness.contract.diff.first_difference`); ``command`` replays it."""

    message: str
    split: str | None = None  # the --split spec that reproduces it
    command: str | None = None
    expected: str | None = None
    observed: str | None = None
    path: str | None = None
    # What the adapter printed on stdout besides the protocol while running this case (a
    # stdio adapter's ``raw.stdout_noise``): often the library's own word on what went wrong.
    stdout_noise: str | None = None


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def differing(message: str, expected: Any, observed: Any, **extra: Any) -> Failure:
    """A failure carrying both values in full and the path where they first differ."""
    return Failure(
        message,
        expected=as_json(expected),
        observed=as_json(observed),
        path=first_difference(expected, observed),
        **extra,
    )


# The one-byte-per-chunk split is one run, so it is tried on bodies up to this size however
# the single cuts are limited.
ONE_BYTE_LIMIT: Final = 1024
# Adapter runs a case keeps for other checks to reuse (the whole body and the first splits).
RUN_CACHE_LIMIT: Final = 64
# How much stray stdout of one case a failure quotes: distinct lines, then characters.
NOISE_LINES: Final = 10
NOISE_CHARS: Final = 1000


@dataclass(frozen=True, slots=True)
class Faults:
    """How many runs of one case the adapter did not finish so far, by kind: the runner
    compares two of these around one check to label its failure ``timeout`` or ``crashed``."""

    hung: int = 0
    crashed: int = 0

    def since(self, before: Faults) -> Fault | None:
        if self.hung > before.hung:
            return "timeout"
        if self.crashed > before.crashed:
            return "crashed"
        return None


def noise_text(lines: Sequence[str], more: int = 0) -> str:
    """Stray stdout lines as one bounded text: the first distinct lines, and how many more."""
    text = "\n".join(lines)
    if len(text) > NOISE_CHARS:
        text = text[: NOISE_CHARS - 3] + "..."
    return text + (f"\n(and {more} more distinct line(s))" if more else "")


@dataclass
class CheckContext:
    """One (adapter, case) pair: runs are cached per split, so checks share them."""

    case: Case
    adapter: Adapter
    examples: int = 100
    seed: int = 0
    single_cut_limit: int = DEFAULT_SINGLE_CUT_LIMIT
    # How a reproduce command names the adapter and the cassette: as the user gave them.
    adapter_spec: str | None = None
    cassette_arg: str | None = None
    # A reproduce command pins the one split (or truncation offset) that failed.
    only_cuts: tuple[int, ...] | None = None
    only_truncate: int | None = None
    only_plan: int | None = None  # ``--split plan:K``: only the K-th split of the plan
    # Seconds one run of an in-process adapter may take (--run-timeout); None: unbounded.
    run_timeout: float | None = DEFAULT_RUN_TIMEOUT
    # What else a reproduce command must carry: the run's expectations folder and table.
    expectations: Path | None = None
    config_file: Path | None = None
    _runs: dict[tuple[int, ...], AdapterResult] = field(default_factory=dict)
    _expected: list[Event] | None = None
    # Distinct stray stdout lines of every run of this case (bounded), and how many more.
    _noise: list[str] = field(default_factory=list)
    _more_noise: int = 0
    _faults: Faults = Faults()

    def faults(self) -> Faults:
        """The runs of this case so far (cached ones counted each time a check is given
        them) that the adapter did not finish."""
        return self._faults

    def _seen(self, result: AdapterResult) -> AdapterResult:
        if result.crashed:
            f = self._faults
            self._faults = (
                Faults(f.hung + 1, f.crashed) if result.hung else Faults(f.hung, f.crashed + 1)
            )
        return result

    def _keep_noise(self, result: AdapterResult) -> AdapterResult:
        lines = result.raw.get("stdout_noise")
        if isinstance(lines, list):
            for line in lines:
                text = str(line)
                if text in self._noise:
                    continue
                if len(self._noise) < NOISE_LINES:
                    self._noise.append(text)
                else:
                    self._more_noise += 1
        return result

    def stdout_noise(self) -> str | None:
        """What the adapter printed on stdout besides the protocol while running this case."""
        return noise_text(self._noise, self._more_noise) if self._noise else None

    def run_cuts(self, cuts: Sequence[int]) -> AdapterResult:
        key = tuple(cuts)
        result = self._runs.get(key)
        if result is None:
            c = self.case
            try:
                result = self._run(split_at(c.body, key), c.id)
            except RunTimedOut as exc:
                exc.cuts = key  # the reproduce command replays the split that hung
                raise
            # The runs checks share are the first ones (the whole body, the first splits):
            # past the limit nothing more is kept, so memory stays flat in --examples.
            if len(self._runs) < RUN_CACHE_LIMIT:
                self._runs[key] = result
        return self._seen(result)

    def whole(self) -> AdapterResult:
        return self.run_cuts(())

    def run_body(self, body: bytes) -> AdapterResult:
        return self._seen(self._run([body], f"{self.case.id}, a body of {len(body)} bytes"))

    def _run(self, chunks: list[bytes], what: str) -> AdapterResult:
        """One run of the adapter, bounded by ``run_timeout`` (raises RunTimedOut)."""
        c = self.case
        result = run_within(
            self.adapter,
            self.run_timeout,
            c.protocol,
            chunks,
            status=c.status,
            headers=c.headers,
            case=c.id,
            what=what,
        )
        return self._keep_noise(result)

    @property
    def expected(self) -> list[Event]:
        if self._expected is None:
            self._expected = self.case.expected_events()
        return self._expected

    @property
    def expected_message(self) -> AssistantMessage:
        last = self.expected[-1]
        return last.message  # type: ignore[union-attr]

    def command(self, check: str, cuts: Sequence[int] = (), *, truncate: int | None = None) -> str:
        """The line that replays one check on this case, as the user can paste it back
        (:mod:`stream_harness.conformance.reproduce` says which options it carries)."""
        c = self.case
        shown = cuts_of(split_at(c.body, cuts)) if cuts else []
        options = ReplayOptions(
            examples=self.examples, seed=self.seed, single_cut_limit=self.single_cut_limit,
            run_timeout=self.run_timeout, expectations=self.expectations, config_file=self.config_file,
        )  # fmt: skip
        long = shown and len(split_text(shown)) > SPLIT_TEXT_LIMIT
        return check_command(
            options,
            # Always named: a configured adapter list would otherwise replace the one that failed.
            adapter=self.adapter_spec or self.adapter.name,
            cassette=self.cassette_arg or display_path(c.cassette), interaction=c.interaction, check=check,
            cuts=shown, plan_index=self.plan_index(shown) if long else None, truncate=truncate,
        )  # fmt: skip

    def plan_index(self, cuts: Sequence[int]) -> int | None:
        """Where ``cuts`` is in this case's split plan (``--split plan:K``), if it is there."""
        if self.only_plan is not None:
            return self.only_plan
        if self.only_cuts is not None:
            return None
        wanted = list(cuts)
        return next((i for i, split in enumerate(self.iter_splits()) if split == wanted), None)

    def splits(self) -> list[list[int]]:
        """:meth:`iter_splits` as a list (small runs and tests; checks iterate)."""
        return list(self.iter_splits())

    def iter_splits(self) -> Iterator[list[int]]:
        """The splits a split-sensitive check tries, cheapest to read first, drawn as they
        are judged: a run of 10,000 examples never holds 10,000 splits."""
        if self.only_cuts is not None:
            yield list(self.only_cuts)
            return
        if self.only_plan is not None:
            # ``--split plan:K``: the K-th split of the plan below, drawn as the failing run drew it.
            picked = list(itertools.islice(self._plan(), self.only_plan, self.only_plan + 1))
            if not picked:
                # Never a pass on nothing: a K past the plan (other --examples, an edited
                # cassette) replays no split at all.
                raise SplitSpecError(
                    f"--split plan:{self.only_plan}: the plan of {self.case.id} with these --seed, --examples "
                    f"and --single-cut-limit has {sum(1 for _ in self._plan())} split(s)"
                )
            yield from picked
            return
        yield from self._plan()

    @property
    def replaying(self) -> bool:
        """Whether one split is pinned (a reproduce command): nothing is drawn or shrunk."""
        return self.only_cuts is not None or self.only_plan is not None

    def _plan(self) -> Iterator[list[int]]:
        # An adapter whose every run is costly (a gateway process: a request each) says how
        # many drawn splits it affords; it gets no exhaustive single cuts then.
        budget = getattr(self.adapter, "split_budget", None)
        yield from split_plan(
            self.case.body,
            f"{self.seed}:{self.case.id}",
            self.examples if budget is None else min(self.examples, int(budget)),
            single_cut_limit=self.single_cut_limit,
            exhaustive=budget is None,
        )


def split_plan(
    body: bytes,
    seed: str,
    examples: int,
    *,
    single_cut_limit: int = DEFAULT_SINGLE_CUT_LIMIT,
    exhaustive: bool = True,
) -> Iterator[list[int]]:
    """Every split the checks try on one body, cheapest to read first: one byte per chunk
    and every single cut (small bodies, when ``exhaustive``), every trouble spot at once,
    then ``examples`` random splits drawn from ``seed``. The pytest plugin's
    ``harness_chunks`` walks the same plan."""
    n = len(body)
    if n < 2:
        return
    if exhaustive:
        if n <= ONE_BYTE_LIMIT:
            yield list(range(1, n))  # one byte per chunk
        if n <= single_cut_limit:
            yield from ([k] for k in range(1, n))  # every single cut
    rng = random.Random(seed)
    spots = trouble_spots(body)
    if spots:
        # Every trouble spot at once: one run that cuts inside every UTF-8 character,
        # CRLF pair and marker; shrinking then finds the one cut that matters.
        yield list(spots)
    for _ in range(examples):
        count = rng.randint(1, min(32, n - 1))
        cuts = {
            rng.choice(spots) if spots and rng.random() < 0.5 else rng.randrange(1, n)
            for _ in range(count)
        }
        yield sorted(cuts)


def shrink_cuts(cuts: list[int], fails: Callable[[list[int]], bool]) -> list[int]:
    """Remove cut points while the failure persists, until no single one can go.

    Runs of cuts are removed first, halving their length (delta debugging's complement
    step): a failing split of 1,400 cuts (every trouble spot at once) whose cause is one of
    them shrinks in about 30 adapter runs instead of 1,400, and those runs get shorter as
    they go. Then single cuts, to a fixpoint, so the result is 1-minimal as before.
    """
    current = list(cuts)
    size = max(1, len(current) // 2) if current else 0
    while size >= 1:
        changed = False
        i = 0
        while i < len(current):
            trial = current[:i] + current[i + size :]
            if fails(trial):
                current = trial
                changed = True
            else:
                i += size
        if size == 1 and changed:
            continue  # one more pass of single cuts: a removal may free an earlier one
        size = max(1, min(size // 2, len(current) // 2)) if size > 1 else 0
    return current


@dataclass(frozen=True, slots=True)
class Check:
    id: str
    title: str
    enforces: str
    level: AdapterLevel
    applies: Callable[[Case, list[Event]], bool]
    run: Callable[[CheckContext], list[Failure]]
    # An optional adapter capability the check needs, read as a boolean attribute that
    # defaults to True: a library that hands errors over unclassified
    # (``classifies_errors = False``) is not failed for not classifying them.
    needs: str | None = None
    # What an adapter without the attribute has: True for a capability most have
    # (``classifies_errors``), False for one few have (``proxy``: the gateway checks).
    needs_default: bool = True

    def applicable(self, adapter: Adapter, case: Case, expected: list[Event]) -> bool:
        if self.level == "event" and adapter.level != "event":
            return False
        if self.needs is not None and not getattr(adapter, self.needs, self.needs_default):
            return False
        return case.protocol in adapter.protocols and self.applies(case, expected)


# What an adapter made of a body, in the words every family's failures use.


def message_key(result: AdapterResult) -> Any:
    """What two runs must share to count as one outcome: the terminal and the whole message."""
    if result.crashed:
        return ("crashed", result.crashed)
    msg = result.message
    return (result.terminal, msg.model_dump() if msg is not None else None)


def outcome_of(result: AdapterResult) -> dict[str, Any]:
    """What an adapter made of a body, as one JSON document (for expected / observed)."""
    out: dict[str, Any] = {"terminal": result.terminal}
    if result.crashed:
        out["crashed"] = result.crashed
    if result.raised:
        out["raised"] = result.raised
    out["message"] = result.message.model_dump(mode="json") if result.message is not None else None
    return out


def outcome_of_events(events: Sequence[Event]) -> dict[str, Any]:
    """The reference's outcome in the shape of :func:`outcome_of`."""
    last = events[-1] if events else None
    message = last.message if isinstance(last, DoneEvent | ErrorEvent) else None
    return {
        "terminal": last.type if last is not None else "none",
        "message": message.model_dump(mode="json") if message else None,
    }


def summary_of(result: AdapterResult) -> str:
    """An outcome in one line, for a failure's message."""
    if result.crashed:
        return f"crashed: {result.crashed}"
    msg = result.message
    if msg is None:
        return f"{result.terminal}: no message"
    blocks = ", ".join(
        f"{b.type}:{short_repr(getattr(b, 'content', None) or getattr(b, 'arguments', None), 40)}"
        for b in msg.content
    )
    return f"{result.terminal} {msg.stop_reason} [{blocks}]"
