"""The JavaScript/TypeScript adapters (adapters-js/) through the stdio protocol.

They need Node and `npm ci` in adapters-js/; without them these tests skip, saying what to
run. CI runs them on a few cassettes when node is present (whole, and in 1-byte chunks
through the split-invariance check); `stream-harness matrix` runs them on everything.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from stream_harness.adapters.js import SCRIPTS, js_root, missing, node_binary
from stream_harness.conformance import CHECKS_BY_ID, RunConfig, bundled_cassettes, load_cases, run_adapter
from stream_harness.conformance.expectations import expectations_for
from stream_harness.adapters.stdio import StdioAdapter

ROOT = js_root()
FEW = {
    "anthropic-messages": ["tool_call", "http_429_rate_limit"],
    "openai-completions": ["parallel_tool_calls_interleaved", "rate_limit_429"],
    "openai-responses": ["function_call"],
    "google-generative-ai": ["tool_call"],
    "bedrock-converse-stream": ["tool_call"],
}
needs_node = pytest.mark.skipif(
    missing() is not None, reason=f"JS adapters unavailable: {missing()}"
)
PRESENT = sorted(name for name, script in SCRIPTS.items() if (ROOT / "adapters" / script).is_file())


def test_package_json_pins_exact_versions_and_the_lock_file_agrees() -> None:
    package = json.loads((ROOT / "package.json").read_text())
    lock = json.loads((ROOT / "package-lock.json").read_text())
    assert package["engines"]["node"] == ">=20"
    for name, version in package["dependencies"].items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} is not pinned exactly: {version}"
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
    assert lock["packages"][""]["dependencies"] == package["dependencies"]


def adapter(name: str) -> StdioAdapter:
    node = node_binary()
    assert node is not None
    return StdioAdapter([node, str(ROOT / "adapters" / SCRIPTS[name])], cwd=ROOT, validate=True)


@needs_node
@pytest.mark.parametrize("name", PRESENT)
def test_handshake_and_a_few_cassettes(name: str) -> None:
    """The pinned versions are reported, and a few cases pass or fail as known (no new failure)."""
    pins = json.loads((ROOT / "package.json").read_text())["dependencies"]
    with adapter(name) as a:
        assert a.name == name
        assert a.implementation["language"] == "javascript"
        assert a.implementation["runtime"].startswith("node v")
        libraries = a.implementation["libraries"]
        assert libraries and all(pins[lib] == v for lib, v in libraries.items() if lib in pins)
        assert a.protocols and a.protocols <= set(FEW) | {"ollama"}
        # Case ids relative to the bundled root, as the expectation files name them.
        wanted = {f"{p}/{c}.yaml#0" for p in a.protocols for c in FEW.get(p, [])}
        all_cases, _ = load_cases([bundled_cassettes()])
        cases = [c for c in all_cases if c.id in wanted]
        checks = [CHECKS_BY_ID[c] for c in ("split-invariance", "expected", "error-surfacing")]
        run = run_adapter(a, cases, RunConfig(examples=2, checks=checks), expectations_for(name))
    assert {r.check for r in run.results} >= {"split-invariance", "expected"}
    assert [r for r in run.results if not r.ok] == []


def test_missing_install_is_a_load_error_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stream_harness.adapters.protocol import AdapterLoadError
    from stream_harness.adapters.loading import load_adapter

    (tmp_path / "package.json").write_text("{}")
    monkeypatch.setenv("STREAM_HARNESS_JS", str(tmp_path))
    monkeypatch.setenv("STREAM_HARNESS_NODE", "/bin/true")
    with pytest.raises(AdapterLoadError, match="run `npm ci` in"):
        load_adapter("js-openai")
