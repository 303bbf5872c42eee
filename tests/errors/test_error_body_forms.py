"""Every error body form a provider documents ends in an error event with the provider's words.

Issue 28 point 4. The forms are the sourced rows of ``specs/error_bodies.yaml``: per protocol,
the JSON object, the JSON array Vertex and Gemini ``streamGenerateContent`` wrap it in, the SSE
error event, the event-stream exception, the NDJSON error line; and for every protocol the
plain-text, HTML and empty bodies a proxy or load balancer answers with. Each runs through
the reference (:func:`stream_harness.providers.reference.normalize`), both as an HTTP error
response and, where documented, in-band after a 200. The parametrization is over
:func:`registered`, so a new protocol without rows fails here rather than passing silently.

Per-protocol tests already pin the details of many of these forms; this one is the
registry-wide check that no form loses the provider's message (contract C15, C16), and the
tests at the end show it catches a body reader or a normalizer that does.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from stream_harness.contract import facts
from stream_harness.contract.events import ErrorEvent, Event
from stream_harness.errors import ErrorDetails, error_details_from_body
from stream_harness.providers import reference
from stream_harness.providers.accumulator import Accumulator
from stream_harness.providers.reference import normalize
from stream_harness.providers.registry import registered
from stream_harness.wire.eventstream import encode_message

TABLE = "error_bodies.yaml"
ANY = "any"
EXPECT_FIELDS = ("kind", "status", "provider_type", "code")
BUNDLED = "stream_harness.providers."
SPLIT = 7  # bytes per chunk of the second run of an in-band form

Normalize = Callable[..., Iterator[Event]]


@dataclass(frozen=True, slots=True)
class Form:
    """One row of the table: a body as the wire carries it and what its error must say."""

    protocol: str
    id: str
    status: int
    headers: Mapping[str, str]
    body: bytes
    message: str
    expect: Mapping[str, Any]
    source: str

    @property
    def in_band(self) -> bool:
        return self.status < 400


def _frame_payload(payload: Any) -> bytes:
    """An event-stream payload: text as is, an object as JSON, ``{bytes: obj}`` as a chunk."""
    if isinstance(payload, str):
        return payload.encode()
    if isinstance(payload, dict) and set(payload) == {"bytes"}:
        inner = json.dumps(payload["bytes"]).encode()
        payload = {"bytes": base64.b64encode(inner).decode()}
    return json.dumps(payload).encode()


def _body(row: Mapping[str, Any]) -> bytes:
    if "frames" in row:
        return b"".join(
            encode_message(frame["headers"], _frame_payload(frame["payload"]))
            for frame in row["frames"]
        )
    body = row["body"]
    assert isinstance(body, str)
    return body.encode()


def _form(protocol: str, row: Mapping[str, Any]) -> Form:
    for key in ("id", "status", "message", "source"):
        assert key in row, f"{TABLE} {protocol}: a row without {key!r}: {row}"
    assert ("body" in row) != ("frames" in row), f"{TABLE} {protocol} {row['id']}: body or frames"
    expect = row.get("expect") or {}
    unknown = set(expect) - set(EXPECT_FIELDS)
    assert not unknown, f"{TABLE} {protocol} {row['id']}: unknown expect fields {unknown}"
    return Form(
        protocol=protocol,
        id=str(row["id"]),
        status=int(row["status"]),
        headers={str(k): str(v) for k, v in (row.get("headers") or {}).items()},
        body=_body(row),
        message=str(row["message"]),
        expect=expect,
        source=str(row["source"]),
    )


def _load_table() -> dict[str, list[Mapping[str, Any]]]:
    with facts.spec_path(TABLE).open(encoding="utf-8") as handle:
        table = yaml.safe_load(handle)
    assert isinstance(table, dict)
    return table


TABLE_ROWS = _load_table()


def forms_of(protocol: str) -> list[Form]:
    """The generic proxy forms followed by the protocol's own documented forms."""
    rows = [*TABLE_ROWS[ANY], *TABLE_ROWS.get(protocol, [])]
    return [_form(protocol, row) for row in rows]


ALL_FORMS = [form for p in registered() for form in forms_of(p.id)]


def failures(form: Form, run: Normalize = normalize) -> list[str]:
    """What is wrong with the events ``run`` makes of ``form`` (empty when all is right)."""
    events = list(run(form.protocol, [form.body], status=form.status, headers=form.headers))
    if not events or not isinstance(events[-1], ErrorEvent):
        last = events[-1].type if events else "nothing"
        return [f"ends in {last}, not error"]
    end = events[-1]
    problems: list[str] = []
    if [e.type for e in events if isinstance(e, ErrorEvent)] != ["error"]:
        problems.append("more than one error event")
    if end.error_message != form.message:
        problems.append(f"message {end.error_message!r}, the provider said {form.message!r}")
    info = end.error
    if info is None:
        return [*problems, "no ErrorInfo"]
    for name, wanted in form.expect.items():
        got = getattr(info, name)
        if got != wanted:
            problems.append(f"{name} {got!r}, expected {wanted!r}")
    if info.origin != "provider":
        problems.append(f"origin {info.origin!r}: the provider reported this error")
    if form.in_band:
        # The error may arrive cut anywhere; its message must not depend on where (C13).
        pieces = [form.body[i : i + SPLIT] for i in range(0, len(form.body), SPLIT)]
        split = list(run(form.protocol, pieces, status=form.status, headers=form.headers))
        if split != events:
            problems.append(f"fed in {SPLIT}-byte chunks, the events differ")
    return problems


