"""The entry points users and their CI call: ``normalize`` and ``detect_protocol``."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from harness.accumulator import Accumulator
from harness.events import Event
from harness.providers import PROTOCOL_MODULES, UnknownProtocolError, get_normalizer

if TYPE_CHECKING:
    from harness.cassette import Interaction

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
    classification (harness.errors), as a client library would surface it. Anomalies the
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
    from harness.errors import classify, error_details_from_body

    if protocol not in PROTOCOL_MODULES:
        raise UnknownProtocolError(f"unknown protocol {protocol!r}")
    details = error_details_from_body(body)
    message = details.message or (
        f"{status} status code (no body)" if not body.strip() else f"HTTP {status}"
    )
    acc = Accumulator(protocol)
    # The table decides from the body itself (an empty body is only overflow for some
    # protocols), so classify gets the provider's message, not our fallback text.
    info = classify(status=status, message=details.message, body=body, headers=headers, protocol=protocol)
    acc.fail(message, error=info)
    return acc.drain()


_PATH_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"/v1/messages(?:$|[?#/])"), "anthropic-messages"),
    (re.compile(r"/responses(?:$|[?#/])"), "openai-responses"),
    (re.compile(r"/chat/completions(?:$|[?#/])"), "openai-completions"),
    (re.compile(r":(?:stream)?[gG]enerateContent"), "google-generative-ai"),
    # /converse (non-streaming) too: its error bodies answer the same API and are cases
    (re.compile(r"/converse(?:-stream)?(?:$|[?#/])"), "bedrock-converse-stream"),
    (re.compile(r"/api/chat(?:$|[?#/])"), "ollama"),
)

_BODY_RULES: tuple[tuple[re.Pattern[bytes], str], ...] = (
    (re.compile(rb"event:\s*message_start|\"type\"\s*:\s*\"message_start\""), "anthropic-messages"),
    (re.compile(rb"\"type\"\s*:\s*\"response\.(?:created|in_progress|output)"), "openai-responses"),
    (re.compile(rb"\"object\"\s*:\s*\"chat\.completion\.chunk\""), "openai-completions"),
    (re.compile(rb"\"candidates\"\s*:|\"usageMetadata\"\s*:"), "google-generative-ai"),
    (re.compile(rb":event-type.{0,40}(?:messageStart|contentBlock)", re.S), "bedrock-converse-stream"),
    (re.compile(rb"\"done\"\s*:\s*(?:true|false)"), "ollama"),
)


def detect_protocol(interaction: Interaction) -> str:
    """Name the wire protocol of a recorded interaction.

    The URL path decides first (it survives header scrubbing, and openinference
    cassettes keep no response headers at all); the body's shape decides otherwise.
    """
    path = interaction.request.uri
    for pattern, protocol in _PATH_RULES:
        if pattern.search(path):
            return protocol
    head = interaction.response.body[:4096]
    for body_pattern, protocol in _BODY_RULES:
        if body_pattern.search(head):
            return protocol
    raise UnknownProtocolError(
        f"cannot tell the protocol of interaction {interaction.index} ({interaction.request.method} "
        f"{interaction.request.uri}): name it with --protocol"
    )
