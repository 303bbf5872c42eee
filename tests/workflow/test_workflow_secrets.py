"""The secrets table, the scanner and the scrubber: every kind, in every place.

Samples are built by concatenation so that this file itself does not look like it holds
live credentials to a repository secret scanner; they have each kind's real shape. The
expected kinds, places and scrubbed texts below are written by hand from the formats, not
read from the table: a row that stops matching its own kind fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

from stream_harness.recordings.cassette import Interaction, Request, Response, dump_cassette
from stream_harness.workflow.lint import lint_file, lint_paths
from stream_harness.workflow.scrub import Scrubber
from stream_harness.workflow.secrets import load_table

PLACEHOLDER = "<filtered>"

# kind -> (planted text, the part of it that is the secret). Contextual kinds carry their
# context (a name, "organization (", "Bearer "), which must survive scrubbing.
SAMPLES: dict[str, tuple[str, str]] = {
    "anthropic-key": ("sk-ant-" + "api03-" + "T3st" * 10,) * 2,
    "openai-project-key": ("sk-" + "proj-" + "Ab1" * 16,) * 2,
    "openai-key": ("sk-" + "Zq9" * 16,) * 2,
    "google-api-key": ("AI" + "za" + "Sy" + "B" * 33,) * 2,
    "google-oauth-token": ("ya" + "29." + "a0Af" * 10,) * 2,
    "aws-access-key-id": ("AK" + "IA" + "Q7" * 8,) * 2,
    "aws-temporary-access-key-id": ("AS" + "IA" + "Z3" * 8,) * 2,
    "aws-secret-access-key": (
        "aws_secret_access_key=" + "wJalr" + "K7m" * 11 + "Xy",
        "wJalr" + "K7m" * 11 + "Xy",
    ),
    "github-token": ("gh" + "p_" + "A1b2" * 9,) * 2,
    "github-fine-grained-token": ("github" + "_pat_" + "11AB" * 15,) * 2,
    "huggingface-token": ("hf" + "_" + "AbCd" * 8 + "Ef",) * 2,
    "groq-key": ("gs" + "k_" + "Gq7" * 18,) * 2,
    "xai-key": ("xa" + "i-" + "Xa1" * 27,) * 2,
    "slack-token": ("xo" + "xb-" + "1234567890-abcdefghij",) * 2,
    "private-key": ("-----BEGIN " + "RSA PRIVATE KEY-----MIIEow-----END RSA " + "PRIVATE KEY-----",)
    * 2,
    "openai-organization-id": ("org-" + "Ab12" * 6,) * 2,
    "organization-id": ("org" + "_" + "Xy34" * 5,) * 2,
    "openai-project-id": ("proj" + "_" + "Pq56" * 6,) * 2,
    "openai-user-id": ("user" + "-" + "Uv78" * 6,) * 2,
    "anthropic-workspace-id": ("wrkspc" + "_" + "Ws90" * 6,) * 2,
    "organization-uuid": (
        "organization (3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b)",
        "3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b",
    ),
    "aws-account-id": (
        "arn:aws:bedrock:us-east-1:123456789012:inference-profile/x",
        "123456789012",
    ),
    "google-project-number": ("projects/987654321098/locations", "987654321098"),
    "bearer-token": ("Bearer tok1234567890abcdefXYZ", "tok1234567890abcdefXYZ"),
    "jwt": (
        "eyJ" + "hbGciOiJIUzI1NiJ9" + ".eyJ" + "zdWIiOiIxMjM0In0" + ".sig" + "nature_value_1234",
    )
    * 2,
    "cookie-value": ("x; __cf_bm=" + "Zx81kQ0pLm92", "Zx81kQ0pLm92"),
}

# Where each kind is looked for. Everything is searched in headers and bodies; a PEM block,
# a Bearer credential and a cookie have no business in a URL, so the URI scan skips them.
NOT_IN_QUERY = {"private-key", "bearer-token", "cookie-value"}

# The list, each of which must be a kind.
REQUIRED_KINDS = {
    "openai-key", "openai-project-key", "anthropic-key", "google-api-key", "aws-access-key-id",
    "aws-temporary-access-key-id", "aws-secret-access-key", "bearer-token", "cookie-value",
    "github-token", "huggingface-token", "groq-key", "xai-key", "openai-organization-id",
    "openai-project-id",
}  # fmt: skip

SSE_BEFORE = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"see '
SSE_AFTER = ' now"}}\n\n'


def _interaction(
    *,
    uri: str = "https://api.anthropic.com/v1/messages",
    req_headers: dict[str, list[str]] | None = None,
    resp_headers: dict[str, list[str]] | None = None,
    req_body: bytes = b'{"stream":true}',
    resp_body: bytes = b"",
    status: int = 200,
) -> Interaction:
    return Interaction(
        0,
        Request("POST", uri, req_headers or {"content-type": ["application/json"]}, req_body),
        Response(status, "OK", resp_headers or {"content-type": ["text/event-stream"]}, resp_body),
    )


def _planted(place: str, text: str) -> tuple[Interaction, str]:
    """An interaction with ``text`` in one place, and lint's name for that place."""
    if place == "header":
        return _interaction(
            resp_headers={"content-type": ["text/event-stream"], "x-echo": [f"v={text};"]}
        ), "response header x-echo"
    if place == "query":
        return _interaction(
            uri=f"https://api.anthropic.com/v1/messages?beta=true&note={text}"
        ), "request uri"
    if place == "body":
        return _interaction(resp_body=(SSE_BEFORE + text + SSE_AFTER).encode()), "response body"
    assert place == "error text"
    body = (
        '{"type":"error","error":{"type":"rate_limit_error","message":"Limit hit for '
        + text
        + ', retry later"}}'
    )
    return _interaction(
        status=429, resp_headers={"content-type": ["application/json"]}, resp_body=body.encode()
    ), "response body"


