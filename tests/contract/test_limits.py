"""Bounded inputs (harness/stream_harness/contract/limits.py): every hostile input gets a one-line error naming
the limit (and the file), within bounded memory; never a traceback, a hang or a
MemoryError. The inputs that would take memory without the bound run in a subprocess
under RLIMIT_AS, so a regression fails the test instead of the machine."""

from __future__ import annotations

import base64
import gzip
import json
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

from stream_harness.contract import limits
from stream_harness.contract.partial_json import IncrementalJSON, Step, cascade, parse_partial
from stream_harness.providers import get_normalizer
from stream_harness.recordings.cassette import CassetteError, load_cassette
from stream_harness.wire import FramingError, JSONArrayDecoder
from stream_harness.workflow.lint import lint_paths

MEMORY_LIMIT = 1 << 30  # 1 GiB of address space: the interpreter and the harness fit


def run_bounded(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter under RLIMIT_AS (memory-hungry inputs)."""
    prelude = (
        "import resource\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT}, {MEMORY_LIMIT}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


LOAD_ONE_LINE = """
    import sys
    from stream_harness.recordings.cassette import CassetteError, load_cassette
    try:
        load_cassette(sys.argv[1])
    except CassetteError as exc:
        print(exc)
    else:
        print("LOADED")
"""


def encoded_cassette(path: Path, body: bytes, encoding: str) -> Path:
    """A cassette whose response body is stored still compressed (``!!binary``)."""
    b64 = base64.b64encode(body).decode()
    path.write_text(
        "interactions:\n"
        "- request: {body: '{}', headers: {}, method: POST, uri: 'https://api.openai.com/v1/chat/completions'}\n"
        "  response:\n"
        "    body:\n"
        "      string: !!binary |\n"
        f"        {b64}\n"
        f"    headers: {{content-type: [text/event-stream], content-encoding: [{encoding}]}}\n"
        "    status: {code: 200, message: OK}\n"
        "version: 1\n",
        encoding="utf-8",
    )
    return path


# -- YAML ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("- " * 50_000 + "x\n", "YAML nested too deep"),
        ("a: " + "[" * 50_000 + "]" * 50_000 + "\n", "nest"),  # libyaml's own limit, or ours
    ],
    ids=["block", "flow"],
)
def test_deep_yaml_is_a_one_line_error_naming_the_file(
    tmp_path: Path, text: str, expect: str
) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(text, encoding="utf-8")
    done = run_bounded(LOAD_ONE_LINE, str(path))
    assert done.returncode == 0, done.stderr[-500:]
    line = done.stdout.strip()
    assert "\n" not in line and line.startswith(str(path)) and expect in line, line


def test_deep_parsed_body_is_refused_before_building_it(tmp_path: Path) -> None:
    deep = "[" * 5_000 + "]" * 5_000
    path = tmp_path / "deep_parsed_body.yaml"
    path.write_text(
        "interactions:\n- request: {method: POST, uri: 'https://x/v1/messages', headers: {}, "
        f"parsed_body: {deep}}}\n  response: {{status: {{code: 200, message: OK}}, "
        "headers: {}, body: {string: ''}}\nversion: 1\n",
        encoding="utf-8",
    )
    with pytest.raises(CassetteError) as err:
        load_cassette(path)
    assert "nest" in str(err.value) and "\n" not in str(err.value)


def billion_laughs(levels: int = 9) -> str:
    text = "a: &a [" + ",".join(["lol"] * 10) + "]\n"
    for i in range(1, levels + 1):
        prev = "a" if i == 1 else f"l{i - 1}"
        text += f"l{i}: &l{i} [" + ",".join([f"*{prev}"] * 10) + "]\n"
    return text


def test_billion_laughs_is_refused_quickly_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "laughs.yaml"
    path.write_text(billion_laughs(), encoding="utf-8")
    done = run_bounded(LOAD_ONE_LINE, str(path))
    assert done.returncode == 0, done.stderr[-500:]
    assert "YAML aliases expand to more than" in done.stdout, done.stdout
    assert done.stdout.startswith(str(path))


def test_aliases_within_the_limit_still_load(tmp_path: Path) -> None:
    # A few ordinary aliases (shared headers) are not a bomb.
    path = tmp_path / "aliases.yaml"
    path.write_text(
        "interactions:\n"
        "- request: {method: POST, uri: 'https://api.openai.com/v1/chat/completions', "
        "headers: &h {content-type: [application/json]}, body: '{}'}\n"
        "  response: {status: {code: 200, message: OK}, headers: *h, body: {string: 'x'}}\n"
        "version: 1\n",
        encoding="utf-8",
    )
    assert load_cassette(path).interactions[0].response.body == b"x"


def test_lint_reports_the_one_bad_file_and_goes_on(tmp_path: Path) -> None:
    good = Path(__file__).resolve().parents[2] / "cassettes" / "ollama" / "plain_text.yaml"
    (tmp_path / "good.yaml").write_bytes(good.read_bytes())
    (tmp_path / "laughs.yaml").write_text(billion_laughs(), encoding="utf-8")
    report = lint_paths([tmp_path], check_normalize=False)
    assert report.files == 2
    assert [(Path(f.path).name, f.kind) for f in report.findings] == [("laughs.yaml", "malformed")]


# -- compressed bodies -----------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_decompression_bomb_is_refused_in_bounded_memory(tmp_path: Path, encoding: str) -> None:
    plain = b"data: {}\n\n" * (8 * 1024 * 1024)  # 80 MiB, past the 64 MiB limit
    body = gzip.compress(plain, 9) if encoding == "gzip" else zlib.compress(plain, 9)
    del plain
    path = encoded_cassette(tmp_path / f"bomb_{encoding}.yaml", body, encoding)
    done = run_bounded(LOAD_ONE_LINE, str(path))
    assert done.returncode == 0, done.stderr[-500:]
    assert "decompresses" in done.stdout and done.stdout.startswith(str(path)), done.stdout


def test_a_high_ratio_body_below_the_size_limit_is_refused_for_its_ratio(tmp_path: Path) -> None:
    body = zlib.compress(b"\0" * (8 * 1024 * 1024), 9)  # ~8 KB -> 8 MiB: ratio ~1000+
    assert 8 * 1024 * 1024 > limits.DECOMPRESSION_MAX_RATIO * len(body)
    path = encoded_cassette(tmp_path / "ratio.yaml", body, "deflate")
    with pytest.raises(CassetteError, match="decompresses more than"):
        load_cassette(path)


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_ordinary_compressed_bodies_still_load(tmp_path: Path, encoding: str) -> None:
    plain = b"".join(b'data: {"n": %d}\n\n' % i for i in range(5000))
    body = gzip.compress(plain) if encoding == "gzip" else zlib.compress(plain)
    path = encoded_cassette(tmp_path / "ok.yaml", body, encoding)
    assert load_cassette(path).interactions[0].response.body == plain


def test_brotli_bomb_is_refused(tmp_path: Path) -> None:
    brotli = pytest.importorskip("brotli")
    body = brotli.compress(b"\0" * (200 * 1024 * 1024))
    path = encoded_cassette(tmp_path / "bomb_br.yaml", body, "br")
    done = run_bounded(LOAD_ONE_LINE, str(path))
    assert "decompresses" in done.stdout, (done.stdout, done.stderr[-300:])


# -- framing ---------------------------------------------------------------------------------


def test_json_array_element_is_bounded_like_the_other_framings() -> None:
    assert JSONArrayDecoder().max_element_bytes == limits.FRAME_MAX_BYTES == 16 * 1024 * 1024
    decoder = JSONArrayDecoder(max_element_bytes=1000)
    out = decoder.feed(b'[{"a": "' + b"x" * 600)
    assert out == []
    out = decoder.feed(b"x" * 600)
    assert len(out) == 1 and isinstance(out[0], FramingError)
    assert "longer than 1000 bytes" in out[0].message
    assert decoder.feed(b'"}]') == [] and decoder.close() == []  # failed: nothing more


def test_a_whole_oversized_element_in_one_chunk_is_refused_too() -> None:
    decoder = JSONArrayDecoder(max_element_bytes=100)
    out = decoder.feed(b'[{"a":"' + b"x" * 200 + b'"},{"b":1}]')
    assert isinstance(out[0], FramingError) and "longer than 100 bytes" in out[0].message
    assert [o.value for o in out[1:] if not isinstance(o, FramingError)] == [{"b": 1}]


# -- JSON depth --------------------------------------------------------------------------------

LIMIT = limits.JSON_MAX_DEPTH


def nested(depth: int, *, close: bool = True) -> str:
    return '{"a":' * depth + "1" + ("}" * depth if close else "")


@pytest.mark.parametrize("depth", [1, 2, LIMIT - 1, LIMIT, LIMIT + 1, 2 * LIMIT, 5000])
@pytest.mark.parametrize("complete", [True, False], ids=["complete", "truncated"])
def test_incremental_json_and_the_cascade_agree_at_every_depth(depth: int, complete: bool) -> None:
    text = nested(depth, close=complete)
    parser = IncrementalJSON()
    for i in range(0, len(text), 97):
        parser.feed(text[i : i + 97])
    assert parser.close() == parse_partial(text)
    result = cascade(text)
    if depth > LIMIT:
        assert result == (({}), Step.TOO_DEEP)
        assert parser.failure is not None and f"deeper than {LIMIT}" in parser.failure
    else:
        assert result.step is not Step.TOO_DEEP and parser.failure is None
        value, levels = result.value, 0
        while isinstance(value, dict) and "a" in value:
            value, levels = value["a"], levels + 1
        assert levels == depth
        if complete:
            assert parser.value == result.value  # the live value is the whole value


def test_brackets_inside_strings_do_not_count_as_depth() -> None:
    text = json.dumps({"code": "[" * (3 * LIMIT) + "{" * LIMIT})
    assert not limits.json_depth_exceeds(text)
    assert parse_partial(text) == json.loads(text)


def chat_call(arguments: str) -> bytes:
    delta = {
        "tool_calls": [
            {
                "index": 0,
                "id": "call_1",
                "type": "function",
                "function": {"name": "f", "arguments": arguments},
            }
        ]
    }
    first = {
        "id": "c",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
    }
    last = {
        "id": "c",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
    }
    return (f"data: {json.dumps(first)}\n\ndata: {json.dumps(last)}\n\ndata: [DONE]\n\n").encode()


@pytest.mark.parametrize("depth", [LIMIT, LIMIT + 1, 1000])
def test_deep_tool_arguments_are_kept_or_a_clear_error_never_a_silent_empty_object(
    depth: int,
) -> None:
    from stream_harness.contract.events import event_to_json

    norm = get_normalizer("openai-completions")
    events = norm.feed(chat_call(nested(depth))) + norm.close()
    lines = [event_to_json(e) for e in events]  # serializable at any depth (no RecursionError)
    last = events[-1]
    assert len(lines) == len(events)
    if depth <= LIMIT:
        assert last.type == "done"
        assert last.message.content[0].arguments == json.loads(nested(depth))
    else:
        assert last.type == "error"
        assert "arguments nested too deep" in last.error_message
        assert "call_1" in last.error_message


@pytest.mark.parametrize("protocol", ["anthropic-messages", "openai-responses", "ollama"])
def test_a_payload_nested_too_deep_is_an_error_event_not_a_recursion_error(protocol: str) -> None:
    deep = "[" * 20_000 + "]" * 20_000
    body = (
        f'{{"x": {deep}}}\n'.encode()
        if protocol == "ollama"
        else f'event: message_start\ndata: {{"x": {deep}}}\n\n'.encode()
    )
    norm = get_normalizer(protocol)
    events = norm.feed(body) + norm.close()
    assert events[-1].type == "error"
    assert "nested too deep" in events[-1].error_message
    assert "Recursion" not in events[-1].error_message


def test_normalize_command_on_arguments_1000_deep_prints_events_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stream_harness.cli.main import main

    body = tmp_path / "deep.sse"
    body.write_bytes(chat_call(nested(1000)))
    assert main(["normalize", str(body), "--protocol", "openai-completions"]) == 0
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[-1]["type"] == "error" and "nested too deep" in lines[-1]["error_message"]
    assert "Traceback" not in err and "RecursionError" not in out
