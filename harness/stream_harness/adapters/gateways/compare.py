"""Final messages compared across wire protocols, at the level of the contract.

A gateway that translates Anthropic into OpenAI chat cannot keep block boundaries, ids,
raw stop reasons or signatures: the client protocol has no place for them. What it must
keep is what a client acts on, and that is what is compared here (specs/checks.md,
"Across protocols"):

- the text, joined over text blocks;
- the thinking text, joined, when the upstream had some (every protocol registered here
  carries reasoning text: ``reasoning_content`` on chat, reasoning summaries on Responses);
- the tool calls in order, by name and parsed arguments (ids are the gateway's to mint);
- the normalized stop reason (specs/stop_reasons.yaml has mapped each side already);
- usage within the documented conventions: the prompt side as a whole
  (``input + cache_read + cache_write``, since one protocol counts cached tokens inside the
  prompt and another beside it), ``output``, ``cache_read``, and ``cache_write`` only for
  a client protocol that has a field for it (Anthropic); totals are not compared, their
  definitions differ; a chat client whose stream failed has no usage to show (it comes in
  the last chunk), which is not counted as usage lost;
- whether the message carries an error.

On the same protocol at both ends (a pass-through), nothing may be lost: blocks compare
whole (signatures included, tool-call ids excepted only if the gateway re-mints them —
they are not), and the raw stop reason and usage exactly.

Kept free of the conformance runner: checks import this, never the other way.
"""

from __future__ import annotations

from typing import Any, Final

from stream_harness.contract.diff import message_differences, short_repr
from stream_harness.contract.events import AssistantMessage, TextBlock, ThinkingBlock, ToolCall

CACHE_WRITE_FIELD: Final = frozenset({"anthropic-messages"})
# Client protocols whose usage arrives only in a last chunk (chat's ``include_usage``).
USAGE_AT_END: Final = frozenset({"openai-completions"})


def view(message: AssistantMessage | None, *, client: str | None = None) -> dict[str, Any] | None:
    """What the cross-protocol comparison reads of a message, as JSON."""
    if message is None:
        return None
    u = message.usage
    usage: dict[str, int] = {
        "prompt": u.input + u.cache_read + u.cache_write,
        "output": u.output,
        "cache_read": u.cache_read,
    }
    if client is None or client in CACHE_WRITE_FIELD:
        usage["cache_write"] = u.cache_write
    return {
        "text": "".join(b.content for b in message.content if isinstance(b, TextBlock)),
        "thinking": "".join(b.content for b in message.content if isinstance(b, ThinkingBlock)),
        "tool_calls": [
            {"name": b.name, "arguments": b.arguments}
            for b in message.content
            if isinstance(b, ToolCall)
        ],
        "stop_reason": message.stop_reason,
        "usage": usage,
        "has_error": message.error_message is not None,
    }


def differences(
    expected: AssistantMessage, upstream: str, observed: AssistantMessage | None, client: str
) -> list[str]:
    """Why ``observed`` (in ``client``) is not ``expected`` (in ``upstream``); empty if it is."""
    if observed is None:
        return ["no final message"]
    if upstream == client:
        return message_differences(expected, observed)
    want = view(expected, client=client)
    got = view(observed, client=client)
    assert want is not None and got is not None
    out: list[str] = []
    for key in ("text", "tool_calls", "stop_reason", "has_error"):
        if want[key] != got[key]:
            out.append(f"{key}: {short_repr(got[key])} != expected {short_repr(want[key])}")
    if want["thinking"] and want["thinking"] != got["thinking"]:
        out.append(
            f"thinking: {short_repr(got['thinking'])} != expected {short_repr(want['thinking'])}"
        )
    zero = all(v == 0 for v in got["usage"].values())
    if zero and client in USAGE_AT_END and got["has_error"]:
        pass  # its usage comes last: a stream that failed before its end has none to give
    elif want["usage"] != got["usage"]:
        if zero:
            out.append(
                f"usage dropped: none reached the client, the upstream reported {want['usage']}"
            )
        else:
            diff = {
                k: (got["usage"].get(k), v)
                for k, v in want["usage"].items()
                if got["usage"].get(k) != v
            }
            out.append(
                "usage " + ", ".join(f"{k}: {g} != expected {w}" for k, (g, w) in diff.items())
            )
    return out
