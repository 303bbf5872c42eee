"""The protocol registry: every registration is complete and consistent with the data it
names, the generated table is current, and a protocol registered here only (a toy one)
is detected, normalized, checked by the conformance suite, offered by the CLI and
documented, with no other change anywhere."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

import stream_harness.providers.registry as registry
import stream_harness.providers.table as table
from stream_harness.cli.main import build_parser, main
from stream_harness.conformance import ReferenceAdapter, prepare, run_adapter
from stream_harness.conformance.config import Config
from stream_harness.contract.facts import bundled_cassettes, load_yaml, spec_path
from stream_harness.contract.rules import check_contract
from stream_harness.providers.base import Normalizer
from stream_harness.providers.reference import detect_protocol, normalize
from stream_harness.providers.registry import Detect, Protocol, UnknownProtocolError, registered_for
from stream_harness.providers.stop_reasons import map_stop_reason
from stream_harness.recordings.cassette import (
    Interaction,
    Request,
    Response,
    dump_cassette,
    load_cassette,
)
from stream_harness.recordings.golden import expected_path, read_expected
from stream_harness.wire import FramingError, JSONLine, JSONLinesDecoder, SSEDecoder
from stream_harness.wire.framing import JSON_LINES, SSE

PROTOCOLS = registry.registered()


# -- every registration is complete --------------------------------------------------------


def test_the_six_protocols_register_themselves_in_listing_order() -> None:
    # Others come between them (a specific protocol before the generic one it refines:
    # mistral-chat before openai-completions), so the six are checked in relative order.
    six = [
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "google-generative-ai",
        "bedrock-converse-stream",
        "ollama",
    ]
    assert [p.id for p in PROTOCOLS if p.id in six] == six
    ids = [p.id for p in PROTOCOLS]
    assert ids.index("mistral-chat") < ids.index("openai-completions")


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=[p.id for p in PROTOCOLS])
def test_a_registration_names_data_that_exists(protocol: Protocol) -> None:
    assert spec_path(protocol.doc).is_file(), protocol.doc
    assert protocol.stop_reasons in load_yaml("stop_reasons.yaml")["protocols"]
    assert (bundled_cassettes() / protocol.cassettes).is_dir()
    assert protocol.translator.protocol == protocol.id
    norm = protocol.normalizer()
    assert isinstance(norm, protocol.translator)
    assert registry.get_normalizer(protocol.id).frames is not norm.frames  # fresh each time


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=[p.id for p in PROTOCOLS])
def test_the_translator_module_names_it_normalizer(protocol: Protocol) -> None:
    # `from stream_harness.providers.<module> import Normalizer` is how a user (and each
    # provider test module) reaches a protocol's translator without the registry.
    module = importlib.import_module(protocol.translator.__module__)
    assert module.Normalizer is protocol.translator
    assert isinstance(registry.get_normalizer(protocol.id), protocol.translator)


def test_every_stop_reason_section_belongs_to_a_registration() -> None:
    sections = set(load_yaml("stop_reasons.yaml")["protocols"])
    assert sections == {p.stop_reasons for p in PROTOCOLS}


def test_every_recording_row_is_a_registered_protocol() -> None:
    from stream_harness.workflow.endpoints import endpoints

    assert set(load_yaml("recording.yaml")["protocols"]) <= {p.id for p in PROTOCOLS}
    assert list(endpoints()) == [p.id for p in PROTOCOLS if p.id in endpoints()]


def test_the_generated_table_is_current() -> None:
    page = spec_path(table.TABLE_PAGE).read_text(encoding="utf-8")
    assert table.splice_table(page, table.render_table()) == page, (
        "specs/protocols/README.md is stale: regenerate with `python -m stream_harness.providers.table`"
    )


def test_a_second_registration_of_an_id_is_refused() -> None:
    first = PROTOCOLS[0]
    assert registry.register(first) is first  # the same object again is harmless
    clash = Protocol(
        id=first.id, title="impostor", framing=JSON_LINES, translator=ToyNormalizer,
        detect=Detect(), stop_reasons="ollama",
    )  # fmt: skip
    with pytest.raises(ValueError, match="already registered"):
        registry.register(clash)
    with pytest.raises(ValueError, match="lower-case"):
        Protocol(
            id="Bad Id",
            title="x",
            framing=JSON_LINES,
            translator=ToyNormalizer,
            detect=Detect(),
            stop_reasons="ollama",
        )
    with pytest.raises(UnknownProtocolError, match=r"known: .*anthropic-messages"):
        registry.get("smoke-signals")


# -- framing is injected: a translator does not know how its frames were cut ---------------

SSE_PROTOCOLS = [p for p in PROTOCOLS if p.framing is SSE]


def _as_json_lines(body: bytes) -> bytes | None:
    """The body's events as JSON lines (one data payload a line), or None when an event
    is not a one-line JSON object (``[DONE]``, a broken body kept on purpose)."""
    decoder = SSEDecoder()
    lines = []
    for item in [*decoder.feed(body), *decoder.close()]:
        if isinstance(item, FramingError) or "\n" in item.data:
            return None
        try:
            if not isinstance(json.loads(item.data), dict):
                return None
        except ValueError:
            return None
        lines.append(item.data.encode("utf-8") + b"\n")
    return b"".join(lines) if lines else None


@pytest.mark.parametrize("protocol", SSE_PROTOCOLS, ids=[p.id for p in SSE_PROTOCOLS])
def test_an_sse_translator_gives_the_same_events_over_json_lines(protocol: Protocol) -> None:
    compared = 0
    for path in sorted((bundled_cassettes() / protocol.cassettes).glob("*.yaml")):
        for inter in load_cassette(path).interactions:
            lines = _as_json_lines(inter.response.body) if inter.response.status < 400 else None
            if lines is None:
                continue
            golden = read_expected(expected_path(path, inter.index))  # what SSE gives
            norm = protocol.translator(JSON_LINES.decoder())
            over_lines = [*norm.feed(lines), *norm.close()]
            assert over_lines == golden, f"{path.name}#{inter.index}"
            compared += 1
    if compared == 0:
        pytest.skip(f"no {protocol.id} cassette whose every event is a JSON object")


LINES_PROTOCOLS = [p for p in PROTOCOLS if p.framing is JSON_LINES]


@pytest.mark.parametrize("protocol", LINES_PROTOCOLS, ids=[p.id for p in LINES_PROTOCOLS])
def test_a_json_lines_translator_gives_the_same_events_over_sse(protocol: Protocol) -> None:
    compared = 0
    for path in sorted((bundled_cassettes() / protocol.cassettes).glob("*.yaml")):
        for inter in load_cassette(path).interactions:
            body = inter.response.body
            if inter.response.status >= 400 or not body.endswith(b"\n"):
                continue
            decoder = JSONLinesDecoder()
            if any(isinstance(x, FramingError) for x in [*decoder.feed(body), *decoder.close()]):
                continue  # a broken body kept on purpose: its error names a line offset
            sse = b"".join(b"data: " + line + b"\n\n" for line in body.splitlines() if line.strip())
            norm = protocol.translator(SSE.decoder())
            over_sse = [*norm.feed(sse), *norm.close()]
            assert over_sse == read_expected(expected_path(path, inter.index)), (
                f"{path.name}#{inter.index}"
            )
            compared += 1
    if compared == 0:
        pytest.skip(f"no {protocol.id} cassette of well-formed lines")


# -- a toy protocol, registered here only ----------------------------------------------------


class ToyNormalizer(Normalizer):
    """JSON lines: ``{"toy": "text", "text": ...}`` pieces, then ``{"toy": "end", "reason": ...}``.

    It reads frames (values cut by whatever framing it is registered with) and never
    touches bytes; its stop values are Ollama's, so it names that table section.
    """

    protocol = "toy-lines"

    def dispatch(self, items: Iterable[Any]) -> None:
        acc = self.acc
        for item in items:
            if acc.terminated:
                return
            if isinstance(item, FramingError):
                acc.fail(f"framing error at byte {item.offset}: {item.message}")
                return
            assert isinstance(item, JSONLine)
            line = item.value
            acc.start(model="toy-1")
            if line.get("toy") == "text":
                acc.text("text", str(line.get("text", "")))
            elif line.get("toy") == "end":
                acc.end("text")
                acc.finish_provider(line.get("reason"))

    def on_eof(self) -> None:
        self.acc.fail("stream ended without an end line")


TOY = Protocol(
    id="toy-lines",
    title="Toy JSON lines (a test's own protocol)",
    framing=JSON_LINES,
    translator=ToyNormalizer,
    detect=Detect(
        url=(r"/toy/v1/stream$",),
        headers=(("x-toy-protocol", r"^1$"),),
        body=(rb'"toy"\s*:\s*"(?:text|end)"',),
    ),
    stop_reasons="ollama",
)

TOY_BODY = (
    b'{"toy": "text", "text": "Ol\xc3\xa1, "}\n'
    b'{"toy": "text", "text": "mundo"}\n'
    b'{"toy": "end", "reason": "stop"}\n'
)


@pytest.fixture
def toy() -> Iterator[Protocol]:
    with registered_for(TOY) as protocol:
        yield protocol
    assert "toy-lines" not in registry.protocol_ids()


def _interaction(
    uri: str = "https://toy.example/toy/v1/stream",
    headers: dict[str, list[str]] | None = None,
    body: bytes = TOY_BODY,
) -> Interaction:
    return Interaction(
        index=0,
        request=Request(method="POST", uri=uri, headers={}, body=b'{"stream": true}'),
        response=Response(
            status=200, reason="OK",
            headers=headers if headers is not None else {"content-type": ["application/x-ndjson"]},
            body=body,
        ),
    )  # fmt: skip


def test_the_toy_is_detected_by_url_header_and_body(toy: Protocol) -> None:
    assert detect_protocol(_interaction()) == "toy-lines"
    assert (
        detect_protocol(_interaction(uri="", headers={"x-toy-protocol": ["1"]}, body=b"{}"))
        == "toy-lines"
    )
    assert detect_protocol(_interaction(uri="", headers={})) == "toy-lines"
    with pytest.raises(UnknownProtocolError):
        detect_protocol(_interaction(uri="", headers={}, body=b"{}"))


def test_the_toy_normalizes_whole_and_byte_by_byte(toy: Protocol) -> None:
    whole = list(normalize("toy-lines", [TOY_BODY]))
    single = list(normalize("toy-lines", [TOY_BODY[i : i + 1] for i in range(len(TOY_BODY))]))
    assert whole == single and check_contract(whole) == []
    last = whole[-1]
    assert last.type == "done" and last.message.stop_reason == "stop"
    assert [b.content for b in last.message.content if b.type == "text"] == ["Olá, mundo"]
    cut = list(normalize("toy-lines", [TOY_BODY[:40]]))
    assert cut[-1].type == "error" and check_contract(cut) == []
    assert map_stop_reason("toy-lines", "length").reason == "length"  # the shared section


def test_the_toy_goes_through_the_conformance_checks(toy: Protocol, tmp_path: Path) -> None:
    path = tmp_path / "toy-lines" / "hello.yaml"
    path.parent.mkdir()
    dump_cassette([_interaction()], path)
    assert load_cassette(path).interactions[0].is_streaming
    suite = prepare(Config(cassettes=(tmp_path,), examples=4))
    assert [c.protocol for c in suite.cases] == ["toy-lines"] and suite.planned > 0
    run = run_adapter(ReferenceAdapter(), suite.cases, suite.run_config)
    assert run.results and all(r.outcome == "passed" for r in run.results), run.results
    assert {r.check for r in run.results} >= {"contract", "split-invariance"}


def test_the_toy_is_offered_by_the_cli_and_documented(
    toy: Protocol, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    usage = build_parser().format_help() + _subcommand_help("normalize") + _subcommand_help("fuzz")
    assert "toy-lines" in usage
    body = tmp_path / "body.jsonl"
    body.write_bytes(TOY_BODY)
    assert main(["normalize", str(body)]) == 0  # detected from the body
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[-1]["type"] == "done"
    assert main(["normalize", str(body), "--protocol", "toy-lines", "--split", "bytes:3"]) == 0
    rendered = table.render_table()
    assert "| [`toy-lines`](toy-lines.md) | Toy JSON lines" in rendered
    assert "`x-toy-protocol: ^1$`" in rendered and "| jsonlines |" in rendered


def _subcommand_help(name: str) -> str:
    import argparse

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    help_text: str = sub.choices[name].format_help()
    return help_text


def test_the_toy_can_be_registered_through_an_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = importlib.metadata.EntryPoint(
        name="toy-lines", value=f"{__name__}:TOY", group=registry.ENTRY_POINT_GROUP
    )
    broken = importlib.metadata.EntryPoint(
        name="broken", value="no_such_module_anywhere:X", group=registry.ENTRY_POINT_GROUP
    )
    monkeypatch.setattr(registry, "_entry_points", lambda: (broken, entry))
    monkeypatch.setattr(registry, "_loaded", False)
    try:
        with pytest.warns(UserWarning, match="'broken'.*does not load"):
            ids = registry.protocol_ids()
        assert ids[-1] == "toy-lines" and ids[:6] == [p.id for p in PROTOCOLS][:6]
    finally:
        registry.unregister("toy-lines")
