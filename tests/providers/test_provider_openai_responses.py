"""The openai-responses reference normalizer on hand-written bodies and bundled cassettes.

Unit tests cite the conformance case (provider-facts.md section 7, "case N"), the fact
(provider-facts.md "PF x.y") or the ecosystem bug (ecosystem.md section 6, "bug N") they
pin. Expected values are read off the wire text in each test, never produced by running
the normalizer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cassette_checks import Translate, terminal, text_block_opening
from stream_harness.contract.events import (
    DoneEvent,
    ProviderBlock,
    TextBlock,
    TextDeltaEvent,
    ThinkingBlock,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    Usage,
)
from stream_harness.providers.openai_responses import (
    NO_TERMINAL_EVENT,
    Normalizer,
)

PROTOCOL = "openai-responses"


# -- helpers: the wire, written as OpenAI sends it (PF 2.3) -------------------------------


def ev(etype: str, **fields: Any) -> str:
    """One SSE event; ``event:`` repeats the JSON type, as OpenAI sends it."""
    return f"event: {etype}\ndata: {json.dumps({'type': etype, **fields})}\n\n"


def response(status: str = "in_progress", **extra: Any) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "status": status, "model": "gpt-test",
            "output": [], "usage": None, "error": None, "incomplete_details": None, **extra}  # fmt: skip


CREATED = ev("response.created", response=response()) + ev(
    "response.in_progress", response=response()
)


def usage(inp: int = 10, out: int = 5, cached: int = 0, total: int | None = None) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": inp + out if total is None else total,
    }


def completed(
    output: list[Any] | None = None, u: dict[str, Any] | None = None, **extra: Any
) -> str:
    return ev(
        "response.completed",
        response=response("completed", output=output or [], usage=u or usage(), **extra),
    )


def added(item: dict[str, Any], index: int = 0) -> str:
    return ev("response.output_item.added", output_index=index, item=item)


def item_done(item: dict[str, Any], index: int = 0) -> str:
    return ev("response.output_item.done", output_index=index, item=item)


def msg(item_id: str = "msg_1", status: str = "in_progress", content: list[Any] | None = None,
        **extra: Any) -> dict[str, Any]:  # fmt: skip
    return {"id": item_id, "type": "message", "status": status, "content": content or [],
            "role": "assistant", **extra}  # fmt: skip


def out_text(t: str, annotations: list[Any] | None = None) -> dict[str, Any]:
    return {"type": "output_text", "text": t, "annotations": annotations or [], "logprobs": []}


def text_delta(d: str, item_id: str = "msg_1", index: int = 0, ci: int = 0) -> str:
    return ev("response.output_text.delta", item_id=item_id, output_index=index, content_index=ci,
              delta=d)  # fmt: skip


def text_done(t: str, item_id: str = "msg_1", index: int = 0, ci: int = 0) -> str:
    return ev("response.output_text.done", item_id=item_id, output_index=index, content_index=ci,
              text=t)  # fmt: skip


def message(parts: list[str], item_id: str = "msg_1", index: int = 0, **extra: Any) -> str:
    """A whole message item: added, deltas, done events, as OpenAI streams it."""
    full = "".join(parts)
    return (
        added(msg(item_id, **extra), index)
        + ev(
            "response.content_part.added",
            item_id=item_id,
            output_index=index,
            content_index=0,
            part=out_text(""),
        )
        + "".join(text_delta(p, item_id, index) for p in parts)
        + text_done(full, item_id, index)
        + ev(
            "response.content_part.done",
            item_id=item_id,
            output_index=index,
            content_index=0,
            part=out_text(full),
        )
        + item_done(msg(item_id, "completed", [out_text(full)], **extra), index)
    )


def fc(item_id: str = "fc_1", call_id: str | None = "call_1", name: str | None = "get_weather",
       arguments: str = "", status: str = "in_progress", **extra: Any) -> dict[str, Any]:  # fmt: skip
    item: dict[str, Any] = {"id": item_id, "type": "function_call", "status": status,
                            "arguments": arguments, **extra}  # fmt: skip
    if call_id is not None:
        item["call_id"] = call_id
    if name is not None:
        item["name"] = name
    return item


def args_delta(d: str, item_id: str = "fc_1", index: int = 0) -> str:
    return ev(
        "response.function_call_arguments.delta", item_id=item_id, output_index=index, delta=d
    )


def args_done(a: str, item_id: str = "fc_1", index: int = 0) -> str:
    return ev("response.function_call_arguments.done", item_id=item_id, output_index=index,
              arguments=a)  # fmt: skip


def reasoning(item_id: str = "rs_1", **extra: Any) -> dict[str, Any]:
    return {"id": item_id, "type": "reasoning", "summary": [], **extra}


def summary_delta(d: str, s: int = 0, item_id: str = "rs_1", index: int = 0) -> str:
    return ev("response.reasoning_summary_text.delta", item_id=item_id, output_index=index,
              summary_index=s, delta=d)  # fmt: skip


TRANSLATE = Translate(PROTOCOL)
run = TRANSLATE.run
done = TRANSLATE.done
failed = TRANSLATE.failed


# -- text ----------------------------------------------------------------------------------


def test_plain_text_exact_events() -> None:
    body = CREATED + message(["Hel", "lo"]) + completed([msg("msg_1", "completed", [out_text("Hello")])],
                                                       usage(12, 3))  # fmt: skip
    events = run(body)
    sig = '{"v":1,"id":"msg_1"}'
    assert events[:5] == text_block_opening("Hel", "lo", signature=sig)
    t = terminal(events)
    assert isinstance(t, DoneEvent) and len(events) == 6
    assert t.reason == "stop"
    m = t.message
    assert m.content == [TextBlock(content="Hello", signature=sig)]
    assert (m.model, m.response_id, m.provider_stop_reason) == ("gpt-test", "resp_1", "completed")
    assert m.usage == Usage(input=12, output=3, total=15)


def test_phase_is_kept_in_the_text_signature() -> None:
    # pi's encodeTextSignatureV1 {"v":1,"id","phase"}: replay needs the phase (corpus).
    body = CREATED + message(["Let me check."], phase="commentary") + completed()
    assert done(body).message.content == [
        TextBlock(content="Let me check.", signature='{"v":1,"id":"msg_1","phase":"commentary"}')
    ]


def test_text_done_without_deltas_gives_the_text() -> None:
    body = (
        CREATED
        + added(msg())
        + text_done("Whole")
        + item_done(msg(status="completed"))
        + completed()
    )
    events = run(body)
    assert TextDeltaEvent(content_index=0, delta="Whole") in events
    assert done(body).message.content[0] == TextBlock(
        content="Whole", signature='{"v":1,"id":"msg_1"}'
    )


def test_output_item_done_alone_gives_the_text() -> None:
    body = (
        CREATED + item_done(msg(status="completed", content=[out_text("From done")])) + completed()
    )
    assert done(body).message.content == [
        TextBlock(content="From done", signature='{"v":1,"id":"msg_1"}')
    ]


def test_a_final_copy_that_extends_the_deltas_adds_the_suffix() -> None:
    body = CREATED + added(msg()) + text_delta("Hello") + text_done("Hello world") + completed()
    events = run(body)
    assert [e.delta for e in events if isinstance(e, TextDeltaEvent)] == ["Hello", " world"]
    assert terminal(events).message.content[0].content == "Hello world"  # type: ignore[union-attr]


def test_a_final_copy_that_contradicts_the_deltas_is_ignored() -> None:
    body = CREATED + added(msg()) + text_delta("Hello") + text_done("Goodbye") + completed()
    assert done(body).message.content[0] == TextBlock(content="Hello")


def test_a_delta_after_the_item_is_done_is_dropped() -> None:
    body = (CREATED + added(msg()) + text_delta("A") + item_done(msg(status="completed"))
            + text_delta("B") + completed())  # fmt: skip
    m = done(body).message
    assert m.content == [TextBlock(content="A", signature='{"v":1,"id":"msg_1"}')]


def test_deltas_without_an_added_item_open_the_block() -> None:
    # A server that skips output_item.added still gets its text (seed 002's mapping needs
    # added; we do not).
    body = CREATED + text_delta("No ") + text_delta("added") + completed()
    assert done(body).message.content == [TextBlock(content="No added")]


def test_empty_deltas_never_open_a_block() -> None:
    body = (
        CREATED + added(msg()) + text_delta("") + item_done(msg(status="completed")) + completed()
    )
    assert done(body).message.content == []


def test_annotations_are_kept_as_a_provider_block_after_the_text() -> None:
    cite = {"type": "url_citation", "start_index": 0, "end_index": 4, "url": "https://a.example",
            "title": "A"}  # fmt: skip
    body = (
        CREATED + added(msg()) + text_delta("Text")
        + ev("response.output_text.annotation.added", item_id="msg_1", output_index=0,
             content_index=0, annotation_index=0, annotation=cite)
        + text_done("Text") + completed()
    )  # fmt: skip
    m = done(body).message
    assert m.provider_blocks == [
        ProviderBlock(provider_type="output_text.annotations", position=1,
                      data={"item_id": "msg_1", "content_index": 0, "annotations": [cite]})
    ]  # fmt: skip


def test_the_final_items_annotations_win_over_the_streamed_ones() -> None:
    a = {"type": "url_citation", "url": "https://a.example"}
    b = {"type": "url_citation", "url": "https://b.example"}
    body = (
        CREATED + added(msg()) + text_delta("T")
        + ev("response.output_text.annotation.added", item_id="msg_1", output_index=0,
             content_index=0, annotation_index=0, annotation=a)
        + item_done(msg(status="completed", content=[out_text("T", [a, b])])) + completed()
    )  # fmt: skip
    assert done(body).message.provider_blocks[0].data["annotations"] == [a, b]


# -- refusal ---------------------------------------------------------------------------------


def test_refusal_is_the_text_and_the_error_message() -> None:
    # As in openai-completions: a refusal cannot be used as an answer, so error, with the
    # status as the provider's stop reason (specs/contract.md, The message).
    refusal_part = {"type": "refusal", "refusal": ""}
    body = (
        CREATED + added(msg())
        + ev("response.content_part.added", item_id="msg_1", output_index=0, content_index=0,
             part=refusal_part)
        + ev("response.refusal.delta", item_id="msg_1", output_index=0, content_index=0,
             delta="I can't")
        + ev("response.refusal.delta", item_id="msg_1", output_index=0, content_index=0,
             delta=" help.")
        + ev("response.refusal.done", item_id="msg_1", output_index=0, content_index=0,
             refusal="I can't help.")
        + item_done(msg(status="completed", content=[{"type": "refusal", "refusal": "I can't help."}]))
        + completed()
    )  # fmt: skip
    t = failed(body)
    assert t.error_message == "I can't help."
    assert t.message.content == [
        TextBlock(content="I can't help.", signature='{"v":1,"id":"msg_1"}')
    ]
    assert t.message.provider_stop_reason == "completed"
    assert t.message.usage == Usage(input=10, output=5, total=15)
    assert t.error is not None and t.error.provider_type == "refusal" and not t.error.retryable


def test_refusal_only_in_the_done_item_still_ends_in_error() -> None:
    part = {"type": "refusal", "refusal": "No."}
    body = CREATED + item_done(msg(status="completed", content=[part])) + completed()
    t = failed(body)
    assert t.error_message == "No." and t.message.content[0] == TextBlock(
        content="No.", signature='{"v":1,"id":"msg_1"}'
    )


# -- reasoning ---------------------------------------------------------------------------------


def test_case33_summary_parts_are_one_thinking_block_and_the_done_item_is_the_signature() -> None:
    final = {"id": "rs_1", "type": "reasoning", "encrypted_content": "gAAA-done",
             "summary": [{"type": "summary_text", "text": "**A**"},
                         {"type": "summary_text", "text": "B"}]}  # fmt: skip
    body = (
        CREATED + added(reasoning(encrypted_content="gAAA-added"))
        + ev("response.reasoning_summary_part.added", item_id="rs_1", output_index=0,
             summary_index=0, part={"type": "summary_text", "text": ""})
        + summary_delta("**A") + summary_delta("**")
        + ev("response.reasoning_summary_part.done", item_id="rs_1", output_index=0,
             summary_index=0, part={"type": "summary_text", "text": "**A**"})
        + ev("response.reasoning_summary_part.added", item_id="rs_1", output_index=0,
             summary_index=1, part={"type": "summary_text", "text": ""})
        + summary_delta("B", s=1)
        + item_done(final)
        + message(["Answer"], index=1)
        + completed()
    )  # fmt: skip
    events = run(body)
    assert events[1:6] == [
        ThinkingStartEvent(content_index=0),
        ThinkingDeltaEvent(content_index=0, delta="**A"),
        ThinkingDeltaEvent(content_index=0, delta="**"),
        ThinkingDeltaEvent(content_index=0, delta="\n\n"),  # pi's part separator
        ThinkingDeltaEvent(content_index=0, delta="B"),
    ]
    # The signature is the whole done item as compact JSON, with the *done* ciphertext.
    signature = ('{"id":"rs_1","type":"reasoning","encrypted_content":"gAAA-done","summary":'
                 '[{"type":"summary_text","text":"**A**"},{"type":"summary_text","text":"B"}]}')  # fmt: skip
    assert events[6] == ThinkingEndEvent(content_index=0, content="**A**\n\nB", signature=signature)
    m = terminal(events).message
    assert m.content[0] == ThinkingBlock(content="**A**\n\nB", signature=signature)
    assert json.loads(signature)["encrypted_content"] == "gAAA-done"


def test_encrypted_reasoning_without_summary_is_an_empty_thinking_block() -> None:
    # Corpus moderation_stream: summary [] and encrypted_content only.
    final = reasoning(encrypted_content="gAAA-x")
    body = CREATED + added(reasoning(encrypted_content="gAAA-y")) + item_done(final) + completed()
    m = done(body).message
    assert m.content == [
        ThinkingBlock(
            content="",
            signature='{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAA-x"}',
        )
    ]


def test_reasoning_text_deltas_are_thinking() -> None:
    # DeepSeek and OpenRouter stream raw chain of thought as reasoning_text (corpus).
    body = (
        CREATED + added(reasoning())
        + ev("response.reasoning_text.delta", item_id="rs_1", output_index=0, content_index=0,
             delta="We need")
        + ev("response.reasoning_text.delta", item_id="rs_1", output_index=0, content_index=0,
             delta=" Paris.")
        + ev("response.reasoning_text.done", item_id="rs_1", output_index=0, content_index=0,
             text="We need Paris.")
        + completed()
    )  # fmt: skip
    m = done(body).message
    # No output_item.done came, and completed lists no output: no signature.
    assert m.content == [ThinkingBlock(content="We need Paris.")]


def test_summary_text_done_without_deltas_gives_the_thinking() -> None:
    body = (CREATED + added(reasoning())
            + ev("response.reasoning_summary_text.done", item_id="rs_1", output_index=0,
                 summary_index=0, text="Done only")
            + completed())  # fmt: skip
    assert done(body).message.content[0].content == "Done only"  # type: ignore[union-attr]


def test_reasoning_interleaved_with_the_message_keeps_output_order() -> None:
    # OpenRouter's order (corpus raw_cot_stream_openrouter): the reasoning item ends after
    # the message.
    body = (
        CREATED + added(reasoning("rs_1"), 0)
        + ev("response.reasoning_text.delta", item_id="rs_1", output_index=0, content_index=0,
             delta="think")
        + message(["4"], "msg_1", 1)
        + item_done(reasoning("rs_1", content=[{"type": "reasoning_text", "text": "think"}]), 0)
        + completed()
    )  # fmt: skip
    m = done(body).message
    assert [b.type for b in m.content] == ["thinking", "text"]
    assert m.content[0].content == "think"  # type: ignore[union-attr]


def test_bug24_reasoning_cut_by_eof_gets_no_signature() -> None:
    body = CREATED + added(reasoning(encrypted_content="gAAA")) + summary_delta("half")
    t = failed(body)
    assert t.message.content == [ThinkingBlock(content="half")]


# -- tool calls --------------------------------------------------------------------------------


def test_case29_function_call_exact_events_and_tool_use() -> None:
    body = (CREATED + added(fc()) + args_delta('{"city":') + args_delta('"Paris"}')
            + args_done('{"city":"Paris"}') + item_done(fc(arguments='{"city":"Paris"}', status="completed"))
            + completed())  # fmt: skip
    events = run(body)
    call = ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"},
                    signature='{"v":1,"id":"fc_1"}')  # fmt: skip
    assert events[1:5] == [
        ToolCallStartEvent(content_index=0, id="call_1", name="get_weather"),
        ToolCallDeltaEvent(content_index=0, delta='{"city":', arguments={}),
        ToolCallDeltaEvent(content_index=0, delta='"Paris"}', arguments={"city": "Paris"}),
        ToolCallEndEvent(
            content_index=0, tool_call=call, raw_arguments='{"city":"Paris"}', strict=True
        ),
    ]
    t = terminal(events)
    assert isinstance(t, DoneEvent) and t.reason == "tool_use"
    assert t.message.provider_stop_reason == "completed" and t.message.content == [call]


def test_arguments_only_in_function_call_arguments_done() -> None:
    # PF 2.3 / seed 002: done-only providers still populate the arguments.
    body = (
        CREATED
        + added(fc())
        + args_done('{"q":1}')
        + item_done(fc(status="completed"))
        + completed()
    )
    events = run(body)
    assert [e.delta for e in events if isinstance(e, ToolCallDeltaEvent)] == ['{"q":1}']
    assert done(body).message.content[0].arguments == {"q": 1}  # type: ignore[union-attr]


def test_arguments_only_in_output_item_done() -> None:
    body = (
        CREATED + added(fc()) + item_done(fc(arguments='{"q":2}', status="completed")) + completed()
    )
    assert done(body).message.content[0].arguments == {"q": 2}  # type: ignore[union-attr]


def test_done_arguments_extending_the_deltas_add_the_suffix() -> None:
    body = CREATED + added(fc()) + args_delta('{"a":') + args_done('{"a":1}') + completed()
    events = run(body)
    assert [e.delta for e in events if isinstance(e, ToolCallDeltaEvent)] == ['{"a":', "1}"]


def test_done_arguments_contradicting_the_deltas_are_ignored() -> None:
    body = CREATED + added(fc()) + args_delta('{"a":1}') + args_done('{"b":2}') + completed()
    assert done(body).message.content[0].arguments == {"a": 1}  # type: ignore[union-attr]


def test_empty_arguments_are_an_empty_object() -> None:
    # Corpus reused_tool_call_ids: parameterless tools get "{}"; "" must give {} too (bug 10).
    body = CREATED + added(fc()) + item_done(fc(status="completed")) + completed()
    assert done(body).message.content[0].arguments == {}  # type: ignore[union-attr]


def test_parallel_calls_interleaved_by_item_id() -> None:
    body = (
        CREATED + added(fc("fc_1", "call_a", "a"), 0) + added(fc("fc_2", "call_b", "b"), 1)
        + args_delta('{"x":', "fc_1", 0) + args_delta('{"y":', "fc_2", 1)
        + args_delta("1}", "fc_1", 0) + args_delta("2}", "fc_2", 1)
        + item_done(fc("fc_1", "call_a", "a", '{"x":1}', "completed"), 0)
        + item_done(fc("fc_2", "call_b", "b", '{"y":2}', "completed"), 1)
        + completed()
    )  # fmt: skip
    m = done(body).message
    assert [(c.id, c.name, c.arguments) for c in m.content] == [  # type: ignore[union-attr]
        ("call_a", "a", {"x": 1}),
        ("call_b", "b", {"y": 2}),
    ]


def test_a_call_id_reused_within_one_response_gets_the_item_id() -> None:
    # Contract C10 (unique ids); bedrock-mantle numbers calls call_0, call_1 (corpus
    # reused_tool_call_ids), so a repeat is plausible; pi's "<call_id>|<item_id>" form.
    body = (
        CREATED + added(fc("fc_1", "call_0"), 0) + item_done(fc("fc_1", "call_0", status="completed"), 0)
        + added(fc("fc_2", "call_0"), 1) + item_done(fc("fc_2", "call_0", status="completed"), 1)
        + completed()
    )  # fmt: skip
    assert [c.id for c in done(body).message.content] == ["call_0", "call_0|fc_2"]  # type: ignore[union-attr]


def test_call_id_and_name_arriving_only_in_the_done_item() -> None:
    body = (CREATED + added(fc(call_id=None, name=None)) + args_delta("{}")
            + item_done(fc(call_id="call_late", name="late", arguments="{}", status="completed"))
            + completed())  # fmt: skip
    events = run(body)
    assert events[1] == ToolCallStartEvent(content_index=0, id=None, name=None)
    call = terminal(events).message.content[0]
    assert isinstance(call, ToolCall) and (call.id, call.name) == ("call_late", "late")


def test_a_call_without_call_id_uses_its_item_id() -> None:
    body = CREATED + item_done(fc(call_id=None, arguments="{}", status="completed")) + completed()
    assert done(body).message.content[0].id == "fc_1"  # type: ignore[union-attr]


def test_a_tool_search_namespace_is_kept_in_the_signature() -> None:
    # Corpus tool_search_streaming: function_call items carry "namespace".
    item = fc(arguments="{}", status="completed", namespace="fx")
    body = CREATED + added(fc(namespace="fx")) + item_done(item) + completed()
    call = done(body).message.content[0]
    assert call.signature == '{"v":1,"id":"fc_1","namespace":"fx"}'  # type: ignore[union-attr]


def test_custom_tool_call_input_is_streamed_as_the_input_argument() -> None:
    item = {
        "id": "ctc_1",
        "type": "custom_tool_call",
        "call_id": "call_c",
        "name": "exec",
        "input": "",
    }
    body = (
        CREATED + added(item)
        + ev("response.custom_tool_call_input.delta", item_id="ctc_1", output_index=0, delta='print("hi")')
        + ev("response.custom_tool_call_input.delta", item_id="ctc_1", output_index=0, delta="\n")
        + item_done({**item, "input": 'print("hi")\n'})
        + completed()
    )  # fmt: skip
    events = run(body)
    assert [e.delta for e in events if isinstance(e, ToolCallDeltaEvent)] == [
        '{"input":"',
        'print(\\"hi\\")',
        "\\n",
        '"}',
    ]
    t = terminal(events)
    assert t.reason == "tool_use"
    assert t.message.content == [
        ToolCall(id="call_c", name="exec", arguments={"input": 'print("hi")\n'},
                 signature='{"v":1,"id":"ctc_1","type":"custom_tool_call"}')
    ]  # fmt: skip


def test_custom_tool_call_with_input_only_in_done() -> None:
    item = {"id": "ctc_1", "type": "custom_tool_call", "call_id": "call_c", "name": "exec"}
    body = (CREATED + added(item)
            + ev("response.custom_tool_call_input.done", item_id="ctc_1", output_index=0, input="ls")
            + item_done({**item, "input": "ls"}) + completed())  # fmt: skip
    assert done(body).message.content[0].arguments == {"input": "ls"}  # type: ignore[union-attr]


# -- items the contract does not model ------------------------------------------------------


def test_web_search_call_is_a_provider_block_with_its_done_item() -> None:
    ws_added = {"id": "ws_1", "type": "web_search_call", "status": "in_progress"}
    ws_done = {**ws_added, "status": "completed", "action": {"type": "search", "query": "q"}}
    body = (CREATED + added(ws_added)
            + ev("response.web_search_call.searching", item_id="ws_1", output_index=0)
            + item_done(ws_done) + message(["A"], index=1) + completed())  # fmt: skip
    m = done(body).message
    assert m.provider_blocks == [
        ProviderBlock(provider_type="web_search_call", position=0, data=ws_done)
    ]
    assert m.content == [TextBlock(content="A", signature='{"v":1,"id":"msg_1"}')]


def test_items_never_done_are_backfilled_from_response_completed() -> None:
    # Corpus mcp_list_tools_stream_backfills_missing_results: 3 added, 1 done.
    a = {"id": "mcpl_a", "type": "mcp_list_tools", "server_label": "a", "tools": []}
    b = {"id": "mcpl_b", "type": "mcp_list_tools", "server_label": "b", "tools": []}
    b_final = {**b, "tools": [{"name": "t"}]}
    body = (CREATED + added(a, 0) + added(b, 1) + item_done(a, 0)
            + completed([a, b_final]))  # fmt: skip
    m = done(body).message
    assert [(p.provider_type, p.data) for p in m.provider_blocks] == [
        ("mcp_list_tools", a),
        ("mcp_list_tools", b_final),
    ]


def test_output_items_that_were_never_streamed_are_taken_from_response_completed() -> None:
    final_msg = msg("msg_9", "completed", [out_text("only in completed")])
    final_fc = fc("fc_9", "call_9", "f", '{"k":1}', "completed")
    m = done(CREATED + completed([final_msg, final_fc])).message
    assert m.content == [
        TextBlock(content="only in completed", signature='{"v":1,"id":"msg_9"}'),
        ToolCall(id="call_9", name="f", arguments={"k": 1}, signature='{"v":1,"id":"fc_9"}'),
    ]


def test_completed_output_under_other_ids_does_not_duplicate_items() -> None:
    # OpenRouter lists items in response.completed under new rs_tmp_ ids (corpus).
    streamed = reasoning("rs_tmp_a", content=[{"type": "reasoning_text", "text": "x"}])
    listed = {**streamed, "id": "rs_tmp_b"}
    body = CREATED + added(reasoning("rs_tmp_a")) + item_done(streamed) + completed([listed])
    m = done(body).message
    assert len(m.content) == 1 and m.content[0].content == "x"  # type: ignore[union-attr]


def test_unknown_events_and_item_types_are_passed_over_or_kept() -> None:
    odd = {"id": "x_1", "type": "brand_new_call", "payload": 1}
    body = (CREATED + ev("response.brand_new.progress", item_id="x_1") + added(odd)
            + item_done(odd) + message(["ok"], index=1) + completed())  # fmt: skip
    m = done(body).message
    assert m.provider_blocks == [
        ProviderBlock(provider_type="brand_new_call", position=0, data=odd)
    ]
    assert m.content[0].content == "ok"  # type: ignore[union-attr]


# -- stop reasons (specs/stop_reasons.yaml, openai-responses rows) -------------------------


def test_case28_incomplete_max_output_tokens_is_length() -> None:
    body = CREATED + message(["cut"]) + ev(
        "response.incomplete",
        response=response("incomplete", usage=usage(5, 16),
                          incomplete_details={"reason": "max_output_tokens"}),
    )  # fmt: skip
    t = done(body)
    assert t.reason == "length"
    assert t.message.provider_stop_reason == "incomplete/max_output_tokens"
    assert t.message.usage == Usage(input=5, output=16, total=21)


def test_case28_incomplete_content_filter_is_an_error_keeping_the_text() -> None:
    body = (
        CREATED
        + message(["partial"])
        + ev(
            "response.incomplete",
            response=response("incomplete", incomplete_details={"reason": "content_filter"}),
        )
    )
    t = failed(body)
    assert t.error_message == "Response incomplete: content_filter"
    assert t.message.provider_stop_reason == "incomplete/content_filter"
    assert t.message.content[0].content == "partial"  # type: ignore[union-attr]


def test_incomplete_without_a_reason_is_length() -> None:
    body = CREATED + ev("response.incomplete", response=response("incomplete"))
    assert done(body).message.provider_stop_reason == "incomplete"


def test_a_status_without_a_row_is_an_error() -> None:
    t = failed(CREATED + ev("response.completed", response=response("sideways")))
    assert t.error_message == "unrecognized stop reason 'sideways'"


def test_terminal_event_without_a_response_object_uses_its_name() -> None:
    t = done(CREATED + message(["x"]) + ev("response.completed"))
    assert t.message.provider_stop_reason == "completed"


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "retryable"),
    [("rate_limit_exceeded", True), ("server_error", True), ("invalid_prompt", False)],
)
def test_case32_response_failed_classified_by_its_code(code: str, retryable: bool) -> None:
    error = {"code": code, "message": f"Something about {code.split('_')[0]}."}
    body = (
        CREATED
        + message(["kept"])
        + ev("response.failed", response=response("failed", error=error))
    )
    t = failed(body)
    assert t.error_message == error["message"]
    assert t.message.provider_stop_reason == "failed"
    assert t.message.content[0].content == "kept"  # type: ignore[union-attr]
    assert t.error is not None and t.error.code == code and t.error.retryable is retryable


def test_response_failed_without_a_message_names_the_code() -> None:
    body = CREATED + ev(
        "response.failed", response=response("failed", error={"code": "server_error"})
    )
    assert failed(body).error_message == "Response failed: server_error"


def test_case30_error_event_top_level_shape() -> None:
    body = CREATED + message(["Hi"]) + ev("error", code="server_error", message="Boom.", param=None)
    t = failed(body)
    assert t.error_message == "Boom."
    assert t.message.content[0].content == "Hi"  # type: ignore[union-attr]
    assert t.error is not None and t.error.code == "server_error" and t.error.retryable


def test_case30_case31_nested_error_event_context_length_exceeded_is_overflow() -> None:
    # anomalyco/opencode #6071: nested shape at sequence_number 2 (PF 2.3).
    err = {"type": "invalid_request_error", "code": "context_length_exceeded", "param": "input",
           "message": "Your input exceeds the context window of this model. Please adjust your "
                      "input and try again."}  # fmt: skip
    t = failed(CREATED + ev("error", error=err))
    assert t.error_message == err["message"]
    assert t.error is not None and t.error.kind == "overflow" and not t.error.retryable
    assert t.error.code == "context_length_exceeded"


def test_case61_error_event_then_response_failed_ends_at_the_error() -> None:
    # VAI fixture order (PF 5.2): error, then response.failed; the first one wins.
    body = (CREATED + ev("error", code="insufficient_quota", message="You exceeded your quota.")
            + ev("response.failed", response=response("failed", error={"code": "x", "message": "later"})))  # fmt: skip
    events = run(body)
    t = terminal(events)
    assert t.error_message == "You exceeded your quota."  # type: ignore[union-attr]
    assert [e.type for e in events] == ["start", "error"]


def test_error_event_without_a_message() -> None:
    assert (
        failed(CREATED + ev("error", code="server_error")).error_message
        == "error event: server_error"
    )
    assert failed(CREATED + ev("error")).error_message == "error event without a message"


def test_a_bare_error_object_without_type_is_an_error_event() -> None:
    # OpenAI-compatible proxies send {"error": {...}} as data (case 51).
    body = CREATED + 'data: {"error": {"message": "upstream failed", "code": 502}}\n\n'
    assert failed(body).error_message == "upstream failed"


def test_case62_eof_without_a_terminal_event_keeps_the_text() -> None:
    t = failed(CREATED + added(msg()) + text_delta("Once upon"))
    assert t.error_message == NO_TERMINAL_EVENT
    assert t.message.content == [TextBlock(content="Once upon")]


def test_eof_keeps_an_unfinished_provider_item_in_its_added_form() -> None:
    ws = {"id": "ws_1", "type": "web_search_call", "status": "in_progress"}
    t = failed(CREATED + added(ws))
    assert t.message.provider_blocks == [
        ProviderBlock(provider_type="web_search_call", position=0, data=ws)
    ]


def test_empty_body_is_an_error() -> None:
    t = failed(b"")
    assert t.error_message == NO_TERMINAL_EVENT and t.message.content == []


def test_done_sentinel_is_not_a_terminal_event() -> None:
    # OpenRouter appends data: [DONE] after response.completed (corpus); alone it does not
    # end a Responses stream (PF 1.1: Responses has no [DONE]).
    assert failed(CREATED + message(["x"]) + "data: [DONE]\n\n").error_message == NO_TERMINAL_EVENT
    t = done(
        ": OPENROUTER PROCESSING\n\n" + CREATED + message(["x"]) + completed() + "data: [DONE]\n\n"
    )
    assert t.reason == "stop"


def test_data_only_events_dispatch_on_the_json_type() -> None:
    body = (CREATED + message(["x"]) + completed()).replace("event: ", ": was event ")
    assert done(body).message.content[0].content == "x"  # type: ignore[union-attr]


def test_the_event_name_stands_in_for_a_missing_json_type() -> None:
    body = (
        CREATED
        + 'event: response.output_text.delta\ndata: {"item_id": "m", "delta": "z"}\n\n'
        + completed()
    )
    assert done(body).message.content[0].content == "z"  # type: ignore[union-attr]


def test_sequence_numbers_are_not_used_to_reorder() -> None:
    # Decision: arrival order (specs/protocols/openai-responses.md).
    a = ev("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0,
           delta="A", sequence_number=9)  # fmt: skip
    b = ev("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0,
           delta="B", sequence_number=3)  # fmt: skip
    assert done(CREATED + added(msg()) + a + b + completed()).message.content[0].content == "AB"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("[1, 2]", "expected a JSON object, got list"),
        ('{"type": "response.output_item.added", "item": 5}', "'item' is not an object"),
        ('{"type": "response.output_item.done", "item": null}', "'item' is not an object"),
        (
            '{"type": "response.output_text.delta", "item_id": "msg_1", "delta": 5}',
            "'delta' is int",
        ),
        (
            '{"type": "response.function_call_arguments.delta", "item_id": "f"}',
            "'delta' is NoneType",
        ),
        ("{not json", "malformed JSON"),
    ],
)
def test_malformed_events_fail_and_keep_the_text(payload: str, message: str) -> None:
    t = failed(CREATED + added(msg()) + text_delta("kept") + f"data: {payload}\n\n" + completed())
    assert message in t.error_message
    assert t.message.content == [TextBlock(content="kept")]


def test_usage_arithmetic_with_cache_reads() -> None:
    # input_tokens includes cached_tokens; output_tokens includes reasoning (PF 2.3).
    u = {"input_tokens": 2006, "input_tokens_details": {"cached_tokens": 1920},
         "output_tokens": 70, "output_tokens_details": {"reasoning_tokens": 64}, "total_tokens": 2076}  # fmt: skip
    assert done(CREATED + completed(u=u)).message.usage == Usage(
        input=86, output=70, cache_read=1920, cache_write=0, total=2076
    )


def test_usage_arithmetic_with_cache_writes() -> None:
    # Corpus reused_tool_call_ids interaction 2 (bedrock-mantle): 158 in, 43 written, 32 out.
    u = {"input_tokens": 158, "input_tokens_details": {"cache_write_tokens": 43, "cached_tokens": 0},
         "output_tokens": 32, "output_tokens_details": {"reasoning_tokens": 10}, "total_tokens": 190}  # fmt: skip
    assert done(CREATED + completed(u=u)).message.usage == Usage(
        input=115, output=32, cache_read=0, cache_write=43, total=190
    )


def test_usage_values_of_the_wrong_type_are_ignored() -> None:
    u = {
        "input_tokens": "many",
        "input_tokens_details": [],
        "output_tokens": True,
        "total_tokens": None,
    }
    assert done(CREATED + completed(u=u)).message.usage == Usage()


def test_model_and_id_come_from_any_response_object() -> None:
    # The id first seen stays unless a later response object names another; fields a
    # later object lacks are kept.
    body = ev("response.in_progress", response={"id": "resp_x"}) + ev(
        "response.completed", response={"status": "completed", "model": "m-2"}
    )
    m = done(body).message
    assert (m.model, m.response_id) == ("m-2", "resp_x")


def test_an_item_added_without_id_takes_the_id_its_deltas_name() -> None:
    body = (
        CREATED
        + added({"type": "message", "role": "assistant", "content": []})
        + text_delta("one block")
        + item_done(msg(status="completed", content=[out_text("one block")]))
        + completed()
    )
    assert done(body).message.content == [
        TextBlock(content="one block", signature='{"v":1,"id":"msg_1"}')
    ]


def test_a_done_item_whose_id_names_an_item_of_another_type_is_a_new_item() -> None:
    body = (
        CREATED
        + added(msg("x_1"))
        + text_delta("text", "x_1")
        + item_done(fc("x_1", "call_x", "f", "{}", "completed"))
        + completed()
    )
    m = done(body).message
    assert [b.type for b in m.content] == ["text", "tool_call"]


# -- bundled cassettes ---------------------------------------------------------------------


def _bundled(name: str) -> bytes:
    from stream_harness.recordings.cassette import load_cassette

    path = Path(__file__).resolve().parents[2] / "cassettes" / "openai-responses" / f"{name}.yaml"
    return load_cassette(path).interactions[0].response.body


def test_rotating_item_ids_are_one_item_per_output_index() -> None:
    # GitHub Copilot: every event of an item has another item_id. Before issue 14 the
    # text and reasoning came out two or three times.
    norm = Normalizer()
    last = (norm.feed(_bundled("copilot_rotating_item_ids")) + norm.close())[-1]
    assert last.type == "done"
    assert [(b.type, b.content) for b in last.message.content] == [
        ("thinking", "**Checking units**\n\nA kilometre is 1,000 metres."),
        ("text", "There are 1,000 metres in a kilometre."),
    ]
    assert any("item ids change within output item" in w for w in norm.warnings)


def test_server_tool_calls_of_undeclared_tools_are_provider_blocks_and_stop() -> None:
    norm = Normalizer()
    last = (norm.feed(_bundled("xai_server_tool_calls")) + norm.close())[-1]
    assert last.type == "done" and last.reason == "stop"
    assert [b.type for b in last.message.content] == ["text"]
    assert [p.data["name"] for p in last.message.provider_blocks] == [
        "web_search",
        "x_keyword_search",
    ]


def test_a_declared_custom_tool_stays_a_client_call() -> None:
    norm = Normalizer()
    last = (norm.feed(_bundled("custom_tool_call")) + norm.close())[-1]
    assert last.reason == "tool_use"
    assert [b.type for b in last.message.content] == ["tool_call"]
