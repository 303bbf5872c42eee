"""The openai-responses normalizer on every recorded Responses stream of the corpus.

Three oracles, each independent of the normalizer's code:

- the wire's own final answer: ``response.completed`` carries the whole response, so the
  message we assemble from the deltas must agree with what its ``output`` and ``usage``
  say (derived here by :func:`official`, written from the API reference, PF 2.3);
- the openai SDK's ``client.responses.stream(...).get_final_response()`` (ecosystem.md
  section 4), fed the recorded bytes through an httpx MockTransport, read the same way;
- the contract checker (split invariance, any chunking giving the same events, is
  test_corpus_split_invariance.py's, for every protocol).

Every disagreement is pinned in KNOWN_DIFFERENCES with its reason, and listed in
specs/known-differences.md (section openai-responses), so a change in either direction
fails here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from cassette_checks import ends_done, events_of, replaying_client
from conftest import no_corpus_reason
from corpus_streams import corpus_params, corpus_streams
from stream_harness.contract.events import (
    AssistantMessage,
    DoneEvent,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from stream_harness.recordings.cassette import Interaction, load_cassette

pytestmark = pytest.mark.corpus
PROTOCOL = "openai-responses"
CORPUS = [(r.name, r.interaction) for r in corpus_streams(PROTOCOL)]
PARAMS = corpus_params(corpus_streams(PROTOCOL))


def _name(inter: Interaction) -> str:
    return next(name for name, i in CORPUS if i is inter)


def _completed_payload(body: bytes) -> dict[str, Any] | None:
    """The response object of the ``response.completed`` event, read straight off the SSE."""
    for line in body.decode("utf-8").splitlines():
        if line.startswith("data:") and '"response.completed"' in line:
            payload = json.loads(line[5:])
            if payload.get("type") == "response.completed":
                response: dict[str, Any] = payload["response"]
                return response
    return None


@pytest.mark.usefixtures("corpus_dir")  # skips without a corpus
def test_the_corpus_has_responses_streams() -> None:
    # corpus-visible-notes.md: 11 files, 19 streaming interactions.
    assert len(CORPUS) == 19


# -- every stream ends as its wire says -------------------------------------------------------


@pytest.mark.parametrize("inter", PARAMS)
def test_every_corpus_stream_ends_in_done_and_keeps_the_contract(inter: Interaction) -> None:
    # All 19 recorded streams end with response.completed (checked by the next test's
    # oracle), so none may end in error.
    ends_done(events_of(PROTOCOL, [inter.response.body]))


# -- oracle 1: the response.completed payload ------------------------------------------------


def official(response: dict[str, Any]) -> dict[str, Any]:
    """What the final response says, in the contract's terms (specs/protocols/openai-responses.md).

    Written from the Responses API reference, not from the normalizer: a message is its
    output_text (and refusal) parts joined; a reasoning item is its summary texts and
    reasoning_text parts joined by a blank line; a function call is call_id, name and the
    parsed arguments; a custom tool call's input is {"input": text}; any other item is a
    provider block.
    """
    blocks: list[tuple[Any, ...]] = []
    provider: list[tuple[str, Any]] = []
    item_ids: list[str | None] = []
    for item in response.get("output") or []:
        itype = item.get("type")
        if itype == "message":
            text = ""
            for i, part in enumerate(item.get("content") or []):
                if part.get("type") == "output_text":
                    text += part.get("text") or ""
                    if part.get("annotations"):
                        provider.append(("output_text.annotations", (item.get("id"), i)))
                elif part.get("type") == "refusal":
                    text += part.get("refusal") or ""
            if text:
                blocks.append(("text", text))
                item_ids.append(item.get("id"))
        elif itype == "reasoning":
            texts = [s.get("text") or "" for s in item.get("summary") or []]
            texts += [
                c.get("text") or ""
                for c in item.get("content") or []
                if c.get("type") == "reasoning_text"
            ]
            blocks.append(("thinking", "\n\n".join(t for t in texts if t)))
            item_ids.append(item.get("id"))
        elif itype == "function_call":
            arguments = json.loads(item.get("arguments") or "{}")
            blocks.append(("tool_call", item.get("call_id"), item.get("name"), arguments))
            item_ids.append(item.get("id"))
        elif itype == "custom_tool_call":
            blocks.append(
                ("tool_call", item.get("call_id"), item.get("name"), {"input": item.get("input")})
            )
            item_ids.append(item.get("id"))
        else:
            provider.append((itype, item.get("id")))
    u = response.get("usage") or {}
    details = u.get("input_tokens_details") or {}
    cached = details.get("cached_tokens") or 0
    written = details.get("cache_write_tokens") or 0
    has_calls = any(b[0] == "tool_call" for b in blocks)
    return {
        "blocks": blocks,
        "item_ids": item_ids,
        "provider": provider,
        "usage": (
            u["input_tokens"] - cached - written,
            u["output_tokens"],
            cached,
            written,
            u["total_tokens"],
        ),
        "stop": "tool_use" if has_calls and response["status"] == "completed" else "stop",
        "model": response.get("model"),
        "id": response.get("id"),
        "encrypted": {
            item.get("id"): item.get("encrypted_content")
            for item in response.get("output") or []
            if item.get("type") == "reasoning"
        },
    }


def ours(message: AssistantMessage) -> dict[str, Any]:
    blocks: list[tuple[Any, ...]] = []
    item_ids: list[str | None] = []
    encrypted: dict[Any, Any] = {}
    for block in message.content:
        signature = json.loads(block.signature) if block.signature else {}
        item_ids.append(signature.get("id"))
        if isinstance(block, TextBlock):
            blocks.append(("text", block.content))
        elif isinstance(block, ThinkingBlock):
            blocks.append(("thinking", block.content))
            encrypted[signature.get("id")] = signature.get("encrypted_content")
        elif isinstance(block, ToolCall):
            blocks.append(("tool_call", block.id, block.name, block.arguments))
    provider = [
        (p.provider_type, (p.data["item_id"], p.data["content_index"]))
        if p.provider_type == "output_text.annotations"
        else (p.provider_type, p.data.get("id"))
        for p in message.provider_blocks
    ]
    u = message.usage
    return {
        "blocks": blocks,
        "item_ids": item_ids,
        "provider": provider,
        "usage": (u.input, u.output, u.cache_read, u.cache_write, u.total),
        "stop": message.stop_reason,
        "model": message.model,
        "id": message.response_id,
        "encrypted": encrypted,
    }


def disagreements(expected: dict[str, Any], got: dict[str, Any]) -> list[str]:
    return [key for key in expected if expected[key] != got[key]]


# Each entry: (corpus file#interaction) -> the keys that differ, and why. Mirrored in
# specs/known-differences.md.
KNOWN_DIFFERENCES: dict[str, dict[str, str]] = {
    "openai_responses/pydantic-ai__test_openai_responses_raw_cot_stream_openrouter.yaml#0": {
        "item_ids": "OpenRouter lists the reasoning item in response.completed under another "
        "temporary id (rs_tmp_ku4i7pagjwn) than it streamed (rs_tmp_2kbe7x16sax); the "
        "signature keeps the streamed output_item.done item",
        "encrypted": "follows from the id difference (no encrypted_content on either side)",
    },
    "openai_responses/pydantic-ai__test_openai_responses_model_mcp_list_tools_stream_backfills_missing_results.yaml#0": {
        "provider": "two mcp_list_tools items never get output_item.done; they are backfilled "
        "from response.completed, after the one that did, so provider_blocks are in "
        "completion order (gitmcp, deepwiki, microsoft_learn), not output order",
    },
    "openai_responses/pydantic-ai__test_openai_responses_moderation_stream.yaml#0": {
        "encrypted": "OpenAI re-encrypts reasoning on every read: the encrypted_content of "
        "output_item.done (kept) differs from the one in response.completed",
    },
    "xai_server_tool_calls": {
        "blocks": "xAI's server-side searches come as custom_tool_call items of tools the "
        "response does not declare as the client's; the SDK makes them tool calls, we keep "
        "them as provider blocks",
        "item_ids": "follows: the searches' item ids are on tool calls there, in provider "
        "blocks here",
        "provider": "follows: our provider blocks hold the two searches",
        "stop": "follows: the SDK's message holds tool calls (tool_use), ours the response's "
        "own status (completed -> stop)",
    },
    "openai_responses/pydantic-ai__test_openai_responses_phase_streamed_on_part_start.yaml#0": {
        "encrypted": "as above: output_item.done and response.completed carry different "
        "ciphertexts of the same reasoning item",
    },
}


@pytest.mark.parametrize("inter", PARAMS)
def test_final_message_agrees_with_the_response_completed_payload(inter: Interaction) -> None:
    payload = _completed_payload(inter.response.body)
    assert payload is not None, "every corpus Responses stream has response.completed"
    terminal = events_of(PROTOCOL, [inter.response.body])[-1]
    assert isinstance(terminal, DoneEvent)
    expected, got = official(payload), ours(terminal.message)
    known = KNOWN_DIFFERENCES.get(_name(inter), {})
    assert disagreements(expected, got) == list(known), {
        key: (expected[key], got[key]) for key in disagreements(expected, got)
    }


def test_the_mcp_backfill_keeps_every_item_once() -> None:
    # The one provider-block difference is order only: the same items, none lost or doubled.
    name = "openai_responses/pydantic-ai__test_openai_responses_model_mcp_list_tools_stream_backfills_missing_results.yaml#0"
    inter = dict(CORPUS).get(name)
    if inter is None:
        pytest.skip(no_corpus_reason())
    payload = _completed_payload(inter.response.body)
    assert payload is not None
    terminal = events_of(PROTOCOL, [inter.response.body])[-1]
    got = ours(terminal.message)["provider"]
    expected = official(payload)["provider"]
    assert sorted(got) == sorted(expected) and got != expected
    assert [p.data for p in terminal.message.provider_blocks] == [
        payload["output"][2],
        payload["output"][0],
        payload["output"][1],
    ]


# -- oracle 2: the openai SDK ------------------------------------------------------------------


def _sdk_final_response(body: bytes) -> dict[str, Any]:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(
        api_key="sk-test",
        base_url="http://oracle.invalid/v1",
        max_retries=0,
        http_client=replaying_client(httpx, body),
    )
    with client.responses.stream(model="oracle", input="hi") as stream:
        for _ in stream:
            pass
        final = stream.get_final_response()
    dumped: dict[str, Any] = final.model_dump(mode="json", exclude_unset=True)
    return dumped


def _bundled_completed() -> list[tuple[str, bytes]]:
    root = Path(__file__).resolve().parents[2] / "cassettes" / PROTOCOL
    out = []
    for path in sorted(root.glob("*.yaml")):
        body = load_cassette(path).interactions[0].response.body
        if _completed_payload(body) is not None:
            out.append((path.stem, body))
    return out


SDK_BODIES = [(name, inter.response.body) for name, inter in CORPUS] + _bundled_completed()


# Bundled cassettes the SDK cannot accumulate at all (specs/known-differences.md).
SDK_CANNOT_ACCUMULATE: dict[str, str] = {
    # Copilot gives every event of an item another id; the SDK checks identity.
    "copilot_rotating_item_ids": "Completed output item identity changed",
}


@pytest.mark.parametrize(("name", "body"), SDK_BODIES, ids=[n for n, _ in SDK_BODIES])
def test_final_message_agrees_with_the_openai_sdk(name: str, body: bytes) -> None:
    if name in SDK_CANNOT_ACCUMULATE:
        with pytest.raises(Exception, match=SDK_CANNOT_ACCUMULATE[name]):
            _sdk_final_response(body)
        return
    sdk = official(_sdk_final_response(body))
    terminal = events_of(PROTOCOL, [body])[-1]
    got = ours(terminal.message)
    if terminal.type == "error":
        # The bundled refusal ends in error by decision (specs/known-differences.md); the
        # SDK returns the completed response. The content must still agree.
        got["stop"] = sdk["stop"]
    known = KNOWN_DIFFERENCES.get(name, {})
    assert disagreements(sdk, got) == list(known), {
        key: (sdk[key], got[key]) for key in disagreements(sdk, got)
    }


def _bundled_without_completed() -> list[tuple[str, bytes]]:
    root = Path(__file__).resolve().parents[2] / "cassettes" / PROTOCOL
    out = []
    for path in sorted(root.glob("*.yaml")):
        inter = load_cassette(path).interactions[0]
        if inter.response.status < 400 and _completed_payload(inter.response.body) is None:
            out.append((path.stem, inter.response.body))
    return out


SDK_RAISES = _bundled_without_completed()


@pytest.mark.parametrize(("name", "body"), SDK_RAISES, ids=[n for n, _ in SDK_RAISES])
def test_the_sdk_has_no_final_response_where_we_end_in_a_terminal_event(
    name: str, body: bytes
) -> None:
    # specs/known-differences.md, openai-responses 5: the SDK raises APIError on an error
    # event of the nested shape (its data has "error"), and get_final_response() raises
    # RuntimeError for every stream without response.completed (incomplete, failed, the
    # top-level error shape, EOF). We end each of them in one terminal event instead.
    openai = pytest.importorskip("openai")
    with pytest.raises((RuntimeError, openai.APIError)) as raised:
        _sdk_final_response(body)
    if name == "error_event_context_length_exceeded":
        assert isinstance(raised.value, openai.APIError)
    else:
        assert "response.completed" in str(raised.value)
    assert events_of(PROTOCOL, [body])[-1].type in ("done", "error")
