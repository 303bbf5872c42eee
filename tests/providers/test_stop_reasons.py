"""The stop-reason table (specs/stop_reasons.yaml) and its reader (harness/stream_harness/providers/stop_reasons.py).

Expected values come from two places that the code under test does not produce: the YAML
rows, read here with a plain YAML loader, and ``DECIDED``, the raw values that
/work/shared/research/provider-facts.md section 3.1 lists per provider with the reason the
lead decided for each, typed in by hand as the independent oracle.
"""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_harness.providers import protocols, stop_reasons
from stream_harness.providers.registry import registered
from stream_harness.providers.stop_reasons import (
    StopMapping,
    StopReasonTableError,
    map_stop_reason,
    parse_stop_reason_table,
)

REPO = Path(__file__).resolve().parents[2]
TABLE_PATH = REPO / "specs" / "stop_reasons.yaml"
MD_PATH = REPO / "specs" / "stop_reasons.md"

# The table's sections: the ones the registrations name (two protocols with one stop
# vocabulary share one, as Claude on Vertex shares Anthropic's).
PROTOCOLS = {p.stop_reasons for p in registered()}
assert len(PROTOCOLS) >= 10  # the registry was read

# provider-facts.md 3.1, value by value, with the lead's decision for each.
DECIDED: dict[str, dict[str, str]] = {
    "anthropic-messages": {
        # ANT-PY types/stop_reason.py (7 members)
        "end_turn": "stop",
        "max_tokens": "length",
        "stop_sequence": "stop",
        "tool_use": "tool_use",
        "pause_turn": "stop",
        "refusal": "error",
        "model_context_window_exceeded": "length",
        # also seen
        "compaction": "error",
        "sensitive": "error",
    },
    "openai-completions": {
        # OAI-PY chat_completion_chunk.py
        "stop": "stop",
        "length": "length",
        "tool_calls": "tool_use",
        "content_filter": "error",
        "function_call": "tool_use",
        # compatibles
        "end": "stop",
        "error": "error",
        "network_error": "error",
        "model_context_window_exceeded": "length",
        "sensitive": "error",
        "insufficient_system_resource": "error",
        "model_length": "length",
        "tool_call": "tool_use",
        "eos": "stop",
    },
    "openai-responses": {
        # status (+ incomplete_details.reason)
        "completed": "stop",
        "incomplete/max_output_tokens": "length",
        "incomplete/REASON_MAX_LEN": "length",  # xAI (issue 14)
        "incomplete/content_filter": "error",
        "failed": "error",
        "cancelled": "error",
        "queued": "error",
        "in_progress": "error",
    },
    "google-generative-ai": {
        "FINISH_REASON_UNSPECIFIED": "error",
        "STOP": "stop",
        "MAX_TOKENS": "length",
        "SAFETY": "error",
        "RECITATION": "error",
        "LANGUAGE": "error",
        "OTHER": "error",
        "BLOCKLIST": "error",
        "PROHIBITED_CONTENT": "error",
        "SPII": "error",
        "MALFORMED_FUNCTION_CALL": "error",
        "IMAGE_SAFETY": "error",
        "IMAGE_PROHIBITED_CONTENT": "error",
        "IMAGE_OTHER": "error",
        "IMAGE_RECITATION": "error",
        "NO_IMAGE": "error",
        "UNEXPECTED_TOOL_CALL": "error",
        "TOO_MANY_TOOL_CALLS": "error",
        "MISSING_THOUGHT_SIGNATURE": "error",
        "MALFORMED_RESPONSE": "error",
        "CONTINUATION": "stop",
    },
    "bedrock-converse-stream": {
        "end_turn": "stop",
        "tool_use": "tool_use",
        "max_tokens": "length",
        "stop_sequence": "stop",
        "guardrail_intervened": "error",
        "content_filtered": "error",
        "malformed_model_output": "error",
        "malformed_tool_use": "error",
        "model_context_window_exceeded": "length",
    },
    "ollama": {
        "stop": "stop",
        "length": "length",
        "load": "stop",
        "unload": "stop",
    },
    "cohere-v2-chat": {
        # cohere-python types/chat_finish_reason.py (ChatFinishReason)
        "COMPLETE": "stop",
        "STOP_SEQUENCE": "stop",
        "MAX_TOKENS": "length",
        "TOOL_CALL": "tool_use",
        "ERROR": "error",
        "TIMEOUT": "error",
    },
    "mistral-chat": {
        # mistralai SDK CompletionResponseStreamChoiceFinishReason + Mistral OpenAPI FinishReason
        "stop": "stop",
        "length": "length",
        "model_length": "length",
        "tool_calls": "tool_use",
        "error": "error",
    },
}

