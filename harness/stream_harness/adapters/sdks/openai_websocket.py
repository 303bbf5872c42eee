"""The openai SDK's Responses WebSocket client (``client.responses.connect()``) as a
conformance subject (its resume of a background stream is the openai-sdk row's
``run_resumable``, harness/stream_harness/adapters/sdks/openai_sdk.py).

WebSocket mode (specs/protocols/openai-responses-websocket.md): each run plays the case's
turn on a loopback WebSocket server (harness/stream_harness/server/websocket.py, the frames
as recorded: continuation frames, close codes, a dropped socket), and the SDK's own
connection reads it: ``connection.response.create(...)``, then iterating the connection.
The SDK has no accumulator for WebSocket mode (no ``get_final_response``): what its user
holds at the end is the ``response`` of the terminal event (``response.completed``,
``.incomplete``, ``.failed``), or the ``error`` event's message, mapped as the openai-sdk
adapter maps them; an iteration that ends without either, or raises, is what it is.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Sequence
from typing import Any, Final

from stream_harness.adapters.in_process import Replay, SDKAdapter
from stream_harness.adapters.protocol import AdapterResult
from stream_harness.adapters.sdk_support import (
    error_message,
    failed_message,
    raised_result,
    require,
)
from stream_harness.adapters.sdks.openai_sdk import responses_message
from stream_harness.adapters.ws_session import ChainState, SessionTurn
from stream_harness.server.loopback import LoopbackServer
from stream_harness.server.ws_session import OneSession

WEBSOCKET: Final = "openai-responses-websocket"
TERMINAL: Final = frozenset(
    {"response.completed", "response.incomplete", "response.failed", "response.cancelled"}
)


def _dump(obj: Any) -> Any:
    with contextlib.suppress(Exception):
        return obj.model_dump(mode="json")
    return None


class OpenAISDKWebSocketAdapter(SDKAdapter):
    """``with client.responses.connect() as connection``: one turn a run."""

    name = "openai-sdk-websocket"
    protocols: frozenset[str] = frozenset({WEBSOCKET})

    def __init__(self) -> None:
        (self._openai,) = require(self.name, "openai")
        require(self.name, "websockets")

    def version(self) -> str:
        return str(self._openai.__version__)

    @functools.cached_property
    def _base_client(self) -> Any:
        return self._openai.OpenAI(api_key="sk-test", base_url="http://127.0.0.1/v1", max_retries=0)

    def client(self, base_url: str) -> Any:
        """The client of one run, for the run's loopback server. A copy of one client made
        once (``with_options``, as a user points a client elsewhere): a new ``OpenAI()``
        builds an SSL context, 22 ms of CPU, which over the main job's ~1,000 WebSocket
        runs was a third of this adapter's CPU. The socket is the run's own; the copy shares
        only the HTTP pool, which WebSocket mode does not use."""
        return self._base_client.with_options(base_url=f"{base_url}/v1")

    def drive(self, protocol: str, replay: Replay) -> AdapterResult:
        with LoopbackServer(OneSession([b"".join(replay.chunks)])) as server:
            return self._turn(self.client(server.url))

    def _turn(self, client: Any) -> AdapterResult:
        seen: list[str] = []
        try:
            with client.responses.connect() as connection:
                connection.response.create(model="gpt-harness", input="hi")
                return self._read(connection, seen)
        except Exception as exc:
            return raised_result(exc, None, {"events": seen}, message=error_message(exc))

    def _read(self, connection: Any, seen: list[str]) -> AdapterResult:
        """Iterate the connection to the turn's terminal event, as its user does."""
        for event in connection:
            seen.append(event.type)
            if event.type in TERMINAL:
                return AdapterResult(
                    message=responses_message(event.response, WEBSOCKET),
                    raw={"events": seen, "response": _dump(event.response)},
                )
            if event.type == "error":
                error = getattr(event, "error", None)
                text = getattr(error, "message", None) or getattr(event, "message", None)
                return AdapterResult(
                    message=failed_message(None, text or "error event"),
                    raw={"events": seen, "error_event": _dump(event)},
                )
        # The iterator ended (a close frame the SDK takes as the end) before any terminal
        # event: the user holds no response and was told nothing.
        return AdapterResult(
            message=None, raw={"events": seen, "note": "iteration ended without a terminal event"}
        )

    # -- several turns on one connection (the session checks) ---------------------------

    sessions = True
    # The SDK leaves previous_response_not_found to its user (openai/lib/responses_websocket/
    # README.md, 3.54.0: "Handle previous_response_not_found ... through the original error
    # event", "Restore the full retained input and output history as a new chain"): a
    # convention, not a failure; previous-response-recovery checks the reference.
    recovers_previous_response = False

    def run_session(
        self, protocol: str, base_url: str, turns: Sequence[SessionTurn]
    ) -> list[AdapterResult]:
        """``with client.responses.connect() as connection``, every turn on it: the turn's
        ``connection.response.create(...)`` chained (as its user must) with the id of the
        ``response`` the SDK handed over for the previous turn, then the events to the
        terminal one. A turn whose connection ended stops the session."""
        client = self.client(base_url)
        chain = ChainState(turns[0].context if turns else ())
        out: list[AdapterResult] = []
        try:
            with client.responses.connect() as connection:
                for turn in turns:
                    seen: list[str] = []
                    event = chain.request(turn)
                    event.pop("type")
                    try:
                        connection.response.create(**event)
                        result = self._read(connection, seen)
                    except Exception as exc:
                        out.append(
                            raised_result(exc, None, {"events": seen}, message=error_message(exc))
                        )
                        break
                    out.append(result)
                    response = result.raw.get("response")
                    chain.answered(turn, response if isinstance(response, dict) else None)
                    if result.message is None:
                        break  # the iterator ended: the connection is gone
        except Exception as exc:
            out.append(raised_result(exc, None, {}, message=error_message(exc)))
        return out