@pytest.mark.parametrize("form", ALL_FORMS, ids=[f"{f.protocol}-{f.id}" for f in ALL_FORMS])
def test_every_documented_error_body_form_carries_the_provider_message(form: Form) -> None:
    """C15 and C16 for one form: the provider's words, its classification, split or not."""
    assert failures(form) == [], form.source


def test_every_registered_protocol_lists_its_own_forms() -> None:
    # The bundled ones: a plugin's protocol installed beside us gets the proxy forms only.
    ids = {p.id for p in registered() if p.translator.__module__.startswith(BUNDLED)}
    assert len(ids) >= 13
    sections = set(TABLE_ROWS) - {ANY}
    assert ids <= sections, f"protocols without error body forms in {TABLE}: {ids - sections}"
    for protocol in sorted(ids):
        forms = forms_of(protocol)
        names = [f.id for f in forms]
        assert len(names) == len(set(names)), f"{protocol}: duplicate form ids"
        own = [f for f in forms if f.id not in {r["id"] for r in TABLE_ROWS[ANY]}]
        assert any(not f.in_band for f in own), f"{protocol}: no HTTP error body form"


def test_the_table_names_only_registered_protocols() -> None:
    # Sections for plugins' protocols would be silently skipped; a typo would too.
    assert set(TABLE_ROWS) - {ANY} <= {p.id for p in registered()}


# ----------------------------------------------------------------- the test catches breakage


def _failing(forms: Iterable[Form]) -> set[tuple[str, str]]:
    return {(f.protocol, f.id) for f in forms if failures(f)}


def _drops_array_wrapper(body: Any) -> ErrorDetails:
    """A reader that only understands a top-level JSON object (no Vertex / Gemini array)."""
    text = bytes(body).decode() if isinstance(body, bytes | bytearray) else body
    if isinstance(text, str) and text.lstrip().startswith("["):
        return ErrorDetails()
    return error_details_from_body(body)


def _status_line_reader(body: Any) -> ErrorDetails:
    """A reader that gives the HTTP reason phrase, not what the provider wrote."""
    return ErrorDetails(message="Bad Request")


def _raw_text_reader(body: Any) -> ErrorDetails:
    """A reader that takes the whole body as the message (raw HTML, raw JSON)."""
    text = bytes(body).decode() if isinstance(body, bytes | bytearray) else str(body)
    return ErrorDetails(message=text.strip() or None)


def test_a_reader_that_drops_the_array_wrapper_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Vertex's and Gemini's array bodies are rows: a reader that misses them fails them."""
    monkeypatch.setattr(reference, "error_details_from_body", _drops_array_wrapper)
    caught = _failing(ALL_FORMS)
    arrays = {
        (f.protocol, f.id) for f in ALL_FORMS if not f.in_band and f.body.lstrip().startswith(b"[")
    }
    assert arrays, "the table has no JSON array form"
    assert arrays <= caught
    assert caught <= arrays  # the rest still passes: the check is about the message


def test_a_reader_that_returns_the_status_line_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The message is compared exactly, so a reason phrase in its place fails every HTTP row."""
    monkeypatch.setattr(reference, "error_details_from_body", _status_line_reader)
    caught = _failing(ALL_FORMS)
    http = {(f.protocol, f.id) for f in ALL_FORMS if not f.in_band}
    assert caught == http


def test_a_reader_that_keeps_the_raw_body_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Raw markup contains the title too: exact comparison is what tells them apart."""
    monkeypatch.setattr(reference, "error_details_from_body", _raw_text_reader)
    caught = _failing(ALL_FORMS)
    html = {(f.protocol, f.id) for f in ALL_FORMS if f.id.startswith("html-")}
    assert html and html <= caught


def test_normalizers_that_lose_the_in_band_message_are_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every translator broken the same way: when it ends the stream on an error the
    # provider reported (it hands the error over for classification), it says "error
    # event" instead of the provider's words. HTTP errors do not go through here.
    real = Accumulator.fail

    def fail(self: Accumulator, error_message: str, **kwargs: Any) -> None:
        reported = kwargs.get("body") is not None or kwargs.get("headers") is not None
        real(self, "error event" if reported else error_message, **kwargs)

    monkeypatch.setattr(Accumulator, "fail", fail)
    in_band = {(f.protocol, f.id) for f in ALL_FORMS if f.in_band}
    caught = _failing(ALL_FORMS)
    assert caught <= in_band
    # Cohere's in-band failure is a stop reason (finish_reason ERROR): its message reaches
    # the event through the stop-reason table, not through ``fail``.
    assert in_band - caught == {("cohere-v2-chat", "sse-message-end-error")}
