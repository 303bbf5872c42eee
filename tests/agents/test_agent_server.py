"""The scenario server answers by position and records every tool run through its ledger."""

from __future__ import annotations

import json
import urllib.request

import pytest

from stream_harness.agents.protocol import AgentTool, ToolFailed
from stream_harness.agents.server import EXHAUSTED, AgentServer, LedgerTool, ScriptedAnswer


def post(url: str, body: object) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_request_k_gets_answer_k_and_then_a_400() -> None:
    answers = [
        ScriptedAnswer(200, [("content-type", "text/plain")], [b"first"]),
        ScriptedAnswer(429, [], [b"slow"]),
    ]
    with AgentServer(answers, []) as server:
        assert post(server.url + "/v1/anything", {"n": 1}) == (200, b"first")
        assert post(server.url + "/other", {"n": 2}) == (429, b"slow")
        status, body = post(server.url + "/v1/anything", {"n": 3})
        assert status == 400 and EXHAUSTED.encode() in body
        assert [json.loads(h.body)["n"] for h in server.requests] == [1, 2, 3]


def test_the_ledger_records_runs_and_answers_the_script() -> None:
    tool = LedgerTool("pay", ("paid", None), runs=[("first", None), (None, "card declined")])
    with AgentServer([], [tool]) as server:
        agent_tool = AgentTool("pay", "", {"type": "object"}, server.ledger_url)
        assert agent_tool.call({"amount": 1}) == "first"
        with pytest.raises(ToolFailed, match="card declined"):
            agent_tool.call({"amount": 2})
        assert agent_tool.call({"amount": 3}) == "paid"
        assert [(e.tool, e.arguments, e.nth, e.error) for e in server.ledger] == [
            ("pay", {"amount": 1}, 0, None),
            ("pay", {"amount": 2}, 1, "card declined"),
            ("pay", {"amount": 3}, 2, None),
        ]
        with urllib.request.urlopen(server.ledger_url, timeout=5) as reply:
            record = json.loads(reply.read())
        assert [e["arguments"] for e in record["executions"]] == [
            {"amount": 1},
            {"amount": 2},
            {"amount": 3},
        ]
        assert record["requests"] == []  # ledger calls are not model requests
        assert post(server.ledger_url, {"tool": "nope"})[0] == 404
        assert post(server.ledger_url, {"no": "tool"})[0] == 400


def test_an_answer_with_a_match_goes_to_the_request_that_contains_it() -> None:
    answers = [
        ScriptedAnswer(200, [], [b"title"], match=b"Generate a title"),
        ScriptedAnswer(200, [], [b"first"]),
        ScriptedAnswer(200, [], [b"second"]),
    ]
    with AgentServer(answers, []) as server:
        assert post(server.url + "/v1/x", {"q": "hello"})[1] == b"first"
        assert post(server.url + "/v1/x", {"q": "Generate a title please"})[1] == b"title"
        assert post(server.url + "/v1/x", {"q": "Generate a title again"})[1] == b"second"  # played
        assert post(server.url + "/v1/x", {"q": "more"})[0] == 400
        assert server.replies_.answered == [1, 0, 2, None]