PLACES = ["header", "query", "body", "error text"]
CASES = [
    pytest.param(kind, place, id=f"{kind}-{place}")
    for kind in SAMPLES
    for place in PLACES
    if not (place == "query" and kind in NOT_IN_QUERY)
]


def test_the_table_has_a_sample_for_every_pattern_and_the_required_kinds() -> None:
    table = load_table()
    pattern_kinds = {p.kind for p in table.patterns}
    assert pattern_kinds == set(SAMPLES)
    assert REQUIRED_KINDS <= pattern_kinds
    assert len(pattern_kinds) >= 15
    for pattern in table.patterns:
        expected = (
            {"header", "body"} if pattern.kind in NOT_IN_QUERY else {"header", "query", "body"}
        )
        assert pattern.where == expected, pattern.kind


def test_every_row_names_its_source() -> None:
    from stream_harness.contract.facts import load_yaml

    data = load_yaml("secrets")
    for section in ("placeholders", "headers", "query_parameters", "body_fields", "patterns"):
        for row in data[section]:
            assert row.get("source", "").strip(), (section, row)


@pytest.mark.parametrize(("kind", "place"), CASES)
def test_lint_finds_a_planted_secret(kind: str, place: str, tmp_path: Path) -> None:
    text, secret = SAMPLES[kind]
    interaction, where = _planted(place, text)
    path = tmp_path / "anthropic-messages" / "planted.yaml"
    dump_cassette([interaction], path)
    report = lint_file(path, check_normalize=False)
    assert [(f.kind, f.where, f.interaction) for f in report.findings] == [(kind, where, 0)]
    line = str(report.findings[0])
    assert line.startswith(f"{path}: interaction 0: {kind} in {where}: ")
    assert secret not in line  # findings go to CI logs: masked


