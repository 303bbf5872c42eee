"""The check catalogue (documented in specs/checks.md).

Each check has an id, the contract rule or spec table it enforces, and the adapter level
it needs: ``event`` checks read the event sequence, ``message`` checks only the final
message, so they apply to every adapter. A check returns failures, each with the smallest
reproducing split it found and the CLI line that replays it.

Splits are drawn from a seeded PRNG rather than hypothesis' engine, so that a report is
reproducible from its header (the seed) and a run costs exactly ``examples`` adapter
calls per check; a failing split is shrunk by removing runs of cut points, then single
ones, until none can go, which takes a planted split bug down to its single cut point.
"""

from __future__ import annotations

import functools
import itertools
import json
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from stream_harness.adapters.gateways import compare
from stream_harness.adapters.gateways.adapter import Exchange, record_timing
from stream_harness.adapters.processes.deadline import DEFAULT_RUN_TIMEOUT, RunTimedOut, run_within
from stream_harness.adapters.protocol import (
    Adapter,
    AdapterLevel,
    AdapterResult,
    running_case,
    safe_run,
)
from stream_harness.adapters.ws_session import SessionPlan, session_plan
from stream_harness.conformance.cases import Case
from stream_harness.conformance.config import DEFAULT_SINGLE_CUT_LIMIT
from stream_harness.conformance.outcomes import Fault
from stream_harness.conformance.reproduce import (
    SPLIT_TEXT_LIMIT,
    ReplayOptions,
    check_command,
    split_text,
)
from stream_harness.contract.diff import (
    comparable_block,
    first_difference,
    message_differences,
    short_diff,
    short_repr,
)
from stream_harness.contract.events import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    Event,
    ToolCall,
)
from stream_harness.contract.rules import Violation, check_contract
from stream_harness.providers.registry import get as get_protocol
from stream_harness.providers.registry import get_normalizer
from stream_harness.providers.stop_reasons import map_stop_reason
from stream_harness.recordings.cassette import CassetteError, load_cassette
from stream_harness.recordings.chunking import (
    SplitSpecError,
    cuts_of,
    format_cuts,
    split_at,
    trouble_spots,
)
from stream_harness.recordings.inputs import display_path
from stream_harness.recordings.resume import StreamEvent, is_resumable, stream_events
from stream_harness.server.loopback import (
    BYTE_PIECES,
    TRANSPORT_CUTS,
    CutMode,
    LoopbackServer,
    Pacing,
)
from stream_harness.server.resume import CutThenResume
from stream_harness.server.upstream import event_frames
from stream_harness.server.ws_session import CheckedSession, parse_create
from stream_harness.wire.websocket import refragment_log


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
            self._faults = Faults(f.hung + 1, f.crashed) if result.hung else Faults(f.hung, f.crashed + 1)
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
            self.adapter, self.run_timeout, c.protocol, chunks, status=c.status, headers=c.headers, case=c.id, what=what
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
    body: bytes, seed: str, examples: int, *, single_cut_limit: int = DEFAULT_SINGLE_CUT_LIMIT, exhaustive: bool = True
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
        cuts = {rng.choice(spots) if spots and rng.random() < 0.5 else rng.randrange(1, n) for _ in range(count)}
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


# ---------------------------------------------------------------------------------------


def _always(case: Case, expected: list[Event]) -> bool:
    return True


def _is_stream(case: Case, expected: list[Event]) -> bool:
    return case.status < 400


def _ends_in_error(case: Case, expected: list[Event]) -> bool:
    return isinstance(expected[-1], ErrorEvent)


def _has_tool_calls(case: Case, expected: list[Event]) -> bool:
    return any(e.type == "toolcall_start" for e in expected)


def _stop_reason_decides(case: Case, expected: list[Event]) -> bool:
    """The wire carried a stop reason and it, not some later fault, decided the ending.

    A stream that ends in an in-band error after a finish reason (OpenRouter) is an error
    whatever the stop reason said; error-surfacing judges that case.
    """
    last = expected[-1]
    if not isinstance(last, DoneEvent | ErrorEvent) or last.message.provider_stop_reason is None:
        return False
    msg = last.message
    refusal = isinstance(last, ErrorEvent) and last.error is not None and last.error.provider_type == "refusal"
    has_calls = any(isinstance(b, ToolCall) for b in msg.content)
    mapped = map_stop_reason(case.protocol, msg.provider_stop_reason, has_tool_calls=has_calls, refusal=refusal)
    return mapped.reason == msg.stop_reason


def _no_events(result: AdapterResult) -> Failure | None:
    if result.crashed:
        return differing(f"the adapter crashed: {result.crashed}", {"events": "a sequence"}, outcome_of(result))
    if result.events is None:
        return differing("an event-level adapter returned no events", {"events": "a sequence"}, {"events": None})
    return None


def check_contract_rules(ctx: CheckContext) -> list[Failure]:
    result = ctx.whole()
    problem = _no_events(result)
    if problem:
        return [problem]
    assert result.events is not None
    return [_violation(v, result.events) for v in check_contract(result.events)]


def _violation(v: Violation, events: Sequence[Event], **extra: Any) -> Failure:
    """A contract violation: what the rule allows there against the event that came."""
    at = v.index if v.index is not None and 0 <= v.index < len(events) else None
    observed = events[at].model_dump(mode="json") if at is not None else [e.type for e in events]
    return Failure(
        str(v),
        expected=as_json({"event": at, "is": f"allowed here by {v.rule} (specs/contract.md)"}),
        observed=as_json({"event": at, "is": observed}),
        path="is",
        **extra,
    )


