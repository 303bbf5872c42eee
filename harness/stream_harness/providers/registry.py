"""Every wire protocol is one registration, and everything that lists protocols reads it.

A :class:`Protocol` says what the harness needs to know about a wire protocol: its id,
its framing (injected into the translator, which never picks a decoder itself), how an
interaction of it is recognised (URL, headers, body), its translator, the section of
``specs/stop_reasons.yaml`` that maps its stop values, its documentation page and the
folder of its bundled cassettes. ``detect_protocol``, the CLI's protocol lists, the
protocol table of ``specs/protocols/README.md``, the fuzzer, the robustness suite and the
conformance cases all derive from :func:`registered`, so adding a protocol is one module
under ``harness/stream_harness/providers/`` (which calls :func:`register`), its cassettes and its rows.

Three sources:

- every module of :mod:`stream_harness.providers`, which the package imports (one line in
  ``providers/__init__.py`` a protocol; a test fails when a module is left out);
- loaded once, on first use, the entry-point group ``stream_harness.protocols`` of installed distributions, each
  naming a :class:`Protocol` or a module that registers on import;
- :func:`register` called by anyone (a test module's toy protocol).
"""

from __future__ import annotations

import importlib.metadata
import re
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from stream_harness.providers.types import Exchange, Translator
from stream_harness.wire.framing import FrameDecoder, Framing

ENTRY_POINT_GROUP = "stream_harness.protocols"
BODY_HEAD = 4096  # bytes of a response body the body rules look at


class UnknownProtocolError(ValueError):
    """A protocol id nobody registered, or an interaction no registration recognises."""


def _compile_str(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in patterns)


@dataclass(frozen=True, slots=True)
class Detect:
    """How an interaction of the protocol is recognised, strongest evidence first.

    ``url``: regular expressions searched in the request URL (it survives header
    scrubbing, and openinference cassettes keep no response headers at all).
    ``headers``: (header name, regular expression) pairs searched in the request's and the
    response's values of that header. ``body``: regular expressions (bytes) searched in the
    first 4 KiB of the response body, the last resort. Every protocol's URL rules are tried
    before any protocol's header rules, and those before any body rule.
    """

    url: tuple[str, ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    body: tuple[bytes, ...] = ()
    _url: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)
    _headers: tuple[tuple[str, re.Pattern[str]], ...] = field(init=False, repr=False, compare=False)
    _body: tuple[re.Pattern[bytes], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_url", _compile_str(self.url))
        object.__setattr__(
            self, "_headers", tuple((name.lower(), re.compile(p)) for name, p in self.headers)
        )
        object.__setattr__(self, "_body", tuple(re.compile(p, re.S) for p in self.body))

    def by_url(self, url: str) -> bool:
        return any(p.search(url) for p in self._url)

    def by_headers(self, interaction: Exchange) -> bool:
        for name, pattern in self._headers:
            for side in (interaction.request, interaction.response):
                value = side.header(name)
                if value is not None and pattern.search(value):
                    return True
        return False

    def by_body(self, head: bytes) -> bool:
        return any(p.search(head) for p in self._body)


@dataclass(frozen=True, slots=True)
class Protocol:
    """One wire protocol: everything the harness derives per protocol, in one place.

    ``order`` places the protocol in every listing and in detection (lower first): a
    protocol with a weak body rule (Ollama's ``"done": false``) goes after those whose
    rules are specific. ``stop_reasons`` is a section of ``specs/stop_reasons.yaml``, which
    two protocols speaking the same stop vocabulary may share. ``doc`` is relative to
    ``specs/``; ``cassettes`` is the folder under the bundled cassettes (and under
    ``specs/expected/``).
    """

    id: str
    title: str
    framing: Framing
    translator: Callable[[FrameDecoder], Translator]
    detect: Detect
    stop_reasons: str
    order: int = 100
    doc: str = ""
    cassettes: str = ""

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z0-9][a-z0-9.-]*", self.id):
            raise ValueError(
                f"protocol id {self.id!r}: lower-case letters, digits, '.' and '-' only"
            )
        if not self.doc:
            object.__setattr__(self, "doc", f"protocols/{self.id}.md")
        if not self.cassettes:
            object.__setattr__(self, "cassettes", self.id)

    def normalizer(self) -> Translator:
        """A fresh translator over a fresh decoder of the registered framing."""
        return self.translator(self.framing.decoder())


_lock = threading.RLock()
_registry: dict[str, Protocol] = {}
_loaded = False