@pytest.mark.parametrize(("kind", "place"), CASES)
def test_scrubber_removes_exactly_the_secret(kind: str, place: str) -> None:
    text, secret = SAMPLES[kind]
    interaction, _where = _planted(place, text)
    scrubbed = Scrubber().interaction(interaction)
    redacted = text.replace(secret, PLACEHOLDER)
    if place == "header":
        assert scrubbed.response.headers["x-echo"] == [f"v={redacted};"]
    elif place == "query":
        assert (
            scrubbed.request.uri
            == f"https://api.anthropic.com/v1/messages?beta=true&note={redacted}"
        )
    else:
        assert scrubbed.response.body == interaction.response.body.replace(
            secret.encode(), PLACEHOLDER.encode()
        )
    # And what is left is clean by lint's rule.
    table = load_table()
    assert table.scan(scrubbed.response.body.decode("latin-1"), "body") == []
    assert table.scan_uri(scrubbed.request.uri) == []
    assert all(
        table.scan_header(n, v) == [] for n, vs in scrubbed.response.headers.items() for v in vs
    )


# The header list, each with a value that matches no pattern: the name alone decides.
SENSITIVE_HEADERS = [
    ("authorization", "authorization-header"),
    ("x-api-key", "api-key-header"),
    ("x-goog-api-key", "api-key-header"),
    ("api-key", "api-key-header"),
    ("cookie", "cookie"),
    ("set-cookie", "cookie"),
    ("openai-organization", "organization-id"),
    ("openai-project", "project-id"),
    ("anthropic-organization-id", "organization-id"),
    ("x-amz-security-token", "aws-session-token-header"),
]


@pytest.mark.parametrize(("name", "kind"), SENSITIVE_HEADERS)
@pytest.mark.parametrize("side", ["request", "response"])
def test_sensitive_headers_are_found_and_dropped(
    name: str, kind: str, side: str, tmp_path: Path
) -> None:
    value = "acct-value-7f3a9"
    # Recorded casing varies (Mirascope and llm-gemini keep `Set-Cookie`): look it up in any case.
    headers = {"content-type": ["application/json"], name.title(): [value]}
    it = (
        _interaction(req_headers=headers)
        if side == "request"
        else _interaction(resp_headers=headers)
    )
    path = tmp_path / "x.yaml"
    dump_cassette([it], path)
    findings = lint_file(path, check_normalize=False).findings
    assert [(f.kind, f.where) for f in findings] == [(kind, f"{side} header {name}")]
    scrubbed = Scrubber().interaction(it)
    kept = scrubbed.request.headers if side == "request" else scrubbed.response.headers
    assert kept == {"content-type": ["application/json"]}


@pytest.mark.parametrize(
    "value", ["<filtered>", "REDACTED", "Bearer <filtered>", "", "fake-key-for-tests"]
)
def test_placeholder_values_are_accepted_and_kept(value: str, tmp_path: Path) -> None:
    it = _interaction(req_headers={"authorization": [value], "x-api-key": [value]})
    path = tmp_path / "x.yaml"
    dump_cassette([it], path)
    assert lint_file(path, check_normalize=False).findings == []
    assert Scrubber().interaction(it).request.headers == {
        "authorization": [value],
        "x-api-key": [value],
    }


@pytest.mark.parametrize(
    ("param", "kind"),
    [
        ("key", "api-key-query"),
        ("api_key", "api-key-query"),
        ("access_token", "oauth-token-query"),
        ("X-Amz-Signature", "aws-presigned-query"),
    ],
)
def test_sensitive_query_parameters_are_found_and_dropped(
    param: str, kind: str, tmp_path: Path
) -> None:
    uri = f"https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse&{param}=plainvalue42"
    it = _interaction(uri=uri)
    path = tmp_path / "x.yaml"
    dump_cassette([it], path)
    assert [(f.kind, f.where) for f in lint_file(path, check_normalize=False).findings] == [
        (kind, "request uri")
    ]
    scrubbed = Scrubber().interaction(it)
    assert (
        scrubbed.request.uri
        == "https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse"
    )


