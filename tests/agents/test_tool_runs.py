"""record_tool_run and @side_effect: no-ops outside a run, recorded in the ledger inside
one (arguments by parameter name, sync and async), a scripted failure raised as ToolFailed."""

from __future__ import annotations

import asyncio

import pytest

from stream_harness.agents import record_tool_run, side_effect
from stream_harness.agents.protocol import ToolFailed
from stream_harness.agents.server import AgentServer, LedgerTool
from stream_harness.agents.tool_runs import LEDGER_ENV


@side_effect
def charge(customer: str, amount_cents: int = 0, **extra: object) -> str:
    return f"charged {customer}"


@side_effect(name="refund")
async def refund_async(order: str) -> str:
    return f"refunded {order}"


def test_outside_a_run_nothing_is_reported(monkeypatch):
    monkeypatch.delenv(LEDGER_ENV, raising=False)
    assert record_tool_run("anything", {"x": 1}) is None
    assert charge("ada", 5) == "charged ada"


def test_inside_a_run_each_call_is_in_the_ledger_by_name_and_arguments(monkeypatch):
    with AgentServer([], [], any_tool=True) as server:
        monkeypatch.setenv(LEDGER_ENV, server.ledger_url)
        assert charge("ada", amount_cents=4200, note="vip") == "charged ada"
        assert asyncio.run(refund_async(order="o-1")) == "refunded o-1"
        record_tool_run("lookup", {"q": "x"})
        seen = [(e.tool, e.arguments) for e in server.ledger]
    assert seen == [
        ("charge", {"customer": "ada", "amount_cents": 4200, "note": "vip"}),
        ("refund", {"order": "o-1"}),
        ("lookup", {"q": "x"}),
    ]


def test_a_scripted_failure_raises_before_the_tool_body(monkeypatch):
    ran: list[str] = []

    @side_effect
    def pay(customer: str) -> None:
        ran.append(customer)

    with AgentServer([], [LedgerTool("pay", runs=[(None, "card declined")])]) as server:
        monkeypatch.setenv(LEDGER_ENV, server.ledger_url)
        with pytest.raises(ToolFailed, match="card declined"):
            pay("ada")
        pay("bob")  # the second run: the default, ok
    assert ran == ["bob"]


def test_an_unreachable_ledger_does_not_break_the_tool(monkeypatch, capsys):
    monkeypatch.setenv(LEDGER_ENV, "http://127.0.0.1:9/_ledger")
    assert charge("ada") == "charged ada"
    assert "could not report charge" in capsys.readouterr().err
