"""Response headers in the one shape the classifier reads: lower-cased name -> one string.

Headers reach the harness as httpx ``Headers``, plain dicts, or vcrpy's ``{name: [values]}``
lists, and a replayed cassette may hold junk. Normalising once here means the rest of the
package never meets a list, a byte string, a non-string key, or a Mapping whose ``items()``
fails: anything that cannot be read as text is skipped rather than raised.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias

HeaderInput: TypeAlias = Mapping[str, str] | Mapping[str, list[str]] | None

# The header that overrides retryability (Stainless SDKs); read here so that classify and any
# other caller agree on what counts as "true" and "false".
SHOULD_RETRY = "x-should-retry"


def _as_text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray):
        # Header bytes are ISO-8859-1 on the wire (RFC 9110 5.5); latin-1 never fails.
        return bytes(value).decode("latin-1")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _first_text(value: object) -> str | None:
    if isinstance(value, list | tuple):
        for item in value:
            text = _as_text(item)
            if text is not None:
                return text
        return None
    return _as_text(value)


def normalize_headers(headers: object) -> dict[str, str]:
    """Lower-cased names to stripped values; the first readable value of a repeated header wins."""
    if not isinstance(headers, Mapping):
        return {}
    try:
        items = list(headers.items())
    except Exception:  # a broken Mapping is junk input, never a crash
        return {}
    out: dict[str, str] = {}
    for key, value in items:
        # Names are text or bytes; a number is a value, never a header name.
        name = _as_text(key) if isinstance(key, str | bytes | bytearray) else None
        text = _first_text(value)
        if name is None or text is None:
            continue
        out.setdefault(name.strip().lower(), text.strip())
    return out


def should_retry(headers: Mapping[str, str]) -> bool | None:
    """``x-should-retry``: True/False when the server said so, None for absent or other values."""
    value = headers.get(SHOULD_RETRY, "").lower()
    if value == "true":
        return True
    if value == "false":
        return False
    return None
