"""The agent scenario server: request k gets scripted answer k, and a ledger for the tools.

An agent under test is seen only from outside: the requests it sends (each logged as a
:class:`~stream_harness.server.loopback.Hit`, body and headers) and the tools it runs.
Its tools do not run in the harness's process (the agent may be Node or Go); each tool's
body is an HTTP call to this server's ledger endpoint, ``POST /_ledger``
(``{"tool": NAME, "arguments": {...}}``), which records the execution in order and
answers the scripted result (``{"result": ...}``) or the scripted failure
(``{"error": MESSAGE}``). So every tool execution is observed whatever the language of
the agent, and ``GET /_ledger`` returns the whole record as JSON for a runner that is not
in this process.

Model requests are answered by position, whatever the path (each framework's client
picks its own): request k gets answer k, the k-th rendered response of the scenario, and
a request past the last one gets a 400 ``no more scripted responses`` (non-retryable, so
an agent that loops is stopped and the checks see the extra request). An answer with a
``match`` goes instead to the first request whose body contains it (a framework's side
request, a title or a summary, answered out of turn); :attr:`AgentReplies.answered` says
which answer each request got.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Final

from stream_harness.server.loopback import (
    CUT_SETTLE,
    Answer,
    Chunked,
    Hit,
    LoopbackServer,
    Whole,
    json_error,
)

LEDGER_PATH: Final = "/_ledger"
EXHAUSTED: Final = "stream-harness: no more scripted responses"


@dataclass(frozen=True, slots=True)
class ScriptedAnswer:
    """One model response as bytes: ``cut`` drops the connection after the chunks."""

    status: int
    headers: Sequence[tuple[str, str]]
    chunks: Sequence[bytes]
    cut: bool = False
    pace: float = 0.0
    match: bytes | None = None  # served to the first request whose body contains this
    reset: bool = False  # the drop is an RST (SO_LINGER 0), not a FIN


@dataclass(frozen=True, slots=True)
class LedgerTool:
    """What the ledger answers for one tool: ``runs[n]`` for its n-th run, else ``default``;
    each a (result, failure message or None)."""

    name: str
    default: tuple[Any, str | None] = ("ok", None)
    runs: Sequence[tuple[Any, str | None]] = ()


@dataclass(frozen=True, slots=True)
class Execution:
    """One tool execution the ledger saw; ``after_request`` counts the model requests
    received before it (so the checks know which response it came from)."""

    order: int
    tool: str
    arguments: Any
    nth: int  # 0-based run of this tool
    after_request: int
    at: float
    result: Any = None
    error: str | None = None


@dataclass
class AgentReplies:
    """The reply strategy of the agent scenario server."""

    answers: Sequence[ScriptedAnswer]
    tools: Mapping[str, LedgerTool]
    methods: ClassVar[tuple[str, ...]] = ("GET", "POST", "PUT", "DELETE")
    requests: list[Hit] = field(default_factory=list)
    ledger: list[Execution] = field(default_factory=list)
    answered: list[int | None] = field(default_factory=list)  # the answer each request got
    # Called with the first model request's body, before it is answered: the answers and
    # tools to serve instead (agents/binding.py binds the scenario's calls to the tools
    # the request offers). With ``any_tool`` the ledger records a tool it was not told of
    # (a user's own tool; A1 then says no call carried it) instead of refusing it.
    rebind: Callable[[bytes], tuple[Sequence[ScriptedAnswer], Mapping[str, LedgerTool]]] | None = (
        None
    )
    any_tool: bool = False

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def respond(self, hit: Hit) -> Answer:
        if hit.path.rstrip("/") == LEDGER_PATH or hit.path.startswith(LEDGER_PATH + "/"):
            return self._ledger(hit)
        with self._lock:
            self.requests.append(hit)
            if self.rebind is not None and len(self.requests) == 1:
                self.answers, self.tools = self.rebind(hit.body)
            k = self._choose(hit.body)
            self.answered.append(k)
        if k is None:
            hit.note = "past the script"
            return json_error(400, "invalid_request_error", EXHAUSTED)
        answer = self.answers[k]
        hit.note = f"response {k}"
        if answer.status >= 400:
            body = b"".join(answer.chunks)
            headers = [*answer.headers, ("content-length", str(len(body)))]
            return Whole(answer.status, headers, body)
        return Chunked(
            answer.status,
            answer.headers,
            answer.chunks,
            delay=answer.pace,
            cut=("reset" if answer.reset else "close") if answer.cut else "none",
            # A FIN loses no byte the client has not read: no wait before it; an RST drops
            # what the client has not read yet, so the chunks get their time to arrive.
            settle=CUT_SETTLE if answer.reset else 0.0,
        )

    def _choose(self, body: bytes) -> int | None:
        """The first unplayed answer whose ``match`` the body contains, else the first
        unplayed one without a ``match``: answers in order unless a scenario says so."""
        played = {i for i in self.answered if i is not None}
        waiting = [i for i in range(len(self.answers)) if i not in played]
        for i in waiting:
            match = self.answers[i].match
            if match is not None and match in body:
                return i
        return next((i for i in waiting if self.answers[i].match is None), None)

    def _ledger(self, hit: Hit) -> Answer:
        if hit.method == "GET":
            return _json(200, self.record())
        try:
            data = json.loads(hit.body or b"{}")
            name = data["tool"]
            arguments = data.get("arguments", {})
        except (ValueError, KeyError, TypeError):
            return _json(400, {"error": 'the ledger takes {"tool": NAME, "arguments": {...}}'})
        tool = self.tools.get(name)
        if tool is None and self.any_tool and isinstance(name, str):
            tool = LedgerTool(name)
        if tool is None:
            return _json(404, {"error": f"no tool {name!r} in this scenario"})
        with self._lock:
            nth = sum(1 for e in self.ledger if e.tool == name)
            result, failure = tool.runs[nth] if nth < len(tool.runs) else tool.default
            execution = Execution(
                len(self.ledger),
                name,
                arguments,
                nth,
                len(self.requests),
                time.monotonic(),
                None if failure else result,
                failure,
            )
            self.ledger.append(execution)
        return _json(200, {"error": failure} if failure else {"result": result})

    def record(self) -> dict[str, Any]:
        """What ``GET /_ledger`` answers: the executions and the model requests so far."""
        with self._lock:
            return {
                "executions": [asdict(e) for e in self.ledger],
                "requests": [_request_json(h) for h in self.requests],
            }


def _request_json(hit: Hit) -> dict[str, Any]:
    try:
        body: Any = json.loads(hit.body) if hit.body else None
    except ValueError:
        body = hit.body.decode("utf-8", "replace")
    return {"method": hit.method, "path": hit.path, "headers": hit.headers, "body": body}


def _json(status: int, value: Any) -> Whole:
    data = json.dumps(value).encode()
    return Whole(
        status, [("content-type", "application/json"), ("content-length", str(len(data)))], data
    )


class AgentServer(LoopbackServer):
    """``with AgentServer(answers, tools) as server: server.url, server.ledger_url``."""

    poll_interval: ClassVar[float] = 0.02  # one server per run: stopping must not cost 0.5 s

    def __init__(
        self,
        answers: Sequence[ScriptedAnswer],
        tools: Sequence[LedgerTool],
        *,
        port: int = 0,
        rebind: Callable[[bytes], tuple[Sequence[ScriptedAnswer], Mapping[str, LedgerTool]]]
        | None = None,
        any_tool: bool = False,
    ) -> None:
        self.replies_: AgentReplies = AgentReplies(
            answers, {t.name: t for t in tools}, rebind=rebind, any_tool=any_tool
        )
        super().__init__(self.replies_, port=port)

    @property
    def ledger_url(self) -> str:
        return self.url + LEDGER_PATH

    @property
    def requests(self) -> list[Hit]:
        return self.replies_.requests

    @property
    def ledger(self) -> list[Execution]:
        return self.replies_.ledger
