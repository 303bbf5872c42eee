"""stream-harness: replay-and-conformance testing for LLM streaming.

The public API, one import away: the contract (:class:`Event`, :class:`AssistantMessage`),
the reference normalizers (:func:`normalize`, :func:`detect_protocol`), cassettes
(:func:`load_cassette`), the adapter protocol (:class:`Adapter`, :class:`AdapterResult`,
:class:`ReferenceAdapter`, :func:`load_adapter`) and the conformance suite
(:func:`run_conformance`, :class:`SuiteError`). Everything else is reached through its
subpackage (specs/architecture.md shows them in the order data flows through them).

Names are imported on first use (PEP 562): the pytest plugin imports this package in every
test run of every project that installs stream-harness, and must cost nothing there. No
public name is also the name of a module of this package, so no import order can make a
submodule shadow a function (tests/test_public_api.py imports them in every order).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.2.0"

_LAZY = {
    "Adapter": "stream_harness.adapters.protocol",
    "AdapterResult": "stream_harness.adapters.protocol",
    "AssistantMessage": "stream_harness.contract.events",
    "Event": "stream_harness.contract.events",
    "ReferenceAdapter": "stream_harness.adapters.protocol",
    "SuiteError": "stream_harness.conformance.suite",
    "detect_protocol": "stream_harness.providers.reference",
    "load_adapter": "stream_harness.adapters.loading",
    "load_cassette": "stream_harness.recordings.cassette",
    "normalize": "stream_harness.providers.reference",
    "run_conformance": "stream_harness.conformance",
}

__all__ = [
    "Adapter",
    "AdapterResult",
    "AssistantMessage",
    "Event",
    "ReferenceAdapter",
    "SuiteError",
    "__version__",
    "detect_protocol",
    "load_adapter",
    "load_cassette",
    "normalize",
    "run_conformance",
]

if TYPE_CHECKING:
    from stream_harness.adapters.loading import load_adapter
    from stream_harness.adapters.protocol import Adapter, AdapterResult, ReferenceAdapter
    from stream_harness.conformance import run_conformance
    from stream_harness.conformance.suite import SuiteError
    from stream_harness.contract.events import AssistantMessage, Event
    from stream_harness.providers.reference import detect_protocol, normalize
    from stream_harness.recordings.cassette import load_cassette


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'stream_harness' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