def _message_key(result: AdapterResult) -> Any:
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
    return {"terminal": last.type if last is not None else "none", "message": message.model_dump(mode="json") if message else None}


def check_split_invariance(ctx: CheckContext) -> list[Failure]:
    whole = ctx.whole()
    if whole.crashed:
        return [differing(f"the adapter crashed on the whole body: {whole.crashed}", {"crashed": None}, outcome_of(whole))]
    baseline = _message_key(whole)

    def fails(cuts: list[int]) -> bool:
        return bool(_message_key(ctx.run_cuts(cuts)) != baseline)

    for cuts in ctx.iter_splits():
        if fails(cuts):
            small = cuts if ctx.replaying else shrink_cuts(cuts, fails)
            observed = ctx.run_cuts(small)
            return [
                differing(
                    f"split at {small} gives a different final message than the whole body "
                    f"({_summary(observed)} instead of {_summary(whole)})",
                    outcome_of(whole),
                    outcome_of(observed),
                    split=format_cuts(split_at(ctx.case.body, small)),
                    command=ctx.command("split-invariance", small),
                )
            ]
    return []


def comparable_message(message: AssistantMessage | None) -> Any:
    """The parts of a message the ``expected`` check compares, as JSON."""
    if message is None:
        return None
    return {
        "content": [comparable_block(b) for b in message.content],
        "stop_reason": message.stop_reason,
        "provider_stop_reason": message.provider_stop_reason,
        "usage": message.usage.model_dump(mode="json") if message.usage is not None else None,
        "has_error_message": message.error_message is not None,
    }


def check_expected(ctx: CheckContext) -> list[Failure]:
    result = ctx.whole()
    want = comparable_message(ctx.expected_message)
    if result.crashed:
        return [differing(f"the adapter crashed: {result.crashed}", want, outcome_of(result))]
    client = client_protocol(ctx)
    if client is not None:  # a gateway: compared at the contract level, across protocols
        found = compare.differences(ctx.expected_message, ctx.case.protocol, result.message, client)
        if not found:
            return []
        return [differing("; ".join(found), compare.view(ctx.expected_message, client=client), compare.view(result.message, client=client))]
    diffs = compare_messages(ctx.expected_message, result)
    if not diffs:
        return []
    return [differing("; ".join(diffs), want, comparable_message(result.message))]


