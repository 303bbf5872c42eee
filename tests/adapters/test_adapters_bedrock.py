"""The Bedrock InvokeModelWithResponseStream SDK adapters against the reference.

boto3-bedrock-invoke (boto3's real client, a caller's fold of the chunks) must agree with
the reference on every bundled bedrock-invoke-stream cassette, whole and in 7-byte
pieces; anthropic-bedrock-sdk (AnthropicBedrock) on the Anthropic-family cassettes that
are not cut. Each skips cleanly when its SDK is not installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_harness.adapters.loading import load_adapter
from stream_harness.adapters.protocol import Adapter, AdapterResult
from stream_harness.conformance import bundled_cassettes, run_conformance
from stream_harness.conformance.checks.stream import compare_messages
from stream_harness.recordings.cassette import load_cassette
from stream_harness.recordings.golden import interaction_events

PROTOCOL = "bedrock-invoke-stream"
CASSETTES = sorted((bundled_cassettes() / PROTOCOL).glob("*.yaml"))


def _run(adapter: Adapter, path: Path, step: int | None) -> tuple[AdapterResult, object]:
    inter = load_cassette(path).interactions[0]
    body = inter.response.body
    chunks = [body] if step is None else [body[i : i + step] for i in range(0, len(body), step)]
    result = adapter.run(
        PROTOCOL, chunks, status=inter.response.status, headers=inter.response.headers
    )
    expected = interaction_events(inter, PROTOCOL)[-1].message  # type: ignore[attr-defined]
    return result, expected


@pytest.fixture(scope="module")
def boto3_adapter() -> Adapter:
    pytest.importorskip("boto3")
    return load_adapter("boto3-bedrock-invoke")


@pytest.fixture(scope="module")
def anthropic_bedrock() -> Adapter:
    pytest.importorskip("anthropic")
    pytest.importorskip("httpx2")
    pytest.importorskip("botocore")
    return load_adapter("anthropic-bedrock-sdk")


@pytest.mark.parametrize("step", [None, 7], ids=["whole", "7byte"])
@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: p.stem)
def test_boto3_agrees_with_the_reference(
    boto3_adapter: Adapter, path: Path, step: int | None
) -> None:
    result, expected = _run(boto3_adapter, path, step)
    assert compare_messages(expected, result) == []  # type: ignore[arg-type]


def test_boto3_surfaces_exception_frames_as_exceptions(boto3_adapter: Adapter) -> None:
    result, _ = _run(
        boto3_adapter, bundled_cassettes() / PROTOCOL / "llama_timeout_midstream.yaml", None
    )
    assert result.raised is not None and result.raised.startswith("EventStreamError")
    assert result.message is not None
    assert result.message.error_message == (
        "Model has timed out in processing the request. Try your request again."
    )


def test_botocore_drops_a_cut_frame_silently(boto3_adapter: Adapter) -> None:
    # conformance_report/findings/botocore-eventstream-incomplete-frame.md: boto3 raises
    # nothing for the 41 bytes of a cut frame; only the fold's end-marker check ends it.
    result, _ = _run(
        boto3_adapter, bundled_cassettes() / PROTOCOL / "anthropic_truncated.yaml", None
    )
    assert result.raised is None
    assert result.message is not None and result.message.stop_reason == "error"


ANTHROPIC_FAMILY = [
    p for p in CASSETTES if p.stem.startswith("anthropic_") and p.stem != "anthropic_truncated"
]
ANTHROPIC_FAMILY += [
    bundled_cassettes() / PROTOCOL / f"{n}.yaml"
    for n in ("throttling_before_stream", "http_400_context_overflow")
]


@pytest.mark.parametrize("path", ANTHROPIC_FAMILY, ids=lambda p: p.stem)
def test_anthropic_bedrock_agrees_on_claude_streams(anthropic_bedrock: Adapter, path: Path) -> None:
    result, expected = _run(anthropic_bedrock, path, 7)
    assert compare_messages(expected, result) == []  # type: ignore[arg-type]


def test_anthropic_bedrock_conformance_passes_with_its_expectations(
    anthropic_bedrock: Adapter,
) -> None:
    run = run_conformance(
        anthropic_bedrock,
        checks=("expected", "stop-reason", "error-surfacing"),
        examples=1,
    )
    outcomes = [r.outcome for r in run.results]
    assert "failed" not in outcomes and "fixed" not in outcomes
    assert outcomes.count("known_failure") > 0