@pytest.mark.parametrize(
    ("member", "kind"),
    [
        ("api_key", "api-key-field"),
        ("client_secret", "oauth-client-secret-field"),
        ("user_id", "user-id-field"),
        ("safety_identifier", "user-id-field"),
    ],
)
def test_sensitive_json_fields_are_found_and_replaced(
    member: str, kind: str, tmp_path: Path
) -> None:
    body = (
        b'{"model":"m","metadata":{"' + member.encode() + b'": "plain-value-1234"},"stream":true}'
    )
    it = _interaction(req_body=body)
    path = tmp_path / "x.yaml"
    dump_cassette([it], path)
    assert [(f.kind, f.where) for f in lint_file(path, check_normalize=False).findings] == [
        (kind, "request body")
    ]
    expected = b'{"model":"m","metadata":{"' + member.encode() + b'": "<filtered>"},"stream":true}'
    assert Scrubber().interaction(it).request.body == expected


@pytest.mark.parametrize(
    "text",
    [
        "Bearer authentication is described in RFC 6750",
        "pip install hf_transfer and set HF_HUB_ENABLE_HF_TRANSFER",
        "the model xai-grok-2-1212 answered",
        '{"role": "user", "content": "hi", "user": null}',
        '"arguments":"{\\"user\\": \\"alice\\", \\"api_key\\": \\"abc\\"}"',
        "a task-0123456789abcdefghijkl finished; the risk-0123456789abcdefghijkl is low",
        "see projects/my-project-name/locations/us-central1",
        "organization: Acme",
    ],
)
def test_ordinary_text_is_not_a_secret(text: str) -> None:
    assert load_table().scan(text, "body") == []


def test_the_literal_key_is_removed_whatever_its_shape() -> None:
    key = "unusual.key.format!42"
    it = _interaction(
        req_headers={"x-custom-auth": [f"k={key}"]}, resp_body=f"data: echo {key}\n\n".encode()
    )
    scrubbed = Scrubber(literals=[key]).interaction(it)
    assert scrubbed.request.headers["x-custom-auth"] == ["k=<filtered>"]
    assert scrubbed.response.body == b"data: echo <filtered>\n\n"


def test_scrubbing_fixes_content_length() -> None:
    secret = SAMPLES["openai-key"][0]
    body = f"data: {secret}\n\n".encode()
    it = _interaction(resp_headers={"Content-Length": [str(len(body))]}, resp_body=body)
    scrubbed = Scrubber().interaction(it)
    assert scrubbed.response.body == b"data: <filtered>\n\n"
    assert scrubbed.response.headers["Content-Length"] == [str(len(b"data: <filtered>\n\n"))]


def test_bundled_cassettes_are_clean() -> None:
    report = lint_paths([REPO_ROOT / "cassettes"], exclude=["scenarios/*"])
    assert report.files >= 70
    assert [str(f) for f in report.findings] == []


# The corpus was scanned clean before it was copied (research/corpus-visible-notes.md
# section 5), and lint finds exactly one thing more: OpenRouter's error body echoes the
# account's user id (`"user_id": "user_..."`, a Clerk id) in its metadata, in the three
# interactions of one pydantic-ai cassette. The corpus scan looked for `user-...`, not
# for the field; this table looks for the field.
EXPLAINED_CORPUS_FINDINGS = {
    ("openai_chat/pydantic-ai__test_openrouter_errors_raised.yaml", 0, "user-id-field"),
    ("openai_chat/pydantic-ai__test_openrouter_errors_raised.yaml", 1, "user-id-field"),
    ("openai_chat/pydantic-ai__test_openrouter_errors_raised.yaml", 2, "user-id-field"),
}


@pytest.mark.corpus
def test_corpus_lint_finds_only_the_explained_findings(corpus_dir: Path) -> None:
    report = lint_paths([corpus_dir])
    assert report.files >= 80
    found = {
        (Path(f.path).relative_to(corpus_dir).as_posix(), f.interaction, f.kind)
        for f in report.findings
    }
    assert found == EXPLAINED_CORPUS_FINDINGS


def test_messages_for_the_screen_are_scrubbed_too() -> None:
    key = SAMPLES["google-api-key"][0]
    message = f"Server error for url 'https://generativelanguage.googleapis.com/v1beta/x?alt=sse&key={key}' with lit-123"
    assert Scrubber(literals=["lit-123"]).text(message) == (
        "Server error for url 'https://generativelanguage.googleapis.com/v1beta/x?alt=sse&key=<filtered>' with <filtered>"
    )
