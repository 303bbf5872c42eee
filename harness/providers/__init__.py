"""One normalizer per wire protocol, looked up by protocol id.

Modules are imported lazily so that importing :mod:`harness` stays cheap and a broken
optional module cannot take the others down.
"""

from __future__ import annotations

import importlib
import importlib.util

from harness.providers.base import Normalizer, SSENormalizer

# protocol id -> module under harness.providers exposing a ``Normalizer`` subclass named
# ``Normalizer`` (each module's class is re-exported under that name).
PROTOCOL_MODULES: dict[str, str] = {
    "anthropic-messages": "anthropic_messages",
    "openai-completions": "openai_completions",
    "openai-responses": "openai_responses",
    "google-generative-ai": "google_generative_ai",
    "bedrock-converse-stream": "bedrock_converse_stream",
    "ollama": "ollama",
}


class UnknownProtocolError(ValueError):
    pass


def protocols() -> list[str]:
    """Protocol ids whose normalizer module is present."""
    out = []
    for pid, mod in PROTOCOL_MODULES.items():
        if importlib.util.find_spec(f"harness.providers.{mod}") is not None:
            out.append(pid)
    return out


def get_normalizer(protocol: str) -> Normalizer:
    module_name = PROTOCOL_MODULES.get(protocol)
    if module_name is None:
        known = ", ".join(PROTOCOL_MODULES)
        raise UnknownProtocolError(f"unknown protocol {protocol!r} (known: {known})")
    module = importlib.import_module(f"harness.providers.{module_name}")
    cls: type[Normalizer] = module.Normalizer
    return cls()


__all__ = [
    "PROTOCOL_MODULES",
    "Normalizer",
    "SSENormalizer",
    "UnknownProtocolError",
    "get_normalizer",
    "protocols",
]
