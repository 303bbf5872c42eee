"""Expected ("golden") event files for the bundled cassettes.

``cassettes/<protocol>/<name>.yaml`` has its expected events in
``specs/expected/<protocol>/<name>.jsonl`` (interaction 0) and ``<name>.<i>.jsonl`` for
interaction i > 0: one event per line, exactly as ``stream-harness normalize`` prints
them, so a reviewer reads a diff of JSON lines. The events of the reference normalizer do
not depend on how the body is chunked, so one file per interaction is enough.
"""

from __future__ import annotations

from pathlib import Path

from stream_harness.contract.events import Event, event_to_json, events_from_jsonl
from stream_harness.contract.facts import bundled_cassettes, specs_dir
from stream_harness.providers.reference import detect_protocol, normalize
from stream_harness.recordings.atomic import write_atomic
from stream_harness.recordings.cassette import Cassette, Interaction, load_cassette


def expected_path(cassette_path: Path, interaction: int = 0, *, root: Path | None = None) -> Path:
    """Where the expected events of one interaction of a cassette live.

    A bundled cassette's are under ``specs/expected/<protocol>/<name>.jsonl`` (``root``
    replaces ``specs/expected``); a user's cassette keeps them beside it, as
    ``<name>.expected.jsonl`` (``<name>.expected.<i>.jsonl`` for interaction i > 0), so a
    project's cassettes and their reviewed events travel together and nothing is ever
    written into the installed package.
    """
    cassette_path = Path(cassette_path)
    suffix = ".jsonl" if interaction == 0 else f".{interaction}.jsonl"
    if root is None and not is_bundled(cassette_path):
        return cassette_path.parent / (cassette_path.stem + ".expected" + suffix)
    base = root if root is not None else specs_dir() / "expected"
    return base / cassette_path.parent.name / (cassette_path.stem + suffix)


def is_bundled(path: Path) -> bool:
    """Whether ``path`` is one of the cassettes that ship with stream-harness."""
    try:
        return Path(path).resolve().is_relative_to(bundled_cassettes().resolve())
    except OSError:
        return False


def interaction_events(interaction: Interaction, protocol: str | None = None) -> list[Event]:
    proto = protocol or detect_protocol(interaction)
    headers = interaction.response.headers
    return list(
        normalize(
            proto, [interaction.response.body], status=interaction.response.status, headers=headers
        )
    )


def render(events: list[Event]) -> str:
    return "".join(event_to_json(e) + "\n" for e in events)


def render_cassette(cassette: Cassette, protocol: str | None = None) -> dict[int, str]:
    """Golden text per interaction index."""
    return {i.index: render(interaction_events(i, protocol)) for i in cassette.interactions}


def read_expected(path: Path) -> list[Event]:
    return events_from_jsonl(path.read_text(encoding="utf-8"))


def write_expected(cassette_path: Path, protocol: str | None = None) -> list[Path]:
    """(Re)write the golden files of one cassette; returns the paths written."""
    cassette = load_cassette(cassette_path)
    written = []
    for index, text in render_cassette(cassette, protocol).items():
        target = expected_path(cassette_path, index)
        write_atomic(target, text)
        written.append(target)
    return written
