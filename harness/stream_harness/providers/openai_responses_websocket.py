"""OpenAI Responses over WebSocket mode (``wss://.../v1/responses``) -> unified events, per turn.

WebSocket mode sends the same server events as the SSE stream (``response.created`` ...
``response.completed``, ``error``), one JSON object a WebSocket message, so this is the
openai-responses translator over another framing (``websocket-json``,
harness/stream_harness/wire/websocket.py): no second translator. One normalizer reads one
*turn* (one ``response.create`` and what answers it); a cassette's interactions are the turns
of one connection, each a case of its own, so a turn never sees an earlier turn's state.

What the socket adds is how a turn can end without its terminal event: the server closes
the connection (any close code, 1000 included: a normal closure in the middle of a turn
still loses the response), or the log is cut. Both end in an error that names the close
code, keeping what the turn had received, as an SSE stream cut before its terminal event
does. Connection-level failures (``previous_response_not_found``,
``response_already_in_flight``, ``websocket_connection_limit_reached``) come as ``error``
events and are read as the SSE stream's are. Sources:
specs/protocols/openai-responses-websocket.md.
"""

from __future__ import annotations

from stream_harness.providers.openai_responses import OpenAIResponsesNormalizer
from stream_harness.providers.registry import Detect, Protocol, register
from stream_harness.wire import FramingError
from stream_harness.wire.framing import WEBSOCKET_JSON


class OpenAIResponsesWebSocketNormalizer(OpenAIResponsesNormalizer):
    """The Responses translator reading WebSocket messages; a close mid-turn is an error."""

    protocol = "openai-responses-websocket"

    def on_framing_error(self, error: FramingError) -> None:
        # A frame log is not a byte stream a reader can be pointed into: the message says
        # which frame or message failed, and the close code when the server closed.
        self._flush_pending()
        self.acc.fail(f"WebSocket: {error.message}")


Normalizer = OpenAIResponsesWebSocketNormalizer

PROTOCOL = register(
    Protocol(
        id="openai-responses-websocket",
        title="OpenAI Responses (WebSocket mode)",
        framing=WEBSOCKET_JSON,
        translator=OpenAIResponsesWebSocketNormalizer,
        detect=Detect(
            # The URL decides before any header rule, and openai-responses' /responses rule
            # would take an https:// form; recordings write the ws(s):// scheme.
            url=(r"^wss?://[^?#]*/responses(?:$|[?#/])",),
            headers=(("upgrade", r"(?i)^websocket$"),),
        ),
        stop_reasons="openai-responses",
        order=28,  # before openai-responses (30), whose URL rule also matches
    )
)
