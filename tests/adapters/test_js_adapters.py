"""The JavaScript/TypeScript adapters (adapters-js/) through the stdio protocol.

They need Node and `npm ci` in adapters-js/; without them these tests skip, saying what to
run. CI runs them on a few cassettes when node is present (whole, and in 1-byte chunks
through the split-invariance check); `stream-harness matrix` runs them on everything.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest

from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.processes.js import SCRIPTS, js_root, missing, node_binary
from stream_harness.adapters.processes.stdio import StdioAdapter
from stream_harness.adapters.protocol import AdapterLoadError
from stream_harness.conformance import (
    CHECKS_BY_ID,
    RunConfig,
    bundled_cassettes,
    load_cases,
    run_adapter,
)
from stream_harness.conformance.cases import Case
from stream_harness.conformance.expectations import expectations_for
from stream_harness.contract.events import DoneEvent, ToolCall

ROOT = js_root()
FEW = {
    "anthropic-messages": ["tool_call", "http_429_rate_limit"],
    "openai-completions": ["parallel_tool_calls_interleaved", "rate_limit_429"],
    "openai-responses": ["function_call"],
    # Issue 27: the WebSocket mode, a tool-call turn and a turn cut by a 1011 close.
    "openai-responses-websocket": ["tool_call_single_turn", "close_internal_error_mid_tool_call"],
    "google-generative-ai": ["tool_call"],
    "bedrock-converse-stream": ["tool_call"],
    # The Vertex AI rows (issue 28): a call, the streamed partial arguments only Vertex
    # sends, Vertex's own finish reason (Model Armor) and its array-shaped HTTP error.
    "vertex-gemini": ["tool_call", "partial_args", "model_armor"],
    "vertex-anthropic": ["tool_call", "http_429_resource_exhausted"],
}
needs_node = pytest.mark.skipif(
    missing() is not None, reason=f"JS adapters unavailable: {missing()}"
)
PRESENT = sorted(name for name, script in SCRIPTS.items() if (ROOT / "adapters" / script).is_file())
# The rows that run a library's Vertex AI client (protocols vertex-gemini, vertex-anthropic).
VERTEX_ROWS = [name for name in PRESENT if "vertex" in name]
# The URL path each Vertex protocol's requests must carry: proof that the library took its
# Vertex code path (project and location in the path; express mode has neither).
VERTEX_PATHS = {
    "vertex-gemini": re.compile(
        r"/(projects/harness-project/locations/us-central1/)?publishers/google/models/"
        r"[^/:]+:streamGenerateContent\?alt=sse"
    ),
    "vertex-anthropic": re.compile(
        r"/projects/harness-project/locations/us-east5/publishers/anthropic/models/"
        r"claude-harness:streamRawPredict"
    ),
}
# A deliberately wrong client, loaded before the adapter script (`node --import`): it
# rewrites every reply the way a client that drops the last delta of its final block
# would answer (the last non-empty text one character short, or the last tool call
# without its arguments).
# lib/protocol.mjs binds the protocol's stdout writer at import, after this module has
# replaced it, so every reply goes through the fault.
WRONG_CLIENT = """
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  const reply = JSON.parse(String(chunk));
  const last = reply.message?.content?.findLast((b) => b.type === 'tool_call' || b.content);
  if (last?.type === 'text') last.content = last.content.slice(0, -1);
  else if (last?.type === 'tool_call') last.arguments = {};
  return write(JSON.stringify(reply) + '\\n', ...rest);
};
"""


def test_package_json_pins_exact_versions_and_the_lock_file_agrees() -> None:
    package = json.loads((ROOT / "package.json").read_text())
    lock = json.loads((ROOT / "package-lock.json").read_text())
    assert package["engines"]["node"] == ">=20"
    for name, version in package["dependencies"].items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} is not pinned exactly: {version}"
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
    assert lock["packages"][""]["dependencies"] == package["dependencies"]


def adapter(name: str, *preload: Path) -> StdioAdapter:
    """The row's script under Node, with ``preload`` modules loaded before it (``--import``)."""
    node = node_binary()
    assert node is not None
    imports = [arg for module in preload for arg in ("--import", module.as_uri())]
    return StdioAdapter(
        [node, *imports, str(ROOT / "adapters" / SCRIPTS[name])], cwd=ROOT, validate=True
    )