def register(protocol: Protocol) -> Protocol:
    """Add ``protocol``; registering an id again with a different object is an error."""
    with _lock:
        existing = _registry.get(protocol.id)
        if existing is not None and existing != protocol:
            raise ValueError(f"protocol {protocol.id!r} is already registered")
        _registry[protocol.id] = protocol
    return protocol


def unregister(protocol_id: str) -> None:
    """Remove a registration (tests that register a toy protocol clean up with it)."""
    with _lock:
        _registry.pop(protocol_id, None)


@contextmanager
def registered_for(protocol: Protocol) -> Iterator[Protocol]:
    """``protocol`` registered for the duration of the block."""
    register(protocol)
    try:
        yield protocol
    finally:
        unregister(protocol.id)


def _load() -> None:
    """Register the entry-point protocols, once: installed plugins are found on first use.

    The bundled protocols need no loading here: ``stream_harness.providers`` imports every
    one of its modules, and this module is only reachable through that package.
    """
    global _loaded
    with _lock:
        if _loaded:
            return
        _loaded = True
        for entry in _entry_points():
            try:
                loaded = entry.load()
            except Exception as exc:  # a broken plugin must not take the others down
                warnings.warn(
                    f"stream-harness: protocol entry point {entry.name!r} ({entry.value}) "
                    f"does not load: {exc!r}",
                    stacklevel=2,
                )
                continue
            if isinstance(loaded, Protocol):
                register(loaded)


def _entry_points() -> tuple[importlib.metadata.EntryPoint, ...]:
    return tuple(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def registered() -> tuple[Protocol, ...]:
    """Every registered protocol, in listing order (``order``, then id)."""
    _load()
    with _lock:
        items = list(_registry.values())
    return tuple(sorted(items, key=lambda p: (p.order, p.id)))


def protocol_ids() -> list[str]:
    """The ids of :func:`registered`, in the same order."""
    return [p.id for p in registered()]


def choices_metavar() -> str:
    """``{id,id,...}``: how a ``--protocol`` option shows its choices in the CLI's help.

    The options check the value themselves (an unknown id is one line and exit 2, where
    argparse's own ``choices`` would print the usage too); this keeps the help listing
    what is registered now, a protocol registered from outside included.
    """
    return "{" + ",".join(protocol_ids()) + "}"


def is_registered(protocol_id: str) -> bool:
    _load()
    return protocol_id in _registry


def get(protocol_id: str) -> Protocol:
    """The registration of ``protocol_id``; raise :class:`UnknownProtocolError`."""
    _load()
    found = _registry.get(protocol_id)
    if found is None:
        raise UnknownProtocolError(
            f"unknown protocol {protocol_id!r} (known: {', '.join(protocol_ids())})"
        )
    return found


def get_normalizer(protocol_id: str) -> Translator:
    """A fresh reference normalizer for ``protocol_id``."""
    return get(protocol_id).normalizer()


def by_cassette_folder(name: str) -> str | None:
    """The protocol whose bundled cassettes live in a folder of that name, if any."""
    for p in registered():
        if p.cassettes == name:
            return p.id
    return None


def stop_reason_section(protocol_id: str) -> str:
    """The ``specs/stop_reasons.yaml`` section of a protocol (its id when unregistered)."""
    _load()
    found = _registry.get(protocol_id)
    return found.stop_reasons if found is not None else protocol_id


def detect_protocol(interaction: Exchange) -> str:
    """Name the wire protocol of a recorded interaction.

    Every registration's URL rules decide first (the URL survives header scrubbing), then
    header rules, then the shape of the body's first 4 KiB.
    """
    items = registered()
    url = interaction.request.uri
    for p in items:
        if p.detect.by_url(url):
            return p.id
    for p in items:
        if p.detect.by_headers(interaction):
            return p.id
    head = interaction.response.body[:BODY_HEAD]
    for p in items:
        if p.detect.by_body(head):
            return p.id
    raise UnknownProtocolError(
        f"cannot tell the protocol of interaction {interaction.index} ({interaction.request.method} "
        f"{interaction.request.uri}): name it with --protocol"
    )


__all__ = [
    "ENTRY_POINT_GROUP",
    "Detect",
    "Protocol",
    "UnknownProtocolError",
    "by_cassette_folder",
    "choices_metavar",
    "detect_protocol",
    "get",
    "get_normalizer",
    "is_registered",
    "protocol_ids",
    "register",
    "registered",
    "registered_for",
    "stop_reason_section",
    "unregister",
]