# What "the end arrived without a reason" means per protocol (decided in the YAML header).
DECIDED_NULL = {
    "anthropic-messages": "stop",
    "openai-completions": "stop",
    "openai-responses": "error",
    "google-generative-ai": "error",
    "bedrock-converse-stream": "stop",
    "ollama": "stop",
    "cohere-v2-chat": "stop",
    "mistral-chat": "stop",
    "bedrock-invoke-stream": "stop",
}

OVERRIDE_PROTOCOLS = {
    "openai-responses",
    "openai-completions",
    "google-generative-ai",
    "ollama",
    "cohere-v2-chat",
    "azure-openai-completions",
    "mistral-chat",
    "bedrock-invoke-stream",
}


def _table() -> dict[str, Any]:
    data = yaml.safe_load(TABLE_PATH.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


ROWS: list[dict[str, Any]] = _table()["rows"]


def _row_id(row: dict[str, Any]) -> str:
    return f"{row['protocol']}:{row['raw']}"


# --- the table against itself and the research ------------------------------------------


@pytest.mark.parametrize("row", ROWS, ids=_row_id)
def test_every_row_maps_as_written(row: dict[str, Any]) -> None:
    got = map_stop_reason(row["protocol"], row["raw"])
    if row["reason"] == "error":
        expected_message = row.get("error_message") or f"Provider stopped with: {row['raw']}"
    else:
        expected_message = None
    assert got == StopMapping(row["reason"], expected_message, known=True)


@pytest.mark.parametrize(
    ("protocol", "raw", "reason"),
    [(p, raw, reason) for p, values in DECIDED.items() for raw, reason in values.items()],
)
def test_every_researched_value_has_a_row_with_the_decided_reason(
    protocol: str, raw: str, reason: str
) -> None:
    rows = [r for r in ROWS if r["protocol"] == protocol and r["raw"] == raw]
    assert len(rows) == 1, f"{protocol} {raw!r} has {len(rows)} rows"
    assert rows[0]["reason"] == reason
    assert map_stop_reason(protocol, raw).reason == reason


@pytest.mark.parametrize(("protocol", "reason"), sorted(DECIDED_NULL.items()))
def test_missing_reason_per_protocol(protocol: str, reason: str) -> None:
    got = map_stop_reason(protocol, None)
    assert got.reason == reason
    assert got.known
    assert (got.error_message is not None) == (reason == "error")


def test_protocols_are_exactly_the_six_ids() -> None:
    assert set(_table()["protocols"]) == PROTOCOLS
    assert {r["protocol"] for r in ROWS} == PROTOCOLS


def test_every_row_names_a_source() -> None:
    for row in ROWS:
        assert isinstance(row.get("source"), str) and len(row["source"]) > 10, _row_id(row)


def test_no_row_produces_aborted() -> None:
    # aborted is the local abort signal; a provider value must never map to it.
    assert all(r["reason"] != "aborted" for r in ROWS)


# --- unknown values and protocols --------------------------------------------------------


@settings(max_examples=300)
@given(protocol=st.sampled_from(sorted(PROTOCOLS)), raw=st.text(max_size=40))
def test_unknown_values_map_to_error_without_raising(protocol: str, raw: str) -> None:
    known = {r["raw"] for r in ROWS if r["protocol"] == protocol}
    got = map_stop_reason(protocol, raw, has_tool_calls=True)
    if raw in known:
        assert got.known
    else:
        assert got == StopMapping("error", f"unrecognized stop reason {raw!r}", known=False)


@settings(max_examples=100)
@given(protocol=st.text(max_size=30), raw=st.one_of(st.none(), st.text(max_size=20)))
def test_unknown_protocols_map_to_error_naming_the_protocol(protocol: str, raw: str | None) -> None:
    # Registered protocols without a section of their own (vertex-gemini, ...) borrow one:
    # known too. (Hypothesis draws such names from the code's own string constants.)
    if protocol in PROTOCOLS or protocol in protocols():
        return
    got = map_stop_reason(protocol, raw)
    assert got.reason == "error"
    assert not got.known
    assert got.error_message is not None and repr(protocol) in got.error_message


@pytest.mark.parametrize("raw", [3, ["stop"], {"a": 1}, True])
def test_non_string_raw_values_do_not_raise(raw: Any) -> None:
    got = map_stop_reason("openai-completions", raw)
    assert got.reason == "error" and not got.known


def test_escalation_is_unverified_and_takes_the_unknown_path() -> None:
    got = map_stop_reason("google-generative-ai", "ESCALATION")
    assert got == StopMapping("error", "unrecognized stop reason 'ESCALATION'", known=False)


def test_unknown_responses_incomplete_reason_is_an_error() -> None:
    got = map_stop_reason("openai-responses", "incomplete/some_new_reason")
    assert got.reason == "error" and not got.known


# --- tool-call override ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "raw"),
    [
        ("openai-responses", "completed"),
        ("google-generative-ai", "STOP"),
        ("google-generative-ai", "CONTINUATION"),
        ("ollama", "stop"),
    ],
)
def test_stop_with_tool_calls_becomes_tool_use_where_the_protocol_says_so(
    protocol: str, raw: str
) -> None:
    assert map_stop_reason(protocol, raw).reason == "stop"
    assert map_stop_reason(protocol, raw, has_tool_calls=True) == StopMapping(
        "tool_use", None, known=True
    )


