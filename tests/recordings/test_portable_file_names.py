"""Every file the wheel ships from specs/, cassettes/ (and adapters-js/) has a name every OS can create.

setup.py maps specs/, cassettes/ and adapters-js/ into ``stream_harness._bundled``; one file name with a ``>``
(a proxy row's ``->``) or a trailing dot makes ``pip install`` fail on Windows, which no
Linux CI run notices. Expectation file names come from adapter names through one function,
:func:`stream_harness.conformance.expectations.expectation_file_name`, tested here on every
adapter the harness knows.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_harness.adapters.gateways.catalog import all_rows
from stream_harness.adapters.loading import BUILTIN
from stream_harness.adapters.registry import THIRD_PARTY
from stream_harness.conformance.expectations import (
    UNPORTABLE_CHARS,
    ExpectationsError,
    adapter_from_file_name,
    expectation_file_name,
    expectations_dir,
    expectations_for,
)

ROOT = Path(__file__).resolve().parents[2]
# Names Windows reserves whatever the extension (CON.yaml cannot be created either).
_RESERVED = {
    "con",
    "prn",
    "aux",
    "nul",
    *(f"com{i}" for i in range(1, 10)),
    *(f"lpt{i}" for i in range(1, 10)),
}


def unportable(name: str) -> str | None:
    """Why ``name`` (one path component) cannot be created on every OS (None: it can)."""
    bad = sorted({c for c in name if c in UNPORTABLE_CHARS or ord(c) < 32})
    if bad:
        return f"characters {''.join(bad)!r}"
    if name.endswith((".", " ")):
        return "a trailing dot or space"
    if name.split(".")[0].lower() in _RESERVED:
        return "a name Windows reserves"
    return None


@pytest.mark.parametrize("folder", ["specs", "cassettes", "adapters-js"])
def test_every_shipped_file_name_is_portable(folder: str) -> None:
    root = ROOT / folder
    # node_modules is installed, not shipped (setup.py's exclude_package_data).
    paths = [p for p in root.rglob("*") if "node_modules" not in p.relative_to(root).parts]
    assert paths, f"nothing under {folder}/"
    bad = [
        f"{p.relative_to(ROOT)}: {why}" for p in paths if (why := unportable(p.name)) is not None
    ]
    assert bad == []


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("litellm-proxy[anthropic-messages->openai-completions].yaml", "characters"),
        ("a:b.yaml", "characters"),
        ("x.yaml.", "trailing"),
        ("notes ", "trailing"),
        ("CON.yaml", "reserves"),
        ("litellm-proxy[anthropic-messages--to--openai-completions].yaml", None),
    ],
)
def test_unportable_rules(name: str, problem: str | None) -> None:
    got = unportable(name)
    assert (got is None) if problem is None else (got is not None and problem in got)


def test_every_adapter_name_maps_to_a_portable_file_name_and_back() -> None:
    names = [*BUILTIN, *THIRD_PARTY, *all_rows()]
    assert any("->" in n for n in names), "no proxy row to exercise the arrow"
    files = {}
    for name in names:
        file_name = expectation_file_name(name)
        assert unportable(file_name) is None, file_name
        assert adapter_from_file_name(file_name) == name
        files[file_name] = name
    assert len(files) == len(names), "two adapters share an expectation file"


def test_a_proxy_row_finds_its_renamed_file() -> None:
    row = "portkey[anthropic-messages->openai-completions]"
    assert (expectations_dir() / expectation_file_name(row)).is_file()
    assert expectations_for(row).known


@pytest.mark.parametrize("name", ["a|b", "a?", "x.", "a--to--b", "a/b"])
def test_an_adapter_name_without_a_portable_file_name_is_refused(name: str) -> None:
    with pytest.raises(ExpectationsError, match="portable"):
        expectation_file_name(name)
