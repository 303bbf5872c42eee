"""``stream-harness serve`` resumes a recorded background stream, and the resumption check
holds the reference over every resumable bundled case while catching a silent restart."""

from __future__ import annotations

import json

import httpx
import pytest

from stream_harness.adapters.protocol import AdapterResult, ReferenceAdapter
from stream_harness.conformance import bundled_cassettes, load_cases
from stream_harness.conformance.cases import Case
from stream_harness.conformance.checks import CHECKS_BY_ID
from stream_harness.conformance.checks.engine import CheckContext
from stream_harness.conformance.checks.resumption import resumable_events
from stream_harness.recordings.resume import UNKNOWN_CURSOR, stream_events
from stream_harness.server.serve import replay_server

RECORDED = bundled_cassettes() / "openai-responses" / "function_call.yaml"


def test_serve_answers_starting_after_from_the_recording() -> None:
    with replay_server([RECORDED]) as server:
        recorded = server.recorded[0].interaction.response.body
        events = stream_events(recorded)
        rid = next(e.response_id for e in events if e.response_id)
        got = httpx.get(f"{server.url}/v1/responses/{rid}?stream=true&starting_after=3")
    assert got.status_code == 200
    assert [e.sequence_number for e in stream_events(got.content)] == [
        e.sequence_number for e in events if e.sequence_number is not None and e.sequence_number > 3
    ]


@pytest.mark.parametrize(
    ("query", "status", "code"),
    [
        ("stream=true&starting_after=9999", 404, UNKNOWN_CURSOR),
        ("stream=true&starting_after=three", 400, "invalid_value"),
    ],
)
def test_serve_refuses_a_cursor_it_does_not_have(query: str, status: int, code: str) -> None:
    with replay_server([RECORDED]) as server:
        events = stream_events(server.recorded[0].interaction.response.body)
        rid = next(e.response_id for e in events if e.response_id)
        got = httpx.get(f"{server.url}/v1/responses/{rid}?{query}")
    assert got.status_code == status
    assert got.json()["error"]["code"] == code


def test_serve_refuses_an_unknown_response_id() -> None:
    with replay_server([RECORDED]) as server:
        got = httpx.get(f"{server.url}/v1/responses/resp_nobody?stream=true&starting_after=1")
    assert got.status_code == 404 and got.json()["error"]["code"] == "not_found"


def resumable_cases() -> list[Case]:
    cases, _ = load_cases([bundled_cassettes()])
    return [c for c in cases if resumable_events(c) is not None]


def test_twenty_resumable_bundled_cases_and_the_reference_resumes_each() -> None:
    cases = resumable_cases()
    assert len(cases) >= 20
    check = CHECKS_BY_ID["resumption"]
    adapter = ReferenceAdapter()
    for case in cases:
        assert check.applicable(adapter, case, case.expected_events())
        assert check.run(CheckContext(case, adapter, examples=5)) == [], case.id


class RestartsWhenRefused(ReferenceAdapter):
    """Resumes right, but when the server no longer has the cursor starts the request over
    and reports what the new stream gives: a silent restart."""

    name = "restarts-when-refused"

    def run_resumable(self, protocol: str, base_url: str, *, request_body: bytes) -> AdapterResult:
        result = super().run_resumable(protocol, base_url, request_body=request_body)
        if result.terminal == "error" and "no longer be streamed" in (
            result.message.error_message or "" if result.message else ""
        ):
            body = httpx.post(f"{base_url}/v1/responses", content=request_body).content
            return self.run(protocol, [body])
        return result


def test_an_unknown_cursor_must_end_in_error_not_a_restart() -> None:
    case = next(c for c in resumable_cases() if c.id.endswith("plain_text.yaml#0"))
    check = CHECKS_BY_ID["resumption"]
    assert check.run(CheckContext(case, ReferenceAdapter(), examples=5)) == []
    failures = check.run(CheckContext(case, RestartsWhenRefused(), examples=5))
    assert len(failures) == 1
    assert "the resume refused (unknown cursor): the adapter ended in done" in failures[0].message
    assert json.loads(failures[0].expected or "{}") == {"terminal": "error"}


def test_only_resuming_adapters_are_asked() -> None:
    case = resumable_cases()[0]
    check = CHECKS_BY_ID["resumption"]

    class NoResume:
        name, level, protocols = "plain", "message", frozenset({"openai-responses"})

    assert not check.applicable(NoResume(), case, case.expected_events())  # type: ignore[arg-type]
