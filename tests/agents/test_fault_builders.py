"""The one-line fault builders: each is a valid scenario of the same format, served in
every agent protocol, carrying the fault it names."""

from __future__ import annotations

import pytest

from stream_harness.agents.fault_builders import (
    Draft,
    cut_tool_args,
    no_finish,
    overflow,
    rate_limit,
    server_error,
    truncate,
)
from stream_harness.agents.scenario.render import PROTOCOLS

BUILDERS: dict[str, tuple[Draft, str]] = {
    "rate_limit": (rate_limit(retry_after=2), "http_429"),
    "rate_limit_no_hint": (rate_limit(retry_after=None, status=529), "http_529"),
    "truncate": (truncate(), "cut_at"),
    "cut_tool_args": (cut_tool_args(), "cut_in_tool_args"),
    "no_finish": (no_finish(), "no_terminal_event"),
    "overflow": (overflow(), "overflow"),
    "server_error": (server_error(503), "http_503"),
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_each_builder_is_a_scenario_served_in_every_protocol(name, tmp_path):
    draft, fault = BUILDERS[name]
    scenario = draft.load(tmp_path)
    assert any(fault in kind for kind in scenario.faults), scenario.faults
    for protocol in PROTOCOLS:
        assert scenario.served(protocol)
    assert (tmp_path / f"{draft.name}.yaml").read_text() == draft.yaml()
