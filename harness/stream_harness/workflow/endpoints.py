"""Where each protocol's streaming endpoint is and how a request to it is built.

The facts (base URLs, key variables, auth headers, SSE framing) are rows of
``specs/recording.yaml``; this module reads them and turns a user's ``request.json`` into
the URL, headers and body that ``record`` sends and that ``import`` writes into a cassette
when the input had no request of its own.

``request.json`` is the JSON body the provider's API takes, with two optional members the
harness takes out before sending: ``"_path"`` (replaces the endpoint path; ``{model}`` is
filled in) and ``"_headers"`` (extra headers, e.g. ``anthropic-beta``). Any other member
starting with ``_`` is refused, so a typo cannot reach the provider. For a protocol whose
model is in the URL (Gemini), ``"model"`` is taken out of the body and put in the path.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from stream_harness.contract import facts
from stream_harness.providers.registry import protocol_ids

__all__ = [
    "Endpoint",
    "PreparedRequest",
    "RequestSpecError",
    "SSEFraming",
    "endpoints",
    "get_endpoint",
    "prepare_request",
]

TABLE_NAME = "recording.yaml"
DIRECTIVES = frozenset({"_path", "_headers"})


class RequestSpecError(ValueError):
    """A request.json that cannot be sent; the message is one line."""


class _Row(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _SSERow(_Row):
    event_names: bool
    line_end: str
    done: str | None


class _ProtocolRow(_Row):
    base_url: str
    path: str
    model_in_path: bool
    stream_field: bool
    api_key_env: list[str]
    auth_header: str
    auth_prefix: str
    headers: dict[str, str]
    sse: _SSERow
    source: str


class _TableFile(_Row):
    protocols: dict[str, _ProtocolRow]


@dataclass(frozen=True, slots=True)
class SSEFraming:
    event_names: bool
    line_end: str
    done: str | None


@dataclass(frozen=True, slots=True)
class Endpoint:
    protocol: str
    base_url: str
    path: str
    model_in_path: bool
    stream_field: bool
    api_key_env: tuple[str, ...]
    auth_header: str
    auth_prefix: str
    headers: Mapping[str, str]
    sse: SSEFraming

    def url(
        self, model: str | None = None, *, base_url: str | None = None, path: str | None = None
    ) -> str:
        template = path if path is not None else self.path
        if "{model}" in template:
            template = template.replace("{model}", model or "model")
        return (base_url or self.base_url).rstrip("/") + template


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    url: str
    headers: dict[str, str]
    body: bytes
    model: str | None


@functools.cache
def endpoints() -> Mapping[str, Endpoint]:
    """The registered protocols (harness/stream_harness/providers/registry.py) that ``specs/recording.yaml`` can
    record, in the registry's order; a broken table, or a row for a protocol nobody
    registered, raises ValueError."""
    try:
        data = _TableFile.model_validate(facts.load_yaml(TABLE_NAME))
    except ValidationError as exc:
        raise ValueError(f"specs/{TABLE_NAME}: {exc}") from exc
    order = protocol_ids()
    stray = sorted(set(data.protocols) - set(order))
    if stray:
        raise ValueError(f"specs/{TABLE_NAME}: protocols.{stray[0]}: not a registered protocol")
    rows = sorted(data.protocols.items(), key=lambda item: order.index(item[0]))
    return {
        pid: Endpoint(
            protocol=pid,
            base_url=row.base_url,
            path=row.path,
            model_in_path=row.model_in_path,
            stream_field=row.stream_field,
            api_key_env=tuple(row.api_key_env),
            auth_header=row.auth_header,
            auth_prefix=row.auth_prefix,
            headers=dict(row.headers),
            sse=SSEFraming(row.sse.event_names, row.sse.line_end, row.sse.done),
        )
        for pid, row in rows
    }


def get_endpoint(protocol: str) -> Endpoint:
    table = endpoints()
    if protocol not in table:
        raise RequestSpecError(f"no endpoint for protocol {protocol!r} (known: {', '.join(table)})")
    return table[protocol]


def read_request_file(path: Path) -> dict[str, Any]:
    """The request spec in the file ``path``; raises RequestSpecError, also when unreadable."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RequestSpecError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return read_request_spec(data, str(path))


def read_request_spec(data: bytes, source: str) -> dict[str, Any]:
    try:
        spec = json.loads(data)
    except ValueError as exc:
        raise RequestSpecError(f"{source}: not JSON: {exc}") from None
    if not isinstance(spec, dict):
        raise RequestSpecError(f"{source}: a request must be a JSON object (the request body)")
    return spec


def prepare_request(
    endpoint: Endpoint,
    spec: Mapping[str, Any],
    *,
    base_url: str | None = None,
    api_key: str | None = None,
) -> PreparedRequest:
    """URL, headers and body for one streaming request; raises RequestSpecError."""
    body = dict(spec)
    unknown = sorted(k for k in body if k.startswith("_") and k not in DIRECTIVES)
    if unknown:
        raise RequestSpecError(
            f"unknown directive {unknown[0]!r} in the request (known: {', '.join(sorted(DIRECTIVES))})"
        )
    path = body.pop("_path", None)
    if path is not None and not isinstance(path, str):
        raise RequestSpecError("'_path' must be a string")
    extra = body.pop("_headers", {})
    if not isinstance(extra, dict) or not all(isinstance(v, str) for v in extra.values()):
        raise RequestSpecError("'_headers' must be an object of strings")
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise RequestSpecError("'model' must be a string")
    template = path if path is not None else endpoint.path
    if endpoint.model_in_path:
        body.pop("model", None)
        if "{model}" in template and not model:
            raise RequestSpecError(
                f'{endpoint.protocol} puts the model in the URL: give "model" in the request'
            )
    if endpoint.stream_field and "stream" not in body:
        body["stream"] = True
    # httpx would offer br and zstd too when those packages are installed; vcrpy's
    # decode_compressed_response undoes gzip and deflate everywhere, so the cassette does
    # not depend on what happens to be installed on the recording machine.
    headers = {"content-type": "application/json", "accept-encoding": "gzip, deflate"}
    headers.update(endpoint.headers)
    if api_key is not None:
        headers[endpoint.auth_header] = endpoint.auth_prefix + api_key
    headers.update({k.lower(): v for k, v in extra.items()})
    encoded = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return PreparedRequest(
        url=endpoint.url(model, base_url=base_url, path=path),
        headers=headers,
        body=encoded,
        model=model,
    )
