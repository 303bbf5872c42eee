"""The reference translators, one module per wire protocol.

Each module registers its protocol (harness/stream_harness/providers/registry.py) when imported; the registry
discovers the modules of this package by itself, so adding a protocol is adding a module
here. Modules are imported on the registry's first use, so importing :mod:`harness`
stays cheap. The names below are the registry's, re-exported for the callers that have
always imported them from here.
"""

from __future__ import annotations

from stream_harness.providers.registry import UnknownProtocolError, get_normalizer
from stream_harness.providers.registry import protocol_ids as protocols
from stream_harness.providers.base import Normalizer, SSENormalizer

__all__ = [
    "Normalizer",
    "SSENormalizer",
    "UnknownProtocolError",
    "get_normalizer",
    "protocols",
]
