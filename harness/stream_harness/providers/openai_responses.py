"""OpenAI Responses (``POST /v1/responses``, ``stream: true``) and compatibles -> unified events.

One normalizer covers OpenAI, OpenRouter, DeepSeek and AWS bedrock-mantle: all send typed
SSE events (``response.*`` and ``error``) whose JSON ``type`` names them (provider-facts.md
2.3, "PF 2.3" below). The full mapping and every decision are in
specs/protocols/openai-responses.md; "case N" cites provider-facts.md section 7 and
"bug N" ecosystem.md section 6.

The unit of the protocol is the *output item* (``message``, ``reasoning``,
``function_call``, server tool calls, ...). Each item the contract models is one block:
a message is one text block, a reasoning item one thinking block, a function call one tool
call (pi's mapping, seed 002). Items the contract does not model are kept whole, as their
``output_item.done`` carries them, in ``provider_blocks``. Events are processed in arrival
order; ``sequence_number`` is not used to reorder (the SSE stream is one ordered TCP
stream, and reordering would need buffering that could hang on a gap).

Why the ``.done`` events are read at all when the deltas carry everything: some servers
send only the final copy (arguments in ``function_call_arguments.done`` without deltas,
PF 2.3), and a ``response.completed`` may hold items whose ``output_item.done`` never came
(the corpus' mcp_list_tools stream). A final copy that extends what was streamed adds the
missing suffix as one more delta; one that contradicts it is ignored, because the deltas
are what every consumer already saw (the accumulator's rule for tool arguments, applied to
text too).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from stream_harness.contract.events import ErrorInfo
from stream_harness.providers.base import SSENormalizer, excerpt
from stream_harness.providers.coerce import as_dict, as_int, as_list, as_str
from stream_harness.providers.registry import Detect, Protocol, register
from stream_harness.providers.stop_reasons import map_stop_reason
from stream_harness.wire import SSEEvent
from stream_harness.wire.framing import SSE, FrameDecoder

# The message of the error that ends a stream cut before any terminal event (case 62).
NO_TERMINAL_EVENT: Final = (
    "stream ended without a terminal response event "
    "(response.completed, response.incomplete or response.failed)"
)

# Summary parts (and raw reasoning_text parts) of one reasoning item are one thinking
# block, joined as pi joins them (seed 002; PI-M openai-responses-shared.ts).
THINKING_PART_SEPARATOR: Final = "\n\n"

# Items that become content blocks; every other item type is a provider block.
MESSAGE: Final = "message"
REASONING: Final = "reasoning"
FUNCTION_CALL: Final = "function_call"
CUSTOM_TOOL_CALL: Final = "custom_tool_call"
_TOOL_ITEMS: Final = (FUNCTION_CALL, CUSTOM_TOOL_CALL)
_CONTRACT_ITEMS: Final = (MESSAGE, REASONING, FUNCTION_CALL, CUSTOM_TOOL_CALL)

# Part keys inside an item: (kind, index) with the wire's content_index / summary_index.
OUTPUT_TEXT: Final = "output_text"
REFUSAL: Final = "refusal"
SUMMARY: Final = "summary"
REASONING_TEXT: Final = "reasoning_text"
PartKey = tuple[str, int]

# A free-form (custom) tool call's input is a string; the contract's arguments are an
# object, so it streams as the JSON text of {"input": <text>}: this prefix, the escaped
# text, then the suffix (see _custom_input).
_CUSTOM_PREFIX: Final = '{"input":"'
_CUSTOM_SUFFIX: Final = '"}'

_TERMINAL_EVENTS: Final = {
    "response.completed": "completed",
    "response.incomplete": "incomplete",
    "response.failed": "failed",
    # Not in the documented union (PF 2.3), but "cancelled" is a status; a server that
    # names its terminal event after it is understood rather than passed over.
    "response.cancelled": "cancelled",
}


def _compact(value: Any) -> str:
    """JSON as JavaScript's JSON.stringify writes it, so a signature reads the same as pi's."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _json_string_body(text: str) -> str:
    """``text`` escaped for the inside of a JSON string literal (no quotes)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def signature_v1(item_id: str, **extra: str | None) -> str:
    """pi's replay token for a non-reasoning item: ``{"v":1,"id":...}`` plus what replay needs.

    pi stores a message's item id and ``phase`` this way (its ``encodeTextSignatureV1``);
    the same shape carries a tool call's item id, and its ``namespace`` or non-default
    ``type`` when the wire has them, because the contract's ToolCall has no field for them
    and a replayed call without them is a different call.
    """
    payload: dict[str, Any] = {"v": 1, "id": item_id}
    payload.update({k: v for k, v in extra.items() if v})
    return _compact(payload)


@dataclass(slots=True)
class _Item:
    """What the normalizer knows about one output item (keyed by ``uid`` in the accumulator)."""

    uid: int
    type: str
    item_id: str | None
    output_index: int | None
    data: dict[str, Any]
    done: bool = False
    # Text streamed so far per part (as its deltas: appending to one string copied it
    # on every delta, quadratic in the text), the last part written, and whether any
    # text came: enough to join thinking parts and to reconcile a part with its final copy.
    parts: dict[PartKey, list[str]] = field(default_factory=dict)
    last_part: PartKey | None = None
    has_text: bool = False
    annotations: dict[int, list[Any]] = field(default_factory=dict)
    # A custom tool call's raw input as streamed; None until the JSON prefix went out.
    custom_input: str | None = None
    # The ToolCall.id given to a tool item (see _open_tool).
    call_id: str | None = None
    # A tool item calling a tool the response does not declare as the client's (xAI's
    # server-side web_search / x_search as custom_tool_call): kept as a provider block.
    server: bool = False


class OpenAIResponsesNormalizer(SSENormalizer):
    protocol = "openai-responses"

    def __init__(self, frames: FrameDecoder | None = None) -> None:
        super().__init__(frames)
        self._items: list[_Item] = []
        self._by_id: dict[str, _Item] = {}
        self._by_index: dict[int, _Item] = {}
        self._last_of_type: dict[str, _Item] = {}
        self._call_ids: set[str] = set()
        # Names of the client's tools as the response object declares them (function and
        # custom tools); None until a response object with a non-empty tools list came.
        self._client_tools: set[str] | None = None
        self._handlers: dict[str, Callable[[str, dict[str, Any]], None]] = {
            "response.created": self._lifecycle,
            "response.queued": self._lifecycle,
            "response.in_progress": self._lifecycle,
            "response.output_item.added": self._item_added_event,
            "response.output_item.done": self._item_done_event,
            "response.content_part.added": self._content_part_added,
            "response.content_part.done": self._content_part_done,
            "response.output_text.delta": self._text_delta,
            "response.output_text.done": self._text_done,
            "response.output_text.annotation.added": self._annotation_added,
            "response.refusal.delta": self._text_delta,
            "response.refusal.done": self._text_done,
            "response.reasoning_summary_part.added": self._summary_part_added,
            "response.reasoning_summary_part.done": self._summary_part_done,
            "response.reasoning_summary_text.delta": self._reasoning_delta,
            "response.reasoning_summary_text.done": self._reasoning_done,
            "response.reasoning_text.delta": self._reasoning_delta,
            "response.reasoning_text.done": self._reasoning_done,
            "response.function_call_arguments.delta": self._arguments_delta,
            "response.function_call_arguments.done": self._arguments_done,
            "response.custom_tool_call_input.delta": self._custom_delta,
            "response.custom_tool_call_input.done": self._custom_done,
            "error": self._error_event,
            **{name: self._terminal for name in _TERMINAL_EVENTS},
        }

    # -- dispatch ----------------------------------------------------------------------

    def on_event(self, event: SSEEvent) -> None:
        if event.data.strip() == "[DONE]":
            # OpenRouter appends a Chat-style sentinel after response.completed (corpus);
            # it is not the protocol's end, so before a terminal event EOF decides.
            return
        payload = self.load_json(event)
        if self.acc.terminated:
            return
        if not isinstance(payload, dict):
            self.acc.fail(
                f"malformed event #{self.events_seen} ({event.event}): expected a JSON "
                f"object, got {type(payload).__name__}: {excerpt(event.data)}"
            )
            return
        etype = payload.get("type")
        if not isinstance(etype, str):
            # The JSON type names the event (the SSE event: line repeats it, PF 2.3); a
            # proxy that drops one of them is still understood. A bare {"error": {...}}
            # is how OpenAI-compatible proxies report a failure (case 51).
            if event.event != "message":
                etype = event.event
            elif isinstance(payload.get("error"), dict):
                etype = "error"
            else:
                return
        handler = self._handlers.get(etype)
        if handler is not None:
            handler(etype, payload)
        # Anything else (web_search_call.searching, mcp_call.*, code_interpreter_call_code
        # .delta, image_generation_call.partial_image, audio, ...) is progress of an item
        # whose final form arrives in output_item.done: passed over.

    def _malformed(self, etype: str, what: str) -> None:
        self.acc.fail(f"malformed {etype} (event #{self.events_seen}): {what}")

    # -- lifecycle ---------------------------------------------------------------------

    def _lifecycle(self, etype: str, payload: dict[str, Any]) -> None:
        response = as_dict(payload.get("response"))
        self._declared_tools(response.get("tools"))
        self.acc.start(model=as_str(response.get("model")), response_id=as_str(response.get("id")))
        self._usage(response.get("usage"))

    def _declared_tools(self, tools: Any) -> None:
        """Learn the client's tool names from the response's ``tools`` (once, non-empty).

        Server tools are declared by type alone (``{"type": "web_search"}``); client tools
        have a name (function, custom, and the tools nested in a namespace). An empty or
        missing list says nothing (compatible servers leave it empty), so nothing is
        judged then.
        """
        if self._client_tools is not None or not isinstance(tools, list) or not tools:
            return
        names: set[str] = set()
        stack = list(tools)
        while stack:
            tool = stack.pop()
            if not isinstance(tool, dict):
                continue
            name = as_str(tool.get("name"))
            if name is not None and tool.get("type") in ("function", "custom", None):
                names.add(name)
            nested = tool.get("tools")
            if isinstance(nested, list):
                stack.extend(nested)
        self._client_tools = names

    def _is_server_call(self, itype: str, data: dict[str, Any]) -> bool:
        """A tool item whose tool the response never declared as the client's.

        xAI streams its server-side searches (web_search, x_search and their sub-tools)
        as ``custom_tool_call`` items the server has already run; they are not calls for
        the client (issue 14). Only judged when the response declared its tools.
        """
        if itype not in _TOOL_ITEMS or self._client_tools is None:
            return False
        name = as_str(data.get("name"))
        return name is not None and name not in self._client_tools

    def _usage(self, usage: Any) -> None:
        """Usage arithmetic (specs/protocols/openai-responses.md, Usage).

        ``input_tokens`` counts every input token, cached or not, and ``total_tokens`` is
        input + output; ``cached_tokens`` (reads) and bedrock-mantle's and OpenAI's newer
        ``cache_write_tokens`` are parts of it (corpus: 158 input, 43 written, 32 output,
        190 total). ``output_tokens`` already includes ``reasoning_tokens``.
        """
        if not isinstance(usage, dict):
            return
        details = as_dict(usage.get("input_tokens_details"))
        cache_read = as_int(details.get("cached_tokens"))
        cache_write = as_int(details.get("cache_write_tokens"))
        total_input = as_int(usage.get("input_tokens"))
        input_only = None
        if total_input is not None:
            input_only = max(0, total_input - (cache_read or 0) - (cache_write or 0))
        self.acc.set_usage(
            input=input_only,
            output=as_int(usage.get("output_tokens")),
            cache_read=cache_read,
            cache_write=cache_write,
            total=as_int(usage.get("total_tokens")),
        )

    # -- items -------------------------------------------------------------------------

    def _new_item(
        self, itype: str, item_id: str | None, output_index: int | None, data: dict[str, Any]
    ) -> _Item:
        item = _Item(len(self._items), itype, item_id, output_index, data)
        item.server = self._is_server_call(itype, data)
        self._items.append(item)
        if item_id is not None:
            self._by_id[item_id] = item
        if output_index is not None:
            self._by_index[output_index] = item
        self._last_of_type[itype] = item
        return item

    def _item_added_event(self, etype: str, payload: dict[str, Any]) -> None:
        data = self._event_item(etype, payload)
        if data is not None:
            self._item_added(data, as_int(payload.get("output_index")))

    def _event_item(self, etype: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The ``item`` of an output_item event; None, after ending in an error, if it is
        not an object."""
        data = payload.get("item")
        if not isinstance(data, dict):
            self._malformed(etype, "'item' is not an object")
            return None
        return data

    def _item_added(self, data: dict[str, Any], output_index: int | None) -> _Item:
        item_id = as_str(data.get("id"))
        itype = as_str(data.get("type")) or "unknown"
        known = self._by_id.get(item_id) if item_id is not None else None
        if known is None and output_index is not None:
            known = self._rotated(item_id, output_index, itype)
        if known is not None and not known.done and known.type == itype:
            # A repeated added event for a live item only refreshes what we know of it.
            known.data = data
            self._open_tool(known)
            return known
        # A new item, or an id reused after its item ended: a block of its own either way.
        item = self._new_item(itype, item_id, output_index, data)
        if itype == REASONING:
            # Opened at once (pi opens blocks at output_item.added, seed 002) so that a
            # reasoning item without summary still becomes a block, in output order.
            self.acc.open_thinking(item.uid)
        self._open_tool(item)
        return item

    def _open_tool(self, item: _Item, *, final: bool = False) -> None:
        """Open the item's tool call, or fill in the id and name it lacked.

        ToolCall.id is the wire's ``call_id`` (what a function_call_output must name).
        Without one, the item id stands in, but only once the item is final, since a
        call_id may still come. A call id already used in this response gets pi's
        ``<call_id>|<item_id>`` form, because ids must be unique within a message (C10)
        and bedrock-mantle numbers its calls call_0, call_1, ... (corpus
        reused_tool_call_ids), so a server reusing one is plausible.
        """
        if item.type not in _TOOL_ITEMS or item.server or self.acc.terminated:
            return
        if item.call_id is None:
            candidate = as_str(item.data.get("call_id")) or (item.item_id if final else None)
            if candidate is not None:
                if candidate in self._call_ids:
                    candidate = f"{candidate}|{item.item_id or item.uid}"
                self._call_ids.add(candidate)
                item.call_id = candidate
        self.acc.tool_call(item.uid, id=item.call_id, name=as_str(item.data.get("name")))

    def _item_done_event(self, etype: str, payload: dict[str, Any]) -> None:
        data = self._event_item(etype, payload)
        if data is not None:
            self._item_done(data, as_int(payload.get("output_index")))

    def _find_for_done(self, data: dict[str, Any], output_index: int | None) -> _Item | None:
        item_id = as_str(data.get("id"))
        itype = as_str(data.get("type")) or "unknown"
        by_id = self._by_id.get(item_id) if item_id is not None else None
        if by_id is not None:
            # An id that names an item of another type is a new item, not this one.
            return by_id if by_id.type == itype else None
        # OpenRouter's response.completed lists its items under other temporary ids than
        # it streamed (rs_tmp_..., corpus raw_cot_stream_openrouter): the position names
        # the item then, as long as the type agrees.
        if output_index is not None:
            by_index = self._by_index.get(output_index)
            if by_index is not None and by_index.type == itype:
                return by_index
        return None

    def _item_done(self, data: dict[str, Any], output_index: int | None) -> None:
        item = self._find_for_done(data, output_index)
        if item is None:
            item = self._item_added(data, output_index)
        if item.done:
            return
        item.data = data
        if item.server:
            self.acc.provider_block(item.type, data)
        elif item.type == MESSAGE:
            self._finish_message(item)
        elif item.type == REASONING:
            self._finish_reasoning(item)
        elif item.type == FUNCTION_CALL:
            self._finish_function_call(item)
        elif item.type == CUSTOM_TOOL_CALL:
            self._finish_custom_call(item)
        else:
            self.acc.provider_block(item.type, data)
        item.done = True

    def _live(self, payload: dict[str, Any], itype: str) -> _Item | None:
        """The live item an event addresses, created when the server skipped its added event.

        Events of an item that has ended are dropped (a late delta would otherwise open a
        second block under the same item), as are events naming an item of another type.
        """
        item_id = payload.get("item_id")
        if not (isinstance(item_id, str) and item_id):
            item_id = None
        output_index = payload.get("output_index")
        if type(output_index) is not int:
            output_index = as_int(output_index)
        item: _Item | None = None
        if item_id is not None:
            item = self._by_id.get(item_id) or self._adopt(item_id, output_index, itype)
        elif output_index is not None:
            item = self._by_index.get(output_index)
        else:
            item = self._last_of_type.get(itype)
            if item is not None and item.done:
                item = None
        if item is None:
            item = self._new_item(itype, item_id, output_index, {"type": itype})
            if itype == REASONING:
                self.acc.open_thinking(item.uid)
            self._open_tool(item)
            return item
        if item.done or item.type != itype or item.server:
            return None
        return item

    def _adopt(self, item_id: str, output_index: int | None, itype: str) -> _Item | None:
        """A live item at the same position takes the id its events name.

        Either it was added without an id, or the server gives each event of one item
        another id (GitHub Copilot's Responses API: litellm#30072, vercel/ai#18548): the
        output index names the item, and an id that changes is not a new item.
        """
        if output_index is None:
            return None
        item = self._by_index.get(output_index)
        if item is None or item.done or item.type != itype:
            return None
        if item.item_id is None:
            item.item_id = item_id
        else:
            self._rotated(item_id, output_index, itype)
        self._by_id[item_id] = item
        return item

    def _rotated(self, item_id: str | None, output_index: int, itype: str) -> _Item | None:
        """The live item at ``output_index`` when an event names it by another id."""
        item = self._by_index.get(output_index)
        if item is None or item.done or item.type != itype:
            return None
        if item_id is not None and item.item_id is not None and item_id != item.item_id:
            self.acc.warn(
                f"item ids change within output item {output_index} "
                "(identified by its output_index)"
            )
        return item

    # -- text and thinking ---------------------------------------------------------------

    def _append(self, item: _Item, part: PartKey, text: str) -> None:
        if not text:
            return
        if item.type == REASONING:
            if item.has_text and item.last_part != part:
                self.acc.thinking(item.uid, THINKING_PART_SEPARATOR)
            self.acc.thinking(item.uid, text)
        else:
            self.acc.text(item.uid, text)
        pieces = item.parts.get(part)
        if pieces is None:
            item.parts[part] = [text]
        else:
            pieces.append(text)
        item.last_part = part
        item.has_text = True

    def _reconcile(self, item: _Item, part: PartKey, final: Any) -> None:
        """Bring a part up to its final copy: all of it if nothing streamed, else a suffix.

        Reconciled only while the part is the last one written, so that text never lands
        behind a later part; a final copy that contradicts the deltas is ignored.
        """
        if not isinstance(final, str) or not final:
            return
        pieces = item.parts.get(part)
        if pieces is None:
            self._append(item, part, final)
            return
        streamed = "".join(pieces)
        if item.last_part == part and len(final) > len(streamed) and final.startswith(streamed):
            self._append(item, part, final[len(streamed) :])

    def _delta_text(self, etype: str, payload: dict[str, Any]) -> str | None:
        delta = payload.get("delta")
        if not isinstance(delta, str):
            self._malformed(etype, f"'delta' is {type(delta).__name__}, not a string")
            return None
        return delta

    def _text_delta(self, etype: str, payload: dict[str, Any]) -> None:
        # output_text and refusal deltas both become text (seed 002); the refusal is also
        # remembered, because it ends the response in error (see _terminal).
        # The hot path of a text stream: plain ints and strings skip the helper calls
        # (here and in _live: 22% of a text stream, bench_normalizers.py).
        delta = payload.get("delta")
        if not isinstance(delta, str):
            self._delta_text(etype, payload)  # ends the stream
            return
        item = self._live(payload, MESSAGE)
        if item is None:
            return
        kind = OUTPUT_TEXT if etype == "response.output_text.delta" else REFUSAL
        index = payload.get("content_index")
        if type(index) is not int:
            index = as_int(index)
        self._append(item, (kind, index or 0), delta)

    def _text_done(self, etype: str, payload: dict[str, Any]) -> None:
        item = self._live(payload, MESSAGE)
        if item is None:
            return
        index = as_int(payload.get("content_index")) or 0
        if etype.startswith("response.refusal"):
            self._reconcile(item, (REFUSAL, index), payload.get("refusal"))
        else:
            self._reconcile(item, (OUTPUT_TEXT, index), payload.get("text"))

    def _annotation_added(self, etype: str, payload: dict[str, Any]) -> None:
        item = self._live(payload, MESSAGE)
        annotation = payload.get("annotation")
        if item is not None and annotation is not None:
            index = as_int(payload.get("content_index")) or 0
            item.annotations.setdefault(index, []).append(annotation)

    def _content_part_added(self, etype: str, payload: dict[str, Any]) -> None:
        # Nothing to do but learn the item: a block opens on its first text, so that an
        # empty part never invents an empty block.
        part = as_dict(payload.get("part"))
        self._live(payload, REASONING if part.get("type") == REASONING_TEXT else MESSAGE)

    def _content_part_done(self, etype: str, payload: dict[str, Any]) -> None:
        part = as_dict(payload.get("part"))
        index = as_int(payload.get("content_index")) or 0
        ptype = part.get("type")
        if ptype == REASONING_TEXT:
            item = self._live(payload, REASONING)
            if item is not None:
                self._reconcile(item, (REASONING_TEXT, index), part.get("text"))
            return
        item = self._live(payload, MESSAGE)
        if item is None:
            return
        if ptype == REFUSAL:
            self._reconcile(item, (REFUSAL, index), part.get("refusal"))
        elif ptype == OUTPUT_TEXT:
            self._reconcile(item, (OUTPUT_TEXT, index), part.get("text"))
            if isinstance(part.get("annotations"), list):
                item.annotations[index] = list(part["annotations"])

    def _summary_part_added(self, etype: str, payload: dict[str, Any]) -> None:
        self._live(payload, REASONING)

    def _summary_part_done(self, etype: str, payload: dict[str, Any]) -> None:
        item = self._live(payload, REASONING)
        if item is not None:
            index = as_int(payload.get("summary_index")) or 0
            self._reconcile(item, (SUMMARY, index), as_dict(payload.get("part")).get("text"))

    def _reasoning_part(self, etype: str, payload: dict[str, Any]) -> PartKey:
        if etype.startswith("response.reasoning_summary"):
            return (SUMMARY, as_int(payload.get("summary_index")) or 0)
        return (REASONING_TEXT, as_int(payload.get("content_index")) or 0)

    def _reasoning_delta(self, etype: str, payload: dict[str, Any]) -> None:
        delta = self._delta_text(etype, payload)
        item = self._live(payload, REASONING) if delta is not None else None
        if item is not None and delta is not None:
            self._append(item, self._reasoning_part(etype, payload), delta)

    def _reasoning_done(self, etype: str, payload: dict[str, Any]) -> None:
        item = self._live(payload, REASONING)
        if item is not None:
            self._reconcile(item, self._reasoning_part(etype, payload), payload.get("text"))

    def _finish_message(self, item: _Item) -> None:
        for index, part in enumerate(as_list(item.data.get("content"))):
            part = as_dict(part)
            if part.get("type") == OUTPUT_TEXT:
                self._reconcile(item, (OUTPUT_TEXT, index), part.get("text"))
                if isinstance(part.get("annotations"), list):
                    item.annotations[index] = list(part["annotations"])
            elif part.get("type") == REFUSAL:
                self._reconcile(item, (REFUSAL, index), part.get("refusal"))
        if item.item_id is not None:
            phase = as_str(item.data.get("phase"))
            self.acc.signature(item.uid, signature_v1(item.item_id, phase=phase), replace=True)
        self.acc.end(item.uid)
        self._flush_annotations(item)

    def _flush_annotations(self, item: _Item) -> None:
        # Citations are not modelled by the contract: one provider block per text part
        # that has any, placed after the message's text block (specs/contract.md).
        for index in sorted(item.annotations):
            if item.annotations[index]:
                self.acc.provider_block(
                    "output_text.annotations",
                    {
                        "item_id": item.item_id,
                        "content_index": index,
                        "annotations": item.annotations[index],
                    },
                )
        item.annotations.clear()

    def _finish_reasoning(self, item: _Item) -> None:
        for index, part in enumerate(as_list(item.data.get("summary"))):
            self._reconcile(item, (SUMMARY, index), as_dict(part).get("text"))
        for index, part in enumerate(as_list(item.data.get("content"))):
            if as_dict(part).get("type") == REASONING_TEXT:
                self._reconcile(item, (REASONING_TEXT, index), as_dict(part).get("text"))
        # The whole final item is the replay token, as pi keeps it (PF 2.3, case 33): the
        # encrypted_content alone would lose the item id that replay with store=true
        # needs, and encrypted_content changes between output_item.added and .done (corpus
        # moderation_stream), so only the done item is right.
        self.acc.signature(item.uid, _compact(item.data), replace=True)
        self.acc.end(item.uid)

    # -- tool calls ------------------------------------------------------------------------

    def _tool_signature(self, item: _Item) -> str | None:
        if item.item_id is None:
            return None
        itype = item.type if item.type != FUNCTION_CALL else None
        return signature_v1(item.item_id, type=itype, namespace=as_str(item.data.get("namespace")))

    def _arguments_delta(self, etype: str, payload: dict[str, Any]) -> None:
        delta = self._delta_text(etype, payload)
        item = self._live(payload, FUNCTION_CALL) if delta is not None else None
        if item is not None and delta is not None:
            self.acc.tool_call(item.uid, delta=delta)

    def _arguments_done(self, etype: str, payload: dict[str, Any]) -> None:
        # The full arguments; the call stays open until output_item.done, which may still
        # bring a call_id or name the added event lacked.
        item = self._live(payload, FUNCTION_CALL)
        arguments = payload.get("arguments")
        if item is None or not isinstance(arguments, str):
            return
        streamed = self.acc.tool_call_arguments(item.uid)
        if len(arguments) > len(streamed) and arguments.startswith(streamed):
            self.acc.tool_call(item.uid, delta=arguments[len(streamed) :])

    def _finish_function_call(self, item: _Item) -> None:
        self._open_tool(item, final=True)
        signature = self._tool_signature(item)
        if signature is not None:
            self.acc.signature(item.uid, signature, replace=True)
        arguments = item.data.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            arguments = _compact(arguments)
        self.acc.tool_call_done(item.uid, arguments)

    def _custom_input(self, item: _Item, text: str) -> None:
        if item.custom_input is None:
            self.acc.tool_call(item.uid, delta=_CUSTOM_PREFIX)
            item.custom_input = ""
        if text:
            self.acc.tool_call(item.uid, delta=_json_string_body(text))
            item.custom_input += text

    def _custom_delta(self, etype: str, payload: dict[str, Any]) -> None:
        delta = self._delta_text(etype, payload)
        item = self._live(payload, CUSTOM_TOOL_CALL) if delta is not None else None
        if item is not None and delta is not None:
            self._custom_input(item, delta)

    def _custom_reconcile(self, item: _Item, final: Any) -> None:
        if not isinstance(final, str):
            return
        streamed = item.custom_input or ""
        if len(final) > len(streamed) and final.startswith(streamed):
            self._custom_input(item, final[len(streamed) :])

    def _custom_done(self, etype: str, payload: dict[str, Any]) -> None:
        item = self._live(payload, CUSTOM_TOOL_CALL)
        if item is not None:
            self._custom_reconcile(item, payload.get("input"))

    def _finish_custom_call(self, item: _Item) -> None:
        self._open_tool(item, final=True)
        self._custom_reconcile(item, item.data.get("input"))
        self._custom_input(item, "")
        self.acc.tool_call(item.uid, delta=_CUSTOM_SUFFIX)
        signature = self._tool_signature(item)
        if signature is not None:
            self.acc.signature(item.uid, signature, replace=True)
        self.acc.end(item.uid)

    # -- the end -----------------------------------------------------------------------------

    def _backfill(self, output: Any) -> None:
        """Finish, from the terminal response's ``output``, every item still open or unseen."""
        for index, data in enumerate(as_list(output)):
            if isinstance(data, dict):
                self._item_done(data, index)

    def _flush_pending(self) -> None:
        """Keep what unfinished items hold before an error ends the stream (C15).

        Contract blocks are closed by the accumulator; an unfinished non-contract item is
        kept as its added form, and collected citations as their provider block. No
        signature is set on an unfinished reasoning item: a replay token over truncated
        reasoning is rejected on replay (bug 24).
        """
        for item in self._items:
            if item.done:
                continue
            if item.type not in _CONTRACT_ITEMS or item.server:
                self.acc.provider_block(item.type, item.data)
            elif item.type == MESSAGE:
                self._flush_annotations(item)

    def _refusal_text(self) -> str:
        texts = []
        for item in self._items:
            text = "".join("".join(t) for (kind, _), t in item.parts.items() if kind == REFUSAL)
            if text:
                texts.append(text)
        return "\n".join(texts)

    def _terminal(self, etype: str, payload: dict[str, Any]) -> None:
        kind = _TERMINAL_EVENTS[etype]
        response = as_dict(payload.get("response"))
        self._declared_tools(response.get("tools"))
        self.acc.start(model=as_str(response.get("model")), response_id=as_str(response.get("id")))
        self._usage(response.get("usage"))
        if kind in ("completed", "incomplete"):
            self._backfill(response.get("output"))
            if self.acc.terminated:
                return
        self._flush_pending()
        # The raw value of specs/stop_reasons.yaml: the status, with the incomplete
        # reason after a slash (cases 28, 29); the event names the status when the
        # response object lacks one.
        status = as_str(response.get("status")) or kind
        reason = as_str(as_dict(response.get("incomplete_details")).get("reason"))
        raw = f"{status}/{reason}" if reason else status
        mapping = map_stop_reason(self.protocol, raw, has_tool_calls=self.acc.has_tool_calls)
        if kind == "failed" or mapping.reason in ("error", "aborted"):
            error = as_dict(response.get("error"))
            message = as_str(error.get("message"))
            if message is None:
                fallback = mapping.error_message if mapping.reason == "error" else None
                message = fallback or "Response failed"
                code = as_str(error.get("code"))
                if code is not None:
                    message = f"{message}: {code}"
            # The error object goes to stream_harness.errors as the body, so that its code
            # (rate_limit_exceeded, server_error, invalid_prompt, ...) decides the
            # classification (case 32).
            self.acc.fail(
                message,
                body={"error": error} if error else None,
                provider_stop_reason=raw,
                origin="provider",  # the provider's own failed/incomplete status
            )
            return
        refusal = self._refusal_text()
        if refusal:
            # As in openai-completions: the refusal is the text and the error message;
            # the status stays the provider's stop reason.
            self.acc.finish(
                "error",
                provider_stop_reason=raw,
                error_message=refusal,
                error=ErrorInfo(kind="fatal", provider_type="refusal", retryable=False),
            )
            return
        self.acc.finish(mapping.reason, provider_stop_reason=raw)

    def _error_event(self, etype: str, payload: dict[str, Any]) -> None:
        """Both shapes of the ``error`` event (case 30): top-level and nested ``error{}``.

        The first error ends the stream; the ``response.failed`` that usually follows it
        (PF 5.2) is dropped as an event after the terminal one (case 61).
        """
        nested = payload.get("error")
        if isinstance(nested, dict):
            error = dict(nested)
        else:
            error = {k: payload[k] for k in ("code", "message", "param") if k in payload}
        message = as_str(error.get("message"))
        if message is None:
            code = as_str(error.get("code")) or as_str(error.get("type"))
            message = f"error event: {code}" if code else "error event without a message"
        self._flush_pending()
        self.acc.fail(message, body={"error": error})

    def on_eof(self) -> None:
        self._flush_pending()
        self.acc.fail(NO_TERMINAL_EVENT)


Normalizer = OpenAIResponsesNormalizer

PROTOCOL = register(
    Protocol(
        id="openai-responses",
        title="OpenAI Responses",
        framing=SSE,
        translator=OpenAIResponsesNormalizer,
        detect=Detect(
            url=(r"/responses(?:$|[?#/])",),
            body=(rb"\"type\"\s*:\s*\"response\.(?:created|in_progress|output)",),
        ),
        stop_reasons="openai-responses",
        order=30,
    )
)
