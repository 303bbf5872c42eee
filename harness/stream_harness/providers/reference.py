"""The entry points users and their CI call: ``normalize`` and ``detect_protocol``
(the registry's, harness/stream_harness/providers/registry.py)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from stream_harness.contract.events import Event
from stream_harness.errors import classify, error_details_from_body
from stream_harness.providers.accumulator import Accumulator
from stream_harness.providers.registry import (
    UnknownProtocolError,
    detect_protocol,
    get_normalizer,
    is_registered,
)

Headers = Mapping[str, str] | Mapping[str, list[str]]


def normalize(
    protocol: str,
    chunks: Iterable[bytes],
    *,
    status: int = 200,
    headers: Headers | None = None,
    warnings: list[str] | None = None,
) -> Iterator[Event]:
    """Run a response body, in the given chunks, through the reference normalizer.

    An HTTP status >= 400 is an error response whatever its body: it gives ``start`` and
    one ``error`` event carrying the provider's message, the status and the
    classification (stream_harness.errors), as a client library would surface it. Anomalies the
    normalizer recovered from (a server reusing a block index) are appended to
    ``warnings`` when a list is given: they are not events, so the contract is unchanged.
    """
    if status >= 400:
        yield from http_error_events(protocol, status, b"".join(chunks), headers)
        return
    normalizer = get_normalizer(protocol)
    for chunk in chunks:
        if chunk:
            yield from normalizer.feed(bytes(chunk))
    yield from normalizer.close()
    if warnings is not None:
        warnings.extend(normalizer.warnings)


def http_error_events(
    protocol: str, status: int, body: bytes, headers: Headers | None = None
) -> list[Event]:
    if not is_registered(protocol):
        raise UnknownProtocolError(f"unknown protocol {protocol!r}")
    details = error_details_from_body(body)
    message = details.message or (
        f"{status} status code (no body)" if not body.strip() else f"HTTP {status}"
    )
    acc = Accumulator(protocol)
    # The table decides from the body itself (an empty body is only overflow for some
    # protocols), so classify gets the provider's message, not our fallback text.
    info = classify(
        status=status, message=details.message, body=body, headers=headers, protocol=protocol
    )
    acc.fail(message, error=info)
    return acc.drain()


__all__ = ["UnknownProtocolError", "detect_protocol", "http_error_events", "normalize"]
