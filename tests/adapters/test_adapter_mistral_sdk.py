"""The mistralai SDK (``chat.stream``) against the reference, on every bundled mistral-chat cassette.

The SDK's real code reads the recorded bytes (whole, and one byte per chunk) through an
httpx2 transport; its events are joined as Mistral's own client joins them
(harness/stream_harness/adapters/sdks/mistral_sdk.py) and compared with the reference's final message on what
the ``expected`` check compares. Every disagreement is listed below with its reason and
mirrored in specs/expectations/mistral-sdk.yaml; the whole file skips when the SDK is not
installed (it is in the test extra; ``stream-harness matrix --group mistral`` pins it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from stream_harness.adapters.conventions import reference_message
from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.protocol import Adapter, AdapterLoadError
from stream_harness.adapters.registry import adapter_spec
from stream_harness.conformance.checks.stream import comparable_message
from stream_harness.contract.facts import bundled_cassettes, spec_path
from stream_harness.recordings.cassette import load_cassette

PROTOCOL = "mistral-chat"
CASSETTES = sorted((bundled_cassettes() / PROTOCOL).glob("*.yaml"))

# Cassette -> the fields of the compared message that differ, and why.
KNOWN: dict[str, set[str]] = {
    # The SDK defaults a missing `index` to 0 (models/toolcall.py) and a merge by index,
    # as Mistral's own client does, runs index-less parallel calls into one call
    # (conformance_report/findings/mistral-sdk-index-default-merges-parallel-calls.md).
    "parallel_tool_calls": {"content"},
    "parallel_null_ids": {"content"},
    # A stream cut before any finish reason ends like a finished one: the SDK's event
    # stream stops at EOF without [DONE] and raises nothing
    # (conformance_report/findings/mistral-sdk-truncated-stream.md); the cut call's
    # arguments are the string received, where the reference keeps the parsed prefix.
    "stream_cut": {"content", "stop_reason", "has_error_message"},
}


@pytest.fixture(scope="module")
def adapter() -> Adapter:
    pytest.importorskip("mistralai")
    try:
        return load_adapter(adapter_spec("mistral-sdk"))
    except AdapterLoadError as exc:  # pragma: no cover - importorskip covers it
        pytest.skip(str(exc))


def _differences(adapter: Adapter, path: Path, split: str) -> tuple[set[str], Any, Any]:
    response = load_cassette(path).interactions[0].response
    body = response.body
    chunks = [body] if split == "whole" else [body[i : i + 1] for i in range(len(body))]
    result = adapter.run(PROTOCOL, chunks, status=response.status, headers=response.headers)
    assert result.crashed is None, result.crashed
    ours = comparable_message(result.message)
    ref = comparable_message(reference_message(PROTOCOL, [body], response.status, response.headers))
    assert isinstance(ours, dict) and isinstance(ref, dict)
    return {k for k in ref if ours[k] != ref[k]}, ours, ref


@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.parametrize("split", ["whole", "1byte"])
@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: p.stem)
def test_the_sdk_agrees_with_the_reference_except_known_differences(
    adapter: Adapter, path: Path, split: str
) -> None:
    found, ours, ref = _differences(adapter, path, split)
    assert found == KNOWN.get(path.stem, set()), (ours, ref)


def test_a_merged_call_keeps_every_argument_the_wire_sent(adapter: Adapter) -> None:
    """What the index merge hands the user: one call, the arguments run together."""
    _, ours, _ = _differences(
        adapter, bundled_cassettes() / PROTOCOL / "parallel_tool_calls.yaml", "whole"
    )
    [call] = ours["content"]
    assert call["name"] == "get_weather"
    assert call["arguments"] == {"_raw": '{"city": "Paris"}{"city": "Oslo"}{"tz": "Europe/Oslo"}'}


def test_the_sdks_error_classes_carry_the_providers_message(adapter: Adapter) -> None:
    for name, message in (
        ("rate_limit_429", "Rate limit exceeded"),
        ("rate_limit_429_gateway", "Requests rate limit exceeded"),
        ("context_overflow_400", "Prompt contains 40120 tokens"),
        ("validation_422", "body.messages: Field required"),
    ):
        response = (
            load_cassette(bundled_cassettes() / PROTOCOL / f"{name}.yaml").interactions[0].response
        )
        result = adapter.run(
            PROTOCOL, [response.body], status=response.status, headers=response.headers
        )
        assert result.raised is not None
        assert result.message is not None and result.message.stop_reason == "error"
        assert (result.message.error_message or "").startswith(message), name


def test_the_known_differences_are_the_expectation_files() -> None:
    data = yaml.safe_load(spec_path("expectations/mistral-sdk.yaml").read_text(encoding="utf-8"))
    cases = {entry["case"] for entry in data["known_failures"]}
    for name in KNOWN:
        assert f"{PROTOCOL}/{name}.yaml#0" in cases, name


@pytest.mark.corpus
def test_the_sdk_agrees_with_the_reference_on_the_recorded_mistral_traffic(
    adapter: Adapter, corpus_dir: Path
) -> None:
    """Every recording detection sends to mistral-chat (the corpus's mistral/ folder)."""
    from stream_harness.providers.reference import detect_protocol

    checked = 0
    for path in sorted(corpus_dir.rglob("*.yaml")):
        for interaction in load_cassette(path).interactions:
            try:
                if detect_protocol(interaction) != PROTOCOL:
                    continue
            except ValueError:
                continue
            response = interaction.response
            result = adapter.run(
                PROTOCOL, [response.body], status=response.status, headers=response.headers
            )
            ours = comparable_message(result.message)
            ref = comparable_message(
                reference_message(PROTOCOL, [response.body], response.status, response.headers)
            )
            assert ours == ref, path.name
            checked += 1
    assert checked >= 4  # three streams and the overflow error
