"""stream-harness: replay-and-conformance testing for LLM streaming.

The public surface: the contract (:mod:`harness.events`), the reference normalizers
(:func:`normalize`, :func:`detect_protocol`), cassettes (:func:`load_cassette`), partial
JSON (:mod:`harness.partial_json`), error classification (:mod:`harness.errors`) and the
conformance engine (:mod:`harness.conformance`).
"""

from __future__ import annotations

from harness.events import AssistantMessage, Event
from harness.normalize import detect_protocol, normalize

__version__ = "0.1.0"

__all__ = ["AssistantMessage", "Event", "__version__", "detect_protocol", "normalize"]


def __getattr__(name: str) -> object:
    # load_cassette pulls in PyYAML; import it only when asked for.
    if name == "load_cassette":
        from harness.cassette import load_cassette

        return load_cassette
    raise AttributeError(name)
