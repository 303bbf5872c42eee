"""An unknown adapter name lists every name that works, with the near miss named.

Before, the list held the built-in names and entry points only: ``openai-sdk-create``,
``google-genai`` and every third-party row (each run by ``matrix`` in its environment)
worked but were not listed, so a user reading the error learnt the wrong vocabulary.
"""

from __future__ import annotations

import re

import pytest

from stream_harness.adapters.gateways.catalog import GATEWAYS
from stream_harness.adapters.loading import BUILTIN, DEFAULT_ADAPTERS, is_known_name, load_adapter
from stream_harness.adapters.protocol import AdapterLoadError
from stream_harness.adapters.registry import THIRD_PARTY


def _error(spec: str) -> str:
    with pytest.raises(AdapterLoadError) as caught:
        load_adapter(spec)
    return str(caught.value)


def test_the_list_holds_every_name_that_works() -> None:
    message = _error("nope")
    listed = set(re.search(r"known: ([^;]+);", message).group(1).split(", "))  # type: ignore[union-attr]
    assert {*BUILTIN, *THIRD_PARTY, *DEFAULT_ADAPTERS} <= listed
    assert all(is_known_name(name) for name in listed)
    assert all(gateway in message for gateway in GATEWAYS) and "cmd:COMMAND" in message


@pytest.mark.parametrize(
    ("given", "meant"), [("openai-sdk-creat", "openai-sdk-create"), ("pydantic_ai", "pydantic-ai")]
)
def test_a_near_miss_is_named(given: str, meant: str) -> None:
    message = _error(given)
    assert f"did you mean {meant!r}?" in message and "\n" not in message
