"""Removing what :mod:`stream_harness.workflow.secrets` finds, before anything is written.

``record`` and ``import`` both pass every interaction through one :class:`Scrubber`, and
then lint the result with the same table, so a secret the scrubber misses is also a secret
lint reports, and the command fails instead of writing it.

What is removed, and how:

- a header named in the table (request *and* response: vcrpy's ``filter_headers`` only
  covers request headers, research/ecosystem.md section 1) is dropped, as vcrpy drops it;
- a query parameter named in the table is dropped, as vcrpy's
  ``filter_query_parameters`` does;
- any other secret (a pattern in a header value, the URI or a body; a JSON field's value;
  the API key the recorder sent) is replaced in place by the placeholder, leaving every
  other byte as it was, so a scrubbed SSE body still frames and parses the same way.
  ``content-length`` is fixed when a body changed length.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from stream_harness.recordings.cassette import Interaction, Request
from stream_harness.workflow.secrets import Hit, SecretTable, load_table, split_query

__all__ = ["Scrubber"]


def _replace_hits(text: str, hits: Sequence[Hit], placeholder: str) -> str:
    for hit in sorted(hits, key=lambda h: h.start, reverse=True):
        text = text[: hit.start] + placeholder + text[hit.end :]
    return text


class Scrubber:
    """Scrubs headers, URIs and bodies by the secrets table.

    ``literals`` are secrets the caller knows for sure (the API key ``record`` sends): they
    are removed wherever they appear, whatever their shape, so a key with a format the
    table does not know still never reaches the file.
    """

    def __init__(self, literals: Iterable[str] = (), table: SecretTable | None = None) -> None:
        self.table = table if table is not None else load_table()
        self.literals = tuple(s for s in literals if s)

    # --- the three places -------------------------------------------------------------

    def header_value(self, name: str, value: str) -> str | None:
        """The scrubbed value, or None when the header must be dropped."""
        if self.table.header_kind(name) is not None:
            if self.table.sensitive_value(value):
                return None
            # A placeholder value stays, but a literal secret beside it does not.
            return _replace_hits(
                value, self.table.scan(value, "header", self.literals), self.table.placeholder
            )
        hits = self.table.scan(value, "header", self.literals)
        return _replace_hits(value, hits, self.table.placeholder)

    def headers(self, headers: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for name, values in headers.items():
            kept = [
                v for v in (self.header_value(name, value) for value in values) if v is not None
            ]
            if kept:
                out[name] = kept
        return out

    def uri(self, uri: str) -> str:
        base, segments, fragment = split_query(uri)
        kept = [s for s in segments if self.table.query_parameter_kind(s) is None]
        rebuilt = base + ("?" + "&".join(kept) if kept else "") + fragment
        return _replace_hits(
            rebuilt, self.table.scan(rebuilt, "query", self.literals), self.table.placeholder
        )

    def body(self, body: bytes) -> bytes:
        text = body.decode("latin-1")
        hits = self.table.scan(text, "body", self.literals)
        if not hits:
            return body
        return _replace_hits(text, hits, self.table.placeholder).encode("latin-1")

    def text(self, value: str) -> str:
        """Any other text bound for the user's screen or log (an httpx error names the URL)."""
        hits = self.table.scan(value, "body", self.literals) + self.table.scan_uri(
            value, self.literals
        )
        kept = [
            h
            for i, h in enumerate(hits)
            if all(h.end <= k.start or h.start >= k.end for k in hits[:i])
        ]
        return _replace_hits(value, kept, self.table.placeholder)

    # --- whole interactions -----------------------------------------------------------

    def interaction(self, interaction: Interaction) -> Interaction:
        req, resp = interaction.request, interaction.response
        req_body = self.body(req.body)
        resp_body = self.body(resp.body)
        request = Request(
            method=req.method,
            uri=self.uri(req.uri),
            headers=_fix_length(self.headers(req.headers), len(req.body), len(req_body)),
            body=req_body,
            body_exact=req.body_exact,
        )
        response = replace(
            resp,
            headers=_fix_length(self.headers(resp.headers), len(resp.body), len(resp_body)),
            body=resp_body,
        )
        return Interaction(index=interaction.index, request=request, response=response)

    # --- vcrpy hooks (before_record_request / before_record_response) -----------------

    def vcr_request(self, request: Any) -> Any:
        """vcrpy's ``before_record_request``: takes and returns a ``vcr.request.Request``."""
        request = copy.deepcopy(request)
        body = request.body
        if isinstance(body, str):
            body = body.encode("utf-8")
        new_body = self.body(body) if isinstance(body, bytes) else body
        headers: dict[str, str] = {}
        for name, value in request.headers.items():
            scrubbed = self.header_value(name, str(value))
            if scrubbed is not None:
                headers[name] = scrubbed
        if isinstance(body, bytes) and isinstance(new_body, bytes):
            _fix_length_flat(headers, len(body), len(new_body))
        request.headers = headers
        request.uri = self.uri(request.uri)
        request.body = new_body
        return request

    def vcr_response(self, response: dict[str, Any]) -> dict[str, Any]:
        """vcrpy's ``before_record_response``: takes and returns vcrpy's response dict.

        vcrpy runs its ``decode_compressed_response`` filter first, so the body seen here
        is the one a client reads.
        """
        response = copy.deepcopy(response)
        body = response.get("body", {}).get("string", b"")
        if isinstance(body, str):
            body = body.encode("utf-8")
        new_body = self.body(body)
        headers = {
            name: list(values) if isinstance(values, list) else [values]
            for name, values in (response.get("headers") or {}).items()
        }
        response["headers"] = _fix_length(self.headers(headers), len(body), len(new_body))
        response["body"] = {**response.get("body", {}), "string": new_body}
        return response


def _fix_length(headers: dict[str, list[str]], old: int, new: int) -> dict[str, list[str]]:
    if old != new:
        for name in headers:
            if name.lower() == "content-length":
                headers[name] = [str(new)]
    return headers


def _fix_length_flat(headers: dict[str, str], old: int, new: int) -> None:
    if old != new:
        for name in headers:
            if name.lower() == "content-length":
                headers[name] = str(new)
