"""Hand-made runs for the report tests: two adapters, three cases, every outcome.

The expected matrix below was worked out by hand from these rows, not produced by the
code under test:

    adapter  | contract                  | split-invariance        | truncation
    alpha    | 1/3 (1 failed, 1 errored) | 2/3 (1 known, 1 fixed)  | 3/3
    beta     | n/a                       | 1/2 (1 failed)          | 1/2 (1 known)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from stream_harness.adapters.protocol import AdapterLevel, Headers
from stream_harness.conformance import (
    CHECKS_BY_ID,
    AdapterResult,
    AdapterRun,
    Case,
    CaseResult,
    Failure,
    RunConfig,
)
from stream_harness.conformance.cases import Skipped
from stream_harness.reporting import Report, build_report
from stream_harness.reporting.jsonl import render as render_jsonl

STARTED = datetime(2025, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
FINISHED = datetime(2025, 3, 1, 12, 4, 30, tzinfo=UTC)
ENV = {"python": "3.11.9", "platform": "Linux-test"}

C1 = "openai-completions/hello.yaml#0"
C2 = "anthropic-messages/tool.yaml#0"
C3 = "openai-completions/error.yaml#1"
HOSTILE = "<script>alert('x')</script> | `tick` *star* & [link](javascript:alert(1))"
REPRO = "stream-harness normalize cassettes/anthropic-messages/tool.yaml --interaction 0 --split cuts:17"
KNOWN_ISSUE = "https://github.com/example/lib/issues/1"
FIXED_ISSUE = "https://github.com/example/lib/issues/2"
HOSTILE_ISSUE = "javascript:alert(1)"


class FakeAdapter:
    def __init__(
        self, name: str, level: AdapterLevel, protocols: frozenset[str], version: str
    ) -> None:
        self.name = name
        self.level: AdapterLevel = level
        self.protocols = protocols
        self._version = version

    def version(self) -> str:
        return self._version

    def run(
        self, protocol: str, chunks: Sequence[bytes], *, status: int = 200, headers: Headers = None
    ) -> AdapterResult:
        raise AssertionError("the report tests never run an adapter")


def make_case(
    case_id: str, protocol: str, status: int = 200, body: bytes = b"data: {}\n\n"
) -> Case:
    path, _, index = case_id.partition("#")
    return Case(
        id=case_id,
        cassette=Path("cassettes") / path,
        interaction=int(index),
        protocol=protocol,
        status=status,
        headers={"content-type": ["text/event-stream"]},
        body=body,
        sha256=hashlib.sha256(body).hexdigest(),
    )


CASES = [
    make_case(C1, "openai-completions"),
    make_case(C2, "anthropic-messages", body=b"event: message_start\n\n"),
    make_case(C3, "openai-completions", status=500, body=b'{"error":"boom"}'),
]
SKIPPED = [Skipped("misc/oauth.yaml#0", "not a stream nor an error response")]
CONFIG = RunConfig(
    examples=5,
    seed=7,
    checks=[CHECKS_BY_ID[c] for c in ("contract", "split-invariance", "truncation")],
)


def alpha_run() -> AdapterRun:
    adapter = FakeAdapter(
        "alpha", "event", frozenset({"openai-completions", "anthropic-messages"}), "1.0"
    )
    contract_failure = Failure(
        "C3: toolcall_delta for content_index 1 before its start",
        split="cuts:17",
        command=REPRO,
        expected='{"type":"toolcall_start"}',
        observed='{"type":"toolcall_delta"}',
    )
    results = [
        CaseResult("alpha", C1, "contract", "passed"),
        CaseResult("alpha", C1, "split-invariance", "passed"),
        CaseResult("alpha", C1, "truncation", "passed"),
        CaseResult("alpha", C2, "contract", "failed", (contract_failure,)),
        CaseResult("alpha", C2, "split-invariance", "known_failure", (Failure("final text differs", "cuts:3", REPRO),), KNOWN_ISSUE),
        CaseResult("alpha", C2, "truncation", "passed"),
        CaseResult("alpha", C3, "contract", "errored", (Failure("the check raised: KeyError: 'x'"),)),
        CaseResult("alpha", C3, "split-invariance", "fixed", (), FIXED_ISSUE),
        CaseResult("alpha", C3, "truncation", "passed"),
    ]  # fmt: skip
    return AdapterRun(adapter, "1.0", results)


def beta_run() -> AdapterRun:
    adapter = FakeAdapter("beta", "message", frozenset({"openai-completions"}), "2.5")
    results = [
        CaseResult("beta", C1, "split-invariance", "passed"),
        CaseResult("beta", C1, "truncation", "known_failure", (Failure("cut stream ended in done"),), HOSTILE_ISSUE),
        CaseResult("beta", C3, "split-invariance", "failed", (Failure(HOSTILE, "cuts:1,2", REPRO + " <b>"),)),
        CaseResult("beta", C3, "truncation", "passed"),
    ]  # fmt: skip
    return AdapterRun(adapter, "2.5", results)


def make_report(
    runs: Sequence[AdapterRun] | None = None,
    *,
    started: datetime = STARTED,
    finished: datetime = FINISHED,
    environment: Mapping[str, str] | None = None,
) -> Report:
    return build_report(
        list(runs) if runs is not None else [alpha_run(), beta_run()],
        CASES,
        SKIPPED,
        CONFIG,
        started=started,
        finished=finished,
        environment=ENV if environment is None else environment,
    )


# (adapter, check) -> (data-outcome, cell text), worked out by hand (see the module docstring).
EXPECTED_MATRIX = {
    ("alpha", "contract"): ("fail", "1/3 (1 failed, 1 errored)"),
    ("alpha", "split-invariance"): ("known", "2/3 (1 known, 1 fixed)"),
    ("alpha", "truncation"): ("pass", "3/3"),
    ("beta", "contract"): ("na", "n/a"),
    ("beta", "split-invariance"): ("fail", "1/2 (1 failed)"),
    ("beta", "truncation"): ("known", "1/2 (1 known)"),
}
# Totals over both adapters: 13 results.
EXPECTED_COUNTS = {
    "passed": 7,
    "failed": 2,
    "timeout": 0,
    "crashed": 0,
    "errored": 1,
    "known_failure": 2,
    "fixed": 1,
}


def v1_text(report: Report) -> str:
    """``report`` as a version 1 file (what the tool wrote before issue 36), built here
    so that the conversion is tested against the old layout, not against itself."""
    lines = [json.loads(line) for line in render_jsonl(report).splitlines()]
    header = {k: v for k, v in lines[0].items() if k not in ("agents", "agent_checks", "scenarios")}
    out: list[dict[str, object]] = [{**header, "version": 1}]
    rows = [("result", r.model_dump(mode="json")) for r in report.results]
    rows += [("agent_result", a.model_dump(mode="json")) for a in report.agent_results]
    out += [{"kind": kind, "seq": seq, **row} for seq, (kind, row) in enumerate(rows, start=1)]
    out.append(lines[-1])
    return "".join(json.dumps(line) + "\n" for line in out)
