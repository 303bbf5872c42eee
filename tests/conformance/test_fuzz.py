"""``stream-harness fuzz`` (harness/stream_harness/conformance/fuzz.py): it finds planted bugs, shrinks them to a
reproducer that replays, and is never green on nothing (exit 2 without cassettes or
mutations). A small count only: the 10,000-per-protocol run is a benchmark
(benchmarks/bench_fuzz.py, figures in benchmarks/results/fuzz.json)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from stream_harness.adapters.protocol import AdapterResult, Headers, ReferenceAdapter
from stream_harness.cli.main import main
from stream_harness.conformance.fuzz import event_problems, run_fuzz
from stream_harness.conformance.fuzz import reference_events as ref
from stream_harness.contract.events import TextDeltaEvent

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes"


class RaisesOnFlippedBytes(ReferenceAdapter):
    """A user's adapter with a bug: it raises on a body that is not valid UTF-8."""

    name = "planted-raise"

    def run(
        self, protocol: str, chunks: Sequence[bytes], *, status: int = 200, headers: Headers = None
    ) -> AdapterResult:
        b"".join(chunks).decode("utf-8")  # the bug: UnicodeDecodeError escapes
        return super().run(protocol, chunks, status=status, headers=headers)


class LosesLateText(ReferenceAdapter):
    """A user's adapter with a quieter bug: the second text delta is not kept."""

    name = "planted-loss"

    def run(
        self, protocol: str, chunks: Sequence[bytes], *, status: int = 200, headers: Headers = None
    ) -> AdapterResult:
        result = super().run(protocol, chunks, status=status, headers=headers)
        events = list(result.events or [])
        deltas = [i for i, e in enumerate(events) if isinstance(e, TextDeltaEvent)]
        if len(deltas) > 1:
            del events[deltas[1]]
        return AdapterResult(message=result.message, events=events)


def test_the_reference_passes_a_small_run_and_exits_0(tmp_path: Path) -> None:
    out = tmp_path / "fuzz.json"
    code = main(["fuzz", "--examples", "30", "--protocol", "ollama", "--out", str(out)])
    assert code == 0
    doc = json.loads(out.read_text())
    (proto,) = doc["protocols"]
    assert proto["protocol"] == "ollama" and proto["mutations"] >= 30
    assert proto["findings"] == [] and sum(proto["by_kind"].values()) == proto["mutations"]


@pytest.mark.parametrize(
    ("adapter", "problem"),
    [
        (f"{__name__}:RaisesOnFlippedBytes", "raised UnicodeDecodeError"),
        (f"{__name__}:LosesLateText", "not in the final message"),
    ],
)
def test_a_planted_adapter_bug_is_found_shrunk_and_replayable(
    tmp_path: Path, adapter: str, problem: str
) -> None:
    out = tmp_path / "fuzz.json"
    doc = run_fuzz(
        CASSETTES, ["openai-completions"], examples=300, adapter=adapter, out=out, seed=1
    )
    (proto,) = doc["protocols"]
    assert proto["findings"], proto
    finding = proto["findings"][0]
    assert any(problem in p for p in finding["problems"]), finding["problems"]
    body = Path(finding["body_file"]).read_bytes()
    assert len(body) == finding["body_bytes"]
    assert finding["command"].startswith(f"stream-harness normalize {finding['body_file']} ")
    assert f"--adapter {adapter}" in finding["command"]
    code = main(["fuzz", "--examples", "100", "--protocol", "openai-completions",
                 "--adapter", adapter, "--out", str(out), "--seed", "1"])  # fmt: skip
    assert code == 1


def test_a_planted_normalizer_bug_is_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    from stream_harness.providers import ollama

    original = ollama.OllamaNormalizer.on_eof

    def broken(self: ollama.OllamaNormalizer) -> None:
        if self.acc.block_count:
            raise KeyError("planted")
        original(self)

    monkeypatch.setattr(ollama.OllamaNormalizer, "on_eof", broken)
    doc = run_fuzz(CASSETTES, ["ollama"], examples=200)
    (proto,) = doc["protocols"]
    assert any("never-raise net fired" in p for f in proto["findings"] for p in f["problems"]), (
        proto["findings"]
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--examples", "0"], "nothing would run"),
        (["--cassettes", "{empty}"], "no streaming cassette"),
        (["--cassettes", "{missing}"], "not a directory"),
        (["--protocol", "nope"], "unknown protocol"),
        (["--adapter", "no_such_module:X"], "cannot import"),
    ],
)
def test_bad_input_is_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    (tmp_path / "empty").mkdir()
    argv = [a.format(empty=tmp_path / "empty", missing=tmp_path / "missing") for a in argv]
    assert main(["fuzz", *argv, "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_event_problems_names_a_lost_delta_and_a_second_terminal() -> None:
    body = CASSETTES / "ollama" / "plain_text.yaml"
    from stream_harness.recordings.cassette import load_cassette

    events = ref("ollama", [load_cassette(body).interactions[0].response.body])
    assert event_problems(events) == []
    assert any("2 terminal events" in p for p in event_problems([*events, events[-1]]))
