"""Clients kept across runs give the same results as clients built for every run.

Library adapters build the clients whose construction costs more than a run once
(``LibraryAdapter.once``: a google-genai ``Client`` loads two SSL contexts, about 50 ms,
for a run of 2 ms), on the adapter's one transport, which serves each run's response
(``LibraryAdapter.transport``). These tests pin that this changes nothing a check can see:
every run still reads exactly its own chunks, and a kept client's results are those of a
fresh adapter, run by run, over every bundled case of the protocol and several splits.
The reference message the mappings read is memoized per body; it is the same message for
every split. The same comparisons for the third-party groups run in their matrix
environments (``~/.cache/stream-harness/matrix/<group>-*/bin/python -m pytest
tests/adapters/test_adapter_reuse.py``), and are skipped where the library is not installed.
"""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest

from stream_harness.adapters.conventions import Collected, reference_message
from stream_harness.adapters.in_process import Replay
from stream_harness.adapters.library import Driven, LibraryAdapter
from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.protocol import Adapter, AdapterLoadError, AdapterResult
from stream_harness.conformance import bundled_cassettes
from stream_harness.conformance.cases import Case, load_cases
from stream_harness.providers.reference import normalize
from stream_harness.recordings.chunking import split_at


class EchoAdapter(LibraryAdapter):
    """Reads the response through a client built once, and reports the chunks it read."""

    name = "echo"
    distribution = "httpx"
    protocols = frozenset({"openai-completions"})

    def drive(self, protocol: str, replay: Replay) -> Driven:
        transport = self.transport(httpx, replay)
        client = self.once("client", lambda: httpx.Client(transport=transport))
        with client.stream("POST", "http://harness.invalid/v1/chat/completions") as response:
            read = list(response.iter_raw())
            return Driven(value=(response.status_code, read))

    def collect(self, protocol: str, value: Any) -> Collected:
        return Collected()

    def result(self, protocol: str, driven: Driven, reference: Any) -> AdapterResult:
        return AdapterResult(message=None, raw={"status": driven.value[0], "read": driven.value[1]})


def test_a_kept_client_reads_each_runs_own_chunks() -> None:
    adapter = EchoAdapter()
    rng = random.Random(7)
    for status in (200, 429, 200):
        body = bytes(rng.randrange(256) for _ in range(64))
        for cuts in ([], [1], [5, 6, 40], list(range(1, 64))):
            chunks = split_at(body, cuts)
            raw = adapter.run("openai-completions", chunks, status=status).raw
            assert raw["status"] == status
            assert raw["read"] == chunks
    assert len(adapter._kept) == 1  # one client served every run


def test_once_builds_once_per_key() -> None:
    adapter = EchoAdapter()
    built: list[str] = []
    for key in ("a", "b", "a", "a", "b"):
        adapter.once(key, lambda key=key: built.append(key) or key)  # type: ignore[func-returns-value]
    assert built == ["a", "b"]


def _cases(protocol: str) -> list[Case]:
    cases, _ = load_cases([bundled_cassettes() / protocol])
    return cases


def _splits(case: Case) -> list[list[int]]:
    n = len(case.body)
    rng = random.Random(case.id)
    return [[], [n // 2], sorted(rng.sample(range(1, n), min(8, n - 1)))]


def _outcome(result: AdapterResult) -> tuple[Any, ...]:
    message = result.message.model_dump(mode="json") if result.message is not None else None
    return (result.terminal, message, result.raised, result.crashed)


def _load(name: str) -> Adapter:
    try:
        return load_adapter(name)
    except AdapterLoadError as exc:
        pytest.skip(f"{name} not installed here: {exc}")


# Adapters that keep a client across runs, with the protocols where they do.
KEPT = [
    ("any-llm", "google-generative-ai"),
    ("google-genai", "google-generative-ai"),
    ("pydantic-ai", "google-generative-ai"),
    ("pydantic-ai", "mistral-chat"),
    ("langchain", "google-generative-ai"),
    ("langchain", "azure-openai-completions"),
    ("langchain", "azure-openai-responses"),
    ("langchain", "bedrock-invoke-stream"),
    ("langchain", "cohere-v2-chat"),
    ("aisuite", "openai-completions"),
    ("aisuite", "anthropic-messages"),
    ("langchain", "vertex-gemini"),
    ("langchain", "vertex-anthropic"),
]


@pytest.mark.parametrize(("name", "protocol"), KEPT, ids=[f"{n}-{p}" for n, p in KEPT])
def test_kept_clients_give_what_fresh_ones_give(name: str, protocol: str) -> None:
    """Run by run, a kept client against two fresh adapters (each builds its clients anew).

    Where the two fresh runs disagree the library itself is not deterministic there
    (langchain-google-genai names a call without an id with a fresh uuid4), so that pair is
    not compared; most pairs must be.
    """
    kept = _load(name)
    compared = total = 0
    for case in _cases(protocol):
        for cuts in _splits(case):
            chunks = split_at(case.body, cuts)
            want, again = (
                load_adapter(name).run(protocol, chunks, status=case.status, headers=case.headers)
                for _ in range(2)
            )
            got = kept.run(protocol, chunks, status=case.status, headers=case.headers)
            total += 1
            if _outcome(want) != _outcome(again):
                continue
            compared += 1
            assert _outcome(got) == _outcome(want), (case.id, cuts)
    assert compared >= total * 3 // 4, f"only {compared} of {total} runs were deterministic"


def test_the_reference_message_is_the_whole_bodys_for_every_split() -> None:
    for case in _cases("openai-completions")[:6]:
        events = list(
            normalize(case.protocol, [case.body], status=case.status, headers=case.headers)
        )
        whole = events[-1].message  # type: ignore[union-attr]
        for cuts in _splits(case):
            got = reference_message(
                case.protocol, split_at(case.body, cuts), case.status, case.headers
            )
            assert got == whole
