"""stream-harness: replay-and-conformance testing for LLM streaming.

The public surface: the contract (:mod:`harness.events`), the reference normalizers
(:func:`normalize`, :func:`detect_protocol`), cassettes (:func:`load_cassette`), partial
JSON (:mod:`harness.partial_json`), error classification (:mod:`harness.errors`) and the
conformance engine (:mod:`harness.conformance`).

Names are imported on first use (PEP 562): the pytest plugin imports this package in every
test run of every project that installs stream-harness, and must cost nothing there.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

__all__ = ["AssistantMessage", "Event", "__version__", "detect_protocol", "load_cassette", "normalize"]

_LAZY = {
    "AssistantMessage": "harness.events",
    "Event": "harness.events",
    "detect_protocol": "harness.normalize",
    "normalize": "harness.normalize",
    "load_cassette": "harness.cassette",
}

if TYPE_CHECKING:
    from harness.cassette import load_cassette
    from harness.events import AssistantMessage, Event
    from harness.normalize import detect_protocol, normalize


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