@pytest.mark.parametrize(
    ("protocol", "raw"),
    [
        ("anthropic-messages", "end_turn"),
        ("anthropic-messages", "pause_turn"),
        ("bedrock-converse-stream", "end_turn"),
    ],
)
def test_no_override_where_the_protocol_reports_tool_use_itself(protocol: str, raw: str) -> None:
    assert map_stop_reason(protocol, raw, has_tool_calls=True).reason == "stop"


def test_a_forced_tool_choice_stop_with_tool_calls_is_tool_use_in_chat_completions() -> None:
    # OpenAI and Azure end a forced tool_choice with finish_reason "stop" (issue 14);
    # without tool calls "stop" stays stop.
    assert map_stop_reason("openai-completions", "stop", has_tool_calls=True).reason == "tool_use"
    assert map_stop_reason("openai-completions", "stop", has_tool_calls=False).reason == "stop"
    assert map_stop_reason("openai-completions", "length", has_tool_calls=True).reason == "length"


@pytest.mark.parametrize(
    ("protocol", "raw", "reason"),
    [
        # A tool call cut by the token limit is not a finished tool call.
        ("google-generative-ai", "MAX_TOKENS", "length"),
        ("google-generative-ai", "MALFORMED_FUNCTION_CALL", "error"),
        ("openai-responses", "incomplete/max_output_tokens", "length"),
        ("openai-responses", "failed", "error"),
        ("ollama", "length", "length"),
    ],
)
def test_override_only_touches_stop(protocol: str, raw: str, reason: str) -> None:
    assert map_stop_reason(protocol, raw, has_tool_calls=True).reason == reason


def test_override_flags_match_the_decisions() -> None:
    flags = {name: spec["tool_calls_override"] for name, spec in _table()["protocols"].items()}
    assert {name for name, flag in flags.items() if flag == "tool_use"} == OVERRIDE_PROTOCOLS
    assert all(flag in (None, "tool_use") for flag in flags.values())


# --- messages and details ----------------------------------------------------------------


def test_refusal_uses_the_explanation_when_given() -> None:
    explained = map_stop_reason("anthropic-messages", "refusal", details="Policy X.")
    assert explained == StopMapping("error", "Policy X.", known=True)
    plain = map_stop_reason("anthropic-messages", "refusal")
    assert plain.error_message == "The model refused to complete the request"
    empty = map_stop_reason("anthropic-messages", "refusal", details="")
    assert empty.error_message == "The model refused to complete the request"


def test_details_do_not_turn_a_success_into_a_message() -> None:
    got = map_stop_reason("anthropic-messages", "end_turn", details="irrelevant")
    assert got == StopMapping("stop", None, known=True)


def test_details_replace_the_message_of_failed_and_unknown_values() -> None:
    got = map_stop_reason("openai-responses", "failed", details="rate_limit_exceeded: slow down")
    assert got == StopMapping("error", "rate_limit_exceeded: slow down", known=True)
    unknown = map_stop_reason("openai-responses", "expired", details="the server said why")
    assert unknown == StopMapping("error", "the server said why", known=False)


@pytest.mark.parametrize(
    ("protocol", "raw", "message"),
    [
        ("anthropic-messages", "sensitive", "Provider stopped with: sensitive"),
        ("anthropic-messages", "compaction", "Provider stopped with: compaction"),
        ("openai-completions", "content_filter", "Provider stopped with: content_filter"),
        (
            "bedrock-converse-stream",
            "guardrail_intervened",
            "Provider stopped with: guardrail_intervened",
        ),
        ("google-generative-ai", "SAFETY", "Provider stopped with: SAFETY"),
        ("anthropic-messages", "whatever_next", "unrecognized stop reason 'whatever_next'"),
    ],
)
def test_error_messages(protocol: str, raw: str, message: str) -> None:
    assert map_stop_reason(protocol, raw).error_message == message