@functools.cache
def bundled_cases() -> dict[str, Case]:
    """The bundled cases by id relative to the bundled root, loaded once per test process."""
    all_cases, _ = load_cases([bundled_cassettes()])
    return {c.id: c for c in all_cases}


def bundled_case(case_id: str) -> Case:
    """One bundled case by its id (``vertex-gemini/tool_call.yaml#0``)."""
    return bundled_cases()[case_id]


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
        cases = [c for case_id, c in bundled_cases().items() if case_id in wanted]
        checks = [CHECKS_BY_ID[c] for c in ("split-invariance", "expected", "error-surfacing")]
        run = run_adapter(a, cases, RunConfig(examples=2, checks=checks), expectations_for(name))
    assert {r.check for r in run.results} >= {"split-invariance", "expected"}
    assert [r for r in run.results if not r.ok] == []


@needs_node
@pytest.mark.parametrize("name", VERTEX_ROWS)
def test_the_vertex_rows_call_vertex_urls_and_give_the_reference_call(name: str) -> None:
    """Each Vertex row goes through its library's Vertex client, offline, to the right message.

    Every request (counted by the replay fetch, listed in ``raw.urls``) carries the Vertex
    path of its protocol, and the one recorded call of ``tool_call`` comes out as the
    reference reads it: the same name and arguments.
    """
    with adapter(name) as a:
        assert a.protocols and a.protocols <= set(VERTEX_PATHS)
        for protocol in sorted(a.protocols):
            case = bundled_case(f"{protocol}/tool_call.yaml#0")
            result = a.run(protocol, [case.body], status=case.status, headers=case.headers)
            urls = result.raw.get("urls")
            assert isinstance(urls, list) and len(urls) == result.raw.get("requests") == 1, (
                result.raw
            )
            assert VERTEX_PATHS[protocol].search(urls[0]), urls
            assert result.message is not None and result.raised is None, result
            end = case.expected_events()[-1]
            assert isinstance(end, DoneEvent)
            reference = end.message
            calls = [
                (b.name, b.arguments) for b in result.message.content if isinstance(b, ToolCall)
            ]
            assert calls == [
                (b.name, b.arguments) for b in reference.content if isinstance(b, ToolCall)
            ]
            assert calls and calls[0][1]


@needs_node
@pytest.mark.parametrize("name", VERTEX_ROWS)
def test_a_deliberately_wrong_client_fails_the_expected_check(name: str, tmp_path: Path) -> None:
    """The checks on the Vertex rows are not vacuous: a wrong client fails them.

    The row with WRONG_CLIENT loaded before it, on the ``tool_call`` case of every protocol
    it speaks, under its own expectations: ``expected`` fails, and the failure names the
    block that differs. As it is, the row passes the same check on the same cases
    (test_handshake_and_a_few_cassettes, FEW) with the reference's call
    (test_the_vertex_rows_call_vertex_urls_and_give_the_reference_call).
    """
    wrong = tmp_path / "wrong_client.mjs"
    wrong.write_text(WRONG_CLIENT, encoding="utf-8")
    config = RunConfig(examples=1, checks=[CHECKS_BY_ID["expected"]])
    with adapter(name, wrong) as a:
        assert a.name == name
        cases = [bundled_case(f"{p}/tool_call.yaml#0") for p in sorted(a.protocols)]
        run = run_adapter(a, cases, config, expectations_for(name))
    assert len(run.results) == len(cases) >= 1
    for result in run.results:
        assert result.outcome == "failed", result
        assert any("block" in f.message and "!= expected" in f.message for f in result.failures), (
            result
        )


def test_missing_install_is_a_load_error_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "package.json").write_text("{}")
    monkeypatch.setenv("STREAM_HARNESS_JS", str(tmp_path))
    monkeypatch.setenv("STREAM_HARNESS_NODE", "/bin/true")
    with pytest.raises(AdapterLoadError, match="run `npm ci` in"):
        load_adapter("js-openai")
