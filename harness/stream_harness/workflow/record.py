"""``stream-harness record``: one real streaming request, recorded by vcrpy, scrubbed.

The request goes out through httpx inside ``vcr.use_cassette`` (vcrpy patches httpx's
transport, so a streamed response is drained and stored as one body, research/ecosystem.md
section 1). Scrubbing happens in vcrpy's ``before_record_request`` /
``before_record_response`` hooks, after its ``decode_compressed_response`` filter, so not
even the scratch file holds a credential. The cassette is then rewritten in the harness's
literal-block style and passes the gate in :mod:`stream_harness.workflow.writer` (read back,
linted, moved into place atomically). ``record_on_exception=False``: a request that fails
or is interrupted leaves nothing, not even the old file touched.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from stream_harness.recordings.cassette import CassetteError, load_cassette
from stream_harness.workflow.command import add_endpoint_protocol, add_out, fail
from stream_harness.workflow.endpoints import (
    RequestSpecError,
    get_endpoint,
    prepare_request,
    read_request_file,
)
from stream_harness.workflow.scrub import Scrubber
from stream_harness.workflow.websocket_session import API_KEY_ENV as WEBSOCKET_KEY_ENV
from stream_harness.workflow.websocket_session import (
    DEFAULT_UPSTREAM,
    RecordingProxy,
    record_websocket,
)
from stream_harness.workflow.websocket_session import PROTOCOL as WEBSOCKET_PROTOCOL
from stream_harness.workflow.writer import (
    WriteError,
    WriteResult,
    refuse_existing,
    scratch_dir,
    write_checked,
    write_failure,
)

__all__ = ["RecordResult", "add_record_parser", "record", "record_command"]


@dataclass(frozen=True, slots=True)
class RecordResult:
    path: Path
    status: int
    body_bytes: int
    warnings: list[str]


def _api_key(
    env_names: tuple[str, ...], environ: Mapping[str, str]
) -> tuple[str | None, str | None]:
    for name in env_names:
        value = environ.get(name)
        if value:
            return name, value
    return None, None


def record(
    protocol: str,
    request: Mapping[str, Any],
    out: Path,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    force: bool = False,
    timeout: float = 600.0,
) -> RecordResult:
    """Record one streaming request to ``out``; raises WriteError or RequestSpecError with a
    one-line message, and leaves ``out`` as it was on any failure."""
    import vcr

    endpoint = get_endpoint(protocol)
    prepared = prepare_request(endpoint, request, base_url=base_url, api_key=api_key)
    out = Path(out)
    refuse_existing(out, force)
    scrubber = Scrubber(literals=[api_key] if api_key else [])
    recorder = vcr.VCR(
        record_mode="all",
        decode_compressed_response=True,
        before_record_request=scrubber.vcr_request,
        before_record_response=scrubber.vcr_response,
    )
    with scratch_dir(out) as scratch:
        raw_path = scratch / "vcrpy.yaml"
        try:
            with recorder.use_cassette(str(raw_path), record_on_exception=False):
                with httpx.Client(
                    timeout=httpx.Timeout(timeout, connect=min(timeout, 30.0))
                ) as client:
                    with client.stream(
                        "POST", prepared.url, content=prepared.body, headers=prepared.headers
                    ) as response:
                        for _chunk in response.iter_raw():
                            pass
                        status = response.status_code
        except httpx.HTTPError as exc:
            reason = scrubber.text(" ".join(str(exc).split()))
            raise WriteError(
                f"{out}: not written: the request failed: {type(exc).__name__}: {reason}"
            ) from None
        if not raw_path.exists():
            raise WriteError(f"{out}: not written: vcrpy recorded nothing")
        try:
            cassette = load_cassette(raw_path)
        except CassetteError as exc:
            raise WriteError(
                f"{out}: not written: vcrpy's cassette does not load: {exc.problem}"
            ) from None
        result: WriteResult = write_checked(
            cassette.interactions,
            out,
            scratch=scratch,
            force=force,
            literals=scrubber.literals,
            protocol=protocol,
        )
    body_bytes = len(cassette.interactions[-1].response.body) if cassette.interactions else 0
    return RecordResult(result.path, status, body_bytes, result.warnings)


def add_record_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "record",
        help="make one real streaming request and record it as a scrubbed vcrpy cassette",
        description=(
            "Send request.json to the protocol's streaming endpoint with the API key from the "
            "provider's usual environment variable, record it with vcrpy, scrub credentials and "
            "account ids, and write the cassette atomically. Exit status 1 when the request "
            "fails or a secret survives scrubbing (nothing is written), 2 on a bad argument."
        ),
    )
    add_endpoint_protocol(p)
    p.add_argument(
        "--request",
        metavar="FILE",
        help='the JSON request body; optional "_path" and "_headers" members are taken out '
        "(required, except for openai-responses-websocket, whose client sends its own)",
    )
    add_out(p)
    p.add_argument(
        "--base-url",
        help="replaces the protocol's base URL (an OpenAI-compatible server, a proxy, a local server)",
    )
    p.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="environment variable holding the key (default: the provider's usual one)",
    )
    p.add_argument("--no-auth", action="store_true", help="send no API key (local servers)")
    p.add_argument("--force", action="store_true", help="replace an existing cassette")
    p.add_argument(
        "--port",
        type=int,
        default=0,
        help="openai-responses-websocket: the loopback proxy's port (default: any free one)",
    )
    p.add_argument(
        "--timeout", type=float, default=600.0, help="seconds to wait for the stream (default: 600)"
    )
    p.set_defaults(func=record_command)
    return p


def record_command(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> int:
    environ = os.environ if environ is None else environ
    if args.protocol == WEBSOCKET_PROTOCOL:
        return _record_websocket_command(args, environ)
    if not args.request:
        return fail("--request FILE is required (the JSON request body to send)", 2)
    try:
        endpoint = get_endpoint(args.protocol)
        spec = read_request_file(Path(args.request))
        api_key = None
        if not args.no_auth:
            names = (args.api_key_env,) if args.api_key_env else endpoint.api_key_env
            _name, api_key = _api_key(names, environ)
            if api_key is None:
                return fail(
                    f"no API key: set {' or '.join(names)} (or pass --api-key-env NAME, or --no-auth)",
                    2,
                )
        result = record(
            args.protocol,
            spec,
            Path(args.out),
            base_url=args.base_url,
            api_key=api_key,
            force=args.force,
            timeout=args.timeout,
        )
    except (RequestSpecError, WriteError, KeyboardInterrupt) as exc:
        return write_failure(exc, args.out)
    print(f"recorded {result.path} (HTTP {result.status}, {result.body_bytes} body bytes)")
    if result.status >= 400:
        print(
            f"note: the provider answered HTTP {result.status}; the error response was recorded",
            file=sys.stderr,
        )
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def _record_websocket_command(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``record --protocol openai-responses-websocket``: a loopback proxy records the next
    connection a client makes through it (harness/stream_harness/workflow/websocket_session.py)."""
    if args.request:
        return fail(
            "--request: openai-responses-websocket records what your client sends through the proxy; drop --request",
            2,
        )
    if not 0 <= args.port <= 65535:
        return fail(f"--port: {args.port} is not a port number", 2)
    api_key = None
    if not args.no_auth:
        names = (args.api_key_env,) if args.api_key_env else WEBSOCKET_KEY_ENV
        _name, api_key = _api_key(names, environ)
        if api_key is None:
            return fail(
                f"no API key: set {' or '.join(names)} (or pass --api-key-env NAME, or --no-auth)",
                2,
            )
    upstream = args.base_url or DEFAULT_UPSTREAM

    def ready(proxy: RecordingProxy) -> None:
        print(
            f"recording proxy for {upstream} listening on {proxy.url}: point your client at "
            f"http://127.0.0.1:{proxy.port}/v1 (the openai SDK's base_url); the cassette is "
            "written when its connection ends",
            flush=True,
        )

    try:
        result = record_websocket(
            Path(args.out),
            upstream=upstream,
            api_key=api_key,
            port=args.port,
            force=args.force,
            timeout=args.timeout,
            ready=ready,
        )
    except OSError as exc:
        return fail(f"--port: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}", 2)
    except (WriteError, KeyboardInterrupt) as exc:
        return write_failure(exc, args.out)
    print(f"recorded {result.path} ({result.interactions} turn(s))")
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0