def check_live_arguments(ctx: CheckContext) -> list[Failure]:
    for cuts in [[], *itertools.islice(ctx.iter_splits(), max(1, ctx.examples // 10))]:
        result = ctx.run_cuts(cuts)
        problem = _no_events(result)
        if problem:
            return [problem]
        assert result.events is not None
        bad = [v for v in check_contract(result.events) if v.rule in ("C7", "C9")]
        if bad:
            return [
                _violation(
                    bad[0], result.events,
                    split=format_cuts(split_at(ctx.case.body, cuts)) if cuts else None,
                    command=ctx.command("live-arguments", cuts),
                )
            ]  # fmt: skip
    return []


def check_stop_reason(ctx: CheckContext) -> list[Failure]:
    result = ctx.whole()
    msg = result.message
    want = ctx.expected_message
    if msg is None:
        return [
            differing(
                f"no message (terminal: {result.terminal}; {result.raised or result.crashed or ''})".strip(),
                {"provider_stop_reason": want.provider_stop_reason, "stop_reason": want.stop_reason},
                outcome_of(result),
            )
        ]
    has_calls = any(isinstance(b, ToolCall) for b in msg.content)
    # Whether the wire carried a refusal is a fact of the case, read from the reference.
    ref = ctx.expected[-1]
    refusal = isinstance(ref, ErrorEvent) and ref.error is not None and ref.error.provider_type == "refusal"
    client = client_protocol(ctx)
    if client is not None and client != ctx.case.protocol:
        # Across protocols the raw value is the client protocol's own word: it must map, by
        # that protocol's table, to the stop reason the upstream's raw value maps to.
        mapped = map_stop_reason(client, msg.provider_stop_reason, has_tool_calls=has_calls, refusal=refusal).reason
        problems = []
        # No raw value (a stream that ended before one came): only the outcome is compared.
        if msg.provider_stop_reason is not None and mapped != msg.stop_reason:
            problems.append(f"stop_reason {msg.stop_reason!r} for raw {msg.provider_stop_reason!r}; specs/stop_reasons.yaml maps it to {mapped!r} for {client}")
        if msg.stop_reason != want.stop_reason:
            problems.append(f"stop_reason {msg.stop_reason!r} (raw {msg.provider_stop_reason!r} on {client}), the upstream's {want.provider_stop_reason!r} is {want.stop_reason!r}")
        if not problems:
            return []
        return [
            differing(
                "; ".join(problems),
                {"stop_reason": want.stop_reason, "upstream_raw": want.provider_stop_reason},
                {"stop_reason": msg.stop_reason, "client_raw": msg.provider_stop_reason},
            )
        ]
    mapped = map_stop_reason(ctx.case.protocol, msg.provider_stop_reason, has_tool_calls=has_calls, refusal=refusal).reason
    problems = []
    if msg.provider_stop_reason != want.provider_stop_reason:
        problems.append(f"raw stop reason {msg.provider_stop_reason!r}, the wire says {want.provider_stop_reason!r}")
    if msg.stop_reason != mapped:
        problems.append(f"stop_reason {msg.stop_reason!r} for raw {msg.provider_stop_reason!r}; specs/stop_reasons.yaml maps it to {mapped!r}")
    if not problems:
        return []
    return [
        differing(
            "; ".join(problems),
            {"provider_stop_reason": want.provider_stop_reason, "stop_reason": mapped},
            {"provider_stop_reason": msg.provider_stop_reason, "stop_reason": msg.stop_reason},
        )
    ]


def check_error_surfacing(ctx: CheckContext) -> list[Failure]:
    result = ctx.whole()
    want = ctx.expected_message
    expected_doc = {"terminal": "error", "error_message": want.error_message, "content": [comparable_block(b) for b in want.content]}
    if result.crashed:
        return [differing(f"the adapter crashed: {result.crashed}", expected_doc, outcome_of(result))]
    got_text = (result.message.error_message if result.message else None) or result.raised or ""
    observed_doc = {
        "terminal": result.terminal,
        "error_message": got_text or None,
        "content": [comparable_block(b) for b in result.message.content] if result.message else [],
    }
    if result.terminal == "done":
        return [differing(f"ended in done, but the response is an error: {want.error_message}", expected_doc, observed_doc)]
    out = []
    ref = ctx.expected[-1]
    provider_spoke = not (isinstance(ref, ErrorEvent) and ref.error is not None and ref.error.origin == "stream")
    # When the stream itself was broken (cut, malformed) the reference's message is its own
    # wording, which no other adapter can be asked to repeat: ending in error is enough.
    if provider_spoke and want.error_message and want.error_message not in got_text:
        out.append(f"the provider's message {want.error_message!r} is not in what was surfaced {got_text[:200]!r}")
    if want.content and (result.message is None or result.message.content != want.content):
        want_blocks = [comparable_block(b) for b in want.content]
        have_blocks = [comparable_block(b) for b in result.message.content] if result.message else []
        out.append(f"content received before the error {_content_difference(want_blocks, have_blocks)}")
    if not out:
        return []
    if not provider_spoke or (want.error_message and want.error_message in got_text):
        # The wording is not the complaint: the first difference must point at the content.
        expected_doc["error_message"] = observed_doc["error_message"]
    return [differing("; ".join(out), expected_doc, observed_doc)]


def _content_difference(want: list[Any], have: list[Any]) -> str:
    """What happened to the blocks received before an error, said where it happened: a
    count when blocks were lost, else the first block and field that differ."""
    if len(have) < len(want):
        return f"was lost: {len(want)} blocks expected, {len(have)} kept"
    if len(have) > len(want):
        return f"gained blocks: {len(want)} expected, {len(have)} surfaced"
    return f"differs {short_diff({'content': want}, {'content': have})}"


def check_truncation(ctx: CheckContext) -> list[Failure]:
    body = ctx.case.body
    n = len(body)
    if n < 8:
        return []
    offsets: list[int] = []
    if ctx.only_truncate is not None:
        offsets = [ctx.only_truncate]
    else:
        rng = random.Random(f"trunc:{ctx.seed}:{ctx.case.id}")
        # A cut counts only where the reference says the stream is unfinished: a body may be
        # complete long before its end (a finish_reason and then a large moderation chunk,
        # before [DONE]), and ending `done` there is right. So the seeded offsets in
        # [n/4, n/2) that the reference ends in error, else those in [1, n/4).
        for low, high in ((n // 4, max(n // 4 + 1, n // 2)), (1, max(2, n // 4))):
            drawn = sorted({rng.randrange(low, high) for _ in range(3)})
            offsets = [k for k in drawn if ctx.case.cut_ends_in_error(k)]
            if offsets:
                break
    for k in offsets:
        result = ctx.run_body(body[:k])
        command = ctx.command("truncation", truncate=k)
        if result.crashed:
            return [differing(f"body truncated at byte {k}: the adapter crashed: {result.crashed}", {"terminal": "error"}, outcome_of(result), command=command)]
        if result.terminal == "done":
            return [differing(f"body truncated at byte {k} of {n} ended in done; a cut stream must end in error", {"terminal": "error"}, outcome_of(result), command=command)]
        if ctx.adapter.level == "event" and result.events is not None:
            bad = check_contract(result.events)
            if bad:
                return [_violation(bad[0], result.events, command=command)]
    return []


def check_overflow_classification(ctx: CheckContext) -> list[Failure]:
    want = ctx.expected[-1]
    assert isinstance(want, ErrorEvent)
    expected_doc = {"terminal": "error", "kind": want.error.kind if want.error else None, "retryable": want.error.retryable if want.error else None}
    result = ctx.whole()
    problem = _no_events(result)
    if problem:
        return [problem]
    assert result.events is not None
    got = result.events[-1]
    if not isinstance(got, ErrorEvent):
        return [differing(f"ended in {got.type}, not error", expected_doc, {"terminal": got.type})]
    if got.error is None:
        return [differing("the error event carries no classification", expected_doc, {"terminal": "error", "kind": None, "retryable": None})]
    if want.error is not None and (got.error.kind, got.error.retryable) != (want.error.kind, want.error.retryable):
        return [
            differing(
                f"classified {got.error.kind} (retryable={got.error.retryable}), expected {want.error.kind} (retryable={want.error.retryable})",
                expected_doc,
                {"terminal": "error", "kind": got.error.kind, "retryable": got.error.retryable},
            )
        ]
    return []


# ---------------------------------------------------------------------------------------
# Gateways (harness/stream_harness/adapters/gateways): an adapter with ``proxy = True`` runs a real gateway between a
# replayed upstream and the reference; these checks ask it for exchanges the Adapter
# protocol cannot express (paced, cut upstream) through its ``exchange`` method.

PACING = 0.2  # seconds between upstream events in the streaming check
MAX_PACED = 10  # upstream sends at most this many paced groups of events
BYTE_PACING = 0.003  # seconds between the 3-7 byte writes of the byte-paced run
# The held head, in events: a gateway may wait for the first upstream event that carries
# content (text, thinking, a tool call, an error, the end): a translating gateway needs
# it to know what to send (LiteLLM does so). Past it, at most this many more events may
# go out before the client's first byte: at 200 ms event pacing a streaming gateway
# holds none; at byte pacing its own latency (tens of ms) lets a small event or two more
# through, while a gateway holding reads until it has "enough" holds many.
HELD_AFTER_CONTENT = 2
# The slow run (issue 35): a gateway that starts streaming only once a single transport
# read holds a whole line passes the byte-paced run, whose 3 ms writes its reads merge,
# and buffers a whole stream whose reads are small and 20-50 ms apart. So the head of the
# body, through the first content event and the HELD_AFTER_CONTENT events after it, goes
# out (one more event for margin) cut in the middle of every line, SLOW_PACING apart: no write holds a whole line, and
# a gateway that reads every write as it comes sees none. The rest goes out in one write.
# A head needing more than SLOW_HEAD_WRITES writes is not paced so (the check stays quick:
# at most 1.6 s a case); a JSON-array stream is re-framed by event upstream, so has none.
SLOW_PACING = 0.04
SLOW_HEAD_WRITES = 40
# A cut run's client read gives up after this long without a byte: a gateway that keeps
# the client waiting on a dead upstream fails, and a report does not wait a minute on it.
CUT_TIMEOUT = 15.0
# Event types that show the first content reached the reference (the held-head bound).
_CONTENT: Final = frozenset({"text_delta", "thinking_delta", "toolcall_start", "toolcall_delta", "error", "done"})
_PACINGS: Final[dict[Pacing, str]] = {
    "chunks": f"events {PACING * 1000:.0f} ms apart",
    "bytes": f"{BYTE_PIECES[0]}-{BYTE_PIECES[1]} byte writes {BYTE_PACING * 1000:.0f} ms apart",
}
_CUTS: Final[dict[CutMode, str]] = {
    "close": "closed the connection (FIN) after a whole chunk",
    "reset": "reset the connection (RST)",
    "inside-chunk": "closed the connection inside a chunk",
}


def client_protocol(ctx: CheckContext) -> str | None:
    """The protocol a gateway's client reads, or None for a library adapter."""
    value = getattr(ctx.adapter, "client_protocol", None)
    return value if isinstance(value, str) else None


def _paced_groups(body: bytes) -> list[bytes]:
    """The body's events, merged into at most MAX_PACED consecutive groups."""
    frames = event_frames(body)
    if len(frames) <= MAX_PACED:
        return frames
    size = -(-len(frames) // MAX_PACED)
    return [b"".join(frames[i : i + size]) for i in range(0, len(frames), size)]


def first_content_event(protocol: str, body: bytes) -> int:
    """The index of the first event after which the reference has content (or the end) to show."""
    normalizer = get_normalizer(protocol)
    frames = event_frames(body)
    for i, frame in enumerate(frames):
        if any(e.type in _CONTENT for e in normalizer.feed(frame)):
            return i
    return max(len(frames) - 1, 0)


def line_straddling_writes(body: bytes, through: int) -> list[bytes] | None:
    """The slow run's writes: the body's events up to event ``through`` (0-based) cut in the
    middle of every line with content, so that no write holds a whole line, then the rest
    in one write; None when that head takes more than SLOW_HEAD_WRITES writes or the body
    is a JSON array."""
    if body.lstrip()[:1] == b"[":
        return None
    frames = event_frames(body)
    end = sum(len(f) for f in frames[: through + 1])
    cuts, at = [0], 0
    for line in body[:end].splitlines(keepends=True):
        content = line.rstrip(b"\r\n")
        if content:
            cuts.append(at + max(1, len(content) // 2))
        at += len(line)
    cuts.append(end)
    writes = [body[a:b] for a, b in itertools.pairwise(cuts) if b > a]
    if len(writes) > SLOW_HEAD_WRITES:
        return None
    return [*writes, body[end:]] if end < len(body) else writes


def _streams(case: Case, expected: list[Event]) -> bool:
    return case.status < 400


def _http_error(case: Case, expected: list[Event]) -> bool:
    return case.status >= 400


def check_proxy_streaming(ctx: CheckContext) -> list[Failure]:
    """The body paced event by event, byte by byte and slowly in half lines (the head); the
    first client byte bounded in time (before the upstream's last write) and in events (the
    held head)."""
    groups = _paced_groups(ctx.case.body)
    if len(groups) < 3:
        return []
    c = ctx.case
    content = first_content_event(c.protocol, c.body)
    runs: list[tuple[str, str, list[bytes], float, Pacing]] = [
        ("chunks", _PACINGS["chunks"], groups, PACING, "chunks"),
        ("bytes", _PACINGS["bytes"], [c.body], BYTE_PACING, "bytes"),
    ]
    slow = line_straddling_writes(c.body, content + HELD_AFTER_CONTENT + 1)
    if slow is not None:
        how = f"the head's lines cut in two, {len(slow)} writes {SLOW_PACING * 1000:.0f} ms apart"
        runs.append(("lines", how, slow, SLOW_PACING, "chunks"))
    out = []
    for label, how, chunks, delay, pacing in runs:
        ex: Exchange = ctx.adapter.exchange(c.protocol, chunks, status=c.status, headers=c.headers, delay=delay, pacing=pacing)  # type: ignore[attr-defined]
        result = ex.result
        if result.crashed:
            out.append(differing(f"{how}: the adapter crashed: {result.crashed}", {"crashed": None}, outcome_of(result)))
            continue
        record_timing(ctx.adapter.name, c.id, ex, delay, label)
        ratio, held, needed = ex.ttfb_ratio(), ex.held_events(), ex.events_with(content)
        observed = {
            "ttfb_ratio": None if ratio is None else round(ratio, 3),
            "held_events": held,
            "client_reads": len(ex.times),
        }
        allowed = None if needed is None else needed + HELD_AFTER_CONTENT
        if ratio is None or ratio >= 1:
            shown = "no body byte" if ratio is None else f"first byte at {ratio:.2f} of the upstream's span"
            out.append(
                differing(
                    f"the gateway buffered: with {how} ({len(ex.stream_sent())} writes), {shown} "
                    "(a streaming gateway passes the first byte on before the upstream's last write)",
                    {"ttfb_ratio": "< 1", "held_events": f"<= {allowed}"},
                    observed,
                )
            )
        elif held is not None and allowed is not None and held > allowed:
            out.append(
                differing(
                    f"the gateway held the head: with {how}, {held} upstream events were out before the client's "
                    f"first byte; the first content is event {content + 1} ({needed} out with it), "
                    f"at most {HELD_AFTER_CONTENT} more may be held",
                    {"ttfb_ratio": "< 1", "held_events": f"<= {allowed}"},
                    observed,
                )
            )
        if _message_key(result) != _message_key(ctx.whole()):
            out.append(
                differing(
                    f"{how}: the paced upstream gives another final message than the whole body ({_summary(result)} instead of {_summary(ctx.whole())})",
                    outcome_of(ctx.whole()),
                    outcome_of(result),
                )
            )
    return out


def _cut_problem(ex: Exchange) -> str | None:
    """Why the client side of a cut run is wrong, or None.

    Right: the transfer to the client ends abnormally (RFC 9112's incomplete message: no
    terminating chunk, a short content length, a reset), or the response carries an error
    (an error event of the client protocol, an HTTP error status). Wrong: a finish the
    upstream never sent, a clean complete message without an error (most clients do not
    insist on the protocol's terminal event and take it as whole), or a client left
    waiting.
    """
    result = ex.result
    if result.crashed:
        return f"the adapter crashed: {result.crashed}"
    if result.terminal == "done":
        return "the client saw a clean finish (the gateway completed what it did not receive)"
    t = ex.transfer
    if t is not None and t.end == "timeout":
        return f"the client's response neither ended nor failed ({t.detail})"
    if (t is None or t.complete) and not ex.error_carried():
        framing = t.framing if t else "unknown framing"
        return (
            f"the gateway ended its response as a complete HTTP message ({framing}) with no error event: "
            "the transfer must end abnormally (no terminating chunk) or carry an error"
        )
    return None


def check_proxy_upstream_cut(ctx: CheckContext) -> list[Failure]:
    """The upstream connection dropped between two events near the middle, in each way a
    connection drops (:data:`stream_harness.server.loopback.TRANSPORT_CUTS`)."""
    c = ctx.case
    frames = event_frames(c.body)
    ends = [sum(len(f) for f in frames[:k]) for k in range(len(frames) + 1)]
    # A cut between events, as near the middle as leaves the stream unfinished; the cut
    # inside a chunk sends half of event k too, which must leave it unfinished as well.
    order = sorted(range(1, len(frames)), key=lambda k: abs(k - len(frames) / 2))
    k = next(
        (k for k in order if c.cut_ends_in_error(ends[k]) and c.cut_ends_in_error(ends[k] + max(1, len(frames[k]) // 2))),
        None,
    )
    if k is None:
        return []
    out = []
    for cut in TRANSPORT_CUTS:
        sent = frames[: k + 1] if cut == "inside-chunk" else frames[:k]
        ex: Exchange = ctx.adapter.exchange(c.protocol, sent, status=c.status, headers=c.headers, cut=cut, timeout=CUT_TIMEOUT)  # type: ignore[attr-defined]
        problem = _cut_problem(ex)
        if problem is None:
            continue
        t = ex.transfer
        out.append(
            differing(
                f"the upstream {_CUTS[cut]} after event {k} of {len(frames)}: {problem}",
                {"cut": cut, "client_transfer": "not complete, or an error carried", "terminal": "error"},
                {
                    "cut": cut,
                    "client_transfer": f"{t.end} ({t.framing})" if t else None,
                    "error_carried": ex.error_carried(),
                    "terminal": ex.result.terminal,
                    "status": ex.status,
                },
            )
        )
    return out


def check_proxy_error_status(ctx: CheckContext) -> list[Failure]:
    result = ctx.whole()
    if result.crashed:
        return [differing(f"the adapter crashed: {result.crashed}", {"status": ctx.case.status}, outcome_of(result))]
    status = result.raw.get("client_status")
    want = ctx.expected[-1]
    want_after = want.error.retry_after if isinstance(want, ErrorEvent) and want.error else None
    last = result.events[-1] if result.events else None
    got_after = last.error.retry_after if isinstance(last, ErrorEvent) and last.error else None
    expected_doc = {"status": ctx.case.status, "retry_after": want_after}
    observed_doc = {"status": status, "retry_after": got_after}
    problems = []
    if status != ctx.case.status:
        problems.append(f"the upstream answered HTTP {ctx.case.status}, the client got {status}")
    if want_after is not None and got_after is None:
        problems.append(f"the upstream's retry-after ({want_after:g} s) did not reach the client")
    if not problems:
        return []
    return [differing("; ".join(problems), expected_doc, observed_doc)]


# ---------------------------------------------------------------------------------------
# WebSocket turns: message boundaries instead of byte boundaries


def _websocket_turn(case: Case, expected: list[Event]) -> bool:
    return case.status < 400 and get_protocol(case.protocol).framing.name == "websocket-json"


def message_cuts(seed: str, n: int, payload: bytes) -> list[int]:
    """Where message ``n`` is cut into frames under one seeded re-framing: inside its
    first multi-byte UTF-8 character when it has one (a text frame need not end on a
    character), and one to four random offsets."""
    rng = random.Random(f"{seed}:{n}")
    if len(payload) < 2:
        return []
    cuts = {rng.randrange(1, len(payload)) for _ in range(rng.randint(1, 4))}
    wide = next((i for i, b in enumerate(payload) if b >= 0xC0), None)
    if wide is not None and wide + 1 < len(payload):
        cuts.add(wide + 1)
    return sorted(cuts)


def check_message_framing(ctx: CheckContext) -> list[Failure]:
    """Every message of a WebSocket turn re-sent across continuation frames (RFC 6455
    5.4), some cut inside a UTF-8 character: the same final message as the recorded
    framing. The socket's counterpart of split-invariance, whose byte splits do not reach
    a client behind a WebSocket library."""
    whole = ctx.whole()
    if whole.crashed:
        return [differing(f"the adapter crashed on the recorded turn: {whole.crashed}", {"crashed": None}, outcome_of(whole))]
    baseline = _message_key(whole)
    rounds = 1 if ctx.replaying else max(1, min(ctx.examples, 20))
    for r in range(rounds):
        body = refragment_log(ctx.case.body, functools.partial(message_cuts, f"frames:{ctx.seed}:{ctx.case.id}:{r}"))
        result = ctx.run_body(body)
        if _message_key(result) != baseline:
            return [
                differing(
                    f"the turn re-framed into continuation frames (round {r}) gives a different "
                    f"final message ({_summary(result)} instead of {_summary(whole)})",
                    outcome_of(whole),
                    outcome_of(result),
                    command=ctx.command("message-framing"),
                )
            ]
    return []


# ---------------------------------------------------------------------------------------
# Resumption: a background Responses stream resumed after a dropped connection

# Cut points tried per case: every event boundary up to this many, else a seeded sample.
RESUME_POINTS: Final = 40
_resumable_cache: dict[str, list[StreamEvent] | None] = {}


def resumable_events(case: Case) -> list[StreamEvent] | None:
    """The case's events when its stream can be resumed by a cursor (sequence numbers and a
    response id: the Responses protocols), else None; read once per body."""
    if case.sha256 not in _resumable_cache:
        events = stream_events(case.body) if case.status < 400 else []
        _resumable_cache[case.sha256] = events if is_resumable(events) else None
    return _resumable_cache[case.sha256]


def _resumable(case: Case, expected: list[Event]) -> bool:
    return resumable_events(case) is not None


def resume_points(n: int, seed: str) -> list[int]:
    """After how many events the stream is cut: 1 .. n-1 (the first event names the
    response, without it there is nothing to resume), all or a seeded sample."""
    points = list(range(1, n))
    if len(points) <= RESUME_POINTS:
        return points
    rng = random.Random(seed)
    return sorted({1, n - 1, *rng.sample(points, RESUME_POINTS - 2)})


def _resumed_key(result: AdapterResult, level: AdapterLevel) -> Any:
    if level == "event" and result.events is not None:
        return [e.model_dump(mode="json") for e in result.events]
    return _message_key(result)


def check_resumption(ctx: CheckContext) -> list[Failure]:
    """Cut after event k, let the adapter resume from its cursor: the same result as its
    run on the uncut stream (events for an event-level adapter: none lost, none repeated);
    a cursor the server no longer has must end in an error, never in a silent restart."""
    events = resumable_events(ctx.case)
    assert events is not None
    run = getattr(ctx.adapter, "run_resumable", None)
    if run is None:
        return [Failure("the adapter says it resumes but has no run_resumable method")]
    replies = CutThenResume(events)
    request_body = b'{"model":"resumption-check","input":"","background":true,"stream":true}'
    seqs = [e.sequence_number for e in events]
    with LoopbackServer(replies) as server:
        # The baseline is the same client code reading the stream uncut: a library's
        # resuming path may hand its user another object than its stream helper does.
        replies.reset(len(events))
        whole = run(ctx.case.protocol, server.url, request_body=request_body)
        if whole.crashed:
            return [differing(f"the adapter crashed on the uncut stream: {whole.crashed}", {"crashed": None}, outcome_of(whole))]
        want = _resumed_key(whole, ctx.adapter.level)
        for k in resume_points(len(events), f"resume:{ctx.seed}:{ctx.case.id}"):
            partial = k % 2 == 1  # odd k: the drop also cuts the next event in half
            replies.reset(k, partial=partial)
            result = run(ctx.case.protocol, server.url, request_body=request_body)
            got = _resumed_key(result, ctx.adapter.level)
            if got != want:
                cursor = next((s for s in reversed(seqs[:k]) if s is not None), None)
                where = f"cut after event {k} of {len(events)}{' and half of the next' if partial else ''}"
                return [
                    differing(
                        f"resumed stream ({where}; the adapter resumed with starting_after="
                        f"{replies.cursors or 'nothing'}, the last whole event was {cursor}) "
                        f"differs from the whole stream ({_summary(result)} instead of {_summary(whole)})",
                        want,
                        got,
                        command=ctx.command("resumption"),
                    )
                ]
        # The stream is gone from the server: the resume is refused, and the adapter must
        # end in an error, never start over or report a finished response.
        k = max(1, len(events) // 2)
        replies.reset(k, expired=True)
        result = run(ctx.case.protocol, server.url, request_body=request_body)
        if replies.cursors and result.terminal == "done":
            return [
                differing(
                    f"cut after event {k}, the resume refused (unknown cursor): the adapter ended in done",
                    {"terminal": "error"},
                    outcome_of(result),
                    command=ctx.command("resumption"),
                )
            ]
    return []


# ---------------------------------------------------------------------------------------
# WebSocket sessions: several turns on one connection, the client's side checked too

_session_cache: dict[str, SessionPlan | None] = {}


def session_of(case: Case) -> SessionPlan | None:
    """The case's cassette read as a session, on its first turn only (a session check runs
    once a connection): two turns or more, one response at a time; else None."""
    if case.interaction != 0 or get_protocol(case.protocol).framing.name != "websocket-json":
        return None
    key = str(case.cassette)
    if key not in _session_cache:
        try:
            turns = load_cassette(case.cassette).interactions
        except CassetteError:
            turns = ()
        plan = session_plan([parse_create(t.request.body) for t in turns], [t.response.body for t in turns])
        _session_cache[key] = plan if len(turns) >= 2 and not plan.concurrent else None
    return _session_cache[key]


def _session(case: Case, expected: list[Event]) -> bool:
    plan = session_of(case)
    return plan is not None and len(plan.turns) >= 2 and not plan.refused


def _chained_session(case: Case, expected: list[Event]) -> bool:
    plan = session_of(case)
    return _session(case, expected) and plan is not None and any(t.chained for t in plan.turns[1:])


def _refused_session(case: Case, expected: list[Event]) -> bool:
    plan = session_of(case)
    return plan is not None and any(r + 1 < len(plan.logs) for r in plan.refused)


def play_session_case(ctx: CheckContext, plan: SessionPlan) -> tuple[list[AdapterResult], CheckedSession] | Failure:
    """The adapter's ``run_session`` against a loopback replay of the whole connection that
    compares each ``response.create`` with the recorded one."""
    run = getattr(ctx.adapter, "run_session", None)
    if run is None:
        return Failure("the adapter says it runs sessions but has no run_session method")
    server_side = CheckedSession(list(plan.logs), [dict(c) for c in plan.creates])
    with LoopbackServer(server_side) as server:
        try:
            with running_case(ctx.case.id):
                results = list(run(ctx.case.protocol, server.url, plan.turns))
        except Exception as exc:
            return differing(f"the adapter crashed in run_session: {type(exc).__name__}: {exc}", {"crashed": None}, {"crashed": str(exc)})
    return results, server_side


def _sent_differences(plan: SessionPlan, server_side: CheckedSession, turns: Sequence[int]) -> list[str]:
    out = []
    for i in turns:
        if i >= len(server_side.sent):
            out.append(f"turn {i}: the client sent no response.create (it sent {len(server_side.sent)} of {len(plan.logs)})")
            break
        out.extend(f"turn {i}: {d}" for d in server_side.differences.get(i, []))
    return out


def check_session_turns(ctx: CheckContext) -> list[Failure]:
    """Each turn played on one connection gives the result the same turn gives alone (on a
    fresh connection): no blocks, usage or stop reason of an earlier turn carried over."""
    plan = session_of(ctx.case)
    assert plan is not None
    played = play_session_case(ctx, plan)
    if isinstance(played, Failure):
        return [played]
    results, _ = played
    cassette = load_cassette(ctx.case.cassette).interactions
    for i, recorded in enumerate(plan.answered_by):
        turn = cassette[recorded]
        alone = safe_run(ctx.adapter, ctx.case.protocol, [turn.response.body], status=turn.response.status, headers=turn.response.headers, case=ctx.case.id)
        if i >= len(results):
            return [differing(f"turn {i} of {len(plan.turns)}: the session gave no result (it stopped after turn {len(results) - 1})", outcome_of(alone), {"terminal": "none"}, command=ctx.command("session-turns"))]
        if _message_key(results[i]) != _message_key(alone):
            return [
                differing(
                    f"turn {i} of {len(plan.turns)} on one connection differs from the same turn alone "
                    f"({_summary(results[i])} instead of {_summary(alone)})",
                    outcome_of(alone),
                    outcome_of(results[i]),
                    command=ctx.command("session-turns"),
                )
            ]
    return []


def check_session_chaining(ctx: CheckContext) -> list[Failure]:
    """Each ``response.create`` the client sends on the connection is the recorded one: a
    chained turn carries the previous response's id and only the new input items."""
    plan = session_of(ctx.case)
    assert plan is not None
    played = play_session_case(ctx, plan)
    if isinstance(played, Failure):
        return [played]
    _, server_side = played
    problems = _sent_differences(plan, server_side, range(len(plan.logs)))
    if not problems:
        return []
    return [differing("; ".join(problems), {"sent": list(plan.creates)}, {"sent": server_side.sent}, command=ctx.command("session-chaining"))]


def check_previous_response_recovery(ctx: CheckContext) -> list[Failure]:
    """After a ``previous_response_not_found`` error, the client's next ``response.create``
    resends the whole context with no ``previous_response_id``, and the resent turn's result
    is the recorded one's."""
    plan = session_of(ctx.case)
    assert plan is not None
    played = play_session_case(ctx, plan)
    if isinstance(played, Failure):
        return [played]
    results, server_side = played
    problems = _sent_differences(plan, server_side, range(len(plan.logs)))
    for i, recorded in enumerate(plan.answered_by):
        if recorded - 1 in plan.refused and i < len(results) and results[i].terminal != "done":
            problems.append(f"turn {i} ended in {results[i].terminal}; the recorded resend completes")
    if not problems:
        return []
    return [differing("; ".join(problems), {"sent": list(plan.creates)}, {"sent": server_side.sent}, command=ctx.command("previous-response-recovery"))]


CHECKS: tuple[Check, ...] = (
    Check("contract", "event sequence follows the contract grammar", "C1-C12", "event", _always, check_contract_rules),
    Check("split-invariance", "any split of the body gives the same final message", "C13", "message", _always, check_split_invariance),
    Check("expected", "final message agrees with specs/expected", "C6-C8, C14", "message", _always, check_expected),
    Check("live-arguments", "live tool arguments grow monotonically to the final parse", "C7, C9", "event", _has_tool_calls, check_live_arguments),
    Check("stop-reason", "stop reason mapped per specs/stop_reasons.yaml", "C14", "message", _stop_reason_decides, check_stop_reason),
    Check("error-surfacing", "errors end in error with the provider's message, nothing lost", "C15", "message", _ends_in_error, check_error_surfacing),
    Check("truncation", "a body cut mid-stream ends in error, never done", "C2, C15", "message", _is_stream, check_truncation),
    Check("overflow-classification", "error events carry the classification of specs/overflow.yaml", "C16", "event", _ends_in_error, check_overflow_classification, needs="classifies_errors"),
    Check("message-framing", "a WebSocket turn's messages split across continuation frames give the same final message", "C13", "message", _websocket_turn, check_message_framing),
    Check("session-turns", "each turn on one WebSocket connection equals the same turn alone: no state carried over", "C1, C6, C13", "message", _session, check_session_turns, needs="sessions", needs_default=False),
    Check("session-chaining", "a chained turn sends the previous response's id and only the new input items", "C13", "message", _chained_session, check_session_chaining, needs="sessions", needs_default=False),
    Check("previous-response-recovery", "after previous_response_not_found the client resends the full context without previous_response_id", "C15", "message", _refused_session, check_previous_response_recovery, needs="recovers_previous_response", needs_default=False),
    Check("resumption", "a stream resumed with its cursor equals the whole stream; an unknown cursor is an error", "C13, C15", "message", _resumable, check_resumption, needs="resumes", needs_default=False),
    Check("proxy-streaming", "a gateway streams: the first byte before the upstream's last event", "C15", "message", _streams, check_proxy_streaming, needs="proxy", needs_default=False),
    Check("proxy-upstream-cut", "an upstream connection dropped mid-stream reaches the client as an error", "C2, C15", "message", _streams, check_proxy_upstream_cut, needs="proxy", needs_default=False),
    Check("proxy-error-status", "an upstream HTTP error reaches the client with its status and retry-after", "C15, C16", "message", _http_error, check_proxy_error_status, needs="proxy", needs_default=False),
)  # fmt: skip

CHECKS_BY_ID = {c.id: c for c in CHECKS}


def compare_messages(expected: AssistantMessage, result: AdapterResult) -> list[str]:
    """Human-readable differences between the expected message and an adapter's."""
    msg = result.message
    if msg is None:
        return [f"no final message (terminal: {result.terminal}{'; raised ' + result.raised if result.raised else ''})"]
    return message_differences(expected, msg)




def _summary(result: AdapterResult) -> str:
    if result.crashed:
        return f"crashed: {result.crashed}"
    msg = result.message
    if msg is None:
        return f"{result.terminal}: no message"
    blocks = ", ".join(f"{b.type}:{short_repr(getattr(b, 'content', None) or getattr(b, 'arguments', None), 40)}" for b in msg.content)
    return f"{result.terminal} {msg.stop_reason} [{blocks}]"