def test_context_window_exceeded_is_length_everywhere_it_occurs() -> None:
    # Conformance case 27: consistent across Anthropic, Bedrock and z.ai-style chat servers.
    for protocol in ("anthropic-messages", "bedrock-converse-stream", "openai-completions"):
        got = map_stop_reason(protocol, "model_context_window_exceeded")
        assert got == StopMapping("length", None, known=True), protocol


# --- case ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "raw"),
    [
        ("google-generative-ai", "stop"),
        ("google-generative-ai", "Stop"),
        ("openai-completions", "STOP"),
        ("anthropic-messages", "END_TURN"),
        ("bedrock-converse-stream", "End_Turn"),
        ("ollama", "Stop"),
        ("openai-responses", "COMPLETED"),
    ],
)
def test_matching_is_case_sensitive(protocol: str, raw: str) -> None:
    assert map_stop_reason(protocol, raw) == StopMapping(
        "error", f"unrecognized stop reason {raw!r}", known=False
    )


# Sections holding several vendors' vocabularies (bedrock-invoke-stream: Anthropic's
# lower-case values beside Titan's and Cohere's upper-case ones).
MIXED_CASE = {"bedrock-invoke-stream"}


def test_mixed_case_sections_stay_safe_to_case_fold() -> None:
    # Two spellings of one word (stop_sequence / STOP_SEQUENCE, length / LENGTH) must mean
    # the same, so that case folding could still be introduced without a clash.
    for protocol in MIXED_CASE:
        reasons: dict[str, set[str]] = {}
        for r in ROWS:
            if r["protocol"] == protocol and r["raw"] is not None:
                reasons.setdefault(r["raw"].casefold(), set()).add(r["reason"])
        assert all(len(found) == 1 for found in reasons.values()), (protocol, reasons)


def test_table_spelling_is_consistent_per_protocol() -> None:
    # Gemini and Cohere enums are upper-case, every other protocol lower-case; and no two
    # rows of one protocol differ only by case, so case folding could be introduced
    # without a clash.
    for protocol in PROTOCOLS - MIXED_CASE:
        raws = [r["raw"] for r in ROWS if r["protocol"] == protocol and r["raw"] is not None]
        want_upper = protocol in ("google-generative-ai", "cohere-v2-chat")
        for raw in raws:
            # A Responses incomplete reason after the slash is spelled as each server
            # sends it (xAI's REASON_MAX_LEN); the status before it is lower-case.
            spelled = raw.split("/", 1)[0] if protocol == "openai-responses" else raw
            assert spelled == (spelled.upper() if want_upper else spelled.lower()), (protocol, raw)
        assert len({raw.casefold() for raw in raws}) == len(raws), protocol


# --- malformed tables --------------------------------------------------------------------


def _good_table() -> dict[str, Any]:
    return {
        "protocols": {
            "p": {"raw_field": "f", "tool_calls_override": None, "source": "s"},
        },
        "rows": [
            {"protocol": "p", "raw": "a", "reason": "stop", "source": "s"},
            {"protocol": "p", "raw": "b", "reason": "error", "source": "s"},
        ],
    }


def test_a_small_good_table_parses() -> None:
    table = parse_stop_reason_table(_good_table())
    assert table.protocols["p"].mappings["b"] == StopMapping(
        "error", "Provider stopped with: b", known=True
    )


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda t: t["rows"][1].update(reason="aborted"), "rows[1]"),
        (lambda t: t["rows"][1].update(reason="toolUse"), "rows[1]"),
        (lambda t: t["rows"][1].update(protocol="q"), "not declared"),
        (lambda t: t["rows"][1].update(raw="a", reason="stop"), "duplicate"),
        (lambda t: t["rows"][0].update(error_message="x"), "only allowed on error rows"),
        (lambda t: t["rows"][1].pop("source"), "source"),
        (lambda t: t["rows"][1].update(extra=1), "extra"),
        (lambda t: t["rows"][1].update(raw=True), "rows[1]"),  # YAML `raw: yes`
        (lambda t: t["rows"][1].update(raw=None), "needs error_message"),
        (lambda t: t["rows"].append("just a string"), "rows[2]"),
        (lambda t: t["protocols"]["p"].update(tool_calls_override="length"), "protocols"),
        (lambda t: t.pop("rows"), "rows"),
    ],
)
def test_malformed_tables_give_a_one_line_error_naming_file_and_row(
    change: Any, fragment: str
) -> None:
    table = _good_table()
    change(table)
    with pytest.raises(StopReasonTableError) as info:
        parse_stop_reason_table(table)
    message = str(info.value)
    assert message.startswith("specs/stop_reasons.yaml: ")
    assert "\n" not in message
    assert fragment in message


