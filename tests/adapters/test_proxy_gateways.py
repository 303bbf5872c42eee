"""Real gateways on a few cassettes: LiteLLM's proxy in CI, Portkey where it is installed.

Each gateway runs from its own pinned environment (specs/matrix.toml groups
``litellm-proxy`` and ``portkey``; .ci/run builds the LiteLLM one and names it in
``STREAM_HARNESS_LITELLM``), and skips cleanly where it is not installed. Every check
runs through the conformance runner exactly as in a report, and every outcome must be a
pass or a known failure of ``specs/expectations/<row>.yaml``: a new disagreement fails
here with its difference, like a library's would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_harness.adapters.gateways.adapter import ProxyAdapter
from stream_harness.adapters.gateways.catalog import GATEWAYS
from stream_harness.adapters.gateways.process import port_is_free
from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.protocol import AdapterLoadError
from stream_harness.conformance.cases import load_cases
from stream_harness.conformance.expectations import expectations_for
from stream_harness.conformance.runner import RunConfig, run_adapter

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes"

# row -> a few cassettes: a translated tool call with thinking, a pass-through, an HTTP
# error with retry-after, a mid-stream error; enough to start the gateway once and cross
# each kind of check, small enough for CI (a LiteLLM start is 7-30 s here).
SMOKE = {
    "litellm-proxy[anthropic-messages->openai-completions]": [
        "anthropic-messages/tool_call.yaml",
        "anthropic-messages/thinking_signature.yaml",
        "anthropic-messages/http_429_rate_limit.yaml",
        "anthropic-messages/overloaded_midstream.yaml",
    ],
    "litellm-proxy[anthropic-messages->anthropic-messages]": ["anthropic-messages/tool_call.yaml"],
    "portkey[anthropic-messages->openai-completions]": [
        "anthropic-messages/tool_call.yaml",
        "anthropic-messages/http_429_rate_limit.yaml",
    ],
    "portkey[openai-completions->openai-completions]": ["openai-completions/tool_call_single.yaml"],
}


@pytest.fixture(scope="module")
def gateways() -> dict[str, ProxyAdapter]:
    made: dict[str, ProxyAdapter] = {}
    yield made  # type: ignore[misc]
    for adapter in made.values():
        adapter.close()


@pytest.mark.parametrize("row", list(SMOKE))
def test_a_real_gateway_on_a_few_cassettes(row: str, gateways: dict[str, ProxyAdapter]) -> None:
    gateway = row.partition("[")[0]
    problem = GATEWAYS[gateway].find()
    if problem:
        pytest.skip(problem)
    try:
        adapter = load_adapter(row)
    except AdapterLoadError as exc:
        pytest.skip(str(exc))
    assert isinstance(adapter, ProxyAdapter)
    gateways[row] = adapter
    # Loaded from the cassettes folder, so case ids read as in a report and the
    # expectation files ("anthropic-messages/tool_call.yaml#0").
    wanted = {f"{c}#0" for c in SMOKE[row]}
    cases = [c for c in load_cases([CASSETTES], skip_unusable=True)[0] if c.id in wanted]
    assert len(cases) == len(wanted)
    run = run_adapter(adapter, cases, RunConfig(examples=2), expectations_for(row))
    bad = [
        f"{r.check} :: {r.case}: {r.failures[0].message if r.failures else r.outcome}"
        for r in run.results
        if not r.ok
    ]
    assert not bad, "\n".join(bad)
    assert any(r.outcome == "passed" for r in run.results)
    assert any(r.check == "proxy-streaming" for r in run.results)
    assert adapter.session.starts == 1  # one gateway process for every row and case


def test_real_gateways_stop_and_release_their_ports(gateways: dict[str, ProxyAdapter]) -> None:
    if not gateways:
        pytest.skip("no real gateway ran")
    procs = [a.session.process for a in gateways.values() if a.session.process is not None]
    assert procs and all(p.alive() for p in procs)
    for adapter in gateways.values():
        adapter.close()
    assert all(not p.alive() and port_is_free(p.port) for p in procs)
