"""Adapter specs that name 0.1's modules (import package ``harness``) still load, with a
deprecation warning, for one release; a user's own ``harness`` package always wins."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stream_harness.adapters.loading import load_adapter, renamed_module
from stream_harness.adapters.protocol import AdapterLoadError, ReferenceAdapter


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("harness.adapter", "stream_harness.adapters.protocol"),
        ("harness.adapters.litellm", "stream_harness.adapters.libraries.litellm"),
        ("harness.proxy.adapter", "stream_harness.adapters.gateways.adapter"),
        ("harness.conformance", None),
        ("mypackage.adapters", None),
    ],
)
def test_renamed_modules(old: str, new: str | None) -> None:
    assert renamed_module(old) == new


def test_an_old_spec_loads_with_a_deprecation_warning() -> None:
    with pytest.warns(
        FutureWarning, match=r"'harness\.adapter' is 'stream_harness\.adapters\.protocol'"
    ):
        adapter = load_adapter("harness.adapter:ReferenceAdapter")
    assert isinstance(adapter, ReferenceAdapter)


def test_a_users_own_harness_package_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "harness"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "adapter.py").write_text(
        "from stream_harness import ReferenceAdapter\n\n"
        "class ReferenceAdapter(ReferenceAdapter):\n    name = 'users-own'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "harness" or m.startswith("harness.")]:
        monkeypatch.delitem(sys.modules, name)
    assert load_adapter("harness.adapter:ReferenceAdapter").name == "users-own"


def test_an_unknown_old_module_is_one_clear_error() -> None:
    with pytest.raises(AdapterLoadError, match=r"cannot import harness\.nothing_here"):
        load_adapter("harness.nothing_here:X")