@pytest.mark.parametrize("data", [None, [], "text", {"protocols": {}, "rows": []}])
def test_malformed_top_level(data: Any) -> None:
    with pytest.raises(StopReasonTableError, match=r"^specs/stop_reasons\.yaml: "):
        parse_stop_reason_table(data)


def test_a_broken_table_still_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise StopReasonTableError("specs/stop_reasons.yaml: rows[3] (...): bad")

    monkeypatch.setattr(stop_reasons, "load_stop_reason_table", broken)
    got = map_stop_reason("anthropic-messages", "end_turn")
    assert got == StopMapping("error", "specs/stop_reasons.yaml: rows[3] (...): bad", known=False)


# --- the human-readable copy ---------------------------------------------------------------


def _md_rows() -> set[tuple[str, ...]]:
    found = set()
    for line in MD_PATH.read_text(encoding="utf-8").splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] in PROTOCOLS:
            found.add(tuple(cells))
    return found


def test_every_row_appears_in_the_markdown_table() -> None:
    # Columns: protocol | raw | reason | with tool calls | error message.
    overrides = {n: s["tool_calls_override"] for n, s in _table()["protocols"].items()}
    expected = set()
    for r in ROWS:
        with_calls = overrides[r["protocol"]] if r["reason"] == "stop" else None
        message = r.get("error_message") or (
            f"Provider stopped with: {r['raw']}" if r["reason"] == "error" else ""
        )
        raw = "(none)" if r["raw"] is None else r["raw"]
        expected.add((r["protocol"], raw, r["reason"], with_calls or r["reason"], message))
    md = _md_rows()
    assert expected - md == set()
    assert md - expected == set()


# --- the recorded corpus -------------------------------------------------------------------


def _corpus() -> Path:
    env = os.environ.get("STREAM_HARNESS_CORPUS")
    return Path(env) if env else REPO.parent / "shared" / "corpus"


CORPUS_FOLDERS = {
    "anthropic_messages": "anthropic-messages",
    "openai_chat": "openai-completions",
    "mistral": "mistral-chat",
    "gemini": "google-generative-ai",
    "bedrock_converse": "bedrock-converse-stream",
}


@pytest.mark.corpus
def test_stop_reasons_seen_in_the_corpus_are_known() -> None:
    manifest = _corpus() / "MANIFEST.tsv"
    if not manifest.is_file():
        pytest.skip("corpus not present")
    seen: list[tuple[str, str]] = []
    with manifest.open(encoding="utf-8", newline="") as fh:
        for rec in csv.DictReader(fh, delimiter="\t"):
            protocol = CORPUS_FOLDERS.get(rec["protocol"])
            if protocol is None and "ollama" in rec["file"]:
                protocol = "ollama"
            match = re.search(r"stop_reasons=([^;|]*)", rec["notes"])
            if protocol is None or match is None or match.group(1).strip() == "-":
                continue
            seen += [(protocol, v.strip()) for v in match.group(1).split(",")]
    assert len(seen) > 40  # the notes list 63 values; a parse slip would drop them
    for protocol, raw in seen:
        assert map_stop_reason(protocol, raw).known, (protocol, raw)


@pytest.mark.parametrize("protocol", ["openai-completions", "openai-responses"])
def test_a_refusal_given_as_content_overrides_a_plain_stop(protocol: str) -> None:
    raw = "stop" if protocol == "openai-completions" else "completed"
    assert map_stop_reason(protocol, raw).reason == "stop"
    refused = map_stop_reason(protocol, raw, refusal=True, details="I can't help with that.")
    assert refused.reason == "error"
    assert refused.error_message == "I can't help with that."


def test_protocols_without_a_refusal_override_ignore_the_flag() -> None:
    # Anthropic says `refusal` in the stop reason itself; Gemini uses SAFETY etc.
    assert map_stop_reason("anthropic-messages", "end_turn", refusal=True).reason == "stop"
    assert map_stop_reason("google-generative-ai", "STOP", refusal=True).reason == "stop"
