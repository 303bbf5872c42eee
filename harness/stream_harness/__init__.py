"""stream-harness: replay-and-conformance testing for LLM streaming.

The public surface: the contract (:mod:`stream_harness.contract.events`), the reference normalizers
(:func:`normalize`, :func:`detect_protocol`), cassettes (:func:`load_cassette`), partial
JSON (:mod:`stream_harness.contract.partial_json`), error classification (:mod:`stream_harness.errors`) and the
conformance engine (:mod:`stream_harness.conformance`).

Names are imported on first use (PEP 562): the pytest plugin imports this package in every
test run of every project that installs stream-harness, and must cost nothing there.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

__all__ = ["AssistantMessage", "Event", "__version__", "detect_protocol", "load_cassette", "normalize"]

_LAZY = {
    "AssistantMessage": "stream_harness.contract.events",
    "Event": "stream_harness.contract.events",
    "detect_protocol": "stream_harness.providers.reference",
    "normalize": "stream_harness.providers.reference",
    "load_cassette": "stream_harness.recordings.cassette",
}

if TYPE_CHECKING:
    from stream_harness.recordings.cassette import load_cassette
    from stream_harness.contract.events import AssistantMessage, Event
    from stream_harness.providers.reference import detect_protocol, normalize


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
